#!/usr/bin/env bash
# Builds sppark-bench, the sppark benchmark driver (driver.cu, msm.cu,
# blst_host.cpp), against the sources in third_party/ (git-ignored; see
# scripts/gpu-sppark prepare), and blst's libblst.a with blst's own build.sh.
#
#   scripts/sppark/build.sh [OUTDIR]      (default .gpu/sppark)
#
# Environment: C2_CUDA_ARCHS (nvcc architectures, default 90), NVCC (default
# nvcc), SPPARK_SRC / BLST_SRC (default third_party/sppark, third_party/blst).
# Needs nvcc (11.4 or later: sppark's floor) and the host's cc/g++. Prints the
# binary's path on success. Also builds sppark-hostcheck: the data layouts that
# sppark-bench relies on, checked on the host against blst (runs without a GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sp=${SPPARK_SRC:-$root/third_party/sppark}
bl=${BLST_SRC:-$root/third_party/blst}
out=${1:-$root/.gpu/sppark}
nvcc=${NVCC:-nvcc}
for f in "$sp/msm/pippenger.cuh" "$sp/util/all_gpus.cpp" "$bl/build.sh" "$bl/bindings/blst.h"; do
	test -e "$f" || { echo "missing $f: run 'scripts/gpu-sppark prepare' first" >&2; exit 2; }
done
mkdir -p "$out/obj" "$out/blst"
out=$(cd "$out" && pwd)

# blst (a few seconds): its build.sh writes libblst.a into the current
# directory. It defines __ADX__ when this CPU has ADX; code including blst's
# headers must agree (the assembly's symbol names differ), so it is always
# built here, never carried.
(cd "$out/blst" && sh "$bl/build.sh" >build.log 2>&1) || { cat "$out/blst/build.log" >&2; exit 1; }
adx=
if grep -q -e '^flags.*\badx\b' /proc/cpuinfo 2>/dev/null; then adx=-D__ADX__; fi

gencode=
for a in ${C2_CUDA_ARCHS:-90}; do gencode+=" -gencode arch=compute_$a,code=sm_$a"; done
commit() { cat "$1/COMMIT" 2>/dev/null || echo unknown; }
flags=(-std=c++17 -O3 -DFEATURE_BLS12_381 -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE $adx
	-I"$sp" -I"$bl/src" -I"$here" -Xcompiler -Wno-unused-function)

pids=()
$nvcc "${flags[@]}" $gencode -DSPPARK_COMMIT="\"$(commit "$sp")\"" -DBLST_COMMIT="\"$(commit "$bl")\"" \
	-c "$here/driver.cu" -o "$out/obj/driver.o" &
pids+=($!)
$nvcc "${flags[@]}" $gencode -c "$here/msm.cu" -o "$out/obj/msm.o" &
pids+=($!)
$nvcc "${flags[@]}" -c "$sp/util/all_gpus.cpp" -o "$out/obj/all_gpus.o" &
pids+=($!)
${CXX:-g++} -std=c++17 -O2 $adx -I"$bl/bindings" -I"$here" -c "$here/blst_host.cpp" -o "$out/obj/blst_host.o" &
pids+=($!)
# sppark-hostcheck: the data layouts checked on the host (no GPU needed).
${CXX:-g++} -std=c++17 -O2 $adx -DFEATURE_BLS12_381 -I"$sp" -I"$bl/src" -I"$here" \
	-c "$here/hostcheck.cpp" -o "$out/obj/hostcheck.o" &
pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[[ $status == 0 ]] || { echo "sppark-bench: compile failed" >&2; exit 1; }
$nvcc $gencode -o "$out/sppark-bench" "$out"/obj/{driver,msm,all_gpus,blst_host}.o \
	"$out/blst/libblst.a" -Xcompiler -pthread
${CXX:-g++} -o "$out/sppark-hostcheck" "$out"/obj/{hostcheck,blst_host}.o "$out/blst/libblst.a" -pthread
echo "$out/sppark-bench"
