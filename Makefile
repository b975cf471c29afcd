# hpmg quick start (Debian, as root installs what is missing):
#   make demo   build and run the default solve (hpmg solve)
#   make test   build and run the test suite (ctest), the unit tests under ASan/UBSan, and
#               the unit tests of an aarch64 cross build under qemu-user (test-arm)
# Other targets: deps, build, sanitize, test-arm, bench, clean.
BUILD      ?= build
SAN_BUILD  ?= build-sanitize
ARM_BUILD  ?= build-arm
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
DEPS        = cmake ninja-build make gcc g++ libc6-dev liblapacke-dev libopenblas-dev libfftw3-dev
TEST_DEPS   = python3 python3-vtk9 python3-numpy python3-scipy gmsh
ARM_DEPS    = gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
ARM_LIBS    = liblapacke-dev:arm64 libopenblas-dev:arm64 libfftw3-dev:arm64
CTEST_ARGS ?= -LE slow

.PHONY: demo test deps test-deps build sanitize test-arm bench clean

# Ninja, not make, drives the builds: it schedules single objects (the tests compile while the
# library's CUDA sources still do), 191 s against 270 s for a clean -j2 build on 2 cores; a
# build folder configured before keeps the generator it has
generator = $(if $(wildcard $(1)/CMakeCache.txt),,-G Ninja)

define install_missing
	@missing=""; native=$$(dpkg --print-architecture); for p in $(1); do \
	  case $$p in *:*) a=$${p#*:} ;; *) a=$$native ;; esac; \
	  dpkg-query -W -f='$${Architecture} $${db:Status-Abbrev}\n' $$p 2>/dev/null | grep -Eq "^($$a|all) ii" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; \
	    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root, or install them)"; exit 1; fi; \
	fi
endef

deps:
	$(call install_missing,$(DEPS))

test-deps: deps
	$(call install_missing,$(TEST_DEPS))

build: deps
	cmake -S . -B $(BUILD) $(call generator,$(BUILD)) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(BUILD)/hpmg solve

sanitize: deps
	cmake -S . -B $(SAN_BUILD) $(call generator,$(SAN_BUILD)) -DCMAKE_BUILD_TYPE=Debug -DHPMG_SANITIZE=ON -DHPMG_CUDA=OFF
	cmake --build $(SAN_BUILD) -j$(JOBS) --target unit_tests hpmg_cli
	cd $(SAN_BUILD) && OMP_WAIT_POLICY=passive ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -j$(JOBS) -L unit --output-on-failure

test: test-deps build
	# tests run JOBS at a time; OpenMP threads wait passively (spinning threads of two
	# tests on the same cores slow both by orders of magnitude)
	cd $(BUILD) && OMP_WAIT_POLICY=passive ctest -j$(JOBS) $(CTEST_ARGS) --output-on-failure
	$(MAKE) --no-print-directory sanitize
	$(MAKE) --no-print-directory test-arm

# 64-bit Arm (NEON kernels): cross-compiled with Debian's gcc-aarch64-linux-gnu against
# the arm64 libraries (multiarch), unit tests run under qemu-user (correctness only). About
# 40x slower than natively: one OpenMP thread (OMP_THREAD_LIMIT; libgomp's threads under
# qemu-user take minutes per barrier), degree sweeps up to 4 and no checks of the kernel's view of
# the memory, which qemu-user makes up (tests/test_env.h)
test-arm: deps
	$(call install_missing,$(ARM_DEPS))
	@if ! dpkg --print-foreign-architectures | grep -qx arm64; then \
	  if [ "$$(id -u)" = 0 ]; then dpkg --add-architecture arm64 && apt-get update -q >/dev/null; \
	  else echo "the arm64 architecture is not enabled (dpkg --add-architecture arm64, as root)"; exit 1; fi; \
	fi
	$(call install_missing,$(ARM_LIBS))
	cmake -S . -B $(ARM_BUILD) $(call generator,$(ARM_BUILD)) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release -DHPMG_CUDA=OFF
	cmake --build $(ARM_BUILD) -j$(JOBS) --target unit_tests
	cd $(ARM_BUILD) && OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1 HPMG_TEST_MAX_DEGREE=4 HPMG_TEST_EMULATED=1 ctest -j$(JOBS) -L unit --output-on-failure

bench: build
	bench/run_sweep.sh

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(ARM_BUILD)
