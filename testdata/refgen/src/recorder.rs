//! A bellpepper `ConstraintSystem` that records what the bellperson Groth16
//! generator and prover would see: allocation counts, the witness, density
//! bitmaps and the canonical R1CS byte stream (see README.md, "Canonical R1CS").
//!
//! Synthesis is always sequential (`is_extensible` is false), which is the
//! order bellperson's parameter generator uses.

use std::io::Write;

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;
use sha2::{Digest, Sha256};

/// Counts and densities of a synthesized circuit, following bellperson's rules.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Counts {
    /// Constraints emitted by `synthesize` (without the per-input constraints).
    pub synthesized_constraints: u64,
    /// synthesized_constraints + num_inputs (the per-input `input * 0 = 0` rows).
    pub constraints: u64,
    /// Public inputs including the leading ONE.
    pub inputs: u64,
    /// Private (aux) variables.
    pub aux: u64,
    /// Aux variables with a nonzero coefficient in some A.
    pub a_aux_density: u64,
    /// Inputs with a nonzero coefficient in some B.
    pub b_input_density: u64,
    /// Aux variables with a nonzero coefficient in some B.
    pub b_aux_density: u64,
}

/// Byte sink for the canonical R1CS: always hashed, optionally also written out.
pub struct R1csSink {
    hasher: Sha256,
    out: Option<Box<dyn Write + Send>>,
    bytes: u64,
}

impl R1csSink {
    pub fn new(out: Option<Box<dyn Write + Send>>) -> Self {
        R1csSink { hasher: Sha256::new(), out, bytes: 0 }
    }

    fn put(&mut self, b: &[u8]) {
        self.hasher.update(b);
        self.bytes += b.len() as u64;
        if let Some(w) = self.out.as_mut() {
            w.write_all(b).expect("writing canonical R1CS");
        }
    }

    /// Finishes the stream; returns (sha256, byte length).
    pub fn finish(mut self) -> ([u8; 32], u64) {
        if let Some(w) = self.out.as_mut() {
            w.flush().expect("flushing canonical R1CS");
        }
        (self.hasher.finalize().into(), self.bytes)
    }
}

/// The recorder. Three modes:
/// - witness mode (`sink == None`): calls every value closure, keeps the
///   witness, tracks densities and checks each constraint is satisfied;
/// - R1CS mode (`sink == Some`): never calls value closures (like bellperson's
///   generator) and streams the canonical R1CS. It needs the final input and
///   aux counts up front, for the header and the unified variable numbering;
/// - counting mode (`Recorder::counter`): no values and no stream, only
///   counts and densities.
pub struct Recorder {
    witness_mode: bool,
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
    num_inputs: usize,
    num_aux: usize,
    synthesized: u64,
    a_aux: Vec<bool>,
    b_input: Vec<bool>,
    b_aux: Vec<bool>,
    /// Index of the first unsatisfied constraint (witness mode).
    pub first_unsatisfied: Option<u64>,
    sink: Option<R1csSink>,
    final_inputs: usize,
}

impl Recorder {
    /// A witness-mode recorder with ONE already allocated as input 0.
    pub fn witness() -> Self {
        let mut r = Recorder::empty(true, None, 0);
        r.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        r
    }

    /// A counting recorder: like R1CS mode it never calls value closures, but
    /// it keeps only counts and densities (no canonical R1CS stream), for
    /// circuits too large to hash. ONE is allocated.
    pub fn counter() -> Self {
        let mut r = Recorder::empty(false, None, 0);
        r.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        r
    }

    /// An R1CS-mode recorder for a circuit whose final counts are known;
    /// writes the header immediately and allocates ONE.
    pub fn r1cs(mut sink: R1csSink, final_inputs: u64, final_aux: u64, final_constraints: u64) -> Self {
        sink.put(&final_inputs.to_le_bytes());
        sink.put(&final_aux.to_le_bytes());
        sink.put(&final_constraints.to_le_bytes());
        let mut r = Recorder::empty(false, Some(sink), final_inputs as usize);
        r.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        r
    }

    fn empty(witness_mode: bool, sink: Option<R1csSink>, final_inputs: usize) -> Self {
        Recorder {
            witness_mode,
            inputs: vec![],
            aux: vec![],
            num_inputs: 0,
            num_aux: 0,
            synthesized: 0,
            a_aux: vec![],
            b_input: vec![],
            b_aux: vec![],
            first_unsatisfied: None,
            sink,
            final_inputs,
        }
    }

    /// Appends the per-input constraints (input_i * 0 = 0, i = 0..inputs-1)
    /// exactly as bellperson's generator and prover do after synthesis.
    /// Returns the counts (and the finished R1CS sink in R1CS mode).
    pub fn finish(mut self) -> (Counts, Option<([u8; 32], u64)>) {
        if let Some(sink) = self.sink.as_mut() {
            assert_eq!(self.num_inputs, self.final_inputs, "input count changed between passes");
            for i in 0..self.num_inputs {
                // A = {i: 1}, B = {}, C = {}
                sink.put(&1u32.to_le_bytes());
                sink.put(&(i as u32).to_le_bytes());
                sink.put(&Fr::ONE.to_bytes_le());
                sink.put(&0u32.to_le_bytes());
                sink.put(&0u32.to_le_bytes());
            }
        }
        let counts = self.counts();
        (counts, self.sink.take().map(|s| s.finish()))
    }

    /// Counts as they stand (per-input constraints included in `constraints`).
    pub fn counts(&self) -> Counts {
        let pop = |v: &Vec<bool>| v.iter().filter(|b| **b).count() as u64;
        Counts {
            synthesized_constraints: self.synthesized,
            constraints: self.synthesized + self.num_inputs as u64,
            inputs: self.num_inputs as u64,
            aux: self.num_aux as u64,
            a_aux_density: pop(&self.a_aux),
            b_input_density: pop(&self.b_input),
            b_aux_density: pop(&self.b_aux),
        }
    }

    /// SHA-256 of the witness: inputs then aux, each 32-byte little-endian.
    pub fn witness_digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        for v in self.inputs.iter().chain(self.aux.iter()) {
            h.update(v.to_bytes_le());
        }
        h.finalize().into()
    }

    /// The witness bytes (inputs then aux, 32-byte LE each).
    pub fn witness_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 * (self.inputs.len() + self.aux.len()));
        for v in self.inputs.iter().chain(self.aux.iter()) {
            out.extend_from_slice(&v.to_bytes_le());
        }
        out
    }

    /// Allocates the next input variable (`input`) or aux variable. `value`
    /// runs only in witness mode, where its result joins the witness. The new
    /// variable starts with its density bits cleared.
    fn new_variable<F>(&mut self, input: bool, value: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
    {
        let value = if self.witness_mode { Some(value()?) } else { None };
        if input {
            self.inputs.extend(value);
            self.b_input.push(false);
            self.num_inputs += 1;
            Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
        } else {
            self.aux.extend(value);
            self.a_aux.push(false);
            self.b_aux.push(false);
            self.num_aux += 1;
            Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
        }
    }

    fn eval(&self, lc: &LinearCombination<Fr>) -> Fr {
        let mut acc = Fr::ZERO;
        for (i, c) in lc.iter_inputs() {
            acc += self.inputs[*i] * c;
        }
        for (i, c) in lc.iter_aux() {
            acc += self.aux[*i] * c;
        }
        acc
    }

    fn mark(lc: &LinearCombination<Fr>, inputs: Option<&mut Vec<bool>>, aux: &mut Vec<bool>) {
        if let Some(inputs) = inputs {
            for (i, c) in lc.iter_inputs() {
                if !bool::from(c.is_zero()) {
                    inputs[*i] = true;
                }
            }
        }
        for (i, c) in lc.iter_aux() {
            if !bool::from(c.is_zero()) {
                aux[*i] = true;
            }
        }
    }

    fn emit(sink: &mut R1csSink, lc: &LinearCombination<Fr>, final_inputs: usize) {
        let mut terms: Vec<(u32, Fr)> = Vec::new();
        for (i, c) in lc.iter_inputs() {
            terms.push((*i as u32, *c));
        }
        for (i, c) in lc.iter_aux() {
            terms.push(((final_inputs + *i) as u32, *c));
        }
        terms.sort_by_key(|t| t.0);
        // Merge duplicates (bellpepper already merges; this keeps the format's
        // definition independent of that), then drop zero coefficients.
        let mut merged: Vec<(u32, Fr)> = Vec::with_capacity(terms.len());
        for (v, c) in terms {
            match merged.last_mut() {
                Some(last) if last.0 == v => last.1 += c,
                _ => merged.push((v, c)),
            }
        }
        merged.retain(|t| !bool::from(t.1.is_zero()));
        sink.put(&(merged.len() as u32).to_le_bytes());
        for (v, c) in merged {
            sink.put(&v.to_le_bytes());
            sink.put(&c.to_bytes_le());
        }
    }
}

impl ConstraintSystem<Fr> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where F: FnOnce() -> Result<Fr, SynthesisError>, A: FnOnce() -> AR, AR: Into<String>
    {
        self.new_variable(false, f)
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where F: FnOnce() -> Result<Fr, SynthesisError>, A: FnOnce() -> AR, AR: Into<String>
    {
        self.new_variable(true, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        Recorder::mark(&a, None, &mut self.a_aux);
        Recorder::mark(&b, Some(&mut self.b_input), &mut self.b_aux);
        if self.witness_mode
            && self.first_unsatisfied.is_none()
            && self.eval(&a) * self.eval(&b) != self.eval(&c)
        {
            self.first_unsatisfied = Some(self.synthesized);
        }
        if let Some(sink) = self.sink.as_mut() {
            let n = self.final_inputs;
            Recorder::emit(sink, &a, n);
            Recorder::emit(sink, &b, n);
            Recorder::emit(sink, &c, n);
        }
        self.synthesized += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// Synthesizes `make()` twice (witness pass, then R1CS pass) and returns
/// everything the vectors need. `r1cs_out` optionally receives the canonical
/// R1CS bytes.
pub struct Synthesized {
    pub counts: Counts,
    pub r1cs_sha256: [u8; 32],
    pub r1cs_bytes: u64,
    pub witness_sha256: [u8; 32],
    pub inputs: Vec<Fr>,
    pub witness: Recorder,
}

impl Synthesized {
    /// The JSON summary the vectors record per circuit: counts, domain size,
    /// R1CS and witness digests and byte lengths.
    pub fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let v = serde_json::json!({
            "counts": self.counts,
            "domain_size": self.counts.constraints.next_power_of_two(),
            "r1cs_sha256": hex::encode(self.r1cs_sha256),
            "r1cs_bytes": self.r1cs_bytes,
            "witness_sha256": hex::encode(self.witness_sha256),
            "witness_bytes": 32 * (self.counts.inputs + self.counts.aux),
        });
        match v {
            serde_json::Value::Object(m) => m,
            _ => unreachable!("json! of an object literal"),
        }
    }
}

pub fn synthesize_both<C, M>(make: M, r1cs_out: Option<Box<dyn Write + Send>>) -> anyhow::Result<Synthesized>
where
    C: bellperson::Circuit<Fr>,
    M: Fn() -> anyhow::Result<C>,
{
    let mut w = Recorder::witness();
    make()?.synthesize(&mut w)?;
    if let Some(i) = w.first_unsatisfied {
        anyhow::bail!("witness does not satisfy constraint {}", i);
    }
    let counts = w.counts();
    let witness_sha256 = w.witness_digest();
    let inputs = w.inputs.clone();
    let mut r = Recorder::r1cs(R1csSink::new(r1cs_out), counts.inputs, counts.aux, counts.constraints);
    make()?.synthesize(&mut r)?;
    let (counts_r, sink) = r.finish();
    let (r1cs_sha256, r1cs_bytes) = sink.expect("r1cs sink");
    anyhow::ensure!(counts == counts_r, "passes disagree: {:?} vs {:?}", counts, counts_r);
    Ok(Synthesized { counts, r1cs_sha256, r1cs_bytes, witness_sha256, inputs, witness: w })
}
