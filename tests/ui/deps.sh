#!/usr/bin/env bash
# Install what tests/ui.rs (and bench/ui.sh) need: Debian's Chromium, when no chromium is on the
# machine, and playwright-core, pinned, with npm into a private prefix (default
# ~/.cache/tldrgraph-ui; $TG_UI_PREFIX overrides) to drive it. Playwright's own browser download is
# never used: the tests launch the system Chromium. Idempotent. Prints the prefix on stdout.
#   usage: bash tests/ui/deps.sh
set -euo pipefail
ver="1.65.2"
prefix="${TG_UI_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/tldrgraph-ui}"
if ! command -v chromium >/dev/null; then
  echo "installing chromium (Debian's package, for the map's browser tests)" >&2
  if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
fi
command -v node >/dev/null || { echo "tests/ui/deps.sh: node not found" >&2; exit 2; }
command -v npm >/dev/null || { echo "tests/ui/deps.sh: npm not found" >&2; exit 2; }
have() { node -e 'process.stdout.write(require(process.argv[1] + "/package.json").version)' \
           "$prefix/node_modules/playwright-core" 2>/dev/null || true; }
if [ "$(have)" != "$ver" ]; then
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"name":"tldrgraph-ui-tests","private":true}' > "$prefix/package.json"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$prefix" --no-audit --no-fund --save-exact \
    --loglevel=error "playwright-core@$ver" >&2
  [ "$(have)" = "$ver" ] || { echo "tests/ui/deps.sh: playwright-core $ver did not install into $prefix" >&2; exit 2; }
fi
echo "playwright-core $(have) in $prefix; $(chromium --version 2>/dev/null | head -1)" >&2
echo "$prefix"
