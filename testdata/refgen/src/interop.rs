//! The groth16-interop circuit and its vectors (README.md, "groth16-interop").

use std::fs;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use bellperson::groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof,
    Parameters, Proof, VerifyingKey,
};
use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde_json::json;

use crate::recorder::synthesize_both;
use crate::util::{fr_hex, hex32, write_scalars};

/// Number of bits of `k` (aux b_0..b_63).
pub const BITS: usize = 64;
/// Length of the multiplication chain y_1..y_M.
pub const CHAIN: usize = 940;

/// The witness-defining values of one instance.
#[derive(Clone, Copy)]
pub struct Instance {
    pub k: u64,
    pub x2: Fr,
    pub w: Fr,
    pub x3: Fr,
}

impl Instance {
    /// y_0 = w, y_j = y_{j-1} * (y_{j-1} + 3*x2 + j).
    fn chain(&self) -> Vec<Fr> {
        let mut ys = vec![self.w];
        let three_x2 = self.x2 * Fr::from(3u64);
        for j in 1..=CHAIN {
            let p = ys[j - 1];
            ys.push(p * (p + three_x2 + Fr::from(j as u64)));
        }
        ys
    }

    /// Public inputs x1..x4 (without ONE).
    pub fn public_inputs(&self) -> Vec<Fr> {
        let ym = self.chain()[CHAIN];
        vec![Fr::from(self.k), self.x2, self.x3, ym * self.x3]
    }
}

/// The circuit; `None` synthesizes without values (parameter generation).
#[derive(Clone)]
pub struct InteropCircuit {
    pub inst: Option<Instance>,
}

fn val<T: Copy>(v: Option<T>) -> Result<T, SynthesisError> {
    v.ok_or(SynthesisError::AssignmentMissing)
}

impl Circuit<Fr> for InteropCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let inst = self.inst;
        let publics = inst.map(|i| i.public_inputs());
        let ys = inst.map(|i| i.chain());
        let one = CS::one();

        // Inputs x1..x4 (indices 1..4).
        let mut x = Vec::new();
        for n in 0..4 {
            let v = publics.as_ref().map(|p| p[n]);
            x.push(cs.alloc_input(|| format!("x{}", n + 1), || val(v))?);
        }

        // Bits of k: b_i * (1 - b_i) = 0.
        let mut bits = Vec::new();
        for i in 0..BITS {
            let v = inst.map(|t| if (t.k >> i) & 1 == 1 { Fr::ONE } else { Fr::ZERO });
            let b = cs.alloc(|| format!("b{}", i), || val(v))?;
            cs.enforce(|| format!("bool{}", i), |lc| lc + b, |lc| lc + one - b, |lc| lc);
            bits.push(b);
        }

        // Packing: (sum 2^i b_i) * 1 = x1.
        let mut coeff = Fr::ONE;
        let mut pack = LinearCombination::zero();
        for b in &bits {
            pack = pack + (coeff, *b);
            coeff = coeff.double();
        }
        cs.enforce(|| "pack", |_| pack, |lc| lc + one, |lc| lc + x[0]);

        // Chain: y_{j-1} * (y_{j-1} + 3*x2 + j*1) = y_j.
        let mut prev = cs.alloc(|| "y0", || val(ys.as_ref().map(|y| y[0])))?;
        for j in 1..=CHAIN {
            let y = cs.alloc(|| format!("y{}", j), || val(ys.as_ref().map(|y| y[j])))?;
            let jf = Fr::from(j as u64);
            cs.enforce(
                || format!("chain{}", j),
                |lc| lc + prev,
                |lc| lc + prev + (Fr::from(3u64), x[1]) + (jf, one),
                |lc| lc + y,
            );
            prev = y;
        }

        // Final: y_M * x3 = x4.
        cs.enforce(|| "final", |lc| lc + prev, |lc| lc + x[2], |lc| lc + x[3]);

        // t = 2*b0 + b1 + 5*x2 - 2, written with a repeated term.
        let tv = inst.map(|t| {
            let b0 = Fr::from(t.k & 1);
            let b1 = Fr::from((t.k >> 1) & 1);
            b0.double() + b1 + t.x2 * Fr::from(5u64) - Fr::from(2u64)
        });
        let t = cs.alloc(|| "t", || val(tv))?;
        cs.enforce(
            || "t",
            |lc| lc + bits[0] + bits[1] + bits[0] + (Fr::from(5u64), x[1]) - (Fr::from(2u64), one),
            |lc| lc + one,
            |lc| lc + t,
        );

        // u: (u - u + 1) * u = u; u has a zero (merged) coefficient in A.
        let u = cs.alloc(|| "u", || val(inst.map(|t| t.w + t.x2)))?;
        cs.enforce(|| "u", |lc| lc + u - u + one, |lc| lc + u, |lc| lc + u);

        // v = b3 * b4; v appears only in C.
        let vv = inst.map(|t| Fr::from(((t.k >> 3) & 1) * ((t.k >> 4) & 1)));
        let v = cs.alloc(|| "v", || val(vv))?;
        cs.enforce(|| "v", |lc| lc + bits[3], |lc| lc + bits[4], |lc| lc + v);
        Ok(())
    }
}

/// The three committed instances.
pub fn instances() -> Vec<Instance> {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6332_696e_7465_7231); // "c2inter1"
    vec![
        Instance { k: 0x0123_4567_89ab_cdef, x2: Fr::from(7u64), w: Fr::from(11u64), x3: Fr::from(13u64) },
        Instance { k: u64::MAX, x2: Fr::random(&mut rng), w: Fr::random(&mut rng), x3: Fr::random(&mut rng) },
        Instance { k: 0, x2: -Fr::ONE, w: Fr::from(2u64), x3: Fr::ZERO },
    ]
}

pub const PARAMS_SEED: u64 = 0x6332_7061_7261_6d73; // "c2params"
pub const PROOF_SEED: u64 = 0x6332_7072_6f6f_6673; // "c2proofs"

pub fn generate(out: &Path) -> Result<()> {
    fs::create_dir_all(out)?;
    let mut rng = ChaCha20Rng::seed_from_u64(PARAMS_SEED);
    let params: Parameters<Bls12> =
        generate_random_parameters(InteropCircuit { inst: None }, &mut rng)?;
    let mut pbytes = Vec::new();
    params.write(&mut pbytes)?;
    // Round trip through bellperson's reader must be byte-identical.
    let back = Parameters::<Bls12>::read(&pbytes[..], true)?;
    let mut pbytes2 = Vec::new();
    back.write(&mut pbytes2)?;
    ensure!(pbytes == pbytes2, "params round trip differs");
    fs::write(out.join("interop.params"), &pbytes)?;
    let mut vbytes = Vec::new();
    params.vk.write(&mut vbytes)?;
    let vk2 = VerifyingKey::<Bls12>::read(&vbytes[..])?;
    ensure!(vk2 == params.vk, "vk round trip differs");
    fs::write(out.join("interop.vk"), &vbytes)?;
    let pvk = prepare_verifying_key(&params.vk);

    let mut proof_rng = ChaCha20Rng::seed_from_u64(PROOF_SEED);
    let mut cases = Vec::new();
    let mut r1cs_digest = None;
    let mut counts0 = None;
    for (n, inst) in instances().into_iter().enumerate() {
        let r1cs_out: Option<Box<dyn std::io::Write + Send>> = if n == 0 {
            Some(Box::new(std::io::BufWriter::new(fs::File::create(out.join("interop.r1cs"))?)))
        } else {
            None
        };
        let syn = synthesize_both(|| Ok(InteropCircuit { inst: Some(inst) }), r1cs_out)?;
        match &r1cs_digest {
            None => r1cs_digest = Some(syn.r1cs_sha256),
            Some(d) => ensure!(*d == syn.r1cs_sha256, "R1CS depends on the witness"),
        }
        counts0.get_or_insert(syn.counts.clone());
        let publics = inst.public_inputs();
        ensure!(syn.inputs[1..] == publics[..], "recorded inputs differ from native ones");
        fs::write(out.join(format!("witness-{}.bin", n)), syn.witness.witness_bytes())?;
        write_scalars(&out.join(format!("inputs-{}.bin", n)), &publics)?;

        let proof = create_random_proof(InteropCircuit { inst: Some(inst) }, &params, &mut proof_rng)?;
        let mut prf = Vec::new();
        proof.write(&mut prf)?;
        ensure!(prf.len() == 192, "proof is {} bytes", prf.len());
        ensure!(verify_proof(&pvk, &proof, &publics)?, "bellperson rejects its own proof {}", n);
        let mut bad = publics.clone();
        bad[0] += Fr::ONE;
        ensure!(!verify_proof(&pvk, &proof, &bad)?, "bellperson accepts tampered inputs {}", n);
        let back = Proof::<Bls12>::read(&prf[..])?;
        ensure!(back == proof, "proof round trip");
        fs::write(out.join(format!("proof-{}.bin", n)), &prf)?;

        cases.push(json!({
            "k": inst.k.to_string(),
            "x2": fr_hex(&inst.x2),
            "w": fr_hex(&inst.w),
            "x3": fr_hex(&inst.x3),
            "public_inputs": publics.iter().map(fr_hex).collect::<Vec<_>>(),
            "witness_file": format!("witness-{}.bin", n),
            "witness_sha256": hex32(&syn.witness_sha256),
            "inputs_file": format!("inputs-{}.bin", n),
            "proof_file": format!("proof-{}.bin", n),
        }));
    }
    let desc = json!({
        "circuit": "groth16-interop (see testdata/refgen/README.md)",
        "bits": BITS,
        "chain": CHAIN,
        "counts": counts0,
        "domain_size": (counts0.as_ref().unwrap().constraints as u64).next_power_of_two(),
        "r1cs_file": "interop.r1cs",
        "r1cs_sha256": hex32(&r1cs_digest.unwrap()),
        "params_file": "interop.params",
        "params_sha256": hex32(&crate::util::sha256(&pbytes)),
        "vk_file": "interop.vk",
        "vk_sha256": hex32(&crate::util::sha256(&vbytes)),
        "params_rng": format!("ChaCha20Rng::seed_from_u64({:#x})", PARAMS_SEED),
        "proof_rng": format!("ChaCha20Rng::seed_from_u64({:#x}), shared by the 3 proofs in order", PROOF_SEED),
        "instances": cases,
    });
    fs::write(out.join("circuit.json"), serde_json::to_string_pretty(&desc)? + "\n")
        .context("writing circuit.json")?;
    let _ = Fr::NUM_BITS;
    Ok(())
}
