#!/usr/bin/env bash
# The MCP server on the CPython standard library (issue 20): latency per tool, warm, against
# the CLI's process-per-call time in the same run; the server's peak memory; one changed file
# answered through the server. The stdlib is laid out in layers by bench/layers_for.py and built
# in zero-token mode first.
#   usage: bench/mcp.sh        env: RUNS (default 5), CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
bin="$top/target/release"
for b in tg-extract tg-classify tg-plan tg-enrich tg-embed tg-query tg-status tldrgraph; do [ -x "$bin/$b" ] || { echo "missing $bin/$b (run make build)" >&2; exit 2; }; done
bash "$top/tests/mcp/deps.sh"
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
stdlib="$(awk -F'\t' '$1 == "cpython-stdlib" {print $2}' "$tsv")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
copy="$work/stdlib"; cp -r "$stdlib" "$copy"
python3 "$here/layers_for.py" "$copy" --format native
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
start=$(date +%s.%N)
"$bin/tldrgraph" init --json --enrich off "$copy" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["status"]=="done", p; print("built:", p["nodes_count"], "nodes,", p["edges_count"], "edges")'
echo "cold init: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)") s"
python3 "$here/mcp_latency.py" "$bin/tldrgraph" "$copy" "${RUNS:-5}"
