# Thin wrapper over CMake. `make demo` and `make test` install what is missing first.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build demo test unit asan clean bench install-test browser-deps report-screenshot

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGN_SANITIZE=ON $(CMAKE_ARGS) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# installs into a temporary prefix; builds and runs the C and Python examples and the pytest suite
install-test: build
	bash scripts/test-install.sh $(BUILD)

test: unit asan install-test

# ThreadSanitizer: the thread suite (tests/threads_test.c, what the headers let threads share)
# the gzip/read suite (tests/gunzip_test.c: a large file read on several threads) and
# constant folding's in-place suite (tests/constfold_inplace_test.c: a batch of folds on two threads)
# in its own build directory, the library and that suite only
TSAN_BUILD ?= build-tsan
.PHONY: tsan
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGN_TSAN=ON -DGRAPNEL_CUDA=OFF $(CMAKE_ARGS) >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target threads_test gunzip_test constfold_inplace_test
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -R '^(threads_test|gunzip_test|constfold_inplace_test)$$'

bench: build
	bash bench/run.sh $(BUILD)

# headless Chromium for the HTML report's browser tests (they skip without it): ~80 MB
browser-deps:
	@bash scripts/install-browser-deps.sh

# docs/images/html_report.png, the README's picture of the HTML report
report-screenshot: build browser-deps
	$(BUILD)/grapnel optimize examples/models/ds_cnn_s.pb -o $(BUILD)/ds_cnn_opt.pb --report html --report-file $(BUILD)/ds_cnn_report.html
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$(BUILD)/chromium-profile \
	  --window-size=1200,680 --virtual-time-budget=5000 --screenshot=docs/images/html_report.png \
	  'file://$(abspath $(BUILD))/ds_cnn_report.html#select=MobileNet/conv_ds_1/pw_batch_norm/Relu'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)

# libFuzzer targets (fuzz/): clang-16 build in build-fuzz, then each target for FUZZ_SECONDS
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 20
.PHONY: fuzz
fuzz: deps
	@bash scripts/install-fuzz-deps.sh >/dev/null
	CC=clang-16 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_C_FLAGS_FUZZ=-O1 -DGN_FUZZ=ON \
	  -DGN_BUILD_TESTS=OFF -DGRAPNEL_CUDA=OFF $(CMAKE_ARGS) >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh $(FUZZ_BUILD)
