#!/usr/bin/env bash
# Install what tests/mcp.rs needs: the official MCP Python SDK (PyPI `mcp`, which brings
# jsonschema), for the python3 on PATH (or $PYTHON). Idempotent; pinned, so that the client the
# tests speak to does not move under us.
#   usage: bash tests/mcp/deps.sh
set -euo pipefail
py="${PYTHON:-python3}"
if "$py" -c 'import mcp, jsonschema, importlib.metadata as m; assert m.version("mcp") == "2.3.0"' 2>/dev/null; then
  exit 0
fi
"$py" -m pip install -q --disable-pip-version-check 'mcp==2.3.0' >&2
"$py" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))' >&2
