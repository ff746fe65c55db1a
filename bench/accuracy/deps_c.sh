#!/usr/bin/env bash
# Install what c_calls.py needs: Debian's clang-14 (libclang with its builtin headers such as
# stddef.h/stdarg.h) and python3-clang-14 (the clang.cindex bindings, for Debian's /usr/bin/python3),
# plus the system headers the corpora expect from the system, so that libclang's ground truth is the
# same on every machine: libssl-dev (openssl's own public headers are generated from .h.in templates)
# and zlib1g-dev (libgit2 includes <zlib.h>).
# Idempotent: does nothing when all are installed. Needs root (apt-get).
#   usage: bash bench/accuracy/deps_c.sh
set -euo pipefail
pkgs=(clang-14 python3-clang-14 libssl-dev zlib1g-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ -e /usr/lib/llvm-14/lib/libclang.so.1 ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q "${missing[@]:-clang-14}" >&2
/usr/bin/python3 -c 'import clang.cindex' >&2
