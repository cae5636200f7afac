#!/usr/bin/env bash
# Asks bellperson (refgen verify) to judge Groth16 proofs made by the Go prover
# for the groth16-interop circuit with bellperson's own parameters.
# Exit 0 when every Go proof is accepted and every tampered case rejected.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
(cd "$here" && cargo build --release --locked)
refgen="$CARGO_TARGET_DIR/release/refgen"
vec="$here/out/groth16-interop"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && REFGEN_GO_PROOFS="$dir" go test -count=1 -run '^TestRefgenGoProofs$' ./groth16)

fail=0
expect() { # expect CODE ARGS...
  local want=$1; shift
  set +e; out="$("$refgen" verify "$@" 2>&1)"; rc=$?; set -e
  if [ "$rc" = "$want" ]; then echo "ok   (exit $rc) $out"; else echo "FAIL (exit $rc, want $want) $out: $*"; fail=1; fi
}
for n in 0 1 2; do
  m=$(( (n + 1) % 3 ))
  expect 0 --vk "$vec/interop.vk" --proof "$dir/go-proof-$n.bin" --inputs "$vec/inputs-$n.bin"
  expect 0 --params "$vec/interop.params" --proof "$dir/go-proof-$n.bin" --inputs "$vec/inputs-$n.bin"
  expect 1 --vk "$vec/interop.vk" --proof "$dir/go-proof-$n.bin" --inputs "$vec/inputs-$m.bin"
  expect 1 --vk "$vec/interop.vk" --proof "$dir/go-proof-bad-$n.bin" --inputs "$vec/inputs-$n.bin"
done
# All three Go proofs at once, as a multi-partition proof file.
cat "$dir"/go-proof-{0,1,2}.bin > "$dir/all.bin"
cat "$vec"/inputs-{0,1,2}.bin > "$dir/all-inputs.bin"
expect 0 --vk "$vec/interop.vk" --proof "$dir/all.bin" --inputs "$dir/all-inputs.bin"

# PoRep 2 KiB, only when `refgen porep-params` has filled $REFGEN_CACHE (~1 GiB, ~40 min on 2 cores):
# Go proves partition 0 of the committed C1 with bellperson's parameters; bellperson judges it.
if [ -n "${REFGEN_CACHE:-}" ] && [ -f "$REFGEN_CACHE/porep-2k.params" ]; then
  (cd "$root" && REFGEN_CACHE="$REFGEN_CACHE" go test -count=1 -timeout 60m -run '^TestC1ProveWithBellpersonParams$' ./porep)
  expect 0 --vk "$REFGEN_CACHE/porep-2k.vk" --proof "$REFGEN_CACHE/go-porep-2k-c1.proof" --inputs "$REFGEN_CACHE/porep-2k-inputs-p0.bin"
  python3 - "$REFGEN_CACHE/porep-2k-inputs-p0.bin" "$dir/bad-inputs.bin" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[3 * 32] ^= 1; open(sys.argv[2], 'wb').write(d)
PY
  expect 1 --vk "$REFGEN_CACHE/porep-2k.vk" --proof "$REFGEN_CACHE/go-porep-2k-c1.proof" --inputs "$dir/bad-inputs.bin"
  # A synthetic C1 from c1gen: filecoin-proofs' seal_commit_phase2 proves it and verify_seal accepts the
  # proof; c2 proves it with the same parameters and verify_seal accepts that proof (`refgen seal-c2`).
  (cd "$root" && REFGEN_CACHE="$REFGEN_CACHE" REFGEN_BIN="$refgen" go test -count=1 -timeout 60m -run '^TestRefgenSealC2$' ./porep/c1gen) \
    && echo "ok   TestRefgenSealC2" || { echo "FAIL TestRefgenSealC2"; fail=1; }
else
  echo "skip PoRep 2 KiB: set REFGEN_CACHE after running 'refgen porep-params'"
fi
# PoSt 2 KiB, only when `refgen post-params` has filled $REFGEN_CACHE (~50 MB, a few minutes):
# Go proves every partition of the Window V1_2, Window V1 and Winning vectors with bellperson's
# parameters; bellperson judges each proof file, and must reject it with one challenge changed.
if [ -n "${REFGEN_CACHE:-}" ] && [ -f "$REFGEN_CACHE/post-window-2k.params" ] && [ -f "$REFGEN_CACHE/post-winning-2k.params" ]; then
  (cd "$root" && REFGEN_CACHE="$REFGEN_CACHE" go test -count=1 -timeout 30m -run '^TestPoStProveWithBellpersonParams$' ./post)
  for v in window-2k-v1_2 window-2k-v1 winning-2k-v1; do
    kind=${v%%-*}
    expect 0 --vk "$REFGEN_CACHE/post-$kind-2k.vk" --proof "$REFGEN_CACHE/go-post-$v.proof" --inputs "$REFGEN_CACHE/post-$v-inputs.bin"
    expect 0 --params "$REFGEN_CACHE/post-$kind-2k.params" --proof "$REFGEN_CACHE/go-post-$v.proof" --inputs "$REFGEN_CACHE/post-$v-inputs.bin"
    python3 - "$REFGEN_CACHE/post-$v-inputs.bin" "$dir/bad-post-inputs.bin" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[32] ^= 1; open(sys.argv[2], 'wb').write(d)
PY
    expect 1 --vk "$REFGEN_CACHE/post-$kind-2k.vk" --proof "$REFGEN_CACHE/go-post-$v.proof" --inputs "$dir/bad-post-inputs.bin"
  done
else
  echo "skip PoSt 2 KiB: set REFGEN_CACHE after running 'refgen post-params'"
fi
if [ "$fail" = 0 ]; then echo "verify-go-proofs: bellperson accepts all Go proofs and rejects all tampered cases"; fi
exit $fail
