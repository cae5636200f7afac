//! Small helpers shared by the generators.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use blstrs::Scalar as Fr;
use sha2::{Digest, Sha256};

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
