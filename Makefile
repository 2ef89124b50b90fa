# Thin driver over CMake. The two commands of the README:
#   make demo   build, then solve the embedded default problem (elasticity cantilever)
#   make test   build, then run the whole test suite (GPU tests skip without a GPU) and the
#               Python package's (python/run_tests.sh: a venv, pip install ./python, pytest)
#   make fuzz   build the libFuzzer harnesses (clang) and run each FUZZ_SECONDS seconds
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
PREFIX ?= $(CURDIR)/install
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build demo test test-gpu asan fuzz install bench-cpu bench-gpu clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/apps/krill solve

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	JOBS=$(JOBS) python/run_tests.sh

test-gpu: build
	cd $(BUILD) && ctest --output-on-failure -L gpu

# The suite again with AddressSanitizer + UBSan (host code; CUDA off, since the sanitizers
# cannot see device memory and CI has no GPU), without the tests labelled slow (whole
# reproducible solves: test_repro_solve_quick covers their code under the sanitizers).
asan:
	cmake -S . -B $(BUILD_ASAN) $(GENERATOR) -DCMAKE_BUILD_TYPE=Debug -DKRILL_SANITIZE=ON \
	      -DKRILL_WITH_CUDA=OFF -DKRILL_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE "install|slow"

# Every reader under libFuzzer with ASan + UBSan (fuzz/, doc/reliability.md): clang only,
# CUDA off; each harness runs FUZZ_SECONDS seconds from its seeds in fuzz/corpus/.
fuzz:
	cmake -S . -B $(BUILD_FUZZ) $(GENERATOR) -DCMAKE_C_COMPILER=clang \
	      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKRILL_FUZZ=ON -DKRILL_WITH_CUDA=OFF \
	      -DKRILL_BUILD_TESTS=OFF -DKRILL_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target krill_fuzz
	fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench-cpu:
	bench/run_cpu.sh

bench-gpu: build
	bench/run_gpu.sh bench-results

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
