#!/usr/bin/env bash
# The cost of the checksums (issue 9) on the stdlib: release stages of a build before them
# (OLD, a target/release directory built from b5e7ce3) against this build (NEW), alternating,
# median of 5 runs each.
#   usage: OLD=/tmp/oldtarget/release bench/integrity.sh   (STDLIB: the cpython-stdlib corpus)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${STDLIB:-$HOME/.cache/tldrgraph-corpora/cpython-stdlib}"
declare -A bin=([old]="${OLD:?OLD=path/to/old/target/release}" [new]="${NEW:-$here/../target/release}")
for v in old new; do
  rm -rf /tmp/hb-$v && cp -r $src /tmp/hb-$v && mkdir -p /tmp/hb-$v/.tldrgraph
  python3 "$here/layers_for.py" /tmp/hb-$v --format original > /tmp/hb-$v/.tldrgraph/layers.config.yaml
  b=${bin[$v]}
  (cd /tmp/hb-$v && $b/tg-extract . 2>/dev/null | $b/tg-classify 2>/dev/null | $b/tg-plan 2>/dev/null | $b/tg-enrich 2>/dev/null > /tmp/hb-$v.stream)
  (cd /tmp/hb-$v && $b/tg-embed < /tmp/hb-$v.stream > /dev/null 2>&1)
done
t() { /usr/bin/time -f %e -o /tmp/hb.t "$@" > /dev/null 2>&1; cat /tmp/hb.t; }
for case in noop_extract touched_extract embed_warm embed_cold; do
  declare -A times=([old]="" [new]="")
  for i in 1 2 3 4 5; do
    for v in old new; do
      b=${bin[$v]}; cd /tmp/hb-$v
      case $case in
        noop_extract) x=$(t $b/tg-extract .);;
        touched_extract) echo "# $i" >> os.py; x=$(t $b/tg-extract .);;
        embed_warm) x=$(t sh -c "$b/tg-embed < /tmp/hb-$v.stream");;
        embed_cold) rm -f .tldrgraph/search.bin .tldrgraph/vectors.i8 .tldrgraph/search.sum; x=$(t sh -c "$b/tg-embed < /tmp/hb-$v.stream");;
      esac
      times[$v]="${times[$v]} $x"
    done
  done
  med() { printf '%s\n' $1 | sort -n | sed -n 3p; }
  o=$(med "${times[old]}"); n=$(med "${times[new]}")
  echo "$case old ${o}s new ${n}s ratio $(python3 -c "print(f'{$n/$o:.2f}')")"
done
