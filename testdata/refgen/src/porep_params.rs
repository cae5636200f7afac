//! `refgen porep-params`: on-demand (never committed) bellperson random
//! parameters for the 2 KiB PoRep circuit, and a bellperson C2 proof of the
//! committed 2 KiB C1 made with them. Everything goes to $REFGEN_CACHE.

use std::fs;
use std::path::PathBuf;

use anyhow::{ensure, Context, Result};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::ondemand::{cache_dir, params, prove_checked};
use crate::porep::c2_view;
use crate::util::{file_stem, write_scalars};

pub const PARAMS_SEED: u64 = 0x6332_706f_7265_7032; // "c2porep2"
pub const PROOF_SEED: u64 = 0x6332_6332_7072_6f66; // "c2c2prof"

pub fn run(args: &[String]) -> Result<()> {
    let cache = cache_dir()?;
    let out = crate::out_dir(args);
    // --c1 proves another 2 KiB C1 output (e.g. one from `c2 c1gen`) with the
    // same parameters; its proof and inputs get the file's stem as prefix.
    let (c1_path, prefix) = match crate::flag(args, "--c1") {
        Some(p) => {
            let p = PathBuf::from(p);
            let prefix = format!("{}-", file_stem(&p));
            (p, prefix)
        }
        None => (out.join("porep-2k/c1.json"), "porep-2k-c1".into()),
    };
    let c1_json = fs::read(&c1_path).with_context(|| format!("reading {}", c1_path.display()))?;
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(&c1_json)?;
    ensure!(u64::from(c1.registered_proof.sector_size()) == 2048, "{} is not a 2 KiB C1 output", c1_path.display());
    let view = c2_view(&c1)?;

    let params = params(&cache, "porep-2k", PARAMS_SEED, "generated 2 KiB PoRep params", || Ok(view.blank_circuit()))?;
    let inputs = view.public_inputs(0)?;
    let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
    let proof = prove_checked(view.circuit(0)?, &params, &inputs, &mut rng, "proved partition 0")?;
    let (proof_name, inputs_name) = if prefix == "porep-2k-c1" {
        ("porep-2k-c1.proof".to_string(), "porep-2k-inputs-p0.bin".to_string())
    } else {
        (format!("{}c2.proof", prefix), format!("{}inputs-p0.bin", prefix))
    };
    fs::write(cache.join(&proof_name), proof)?;
    write_scalars(&cache.join(&inputs_name), &inputs)?;
    eprintln!("wrote porep-2k.params, porep-2k.vk, {}, {} to {}", proof_name, inputs_name, cache.display());
    Ok(())
}
