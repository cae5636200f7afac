//! refgen: reference vectors for the c2 Go port, made with the published
//! Filecoin Rust crates. See README.md for every file it writes.
//!
//! Usage:
//!   refgen gen [--out DIR] [--only groth16-interop|porep-2k|porep-8m|post-2k|post-8m|update-2k|update-8m] [--r1cs-dir DIR]
//!   refgen verify (--vk FILE | --params FILE) --proof FILE --inputs FILE
//!   refgen porep-params [--out DIR] [--c1 FILE]  (needs REFGEN_CACHE; ~1 GiB, not committed)
//!   refgen update-params [--out DIR]  (needs REFGEN_CACHE; 2 KiB SnapDeals parameters and proof, not committed)
//!   refgen post-params [--out DIR]  (needs REFGEN_CACHE; 2 KiB Window and Winning PoSt parameters and proofs, not committed)
//!   refgen verify-c1 --c1 FILE          (rust-fil-proofs' vanilla verification of a C1 output)
//!   refgen seal-c2 --c1 FILE --prover-id HEX [--sector-id N] [--proof FILE] [--out DIR]  (needs REFGEN_CACHE; 2 KiB seal_commit_phase2 + verify_seal)
//!   refgen post-counts [--out DIR] [--only NAME[,NAME…]]  (blank PoSt circuit counts per registered proof)
//!   refgen update-counts [--out DIR] [--only NAME[,NAME…]]  (blank SnapDeals circuit counts per registered update proof)

mod interop;
mod ondemand;
mod porep;
mod porep_params;
mod post;
mod post_params;
mod recorder;
mod seal_c2;
mod update;
mod update_params;
mod util;
mod verify;
mod verify_c1;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

/// Points every filecoin-proofs cache at a private temporary directory, so
/// nothing is read from or written to /var/tmp and no parameters are looked up.
fn private_caches() -> Result<PathBuf> {
    let tmp = std::env::temp_dir().join(format!("refgen-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    for (k, sub) in [
        ("FIL_PROOFS_PARENT_CACHE", "parents"),
        ("FIL_PROOFS_PARAMETER_CACHE", "params"),
        ("FIL_PROOFS_CACHE_DIR", "cache/"),
    ] {
        let p = tmp.join(sub);
        std::fs::create_dir_all(&p)?;
        let mut s = p.to_string_lossy().into_owned();
        if sub.ends_with('/') && !s.ends_with('/') {
            s.push('/');
        }
        std::env::set_var(k, s);
    }
    std::env::set_var("FIL_PROOFS_USE_MULTICORE_SDR", "false");
    std::env::set_var("FIL_PROOFS_VERIFY_CACHE", "false");
    Ok(tmp)
}

/// Runs `f` with the filecoin-proofs caches pointed at a fresh private
/// directory (see `private_caches`), which it removes afterwards whether `f`
/// succeeds or fails.
fn with_private_caches<T>(f: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    let tmp = private_caches()?;
    let r = f(&tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

pub(crate) fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// The directory `--out` names, `out` when the flag is absent.
pub(crate) fn out_dir(args: &[String]) -> PathBuf {
    PathBuf::from(flag(args, "--out").unwrap_or_else(|| "out".into()))
}

/// The comma-separated names `--only` lists; empty when the flag is absent.
fn only_names(args: &[String]) -> Vec<String> {
    flag(args, "--only").map(|o| o.split(',').map(str::to_owned).collect()).unwrap_or_default()
}

fn gen(args: &[String], tmp: &Path) -> Result<()> {
    let out = out_dir(args);
    let only = flag(args, "--only");
    let r1cs_dir = flag(args, "--r1cs-dir").map(PathBuf::from);
    let want = |n: &str| only.as_deref().map_or(true, |o| o == n);
    if want("groth16-interop") {
        let t = std::time::Instant::now();
        interop::generate(&out.join("groth16-interop")).context("groth16-interop")?;
        eprintln!("groth16-interop: {:.1}s", t.elapsed().as_secs_f64());
    }
    for spec in porep::specs() {
        if want(spec.dir) {
            porep::generate(&spec, &out, tmp, r1cs_dir.as_deref()).with_context(|| spec.dir)?;
        }
    }
    for spec in post::specs() {
        if want(spec.dir) {
            post::generate(&spec, &out, tmp).with_context(|| spec.dir)?;
        }
    }
    for spec in update::specs() {
        if want(spec.dir) {
            update::generate(&spec, &out, tmp).with_context(|| spec.dir)?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("", &args[..]),
    };
    let res = match cmd {
        "gen" => with_private_caches(|tmp| gen(rest, tmp)),
        "post-counts" => with_private_caches(|_| post::counts(&out_dir(rest), &only_names(rest))),
        "update-counts" => with_private_caches(|_| update::counts(&out_dir(rest), &only_names(rest))),
        "update-params" => with_private_caches(|_| update_params::run(rest)),
        "post-params" => with_private_caches(|_| post_params::run(rest)),
        "porep-params" => with_private_caches(|_| porep_params::run(rest)),
        "verify" => match verify::run(rest) {
            Ok(verify::Outcome::Valid) => {
                println!("valid");
                return ExitCode::from(0);
            }
            Ok(verify::Outcome::Invalid(why)) => {
                println!("invalid: {}", why);
                return ExitCode::from(1);
            }
            Err(e) => Err(e),
        },
        "verify-c1" | "seal-c2" => match with_private_caches(|_| {
            if cmd == "seal-c2" { seal_c2::run(rest) } else { verify_c1::run(rest) }
        }) {
            Ok(true) => {
                println!("valid");
                return ExitCode::from(0);
            }
            Ok(false) => {
                println!("invalid");
                return ExitCode::from(1);
            }
            Err(e) => Err(e),
        },
        _ => Err(anyhow::anyhow!("usage: refgen gen|verify|verify-c1|seal-c2|porep-params|post-params|post-counts|update-counts|update-params (see src/main.rs)")),
    };
    match res {
        Ok(()) => ExitCode::from(0),
        Err(e) => {
            eprintln!("refgen: {:#}", e);
            ExitCode::from(2)
        }
    }
}

