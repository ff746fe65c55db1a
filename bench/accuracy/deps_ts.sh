#!/usr/bin/env bash
# Install what ts_oracle.mjs (and so ts_defs.py / ts_calls.py) needs: the TypeScript compiler, pinned,
# with npm into a private prefix (default ~/.cache/tldrgraph-accuracy/ts; $TG_TS_PREFIX overrides).
# No global install, nothing written to the repository. Idempotent: does nothing when the pinned
# version is already there. Prints the directory holding node_modules/typescript on stdout.
# 5.6.3 is pinned so the checker's verdicts, and so the scores, do not move under us.
#   usage: bash bench/accuracy/deps_ts.sh
set -euo pipefail
ver="5.6.3"
prefix="${TG_TS_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/tldrgraph-accuracy/ts}"
command -v node >/dev/null || { echo "deps_ts.sh: node not found" >&2; exit 2; }
command -v npm >/dev/null || { echo "deps_ts.sh: npm not found" >&2; exit 2; }
have() { node -e 'process.stdout.write(require(process.argv[1] + "/package.json").version)' \
           "$prefix/node_modules/typescript" 2>/dev/null || true; }
if [ "$(have)" != "$ver" ]; then
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"name":"tldrgraph-accuracy-ts","private":true}' > "$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error "typescript@$ver" >&2
  [ "$(have)" = "$ver" ] || { echo "deps_ts.sh: typescript $ver did not install into $prefix" >&2; exit 2; }
fi
echo "typescript $(have) in $prefix/node_modules/typescript" >&2
echo "$prefix"
