#!/bin/sh
# object_expect.sh BEXTC DIR — `bextc FILE -o OUT` writes OUT/<stem>.kernels.o
# exactly when FILE has kernels: for DIR/gelu.bext it must define
# gelu_kernel_f32 and gelu_kernel_f64, each an ifunc over an x86-64-v2 and
# an x86-64-v3 clone (and link into a shared object);
# for a file without kernels there must be no such file.  A kernel with a
# top-level sync_cube is compiled (the CPU lowering runs it in phases); one
# with sync_cube inside a loop is left out with the warning W0801.
set -u
bextc=$1
dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bextc" "$dir/gelu.bext" -o "$out" || { echo "bextc -o failed"; exit 1; }
# for any x86-64: each kernel an ifunc (nm type i) over its two clones
syms=$(nm -g --defined-only "$out/gelu.kernels.o" | awk '{print $2 ":" $3}' | sort | tr '\n' ' ')
want="T:gelu_kernel_f32.x86_64_v2 T:gelu_kernel_f32.x86_64_v3 T:gelu_kernel_f64.x86_64_v2 T:gelu_kernel_f64.x86_64_v3 i:gelu_kernel_f32 i:gelu_kernel_f64 "
if [ "$syms" != "$want" ]; then
  echo "gelu.kernels.o defines: $syms"
  echo "expected:               $want"
  exit 1
fi
cc -shared -Wl,--no-undefined -o "$out/gelu.so" "$out/gelu.kernels.o" -lmvec -lm || { echo "the object does not link"; exit 1; }
printf 'fn plain(n: usize) -> usize {\n    n + 1\n}\n' > "$out/plain.bext"
"$bextc" "$out/plain.bext" -o "$out" || { echo "bextc -o failed on a file without kernels"; exit 1; }
if [ -e "$out/plain.kernels.o" ]; then
  echo "a file without kernels got plain.kernels.o"
  exit 1
fi
# --kernels-object: the same file gets an object that defines nothing and
# links (build systems list it before bextc has read the imports)
"$bextc" "$out/plain.bext" -o "$out" --kernels-object || { echo "bextc --kernels-object failed"; exit 1; }
[ -e "$out/plain.kernels.o" ] || { echo "--kernels-object wrote no plain.kernels.o"; exit 1; }
n=$(nm -g --defined-only "$out/plain.kernels.o" | wc -l)
[ "$n" -eq 0 ] || { echo "plain.kernels.o defines $n symbols"; exit 1; }
cc -shared -Wl,--no-undefined -o "$out/plain.so" "$out/plain.kernels.o" || { echo "the empty object does not link"; exit 1; }
# a kernel with sync_cube inside a loop is left out, with W0801 giving the
# lowering's reason; with nothing left the object is empty
"$bextc" "$dir/reduce.bext" -o "$out" 2> "$out/err" || { echo "bextc -o failed on reduce.bext"; cat "$out/err"; exit 1; }
grep -q "warning\[W0801\]: kernel \`cube_sum_64_6\` is left out of reduce.kernels.o: sync_cube inside if/for/loop" "$out/err" || { echo "no W0801:"; cat "$out/err"; exit 1; }
# the file still exists (build systems list it as an output), holding no kernel
[ -e "$out/reduce.kernels.o" ] || { echo "no reduce.kernels.o for a file with kernels"; exit 1; }
left=$(nm -g --defined-only "$out/reduce.kernels.o" | wc -l)
[ "$left" -eq 0 ] || { echo "reduce.kernels.o defines $left symbols"; exit 1; }
# a barrier at the top level runs in phases, so its kernel is in the object
cat > "$out/phased.bext" <<'EOF2'
#[cube]
fn reverse_cube(input: &Tensor<f32>, output: &mut Tensor<f32>) {
    let tile: SharedMemory<f32> = SharedMemory::new(64);
    tile[UNIT_POS] = input[ABSOLUTE_POS];
    sync_cube();
    output[ABSOLUTE_POS] = tile[63 - UNIT_POS];
}
EOF2
"$bextc" "$out/phased.bext" -o "$out" 2> "$out/err" || { echo "bextc -o failed on phased.bext"; cat "$out/err"; exit 1; }
if grep -q "W0801" "$out/err"; then echo "a top-level barrier was left out:"; cat "$out/err"; exit 1; fi
syms=$(nm -g --defined-only "$out/phased.kernels.o" | awk '{print $3}' | tr '\n' ' ')
[ "$syms" = "reverse_cube reverse_cube.x86_64_v2 reverse_cube.x86_64_v3 " ] || { echo "phased.kernels.o defines: $syms"; exit 1; }
echo ok
