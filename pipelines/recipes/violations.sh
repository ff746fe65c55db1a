#!/usr/bin/env bash
# The layering violations of a classified stream, as a table: source layer, target layer, kind,
# source symbol, target symbol, line. Reads a stream on stdin (or the stream files given).
#   tg-extract . | tg-classify | pipelines/recipes/violations.sh
set -euo pipefail
# Aligned columns where `column` exists (util-linux), tab-separated otherwise.
table() { if command -v column >/dev/null; then column -t -s $'\t'; else cat; fi; }
jq -r -s '
  (map(select(.type == "node")) | map({key: .id, value: .layer}) | from_entries) as $layer
  | ["from", "to", "kind", "src", "dst", "line"],
    (.[] | select(.type == "edge" and .violation == true)
         | [$layer[.src], $layer[.dst], .kind, .src, .dst, (.line | tostring)])
  | @tsv' "$@" | table
