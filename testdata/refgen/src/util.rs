//! Small helpers shared by the generators.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use blstrs::Scalar as Fr;
use sha2::{Digest, Sha256};

use crate::recorder::Counts;

pub fn sha256(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

pub fn hex32(b: &[u8; 32]) -> String {
    hex::encode(b)
}

/// A scalar as lowercase hex of its canonical 32-byte little-endian encoding.
pub fn fr_hex(f: &Fr) -> String {
    hex::encode(f.to_bytes_le())
}

/// Writes scalars as consecutive 32-byte little-endian canonical encodings.
pub fn write_scalars(p: &Path, v: &[Fr]) -> Result<()> {
    let mut out = Vec::with_capacity(32 * v.len());
    for f in v {
        out.extend_from_slice(&f.to_bytes_le());
    }
    fs::write(p, out).with_context(|| format!("writing {}", p.display()))
}

/// Parses consecutive 32-byte little-endian canonical scalars.
pub fn parse_scalars(b: &[u8]) -> Result<Vec<Fr>> {
    if b.len() % 32 != 0 {
        bail!("scalar file length {} is not a multiple of 32", b.len());
    }
    b.chunks(32)
        .enumerate()
        .map(|(i, c)| {
            let mut a = [0u8; 32];
            a.copy_from_slice(c);
            Option::from(Fr::from_bytes_le(&a))
                .with_context(|| format!("scalar {} is not canonical", i))
        })
        .collect()
}

/// The file name of `p` without its extension; empty when `p` has none.
pub fn file_stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Adds an entry per registered proof of `all` to the JSON object in `path`
/// (`post-counts.json`, `update-counts.json`), keyed by the proof's `Debug`
/// name; entries already in the file for other proofs stay. Only the proofs
/// `only` names are measured, every one when `only` is empty. `entry` returns
/// a proof's blank-circuit counts (logged to stderr with the time taken) and
/// its entry. The file is rewritten after each entry, so an interrupted run
/// keeps the entries it finished.
pub fn update_counts_file<P, E>(path: &Path, all: &[P], only: &[String], mut entry: E) -> Result<()>
where
    P: Copy + Debug,
    E: FnMut(P) -> Result<(Counts, serde_json::Value)>,
{
    let mut table: BTreeMap<String, serde_json::Value> = match fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)?,
        Err(_) => BTreeMap::new(),
    };
    for &proof in all {
        let name = format!("{:?}", proof);
        if !only.is_empty() && !only.iter().any(|o| *o == name) {
            continue;
        }
        let t = Instant::now();
        let (counts, value) = entry(proof)?;
        eprintln!("{}: {:?} in {:.1}s", name, counts, t.elapsed().as_secs_f64());
        table.insert(name, value);
        fs::write(path, serde_json::to_string_pretty(&table)? + "\n")?;
    }
    Ok(())
}
