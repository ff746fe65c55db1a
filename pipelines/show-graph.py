#!/usr/bin/env python3
"""Print a tg-extract stream as a short human summary: symbols, calls and inheritance.

usage: tg-extract . | pipelines/show-graph.py      (or: show-graph.py STREAM)
"""
import json
import sys


def main() -> int:
    source = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    summary = None
    for line in source:
        record = json.loads(line)
        kind = record.get("type")
        if kind == "node" and record["kind"] != "module":
            print(f"  {record['kind']:9} {record['id']}  (lines {record['line_start']}-{record['line_end']})")
        elif kind == "edge" and record["kind"] in ("calls", "inherits", "imports", "includes"):
            print(f"  {record['src']} --{record['kind']}/{record.get('resolution')}--> {record['dst']}")
        elif kind == "diagnostic":
            print(f"  ! {record.get('file')}:{record.get('line') or ''} {record['message']}")
        elif kind == "summary":
            summary = {k: v for k, v in record.items() if k != "type"}
    if summary:
        print("summary:", json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
