#!/usr/bin/env bash
# Speed of tg-extract as ratios against universal-ctags (and the parse-only floor) measured in
# the same run, on the corpora of ../shared/corpora/get.sh. Machines here are shared and noisy:
# each command runs RUNS times (default 3) and the median wall time is reported.
#   usage: bench/speed.sh            env: RUNS, TG (tg-extract), FLOOR (parse_floor), CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
tg="${TG:-$top/target/release/tg-extract}"
floor="${FLOOR:-$top/target/release/examples/parse_floor}"
runs="${RUNS:-3}"
for tool in "$tg" "$floor"; do [ -x "$tool" ] || { echo "missing $tool (run make bench)" >&2; exit 2; }; done
command -v ctags >/dev/null || { echo "universal-ctags (ctags) is not installed" >&2; exit 2; }
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# median wall seconds and max RSS (MB) of a command over $runs runs; `prep` runs before each.
measure() { # name prep cmd...
  local name=$1 prep=$2; shift 2
  local walls=() rss=0
  for _ in $(seq "$runs"); do
    eval "$prep"
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    read -r wall kb < "$work/time"
    walls+=("$wall"); [ "$kb" -gt "$rss" ] && rss=$kb
  done
  median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  printf '%s %s %s\n' "$name" "$median" "$((rss / 1024))"
}

ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
printf '| corpus | files | ctags -R (s) | parse floor (s) | tg-extract cold (s) | no-op rerun (s) | one file touched (s) | cold/ctags | cold/floor | no-op/cold | max RSS cold (MB) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
while IFS=$'\t' read -r name path lang; do
  case "$name" in cpython-stdlib|openssl-src|libgit2-sys) ;; *) continue ;; esac
  copy="$work/$name"; rm -rf "$copy"; cp -r "$path" "$copy"
  lang_flag=$([ "$lang" = python ] && echo Python || echo C)
  read -r _ ct _ < <(measure ctags : ctags --options=NONE -R --languages="$lang_flag" -f "$work/tags" "$copy")
  read -r _ fl _ < <(measure floor : "$floor" "$copy")
  read -r _ cold rss < <(measure cold "rm -rf '$copy/.tldrgraph'" "$tg" -q --root "$copy" "$copy")
  read -r _ noop _ < <(measure noop : "$tg" -q --root "$copy" "$copy")
  victim=$(find "$copy" -name "*.$([ "$lang" = python ] && echo py || echo c)" -size +2k | sort | sed -n 1p)
  read -r _ touched _ < <(measure touched "echo '# touched' >> '$victim'" "$tg" -q --root "$copy" "$copy")
  files=$("$tg" -q --root "$copy" "$copy" | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["files"])')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$files" "$ct" "$fl" "$cold" "$noop" "$touched" \
    "$(ratio "$cold" "$ct")" "$(ratio "$cold" "$fl")" "$(ratio "$noop" "$cold")" "$rss"
  rm -rf "$copy"
done < "$tsv"

# The original Python tldrgraph (PyPI 0.2.0) on the stdlib, cold `init`, in this same run.
# Minutes long and ~2.5 GB of memory, so only on request: BENCH_PEER=1 make bench.
if [ "${BENCH_PEER:-0}" = 1 ]; then
  stdlib=$(awk -F'\t' '$1=="cpython-stdlib"{print $2}' "$tsv")
  copy="$work/peer-stdlib"; cp -r "$stdlib" "$copy"
  read -r _ ours _ < <(measure cold "rm -rf '$copy/.tldrgraph'" "$tg" -q --root "$copy" "$copy")
  rm -rf "$copy/.tldrgraph"
  peer_line=$(NOVIS=1 ENRICH_ROUNDS=0 TIMEOUT=1800 bash "$top/../shared/peers/tldrgraph/run_peer.sh" "$copy" "$work/peer" 2>/dev/null | grep '^01_init_cold' || true)
  peer=$(echo "$peer_line" | awk '{print $3}')
  if [ -n "$peer" ]; then
    echo "peer (tldrgraph 0.2.0) cold init on cpython-stdlib: ${peer} s, max RSS $(echo "$peer_line" | awk '{print $4}') MB; tg-extract cold ${ours} s; ratio $(ratio "$peer" "$ours")x"
  else
    echo "peer run failed (see $top/../shared/peers/tldrgraph/run_peer.sh)" >&2
  fi
fi
