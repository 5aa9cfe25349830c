# bext front door.  Everything goes through CMake; these targets only pick
# the build tree and make sure the Debian packages are there first.
#
#   make         build everything into build/ (programs in build/bin/)
#   make demo    build, then compile the samples and show bext at work
#   make test    the suite in build/ (gcc, optimized), the threaded tests under
#                TSan (make tsan), then the suite in build/asan (ASan+UBSan)
#   make tsan    the runtime's threaded tests under ThreadSanitizer (build/tsan)
#   make test-long  the long runs: 200,000 random programs on flex vs
#                flex+fusion (FUSION_PROGRAMS=n for another count)
#   make bench   optimized benchmarks vs libtorch / OpenBLAS / plain C
#   make install PREFIX=/opt/bext   bextc, libbext, headers, stdlib, CMake + pkg-config
#   make deps    install missing Debian packages (idempotent)

BUILD   ?= build
ASAN    ?= build/asan
TSAN    ?= build/tsan
GEN     ?= Ninja
JOBS    ?= $(shell nproc)

.PHONY: all deps deps-bench build demo test test-long tsan bench install clean

all: build

deps:
	@sh tools/deps.sh core

deps-bench:
	@sh tools/deps.sh bench

build: deps
	@cmake -S . -B $(BUILD) -G $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBEXT_BENCH=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh tools/demo.sh $(BUILD)

# The whole suite runs twice: in the optimized gcc build that `make` and
# `make demo` use (what users run; gcc and clang differ in what they warn
# about and in argument evaluation order), then in a sanitizer build (clang:
# ASan+UBSan+LSan, and the libFuzzer target).  In between, the threaded
# runtime tests run under ThreadSanitizer (make tsan, below).  ctest's
# summary line of the ASan run is the last thing printed.
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory tsan
	@cmake -S . -B $(ASAN) -G $(GEN) -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_COMPILER=clang -DBEXT_SANITIZE=ON -DBEXT_FUZZ=ON >/dev/null
	@cmake --build $(ASAN) -j $(JOBS)
	@cd $(ASAN) && ctest --output-on-failure -j $(JOBS)

# The suite's random-program test (runtime/test_fusion_programs) runs
# 10,000 small programs with a fixed seed, core ops and, in one program of
# four, custom ops (tests/codegen/ext/cubefuse.bext); the long run is the
# same generator, many more programs (tens of minutes on 2 cores).
FUSION_PROGRAMS ?= 200000
test-long: build
	@BEXT_FUSION_PROGRAMS=$(FUSION_PROGRAMS) $(BUILD)/bin/runtime_test_fusion --jobs=1 \
	    --filter 'fusion/random_programs_agree_with_eager_flex'

# The runtime tests that run threads (the list: BEXT_TSAN_TESTS in
# tests/CMakeLists.txt), built with clang -fsanitize=thread in their own
# tree (TSan cannot share a process with ASan): libbext and those tests
# only, against a Criterion stand-in (Criterion cannot start under TSan).
# A TSan report fails the test.  Biased counts stay on: their membarrier
# fence is invisible to TSan, but every count access is atomic, so it has
# reported nothing there.  No suppressions are needed; should a
# third-party library (OpenBLAS) ever need one, it goes in ONE file,
# tools/tsan.supp, frames of that library only, each with its reason,
# passed here as TSAN_OPTIONS=suppressions=...  About 40 s on 2 cores from
# scratch (build included), 20 s after, so `make test` runs it too.
tsan: deps
	@cmake -S . -B $(TSAN) -G $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_COMPILER=clang -DBEXT_TSAN=ON >/dev/null
	@cmake --build $(TSAN) -j $(JOBS) --target tsan_tests
	@cd $(TSAN) && TSAN_OPTIONS="second_deadlock_stack=1" ctest --output-on-failure -j $(JOBS) -L tsan

bench: deps-bench
	@cmake -S . -B $(BUILD) -G $(GEN) -DCMAKE_BUILD_TYPE=Release -DBEXT_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@$(BUILD)/bin/bext-bench $(BUILD)/bench.json
	@$(BUILD)/bin/bext-matrix --json $(BUILD)/bench.json
	@sh tools/bench-frontend.sh $(BUILD)

PREFIX  ?= /usr/local
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
