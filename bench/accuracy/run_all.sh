#!/usr/bin/env bash
# Run every accuracy check over the shared corpora with one tg-extract binary.
#   usage: bench/accuracy/run_all.sh [TG_EXTRACT] [CORPORA_TSV]
#     TG_EXTRACT   default: target/release/tg-extract (built beforehand; this script never builds)
#     CORPORA_TSV  the name<TAB>path<TAB>lang lines of ../shared/corpora/get.sh (default: run it); add
#                  bench/ts_corpora.sh's lines for the TypeScript/JavaScript checks
# Streams are written to $OUT (default: a temp dir) and kept for inspection. Each check's JSON summary
# line goes to stdout; the exit code is 1 when any check misses its thresholds.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tg="${1:-$here/../../target/release/tg-extract}"
tsv="${2:-}"
out="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tg-accuracy.XXXXXX")}"
[ -x "$tg" ] || { echo "no tg-extract at $tg (build it first)" >&2; exit 2; }
mkdir -p "$out"
if [ -z "$tsv" ]; then tsv="$out/corpora.tsv"; bash "$here/../../../shared/corpora/get.sh" > "$tsv"; fi
echo "streams in $out" >&2
rc=0; calls=(); rcalls=(); acalls=(); tcalls=()
while IFS=$'\t' read -r name path lang; do
  if ! "$tg" --no-cache --root "$path" "$path" > "$out/$name.ndjson" 2> "$out/$name.err"; then
    echo "tg-extract failed on $name (see $out/$name.err)" >&2; rc=1; continue
  fi
  case "$lang" in
    python) python3 "$here/py_defs.py" "$path" "$out/$name.ndjson" || rc=1
            # py_calls.py over every Python corpus: typer, starlette and cpython-stdlib carry the
            # overload, conditional-definition and shadowed-import cases (the stdlib: ~90 s, 1.7 GB).
            calls+=("$path" "$out/$name.ndjson")
            case "$name" in typer|starlette|httpx|rich|requests|attrs) acalls+=("$path" "$out/$name.ndjson");; esac ;;
    c)      # ctags tags macro invocations such as `STACK_OF(X) *f()` as functions named STACK_OF: the gate
            # leaves ALL-CAPS ctags "functions" out; both recalls are printed.
            python3 "$here/c_defs.py" --ignore-caps-functions "$path" "$out/$name.ndjson" || rc=1
            # C calls against libclang (deps_c.sh installs clang-14 when missing; openssl is sampled).
            { bash "$here/deps_c.sh" && python3 "$here/c_calls.py" "$path" "$out/$name.ndjson"; } || rc=1 ;;
    rust)   rcalls+=("$path" "$out/$name.ndjson") ;;
    # TypeScript/JavaScript (corpora from bench/ts_corpora.sh; append its lines to CORPORA_TSV):
    # declarations and calls against the TypeScript compiler (deps_ts.sh installs it with npm).
    typescript|javascript)
            { bash "$here/deps_ts.sh" >/dev/null && python3 "$here/ts_defs.py" "$path" "$out/$name.ndjson"; } || rc=1
            tcalls+=("$path" "$out/$name.ndjson") ;;
  esac
done < "$tsv"
[ ${#calls[@]} -gt 0 ] && { python3 "$here/py_calls.py" "${calls[@]}" || rc=1; }
# Python attribute calls against Jedi (deps_python.sh installs it when missing; a few minutes).
[ ${#acalls[@]} -gt 0 ] && { { bash "$here/deps_python.sh" && python3 "$here/py_attr_calls.py" "${acalls[@]}"; } || rc=1; }
# Property reads (`x.name` running a `@property` getter) against Jedi, on the same corpora.
[ ${#acalls[@]} -gt 0 ] && { python3 "$here/py_property_reads.py" "${acalls[@]}" --min-precision 0.95 --min-recall 0.75 || rc=1; }
# Rust calls against rust-analyzer's SCIP index (deps_rust.sh adds the rustup components when missing).
[ ${#rcalls[@]} -gt 0 ] && { { bash "$here/deps_rust.sh" && python3 "$here/rust_calls.py" "${rcalls[@]}"; } || rc=1; }
# Rust test code and tests against rustc's dep-info and libtest's list (builds each crate's copy).
[ ${#rcalls[@]} -gt 0 ] && { python3 "$here/rust_test_code.py" "${rcalls[@]}" || rc=1; }
[ ${#tcalls[@]} -gt 0 ] && { { bash "$here/deps_ts.sh" >/dev/null && python3 "$here/ts_calls.py" "${tcalls[@]}"; } || rc=1; }
exit $rc
