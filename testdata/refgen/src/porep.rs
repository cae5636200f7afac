//! Seals small sectors end to end with filecoin-proofs-api and writes the C1
//! output plus everything C2 derives from it (README.md, "porep-2k / porep-8m").

use std::convert::TryInto;
use std::fs;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use blstrs::Scalar as Fr;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, SectorShape2KiB};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::VanillaSealProof as RawVanillaSealProof;
use filecoin_proofs_api::seal::{
    add_piece, generate_synth_proofs, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
    SealCommitPhase1Output,
};
use filecoin_proofs_api::{ApiFeature, PaddedBytesAmount, RegisteredSealProof, SectorId, UnpaddedBytesAmount};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use serde_json::json;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::recorder::synthesize_both;
use crate::util::{fr_hex, write_scalars};

// 2 KiB and 8 MiB sectors share the same tree shape (8-0-0, Poseidon).
type Tree = SectorShape2KiB;
type Compound = StackedCompound<Tree, DefaultPieceHasher>;
type Scheme<'a> = StackedDrg<'a, Tree, DefaultPieceHasher>;

/// One sector to seal.
pub struct Spec {
    pub dir: &'static str,
    pub proof: RegisteredSealProof,
    pub piece_seed: u64,
}

pub fn specs() -> Vec<Spec> {
    vec![
        Spec { dir: "porep-2k", proof: RegisteredSealProof::StackedDrg2KiBV1_1, piece_seed: 0x6332_7069_6563_6532 },
        Spec { dir: "porep-8m", proof: RegisteredSealProof::StackedDrg8MiBV1_1, piece_seed: 0x6332_7069_6563_6538 },
        // The same piece sealed with the other challenge derivations.
        Spec {
            dir: "porep-2k-synth",
            proof: RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
            piece_seed: 0x6332_7069_6563_6532,
        },
        Spec {
            dir: "porep-2k-ni",
            proof: RegisteredSealProof::StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
            piece_seed: 0x6332_7069_6563_6532,
        },
    ]
}

/// Fixed public values shared by both sectors.
pub const SECTOR_ID: u64 = 4242;

pub(crate) fn fixed(tag: u8) -> [u8; 32] {
    // byte i = tag ^ (i * 7); byte 31 masked so that each value is also a
    // canonical field element if anyone reads it as one.
    let mut b = [0u8; 32];
    for (i, x) in b.iter_mut().enumerate() {
        *x = tag ^ ((i as u8).wrapping_mul(7));
    }
    b[31] &= 0x3f;
    b
}

pub fn prover_id() -> [u8; 32] {
    fixed(0x11)
}
pub fn ticket() -> [u8; 32] {
    fixed(0x22)
}
pub fn seed() -> [u8; 32] {
    fixed(0x33)
}

/// Public parameters and public inputs C2 derives from a C1 output.
pub struct C2View {
    pub pub_params: compound_proof::PublicParams<'static, Scheme<'static>>,
    pub pub_in: stacked::PublicInputs<DefaultTreeDomain, DefaultPieceDomain>,
    pub vanilla: Vec<Vec<RawVanillaSealProof<Tree>>>,
}

/// The vanilla public inputs C2 derives from a C1 output: its replica id,
/// comm_d, comm_r and seed, for all partitions (`k` unset).
pub fn c1_public_inputs(c1: &SealCommitPhase1Output) -> Result<stacked::PublicInputs<DefaultTreeDomain, DefaultPieceDomain>> {
    Ok(stacked::PublicInputs {
        replica_id: c1.replica_id,
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&c1.comm_d)?,
            comm_r: DefaultTreeDomain::try_from_bytes(&c1.comm_r)?,
        }),
        k: None,
        seed: Some(c1.seed),
    })
}

pub fn c2_view(c1: &SealCommitPhase1Output) -> Result<C2View> {
    let porep_config = c1.registered_proof.as_v1_config();
    let csp = compound_proof::SetupParams {
        vanilla_params: setup_params(&porep_config)?,
        partitions: Some(usize::from(porep_config.partitions)),
        priority: false,
    };
    let pub_params = <Compound as CompoundProof<Scheme<'static>, StackedCircuit<Tree, DefaultPieceHasher>>>::setup(&csp)?;
    let pub_in = c1_public_inputs(c1)?;
    let vanilla: Vec<Vec<RawVanillaSealProof<Tree>>> = c1.vanilla_proofs.clone().try_into()?;
    Ok(C2View { pub_params, pub_in, vanilla })
}

impl C2View {
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Fr>> {
        <Compound as CompoundProof<Scheme<'static>, StackedCircuit<Tree, DefaultPieceHasher>>>::generate_public_inputs(
            &self.pub_in,
            &self.pub_params.vanilla_params,
            Some(k),
        )
    }

    pub fn circuit(&self, k: usize) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        <Compound as CompoundProof<Scheme<'static>, StackedCircuit<Tree, DefaultPieceHasher>>>::circuit(
            &self.pub_in,
            (),
            &self.vanilla[k],
            &self.pub_params.vanilla_params,
            Some(k),
        )
    }

    pub fn blank_circuit(&self) -> StackedCircuit<Tree, DefaultPieceHasher> {
        <Compound as CompoundProof<Scheme<'static>, StackedCircuit<Tree, DefaultPieceHasher>>>::blank_circuit(
            &self.pub_params.vanilla_params,
        )
    }
}

/// Seals `spec` in `tmp` and writes its vectors to `out/<spec.dir>`.
/// With `r1cs_dir`, also writes the canonical R1CS of partition 0 there.
pub fn generate(spec: &Spec, out: &Path, tmp: &Path, r1cs_dir: Option<&Path>) -> Result<()> {
    let dir = out.join(spec.dir);
    fs::create_dir_all(&dir)?;
    let work = tmp.join(spec.dir);
    let _ = fs::remove_dir_all(&work);
    let cache = work.join("cache");
    fs::create_dir_all(&cache)?;
    let staged = work.join("staged");
    let sealed = work.join("sealed");

    let t0 = Instant::now();
    let sector_size = u64::from(spec.proof.sector_size());
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(sector_size));
    let mut data = vec![0u8; u64::from(unpadded) as usize];
    ChaCha20Rng::seed_from_u64(spec.piece_seed).fill_bytes(&mut data);
    let piece = {
        let mut f = fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&staged)?;
        let (info, written) = add_piece(spec.proof, Cursor::new(&data), &mut f, unpadded, &[])?;
        ensure!(written == unpadded, "add_piece wrote {:?}", written);
        f.flush()?;
        info
    };
    fs::File::create(&sealed)?;
    let sector_id = SectorId::from(SECTOR_ID);
    let pc1 = seal_pre_commit_phase1(
        spec.proof, &cache, &staged, &sealed, prover_id(), sector_id, ticket(), &[piece.clone()],
    )
    .context("seal_pre_commit_phase1")?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed).context("seal_pre_commit_phase2")?;
    if spec.proof.feature_enabled(ApiFeature::SyntheticPoRep) {
        // Synthetic PoRep: the vanilla proofs of all synthetic challenges
        // are made now; C1 then selects those the seed picks.
        generate_synth_proofs(&cache, &sealed, prover_id(), sector_id, ticket(), pc2.clone(), &[piece.clone()])
            .context("generate_synth_proofs")?;
    }
    let c1 = seal_commit_phase1(
        &cache, &sealed, prover_id(), sector_id, ticket(), seed(), pc2.clone(), &[piece.clone()],
    )
    .context("seal_commit_phase1")?;
    let seal_secs = t0.elapsed().as_secs_f64();

    // Exactly what filecoin-ffi hands to C2: serde_json::to_vec of the API struct.
    let c1_json = serde_json::to_vec(&c1)?;
    fs::write(dir.join("c1.json"), &c1_json)?;
    let back: SealCommitPhase1Output = serde_json::from_slice(&c1_json)?;
    ensure!(serde_json::to_vec(&back)? == c1_json, "C1 JSON does not round trip in Rust");
    ensure!(pc2.comm_r == c1.comm_r && pc2.comm_d == c1.comm_d, "commitments changed between phases");

    let view = c2_view(&c1)?;
    let partitions = view.vanilla.len();
    let mut part_inputs = Vec::new();
    for k in 0..partitions {
        let inputs = view.public_inputs(k)?;
        write_scalars(&dir.join(format!("inputs-p{}.bin", k)), &inputs)?;
        part_inputs.push(inputs.iter().map(fr_hex).collect::<Vec<_>>());
    }

    let t1 = Instant::now();
    let r1cs_out: Option<Box<dyn Write + Send>> = match r1cs_dir {
        Some(d) => {
            fs::create_dir_all(d)?;
            let p: PathBuf = d.join(format!("{}-p0.r1cs", spec.dir));
            Some(Box::new(std::io::BufWriter::with_capacity(1 << 20, fs::File::create(p)?)))
        }
        None => None,
    };
    let syn = synthesize_both(|| view.circuit(0), r1cs_out)?;
    let synth_secs = t1.elapsed().as_secs_f64();
    ensure!(
        syn.inputs[1..].iter().map(fr_hex).collect::<Vec<_>>() == part_inputs[0],
        "inputs allocated by the circuit differ from generate_public_inputs"
    );

    let replica_id: Fr = c1.replica_id.into();
    let meta = json!({
        "registered_proof": format!("{:?}", spec.proof),
        "sector_size": sector_size,
        "porep_id": hex::encode(spec.proof.as_v1_config().porep_id),
        "circuit_identifier": spec.proof.circuit_identifier()?,
        "official_params_file": spec.proof.cache_params_path()?.file_name().map(|n| n.to_string_lossy().into_owned()),
        "prover_id": hex::encode(prover_id()),
        "sector_id": SECTOR_ID,
        "ticket": hex::encode(ticket()),
        "seed": hex::encode(seed()),
        "piece": {
            "rng": format!("ChaCha20Rng::seed_from_u64({:#x}).fill_bytes, {} unpadded bytes", spec.piece_seed, u64::from(unpadded)),
            "sha256": hex::encode(crate::util::sha256(&data)),
            "comm_p": hex::encode(piece.commitment),
            "size": u64::from(piece.size),
        },
        "comm_r": hex::encode(c1.comm_r),
        "comm_d": hex::encode(c1.comm_d),
        "replica_id": fr_hex(&replica_id),
        "c1_file": "c1.json",
        "c1_sha256": hex::encode(crate::util::sha256(&c1_json)),
        "partitions": partitions,
        "challenges_per_partition": view.vanilla[0].len(),
        "public_inputs": part_inputs,
        "public_inputs_files": (0..partitions).map(|k| format!("inputs-p{}.bin", k)).collect::<Vec<_>>(),
        "partition0": syn.summary(),
    });
    fs::write(dir.join("meta.json"), serde_json::to_string_pretty(&meta)? + "\n")?;
    let _ = fs::remove_dir_all(&work);
    eprintln!("{}: seal {:.1}s, synth {:.1}s, counts {:?}", spec.dir, seal_secs, synth_secs, syn.counts);
    Ok(())
}
