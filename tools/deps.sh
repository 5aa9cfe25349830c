#!/bin/sh
# deps.sh — install the Debian packages bext needs, only those missing.
# Usage: tools/deps.sh [core|bench|all]   (default: core)
# Idempotent: a machine that has everything returns at once without apt.
set -eu

# libtorch-dev: the LibTorch backend (libtorch:cpu).  The build skips the
# backend without it, but CI and `make deps` install it so its tests run.
# libamdhip64-5, libhiprtc-builtins5, rocm-device-libs: hiprtc (in ROCm
# 5.2's HIP runtime) and the device libraries it links, so the suite
# compiles every kernel to AMDGPU code objects; dlopen'd, never linked.
# neovim: the headless-editor test of bext-lsp (skipped without it).
# libnng-dev, libprotobuf-c-dev, protobuf-c-compiler: the Remote backend and
# bext-server (transport; control messages generated from a .proto).
# Vulkan (runtime/vulkan): spirv-headers and libvulkan-dev for the headers
# (Vulkan itself is dlopen'ed), spirv-tools for the validator the suite
# runs over every emitted module, mesa-vulkan-drivers for lavapipe, the CPU
# Vulkan device the suite runs kernels on.
core="build-essential cmake ninja-build pkg-config re2c lemon clang libclang-rt-14-dev
libcriterion-dev libedit-dev libopenblas-dev libcjson-dev python3 llvm-19-dev libtorch-dev
libamdhip64-5 libhiprtc-builtins5 rocm-device-libs
spirv-headers libvulkan-dev spirv-tools mesa-vulkan-drivers
neovim libnng-dev libprotobuf-c-dev protobuf-c-compiler"
bench=""

want=$core
case "${1:-core}" in
  core) ;;
  bench) want="$core $bench" ;;
  all) want="$core $bench" ;;
  *) echo "deps.sh: unknown set '$1' (core, bench, all)" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done
# Node.js and npm package the VS Code extension (tools/editors/vscode,
# test editors/vscode_vsix).  Checked as commands, not packages: a machine
# whose Node.js came from elsewhere (NodeSource's nodejs bundles npm) must
# not get Debian's npm, which would pull Debian's older nodejs over it.
if [ "${1:-core}" != bench ] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
  missing="$missing nodejs npm"
fi
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
