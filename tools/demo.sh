#!/bin/sh
# demo.sh BUILD — what `make demo` shows: bextc checking the samples, a
# diagnostic for a broken file, metadata evaluated in the REPL, a small
# program on the runtime, the extension samples (one run on a bext
# server; the #[cube] one on cube:vulkan:0 too), a fused chain on
# flex+fusion with its plan dumped, core ops on cube:cpu, and a small MLP
# trained on flex+autodiff.  Stops at the first unexpected failure.
set -eu
B=${1:-build}
bin=$B/bin
here=$(cd "$(dirname "$0")/.." && pwd)
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "bextc --check samples/ext/ext.bext"
"$bin/bextc" --check "$here/samples/ext/ext.bext"
echo "ok: no errors"

step "bextc --check samples/ext/bad_selector.bext (a deliberate error)"
if "$bin/bextc" --check "$here/samples/ext/bad_selector.bext"; then
  echo "demo: expected bextc to reject bad_selector.bext" >&2; exit 1
fi

step "bext-repl --echo samples/ext/ext.bext < samples/ext/session.repl"
"$bin/bext-repl" --echo "$here/samples/ext/ext.bext" < "$here/samples/ext/session.repl"

for s in "$bin"/tensor_basics; do
  [ -x "$s" ] || continue
  step "samples/$(basename "$s")"
  "$s"
done

# Extensions compiled by bextc through bext_add_extension (samples/*/),
# each run on Flex and NdArray.
for s in transpose counted activations pointwise gated gated_full; do
  [ -x "$bin/$s" ] || { echo "demo: $bin/$s was not built" >&2; exit 1; }
  step "samples/$s"
  "$bin/$s"
done
# A #[cube] kernel behind an extension method (the generated launcher),
# on cube:cpu and flex, from the ahead-of-time object bextc wrote, and
# unchanged on cube:vulkan:0 as SPIR-V (lavapipe here) when it exists;
# otherwise the sample says in one line why not.
[ -x "$bin/gelu_cube" ] || { echo "demo: $bin/gelu_cube was not built" >&2; exit 1; }
step "samples/gelu_cube (a #[cube] GELU kernel on cube:cpu, flex and cube:vulkan:0)"
"$bin/gelu_cube"
# The LibTorch extension (ATen called from a _libtorch implementation),
# where the build has the LibTorch backend.
if [ -x "$bin/torch_ext" ]; then
  step "samples/torch_ext (ATen on bext tensors, bext/torch.h)"
  "$bin/torch_ext"
fi

# Extension ops on a remote: device: remote_ext starts itself as a server
# (bxsv_main, linked with the extension) hosting flex, then flex+fusion,
# and calls the ops there by id; where the build has the Remote backend.
if [ -x "$bin/remote_ext" ]; then
  step "samples/remote_ext (extension ops run on a bext server by id)"
  "$bin/remote_ext"
fi

# Deferred execution and fusion: the GELU chain recorded on flex+fusion,
# run as one fused kernel at the read, its plan replayed on the second
# iteration; BEXT_FUSION_DUMP writes the plan (DOT) and the kernel IR.
[ -x "$bin/fusion" ] || { echo "demo: $bin/fusion was not built" >&2; exit 1; }
step "samples/fusion (a fused chain on flex+fusion, plan dumped to $B/fusion_dump)"
rm -rf "$B/fusion_dump"
BEXT_FUSION_DUMP="$B/fusion_dump" "$bin/fusion"
ls "$B/fusion_dump"
echo "-- the fused kernel's IR (first lines):"
head -n 12 "$B"/fusion_dump/*_kernel_0.kir

# cube:cpu: core ops written as .bext kernels (stdlib/cube), embedded in
# libbext as kernel IR and compiled by the CPU JIT on first use.
[ -x "$bin/cube" ] || { echo "demo: $bin/cube was not built" >&2; exit 1; }
step "samples/cube (core ops as stdlib .bext kernels on cube:cpu)"
"$bin/cube"

# Training on +autodiff: a two-layer MLP learns a smooth surface by plain
# SGD (samples/mlp); it exits 1 unless the final loss is below its bound.
[ -x "$bin/mlp" ] || { echo "demo: $bin/mlp was not built" >&2; exit 1; }
step "samples/mlp (training on flex+autodiff)"
"$bin/mlp"
