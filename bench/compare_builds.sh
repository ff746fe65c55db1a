#!/usr/bin/env bash
# Two builds of tg-extract on the corpora of ../shared/corpora/get.sh: whether their outputs are
# byte-identical (a refactor must keep them so), and the cold wall time of each on every corpus,
# interleaved run by run so that the shared machine's noise falls on both alike.
#   usage: bench/compare_builds.sh BEFORE_BIN_DIR AFTER_BIN_DIR     env: RUNS (default 5), CORPORA_TSV
#   e.g.:  git worktree add /tmp/before REV && (cd /tmp/before && cargo build --release)
#          bench/compare_builds.sh /tmp/before/target/release target/release
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
before="$1/tg-extract"; after="$2/tg-extract"; runs="${RUNS:-5}"
for tool in "$before" "$after"; do [ -x "$tool" ] || { echo "missing $tool" >&2; exit 2; }; done
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$here/../../shared/corpora/get.sh" > "$tsv"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
printf '| corpus | output | before cold (s) | after cold (s) | after/before |\n|---|---|---|---|---|\n'
status=0
while IFS=$'\t' read -r name path _; do
  copy="$work/$name"; rm -rf "$copy"; cp -r "$path" "$copy"
  : > "$work/times"
  for _ in $(seq "$runs"); do
    for side in before after; do
      bin=$([ "$side" = before ] && echo "$before" || echo "$after")
      rm -rf "$copy/.tldrgraph"
      /usr/bin/time -f "$side %e" -a -o "$work/times" "$bin" -q --root "$copy" "$copy" > "$work/$side.ndjson"
    done
  done
  same=$(cmp -s "$work/before.ndjson" "$work/after.ndjson" && echo identical || echo DIFFERENT)
  [ "$same" = identical ] || status=1
  python3 - "$work/times" "$name" "$same" <<'PY'
import statistics, sys
times = {"before": [], "after": []}
for line in open(sys.argv[1]):
    side, wall = line.split()
    times[side].append(float(wall))
b, a = statistics.median(times["before"]), statistics.median(times["after"])
print(f"| {sys.argv[2]} | {sys.argv[3]} | {b:.2f} | {a:.2f} | {a / b if b else 1:.2f} |")
PY
  rm -rf "$copy"
done < "$tsv"
exit "$status"
