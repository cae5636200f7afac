//! `refgen verify`: bellperson judges a proof file against a key and inputs.
//!
//! Exit codes: 0 all proofs valid, 1 some proof invalid (including a proof
//! whose points do not decode), 2 usage or input-file error.

use std::fs;

use anyhow::{bail, Context, Result};
use bellperson::groth16::{prepare_verifying_key, verify_proof, Parameters, Proof, VerifyingKey};
use blstrs::{Bls12, Scalar as Fr};

use crate::util::parse_scalars;

pub enum Outcome {
    Valid,
    Invalid(String),
}

fn read_inputs(path: &str) -> Result<Vec<Fr>> {
    let raw = fs::read(path).with_context(|| format!("reading {}", path))?;
    if path.ends_with(".json") {
        let v: Vec<String> = serde_json::from_slice(&raw).context("inputs JSON must be an array of hex strings")?;
        let mut b = Vec::new();
        for (i, s) in v.iter().enumerate() {
            let d = hex::decode(s).with_context(|| format!("input {} is not hex", i))?;
            if d.len() != 32 {
                bail!("input {} is {} bytes, want 32", i, d.len());
            }
            b.extend_from_slice(&d);
        }
        parse_scalars(&b)
    } else {
        parse_scalars(&raw)
    }
}

pub fn run(args: &[String]) -> Result<Outcome> {
    let mut vk_path = None;
    let mut params_path = None;
    let mut proof_path = None;
    let mut inputs_path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().with_context(|| format!("{} needs a value", a))?;
        match a.as_str() {
            "--vk" => vk_path = Some(v.clone()),
            "--params" => params_path = Some(v.clone()),
            "--proof" => proof_path = Some(v.clone()),
            "--inputs" => inputs_path = Some(v.clone()),
            _ => bail!("unknown flag {}", a),
        }
    }
    let vk: VerifyingKey<Bls12> = match (vk_path, params_path) {
        (Some(p), None) => VerifyingKey::read(&fs::read(&p).with_context(|| format!("reading {}", p))?[..])
            .with_context(|| format!("parsing vk {}", p))?,
        (None, Some(p)) => {
            let f = fs::File::open(&p).with_context(|| format!("opening {}", p))?;
            Parameters::<Bls12>::read(std::io::BufReader::new(f), false)
                .with_context(|| format!("parsing params {}", p))?
                .vk
        }
        _ => bail!("give exactly one of --vk and --params"),
    };
    let proof_path = proof_path.context("--proof is required")?;
    let inputs_path = inputs_path.context("--inputs is required")?;
    let proofs = fs::read(&proof_path).with_context(|| format!("reading {}", proof_path))?;
    if proofs.is_empty() || proofs.len() % 192 != 0 {
        bail!("proof file is {} bytes, want a positive multiple of 192", proofs.len());
    }
    let k = proofs.len() / 192;
    let inputs = read_inputs(&inputs_path)?;
    if inputs.len() % k != 0 {
        bail!("{} inputs do not split over {} proofs", inputs.len(), k);
    }
    let n = inputs.len() / k;
    if n + 1 != vk.ic.len() {
        bail!("{} inputs per proof, vk expects {}", n, vk.ic.len() - 1);
    }
    let pvk = prepare_verifying_key(&vk);
    for i in 0..k {
        let proof = match Proof::<Bls12>::read(&proofs[192 * i..192 * (i + 1)]) {
            Ok(p) => p,
            Err(e) => return Ok(Outcome::Invalid(format!("proof {} does not decode: {}", i, e))),
        };
        if !verify_proof(&pvk, &proof, &inputs[n * i..n * (i + 1)])? {
            return Ok(Outcome::Invalid(format!("proof {} does not verify", i)));
        }
    }
    Ok(Outcome::Valid)
}
