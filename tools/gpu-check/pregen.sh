#!/bin/sh
# pregen.sh BUILD OUTDIR — collects what the front end generates for
# libbext (the stdlib kernels' embedded IR, BUILD/runtime/gen/kir/*.kir.c,
# written by `bextc --emit=kir-c`) into OUTDIR/kir, so the GPU check can
# build libbext on a machine without re2c, lemon or LLVM
# (BEXT_GPU_CHECK=ON -DBEXT_PREGEN_DIR=OUTDIR; docs/gpu-check.md).
set -eu
build=${1:?usage: pregen.sh BUILD OUTDIR}
out=${2:?usage: pregen.sh BUILD OUTDIR}
set -- "$build"/runtime/gen/kir/*.kir.c
[ -e "$1" ] || { echo "pregen.sh: no $build/runtime/gen/kir/*.kir.c (build $build first: make)" >&2; exit 1; }
rm -rf "$out/kir"
mkdir -p "$out/kir"
cp "$@" "$out/kir/"
echo "pregen.sh: $# stdlib kernel files in $out/kir"
