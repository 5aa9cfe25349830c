#!/bin/sh
# outside_test.sh — builds tests/integration/outside/ against bext the way
# a user outside this tree would, runs it and checks what it prints; then
# checks the depfile: a no-op rebuild must not run bextc, and a rebuild
# after an imported module changes must.
#
#   outside_test.sh MODE BUILD SRC WORK CC "FLAGS"
#     MODE   cmake-install     make install into WORK/prefix; find_package
#                              through CMAKE_PREFIX_PATH; Ninja
#            cmake-build-tree  find_package with bext_DIR=BUILD/cmake; Make
#            pkgconfig         install, move the prefix elsewhere (it must
#                              be relocatable), then pkg-config + make
#                              (the server program with bext-server.pc)
#            pkgconfig-uninstalled  no install: PKG_CONFIG_PATH=BUILD
#                              (bext-uninstalled.pc, bext-server-
#                              uninstalled.pc) + make; then the
#                              feature check (features/): a file built
#                              without BEXT_FEATURE_ND next to a feat.c
#                              built with it must fail to link, naming it;
#                              and (nograd/) a method listing Autodiff with
#                              no route: bextc warns, the link fails
#                              naming its `_autodiff`
#            readme-make       the README's Makefile, extracted verbatim,
#                              on a clean tree against an installed prefix
#            errors            misuse of bext_add_extension and a .bext with
#                              an error (tests/integration/bad/): each must
#                              fail with a message naming the problem
#     BUILD  the bext build tree (already built); SRC the bext source tree
#     WORK   scratch directory (emptied first)
#     CC, FLAGS  compiler and the sanitizer flags libbext was built with
#                (a sanitizer build of libbext links only with them)
set -eu
mode=$1 build=$2 src=$3 work=$4 cc=$5 flags=${6:-}
outside=$src/tests/integration/outside

fail() { echo "outside_test[$mode]: FAIL: $*" >&2; exit 1; }
step() { echo "-- $*"; }

rm -rf "$work"
mkdir -p "$work"
# A private copy: the depfile check edits an imported module.
cp -R "$outside" "$work/src"

install_prefix() {
  step "cmake --install $build --prefix $1"
  cmake --install "$build" --prefix "$1" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "install failed"; }
  for f in bin/bextc bin/bext-repl lib/libbext.a lib/libbext_kir.a lib/libbext_llvm.so \
           include/bext/bext.h include/bext/gen.h \
           include/bext/ext.h include/bext/ops.h include/bext/config.h \
           lib/cmake/bext/bextConfig.cmake lib/cmake/bext/BextExtension.cmake \
           lib/pkgconfig/bext.pc share/bext/stdlib/std/shape.bext; do
    [ -f "$1/$f" ] || fail "the install lacks $f"
  done
  if [ -f "$build/lib/libbext_server.a" ]; then
    for f in lib/libbext_server.a include/bext/server.h bin/bext-server lib/pkgconfig/bext-server.pc; do
      [ -f "$1/$f" ] || fail "the install lacks $f"
    done
  fi
}

# run_checked PROGRAM: runs it and requires the lines main.c prints for a
# correct run on both backends.
run_checked() {
  step "run $1"
  rc=0
  "$1" >"$work/run.log" 2>&1 || rc=$?
  [ $rc -eq 0 ] || { cat "$work/run.log"; fail "$1 exited with $rc"; }
  cat "$work/run.log"
  for l in "affine on flex:" "affine on ndarray:" "softsign on flex:" "softsign on ndarray:" \
           "softsign on flex: override from the static library" "softsign on ndarray: default body" \
           "add_offset on flex: code from outside.kernels.o" "outside: ok"; do
    grep -q "^$l" "$work/run.log" || fail "output lacks \`$l\`"
  done
}

# depfile_check BUILD-COMMAND...: a second build runs nothing of bextc; a
# build after touching the imported module reruns bextc.
depfile_check() {
  step "no-op rebuild"
  "$@" >"$work/rebuild0.log" 2>&1 || { cat "$work/rebuild0.log"; fail "rebuild failed"; }
  if grep -q "bextc outside.bext" "$work/rebuild0.log"; then
    cat "$work/rebuild0.log"; fail "a no-op rebuild ran bextc"
  fi
  step "rebuild after modules/units.bext changes"
  sleep 1   # coarse file-system timestamps
  echo "// edited by outside_test.sh" >>"$work/src/modules/units.bext"
  "$@" >"$work/rebuild1.log" 2>&1 || { cat "$work/rebuild1.log"; fail "rebuild failed"; }
  grep -q "bextc outside.bext" "$work/rebuild1.log" ||
    { cat "$work/rebuild1.log"; fail "editing an imported module did not rerun bextc (depfile)"; }
}

# server_checked DIR: where bext has the Remote backend (libbext_server.a
# in the build tree), the project built DIR/outside_server from
# bext::server (CMake) or bext-server.pc (make); it must start and log the
# extension ops linked into it.
server_checked() {
  [ -f "$build/lib/libbext_server.a" ] || { step "no Remote backend in this bext: no server program"; return 0; }
  [ -x "$1/outside_server" ] || fail "bext::server / bext-server.pc was not found, or outside_server was not built"
  step "run $1/outside_server"
  "$1/outside_server" --listen "ipc://$work/server.sock" --device flex >"$work/server.out" 2>"$work/server.err" &
  pid=$!
  i=0
  until grep -q "extension ops:" "$work/server.err" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 100 ] || { kill $pid; cat "$work/server.out" "$work/server.err"; fail "outside_server did not start"; }
    sleep 0.1
  done
  kill -TERM $pid
  wait $pid || fail "outside_server did not stop cleanly"
  cat "$work/server.err"
  grep -q "extension ops: 2 (Outside::affine, Outside::softsign)" "$work/server.err" ||
    fail "outside_server does not list the Outside ops"
}
cmake_outside() {   # cmake_outside GENERATOR -D...
  gen=$1
  shift
  step "configure the outside project ($gen)"
  cmake -S "$work/src" -B "$work/b" -G "$gen" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" "$@" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configure failed"; }
  step "build"
  cmake --build "$work/b" -j1 >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
  grep -q "bextc outside.bext" "$work/build.log" || { cat "$work/build.log"; fail "the build did not run bextc"; }
  run_checked "$work/b/outside"
  depfile_check cmake --build "$work/b" -j1
  run_checked "$work/b/outside"
  server_checked "$work/b"
}

case $mode in
cmake-install)
  install_prefix "$work/prefix"
  # The installed bextc must find the installed stdlib by itself: a module
  # that exists only there proves it is not using the source tree's.
  step "installed bextc finds share/bext/stdlib"
  printf 'pub fn probe_only_installed(s: &Shape) -> Shape { s.clone() }\n' \
    >"$work/prefix/share/bext/stdlib/std/probe.bext"
  printf 'use std::probe::probe_only_installed;\n' >"$work/probe.bext"
  env -u BEXT_STDLIB "$work/prefix/bin/bextc" --check "$work/probe.bext" ||
    fail "installed bextc did not find std::probe in its own share/bext/stdlib"
  cmake_outside Ninja -DCMAKE_PREFIX_PATH="$work/prefix"
  ;;
cmake-build-tree)
  [ -f "$build/cmake/bextConfig.cmake" ] || fail "$build/cmake/bextConfig.cmake is missing"
  cmake_outside "Unix Makefiles" -Dbext_DIR="$build/cmake"
  ;;
pkgconfig)
  install_prefix "$work/stage"
  mv "$work/stage" "$work/moved"   # pkg-config and bextc must follow the move
  export PKG_CONFIG_PATH="$work/moved/lib/pkgconfig"
  bextc=$(pkg-config --variable=bextc bext)
  [ -x "$bextc" ] || fail "pkg-config --variable=bextc gave \`$bextc\`, not an executable"
  step "make (pkg-config) with $bextc"
  make -C "$work/src" CC="$cc" EXTRA_CFLAGS="$flags" EXTRA_LDFLAGS="$flags" O=build \
    >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "make failed"; }
  grep -q "bextc outside.bext" "$work/build.log" || { cat "$work/build.log"; fail "make did not run bextc"; }
  run_checked "$work/src/build/outside"
  depfile_check make -C "$work/src" CC="$cc" EXTRA_CFLAGS="$flags" EXTRA_LDFLAGS="$flags" O=build
  run_checked "$work/src/build/outside"
  server_checked "$work/src/build"
  ;;
pkgconfig-uninstalled)
  export PKG_CONFIG_PATH="$build"
  bextc=$(pkg-config --variable=bextc bext)
  [ "$bextc" = "$build/bin/bextc" ] ||
    fail "pkg-config --variable=bextc gave \`$bextc\`, not $build/bin/bextc (bext-uninstalled.pc)"
  step "make (pkg-config, build tree) with $bextc"
  make -C "$work/src" CC="$cc" EXTRA_CFLAGS="$flags" EXTRA_LDFLAGS="$flags" O=build \
    >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "make failed"; }
  run_checked "$work/src/build/outside"
  server_checked "$work/src/build"
  # The feature check: feat.c with BEXT_FEATURE_ND, main.c without.
  f=$work/features
  cp -R "$src/tests/integration/features" "$f"
  "$bextc" "$f/feat.bext" -o "$f/gen" || fail "bextc feat.bext failed"
  cflags="$(pkg-config --cflags bext) -I$f/gen $flags"
  libs="$(pkg-config --libs bext)"
  # shellcheck disable=SC2086
  $cc $cflags -DBEXT_FEATURE_ND=1 -c -o "$f/feat.o" "$f/gen/feat.c" || fail "feat.c did not compile"
  # shellcheck disable=SC2086
  $cc $cflags -c -o "$f/main_off.o" "$f/main.c" || fail "main.c did not compile"
  step "link main.c (no BEXT_FEATURE_ND) with feat.c (BEXT_FEATURE_ND=1): must fail"
  # shellcheck disable=SC2086
  if $cc $flags -o "$f/mixed" "$f/main_off.o" "$f/feat.o" $libs >"$f/link.log" 2>&1; then
    fail "a program mixing feature states linked"
  fi
  grep -q "undefined reference to .feat_c_compiled_without_BEXT_FEATURE_ND" "$f/link.log" ||
    { cat "$f/link.log"; fail "the link error does not name feat_c_compiled_without_BEXT_FEATURE_ND"; }
  step "the same with both files built with BEXT_FEATURE_ND: links and runs"
  # shellcheck disable=SC2086
  $cc $cflags -DBEXT_FEATURE_ND=1 -c -o "$f/main_on.o" "$f/main.c" || fail "main.c did not compile"
  # shellcheck disable=SC2086
  $cc $flags -o "$f/same" "$f/main_on.o" "$f/feat.o" $libs || fail "a consistent build did not link"
  "$f/same" | grep -q "^features: ok" || fail "the consistent build did not print features: ok"
  # Autodiff listed, no route for a method: bextc warns, the link fails
  # naming the missing hand-written implementation.
  a=$work/nograd
  cp -R "$src/tests/integration/nograd" "$a"
  step "bextc nograd.bext: warns W0303 naming NogradOps::halve"
  "$bextc" "$a/nograd.bext" -o "$a/gen" 2>"$a/bextc.log" || { cat "$a/bextc.log"; fail "bextc nograd.bext failed"; }
  grep -q "warning\[W0303\]: \`NogradOps::halve\` has no default body or \`#\[backward\]\`" "$a/bextc.log" ||
    { cat "$a/bextc.log"; fail "bextc did not warn about NogradOps::halve"; }
  cflags="$(pkg-config --cflags bext) -I$a/gen $flags"
  # shellcheck disable=SC2086
  $cc $cflags -c -o "$a/nograd.o" "$a/gen/nograd.c" || fail "nograd.c did not compile"
  # shellcheck disable=SC2086
  $cc $cflags -c -o "$a/main.o" "$a/main.c" || fail "nograd main.c did not compile"
  step "link without nograd_ops_halve_autodiff: must fail naming it"
  # shellcheck disable=SC2086
  if $cc $flags -o "$a/nograd" "$a/main.o" "$a/nograd.o" $libs >"$a/link.log" 2>&1; then
    fail "a program listing Autodiff without an _autodiff implementation linked"
  fi
  grep -q "undefined reference to .nograd_ops_halve_autodiff" "$a/link.log" ||
    { cat "$a/link.log"; fail "the link error does not name nograd_ops_halve_autodiff"; }
  ;;
readme-make)
  install_prefix "$work/prefix"
  r=$work/readme
  mkdir -p "$r"
  # The first ```make block of README.md's install section, verbatim.
  awk '/^## Installing, and building against bext/ { sec = 1 }
       sec && /^```make$/ && !done { inb = 1; next }
       inb && /^```$/ { inb = 0; done = 1 }
       inb { print }' "$src/README.md" >"$r/Makefile"
  [ -s "$r/Makefile" ] || fail "README.md has no \`\`\`make block under \`## Installing, and building against bext\`"
  cp "$src/tests/integration/readme_ext.bext" "$r/my_ext.bext"
  cp "$src/tests/integration/readme_main.c" "$r/main.c"
  cp "$src/tests/integration/readme_impl.c" "$r/my_ext_impl.c"
  step "make with the README's Makefile (clean tree, -j4: objects must wait for the header)"
  # CFLAGS / LDFLAGS through the environment: the Makefile appends to them.
  PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" CC="$cc" CFLAGS="$flags" LDFLAGS="$flags" \
    make -C "$r" -j4 >"$work/build.log" 2>&1 || { cat "$r/Makefile" "$work/build.log"; fail "make failed"; }
  "$r/my_app" | grep -q "^my_app: ok" || fail "my_app did not print my_app: ok"
  ;;
errors)
  # expect_failure CASE PHASE PATTERN: configuring (PHASE configure) or
  # building (PHASE build) the bad project fails, and says PATTERN.
  expect_failure() {
    rm -rf "$work/bad-$1"
    if cmake -S "$src/tests/integration/bad" -B "$work/bad-$1" -DCMAKE_C_COMPILER="$cc" \
         -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -Dbext_DIR="$build/cmake" \
         -DBAD_CASE="$1" >"$work/bad-$1.log" 2>&1; then
      [ "$2" = build ] || { cat "$work/bad-$1.log"; fail "case $1: configure succeeded"; }
      if cmake --build "$work/bad-$1" -j1 >"$work/bad-$1.log" 2>&1; then
        cat "$work/bad-$1.log"; fail "case $1: build succeeded"
      fi
    else
      [ "$2" = configure ] || { cat "$work/bad-$1.log"; fail "case $1: configure failed"; }
    fi
    # CMake wraps long messages at word boundaries (where depends on the
    # length of the paths in them), so match against the log as one line.
    tr -s ' \n' '  ' <"$work/bad-$1.log" | grep -q "$3" ||
      { cat "$work/bad-$1.log"; fail "case $1: no \`$3\` in the output"; }
    step "case $1: fails at $2 with \`$3\`"
  }
  expect_failure keyword configure "unexpected arguments \`FEATUREZ;x\`"
  expect_failure missing configure "no_such_file.bext\` does not exist"
  expect_failure target configure "\`no_such_target\` is not a target"
  expect_failure source build "broken.bext:4:21: error\[E0505\]: \`Wgpu\` is not a backend selector"
  expect_failure override build "bext: \`defaulted_halve_flex\` is defined in liboverrides.a, but the linker left it out"
  ;;
*)
  fail "unknown mode (expected cmake-install, cmake-build-tree, pkgconfig, pkgconfig-uninstalled, readme-make or errors)"
  ;;
esac
echo "outside_test[$mode]: ok"
