// Generator of porep/inputs/testdata/rust-inputs.json and
// porep/graph/testdata/rust-parents.json: public inputs and graph parents from
// rust-fil-proofs 19.1 (filecoin-proofs-api 19.1.0) for sizes and API versions
// the refgen seals do not cover. Build it as src/main.rs of a copy of
// testdata/refgen's Cargo.toml and Cargo.lock (same pinned crates), run
//   cargo build --release --offline --locked && ./target/release/refgen > vectors.json
// and split vectors.json: parents rows become [node, 14 parents] (rows with
// node >= nodes dropped), public inputs keep partition 0 in full plus the
// SHA-256 of each partition's concatenated 32-byte little-endian scalars.
use anyhow::Result;
use blstrs::Scalar as Fr;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, SectorShape2KiB, SectorShape32GiB,
    SectorShape512MiB, SectorShape64GiB,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs_api::RegisteredSealProof;
use serde_json::json;
use sha2::{Digest, Sha256};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCircuit, StackedCompound, StackedDrg};

fn tagged(tag: &str) -> [u8; 32] {
    let mut b: [u8; 32] = Sha256::digest(tag.as_bytes()).into();
    b[31] &= 0x3f;
    b
}

macro_rules! gen {
    ($tree:ty, $proof:expr) => {{
        let proof: RegisteredSealProof = $proof;
        let cfg = proof.as_v1_config();
        let sp = setup_params(&cfg)?;
        let pp = <StackedDrg<'static, $tree, DefaultPieceHasher> as ProofScheme>::setup(&sp)?;
        let name = format!("{:?}", proof);
        let prover_id = tagged(&format!("prover {}", name));
        let ticket = tagged(&format!("ticket {}", name));
        let comm_d = tagged(&format!("comm_d {}", name));
        let comm_r = tagged(&format!("comm_r {}", name));
        let seed: [u8; 32] = Sha256::digest(format!("seed {}", name).as_bytes()).into();
        let sector_id: u64 = 0x0102_0304_0506_0708;
        let replica_id = generate_replica_id::<<$tree as storage_proofs_core::merkle::MerkleTreeTrait>::Hasher, _>(
            &prover_id, sector_id, &ticket, comm_d, &cfg.porep_id);
        let pub_in = stacked::PublicInputs {
            replica_id,
            tau: Some(stacked::Tau {
                comm_d: DefaultPieceDomain::try_from_bytes(&comm_d)?,
                comm_r: DefaultTreeDomain::try_from_bytes(&comm_r)?,
            }),
            k: None,
            seed: Some(seed),
        };
        let partitions = usize::from(cfg.partitions);
        let mut parts = Vec::new();
        for k in 0..partitions {
            let inputs = <StackedCompound<$tree, DefaultPieceHasher> as CompoundProof<
                StackedDrg<'static, $tree, DefaultPieceHasher>,
                StackedCircuit<$tree, DefaultPieceHasher>,
            >>::generate_public_inputs(&pub_in, &pp, Some(k))?;
            parts.push(inputs.iter().map(|f: &Fr| hex::encode(f.to_bytes_le())).collect::<Vec<_>>());
        }
        let nodes = pp.graph.size();
        let mut sample: Vec<usize> = vec![0, 1, 2, 3, 4, 5, 100, 12345, nodes / 2, nodes - 2, nodes - 1];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            sample.push((x % nodes as u64) as usize);
        }
        let mut parents = Vec::new();
        for &n in &sample {
            let mut p = vec![0u32; 14];
            pp.graph.parents(n, &mut p)?;
            parents.push(json!({"node": n, "parents": p}));
        }
        let rid: Fr = replica_id.into();
        json!({
            "registered_proof": name,
            "porep_id": hex::encode(cfg.porep_id),
            "nodes": nodes,
            "prover_id": hex::encode(prover_id),
            "sector_id": sector_id,
            "ticket": hex::encode(ticket),
            "seed": hex::encode(seed),
            "comm_d": hex::encode(comm_d),
            "comm_r": hex::encode(comm_r),
            "replica_id": hex::encode(rid.to_bytes_le()),
            "public_inputs": parts,
            "parents": parents,
        })
    }};
}

fn main() -> Result<()> {
    use RegisteredSealProof::*;
    let out = json!([
        gen!(SectorShape2KiB, StackedDrg2KiBV1),
        gen!(SectorShape512MiB, StackedDrg512MiBV1_1),
        gen!(SectorShape32GiB, StackedDrg32GiBV1),
        gen!(SectorShape32GiB, StackedDrg32GiBV1_1),
        gen!(SectorShape64GiB, StackedDrg64GiBV1),
        gen!(SectorShape64GiB, StackedDrg64GiBV1_1),
    ]);
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
