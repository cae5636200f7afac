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
    // --c1 proves another 2 KiB C1 output (e.g. one from `c2 c1gen`) with the
    // same parameters; its proof and inputs get the file's stem as prefix.
    let (c1_path, prefix) = match crate::flag(args, "--c1") {
        Some(p) => {
            let stem = PathBuf::from(&p).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (PathBuf::from(p), format!("{}-", stem))
        }
        None => (out.join("porep-2k/c1.json"), "porep-2k-c1".into()),
    };
    let c1_json = fs::read(&c1_path).with_context(|| format!("reading {}", c1_path.display()))?;
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(&c1_json)?;
    ensure!(u64::from(c1.registered_proof.sector_size()) == 2048, "{} is not a 2 KiB C1 output", c1_path.display());
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
    let (proof_name, inputs_name) = if prefix == "porep-2k-c1" {
        ("porep-2k-c1.proof".to_string(), "porep-2k-inputs-p0.bin".to_string())
    } else {
        (format!("{}c2.proof", prefix), format!("{}inputs-p0.bin", prefix))
    };
    fs::write(cache.join(&proof_name), b)?;
    write_scalars(&cache.join(&inputs_name), &inputs)?;
    eprintln!("wrote porep-2k.params, porep-2k.vk, {}, {} to {}", proof_name, inputs_name, cache.display());
    Ok(())
}
