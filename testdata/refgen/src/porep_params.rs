//! `refgen porep-params`: on-demand (never committed) bellperson random
//! parameters for the 2 KiB PoRep circuit, and a bellperson C2 proof of the
//! committed 2 KiB C1 made with them. Everything goes to $REFGEN_CACHE.

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

use crate::porep::c2_view;
use crate::util::write_scalars;

pub const PARAMS_SEED: u64 = 0x6332_706f_7265_7032; // "c2porep2"
pub const PROOF_SEED: u64 = 0x6332_6332_7072_6f66; // "c2c2prof"

pub fn run(args: &[String]) -> Result<()> {
    let cache = PathBuf::from(std::env::var("REFGEN_CACHE").context("set REFGEN_CACHE to a directory")?);
    fs::create_dir_all(&cache)?;
    let out = PathBuf::from(crate::flag(args, "--out").unwrap_or_else(|| "out".into()));
    let c1_json = fs::read(out.join("porep-2k/c1.json")).context("reading committed porep-2k/c1.json")?;
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(&c1_json)?;
    let view = c2_view(&c1)?;

    let params_path = cache.join("porep-2k.params");
    let params: Parameters<Bls12> = if params_path.exists() {
        eprintln!("reading {}", params_path.display());
        Parameters::read(BufReader::new(fs::File::open(&params_path)?), false)?
    } else {
        let t = Instant::now();
        let mut rng = ChaCha20Rng::seed_from_u64(PARAMS_SEED);
        let p = generate_random_parameters::<Bls12, _, _>(view.blank_circuit(), &mut rng)?;
        eprintln!("generated 2 KiB PoRep params in {:.1}s", t.elapsed().as_secs_f64());
        let mut w = BufWriter::new(fs::File::create(&params_path)?);
        p.write(&mut w)?;
        w.flush()?;
        let mut v = Vec::new();
        p.vk.write(&mut v)?;
        fs::write(cache.join("porep-2k.vk"), v)?;
        p
    };
    let t = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
    let proof = create_random_proof(view.circuit(0)?, &params, &mut rng)?;
    eprintln!("proved partition 0 in {:.1}s", t.elapsed().as_secs_f64());
    let inputs = view.public_inputs(0)?;
    ensure!(verify_proof(&prepare_verifying_key(&params.vk), &proof, &inputs)?, "proof does not verify");
    let mut b = Vec::new();
    proof.write(&mut b)?;
    fs::write(cache.join("porep-2k-c1.proof"), b)?;
    write_scalars(&cache.join("porep-2k-inputs-p0.bin"), &inputs)?;
    eprintln!("wrote porep-2k.params, porep-2k.vk, porep-2k-c1.proof, porep-2k-inputs-p0.bin to {}", cache.display());
    Ok(())
}
