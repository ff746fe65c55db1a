#!/usr/bin/env bash
# The Linux kernel on this machine (issue 22): Debian's linux-source-6.1, fetched with apt and
# unpacked under $KERNEL_DIR (default ~/.cache/tldrgraph-corpora/linux-source-6.1), with the two
# lines Debian's packaging appends to the top-level .gitignore (`/*`, `!/debian/`) dropped so the
# sources are not all ignored. Measures, in one run, each with its peak RSS (GNU time: the
# largest process of a pipeline) and, for the pipelines, the peak of each stage (ps, sampled
# every 0.2 s): universal-ctags (definitions only), `find` and the tree-sitter parse floor as
# floors; cold `init` to needs_layers; cold `init` with bench/kernel.layers.config.yaml present
# from the start, to needs_confirmation, then `--enrich off` to done; one changed file to done;
# answers (query, trace, dead-code); no-op `init`, no-op `tg-extract` and `status`; check, ui and
# impact of one changed file; a no-op `tg-extract -o FILE`; the MCP server's warm answers.
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
stage_peaks() { # label, command...: as measure, then each stage's peak RSS
  local label="$1"; shift
  ( declare -A peak; trap 'for k in "${!peak[@]}"; do printf "%s=%s MB " "$k" $(( ${peak[$k]} / 1024 )); done; echo; exit' TERM
    while true; do
      while read -r rss comm; do
        [[ "$comm" == tg-* ]] || continue
        (( rss > ${peak[$comm]:-0} )) && peak[$comm]=$rss
      done < <(ps -eo rss=,comm=)
      sleep 0.2
    done ) > "$tmp.peaks" &
  local sampler=$!
  measure "$label" "$@"
  kill -TERM "$sampler"; wait "$sampler" 2>/dev/null || true
  echo "  per stage: $(cat "$tmp.peaks")"
}
init=("$bin/tldrgraph" init --json)   # then the options, then "$dir"
tmp="$(mktemp)"; trap 'rm -f "$tmp" "$tmp.peaks"' EXIT
for _ in $(seq "$runs"); do measure "find (walk floor)" find "$dir" -name '*.[ch]'; done
if command -v ctags >/dev/null; then measure "universal-ctags, definitions only" ctags -R -f /dev/null --languages=C "$dir"; fi
if [ -x "$bin/examples/parse_floor" ]; then measure "tree-sitter parse floor" "$bin/examples/parse_floor" "$dir"; fi
if [ -z "${SKIP_COLD:-}" ]; then
  rm -rf "$dir/.tldrgraph"
  stage_peaks "init cold, to needs_layers" "${init[@]}" "$dir"
  rm -rf "$dir/.tldrgraph"; mkdir -p "$dir/.tldrgraph"
  cp "$here/kernel.layers.config.yaml" "$dir/.tldrgraph/layers.config.yaml"
  stage_peaks "init cold with a 6-layer config, to needs_confirmation" "${init[@]}" "$dir"
  stage_peaks "init --enrich off, to done" "${init[@]}" --enrich off "$dir"
fi
# One changed file: a function appended to kernel/fork.c, then the file restored.
cp "$dir/kernel/fork.c" "$tmp.fork"
printf '\nint tg_bench_probe(void)\n{\n\treturn 0;\n}\n' >> "$dir/kernel/fork.c"
stage_peaks "one changed file, to done" "${init[@]}" "$dir"
cp "$tmp.fork" "$dir/kernel/fork.c"; rm -f "$tmp.fork"
stage_peaks "the file restored, to done" "${init[@]}" "$dir"
# Answers: the first of each is the first after the build; the others show the spread.
for _ in $(seq "$runs"); do measure "query (hybrid)" "$bin/tldrgraph" query --root "$dir" "allocate pages for the slab cache"; done
for _ in $(seq "$runs"); do measure "query (lexical)" "$bin/tldrgraph" query --mode lexical --root "$dir" "allocate pages for the slab cache"; done
for _ in $(seq "$runs"); do measure "trace" "$bin/tldrgraph" trace --root "$dir" kernel_clone copy_process; done
measure "dead-code" "$bin/tldrgraph" dead-code --root "$dir"
for _ in $(seq "$runs"); do measure "init no-op" "${init[@]}" "$dir"; done
for _ in $(seq "$runs"); do measure "tg-extract no-op (as init runs it)" "$bin/tg-extract" --root "$dir" "$dir"; done
for _ in $(seq "$runs"); do measure "status" "$bin/tldrgraph" status "$dir"; done
# Readers of the whole graph: check, the map page, impact of one changed file against the build.
# check exits 1 when it finds violations (the kernel has 50,688 with this config).
measure "check --format json" sh -c '"$0" check --format json --root "$1" >/dev/null; [ $? -le 1 ]' "$bin/tldrgraph" "$dir"
measure "ui (the page to a file)" "$bin/tldrgraph" ui --output "$tmp.html" "$dir"; rm -f "$tmp.html"
cp "$dir/kernel/fork.c" "$tmp.fork"
printf '\nint tg_bench_probe(void)\n{\n\treturn 0;\n}\n' >> "$dir/kernel/fork.c"
measure "impact --files kernel/fork.c (one function added)" "$bin/tldrgraph" impact --json --files "$dir/kernel/fork.c" --root "$dir"
cp "$tmp.fork" "$dir/kernel/fork.c"; rm -f "$tmp.fork"
# A no-op with -o FILE, as Make runs it: the first writes the file, the second (once the file has
# settled) compares it and remembers its stamp, the others find it as it was left.
"$bin/tg-extract" --root "$dir" -o "$tmp.out" "$dir" 2>/dev/null; sleep 2.1
"$bin/tg-extract" --root "$dir" -o "$tmp.out" "$dir" 2>/dev/null
for _ in $(seq "$runs"); do measure "tg-extract -o FILE no-op" "$bin/tg-extract" --root "$dir" -o "$tmp.out" "$dir"; done
rm -f "$tmp.out"
# The MCP server, warm, nothing changed between calls (needs the MCP Python SDK).
if python3 -c 'import mcp' 2>/dev/null; then python3 "$here/mcp_scale.py" "$bin/tldrgraph" "$dir" 2>/dev/null; fi
echo ".tldrgraph/: $(du -sb "$dir/.tldrgraph" | cut -f1) bytes, $(du -sh "$dir/.tldrgraph" | cut -f1) ($(cd "$dir/.tldrgraph" && du -sh graph.json graph.json.zst search.bin vectors.i8 plan.json state.json cache/* 2>/dev/null | awk '{printf "%s %s, ", $2, $1}'))"
