"""Shared helpers for the accuracy scripts in this directory.

The scripts compare a tg-extract NDJSON stream with ground truth computed independently
(Python's own `ast`, universal-ctags). Nothing here knows how tg-extract works inside; it only
reads the documented stream format (see shared/src/record.rs) and the corpus on disk.

Only the standard library is used, so the scripts run with any Python 3.11.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, Iterator

# Directory names never worth walking: VCS metadata and bytecode caches.
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".tldrgraph"}


# --------------------------------------------------------------------------------------------
# Corpus walking
# --------------------------------------------------------------------------------------------

def walk_corpus(root: str, suffixes: tuple[str, ...]) -> list[str]:
    """Repo-relative paths ('/'-separated, sorted) of the files under `root` ending in `suffixes`.

    Symlinked directories are not followed (os.walk's default), so a symlink loop cannot hang us.
    """
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if name.endswith(suffixes):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                out.append(rel.replace(os.sep, "/"))
    out.sort()
    return out


def parse_python(root: str, rel: str) -> ast.Module | None:
    """Parse one file with `ast`; None when ast rejects it (syntax error, NUL bytes, too deep).

    The file is read as bytes so that ast honours PEP 263 coding cookies and BOMs itself.
    """
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
        return ast.parse(data, filename=rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
        return None


# --------------------------------------------------------------------------------------------
# Python definitions: qualified names, kinds and ids, as the stream spec defines them
# --------------------------------------------------------------------------------------------

DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class PyDef:
    """One class/def statement with the id the stream must give it."""
    node: ast.AST
    qualname: str          # e.g. "Outer.method", "func.inner"
    kind: str              # "class" | "function" | "method"
    id: str = ""           # "path::qualname" or "path::qualname#k"
    parent: "PyDef | None" = None   # nearest enclosing class/def, None at module level


def collect_defs(tree: ast.Module, rel: str) -> list[PyDef]:
    """All class/def statements of a module, with qualnames, kinds and ids.

    Rules (from the stream spec):
    - the qualified name joins the names of the enclosing class/def scopes with '.';
      if/try/with/for/while/match blocks are transparent (their defs belong to the enclosing scope);
    - a def whose nearest enclosing scope is a class is a method, any other def a function;
    - the k-th definition (k >= 2, source order) of one qualified name in a file gets "#k".
    """
    defs: list[PyDef] = []

    def visit(node: ast.AST, parent: PyDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, DEF_TYPES):
                prefix = parent.qualname + "." if parent else ""
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                elif parent is not None and parent.kind == "class":
                    kind = "method"
                else:
                    kind = "function"
                d = PyDef(child, prefix + child.name, kind, parent=parent)
                defs.append(d)
                visit(child, d)
            else:
                # Decorators, defaults, lambdas and blocks cannot hide a def statement except in
                # blocks; descending everywhere is simply the easiest correct walk.
                visit(child, parent)

    visit(tree, None)

    # Number repeated qualified names in source order (def keyword line, then column).
    by_name: dict[str, list[PyDef]] = {}
    for d in defs:
        by_name.setdefault(d.qualname, []).append(d)
    for same in by_name.values():
        same.sort(key=lambda d: (d.node.lineno, d.node.col_offset))
        for k, d in enumerate(same, start=1):
            d.id = f"{rel}::{d.qualname}" + (f"#{k}" if k > 1 else "")
    return defs


# --------------------------------------------------------------------------------------------
# Reading a tg-extract stream
# --------------------------------------------------------------------------------------------

@dataclass
class Stream:
    files: dict[str, dict] = field(default_factory=dict)      # path -> file record
    nodes: dict[str, dict] = field(default_factory=dict)      # id -> node record
    duplicate_node_ids: list[str] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)           # every edge record
    summary: dict | None = None
    bad_lines: int = 0

    def calls(self) -> Iterator[dict]:
        return (e for e in self.edges if e.get("kind") == "calls")


def read_stream(path: str) -> Stream:
    """Load a tg-extract NDJSON stream ('-' = stdin). Unknown record types are ignored."""
    s = Stream()
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as err:
        print(f"cannot read the stream {path}: {err.strerror}", file=sys.stderr)
        sys.exit(2)
    try:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                s.bad_lines += 1
                continue
            t = rec.get("type")
            if t == "file":
                s.files[rec["path"]] = rec
            elif t == "node":
                if rec["id"] in s.nodes:
                    s.duplicate_node_ids.append(rec["id"])
                s.nodes[rec["id"]] = rec
            elif t == "edge":
                s.edges.append(rec)
            elif t == "summary":
                s.summary = rec
    finally:
        if fh is not sys.stdin:
            fh.close()
    return s


def stream_warnings(s: Stream) -> list[str]:
    """Problems with the stream itself, worth printing before any score."""
    out = []
    if s.bad_lines:
        out.append(f"{s.bad_lines} lines of the stream are not JSON")
    if s.summary is None:
        out.append("the stream has no closing summary record (truncated?)")
    if s.duplicate_node_ids:
        out.append(f"{len(s.duplicate_node_ids)} node ids occur more than once, "
                   f"e.g. {s.duplicate_node_ids[:3]}")
    return out


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------

def ratio(num: int, den: int) -> float:
    """num/den, with an empty denominator counting as perfect (nothing to get wrong)."""
    return num / den if den else 1.0


def say(*parts: object) -> None:
    """Human-readable output goes to stderr; stdout carries only the JSON summary."""
    print(*parts, file=sys.stderr)


def examples(title: str, items: Iterable[object], limit: int = 15) -> None:
    items = list(items)
    if not items:
        return
    say(f"  {title} ({len(items)}{', first ' + str(limit) if len(items) > limit else ''}):")
    for it in items[:limit]:
        say(f"    {it}")


def check(name: str, value: float, minimum: float, failures: list[str]) -> None:
    """Record a threshold failure in `failures` (the caller turns a non-empty list into exit 1)."""
    if value < minimum:
        failures.append(f"{name} {value:.4f} < {minimum}")


def corpus_jobs(ap, args: list[str], truth_only: bool) -> list[tuple[str, str | None]]:
    """(corpus, stream) pairs from the CORPUS STREAM arguments; streams are None with
    --truth-only, where only corpora are given."""
    if truth_only:
        return [(c, None) for c in args]
    if len(args) % 2:
        ap.error("give CORPUS STREAM pairs (or --truth-only with corpora)")
    return list(zip(args[0::2], args[1::2]))
