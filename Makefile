# Convenience front end over CMake. The two commands a user needs:
#   make run    build (installing Debian packages if missing) and run the main job
#   make test   build and run the whole test suite with ctest
# and one for the simulator's host speed:
#   make bench-sim   Release and profile-guided builds of bench_sim_dma, both run (~3 min)
BUILD    ?= build
TYPE     ?= RelWithDebInfo
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test bench-sim install clean

all: build

deps:
	@scripts/install-deps.sh --check || { echo "make: some packages are missing; installing them"; scripts/install-deps.sh; }

$(BUILD)/CMakeCache.txt: | deps
	@echo "make: configuring $(BUILD) ($(TYPE))"
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/iommulab run $(ARGS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

bench-sim: deps
	scripts/bench-sim.sh $(ARGS)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	rm -rf $(BUILD)
