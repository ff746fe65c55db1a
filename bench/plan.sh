#!/usr/bin/env bash
# What tg-plan selects on real corpora, and how long ranking takes against extraction.
# Layers: bench/layers_for.py (one per largest top-level directory, plus a catch-all).
# Coverage figures come from .tldrgraph/plan.json; times are medians of RUNS runs (default 3).
#   usage: bench/plan.sh        env: RUNS, CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
bin="$top/target/release"
runs="${RUNS:-3}"
for b in tg-extract tg-classify tg-plan tg-enrich; do [ -x "$bin/$b" ] || { echo "missing $bin/$b (run make bench)" >&2; exit 2; }; done
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
timed() { /usr/bin/time -f "%e" -o "$work/t" "$@" > /dev/null 2>&1; cat "$work/t"; }

echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
printf '| corpus | nodes | eligible | candidates | candidates / eligible | cross-layer call edges | with an eligible end | covered | coverage of those | coverage of all | betweenness mass on candidates | extraction cold (s) | ranking (s) | ranking / extraction | enrich pass (s) | enrich / extraction |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
while IFS=$'\t' read -r name path lang; do
  copy="$work/$name"; rm -rf "$copy"; cp -r "$path" "$copy"
  python3 "$here/layers_for.py" "$copy" --format native
  extract=$(for _ in $(seq "$runs"); do rm -rf "$copy/.tldrgraph/cache"; timed "$bin/tg-extract" -q --root "$copy" "$copy"; done | median)
  "$bin/tg-extract" -q --root "$copy" "$copy" | "$bin/tg-classify" -q --root "$copy" > "$work/classified.ndjson"
  rank=$(for _ in $(seq "$runs"); do timed "$bin/tg-plan" -q --root "$copy" -i "$work/classified.ndjson" --enrich off; done | median)
  # tg-enrich on the approved plan: stored intents onto nodes, the first batch out.
  "$bin/tg-plan" -q --root "$copy" -i "$work/classified.ndjson" --yes > "$work/planned.ndjson"
  enrich=$(for _ in $(seq "$runs"); do timed "$bin/tg-enrich" -q --root "$copy" -i "$work/planned.ndjson"; done | median)
  python3 - "$copy/.tldrgraph/plan.json" "$work/classified.ndjson" "$name" "$extract" "$rank" "$enrich" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
nodes = sum(1 for line in open(sys.argv[2]) if line.startswith('{"type":"node"'))
name, extract, rank, enrich = sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
c, e = len(plan["candidates"]), plan["eligible"]
calls, coverable, covered = plan["cross_layer_calls"], plan["coverable_calls"], plan["covered_calls"]
share = f"{c / e:.3f}" if e else "-"
of = lambda n, d: f"{n / d:.3f}" if d else "-"
print(f"| {name} | {nodes} | {e} | {c} | {share} | {calls} | {coverable} | {covered} | {of(covered, coverable)} | {of(covered, calls)} | {plan['betweenness_covered']:.3f} | {extract:.2f} | {rank:.2f} | {rank / extract:.2f} | {enrich:.2f} | {enrich / extract:.2f} |")
PY
  rm -rf "$copy"
done < "$tsv"
