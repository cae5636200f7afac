//! SnapDeals (empty-sector update, storage-proofs-update
//! EmptySectorUpdateCircuit) vectors (README.md, "update-2k" and
//! "update-counts").
//!
//! `generate` seals a 2 KiB committed-capacity sector (an all-zero piece)
//! with filecoin-proofs-api, encodes a new piece into it with
//! `empty_sector_update_encode_into`, asks the API for the vanilla partition
//! proofs (the bincode bytes filecoin-ffi hands to the SNARK step), checks
//! them with `verify_partition_proofs`, and records each partition's circuit
//! with `src/recorder.rs`. `counts` synthesizes the blank circuit of each
//! registered update proof into a counting constraint system.

use std::fs;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs_api::seal::{add_piece, seal_pre_commit_phase1, seal_pre_commit_phase2};
use filecoin_proofs_api::update::{
    empty_sector_update_encode_into, generate_partition_proofs, verify_partition_proofs,
};
use filecoin_proofs_api::{
    PaddedBytesAmount, PieceInfo, RegisteredSealProof, RegisteredUpdateProof, SectorId,
    UnpaddedBytesAmount,
};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use serde_json::json;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{h_default, TreeDDomain, TreeRDomain, TreeRHasher};
use storage_proofs_update::{
    Challenges, EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
    PartitionProof, PublicInputs, PublicParams, SetupParams,
};

use crate::recorder::{synthesize_both, Recorder};
use crate::util::{fr_hex, update_counts_file, write_scalars};

type Tree2K = SectorShape2KiB;

/// Sector id of the updated sector.
const SECTOR_ID: u64 = 6001;
/// RNG seed of the new piece encoded into the sector.
const NEW_PIECE_SEED: u64 = 0x6332_7570_6461_7465;

struct Prepared {
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
    comm_r_last_new: [u8; 32],
    raw: Vec<Vec<u8>>,
}

/// Writes one staged file holding one piece of `data` (unpadded bytes).
fn stage(proof: RegisteredSealProof, path: &Path, data: &[u8]) -> Result<PieceInfo> {
    let unpadded = UnpaddedBytesAmount(data.len() as u64);
    let mut f = fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
    let (info, written) = add_piece(proof, Cursor::new(data), &mut f, unpadded, &[])?;
    ensure!(written == unpadded, "add_piece wrote {:?}", written);
    f.flush()?;
    Ok(info)
}

/// Seals a CC sector, encodes the new piece, and asks for the vanilla
/// partition proofs, all through filecoin-proofs-api.
fn prepare(work: &Path, update: RegisteredUpdateProof, seal_proof: RegisteredSealProof) -> Result<Prepared> {
    ensure!(u64::from(seal_proof.sector_size()) == u64::from(update.sector_size()), "sector sizes differ");
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(seal_proof.sector_size())));
    let n = u64::from(unpadded) as usize;

    let old_cache = work.join("cache");
    let new_cache = work.join("new-cache");
    fs::create_dir_all(&old_cache)?;
    fs::create_dir_all(&new_cache)?;
    let sealed = work.join("sealed");
    let replica = work.join("replica");

    // The committed-capacity sector: an all-zero piece.
    let cc_piece = stage(seal_proof, &work.join("staged-cc"), &vec![0u8; n])?;
    fs::File::create(&sealed)?;
    let pc1 = seal_pre_commit_phase1(
        seal_proof, &old_cache, &work.join("staged-cc"), &sealed, crate::porep::prover_id(),
        SectorId::from(SECTOR_ID), crate::porep::ticket(), &[cc_piece],
    )
    .context("seal_pre_commit_phase1")?;
    let pc2 = seal_pre_commit_phase2(pc1, &old_cache, &sealed).context("seal_pre_commit_phase2")?;

    // The deal data encoded into it.
    let mut data = vec![0u8; n];
    ChaCha20Rng::seed_from_u64(NEW_PIECE_SEED).fill_bytes(&mut data);
    let staged_new = work.join("staged-new");
    let piece = stage(seal_proof, &staged_new, &data)?;
    fs::File::create(&replica)?;
    fs::OpenOptions::new().write(true).open(&replica)?.set_len(u64::from(seal_proof.sector_size()))?;
    let enc = empty_sector_update_encode_into(update, &replica, &new_cache, &sealed, &old_cache, &staged_new, &[piece])
        .context("empty_sector_update_encode_into")?;

    let proofs = generate_partition_proofs(
        update, pc2.comm_r, enc.comm_r_new, enc.comm_d_new, &sealed, &old_cache, &replica, &new_cache,
    )
    .context("generate_partition_proofs")?;
    ensure!(
        verify_partition_proofs(update, &proofs, pc2.comm_r, enc.comm_r_new, enc.comm_d_new)?,
        "vanilla partition proofs do not verify"
    );
    Ok(Prepared {
        comm_r_old: pc2.comm_r,
        comm_r_new: enc.comm_r_new,
        comm_d_new: enc.comm_d_new,
        comm_r_last_new: enc.comm_r_last_new,
        raw: proofs.into_iter().map(|p| p.0).collect(),
    })
}

type Compound<T> = EmptySectorUpdateCompound<T>;

fn unpadded_len(seal: RegisteredSealProof) -> u64 {
    u64::from(UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(seal.sector_size()))))
}

/// The identifier filecoin-proofs caches the update circuit's Groth16
/// parameters under (get_empty_sector_update_params: the compound's
/// CacheableParameters over PublicParams::from_sector_size). Note that
/// RegisteredUpdateProof::circuit_identifier returns the PoRep circuit's
/// identifier instead; both are recorded.
fn cache_identifier<T: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(pp: &PublicParams) -> String {
    <Compound<T> as CacheableParameters<EmptySectorUpdateCircuit<T>, PublicParams>>::cache_identifier(pp)
}

fn compound_params<T: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sector_bytes: u64,
    partitions: usize,
) -> Result<compound_proof::PublicParams<'static, EmptySectorUpdate<T>>> {
    let csp = compound_proof::SetupParams {
        vanilla_params: SetupParams { sector_bytes },
        partitions: Some(partitions),
        priority: false,
    };
    <Compound<T> as CompoundProof<EmptySectorUpdate<T>, EmptySectorUpdateCircuit<T>>>::setup(&csp)
}

/// One update vector: the directory, the update proof, the seal proof of
/// the sector, and whether the (larger) serde JSON form is written too.
pub struct Spec {
    pub dir: &'static str,
    update: RegisteredUpdateProof,
    seal: RegisteredSealProof,
    json: bool,
}

/// 2 KiB (one partition, h = 1) and 8 MiB (four partitions, h = 10; the
/// same 8-0-0 tree type); the 8 MiB vector keeps only the bincode proofs.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec { dir: "update-2k", update: RegisteredUpdateProof::StackedDrg2KiBV1, seal: RegisteredSealProof::StackedDrg2KiBV1_1, json: true },
        Spec { dir: "update-8m", update: RegisteredUpdateProof::StackedDrg8MiBV1, seal: RegisteredSealProof::StackedDrg8MiBV1_1, json: false },
    ]
}

/// Writes `out/<spec.dir>/`.
pub fn generate(spec: &Spec, out: &Path, tmp: &Path) -> Result<()> {
    let update = spec.update;
    let dir = out.join(spec.dir);
    fs::create_dir_all(&dir)?;
    let work: PathBuf = tmp.join(spec.dir);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work)?;
    let t0 = Instant::now();
    let prep = prepare(&work, update, spec.seal)?;
    eprintln!("{}: sealed, encoded and proved (vanilla) in {:.1}s", spec.dir, t0.elapsed().as_secs_f64());

    let sector_bytes = u64::from(update.sector_size());
    let pp = PublicParams::from_sector_size(sector_bytes);
    let partitions = pp.partition_count;
    ensure!(prep.raw.len() == partitions, "{} partition proofs, want {}", prep.raw.len(), partitions);
    let proofs: Vec<PartitionProof<Tree2K>> =
        prep.raw.iter().map(|b| bincode::deserialize(b)).collect::<std::result::Result<_, _>>()?;
    let vanilla_json = serde_json::to_vec(&proofs)?;
    if spec.json {
        fs::write(dir.join("vanilla.json"), &vanilla_json)?;
    }
    let mut raw_names = Vec::new();
    for (k, b) in prep.raw.iter().enumerate() {
        let name = format!("vanilla-p{}.bin", k);
        fs::write(dir.join(&name), b)?;
        raw_names.push(name);
    }

    let h = h_default(pp.sector_nodes);
    let pub_inputs = PublicInputs {
        k: 0,
        comm_r_old: TreeRDomain::try_from_bytes(&prep.comm_r_old)?,
        comm_d_new: TreeDDomain::try_from_bytes(&prep.comm_d_new)?,
        comm_r_new: TreeRDomain::try_from_bytes(&prep.comm_r_new)?,
        h,
    };
    let cp = compound_params::<Tree2K>(sector_bytes, partitions)?;
    ensure!(
        EmptySectorUpdate::<Tree2K>::verify_all_partitions(&cp.vanilla_params, &pub_inputs, &proofs)?,
        "verify_all_partitions rejects the decoded proofs"
    );

    let mut part_meta = Vec::new();
    for k in 0..partitions {
        let inputs = <Compound<Tree2K> as CompoundProof<EmptySectorUpdate<Tree2K>, EmptySectorUpdateCircuit<Tree2K>>>::generate_public_inputs(
            &pub_inputs, &cp.vanilla_params, Some(k),
        )?;
        let name = format!("inputs-p{}.bin", k);
        write_scalars(&dir.join(&name), &inputs)?;
        let t = Instant::now();
        let syn = synthesize_both(
            || {
                <Compound<Tree2K> as CompoundProof<EmptySectorUpdate<Tree2K>, EmptySectorUpdateCircuit<Tree2K>>>::circuit(
                    &pub_inputs, (), &proofs[k], &cp.vanilla_params, Some(k),
                )
            },
            None,
        )?;
        eprintln!("{}: partition {} synthesized twice in {:.1}s", spec.dir, k, t.elapsed().as_secs_f64());
        ensure!(syn.inputs[1..] == inputs[..], "partition {}: circuit inputs differ from generate_public_inputs", k);
        let challenges: Vec<u32> =
            Challenges::new(pp.sector_nodes, pub_inputs.comm_r_new, k).collect();
        let mut m = syn.summary();
        m.insert("challenges".into(), json!(challenges));
        m.insert("public_inputs".into(), json!(inputs.iter().map(fr_hex).collect::<Vec<_>>()));
        m.insert("public_inputs_file".into(), json!(name));
        part_meta.push(serde_json::Value::Object(m));
    }

    let meta = json!({
        "registered_proof": format!("{:?}", update),
        "registered_seal_proof": format!("{:?}", spec.seal),
        "sector_size": sector_bytes,
        "sector_id": SECTOR_ID,
        "prover_id": hex::encode(crate::porep::prover_id()),
        "ticket": hex::encode(crate::porep::ticket()),
        "old_piece": format!("{} zero bytes (committed capacity)", unpadded_len(spec.seal)),
        "new_piece_rng": format!("ChaCha20Rng::seed_from_u64({:#x}).fill_bytes, {} unpadded bytes", NEW_PIECE_SEED, unpadded_len(spec.seal)),
        "public_params": {
            "sector_nodes": pp.sector_nodes,
            "challenge_count": pp.challenge_count,
            "challenge_bit_len": pp.challenge_bit_len,
            "partition_count": pp.partition_count,
            "partition_bit_len": pp.partition_bit_len,
            "apex_leaf_count": pp.apex_leaf_count,
            "apex_leaf_bit_len": pp.apex_leaf_bit_len,
        },
        "h": h,
        "circuit_identifier": cache_identifier::<Tree2K>(&pp),
        "official_params_file": format!("v{}-{}.params", storage_proofs_core::parameter_cache::VERSION, cache_identifier::<Tree2K>(&pp)),
        "api_circuit_identifier": update.circuit_identifier()?,
        "comm_r_old": hex::encode(prep.comm_r_old),
        "comm_r_new": hex::encode(prep.comm_r_new),
        "comm_d_new": hex::encode(prep.comm_d_new),
        "comm_r_last_new": hex::encode(prep.comm_r_last_new),
        "vanilla_json": if spec.json { json!("vanilla.json") } else { json!(null) },
        "vanilla_json_sha256": hex::encode(crate::util::sha256(&vanilla_json)),
        "vanilla_bincode": raw_names,
        "partitions": part_meta,
    });
    fs::write(dir.join("meta.json"), serde_json::to_string_pretty(&meta)? + "\n")?;
    let _ = fs::remove_dir_all(&work);
    Ok(())
}

fn count_blank<T: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(sector_bytes: u64) -> Result<(crate::recorder::Counts, String)> {
    let cp = compound_params::<T>(sector_bytes, PublicParams::from_sector_size(sector_bytes).partition_count)?;
    let circuit = <Compound<T> as CompoundProof<EmptySectorUpdate<T>, EmptySectorUpdateCircuit<T>>>::blank_circuit(
        &cp.vanilla_params,
    );
    let mut cs = Recorder::counter();
    bellperson::Circuit::synthesize(circuit, &mut cs)?;
    Ok((cs.counts(), cache_identifier::<T>(&cp.vanilla_params)))
}

/// Writes `out/update-counts.json`: the counts of the blank circuit of every
/// registered update proof named in `only` (all when empty), as the Groth16
/// parameter generator sees it.
pub fn counts(out: &Path, only: &[String]) -> Result<()> {
    use RegisteredUpdateProof::*;
    let all = [StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1];
    update_counts_file(&out.join("update-counts.json"), &all, only, |proof| {
        let size = u64::from(proof.sector_size());
        let (counts, id) = match size {
            s if s == 2 << 10 => count_blank::<SectorShape2KiB>(s)?,
            s if s == 8 << 20 => count_blank::<SectorShape8MiB>(s)?,
            s if s == 512 << 20 => count_blank::<SectorShape512MiB>(s)?,
            s if s == 32 << 30 => count_blank::<SectorShape32GiB>(s)?,
            s if s == 64 << 30 => count_blank::<SectorShape64GiB>(s)?,
            s => anyhow::bail!("sector size {}", s),
        };
        let pp = PublicParams::from_sector_size(size);
        let entry = json!({
            "sector_size": size,
            "public_params": {
                "sector_nodes": pp.sector_nodes,
                "challenge_count": pp.challenge_count,
                "partition_count": pp.partition_count,
                "apex_leaf_count": pp.apex_leaf_count,
            },
            "h": h_default(pp.sector_nodes),
            "official_params_file": format!("v{}-{}.params", storage_proofs_core::parameter_cache::VERSION, id),
            "circuit_identifier": id,
            "counts": counts,
            "domain_size": counts.constraints.next_power_of_two(),
        });
        Ok((counts, entry))
    })
}

/// The committed 2 KiB vector read back: public params, vanilla public
/// inputs (k = 0) and the decoded partition proofs.
pub fn load_2k(out: &Path) -> Result<(PublicParams, PublicInputs, Vec<PartitionProof<Tree2K>>)> {
    let dir = out.join("update-2k");
    let meta: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("meta.json"))?)?;
    let comm = |k: &str| -> Result<[u8; 32]> {
        let s = meta[k].as_str().with_context(|| format!("meta.json: no {}", k))?;
        let v = hex::decode(s)?;
        v.try_into().map_err(|_| anyhow::anyhow!("meta.json: {} is not 32 bytes", k))
    };
    let pp = PublicParams::from_sector_size(2048);
    let pub_inputs = PublicInputs {
        k: 0,
        comm_r_old: TreeRDomain::try_from_bytes(&comm("comm_r_old")?)?,
        comm_d_new: TreeDDomain::try_from_bytes(&comm("comm_d_new")?)?,
        comm_r_new: TreeRDomain::try_from_bytes(&comm("comm_r_new")?)?,
        h: h_default(pp.sector_nodes),
    };
    let proofs: Vec<PartitionProof<Tree2K>> = serde_json::from_slice(&fs::read(dir.join("vanilla.json"))?)?;
    Ok((pp, pub_inputs, proofs))
}

/// Partition k's circuit of the 2 KiB vector, and the blank circuit.
pub fn circuit_2k(
    pp: &PublicParams,
    pub_inputs: &PublicInputs,
    proof: Option<(&PartitionProof<Tree2K>, usize)>,
) -> Result<EmptySectorUpdateCircuit<Tree2K>> {
    type C = Compound<Tree2K>;
    Ok(match proof {
        Some((p, k)) => <C as CompoundProof<EmptySectorUpdate<Tree2K>, EmptySectorUpdateCircuit<Tree2K>>>::circuit(
            pub_inputs, (), p, pp, Some(k),
        )?,
        None => <C as CompoundProof<EmptySectorUpdate<Tree2K>, EmptySectorUpdateCircuit<Tree2K>>>::blank_circuit(pp),
    })
}

/// Partition k's public inputs of the 2 KiB vector.
pub fn inputs_2k(pp: &PublicParams, pub_inputs: &PublicInputs, k: usize) -> Result<Vec<blstrs::Scalar>> {
    <Compound<Tree2K> as CompoundProof<EmptySectorUpdate<Tree2K>, EmptySectorUpdateCircuit<Tree2K>>>::generate_public_inputs(
        pub_inputs, pp, Some(k),
    )
}
