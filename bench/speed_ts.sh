#!/usr/bin/env bash
# Speed of tg-extract on the TypeScript and JavaScript corpora (bench/ts_corpora.sh) as ratios
# against the parse-only floor in the same run: cold extraction (no cache) and a no-op rerun.
# These corpora are small (10-88 files), so each command runs RUNS times (default 9) and the
# median wall time is reported; process start-up is part of both sides.
#   usage: bench/speed_ts.sh            env: RUNS, TG (tg-extract), FLOOR (parse_floor)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
tg="${TG:-$top/target/release/tg-extract}"
floor="${FLOOR:-$top/target/release/examples/parse_floor}"
runs="${RUNS:-9}"
for tool in "$tg" "$floor"; do [ -x "$tool" ] || { echo "missing $tool (run make bench)" >&2; exit 2; }; done
tsv="$(mktemp)"; work="$(mktemp -d)"; trap 'rm -rf "$work" "$tsv"' EXIT
bash "$here/ts_corpora.sh" > "$tsv"

# median wall seconds of a command over $runs runs; `prep` runs before each.
median() { # prep cmd...
  local prep=$1; shift
  local walls=()
  for _ in $(seq "$runs"); do
    eval "$prep"
    /usr/bin/time -f "%e" -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    walls+=("$(cat "$work/time")")
  done
  printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

ratio() { python3 -c "print(f'{$1 / max($2, 0.001):.2f}')"; }

echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F); runs: $runs"
printf '| corpus | files | parse floor (s) | tg-extract cold (s) | no-op rerun (s) | cold/floor |\n'
printf '|---|---|---|---|---|---|\n'
while IFS=$'\t' read -r name path _lang; do
  copy="$work/$name"; rm -rf "$copy"; cp -r "$path" "$copy"
  files=$(find "$copy" -type f \( -name '*.ts' -o -name '*.tsx' -o -name '*.js' -o -name '*.jsx' -o -name '*.mjs' -o -name '*.cjs' -o -name '*.mts' -o -name '*.cts' \) | wc -l)
  parse=$(median ":" "$floor" "$copy")
  cold=$(median "rm -rf '$copy/.tldrgraph'" "$tg" --root "$copy" "$copy")
  "$tg" --root "$copy" "$copy" > /dev/null 2>&1
  noop=$(median ":" "$tg" --root "$copy" "$copy")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$files" "$parse" "$cold" "$noop" "$(ratio "$cold" "$parse")"
done < "$tsv"

# Each corpus alone takes tens of milliseconds, near the timer's resolution: all four, ten
# copies each, in one tree, give a figure that is not.
all="$work/all-x10"; mkdir -p "$all"
while IFS=$'\t' read -r name path _lang; do
  for i in $(seq 10); do cp -r "$path" "$all/$name-$i"; done
done < "$tsv"
rm -rf "$all"/*/.tldrgraph
files=$(find "$all" -type f \( -name '*.ts' -o -name '*.tsx' -o -name '*.js' -o -name '*.mjs' -o -name '*.d.ts' \) | wc -l)
parse=$(median ":" "$floor" "$all")
cold=$(median "rm -rf '$all/.tldrgraph'" "$tg" --root "$all" "$all")
"$tg" --root "$all" "$all" > /dev/null 2>&1
noop=$(median ":" "$tg" --root "$all" "$all")
printf '| all four, x10 | %s | %s | %s | %s | %s |\n' "$files" "$parse" "$cold" "$noop" "$(ratio "$cold" "$parse")"
