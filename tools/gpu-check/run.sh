#!/bin/sh
# run.sh PREGEN OUTDIR [DEVICES] — the prepared check for a lent GPU
# machine (a bare CUDA image: no LLVM, OpenBLAS, Criterion, re2c or lemon;
# CMake and ninja present).  Builds the BEXT_GPU_CHECK tree (libbext with
# ndarray + cube and the driver) from the carried PREGEN directory, runs
# the conformance matrix on DEVICES (default: ndarray,cube:cuda:0) against
# ndarray, runs bext-gpu-bench (16M f32 add vs a device-to-device copy,
# 4096^2 matmul vs cuBLAS on cube:cuda:0; "skipped" without a CUDA
# device), and writes OUTDIR/gpu-check.log and OUTDIR/report.json.
# Meant to finish in under 5 minutes; each step has its own time limit.
# The build tree is $BEXT_GPU_BUILD (default: build-gpu in the checkout).
# The suite runs this script with DEVICES=ndarray (tests/gpu_check), so
# the check cannot rot between the sessions that have a GPU.
set -u
pregen=$(cd "${1:?usage: run.sh PREGEN OUTDIR [DEVICES]}" && pwd)
out=${2:?usage: run.sh PREGEN OUTDIR [DEVICES]}
devices=${3:-ndarray,cube:cuda:0}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
tree=${BEXT_GPU_BUILD:-$PWD/build-gpu}
log="$out/gpu-check.log"
: >"$log"
t0=$(date +%s)
status=ok
step() {   # step NAME SECONDS CMD...: runs CMD with a limit, logs it
  name=$1 limit=$2
  shift 2
  echo "== $name" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    why=""
    [ "$rc" -eq 124 ] && why=": over its ${limit} s limit"
    echo "== $name FAILED (exit $rc$why)" >>"$log"
    if [ "$status" = ok ]; then status="failed at $name"; else status="$status, $name"; fi
    return 1
  fi
}
{ nvidia-smi -L || echo "nvidia-smi: not found"; } >>"$log" 2>&1
rm -f "$out/bench.json"
if step configure 60 cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBEXT_GPU_CHECK=ON -DBEXT_PREGEN_DIR="$pregen" &&
  step build 150 cmake --build "$tree" -j "$(nproc)"; then
  # the bench runs whatever the matrix found: its figures are wanted
  # even when some cells fail
  step conformance 300 env BEXT_CONFORMANCE_DEVICES="$devices" BEXT_CACHE_DIR="$tree/kernel-cache" \
    "$tree/bin/bext-gpu-check" --filter 'conformance/every_backend_of_the_build'
  step bench 120 env BEXT_CACHE_DIR="$tree/kernel-cache" "$tree/bin/bext-gpu-bench" "$out/bench.json"
fi
t1=$(date +%s)
# The report: the status and, per device, the matrix's own summary lines.
{
  printf '{\n  "status": "%s",\n  "devices": "%s",\n  "seconds": %d,\n  "matrix": [' "$status" "$devices" $((t1 - t0))
  sep=""
  grep -E '^[^ ].* vs .*: [0-9]+ failing cells|cells UNSUPPORTED' "$log" | sed 's/"/\\"/g' | while IFS= read -r line; do
    printf '%s\n    "%s"' "$sep" "$line"
    sep=","
  done
  printf '\n  ],\n  "bench": '
  if [ -s "$out/bench.json" ]; then sed 's/^/  /; 1s/^  //' "$out/bench.json"; else printf '"not run"\n'; fi
  printf '}\n'
} >"$out/report.json"
cat "$out/report.json"
[ "$status" = ok ]
