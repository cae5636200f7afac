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
if [ "$fail" = 0 ]; then echo "verify-go-proofs: bellperson accepts all Go proofs and rejects all tampered cases"; fi
exit $fail
