#!/usr/bin/env bash
# The retrieval benchmark of `tldrgraph query` (bench/retrieval.py) on requests, rich and httpx
# from ../shared/corpora/get.sh: Recall@1, Recall@10 and MRR for lexical, semantic and hybrid.
#   usage: bench/retrieval.sh        env: CORPORA_TSV
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
tsv="${CORPORA_TSV:-$(mktemp)}"
[ -s "$tsv" ] || bash "$top/../shared/corpora/get.sh" > "$tsv"
corpora=()
for name in requests rich httpx; do
  corpora+=("$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$tsv")")
done
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
echo "| corpus | mode | queries | Recall@1 | Recall@10 | MRR | ms per query |"
echo "|---|---|---|---|---|---|---|"
python3 "$here/retrieval.py" "$top/target/release" "${corpora[@]}"
