#!/usr/bin/env bash
# Install what py_attr_calls.py needs: Jedi (PyPI `jedi`, with its parser parso), for the python3
# on PATH (or $PYTHON). Idempotent: does nothing when `import jedi` already works. The version is
# pinned so that the oracle's verdicts, and so the scores, do not move under us.
#   usage: bash bench/accuracy/deps_python.sh
set -euo pipefail
py="${PYTHON:-python3}"
if "$py" -c 'import jedi' 2>/dev/null; then
  exit 0
fi
"$py" -m pip install -q --disable-pip-version-check 'jedi==0.20.0' >&2
"$py" -c 'import jedi; print("jedi", jedi.__version__)' >&2
