# tldrgraph.mk: incremental tldrgraph builds driven by Make.
#
# In your repository's Makefile:
#
#     include path/to/tldrgraph.mk      # then: make tldrgraph
#
# Settings (set them before the include, or on the command line):
#   TLDRGRAPH_ROOT   the repository (default: the current directory)
#   TLDRGRAPH_BIN    the directory of the tg-* binaries, with a trailing slash (default: empty,
#                    so they are found on PATH)
#
# One target per stage artifact, all under $(TLDRGRAPH_ROOT)/.tldrgraph/:
#   make/extract.ndjson    tg-extract's stream       (the sources and their list)
#   make/classify.ndjson   tg-classify's stream      (extract.ndjson, layers.config.yaml)
#   make/status.json       the contract state        (classify.ndjson); also graph.json, state.json
#   AGENT_CONTRACT.md      the agent's guide         (the tldrgraph binary)
#
# How a stage is skipped when its input did not change: every stage writes its output only when
# its content changed (`-o FILE`), so an unchanged output keeps its old mtime, and the stage's
# own target is a stamp file touched after each run. `make tldrgraph` runs one sub-make per
# stage, in order, so each stage's make sees the real mtimes its predecessor left: the next
# stage runs only if the stream it reads actually changed. Touching one source re-runs
# tg-extract (which re-parses that one file, the rest comes from its cache); editing
# layers.config.yaml re-runs tg-classify and tg-status, not tg-extract; a no-op `make tldrgraph`
# runs no stage, and `make -n tldrgraph` then lists none.
#
# New and deleted files: the list of source files is kept in make/sources.list, rewritten (while
# the makefile is read) only when it changes; extraction depends on it. File names with spaces
# are not supported by this fragment (Make's lists split on spaces); `tldrgraph init` has no
# such limit.
#
# A failing stage leaves no target that looks up to date: outputs are written atomically and
# only on success, and .DELETE_ON_ERROR removes the stamp of a failed recipe. The stages run in
# sequence, so `make -j` is safe.

TLDRGRAPH_MK := $(lastword $(MAKEFILE_LIST))

TLDRGRAPH_ROOT ?= .
TLDRGRAPH_BIN ?=
TLDRGRAPH_DIR := $(TLDRGRAPH_ROOT)/.tldrgraph
TLDRGRAPH_MAKE := $(TLDRGRAPH_DIR)/make
TLDRGRAPH_CONFIG := $(wildcard $(TLDRGRAPH_DIR)/layers.config.yaml)
TLDRGRAPH_EXE := $(shell command -v $(TLDRGRAPH_BIN)tldrgraph 2>/dev/null)
TLDRGRAPH_SUB := $(MAKE) --no-print-directory -f $(TLDRGRAPH_MK) TLDRGRAPH_ROOT=$(TLDRGRAPH_ROOT) TLDRGRAPH_BIN=$(TLDRGRAPH_BIN)

# The files tg-extract reads (its walker also honours .gitignore; this list only decides when
# to run it, and a file listed here but ignored there costs one quick no-op run).
TLDRGRAPH_SOURCES := $(shell find $(TLDRGRAPH_ROOT) \( -name .git -o -name .tldrgraph -o -name target -o -name node_modules \) -prune -o -type f \( -name '*.py' -o -name '*.pyi' -o -name '*.c' -o -name '*.h' -o -name '*.rs' \) -print 2>/dev/null | LC_ALL=C sort)

# Kept up to date while the makefile is read (so `make -n` tells the truth): rewritten only when
# a file was added or deleted, which then re-runs tg-extract.
TLDRGRAPH_LIST_UPDATE := $(shell mkdir -p $(TLDRGRAPH_MAKE) && printf '%s\n' $(TLDRGRAPH_SOURCES) > $(TLDRGRAPH_MAKE)/sources.list.tmp && if cmp -s $(TLDRGRAPH_MAKE)/sources.list.tmp $(TLDRGRAPH_MAKE)/sources.list; then rm -f $(TLDRGRAPH_MAKE)/sources.list.tmp; else mv -f $(TLDRGRAPH_MAKE)/sources.list.tmp $(TLDRGRAPH_MAKE)/sources.list; fi)

.DELETE_ON_ERROR:
.PHONY: tldrgraph tldrgraph-extract tldrgraph-classify tldrgraph-state tldrgraph-contract tldrgraph-status tldrgraph-clean

# Each stage in its own make, in order (see above).
tldrgraph:
	+@$(TLDRGRAPH_SUB) tldrgraph-extract
	+@$(TLDRGRAPH_SUB) tldrgraph-classify
	+@$(TLDRGRAPH_SUB) tldrgraph-state
	+@$(TLDRGRAPH_SUB) tldrgraph-contract

tldrgraph-extract: $(TLDRGRAPH_MAKE)/extract.stamp
tldrgraph-classify: $(TLDRGRAPH_MAKE)/classify.stamp
tldrgraph-state: $(TLDRGRAPH_MAKE)/status.stamp
tldrgraph-contract: $(TLDRGRAPH_DIR)/AGENT_CONTRACT.md

$(TLDRGRAPH_MAKE)/extract.stamp: $(TLDRGRAPH_SOURCES) $(TLDRGRAPH_MAKE)/sources.list
	$(TLDRGRAPH_BIN)tg-extract --root $(TLDRGRAPH_ROOT) -o $(TLDRGRAPH_MAKE)/extract.ndjson $(TLDRGRAPH_ROOT)
	@touch $@

$(TLDRGRAPH_MAKE)/classify.stamp: $(TLDRGRAPH_MAKE)/extract.ndjson $(TLDRGRAPH_CONFIG)
	$(TLDRGRAPH_BIN)tg-classify -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/extract.ndjson -o $(TLDRGRAPH_MAKE)/classify.ndjson
	@touch $@

$(TLDRGRAPH_MAKE)/status.stamp: $(TLDRGRAPH_MAKE)/classify.ndjson
	$(TLDRGRAPH_BIN)tg-status -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/classify.ndjson > $(TLDRGRAPH_MAKE)/status.json.tmp
	@if cmp -s $(TLDRGRAPH_MAKE)/status.json.tmp $(TLDRGRAPH_MAKE)/status.json; then rm -f $(TLDRGRAPH_MAKE)/status.json.tmp; else mv -f $(TLDRGRAPH_MAKE)/status.json.tmp $(TLDRGRAPH_MAKE)/status.json; fi
	@touch $@

$(TLDRGRAPH_DIR)/AGENT_CONTRACT.md: $(TLDRGRAPH_EXE)
	$(TLDRGRAPH_BIN)tldrgraph contract $(TLDRGRAPH_ROOT)
	@touch $@

# The state of the last build, without building.
tldrgraph-status:
	@$(TLDRGRAPH_BIN)tldrgraph status $(TLDRGRAPH_ROOT)

tldrgraph-clean:
	rm -rf $(TLDRGRAPH_MAKE)
