//! Window and Winning PoSt (storage-proofs-post FallbackPoSt) vectors
//! (README.md, "post-2k", "post-8m" and "post-counts").
//!
//! `generate` seals three sectors of one size (2 KiB for post-2k, 8 MiB for
//! post-8m) with filecoin-proofs-api, asks the API for the PoSt challenges
//! and the per-sector vanilla proofs (the bytes
//! filecoin-ffi hands to the SNARK step), partitions them the way
//! filecoin-proofs does before proving, checks them with rust-fil-proofs'
//! vanilla verifier, and records each partition's circuit with
//! `src/recorder.rs`. `counts` synthesizes the blank circuit of every
//! registered PoSt shape into a counting constraint system.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Cursor, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::types::{FallbackPoStSectorProof, PoStConfig, PoStType, VanillaProof};
use filecoin_proofs::partition_vanilla_proofs;
use filecoin_proofs_api::post::{
    generate_fallback_sector_challenges, generate_single_vanilla_proof,
    generate_winning_post_sector_challenge,
};
use filecoin_proofs_api::seal::{add_piece, seal_pre_commit_phase1, seal_pre_commit_phase2};
use filecoin_proofs_api::{
    PaddedBytesAmount, PrivateReplicaInfo, RegisteredPoStProof, RegisteredSealProof, SectorId,
    UnpaddedBytesAmount,
};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use serde_json::json;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_post::fallback::{self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};

use crate::recorder::{synthesize_both, Counts, Recorder};
use crate::util::{fr_hex, update_counts_file, write_scalars};

type Tree2K = SectorShape2KiB;

/// The sectors sealed for the PoSt vectors (the same at every size): ids and piece RNG seeds.
const SECTORS: [(u64, u64); 3] = [(5001, 0x6332_706f_7374_0001), (5002, 0x6332_706f_7374_0002), (5003, 0x6332_706f_7374_0003)];

/// The PoSt randomness of every vector (2 KiB and 8 MiB).
pub fn randomness() -> [u8; 32] {
    crate::porep::fixed(0x44)
}

struct Sealed {
    id: u64,
    comm_r: [u8; 32],
    cache: std::path::PathBuf,
    sealed: std::path::PathBuf,
}

/// Seals one sector of the registered seal proof (add_piece, PC1, PC2) under `work`.
fn seal(proof: RegisteredSealProof, work: &Path, id: u64, piece_seed: u64) -> Result<Sealed> {
    let dir = work.join(format!("sector-{}", id));
    let cache = dir.join("cache");
    fs::create_dir_all(&cache)?;
    let staged = dir.join("staged");
    let sealed = dir.join("sealed");
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(proof.sector_size())));
    let mut data = vec![0u8; u64::from(unpadded) as usize];
    ChaCha20Rng::seed_from_u64(piece_seed).fill_bytes(&mut data);
    let piece = {
        let mut f = fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&staged)?;
        let (info, written) = add_piece(proof, Cursor::new(&data), &mut f, unpadded, &[])?;
        ensure!(written == unpadded, "add_piece wrote {:?}", written);
        f.flush()?;
        info
    };
    fs::File::create(&sealed)?;
    let pc1 = seal_pre_commit_phase1(
        proof, &cache, &staged, &sealed, crate::porep::prover_id(), SectorId::from(id), crate::porep::ticket(), &[piece],
    )
    .context("seal_pre_commit_phase1")?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed).context("seal_pre_commit_phase2")?;
    Ok(Sealed { id, comm_r: pc2.comm_r, cache, sealed })
}

/// One PoSt vector: a registered proof and the sectors it proves.
pub struct Case {
    pub dir: &'static str,
    pub proof: RegisteredPoStProof,
}

/// The 2 KiB cases (`out/post-2k`).
pub fn cases() -> Vec<Case> {
    vec![
        Case { dir: "window-2k-v1_2", proof: RegisteredPoStProof::StackedDrgWindow2KiBV1_2 },
        Case { dir: "window-2k-v1", proof: RegisteredPoStProof::StackedDrgWindow2KiBV1 },
        Case { dir: "winning-2k-v1", proof: RegisteredPoStProof::StackedDrgWinning2KiBV1 },
    ]
}

/// The 8 MiB cases (`out/post-8m`).
pub fn cases_8m() -> Vec<Case> {
    vec![
        Case { dir: "window-8m-v1_2", proof: RegisteredPoStProof::StackedDrgWindow8MiBV1_2 },
        Case { dir: "window-8m-v1", proof: RegisteredPoStProof::StackedDrgWindow8MiBV1 },
        Case { dir: "winning-8m-v1", proof: RegisteredPoStProof::StackedDrgWinning8MiBV1 },
    ]
}

/// One sector size's vector directory: its name under out/, the seal
/// proof its sectors are sealed with, and its cases.
pub struct Spec {
    pub dir: &'static str,
    pub seal: RegisteredSealProof,
    pub cases: Vec<Case>,
}

pub fn specs() -> Vec<Spec> {
    vec![
        Spec { dir: "post-2k", seal: RegisteredSealProof::StackedDrg2KiBV1_1, cases: cases() },
        Spec { dir: "post-8m", seal: RegisteredSealProof::StackedDrg8MiBV1_1, cases: cases_8m() },
    ]
}

/// Writes `out/<spec.dir>/`, with the tree shape of its sector size.
pub fn generate(spec: &Spec, out: &Path, tmp: &Path) -> Result<()> {
    match u64::from(spec.seal.sector_size()) {
        s if s == 2 << 10 => generate_shape::<SectorShape2KiB>(spec, out, tmp),
        s if s == 8 << 20 => generate_shape::<SectorShape8MiB>(spec, out, tmp),
        s => anyhow::bail!("no PoSt vectors for sector size {}", s),
    }
}

/// The vanilla-level public parameters filecoin-proofs uses for `config`.
fn vanilla_params(config: &PoStConfig) -> Result<fallback::SetupParams> {
    Ok(match config.typ {
        PoStType::Window => window_post_setup_params(config),
        PoStType::Winning => winning_post_setup_params(config)?,
    })
}

type Compound<T> = FallbackPoStCompound<T>;

fn public_params<T: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    partitions: usize,
) -> Result<compound_proof::PublicParams<'static, FallbackPoSt<'static, T>>> {
    let csp = compound_proof::SetupParams {
        vanilla_params: vanilla_params(config)?,
        partitions: Some(partitions),
        priority: false,
    };
    <Compound<T> as CompoundProof<FallbackPoSt<'static, T>, FallbackPoStCircuit<T>>>::setup(&csp)
}

type DomainOf<T> = <<T as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type Circuit2K = FallbackPoStCircuit<Tree2K>;

/// A PoSt of tree shape T set up for the SNARK step the way
/// generate_{window,winning}_post_with_vanilla set it up: compound public
/// params, the public inputs verify_{window,winning}_post build (Winning:
/// the sector repeated once per circuit sector), and the vanilla proofs
/// split into partitions by `partition_vanilla_proofs`, which
/// `FallbackPoSt::verify_all_partitions` has accepted.
pub struct Prepared<T: 'static + MerkleTreeTrait> {
    pub_params: compound_proof::PublicParams<'static, FallbackPoSt<'static, T>>,
    pub_inputs: fallback::PublicInputs<DomainOf<T>>,
    pub parts: Vec<VanillaProof<T>>,
}

impl<T: 'static + MerkleTreeTrait> Prepared<T> {
    pub fn new(
        proof: RegisteredPoStProof,
        rand: &[u8; 32],
        prover_id: &[u8; 32],
        proofs: &[FallbackPoStSectorProof<T>],
    ) -> Result<Self> {
        let config = proof.as_v1_config();
        let vp = vanilla_params(&config)?;
        let partitions = match config.typ {
            PoStType::Window => proofs.len().div_ceil(vp.sector_count),
            PoStType::Winning => 1,
        };
        let pub_params = public_params::<T>(&config, partitions)?;
        let repeat = if config.typ == PoStType::Winning { vp.sector_count } else { 1 };
        let mut sectors = Vec::new();
        for _ in 0..repeat {
            for p in proofs {
                sectors.push(fallback::PublicSector { id: p.sector_id, comm_r: p.comm_r });
            }
        }
        let pub_inputs = fallback::PublicInputs {
            randomness: DomainOf::<T>::try_from_bytes(rand)?,
            prover_id: DomainOf::<T>::try_from_bytes(prover_id)?,
            sectors,
            k: None,
        };
        let parts = partition_vanilla_proofs(&config, &pub_params.vanilla_params, &pub_inputs, partitions, proofs)?;
        ensure!(parts.len() == partitions, "{} partitions, want {}", parts.len(), partitions);
        ensure!(
            FallbackPoSt::<T>::verify_all_partitions(&pub_params.vanilla_params, &pub_inputs, &parts)?,
            "vanilla proofs do not verify"
        );
        Ok(Prepared { pub_params, pub_inputs, parts })
    }

    /// Partition k's circuit (`FallbackPoStCompound::circuit`).
    pub fn circuit(&self, k: usize) -> Result<FallbackPoStCircuit<T>> {
        <Compound<T> as CompoundProof<FallbackPoSt<'static, T>, FallbackPoStCircuit<T>>>::circuit(
            &self.pub_inputs, Default::default(), &self.parts[k], &self.pub_params.vanilla_params, Some(k),
        )
    }

    /// Partition k's public inputs, without ONE (`generate_public_inputs`).
    pub fn inputs(&self, k: usize) -> Result<Vec<blstrs::Scalar>> {
        <Compound<T> as CompoundProof<FallbackPoSt<'static, T>, FallbackPoStCircuit<T>>>::generate_public_inputs(
            &self.pub_inputs, &self.pub_params.vanilla_params, Some(k),
        )
    }
}

/// The blank circuit of a registered PoSt proof of shape T, the one
/// Groth16 parameter generation synthesizes.
fn blank_circuit<T: 'static + MerkleTreeTrait>(config: &PoStConfig) -> Result<FallbackPoStCircuit<T>> {
    let pub_params = public_params::<T>(config, 1)?;
    Ok(<Compound<T> as CompoundProof<FallbackPoSt<'static, T>, FallbackPoStCircuit<T>>>::blank_circuit(
        &pub_params.vanilla_params,
    ))
}

/// The blank circuit of a 2 KiB registered PoSt proof.
pub fn blank_circuit_2k(proof: RegisteredPoStProof) -> Result<Circuit2K> {
    let config = proof.as_v1_config();
    ensure!(u64::from(config.sector_size) == 2048, "{:?} is not a 2 KiB PoSt", proof);
    blank_circuit::<Tree2K>(&config)
}

/// The committed vector `out/post-2k/<case>` read back (`vanilla.json`,
/// and randomness and prover id from `meta.json`) and set up for proving.
pub fn load_2k(out: &Path, case: &Case) -> Result<Prepared<Tree2K>> {
    let dir = out.join("post-2k").join(case.dir);
    let meta: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("meta.json"))?)?;
    ensure!(
        meta["registered_proof"].as_str() == Some(format!("{:?}", case.proof).as_str()),
        "{}: meta.json is not a {:?} vector",
        case.dir,
        case.proof
    );
    let bytes32 = |k: &str| -> Result<[u8; 32]> {
        let s = meta[k].as_str().with_context(|| format!("meta.json: no {}", k))?;
        hex::decode(s)?.try_into().map_err(|_| anyhow::anyhow!("meta.json: {} is not 32 bytes", k))
    };
    let proofs: Vec<FallbackPoStSectorProof<Tree2K>> = serde_json::from_slice(&fs::read(dir.join("vanilla.json"))?)?;
    Prepared::new(case.proof, &bytes32("randomness")?, &bytes32("prover_id")?, &proofs)
}

/// Writes `out/<spec.dir>/<case>/` for every case of the spec.
fn generate_shape<T: 'static + MerkleTreeTrait>(spec: &Spec, out: &Path, tmp: &Path) -> Result<()> {
    let root = out.join(spec.dir);
    fs::create_dir_all(&root)?;
    let work = tmp.join(spec.dir);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work)?;
    let t0 = Instant::now();
    let sectors = SECTORS.iter().map(|&(id, seed)| seal(spec.seal, &work, id, seed)).collect::<Result<Vec<_>>>()?;
    eprintln!("{}: sealed {} sectors in {:.1}s", spec.dir, sectors.len(), t0.elapsed().as_secs_f64());
    let unpadded = u64::from(UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(spec.seal.sector_size()))));
    let mut sealed_meta = Vec::new();
    for (s, (_, seed)) in sectors.iter().zip(SECTORS.iter()) {
        sealed_meta.push(json!({
            "sector_id": s.id,
            "piece_rng": format!("ChaCha20Rng::seed_from_u64({:#x}).fill_bytes, {} unpadded bytes", seed, unpadded),
            "comm_r": hex::encode(s.comm_r),
        }));
    }
    fs::write(
        root.join("sectors.json"),
        serde_json::to_string_pretty(&json!({
            "registered_seal_proof": format!("{:?}", spec.seal),
            "prover_id": hex::encode(crate::porep::prover_id()),
            "ticket": hex::encode(crate::porep::ticket()),
            "randomness": hex::encode(randomness()),
            "sectors": sealed_meta,
        }))? + "\n",
    )?;
    for case in &spec.cases {
        let t = Instant::now();
        generate_case::<T>(case, &root.join(case.dir), &sectors).with_context(|| case.dir)?;
        eprintln!("{}/{}: {:.1}s", spec.dir, case.dir, t.elapsed().as_secs_f64());
    }
    let _ = fs::remove_dir_all(&work);
    Ok(())
}

fn generate_case<T: 'static + MerkleTreeTrait>(case: &Case, dir: &Path, sectors: &[Sealed]) -> Result<()> {
    fs::create_dir_all(dir)?;
    let config = case.proof.as_v1_config();
    let prover_id = crate::porep::prover_id();
    let rand = randomness();

    // The sectors proved: all of them (Window) or the one the API challenges (Winning).
    let chosen: Vec<&Sealed> = match config.typ {
        PoStType::Window => sectors.iter().collect(),
        PoStType::Winning => {
            let idx = generate_winning_post_sector_challenge(case.proof, &rand, sectors.len() as u64, prover_id)?;
            ensure!(idx.len() == 1, "winning challenged {} sectors", idx.len());
            vec![&sectors[idx[0] as usize]]
        }
    };
    let ids: Vec<SectorId> = chosen.iter().map(|s| SectorId::from(s.id)).collect();
    let challenges: BTreeMap<SectorId, Vec<u64>> =
        generate_fallback_sector_challenges(case.proof, &rand, &ids, prover_id)?;

    // The vanilla proofs exactly as filecoin-ffi returns them (bincode bytes).
    let mut raw = Vec::new();
    for s in &chosen {
        let info = PrivateReplicaInfo::new(case.proof, s.comm_r, s.cache.clone(), s.sealed.clone());
        let c = &challenges[&SectorId::from(s.id)];
        raw.push(generate_single_vanilla_proof(case.proof, SectorId::from(s.id), &info, c)?);
    }
    let proofs: Vec<FallbackPoStSectorProof<T>> =
        raw.iter().map(|b| bincode::deserialize(b)).collect::<std::result::Result<_, _>>()?;
    let vanilla_json = serde_json::to_vec(&proofs)?;
    fs::write(dir.join("vanilla.json"), &vanilla_json)?;
    let mut raw_names = Vec::new();
    for (s, b) in chosen.iter().zip(raw.iter()) {
        let name = format!("vanilla-{}.bin", s.id);
        fs::write(dir.join(&name), b)?;
        raw_names.push(name);
    }

    let vp = vanilla_params(&config)?;
    let prep = Prepared::<T>::new(case.proof, &rand, &prover_id, &proofs)?;
    let partitions = prep.parts.len();

    let mut part_meta = Vec::new();
    for k in 0..partitions {
        let inputs = prep.inputs(k)?;
        let name = format!("inputs-p{}.bin", k);
        write_scalars(&dir.join(&name), &inputs)?;
        let syn = synthesize_both(|| prep.circuit(k), None)?;
        ensure!(syn.inputs[1..] == inputs[..], "partition {}: circuit inputs differ from generate_public_inputs", k);
        let mut m = syn.summary();
        m.insert("public_inputs".into(), json!(inputs.iter().map(fr_hex).collect::<Vec<_>>()));
        m.insert("public_inputs_file".into(), json!(name));
        part_meta.push(serde_json::Value::Object(m));
    }

    let challenges_json: BTreeMap<String, Vec<u64>> =
        challenges.iter().map(|(id, c)| (u64::from(*id).to_string(), c.clone())).collect();
    let meta = json!({
        "registered_proof": format!("{:?}", case.proof),
        "api_version": format!("{:?}", config.api_version),
        "typ": format!("{:?}", config.typ),
        "sector_size": u64::from(config.sector_size),
        "post_config": { "sector_count": config.sector_count, "challenge_count": config.challenge_count },
        "circuit": { "sector_count": vp.sector_count, "challenge_count": vp.challenge_count },
        "circuit_identifier": case.proof.circuit_identifier()?,
        "official_params_file": case.proof.cache_params_path()?.file_name().map(|n| n.to_string_lossy().into_owned()),
        "prover_id": hex::encode(prover_id),
        "randomness": hex::encode(rand),
        "sector_ids": chosen.iter().map(|s| s.id).collect::<Vec<_>>(),
        "comm_rs": chosen.iter().map(|s| hex::encode(s.comm_r)).collect::<Vec<_>>(),
        "challenges": challenges_json,
        "vanilla_json": "vanilla.json",
        "vanilla_json_sha256": hex::encode(crate::util::sha256(&vanilla_json)),
        "vanilla_bincode": raw_names,
        "partitions": part_meta,
    });
    fs::write(dir.join("meta.json"), serde_json::to_string_pretty(&meta)? + "\n")?;
    Ok(())
}

fn count_blank<T: 'static + MerkleTreeTrait>(config: &PoStConfig) -> Result<(fallback::SetupParams, Counts)> {
    let circuit = blank_circuit::<T>(config)?;
    let mut cs = Recorder::counter();
    bellperson::Circuit::synthesize(circuit, &mut cs)?;
    Ok((vanilla_params(config)?, cs.counts()))
}

/// Writes `out/post-counts.json`: the counts of the blank circuit of every
/// registered PoSt proof whose shape is in `only` (all when empty), as the
/// Groth16 parameter generator sees it.
pub fn counts(out: &Path, only: &[String]) -> Result<()> {
    use RegisteredPoStProof::*;
    let all = [
        StackedDrgWinning2KiBV1, StackedDrgWinning8MiBV1, StackedDrgWinning512MiBV1, StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1, StackedDrgWindow2KiBV1, StackedDrgWindow8MiBV1, StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1, StackedDrgWindow64GiBV1, StackedDrgWindow2KiBV1_2, StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2, StackedDrgWindow32GiBV1_2, StackedDrgWindow64GiBV1_2,
    ];
    update_counts_file(&out.join("post-counts.json"), &all, only, |proof| {
        let config = proof.as_v1_config();
        let (vp, counts) = match u64::from(config.sector_size) {
            s if s == 2 << 10 => count_blank::<SectorShape2KiB>(&config)?,
            s if s == 8 << 20 => count_blank::<SectorShape8MiB>(&config)?,
            s if s == 512 << 20 => count_blank::<SectorShape512MiB>(&config)?,
            s if s == 32 << 30 => count_blank::<SectorShape32GiB>(&config)?,
            s if s == 64 << 30 => count_blank::<SectorShape64GiB>(&config)?,
            s => anyhow::bail!("sector size {}", s),
        };
        let entry = json!({
            "sector_size": u64::from(config.sector_size),
            "api_version": format!("{:?}", config.api_version),
            "circuit": { "sector_count": vp.sector_count, "challenge_count": vp.challenge_count },
            "circuit_identifier": proof.circuit_identifier()?,
            "official_params_file": proof.cache_params_path()?.file_name().map(|n| n.to_string_lossy().into_owned()),
            "counts": counts,
            "domain_size": counts.constraints.next_power_of_two(),
        });
        Ok((counts, entry))
    })
}
