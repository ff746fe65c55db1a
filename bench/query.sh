#!/usr/bin/env bash
# Embedding and query speed on the CPython standard library (issue 7): tg-embed cold (every text
# embedded) and warm (nothing changed), a query (`tldrgraph query`, hybrid, top 5), each as a
# ratio to a cold tg-extract of the same tree in the same run. Medians of RUNS runs (default 3).
#   usage: bench/query.sh        env: RUNS, CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
bin="$top/target/release"
runs="${RUNS:-3}"
for b in tg-extract tg-classify tg-plan tg-enrich tg-embed tg-query tldrgraph; do [ -x "$bin/$b" ] || { echo "missing $bin/$b (run make build)" >&2; exit 2; }; done
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
stdlib="$(awk -F'\t' '$1 == "cpython-stdlib" {print $2}' "$tsv")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
timed() { /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null 2>&1; cat "$work/t"; }
copy="$work/stdlib"; cp -r "$stdlib" "$copy"
python3 "$here/layers_for.py" "$copy" --format native
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
extract=$(for _ in $(seq "$runs"); do rm -rf "$copy/.tldrgraph/cache"; timed "$bin/tg-extract" -q --root "$copy" "$copy" | cut -d' ' -f1; done | median)
"$bin/tg-extract" -q --root "$copy" "$copy" | "$bin/tg-classify" -q --root "$copy" | "$bin/tg-plan" -q --root "$copy" --enrich off | "$bin/tg-enrich" -q --root "$copy" --enrich off > "$work/enriched.ndjson"
cold=$(for _ in $(seq "$runs"); do rm -f "$copy/.tldrgraph/search.bin" "$copy/.tldrgraph/vectors.i8"; timed "$bin/tg-embed" -q --root "$copy" -i "$work/enriched.ndjson"; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
warm=$(for _ in $(seq "$runs"); do timed "$bin/tg-embed" -q --root "$copy" -i "$work/enriched.ndjson"; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
symbols=$(python3 -c "import sys; print(sum(1 for l in open(sys.argv[1]) if l.startswith('{\"type\":\"node\"') and '\"kind\":\"module\"' not in l))" "$work/enriched.ndjson")
queries=("parse a URL into its components" "read a configuration file" "send an email message" "compress data with zlib" "start a thread pool")
query=$(for q in "${queries[@]}"; do for _ in $(seq "$runs"); do timed "$bin/tldrgraph" query --root "$copy" "$q" | cut -d' ' -f1; done; done | sort -n | sed -n "$(( (runs * ${#queries[@]} + 1) / 2 ))p")
index=$(stat -c %s "$copy/.tldrgraph/search.bin"); vectors=$(stat -c %s "$copy/.tldrgraph/vectors.i8")
python3 - "$extract" "$cold" "$warm" "$query" "$symbols" "$index" "$vectors" <<'PY'
import sys
extract = float(sys.argv[1]); cold_s, cold_kb = sys.argv[2].split(); warm_s, warm_kb = sys.argv[3].split()
query, symbols, index, vectors = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
print("| measure | seconds | / cold extraction | max RSS (MB) |")
print("|---|---|---|---|")
print(f"| tg-extract cold | {extract:.2f} | 1.00 | |")
print(f"| tg-embed cold ({symbols} symbols embedded, index built) | {float(cold_s):.2f} | {float(cold_s) / extract:.2f} | {int(cold_kb) / 1024:.0f} |")
print(f"| tg-embed warm (nothing changed) | {float(warm_s):.2f} | {float(warm_s) / extract:.2f} | {int(warm_kb) / 1024:.0f} |")
print(f"| tldrgraph query (hybrid, top 5; median of 5 queries) | {query:.2f} | {query / extract:.2f} | |")
print(f"\nsearch.bin {index / 1e6:.1f} MB, vectors.i8 {vectors / 1e6:.1f} MB")
PY
