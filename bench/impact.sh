#!/usr/bin/env bash
# `tldrgraph impact --since` on real histories (issue 21): a corpus with a history made here
# from two releases of a package on PyPI (the older sdist committed, then the newer one over it),
# and this project's own history. For each: impact's time against a cold `init` of the same
# tree in the same run, the changed symbols against the diff's hunks, and (Python) impact's
# changed symbols against an `ast` oracle (bench/accuracy/impact_oracle.py).
#   usage: bench/impact.sh        env: PACKAGE (default httpx), OLD (0.27.0), NEW (0.27.2), SINCE (HEAD~20)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/.."
bin="$top/target/release"
[ -x "$bin/tldrgraph" ] || { echo "missing $bin/tldrgraph (run make build)" >&2; exit 2; }
package="${PACKAGE:-httpx}"; old="${OLD:-0.27.0}"; new="${NEW:-0.27.2}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"

median3() { sort -n | sed -n 2p; }
cold_store() { find "$1/.tldrgraph" -mindepth 1 ! -name layers.config.yaml -exec rm -rf {} +; }
measure() {  # repo since label; each time the median of 3 runs
  local repo="$1" since="$2" label="$3" cold warm uncached t0
  cold=$(for _ in 1 2 3; do cold_store "$repo"; t0=$(date +%s.%N); "$bin/tldrgraph" init --json --enrich off "$repo" > /dev/null; secs "$t0" "$(date +%s.%N)"; done | median3)
  warm=$(for _ in 1 2 3; do t0=$(date +%s.%N); "$bin/tldrgraph" impact --json --since "$since" --root "$repo" > "$work/impact.json"; secs "$t0" "$(date +%s.%N)"; done | median3)
  uncached=$(for _ in 1 2 3; do cold_store "$repo"; t0=$(date +%s.%N); "$bin/tldrgraph" impact --json --since "$since" --root "$repo" > /dev/null; secs "$t0" "$(date +%s.%N)"; done | median3)
  local hunks files
  hunks=$(git -C "$repo" diff -U0 "$since" -- '*.py' '*.rs' '*.c' '*.h' '*.ts' '*.js' | grep -c '^@@' || true)
  files=$(git -C "$repo" diff --name-only "$since" -- '*.py' '*.rs' '*.c' '*.h' '*.ts' '*.js' | wc -l)
  python3 - "$work/impact.json" "$label" "$cold" "$warm" "$uncached" "$hunks" "$files" <<'PY'
import json, sys
f = json.load(open(sys.argv[1])); s = f["summary"]
label, cold, warm, uncached, hunks, files = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7]
print(f"\n### {label}\n")
print(f"diff: {files} source files, {hunks} hunks; impact: {s['changed']} changed, {s['added']} added, {s['removed']} removed, {s['moved']} moved symbols in {s['files']} files; {s['callers']} callers (depth 3), {s['tests']} tests\n")
print("| measure | seconds | / cold init |")
print("|---|---|---|")
print(f"| cold `init --enrich off` | {cold:.2f} | 1.00 |")
print(f"| `impact --since` after a build (extraction cache warm) | {warm:.2f} | {warm / cold:.2f} |")
print(f"| `impact --since` from an empty store (no build, no cache) | {uncached:.2f} | {uncached / cold:.2f} |")
PY
}

# A corpus with a real release diff: OLD committed, NEW applied over it.
repo="$work/$package"; mkdir -p "$repo" "$work/dl"
for version in "$old" "$new"; do
  python3 -m pip download -q --no-binary :all: --no-deps -d "$work/dl" "$package==$version" >&2
done
mkdir -p "$work/old" "$work/new"
tar -xzf "$work/dl/$package-$old.tar.gz" -C "$work/old" --strip-components=1
tar -xzf "$work/dl/$package-$new.tar.gz" -C "$work/new" --strip-components=1
cp -r "$work/old/." "$repo/"
git -C "$repo" init -q -b main
git -C "$repo" -c user.name=b -c user.email=b@example.invalid add -A
git -C "$repo" -c user.name=b -c user.email=b@example.invalid commit -q -m "$package $old"
find "$repo" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
cp -r "$work/new/." "$repo/"
git -C "$repo" -c user.name=b -c user.email=b@example.invalid add -A
git -C "$repo" -c user.name=b -c user.email=b@example.invalid commit -q -m "$package $new"
python3 "$here/layers_for.py" "$repo" --format native
measure "$repo" HEAD~1 "$package $old → $new (PyPI sdists)"
python3 "$here/accuracy/impact_oracle.py" "$work/old" "$work/new" "$work/impact.json"

# This project's own history.
self="$work/self"; git clone -q "$top" "$self"
mkdir -p "$self/.tldrgraph"; cp "$top/.tldrgraph/layers.config.yaml" "$self/.tldrgraph/" 2>/dev/null || python3 "$here/layers_for.py" "$self" --format native
since="${SINCE:-HEAD~20}"
measure "$self" "$since" "tldrgraph itself, $since → HEAD"
