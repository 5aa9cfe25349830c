#!/bin/sh
# demo.sh BUILD — what `make demo` shows: bextc checking the samples, a
# diagnostic for a broken file, metadata evaluated in the REPL, a small
# program on the runtime, the extension samples, and a small MLP trained on
# flex+autodiff.  Stops at the first unexpected failure.
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

# Training on +autodiff: a two-layer MLP learns a smooth surface by plain
# SGD (samples/mlp); it exits 1 unless the final loss is below its bound.
[ -x "$bin/mlp" ] || { echo "demo: $bin/mlp was not built" >&2; exit 1; }
step "samples/mlp (training on flex+autodiff)"
"$bin/mlp"
