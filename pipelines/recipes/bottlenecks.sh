#!/usr/bin/env bash
# The most depended-upon symbols of one directory: distinct callers, importers and subclasses
# from anywhere (`contains` not counted), most first, with how many of them are in another layer.
#   tg-extract . | tg-classify | pipelines/recipes/bottlenecks.sh pkg/ [TOP]
set -euo pipefail
# Aligned columns where `column` exists (util-linux), tab-separated otherwise.
table() { if command -v column >/dev/null; then column -t -s $'\t'; else cat; fi; }
dir="${1:?usage: bottlenecks.sh DIR [TOP] < stream}"
top="${2:-10}"
jq -r -s --arg d "$dir" --argjson top "$top" '
  (map(select(.type == "node")) | map({key: .id, value: .}) | from_entries) as $nodes
  | [.[] | select(.type == "edge" and .kind != "contains" and ($nodes[.dst].file // "" | startswith($d)))]
  | group_by(.dst)
  | map({id: .[0].dst, kind: $nodes[.[0].dst].kind, fan_in: (map(.src) | unique | length),
         cross_layer: (map(select(.cross_layer == true) | .src) | unique | length)})
  | sort_by(-.fan_in, .id) | .[:$top][]
  | [(.fan_in | tostring), (.cross_layer | tostring), .kind, .id] | @tsv' \
  | { printf 'fan_in\tcross_layer\tkind\tsymbol\n'; cat; } | table
