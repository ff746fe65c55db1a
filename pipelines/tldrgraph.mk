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
#   make/plan.ndjson       tg-plan's stream          (classify.ndjson, layers.config.yaml,
#                                                     approval.json, intents.ndjson); also plan.json
#   make/enrich.ndjson     tg-enrich's stream        (plan.ndjson, approval.json, intents.ndjson);
#                                                     also enrichment_request.json
#   make/embed.ndjson      tg-embed's stream         (enrich.ndjson); also search.bin, vectors.i8
#   make/status.json       the contract state        (embed.ndjson); also graph.json, state.json
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
# New and deleted files: the list of the files extraction reads (sources, and the .gitignore,
# .ignore and Cargo.toml files that change what it finds or resolves) is kept in
# make/sources.list, written by `find` while the makefile is read and replaced only when it
# changes; extraction depends on it and on every file in it, and on the stage binaries. Whether
# a layers config exists is kept the same way in make/config.state. File names with spaces are
# not supported by this fragment (Make's lists split on spaces); `tldrgraph init` has no such
# limit. Including the fragment does not change your Makefile's default goal.
#
# A failing stage leaves no target that looks up to date: outputs are written atomically and
# only on success, and .DELETE_ON_ERROR removes the stamp of a failed recipe. The stages run in
# sequence, so `make -j` is safe.

TLDRGRAPH_MK := $(lastword $(MAKEFILE_LIST))
TLDRGRAPH_SAVED_GOAL := $(.DEFAULT_GOAL)

TLDRGRAPH_ROOT ?= .
TLDRGRAPH_BIN ?=
ifneq ($(words $(TLDRGRAPH_ROOT)),1)
$(error tldrgraph.mk: TLDRGRAPH_ROOT "$(TLDRGRAPH_ROOT)" is empty or contains a space; use `tldrgraph init` for such a path)
endif
ifeq ($(wildcard $(TLDRGRAPH_ROOT)/.),)
$(error tldrgraph.mk: TLDRGRAPH_ROOT "$(TLDRGRAPH_ROOT)" is not a directory)
endif
TLDRGRAPH_DIR := $(TLDRGRAPH_ROOT)/.tldrgraph
TLDRGRAPH_MAKE := $(TLDRGRAPH_DIR)/make
TLDRGRAPH_CONFIG := $(wildcard $(TLDRGRAPH_DIR)/layers.config.yaml)
TLDRGRAPH_APPROVAL := $(wildcard $(TLDRGRAPH_DIR)/approval.json)
TLDRGRAPH_INTENTS := $(wildcard $(TLDRGRAPH_DIR)/intents.ndjson)
# Answers the agent dropped for the next run; the enrich stage applies and renames them.
TLDRGRAPH_RESPONSES := $(wildcard $(foreach e,json ndjson yaml yml,$(TLDRGRAPH_DIR)/enrichment_response.$(e)))
TLDRGRAPH_EXES := $(foreach b,tg-extract tg-classify tg-plan tg-enrich tg-embed tg-status tldrgraph,$(shell command -v $(TLDRGRAPH_BIN)$(b) 2>/dev/null))
TLDRGRAPH_SUB := $(MAKE) --no-print-directory -f $(TLDRGRAPH_MK) TLDRGRAPH_ROOT=$(TLDRGRAPH_ROOT) TLDRGRAPH_BIN=$(TLDRGRAPH_BIN)

# Written while the makefile is read (so `make -n` tells the truth), by the shell itself (so a
# large repository does not hit the limit on one argument), and replaced only when changed.
TLDRGRAPH_REPLACE = if cmp -s $(1).tmp $(1); then rm -f $(1).tmp; else mv -f $(1).tmp $(1); fi
TLDRGRAPH_LIST_UPDATE := $(shell mkdir -p $(TLDRGRAPH_MAKE) \
  && find $(TLDRGRAPH_ROOT) \( -name .git -o -name .tldrgraph -o -name target -o -name node_modules \) -prune -o -type f \( -name '*.py' -o -name '*.pyi' -o -name '*.c' -o -name '*.h' -o -name '*.rs' -o -name .gitignore -o -name .ignore -o -name Cargo.toml \) -print 2>/dev/null | LC_ALL=C sort > $(TLDRGRAPH_MAKE)/sources.list.tmp \
  && $(call TLDRGRAPH_REPLACE,$(TLDRGRAPH_MAKE)/sources.list) \
  && echo "config=$(if $(TLDRGRAPH_CONFIG),present,absent) approval=$(if $(TLDRGRAPH_APPROVAL),present,absent) intents=$(if $(TLDRGRAPH_INTENTS),present,absent)" > $(TLDRGRAPH_MAKE)/config.state.tmp \
  && $(call TLDRGRAPH_REPLACE,$(TLDRGRAPH_MAKE)/config.state))
TLDRGRAPH_SOURCES := $(shell cat $(TLDRGRAPH_MAKE)/sources.list)

.DELETE_ON_ERROR:
.PHONY: tldrgraph tldrgraph-extract tldrgraph-classify tldrgraph-plan tldrgraph-enrich tldrgraph-embed tldrgraph-state tldrgraph-contract tldrgraph-status tldrgraph-clean

# Each stage in its own make, in order (see above).
tldrgraph:
	+@$(TLDRGRAPH_SUB) tldrgraph-extract
	+@$(TLDRGRAPH_SUB) tldrgraph-classify
	+@$(TLDRGRAPH_SUB) tldrgraph-plan
	+@$(TLDRGRAPH_SUB) tldrgraph-enrich
	+@$(TLDRGRAPH_SUB) tldrgraph-embed
	+@$(TLDRGRAPH_SUB) tldrgraph-state
	+@$(TLDRGRAPH_SUB) tldrgraph-contract

tldrgraph-extract: $(TLDRGRAPH_MAKE)/extract.stamp
tldrgraph-classify: $(TLDRGRAPH_MAKE)/classify.stamp
tldrgraph-plan: $(TLDRGRAPH_MAKE)/plan.stamp
tldrgraph-enrich: $(TLDRGRAPH_MAKE)/enrich.stamp
tldrgraph-embed: $(TLDRGRAPH_MAKE)/embed.stamp
tldrgraph-state: $(TLDRGRAPH_MAKE)/status.stamp
tldrgraph-contract: $(TLDRGRAPH_DIR)/AGENT_CONTRACT.md

# A stamp is dated from before its stage starts, so a file saved while the stage runs is newer
# than it and triggers the next build.
$(TLDRGRAPH_MAKE)/extract.stamp: $(TLDRGRAPH_SOURCES) $(TLDRGRAPH_MAKE)/sources.list $(TLDRGRAPH_EXES)
	@touch $@.new
	$(TLDRGRAPH_BIN)tg-extract --root $(TLDRGRAPH_ROOT) -o $(TLDRGRAPH_MAKE)/extract.ndjson $(TLDRGRAPH_ROOT)
	@mv -f $@.new $@

# The agent's layer overrides live in intents.ndjson.
$(TLDRGRAPH_MAKE)/classify.stamp: $(TLDRGRAPH_MAKE)/extract.ndjson $(TLDRGRAPH_CONFIG) $(TLDRGRAPH_INTENTS) $(TLDRGRAPH_MAKE)/config.state $(TLDRGRAPH_EXES)
	@touch $@.new
	$(TLDRGRAPH_BIN)tg-classify -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/extract.ndjson -o $(TLDRGRAPH_MAKE)/classify.ndjson
	@mv -f $@.new $@

# tg-plan reads the `plan:` settings and the approval; make never approves (`--yes` is the
# user's word, given through `tldrgraph init --yes`).
$(TLDRGRAPH_MAKE)/plan.stamp: $(TLDRGRAPH_MAKE)/classify.ndjson $(TLDRGRAPH_CONFIG) $(TLDRGRAPH_APPROVAL) $(TLDRGRAPH_INTENTS) $(TLDRGRAPH_MAKE)/config.state $(TLDRGRAPH_EXES)
	@touch $@.new
	$(TLDRGRAPH_BIN)tg-plan -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/classify.ndjson -o $(TLDRGRAPH_MAKE)/plan.ndjson
	@mv -f $@.new $@

# Intents come from the agent (`tldrgraph enrich --apply`, or an enrichment_response.* dropped in
# .tldrgraph/, applied here and renamed) or, with TLDRGRAPH_LLM_PROVIDER set, an LLM endpoint.
$(TLDRGRAPH_MAKE)/enrich.stamp: $(TLDRGRAPH_MAKE)/plan.ndjson $(TLDRGRAPH_APPROVAL) $(TLDRGRAPH_INTENTS) $(TLDRGRAPH_RESPONSES) $(TLDRGRAPH_MAKE)/config.state $(TLDRGRAPH_EXES)
	@touch $@.new
	@for f in $(TLDRGRAPH_RESPONSES); do \
	  $(TLDRGRAPH_BIN)tg-enrich -q --root $(TLDRGRAPH_ROOT) --apply $$f > /dev/null && \
	  mv -f $$f $$(echo $$f | sed 's/enrichment_response\./enrichment_response.applied./'); \
	done
	$(TLDRGRAPH_BIN)tg-enrich -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/plan.ndjson -o $(TLDRGRAPH_MAKE)/enrich.ndjson
	@mv -f $@.new $@

# Embeddings for every symbol and the search index (only texts that changed are embedded).
$(TLDRGRAPH_MAKE)/embed.stamp: $(TLDRGRAPH_MAKE)/enrich.ndjson $(TLDRGRAPH_EXES)
	@touch $@.new
	$(TLDRGRAPH_BIN)tg-embed -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/enrich.ndjson -o $(TLDRGRAPH_MAKE)/embed.ndjson
	@mv -f $@.new $@

# tg-status records the config's hash, so it reruns on a config edit even when the streams
# came out the same.
$(TLDRGRAPH_MAKE)/status.stamp: $(TLDRGRAPH_MAKE)/embed.ndjson $(TLDRGRAPH_CONFIG) $(TLDRGRAPH_MAKE)/config.state $(TLDRGRAPH_EXES)
	@touch $@.new
	$(TLDRGRAPH_BIN)tg-status -q --root $(TLDRGRAPH_ROOT) -i $(TLDRGRAPH_MAKE)/embed.ndjson > $(TLDRGRAPH_MAKE)/status.json.tmp
	@$(call TLDRGRAPH_REPLACE,$(TLDRGRAPH_MAKE)/status.json)
	@mv -f $@.new $@

# A stream deleted behind its stamp's back: forget the stamp and run its stage again.
$(TLDRGRAPH_MAKE)/extract.ndjson:
	+@rm -f $(TLDRGRAPH_MAKE)/extract.stamp
	+@$(TLDRGRAPH_SUB) tldrgraph-extract
$(TLDRGRAPH_MAKE)/classify.ndjson:
	+@rm -f $(TLDRGRAPH_MAKE)/classify.stamp
	+@$(TLDRGRAPH_SUB) tldrgraph-classify
$(TLDRGRAPH_MAKE)/plan.ndjson:
	+@rm -f $(TLDRGRAPH_MAKE)/plan.stamp
	+@$(TLDRGRAPH_SUB) tldrgraph-plan
$(TLDRGRAPH_MAKE)/enrich.ndjson:
	+@rm -f $(TLDRGRAPH_MAKE)/enrich.stamp
	+@$(TLDRGRAPH_SUB) tldrgraph-enrich
$(TLDRGRAPH_MAKE)/embed.ndjson:
	+@rm -f $(TLDRGRAPH_MAKE)/embed.stamp
	+@$(TLDRGRAPH_SUB) tldrgraph-embed

$(TLDRGRAPH_DIR)/AGENT_CONTRACT.md: $(TLDRGRAPH_EXES)
	$(TLDRGRAPH_BIN)tldrgraph contract $(TLDRGRAPH_ROOT)
	@touch $@

# The state of the last build, without building.
tldrgraph-status:
	@$(TLDRGRAPH_BIN)tldrgraph status $(TLDRGRAPH_ROOT)

tldrgraph-clean:
	rm -rf $(TLDRGRAPH_MAKE)

# Including this fragment leaves the includer's default goal alone.
.DEFAULT_GOAL := $(TLDRGRAPH_SAVED_GOAL)
