# bext front door.  Everything goes through CMake; these targets only pick
# the build tree and make sure the Debian packages are there first.
#
#   make         build everything into build/ (programs in build/bin/)
#   make demo    build, then compile the samples and show bext at work
#   make test    the suite in build/ (gcc, optimized), then in build/asan (ASan+UBSan)
#   make bench   optimized benchmarks vs libtorch / OpenBLAS / plain C
#   make install PREFIX=/opt/bext   bextc, libbext, headers, stdlib, CMake + pkg-config
#   make deps    install missing Debian packages (idempotent)

BUILD   ?= build
ASAN    ?= build/asan
GEN     ?= Ninja
JOBS    ?= $(shell nproc)

.PHONY: all deps deps-bench build demo test bench install clean

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
# ASan+UBSan+LSan, and the libFuzzer target).  ctest's summary line of the
# sanitizer run is the last thing printed.
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@cmake -S . -B $(ASAN) -G $(GEN) -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_COMPILER=clang -DBEXT_SANITIZE=ON -DBEXT_FUZZ=ON >/dev/null
	@cmake --build $(ASAN) -j $(JOBS)
	@cd $(ASAN) && ctest --output-on-failure -j $(JOBS)

bench: deps-bench
	@cmake -S . -B $(BUILD) -G $(GEN) -DCMAKE_BUILD_TYPE=Release -DBEXT_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@$(BUILD)/bin/bext-bench $(BUILD)/bench.json
	@sh tools/bench-frontend.sh $(BUILD)

PREFIX  ?= /usr/local
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
