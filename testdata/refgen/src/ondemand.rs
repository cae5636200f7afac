//! Steps the on-demand sub-commands (`porep-params`, `update-params`,
//! `post-params`) have in common: the `$REFGEN_CACHE` directory, bellperson
//! random parameters kept in it, and proofs checked by bellperson's verifier.

use std::fs;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use bellperson::groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof, Parameters,
};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The directory `$REFGEN_CACHE` names, created if it does not exist.
pub fn cache_dir() -> Result<PathBuf> {
    let cache = PathBuf::from(std::env::var("REFGEN_CACHE").context("set REFGEN_CACHE to a directory")?);
    fs::create_dir_all(&cache)?;
    Ok(cache)
}

/// The parameters in `<cache>/<stem>.params`. When that file does not exist,
/// they are generated (`generate_random_parameters` on the circuit `blank`
/// returns, RNG `ChaCha20Rng::seed_from_u64(seed)`) and written to
/// `<stem>.params` and their verifying key to `<stem>.vk`; `what` names the
/// generation in the timing line on stderr. `blank` runs only when
/// parameters are generated.
pub fn params<C, B>(cache: &Path, stem: &str, seed: u64, what: &str, blank: B) -> Result<Parameters<Bls12>>
where
    C: Circuit<Fr>,
    B: FnOnce() -> Result<C>,
{
    let path = cache.join(format!("{}.params", stem));
    if path.exists() {
        eprintln!("reading {}", path.display());
        return Ok(Parameters::read(BufReader::new(fs::File::open(&path)?), false)?);
    }
    let t = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let p = generate_random_parameters::<Bls12, _, _>(blank()?, &mut rng)?;
    eprintln!("{} in {:.1}s", what, t.elapsed().as_secs_f64());
    let mut w = BufWriter::new(fs::File::create(&path)?);
    p.write(&mut w)?;
    w.flush()?;
    let mut v = Vec::new();
    p.vk.write(&mut v)?;
    fs::write(cache.join(format!("{}.vk", stem)), v)?;
    Ok(p)
}

/// Proves `circuit` with `params` and `rng` (`create_random_proof`), checks
/// the proof against `inputs` (no ONE) with bellperson's verifier and returns
/// its 192-byte encoding (`Proof::write`). `what` names the proof in the
/// timing line on stderr.
pub fn prove_checked<C>(circuit: C, params: &Parameters<Bls12>, inputs: &[Fr], rng: &mut ChaCha20Rng, what: &str) -> Result<Vec<u8>>
where
    C: Circuit<Fr> + Send,
{
    let t = Instant::now();
    let proof = create_random_proof(circuit, params, rng)?;
    eprintln!("{} in {:.1}s", what, t.elapsed().as_secs_f64());
    ensure!(verify_proof(&prepare_verifying_key(&params.vk), &proof, inputs)?, "proof does not verify");
    let mut b = Vec::new();
    proof.write(&mut b)?;
    Ok(b)
}
