//! `refgen post-params`: on-demand (never committed) bellperson random
//! parameters for the 2 KiB Window and Winning PoSt circuits, and
//! bellperson proofs of every partition of the committed `out/post-2k`
//! vectors made with them.
//!
//! Window V1 and V1_2 have the same circuit, so one Window parameter set
//! serves both Window vectors. Everything goes to $REFGEN_CACHE:
//! post-{window,winning}-2k.{params,vk}, and per vector
//! post-<vector>.proof (one 192-byte proof per partition, in partition
//! order) and post-<vector>-inputs.bin (the partitions' public inputs in
//! the same order).

use std::fs;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use bellperson::groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof, Parameters,
};
use blstrs::Bls12;
use filecoin_proofs::types::PoStType;
use filecoin_proofs_api::RegisteredPoStProof;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::post::{blank_circuit_2k, cases, load_2k};
use crate::util::{parse_scalars, write_scalars};

pub const WINDOW_PARAMS_SEED: u64 = 0x6332_7073_7477_6477; // "c2pstwdw"
pub const WINNING_PARAMS_SEED: u64 = 0x6332_7073_7477_6e67; // "c2pstwng"
pub const PROOF_SEED: u64 = 0x6332_7073_7470_7266; // "c2pstprf"

/// One parameter set: its file stem in the cache, the registered proof
/// whose blank circuit it is generated from, and the RNG seed.
struct Kind {
    stem: &'static str,
    typ: PoStType,
    blank: RegisteredPoStProof,
    seed: u64,
}

const KINDS: [Kind; 2] = [
    Kind {
        stem: "post-window-2k",
        typ: PoStType::Window,
        blank: RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
        seed: WINDOW_PARAMS_SEED,
    },
    Kind {
        stem: "post-winning-2k",
        typ: PoStType::Winning,
        blank: RegisteredPoStProof::StackedDrgWinning2KiBV1,
        seed: WINNING_PARAMS_SEED,
    },
];

/// Reads `<stem>.params` from the cache, or generates it from the blank
/// circuit and writes it with `<stem>.vk`.
fn params(cache: &Path, kind: &Kind) -> Result<Parameters<Bls12>> {
    let path = cache.join(format!("{}.params", kind.stem));
    if path.exists() {
        eprintln!("reading {}", path.display());
        return Ok(Parameters::read(BufReader::new(fs::File::open(&path)?), false)?);
    }
    let t = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(kind.seed);
    let p = generate_random_parameters::<Bls12, _, _>(blank_circuit_2k(kind.blank)?, &mut rng)?;
    eprintln!("{}: generated params in {:.1}s", kind.stem, t.elapsed().as_secs_f64());
    let mut w = BufWriter::new(fs::File::create(&path)?);
    p.write(&mut w)?;
    w.flush()?;
    let mut v = Vec::new();
    p.vk.write(&mut v)?;
    fs::write(cache.join(format!("{}.vk", kind.stem)), v)?;
    Ok(p)
}

pub fn run(args: &[String]) -> Result<()> {
    let cache = PathBuf::from(std::env::var("REFGEN_CACHE").context("set REFGEN_CACHE to a directory")?);
    fs::create_dir_all(&cache)?;
    let out = PathBuf::from(crate::flag(args, "--out").unwrap_or_else(|| "out".into()));
    for kind in &KINDS {
        let params = params(&cache, kind)?;
        let pvk = prepare_verifying_key(&params.vk);
        for case in cases().iter().filter(|c| c.proof.as_v1_config().typ == kind.typ) {
            let prep = load_2k(&out, case).with_context(|| case.dir)?;
            let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
            let (mut proofs, mut inputs) = (Vec::new(), Vec::new());
            for k in 0..prep.parts.len() {
                let t = Instant::now();
                let proof = create_random_proof(prep.circuit(k)?, &params, &mut rng)?;
                eprintln!("{}: proved partition {} in {:.1}s", case.dir, k, t.elapsed().as_secs_f64());
                let inp = prep.inputs(k)?;
                let committed = parse_scalars(&fs::read(out.join("post-2k").join(case.dir).join(format!("inputs-p{}.bin", k)))?)?;
                ensure!(inp == committed, "{} partition {}: inputs differ from the committed inputs-p{}.bin", case.dir, k, k);
                ensure!(verify_proof(&pvk, &proof, &inp)?, "{} partition {}: proof does not verify", case.dir, k);
                proof.write(&mut proofs)?;
                inputs.extend(inp);
            }
            fs::write(cache.join(format!("post-{}.proof", case.dir)), proofs)?;
            write_scalars(&cache.join(format!("post-{}-inputs.bin", case.dir)), &inputs)?;
            eprintln!("wrote post-{0}.proof and post-{0}-inputs.bin ({1} partitions)", case.dir, prep.parts.len());
        }
    }
    eprintln!("wrote post-window-2k and post-winning-2k .params and .vk to {}", cache.display());
    Ok(())
}
