#!/usr/bin/env bash
# Fetch TypeScript/JavaScript corpora for the accuracy checks into a cache folder (default:
# ~/.cache/tldrgraph-corpora, like ../shared/corpora/get.sh). Idempotent: a corpus already unpacked is
# kept (each is built in a temp dir and moved into place, so an interrupted run leaves nothing half
# done). Prints "name<TAB>path<TAB>language" for each corpus, like get.sh.
#   usage: bench/ts_corpora.sh [DEST]        env: NPM (default npm)
# Sources come from the npm registry only (`npm pack NAME@VER`, untarred). Build output is removed so
# only sources remain: dist/, build/, *.map, and the tiny entry-point shims some packages generate
# beside their sources (`module.exports = require('../dist/x')`, `export * from '../dist/x'`), which
# only point into the removed dist/. package.json and tsconfig*.json stay when shipped.
#
# Versions, and why:
#   @trpc/server@11.0.0          the first v11 release: ships src/**/*.ts (81 files: routers,
#                                adapters, a vendored lib), heavy on generics, overloads, const arrow
#                                functions and exported object literals; no tsconfig shipped.
#   @tanstack/query-core@5.59.0  ships src/*.ts (classes: QueryClient, Query, observers) and its
#                                vitest tests as src/__tests__/*.tsx; late-2024, the TypeScript 5.6
#                                era of the pinned oracle.
#   commander@12.1.0             plain CommonJS JavaScript (index.js, lib/*.js: classes, require())
#                                plus hand-written typings/*.d.ts and esm.mjs; the last v12.
#   tanstack-query-monorepo      @tanstack/query-core@5.59.0 and @tanstack/react-query@5.59.0 (which
#                                depends on exactly that query-core) as packages/query-core and
#                                packages/react-query, each with its own package.json, under a root
#                                package.json with "workspaces": ["packages/*"]; react-query imports
#                                `from '@tanstack/query-core'`, which only the workspace resolves
#                                (its package.json points at the removed build/).
set -euo pipefail
dest=${1:-${TLDRGRAPH_CORPORA:-$HOME/.cache/tldrgraph-corpora}}
npm=${NPM:-npm}
mkdir -p "$dest"

# npm pack SPEC into directory $2 (created), stripping the tarball's package/ prefix and build output.
unpack() {
  local spec=$1 out=$2 tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && "$npm" pack --silent "$spec" >/dev/null)
  mkdir -p "$out"
  tar -xzf "$tmp"/*.tgz -C "$out" --strip-components=1
  rm -rf "$tmp"
  find "$out" -maxdepth 1 -type d \( -name dist -o -name build \) -exec rm -rf {} +
  find "$out" -depth -type d -name node_modules -exec rm -rf {} +
  find "$out" -type f -name '*.map' -delete
  # Entry-point shims: a few lines, nothing but a re-export of ../dist or ../build.
  find "$out" -path "$out/src" -prune -o -type f \( -name '*.js' -o -name '*.cjs' -o -name '*.mjs' \
       -o -name '*.ts' -o -name '*.cts' -o -name '*.mts' \) -print | while IFS= read -r f; do
    if [ "$(wc -l < "$f")" -le 3 ] && grep -Eq "['\"](\.\./)+(dist|build)/" "$f" \
       && ! grep -Evq "^[[:space:]]*$|^(module\.exports = require|export \* from|export \{.*\} from)" "$f"; then
      rm -f "$f"
    fi
  done
  find "$out" -depth -type d -empty -delete
}

# One npm package per corpus: name  spec  language
single=("trpc-server	@trpc/server@11.0.0	typescript"
        "tanstack-query-core	@tanstack/query-core@5.59.0	typescript"
        "commander	commander@12.1.0	javascript")
for row in "${single[@]}"; do
  IFS=$'\t' read -r name spec lang <<<"$row"
  out="$dest/$name-${spec##*@}"
  if [ ! -d "$out" ]; then
    stage=$(mktemp -d "$dest/.stage.XXXXXX")
    unpack "$spec" "$stage/c"
    mv "$stage/c" "$out"
    rm -rf "$stage"
  fi
  printf '%s\t%s\t%s\n' "$name" "$out" "$lang"
done

# The monorepo: two workspace packages, one importing the other by package name.
mono_ver=5.59.0
out="$dest/tanstack-query-monorepo-$mono_ver"
if [ ! -d "$out" ]; then
  stage=$(mktemp -d "$dest/.stage.XXXXXX")
  unpack "@tanstack/query-core@$mono_ver" "$stage/c/packages/query-core"
  unpack "@tanstack/react-query@$mono_ver" "$stage/c/packages/react-query"
  cat > "$stage/c/package.json" <<JSON
{
  "name": "tanstack-query-monorepo",
  "private": true,
  "version": "$mono_ver",
  "workspaces": ["packages/*"]
}
JSON
  mv "$stage/c" "$out"
  rm -rf "$stage"
fi
printf '%s\t%s\t%s\n' tanstack-query-monorepo "$out" typescript
