#!/usr/bin/env bash
# The agent contract end to end: `tldrgraph init --json` (tg-extract | tg-classify | tg-plan |
# tg-enrich | tg-embed | tg-status)
# on the Python corpora of ../shared/corpora/get.sh, cold and no-op, then with a layers config,
# as median wall times of RUNS runs (default 3). With BENCH_PEER=1 the original Python tldrgraph
# (PyPI 0.2.0, through ../shared/peers/tldrgraph/run_peer.sh) runs its first `init` on the same
# corpus in the same run, and the ratio is printed.
#   usage: bench/contract.sh        env: RUNS, TLDRGRAPH, CORPORA_TSV, BENCH_PEER
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
tg="${TLDRGRAPH:-$top/target/release/tldrgraph}"
runs="${RUNS:-3}"
[ -x "$tg" ] || { echo "missing $tg (run make bench)" >&2; exit 2; }
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

measure() { # prep cmd... → "median_wall max_rss_mb"
  local prep=$1; shift
  local walls=() rss=0
  for _ in $(seq "$runs"); do
    eval "$prep"
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2> "$work/stderr" || { cat "$work/stderr" "$work/out" >&2; exit 1; }
    read -r wall kb < "$work/time"
    walls+=("$wall"); [ "$kb" -gt "$rss" ] && rss=$kb
  done
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" "$((rss / 1024))"
}
field() { python3 -c "import json,sys; print(json.load(open('$work/out'))['$1'])"; }
ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }

# Layers as the peer's driver generates them: one per top-level directory holding source files
# (at most 5) plus a catch-all, in the original tool's format (so this also reads that format).
layers_for() { python3 "$here/layers_for.py" "$1" --format original; }

echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
printf '| corpus | nodes | edges | init cold → needs_layers (s) | max RSS (MB) | init no-op (s) | init with layers → needs_confirmation (s) | candidates | init --yes → needs_enrichment (s) | layers | status (s) |'
[ "${BENCH_PEER:-0}" = 1 ] && printf ' peer first init (s) | peer max RSS (MB) | peer/ours cold |'
printf '\n|---|---|---|---|---|---|---|---|---|---|---|'
[ "${BENCH_PEER:-0}" = 1 ] && printf -- '---|---|---|'
printf '\n'
while IFS=$'\t' read -r name path lang; do
  [ "$lang" = python ] || continue
  copy="$work/$name"; rm -rf "$copy"; cp -r "$path" "$copy"
  read -r cold rss < <(measure "rm -rf '$copy/.tldrgraph'" "$tg" init "$copy" --json)
  [ "$(field status)" = needs_layers ] || { echo "$name: expected needs_layers" >&2; exit 1; }
  read -r noop _ < <(measure : "$tg" init "$copy" --json)
  layers_for "$copy"
  # init.key removed: these columns time the stages, not the answer from the last build.
  read -r plan_s _ < <(measure "rm -f '$copy/.tldrgraph/approval.json' '$copy/.tldrgraph/init.key'" "$tg" init "$copy" --json)
  [ "$(field status)" = needs_confirmation ] || { echo "$name: expected needs_confirmation" >&2; cat "$work/out" >&2; exit 1; }
  candidates=$(field candidates_count)
  read -r done_s _ < <(measure "rm -f '$copy/.tldrgraph/init.key'" "$tg" init "$copy" --json --yes)
  [ "$(field status)" = needs_enrichment ] || [ "$(field status)" = done ] || { echo "$name: expected needs_enrichment" >&2; cat "$work/out" >&2; exit 1; }
  # The counts, from a zero-token run to done (not timed).
  "$tg" init "$copy" --json --enrich off > "$work/out"
  [ "$(field status)" = done ] || { echo "$name: expected done" >&2; cat "$work/out" >&2; exit 1; }
  nodes=$(field nodes_count); edges=$(field edges_count); layers=$(field layers_count)
  read -r st _ < <(measure : "$tg" status "$copy" --json)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$name" "$nodes" "$edges" "$cold" "$rss" "$noop" "$plan_s" "$candidates" "$done_s" "$layers" "$st"
  if [ "${BENCH_PEER:-0}" = 1 ]; then
    peer_copy="$work/peer-$name"; rm -rf "$peer_copy"; cp -r "$path" "$peer_copy"
    line=$(NOVIS=1 ENRICH_ROUNDS=0 TIMEOUT=1800 bash "$top/../shared/peers/tldrgraph/run_peer.sh" "$peer_copy" "$work/peer-work-$name" 2>/dev/null | grep '^01_init_cold' || true)
    peer=$(echo "$line" | awk '{print $3}'); peer_rss=$(echo "$line" | awk '{print $4}')
    if [ -n "$peer" ]; then printf ' %s | %s | %s |' "$peer" "$peer_rss" "$(ratio "$peer" "$cold")"; else printf ' failed | | |'; fi
    rm -rf "$peer_copy" "$work/peer-work-$name"
  fi
  printf '\n'
  rm -rf "$copy"
done < "$tsv"
