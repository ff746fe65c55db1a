#!/usr/bin/env bash
# The Linux kernel on this machine (issue 22): Debian's linux-source-6.1, fetched with apt and
# unpacked under $KERNEL_DIR (default ~/.cache/tldrgraph-corpora/linux-source-6.1), with the two
# lines Debian's packaging appends to the top-level .gitignore (`/*`, `!/debian/`) dropped so the
# sources are not all ignored. Measures, in one run: universal-ctags (definitions only) and
# `find` as floors, cold `init` to needs_layers, a no-op `init`, a no-op `tg-extract`, and
# `tldrgraph status`, each with its peak RSS (GNU time).
#   usage: bench/scale.sh        env: KERNEL_DIR, RUNS (default 3), SKIP_COLD=1
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../target/release"
runs="${RUNS:-3}"
for b in tg-extract tg-classify tg-plan tg-enrich tg-embed tg-query tg-status tldrgraph; do [ -x "$bin/$b" ] || { echo "missing $bin/$b (run make build)" >&2; exit 2; }; done
command -v /usr/bin/time >/dev/null || { echo "GNU time (/usr/bin/time) is needed: apt-get install time" >&2; exit 2; }
dir="${KERNEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tldrgraph-corpora/linux-source-6.1}"
if [ ! -f "$dir/Makefile" ]; then
  parent="$(dirname "$dir")"; mkdir -p "$parent"; work="$(mktemp -d)"
  (cd "$work" && apt-get download linux-source-6.1 >&2)
  dpkg-deb --fsys-tarfile "$work"/linux-source-6.1_*.deb | tar -x -C "$work" ./usr/src/linux-source-6.1.tar.xz
  tar -xJf "$work/usr/src/linux-source-6.1.tar.xz" -C "$parent"
  [ "$parent/linux-source-6.1" = "$dir" ] || mv "$parent/linux-source-6.1" "$dir"
  rm -rf "$work"
fi
sed -i '/^\/\*$/d; /^!\/debian\/$/d' "$dir/.gitignore"
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
echo "tree: $dir, $(find "$dir" -name '*.[ch]' | wc -l) .c/.h files"
measure() { # label, command...
  local label="$1"; shift
  /usr/bin/time -f "$label: %e s, peak RSS %M KB" "$@" >/dev/null 2>"$tmp" || { cat "$tmp" >&2; exit 1; }
  tail -1 "$tmp"
}
tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
for _ in $(seq "$runs"); do measure "find (walk floor)" find "$dir" -name '*.[ch]'; done
if command -v ctags >/dev/null; then measure "universal-ctags, definitions only" ctags -R -f /dev/null --languages=C "$dir"; fi
if [ -z "${SKIP_COLD:-}" ]; then
  rm -rf "$dir/.tldrgraph"
  measure "init cold, to needs_layers" "$bin/tldrgraph" init --json "$dir"
fi
"$bin/tldrgraph" init --json "$dir" >/dev/null   # records the stamps a no-op reads
for _ in $(seq "$runs"); do measure "init no-op" "$bin/tldrgraph" init --json "$dir"; done
for _ in $(seq "$runs"); do measure "tg-extract no-op (as init runs it)" "$bin/tg-extract" --root "$dir" "$dir"; done
for _ in $(seq "$runs"); do measure "status" "$bin/tldrgraph" status "$dir"; done
echo ".tldrgraph/: $(du -sh "$dir/.tldrgraph" | cut -f1)"
