"""Shared helpers of ts_defs.py and ts_calls.py: getting the TypeScript compiler's ground truth.

The truth is computed by ts_oracle.mjs (Node + the `typescript` package that deps_ts.sh installs),
or read back from a file it wrote earlier (`node ts_oracle.mjs CORPUS > truth.json`, then
`--truth truth.json`), so a rerun of the scoring does not rerun the compiler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from common import say

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "ts_oracle.mjs")
TS_LANGS = {"typescript", "javascript"}
DEF_KINDS = {"function", "method", "class", "trait", "typedef", "enum", "mod"}
MODULE = "<module>"


def load_truth(corpus: str, truth_path: str | None) -> tuple[dict, float]:
    """(the oracle's JSON document, seconds it took). Exits 2 when it cannot be had."""
    t0 = time.time()
    if truth_path:
        try:
            with open(truth_path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, json.JSONDecodeError) as err:
            say(f"cannot read the truth file {truth_path}: {err}")
            sys.exit(2)
        if os.path.basename(os.path.normpath(str(doc.get("root", "")))) != \
                os.path.basename(os.path.normpath(corpus)):
            say(f"WARNING: {truth_path} was made for {doc.get('root')}, not {corpus}")
        return doc, float(doc.get("summary", {}).get("seconds", {}).get("total", 0.0))
    node = os.environ.get("NODE", "node")
    try:
        proc = subprocess.run([node, ORACLE, corpus], capture_output=True, text=True)
    except OSError as err:
        say(f"cannot run {node}: {err.strerror} (Node 18+ is needed)")
        sys.exit(2)
    if proc.returncode != 0:
        say(proc.stderr.strip())
        say(f"ts_oracle.mjs failed on {corpus} (exit {proc.returncode}); "
            f"is typescript installed? bash bench/accuracy/deps_ts.sh")
        sys.exit(2)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        say(f"ts_oracle.mjs wrote no JSON for {corpus}")
        sys.exit(2)
    return doc, time.time() - t0


def decl_id(file: str, qualname: str) -> str:
    """The stream id of a declaration (`path::Qual.name#k`), or the module id for `<module>`."""
    return file if qualname == MODULE else f"{file}::{qualname}"


def stream_qualname(node: dict) -> str:
    """The part of a node id after `path::`."""
    i, f = node.get("id", ""), node.get("file", "")
    if f and i.startswith(f + "::"):
        return i[len(f) + 2:]
    return i.split("::", 1)[1] if "::" in i else ""


def scope_files(truth: dict, stream) -> tuple[set[str], list[str], list[str]]:
    """Files both sides speak about: the oracle's files that the stream has as typescript or
    javascript. Also returned: the oracle files the stream lacks, and those it gives another lang."""
    oracle_files = [f["path"] for f in truth.get("files", [])]
    lacking = [p for p in oracle_files if p not in stream.files]
    other = [f"{p} ({stream.files[p].get('lang')})" for p in oracle_files
             if p in stream.files and stream.files[p].get("lang") not in TS_LANGS]
    scope = {p for p in oracle_files
             if p in stream.files and stream.files[p].get("lang") in TS_LANGS}
    return scope, lacking, other
