#!/usr/bin/env bash
# The map page (issue 23) on the CPython standard library: the size of the one file, the time
# `tldrgraph ui` takes to write it against a no-op `tldrgraph status` and a lexical `query` in
# the same run, and, in Debian's Chromium (tests/ui/drive.mjs), the time to first render, to
# list search results and to open a symbol and a layer. The stdlib is laid out in layers by
# bench/layers_for.py and built in zero-token mode. Then starlette with its answer-benchmark
# layers, for the screenshots (target/ui-bench/starlette/; README's picture is overview.png).
#   usage: bench/ui.sh        env: RUNS (default 5), CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
bin="$top/target/release"
runs="${RUNS:-5}"
for b in tg-extract tg-classify tg-plan tg-enrich tg-embed tg-query tg-status tldrgraph; do [ -x "$bin/$b" ] || { echo "missing $bin/$b (run make build)" >&2; exit 2; }; done
bash "$top/tests/ui/deps.sh" >/dev/null
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
corpus() { awk -F'\t' -v n="$1" '$1 == n {print $2}' "$tsv"; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
out="$top/target/ui-bench"; mkdir -p "$out"
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1; python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.4f}')" "$s" "$(date +%s.%N)"; }

echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
copy="$work/stdlib"; cp -r "$(corpus cpython-stdlib)" "$copy"
python3 "$here/layers_for.py" "$copy" --format native
"$bin/tldrgraph" init --json --enrich off "$copy" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["status"]=="done", p; print("stdlib built:", p["nodes_count"], "nodes,", p["edges_count"], "edges")'
echo "graph.json: $(stat -c %s "$copy/.tldrgraph/graph.json") bytes"
ui_t=$(for _ in $(seq "$runs"); do seconds "$bin/tldrgraph" ui "$copy"; done | median)
status_t=$(for _ in $(seq "$runs"); do seconds "$bin/tldrgraph" status "$copy"; done | median)
query_t=$(for _ in $(seq "$runs"); do seconds "$bin/tldrgraph" query "open a url" --mode lexical --root "$copy"; done | median)
page="$copy/.tldrgraph/map.html"
echo "map.html: $(stat -c %s "$page") bytes; ui $ui_t s (median of $runs) = $(python3 -c "print(f'{$ui_t/$status_t:.1f}')")x a no-op status ($status_t s), $(python3 -c "print(f'{$ui_t/$query_t:.2f}')")x a lexical query ($query_t s)"
for _ in $(seq "$runs"); do
  node "$top/tests/ui/drive.mjs" "{\"page\": \"$page\", \"search\": \"urlopen\", \"open\": \"urllib/request.py::urlopen\", \"layer\": \"shared\"}"
done > "$work/reports.ndjson"
python3 - "$work/reports.ndjson" <<'PY'
import json, statistics, sys
reports = [json.loads(line) for line in open(sys.argv[1])]
for r in reports:
    assert not r["requests"] and not r["errors"], r
    assert r["symbol"]["id"] == "urllib/request.py::urlopen", r["symbol"]
def med(k): return statistics.median(r[k] for r in reports)
print(f"chromium, median of {len(reports)} loads from disk: first render {med('rendered_ms'):.0f} ms; "
      f"search results {med('search_ms'):.0f} ms (120 ms of it the input's debounce); "
      f"open a symbol {med('symbol_ms'):.0f} ms (first open builds the call index); open a layer {med('layer_ms'):.0f} ms")
PY
cp "$page" "$out/stdlib.map.html"

star="$work/starlette"; cp -r "$(corpus starlette)" "$star"; mkdir -p "$star/.tldrgraph"
cp "$here/answers/starlette.layers.config.yaml" "$star/.tldrgraph/layers.config.yaml"
"$bin/tldrgraph" init --json --enrich off "$star" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["status"]=="done", p'
"$bin/tldrgraph" ui "$star" >/dev/null 2>&1
node "$top/tests/ui/drive.mjs" "{\"page\": \"$star/.tldrgraph/map.html\", \"shots\": \"$out/starlette\", \"search\": \"Router\", \"open\": \"starlette/routing.py::Router\", \"layer\": \"app\", \"width\": 1400, \"height\": 860}" \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); assert not r["requests"] and not r["errors"], r; print("starlette:", r["totals"], "; screenshots in target/ui-bench/starlette/")'
