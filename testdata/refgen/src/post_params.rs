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

use anyhow::{ensure, Context, Result};
use filecoin_proofs::types::PoStType;
use filecoin_proofs_api::RegisteredPoStProof;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::ondemand::{cache_dir, params, prove_checked};
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

pub fn run(args: &[String]) -> Result<()> {
    let cache = cache_dir()?;
    let out = crate::out_dir(args);
    for kind in &KINDS {
        let what = format!("{}: generated params", kind.stem);
        let params = params(&cache, kind.stem, kind.seed, &what, || blank_circuit_2k(kind.blank))?;
        for case in cases().iter().filter(|c| c.proof.as_v1_config().typ == kind.typ) {
            let prep = load_2k(&out, case).with_context(|| case.dir)?;
            let mut rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
            let (mut proofs, mut inputs) = (Vec::new(), Vec::new());
            for k in 0..prep.parts.len() {
                let inp = prep.inputs(k)?;
                let committed = parse_scalars(&fs::read(out.join("post-2k").join(case.dir).join(format!("inputs-p{}.bin", k)))?)?;
                ensure!(inp == committed, "{} partition {}: inputs differ from the committed inputs-p{}.bin", case.dir, k, k);
                let what = format!("{}: proved partition {}", case.dir, k);
                let proof = prove_checked(prep.circuit(k)?, &params, &inp, &mut rng, &what)
                    .with_context(|| format!("{} partition {}", case.dir, k))?;
                proofs.extend(proof);
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
