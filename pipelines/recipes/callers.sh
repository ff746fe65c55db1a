#!/usr/bin/env bash
# Who calls a symbol: every `calls` edge into the id given (or into every symbol whose qualified
# name ends with it), with the resolution and the line of the first call.
#   tg-extract . | pipelines/recipes/callers.sh 'pkg/util.py::helper'
#   tg-extract . | pipelines/recipes/callers.sh helper
set -euo pipefail
target="${1:?usage: callers.sh SYMBOL [STREAM...]}"; shift
jq -r --arg t "$target" '
  select(.type == "edge" and .kind == "calls"
         and (.dst == $t or (.dst | endswith("::" + $t)) or (.dst | endswith("." + $t))))
  | [.dst, .src, .resolution, (.line | tostring)] | @tsv' "$@" | LC_ALL=C sort
