//! `refgen seal-c2`: the real filecoin-proofs C2 (`seal_commit_phase2`,
//! bellperson Groth16) of a 2 KiB C1 output, e.g. a synthetic one from
//! `c2 c1gen`, with the on-demand parameters of `refgen porep-params`, and
//! `verify_seal` of the proof from the public values the C1 implies (comm_r,
//! comm_d, prover id, sector id, ticket, seed). With `--proof FILE` it only
//! judges that proof (e.g. one made by `c2 prove`) with `verify_seal`.
//!
//! The C1 file is the plain JSON filecoin-ffi hands to C2 or a Commit2In
//! wrapper (`{"SectorNum", "Phase1Out" (base64 of the JSON), "SectorSize"}`,
//! lotus-bench's format). A C1 output holds neither the prover id nor the
//! sector id (only the replica id hashed from them), so `--prover-id` is
//! required and `--sector-id` is required unless the Commit2In gives
//! SectorNum; both are checked against the C1's replica id first.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultTreeHasher;
use filecoin_proofs_api::seal::{get_seal_inputs, seal_commit_phase2, verify_seal, SealCommitPhase1Output};
use filecoin_proofs_api::SectorId;
use serde::Deserialize;
use storage_proofs_porep::stacked::generate_replica_id;

use crate::util::{file_stem, write_scalars};

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Commit2In {
    SectorNum: u64,
    Phase1Out: String,
    #[serde(default)]
    SectorSize: u64,
}

/// Standard base64 (with or without padding), as Go's encoding/json writes []byte.
fn base64_decode(s: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => bail!("invalid base64 byte {:#x}", c),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Decodes a C1 output given as plain JSON or as a Commit2In wrapper; the
/// second value is the wrapper's SectorNum.
pub fn read_c1(path: &Path) -> Result<(SealCommitPhase1Output, Option<u64>)> {
    let raw = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if let Ok(w) = serde_json::from_slice::<Commit2In>(&raw) {
        let inner = base64_decode(&w.Phase1Out).context("decoding Phase1Out")?;
        let c1: SealCommitPhase1Output = serde_json::from_slice(&inner).context("decoding the C1 in Phase1Out")?;
        let size = u64::from(c1.registered_proof.sector_size());
        ensure!(w.SectorSize == 0 || w.SectorSize == size, "Commit2In SectorSize {} but the C1 is {:?}", w.SectorSize, c1.registered_proof);
        return Ok((c1, Some(w.SectorNum)));
    }
    let c1: SealCommitPhase1Output = serde_json::from_slice(&raw).context("decoding the C1 output")?;
    Ok((c1, None))
}

fn parse_hex32(s: &str) -> Result<[u8; 32]> {
    let v = hex::decode(s.trim_start_matches("0x")).context("hex")?;
    ensure!(v.len() == 32, "want 32 bytes of hex, got {}", v.len());
    let mut a = [0u8; 32];
    a.copy_from_slice(&v);
    Ok(a)
}

/// Ok(true): the proof (made here, or the one given) verifies; Ok(false): it does not.
pub fn run(args: &[String]) -> Result<bool> {
    let usage = "usage: refgen seal-c2 --c1 FILE --prover-id HEX [--sector-id N] [--proof FILE] [--out DIR]  (needs REFGEN_CACHE)";
    let c1_path = PathBuf::from(crate::flag(args, "--c1").context(usage)?);
    let prover_id = parse_hex32(&crate::flag(args, "--prover-id").context(usage)?).context("--prover-id")?;
    let (c1, sector_num) = read_c1(&c1_path)?;
    let sector_id = match crate::flag(args, "--sector-id") {
        Some(s) => s.parse::<u64>().context("--sector-id")?,
        None => sector_num.context("--sector-id is required for a plain C1 JSON")?,
    };
    if let (Some(n), Some(_)) = (sector_num, crate::flag(args, "--sector-id")) {
        ensure!(n == sector_id, "--sector-id {} but the Commit2In says {}", sector_id, n);
    }
    let proof = c1.registered_proof;
    ensure!(u64::from(proof.sector_size()) == 2048, "{:?}: only 2 KiB has on-demand parameters", proof);
    let porep_id = proof.as_v1_config().porep_id;
    let rid = generate_replica_id::<DefaultTreeHasher, _>(&prover_id, sector_id, &c1.ticket, c1.comm_d, &porep_id);
    ensure!(
        rid.into_bytes() == c1.replica_id.into_bytes(),
        "prover id and sector id {} do not give the C1's replica id (got {}, C1 has {})",
        sector_id,
        hex::encode(rid.into_bytes()),
        hex::encode(c1.replica_id.into_bytes())
    );

    // The on-demand parameters under the names filecoin-proofs looks up in
    // its (private, temporary) parameter cache. No production digest check:
    // FIL_PROOFS_VERIFY_PRODUCTION_PARAMS is off by default.
    let cache = PathBuf::from(std::env::var("REFGEN_CACHE").context("set REFGEN_CACHE to the directory of `refgen porep-params`")?);
    for (src, dst) in [("porep-2k.params", proof.cache_params_path()?), ("porep-2k.vk", proof.cache_verifying_key_path()?)] {
        let src = fs::canonicalize(cache.join(src)).with_context(|| format!("{}: run `refgen porep-params` first", cache.join(src).display()))?;
        if let Some(d) = dst.parent() {
            fs::create_dir_all(d)?;
        }
        let _ = fs::remove_file(&dst);
        std::os::unix::fs::symlink(&src, &dst).with_context(|| format!("linking {}", dst.display()))?;
        eprintln!("{} -> {}", dst.display(), src.display());
    }

    let (comm_r, comm_d, ticket, seed) = (c1.comm_r, c1.comm_d, c1.ticket, c1.seed);
    let inputs = get_seal_inputs(proof, comm_r, comm_d, prover_id, SectorId::from(sector_id), ticket, seed)?;
    let stem = file_stem(&c1_path);
    let out = PathBuf::from(crate::flag(args, "--out").unwrap_or_else(|| cache.to_string_lossy().into_owned()));
    fs::create_dir_all(&out)?;
    let flat: Vec<_> = inputs.iter().flatten().cloned().collect();
    let inputs_path = out.join(format!("{}-seal-inputs.bin", stem));
    write_scalars(&inputs_path, &flat)?;
    eprintln!("{:?}, sector {}: {} partition(s), {} public inputs each, written to {}", proof, sector_id, inputs.len(), inputs[0].len(), inputs_path.display());

    let proof_bytes = match crate::flag(args, "--proof") {
        Some(p) => fs::read(&p).with_context(|| format!("reading {}", p))?,
        None => {
            let t = Instant::now();
            // seal_commit_phase2 proves every partition (bellperson
            // create_random_proof_batch, OsRng) and refuses to return a
            // proof that verify_seal rejects.
            let o = seal_commit_phase2(c1.clone(), prover_id, SectorId::from(sector_id))?;
            eprintln!("seal_commit_phase2: {}-byte proof in {:.1}s", o.proof.len(), t.elapsed().as_secs_f64());
            let p = out.join(format!("{}-seal.proof", stem));
            fs::write(&p, &o.proof)?;
            eprintln!("wrote {}", p.display());
            o.proof
        }
    };
    let t = Instant::now();
    let ok = verify_seal(proof, comm_r, comm_d, prover_id, SectorId::from(sector_id), ticket, seed, &proof_bytes)?;
    eprintln!("verify_seal = {} in {:.2}s", ok, t.elapsed().as_secs_f64());
    if ok {
        // Negative controls: the same proof under a changed seed (other
        // challenges) and a changed ticket must be rejected.
        let mut s2 = seed;
        s2[0] ^= 1;
        let bad_seed = verify_seal(proof, comm_r, comm_d, prover_id, SectorId::from(sector_id), ticket, s2, &proof_bytes)?;
        let mut t2 = ticket;
        t2[0] ^= 1;
        let bad_ticket = verify_seal(proof, comm_r, comm_d, prover_id, SectorId::from(sector_id), t2, seed, &proof_bytes)?;
        eprintln!("controls: verify_seal with seed byte 0 ^ 1 = {}, with ticket byte 0 ^ 1 = {}", bad_seed, bad_ticket);
        ensure!(!bad_seed && !bad_ticket, "verify_seal accepted a changed seed or ticket");
    }
    Ok(ok)
}
