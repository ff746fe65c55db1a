#!/usr/bin/env bash
# Install what rust_calls.py needs: rust-analyzer (its `scip` subcommand builds the ground truth) and
# rust-src (so rust-analyzer can type std calls, e.g. `iter().map(|x| x.m())`, on the way to crate
# methods). Idempotent: rustup skips components already installed. Prints the versions used.
set -euo pipefail
command -v rustup >/dev/null || { echo "deps_rust.sh: rustup not found" >&2; exit 2; }
have="$(rustup component list --installed 2>/dev/null || true)"
for c in rust-analyzer rust-src; do
  grep -q "^$c" <<<"$have" || rustup component add "$c" >&2
done
rust-analyzer --version >&2
