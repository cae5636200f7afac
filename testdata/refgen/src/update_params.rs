//! `refgen update-params`: on-demand (never committed) bellperson random
//! parameters for the 2 KiB SnapDeals circuit, and a bellperson proof of
//! partition 0 of the committed `out/update-2k` vector made with them.
//! Everything goes to $REFGEN_CACHE: update-2k.params, update-2k.vk,
//! update-2k.proof, update-2k-inputs-p0.bin.

use std::fs;

use anyhow::Result;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::ondemand::{cache_dir, params, prove_checked};
use crate::update::{circuit_2k, inputs_2k, load_2k};
use crate::util::write_scalars;

pub const PARAMS_SEED: u64 = 0x6332_7570_6470_6172; // "c2updpar"
pub const PROOF_SEED: u64 = 0x6332_7570_6470_7266; // "c2updprf"

pub fn run(args: &[String]) -> Result<()> {
    let cache = cache_dir()?;
    let (pp, pub_inputs, proofs) = load_2k(&crate::out_dir(args))?;

    let blank = || circuit_2k(&pp, &pub_inputs, None);
    let params = params(&cache, "update-2k", PARAMS_SEED, "generated 2 KiB SnapDeals params", blank)?;
    let inputs = inputs_2k(&pp, &pub_inputs, 0)?;
    let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
    let circuit = circuit_2k(&pp, &pub_inputs, Some((&proofs[0], 0)))?;
    let proof = prove_checked(circuit, &params, &inputs, &mut rng, "proved partition 0")?;
    fs::write(cache.join("update-2k.proof"), proof)?;
    write_scalars(&cache.join("update-2k-inputs-p0.bin"), &inputs)?;
    eprintln!("wrote update-2k.params, update-2k.vk, update-2k.proof, update-2k-inputs-p0.bin to {}", cache.display());
    Ok(())
}
