# tldrgraph: build, test, benchmarks and accuracy checks.
#   make demo       build and run the main job on the bundled example repository
#   make test       every test (what CI runs)
#   make bench      speed, as ratios against universal-ctags in the same run (BENCHMARKS.md)
#   make accuracy   definitions and calls against Python's ast and universal-ctags
#   make lint       rustfmt and clippy, warnings as errors

CARGO ?= cargo
RELEASE := target/release
EXAMPLE ?= tests/fixtures/python

.PHONY: all build demo test lint bench accuracy clean

all: build

build:
	$(CARGO) build --release --workspace --bins

demo: build
	@echo "== tg-extract on $(EXAMPLE) (stream in target/demo.ndjson)"
	$(RELEASE)/tg-extract --root $(EXAMPLE) --no-cache $(EXAMPLE) > target/demo.ndjson
	python3 pipelines/show-graph.py target/demo.ndjson

test:
	$(CARGO) build --workspace --all-targets
	$(CARGO) test --workspace
	python3 bench/accuracy/selftest.py

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: build
	$(CARGO) build --release --example parse_floor
	bash bench/speed.sh

accuracy: build
	bash bench/accuracy/run_all.sh $(RELEASE)/tg-extract

clean:
	$(CARGO) clean
