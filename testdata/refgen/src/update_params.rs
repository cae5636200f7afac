//! `refgen update-params`: on-demand (never committed) bellperson random
//! parameters for the 2 KiB SnapDeals circuit, and a bellperson proof of
//! partition 0 of the committed `out/update-2k` vector made with them.
//! Everything goes to $REFGEN_CACHE: update-2k.params, update-2k.vk,
//! update-2k.proof, update-2k-inputs-p0.bin.

use std::fs;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use bellperson::groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof, Parameters,
};
use blstrs::Bls12;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::update::{circuit_2k, inputs_2k, load_2k};
use crate::util::write_scalars;

pub const PARAMS_SEED: u64 = 0x6332_7570_6470_6172; // "c2updpar"
pub const PROOF_SEED: u64 = 0x6332_7570_6470_7266; // "c2updprf"

pub fn run(args: &[String]) -> Result<()> {
    let cache = PathBuf::from(std::env::var("REFGEN_CACHE").context("set REFGEN_CACHE to a directory")?);
    fs::create_dir_all(&cache)?;
    let out = PathBuf::from(crate::flag(args, "--out").unwrap_or_else(|| "out".into()));
    let (pp, pub_inputs, proofs) = load_2k(&out)?;

    let params_path = cache.join("update-2k.params");
    let params: Parameters<Bls12> = if params_path.exists() {
        eprintln!("reading {}", params_path.display());
        Parameters::read(BufReader::new(fs::File::open(&params_path)?), false)?
    } else {
        let t = Instant::now();
        let mut rng = ChaCha20Rng::seed_from_u64(PARAMS_SEED);
        let p = generate_random_parameters::<Bls12, _, _>(circuit_2k(&pp, &pub_inputs, None)?, &mut rng)?;
        eprintln!("generated 2 KiB SnapDeals params in {:.1}s", t.elapsed().as_secs_f64());
        let mut w = BufWriter::new(fs::File::create(&params_path)?);
        p.write(&mut w)?;
        w.flush()?;
        let mut v = Vec::new();
        p.vk.write(&mut v)?;
        fs::write(cache.join("update-2k.vk"), v)?;
        p
    };
    let t = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
    let proof = create_random_proof(circuit_2k(&pp, &pub_inputs, Some((&proofs[0], 0)))?, &params, &mut rng)?;
    eprintln!("proved partition 0 in {:.1}s", t.elapsed().as_secs_f64());
    let inputs = inputs_2k(&pp, &pub_inputs, 0)?;
    ensure!(verify_proof(&prepare_verifying_key(&params.vk), &proof, &inputs)?, "proof does not verify");
    let mut b = Vec::new();
    proof.write(&mut b)?;
    fs::write(cache.join("update-2k.proof"), b)?;
    write_scalars(&cache.join("update-2k-inputs-p0.bin"), &inputs)?;
    eprintln!("wrote update-2k.params, update-2k.vk, update-2k.proof, update-2k-inputs-p0.bin to {}", cache.display());
    Ok(())
}
