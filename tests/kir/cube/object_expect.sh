#!/bin/sh
# object_expect.sh BEXTC DIR — `bextc FILE -o OUT` writes OUT/<stem>.kernels.o
# exactly when FILE has kernels: for DIR/gelu.bext it must define
# gelu_kernel_f32 and gelu_kernel_f64 (and link into a shared object);
# for a file without kernels there must be no such file.  Kernels with
# sync_cube are left out with the warning W0801.
set -u
bextc=$1
dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bextc" "$dir/gelu.bext" -o "$out" || { echo "bextc -o failed"; exit 1; }
syms=$(nm -g --defined-only "$out/gelu.kernels.o" | awk '{print $3}' | sort | tr '\n' ' ')
if [ "$syms" != "gelu_kernel_f32 gelu_kernel_f64 " ]; then
  echo "gelu.kernels.o defines: $syms"
  exit 1
fi
cc -shared -o "$out/gelu.so" "$out/gelu.kernels.o" -lm || { echo "the object does not link"; exit 1; }
printf 'fn plain(n: usize) -> usize {\n    n + 1\n}\n' > "$out/plain.bext"
"$bextc" "$out/plain.bext" -o "$out" || { echo "bextc -o failed on a file without kernels"; exit 1; }
if [ -e "$out/plain.kernels.o" ]; then
  echo "a file without kernels got plain.kernels.o"
  exit 1
fi
# a kernel with sync_cube is left out, with W0801 (the CPU lowering cannot
# run barriers yet); with nothing left there is no object
"$bextc" "$dir/reduce.bext" -o "$out" 2> "$out/err" || { echo "bextc -o failed on reduce.bext"; cat "$out/err"; exit 1; }
grep -q "warning\[W0801\]: kernel \`cube_sum_64_6\` uses sync_cube" "$out/err" || { echo "no W0801:"; cat "$out/err"; exit 1; }
if [ -e "$out/reduce.kernels.o" ]; then
  echo "reduce.kernels.o written with no kernel to hold"
  exit 1
fi
echo ok
