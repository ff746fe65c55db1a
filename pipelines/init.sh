#!/usr/bin/env bash
# The canonical tldrgraph pipeline written out in plain shell: what `tldrgraph init --json` runs.
# It gives the same final state (one JSON object on stdout) and the same artifacts in
# .tldrgraph/; `tldrgraph init` adds the repository lock for the whole run and turns a stage's
# failure into an error payload.
#   usage: pipelines/init.sh [REPO [TG-PLAN FLAGS]]
#   env:   TLDRGRAPH_BIN (directory of the binaries, with a trailing slash; default: PATH)
set -euo pipefail
root="${1:-.}"
bin="${TLDRGRAPH_BIN:-}"
"${bin}tldrgraph" contract "$root"
# Flags for tg-plan (`--yes`, `--batch N`, `--limit N`, `--enrich off`) follow the repository;
# tg-enrich reads the batch size from the approval `--yes` records and gets `--enrich off` too.
# A dropped .tldrgraph/enrichment_response.* is applied first, as `tldrgraph init` does.
shift || true
enrich=()
prev=""
for arg in "$@"; do
  if [ "$prev" = "--enrich" ]; then enrich=(--enrich "$arg"); fi
  case "$arg" in --enrich=*) enrich=("$arg") ;; esac
  prev="$arg"
done
# An answer the agent dropped for the next run is applied first, then renamed (as init does).
for ext in json ndjson yaml yml; do
  response="$root/.tldrgraph/enrichment_response.$ext"
  if [ -f "$response" ]; then
    "${bin}tg-enrich" --root "$root" --apply "$response" > /dev/null
    mv -f "$response" "$root/.tldrgraph/enrichment_response.applied.$ext"
  fi
done
"${bin}tg-extract" --root "$root" "$root" \
  | "${bin}tg-classify" --root "$root" \
  | "${bin}tg-plan" --root "$root" "$@" \
  | "${bin}tg-enrich" --root "$root" ${enrich[@]+"${enrich[@]}"} \
  | "${bin}tg-embed" --root "$root" \
  | "${bin}tg-status" --root "$root"
