//! `refgen verify-c1 --c1 FILE`: rust-fil-proofs' own check of a C1 output's
//! vanilla proofs, the one seal_commit_phase1 runs before it returns
//! (StackedDrg::verify_all_partitions), with the public inputs C2 derives:
//! the C1's replica id, comm_d, comm_r and seed, the challenges and graph of
//! its registered proof. Any sector size.

use std::convert::TryInto;
use std::fs;

use anyhow::{bail, Context, Result};
use filecoin_proofs::constants::{
    DefaultPieceHasher, DefaultTreeHasher, SectorShape2KiB, SectorShape32GiB, SectorShape64GiB,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::VanillaSealProof as RawVanillaSealProof;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::StackedDrg;

use crate::porep::c1_public_inputs;

/// Reads the C1 output named by --c1 (plain JSON, as filecoin-ffi writes it)
/// and reports whether its vanilla proofs verify.
pub fn run(args: &[String]) -> Result<bool> {
    let path = crate::flag(args, "--c1").context("usage: refgen verify-c1 --c1 FILE")?;
    let raw = fs::read(&path).with_context(|| format!("reading {}", path))?;
    let c1: SealCommitPhase1Output = serde_json::from_slice(&raw).context("decoding the C1 output")?;
    let size = u64::from(c1.registered_proof.sector_size());
    let t = std::time::Instant::now();
    let ok = match size {
        2048 | 8_388_608 | 536_870_912 => verify::<SectorShape2KiB>(&c1),
        34_359_738_368 => verify::<SectorShape32GiB>(&c1),
        68_719_476_736 => verify::<SectorShape64GiB>(&c1),
        _ => bail!("{:?}: unsupported sector size {}", c1.registered_proof, size),
    }?;
    eprintln!("{:?}: verify_all_partitions = {} in {:.1}s", c1.registered_proof, ok, t.elapsed().as_secs_f64());
    Ok(ok)
}

fn verify<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(c1: &SealCommitPhase1Output) -> Result<bool> {
    let porep_config = c1.registered_proof.as_v1_config();
    let pub_params = <StackedDrg<'_, Tree, DefaultPieceHasher> as ProofScheme<'_>>::setup(&setup_params(&porep_config)?)?;
    let pub_in = c1_public_inputs(c1)?;
    let vanilla: Vec<Vec<RawVanillaSealProof<Tree>>> = c1.vanilla_proofs.clone().try_into()?;
    StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(&pub_params, &pub_in, &vanilla)
}
