#!/usr/bin/env bash
# Builds refgen from Cargo.lock (offline after the first fetch) and regenerates
# the committed vectors under out/. Usage: testdata/refgen/gen.sh [refgen gen flags]
# Needs: cargo/rustc >= 1.80 and a C compiler (blst). See README.md.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
cargo build --release --locked
./target/release/refgen gen --out out "$@"
