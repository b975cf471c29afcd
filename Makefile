# hpmg quick start (Debian, as root installs what is missing):
#   make demo   build and run the default solve (hpmg solve)
#   make test   build and run the test suite (ctest), then the unit tests under ASan/UBSan
# Other targets: deps, build, bench, clean.
BUILD      ?= build
SAN_BUILD  ?= build-sanitize
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
DEPS        = cmake make gcc g++ libc6-dev liblapacke-dev libopenblas-dev libfftw3-dev
TEST_DEPS   = python3 python3-vtk9 python3-numpy python3-scipy
CTEST_ARGS ?= -LE slow

.PHONY: demo test deps test-deps build sanitize bench clean

define install_missing
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(BUILD)/hpmg solve

sanitize: deps
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHPMG_SANITIZE=ON -DHPMG_CUDA=OFF
	cmake --build $(SAN_BUILD) -j$(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -L unit --output-on-failure

test: test-deps build
	cd $(BUILD) && ctest $(CTEST_ARGS) --output-on-failure
	$(MAKE) --no-print-directory sanitize

bench: build
	bench/run_sweep.sh

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
