#!/usr/bin/env python3
"""Rust call-resolution accuracy of tg-extract streams, against rust-analyzer's SCIP index.

usage: rust_calls.py CORPUS STREAM [CORPUS STREAM ...] [--min-precision P] [--min-recall R]
                     [--min-pairs N] [--scip-cache DIR] [--rebuild-scip] [--examples K]
       rust_calls.py CORPUS [CORPUS ...] --truth-only

Ground truth comes from `rust-analyzer scip` (a compiler-grade name and type resolver), run on a copy
of the crate (it writes target/ and Cargo.lock, which must not land in the corpus) after `cargo fetch`,
with every cargo feature on;
bench/accuracy/deps_rust.sh installs it. The index.scip is decoded here with a small protobuf
wire-format reader (scip.proto: Index.documents=2; Document.relative_path=1, occurrences=2,
symbols=3; Occurrence.range=1, symbol=2, symbol_roles=3, enclosing_range=7; SymbolInformation.symbol=1,
kind=5, display_name=6) and cached per corpus content, so reruns take a second.

A ground-truth call is a reference occurrence (no Definition role) of a function or method symbol
(SCIP kind Function, Method, StaticMethod, TraitMethod, AbstractMethod, or a `name().` descriptor)
that rust-analyzer also reports a definition of inside the crate (so std and dependencies are out),
where the source text at the occurrence is the callee's name and is followed by `(`, after an
optional `::<...>` turbofish: a call, not a mention (`map(Self::f)`, `use`, doc links). Occurrences on
comment lines (doc tests, intra-doc links) are dropped. The caller is the innermost function/method
definition whose extent (its definition occurrence's enclosing_range; universal-ctags' `end` field
if rust-analyzer leaves it out) holds the occurrence; calls outside any function (const/static
initialisers) have no caller and are dropped. Inactive `#[cfg]` code is not indexed by rust-analyzer:
it is neither truth nor judged.

Both ends are mapped to stream nodes by file + name + definition line: the stream node of kind
function/method in the same file, with the same name, whose [line_start, line_end] holds the line of
the definition's name (the narrowest such node). A truth pair with an end that maps to no node (a
function generated inside a macro invocation, a node the stream lacks) is counted and left out.

Scores, over distinct (src, dst) node-id pairs:
  recall     share of truth pairs that are `calls` edges of the stream
  precision  share of the stream's `calls` edges that are truth pairs, among the edges whose src is a
             node rust-analyzer indexed as a function (the truth's possible callers) and whose dst is
             a node rust-analyzer indexed as a function of the crate; also per edge `resolution`.
             Edges outside that scope are counted by reason (dst a struct, src a cfg'd-out fn...).
  pairs      number of truth pairs (a floor, so a broken index cannot pass vacuously)
Thresholds apply to the combined numbers of all corpora given. A human report goes to stderr, one
JSON line to stdout; exit 0 when every threshold is met, 1 when not, 2 when a stream cannot be read
or the index cannot be built.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from common import corpus_jobs, check, examples, ratio, read_stream, say, stream_warnings, walk_corpus

# SymbolInformation.Kind values that are callable functions (scip.proto).
FUNC_KINDS = {9, 17, 26, 66, 70, 80}   # Constructor, Function, Method, AbstractMethod, TraitMethod,
                                       # StaticMethod
ROLE_DEFINITION = 0x1
NODE_FUNC_KINDS = {"function", "method"}
CACHE_VERSION = "2"                    # bump when the way the index is built changes
NO_ENCLOSING = os.environ.get("TG_RUST_CALLS_NO_ENCLOSING") == "1"   # test the fallback extents


# --------------------------------------------------------------------------------------------
# Protobuf wire format (just what SCIP needs: varints and length-delimited fields)
# --------------------------------------------------------------------------------------------

def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def pb_fields(buf: bytes, start: int = 0, end: int | None = None):
    """Yield (field number, wire type, value) of one message; value is an int (varint, fixed) or a
    (start, end) slice of `buf` (length-delimited), so nested messages are not copied."""
    i, end = start, len(buf) if end is None else end
    while i < end:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            val = (i, i + n)
            i += n
        elif wt == 1:
            val = int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wt == 5:
            val = int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt} at byte {i}")
        yield num, wt, val


def pb_ints(buf: bytes, wt: int, val) -> list[int]:
    """A repeated int32 field: packed (wire type 2) or one unpacked varint."""
    if wt == 0:
        return [val]
    out, (i, end) = [], val
    while i < end:
        v, i = _varint(buf, i)
        out.append(v)
    return out


def pb_str(buf: bytes, val) -> str:
    return buf[val[0]:val[1]].decode("utf-8", "replace")


@dataclass
class Occ:
    line: int          # 0-based, as in SCIP
    col: int
    end_line: int
    end_col: int
    symbol: str
    roles: int
    enclosing: tuple[int, int, int, int] | None


def _range4(r: list[int]) -> tuple[int, int, int, int] | None:
    if len(r) == 3:
        return r[0], r[1], r[0], r[2]
    if len(r) == 4:
        return r[0], r[1], r[2], r[3]
    return None


def read_scip(path: str) -> tuple[dict[str, list[Occ]], dict[str, tuple[int, str]]]:
    """Documents of an index.scip: {relative_path: occurrences}, and {symbol: (kind, display_name)}."""
    with open(path, "rb") as fh:
        buf = fh.read()
    docs: dict[str, list[Occ]] = {}
    info: dict[str, tuple[int, str]] = {}
    for num, _, val in pb_fields(buf):
        if num != 2:                                   # Index.documents
            continue
        rel, occs = "", []
        for dnum, dwt, dval in pb_fields(buf, *val):
            if dnum == 1:                              # Document.relative_path
                rel = pb_str(buf, dval)
            elif dnum == 2:                            # Document.occurrences
                rng, sym, roles, enc = None, "", 0, None
                for onum, owt, oval in pb_fields(buf, *dval):
                    if onum == 1:
                        rng = _range4(pb_ints(buf, owt, oval))
                    elif onum == 2:
                        sym = pb_str(buf, oval)
                    elif onum == 3:
                        roles = oval
                    elif onum == 7:
                        enc = _range4(pb_ints(buf, owt, oval))
                if rng is not None and sym:
                    occs.append(Occ(*rng, sym, roles, enc))
            elif dnum == 3:                            # Document.symbols
                sym, kind, name = "", 0, ""
                for snum, _, sval in pb_fields(buf, *dval):
                    if snum == 1:
                        sym = pb_str(buf, sval)
                    elif snum == 5:
                        kind = sval
                    elif snum == 6:
                        name = pb_str(buf, sval)
                if sym:
                    info[sym] = (kind, name)
        docs[rel] = occs
    return docs, info


# The last descriptor of a method symbol: `name(disambiguator).`, the name plain or `escaped`.
METHOD_DESC = re.compile(r"(?:([A-Za-z0-9_$+\-]+)|`((?:[^`]|``)+)`)\([^()]*\)\.$")


def method_name(symbol: str) -> str | None:
    if symbol.startswith("local "):
        return None
    m = METHOD_DESC.search(symbol)
    if not m:
        return None
    return m.group(1) if m.group(1) is not None else m.group(2).replace("``", "`")


# --------------------------------------------------------------------------------------------
# Building (or reusing) the index
# --------------------------------------------------------------------------------------------

def tool_version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def corpus_key(root: str, ra_version: str) -> str:
    """Hash of what the index depends on: the Rust sources, the manifests and rust-analyzer."""
    h = hashlib.sha256(f"{CACHE_VERSION}\0{ra_version}\0".encode())
    for rel in walk_corpus(root, (".rs", "Cargo.toml", "Cargo.lock")):
        if rel.startswith("target/"):
            continue
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def scip_index(root: str, cache: str, rebuild: bool, ra: str, cargo: str) -> str:
    """Path of the corpus' index.scip, built into the cache when missing (or on --rebuild-scip)."""
    version = tool_version([ra])
    if not version:
        say(f"rust-analyzer not runnable as {ra!r}: run bench/accuracy/deps_rust.sh")
        sys.exit(2)
    name = os.path.basename(os.path.normpath(root))
    out = os.path.join(cache, f"{name}-{corpus_key(root, version)}.scip")
    if os.path.exists(out) and not rebuild:
        return out
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"{name}-", dir=cache)
    try:
        crate = os.path.join(work, "crate")
        shutil.copytree(root, crate, symlinks=True,
                        ignore=shutil.ignore_patterns("target", ".git", ".tldrgraph"))
        t0 = time.time()
        fetch = subprocess.run([cargo, "fetch"], cwd=crate, capture_output=True, text=True)
        if fetch.returncode != 0:
            say(f"   cargo fetch failed in the copy of {name} (the index may lack dependency "
                f"types): {fetch.stderr.strip()[-500:]}")
        tmp_out = os.path.join(work, "index.scip")
        config = os.path.join(work, "rust-analyzer.json")
        with open(config, "w") as fh:          # every cargo feature on, so feature-gated code is judged
            json.dump({"cargo": {"features": "all"}}, fh)
        proc = subprocess.run([ra, "scip", ".", "--output", tmp_out, "--config-path", config],
                              cwd=crate,
                              capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(tmp_out):
            say(f"rust-analyzer scip failed on {name} ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
            sys.exit(2)
        os.replace(tmp_out, out)
        for old in os.listdir(cache):              # indexes of older contents of this corpus
            if old != os.path.basename(out) and re.fullmatch(re.escape(name) + r"-[0-9a-f]{16}\.scip", old):
                os.remove(os.path.join(cache, old))
        say(f"   built {out} in {time.time() - t0:.1f}s ({version})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


# --------------------------------------------------------------------------------------------
# Ground truth from the index
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FnDef:
    symbol: str
    file: str
    name: str
    line: int          # 1-based line of the name
    start: tuple[int, int]   # extent, 0-based (line, col), inclusive start
    end: tuple[int, int]     # exclusive end
    fn_keyword: bool         # the name follows `fn` in the source (not generated by a macro call)


@dataclass(frozen=True)
class Call:
    src: FnDef
    dst: FnDef
    file: str
    line: int          # 1-based
    col: int           # 0-based, in characters
    syntax: str        # "method" (`.f(`), "path" (`X::f(`) or "bare" (`f(`)
    text: str          # the source line, stripped


class Source:
    """One file's text with helpers to read SCIP positions (UTF-8, UTF-16 or code point columns)."""

    def __init__(self, path: str):
        with open(path, encoding="utf-8", errors="replace") as fh:
            self.text = fh.read()
        self.lines = self.text.split("\n")
        self.starts = [0]
        for ln in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(ln) + 1)

    def char_col(self, line: int, col: int, want: str) -> int | None:
        """The code point column at which `want` starts, reading `col` in any of SCIP's encodings."""
        if not 0 <= line < len(self.lines):
            return None
        ln = self.lines[line]
        if ln[col:col + len(want)] == want:
            return col
        for enc in ("utf-8", "utf-16-le"):
            unit = 2 if enc == "utf-16-le" else 1
            raw = ln.encode(enc, "replace")
            if col * unit <= len(raw):
                c = len(raw[:col * unit].decode(enc, "ignore"))
                if ln[c:c + len(want)] == want:
                    return c
        return None

    def followed_by_call(self, line: int, col: int) -> bool:
        """Whether the text from (line, col) is whitespace, an optional `::<...>`, then `(`."""
        t, i = self.text, self.starts[line] + col
        n = len(t)

        def ws(i: int) -> int:
            while i < n and t[i] in " \t\r\n":
                i += 1
            return i

        i = ws(i)
        if t.startswith("::", i):
            i = ws(i + 2)
            if i >= n or t[i] != "<":
                return False
            depth = 0
            while i < n:
                c = t[i]
                if c == "<":
                    depth += 1
                elif c == ">" and t[i - 1] != "-":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                elif c in ";{}":
                    return False
                i += 1
            i = ws(i)
        return i < n and t[i] == "("


    def pos(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def item_end(self, line: int, col: int) -> tuple[int, int]:
        """Exclusive end of the fn item whose name is at (line, col): just past the `}` matching its
        body's `{`, or past its `;` when it has no body. Comments, strings and char literals are
        skipped (raw strings only roughly). The fallback when no tool gives the extent."""
        t, i = self.text, self.starts[line] + col
        n, depth, paren = len(t), 0, 0
        while i < n:
            c = t[i]
            if t.startswith("//", i):
                i = t.find("\n", i)
                i = n if i < 0 else i
                continue
            if t.startswith("/*", i):
                j = t.find("*/", i + 2)
                i = n if j < 0 else j + 2
                continue
            if c == '"':
                i += 1
                while i < n and t[i] != '"':
                    i += 2 if t[i] == "\\" else 1
            elif c == "'" and i + 2 < n and (t[i + 2] == "'" or t[i + 1] == "\\"):
                j = t.find("'", i + (3 if t[i + 1] == "\\" else 2))
                i = n if j < 0 else j
            elif c in "([":
                paren += 1
            elif c in ")]":
                paren -= 1
                if paren < 0:                  # a name inside a macro call: `test!(name, ...)`
                    return self.pos(i)
            elif c == ";" and depth == 0 and paren == 0:
                return self.pos(i + 1)
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return self.pos(i + 1)
            i += 1
        return self.pos(n)


def is_comment(line_text: str, col: int) -> bool:
    """A doc comment, doc test or commented-out code around column `col` (simple, quote-unaware
    unless a quote precedes the `//`)."""
    s = line_text.lstrip()
    if s.startswith(("//", "/*", "*")):
        return True
    pre = line_text[:col]
    k = pre.find("//")
    return k >= 0 and '"' not in pre[:k]


def ctags_extents(root: str, rel: str) -> dict[tuple[str, int], int]:
    """{(name, line): end line} for Rust functions and methods of one file, from universal-ctags."""
    try:
        proc = subprocess.run(["ctags", "--options=NONE", "--languages=Rust", "--kinds-Rust=fP",
                               "--fields=+ne", "--output-format=json", "-f", "-", rel],
                              cwd=root, capture_output=True, text=True)
    except OSError:
        return {}
    out = {}
    for line in proc.stdout.splitlines():
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "end" in tag and "line" in tag:
            out[(tag["name"], tag["line"])] = tag["end"]
    return out


def truth_calls(root: str, scip: str) -> tuple[list[FnDef], list[Call], Counter]:
    """All function definitions rust-analyzer indexed in the crate, and the calls between them."""
    docs, info = read_scip(scip)
    skipped: Counter = Counter()
    sources: dict[str, Source] = {}

    def source(rel: str) -> Source | None:
        if rel not in sources:
            p = os.path.join(root, rel)
            sources[rel] = Source(p) if os.path.isfile(p) else None
        return sources[rel]

    def is_func(sym: str) -> str | None:
        """The function's name when `sym` is a callable, else None."""
        kind, display = info.get(sym, (0, ""))
        name = method_name(sym)
        if name is None or (kind and kind not in FUNC_KINDS):
            return None
        return display or name

    # 1. Definitions, with their extents.
    defs: dict[str, list[FnDef]] = defaultdict(list)      # symbol -> defs (duplicates possible)
    by_file: dict[str, list[FnDef]] = defaultdict(list)
    ctags_cache: dict[str, dict] = {}
    for rel, occs in docs.items():
        for o in occs:
            if not o.roles & ROLE_DEFINITION:
                continue
            name = is_func(o.symbol)
            if name is None:
                continue
            src = source(rel)
            if src is None or src.char_col(o.line, o.col, name) is None:
                skipped["definition name not at its range (macro-generated)"] += 1
                continue
            if o.enclosing is not None and not NO_ENCLOSING:
                start, end = (o.enclosing[0], o.enclosing[1]), (o.enclosing[2], o.enclosing[3])
            else:
                # Older rust-analyzers leave enclosing_range out: ask universal-ctags for the end
                # line (its Rust parser may not give one), else match the body's braces.
                if rel not in ctags_cache:
                    ctags_cache[rel] = ctags_extents(root, rel)
                end_line = ctags_cache[rel].get((name, o.line + 1))
                col = src.char_col(o.line, o.col, name)
                start = (o.line, 0)
                end = (end_line, 0) if end_line is not None else src.item_end(o.line, col)
                skipped["(note) definitions given extents by ctags/braces"] += 1
            col = src.char_col(o.line, o.col, name)
            fn_kw = re.search(r"\bfn\s+$", src.lines[o.line][:col]) is not None
            d = FnDef(o.symbol, rel, name, o.line + 1, start, end, fn_kw)
            defs[o.symbol].append(d)
            by_file[rel].append(d)
    # Innermost-first lookup: sort by start, and pick the latest-starting def that holds the position.
    starts: dict[str, list[tuple[int, int]]] = {}
    for rel, lst in by_file.items():
        lst.sort(key=lambda d: (d.start, (-d.end[0], -d.end[1])))
        starts[rel] = [d.start for d in lst]

    def enclosing(rel: str, pos: tuple[int, int]) -> FnDef | None:
        lst = by_file.get(rel, [])
        k = bisect.bisect_right(starts.get(rel, []), pos)
        for d in reversed(lst[:k]):
            if d.start <= pos < d.end:
                return d
        return None

    # 2. References that are calls.
    calls: list[Call] = []
    for rel, occs in docs.items():
        src_text = source(rel)
        for o in occs:
            if o.roles & ROLE_DEFINITION or o.symbol not in defs:
                continue
            name = is_func(o.symbol)
            if name is None:
                continue
            col = src_text.char_col(o.line, o.col, name) if src_text else None
            if col is None:
                skipped["reference text is not the name (macro expansion, operator)"] += 1
                continue
            line_text = src_text.lines[o.line]
            if is_comment(line_text, col):
                skipped["in a comment (doc link, doc test)"] += 1
                continue
            if not src_text.followed_by_call(o.line, col + len(name)):
                skipped["mention, not a call"] += 1
                continue
            caller = enclosing(rel, (o.line, col))
            if caller is None:
                skipped["call outside any function"] += 1
                continue
            before = line_text[:col].rstrip()
            syntax = "method" if before.endswith(".") else "path" if before.endswith("::") else "bare"
            for callee in defs[o.symbol]:
                calls.append(Call(caller, callee, rel, o.line + 1, col, syntax, line_text.strip()))
    all_defs = [d for lst in by_file.values() for d in lst]
    return all_defs, calls, skipped


# --------------------------------------------------------------------------------------------
# Mapping to stream nodes and scoring
# --------------------------------------------------------------------------------------------

class NodeMap:
    """Stream function/method nodes by (file, name), to map SCIP definitions onto node ids."""

    def __init__(self, nodes: dict[str, dict]):
        self.by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for n in nodes.values():
            if n.get("kind") in NODE_FUNC_KINDS:
                self.by_key[(n.get("file"), n.get("name"))].append(n)

    def node_of(self, d: FnDef) -> str | None:
        best = None
        for n in self.by_key.get((d.file, d.name), []):
            if n["line_start"] <= d.line <= n["line_end"]:
                if best is None or (n["line_end"] - n["line_start"]
                                    < best["line_end"] - best["line_start"]):
                    best = n
        return best["id"] if best else None


def score(calls: list[Call], defs: list[FnDef], stream, n_examples: int) -> dict:
    nm = NodeMap(stream.nodes)
    node_of = {d: nm.node_of(d) for d in defs}
    fn_nodes = {v for v in node_of.values() if v is not None}
    unmapped_defs = [d for d, v in node_of.items() if v is None]
    # A definition whose name follows `fn` is a real item the stream lacks; others are functions
    # that a macro invocation generates (`test_case!(name, ...)`), which no syntax tree shows.
    lacking = [d for d in unmapped_defs if d.fn_keyword]

    truth: dict[tuple[str, str], Call] = {}
    dropped: Counter = Counter()
    dropped_ex: list[str] = []
    for c in calls:
        s, t = node_of.get(c.src), node_of.get(c.dst)
        if s is None or t is None:
            which = "caller" if s is None else "callee"
            d = c.src if s is None else c.dst
            how = "an fn item" if d.fn_keyword else "macro-generated"
            dropped[f"{which} {how}"] += 1
            if d.fn_keyword and len(dropped_ex) < n_examples:
                dropped_ex.append(f"{c.file}:{c.line} {which} `{d.name}` ({d.file}:{d.line}) has no "
                                  f"function/method node")
            continue
        truth.setdefault((s, t), c)

    stream_calls = list(stream.calls())
    edges: dict[tuple[str, str], dict] = {}
    for e in stream_calls:
        edges.setdefault((e["src"], e["dst"]), e)
    out_of_scope: Counter = Counter()
    in_scope: dict[tuple[str, str], dict] = {}
    for pair, e in edges.items():
        if pair[0] not in fn_nodes:
            n = stream.nodes.get(pair[0], {})
            out_of_scope[f"src is a {n.get('kind', 'missing node')} rust-analyzer has no "
                          f"function for"] += 1
        elif pair[1] not in fn_nodes:
            n = stream.nodes.get(pair[1], {})
            out_of_scope[f"dst is a {n.get('kind', 'missing node')} rust-analyzer has no "
                          f"function for"] += 1
        else:
            in_scope[pair] = e

    hit = [p for p in truth if p in edges]
    good = [p for p in in_scope if p in truth]
    by_res: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, e in in_scope.items():
        r = by_res[str(e.get("resolution"))]
        r[1] += 1
        r[0] += p in truth
    by_syntax: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, c in truth.items():
        r = by_syntax[c.syntax]
        r[1] += 1
        r[0] += p in edges

    # Examples, with what the other side says about the same call site.
    truth_at: dict[tuple[str, int], list[str]] = defaultdict(list)
    for (s, t), c in truth.items():
        truth_at[(s, c.line)].append(t)
    for c in calls:                      # every site, not only the first per pair
        s, t = node_of.get(c.src), node_of.get(c.dst)
        if s and t and t not in truth_at[(s, c.line)]:
            truth_at[(s, c.line)].append(t)
    edges_at: dict[tuple[str, int], list[str]] = defaultdict(list)
    for e in stream_calls:
        edges_at[(e["src"], e.get("line"))].append(e["dst"])
    wrong = []
    for p, e in sorted(in_scope.items(), key=lambda x: (x[1].get("resolution") or "", x[0])):
        if p in truth:
            continue
        n = stream.nodes.get(p[0], {})
        here = truth_at.get((p[0], e.get("line")), [])
        wrong.append((n.get("file"), f"{n.get('file')}:{e.get('line')} [{e.get('resolution')}] "
                      f"{p[0]} -> {p[1]}; rust-analyzer at that line: "
                      f"{here or 'no call into the crate'}"))
    not_judged = []
    for p, e in sorted(edges.items()):
        if p not in in_scope:
            n = stream.nodes.get(p[0], {})
            not_judged.append((n.get("file"), f"{n.get('file')}:{e.get('line')} "
                               f"[{e.get('resolution')}] {p[0]} -> {p[1]}"))
    # A miss is "misbound" when the stream has an edge from the caller to another function of the
    # callee's name (a cfg twin, a same-named method of another type), else "unresolved".
    dsts_by_name: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s_id, d_id in edges:
        dsts_by_name[(s_id, last_name(d_id))].add(d_id)
    miss_kinds: Counter = Counter()
    misses = []
    for p, c in sorted(truth.items(), key=lambda x: (x[1].file, x[1].line)):
        if p in edges:
            continue
        other = sorted(dsts_by_name.get((p[0], c.dst.name), set()))
        kind = "misbound" if other else "unresolved"
        miss_kinds[(c.syntax, kind)] += 1
        got = edges_at.get((p[0], c.line), [])
        misses.append((c.file, f"{c.file}:{c.line}:{c.col + 1} [{c.syntax}, {kind}] {p[0]} -> {p[1]}; "
                       + (f"stream has {other}" if other else f"stream at that line: {got or 'none'}")
                       + f"; `{c.text[:110]}`"))
    return {
        "defs": len(defs), "defs_unmapped": len(unmapped_defs), "defs_lacking": len(lacking),
        "lacking_examples": [f"{d.file}:{d.line} {d.name}" for d in lacking[:n_examples]],
        "sites": len(calls), "pairs": len(truth), "pairs_hit": len(hit),
        "recall": ratio(len(hit), len(truth)),
        "edges": len(edges), "edges_in_scope": len(in_scope), "edges_good": len(good),
        "precision": ratio(len(good), len(in_scope)),
        "by_resolution": {k: v for k, v in sorted(by_res.items())},
        "by_syntax": {k: v for k, v in sorted(by_syntax.items())},
        "out_of_scope": dict(out_of_scope), "dropped": dict(dropped), "dropped_examples": dropped_ex,
        "wrong": spread(wrong), "misses": spread(misses), "not_judged": spread(not_judged),
        "miss_kinds": {f"{a}/{b}": n for (a, b), n in sorted(miss_kinds.items())},
    }


def spread(items: list[tuple[str, str]]) -> list[str]:
    """The texts of (file, text) items, one file after another (round robin), so the first
    examples printed come from many files rather than all from the first one."""
    by_file: dict[str, list[str]] = defaultdict(list)
    for f, text in items:
        by_file[f].append(text)
    out, k = [], 0
    while len(out) < len(items):
        for lst in by_file.values():
            if k < len(lst):
                out.append(lst[k])
        k += 1
    return out


HASH_SUFFIX = re.compile(r"#\d+$")


def last_name(node_id: str) -> str:
    """`src/lib.rs::Type::method#2` -> `method`."""
    return HASH_SUFFIX.sub("", node_id).split("::")[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("args", nargs="+", metavar="CORPUS STREAM")
    ap.add_argument("--min-precision", type=float, default=0.95)
    ap.add_argument("--min-recall", type=float, default=0.80)
    ap.add_argument("--min-pairs", type=int, default=200)
    ap.add_argument("--truth-only", action="store_true",
                    help="arguments are corpora only; print ground-truth counts")
    ap.add_argument("--scip-cache", default=os.environ.get("TG_SCIP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "tldrgraph-accuracy", "scip"), help="where index.scip files are kept (keyed by content)")
    ap.add_argument("--rebuild-scip", action="store_true", help="ignore cached indexes")
    ap.add_argument("--rust-analyzer", default="rust-analyzer")
    ap.add_argument("--cargo", default="cargo")
    ap.add_argument("--examples", type=int, default=10, help="examples printed per list")
    a = ap.parse_args()
    jobs = corpus_jobs(ap, a.args, a.truth_only)

    per_corpus = []
    tot = Counter()
    res_tot: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for root, stream_path in jobs:
        t0 = time.time()
        name = os.path.basename(os.path.normpath(root))
        if not os.path.isfile(os.path.join(root, "Cargo.toml")):
            say(f"{root}: no Cargo.toml, not a crate")
            return 2
        scip = scip_index(root, a.scip_cache, a.rebuild_scip, a.rust_analyzer, a.cargo)
        defs, calls, skipped = truth_calls(root, scip)
        syn = Counter(c.syntax for c in calls)
        say(f"== {name}: index {scip}")
        say(f"   ground truth: {len(defs)} function definitions, {len(calls)} call sites "
            f"({dict(syn)}), {len({(c.src, c.dst) for c in calls})} distinct pairs; "
            f"references skipped: {dict(skipped)}")
        entry: dict = {"corpus": name, "defs": len(defs), "sites": len(calls)}
        if stream_path is not None:
            s = read_stream(stream_path)
            for w in stream_warnings(s):
                say("   WARNING:", w)
            r = score(calls, defs, s, a.examples)
            say(f"   {r['defs_unmapped']} of {r['defs']} rust-analyzer functions map to no stream node: "
                f"{r['defs_unmapped'] - r['defs_lacking']} generated by macro invocations, "
                f"{r['defs_lacking']} `fn` items" + (f", e.g. {r['lacking_examples'][:5]}"
                                                     if r["lacking_examples"] else ""))
            if r["dropped"]:
                say(f"   call sites left out (an end without a node): {r['dropped']}")
                examples("left out", r["dropped_examples"], a.examples)
            say(f"   recall    {r['recall']:.4f} ({r['pairs_hit']}/{r['pairs']} pairs)   by call "
                f"syntax: " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in r["by_syntax"].items()))
            say(f"   precision {r['precision']:.4f} ({r['edges_good']}/{r['edges_in_scope']} "
                f"edges in scope, of {r['edges']} distinct calls edges)")
            say("   precision by resolution: " + ", ".join(
                f"{k} {ratio(*v):.3f} ({v[0]}/{v[1]})" for k, v in r["by_resolution"].items()))
            say(f"   misses by call syntax/kind: {r['miss_kinds']}")
            if r["out_of_scope"]:
                say(f"   edges not judged: {r['out_of_scope']}")
            examples("wrong edges (not in the truth)", r["wrong"], a.examples)
            examples("misses (truth pair not in the stream)", r["misses"], a.examples)
            examples("edges not judged (an end rust-analyzer does not index: inactive cfg, "
                     "macro-generated)", r["not_judged"], a.examples)
            for k, v in r["by_resolution"].items():
                res_tot[k][0] += v[0]
                res_tot[k][1] += v[1]
            tot.update({"pairs": r["pairs"], "hit": r["pairs_hit"], "good": r["edges_good"],
                        "in_scope": r["edges_in_scope"]})
            entry.update({"pairs": r["pairs"], "edges_in_scope": r["edges_in_scope"],
                          "recall": round(r["recall"], 5), "precision": round(r["precision"], 5),
                          "precision_by_resolution": {k: round(ratio(*v), 5)
                                                      for k, v in r["by_resolution"].items()},
                          "edges_by_resolution": {k: v[1] for k, v in r["by_resolution"].items()}})
        else:
            tot["pairs"] += len({(c.src, c.dst) for c in calls})
        entry["seconds"] = round(time.time() - t0, 2)
        say(f"   ({entry['seconds']}s)")
        per_corpus.append(entry)

    out = {"check": "rust_calls", "corpora": per_corpus, "pairs": tot["pairs"]}
    failures: list[str] = []
    if tot["pairs"] < a.min_pairs:
        failures.append(f"only {tot['pairs']} ground-truth pairs < {a.min_pairs}")
    if not a.truth_only:
        recall, precision = ratio(tot["hit"], tot["pairs"]), ratio(tot["good"], tot["in_scope"])
        say(f"== combined: {tot['pairs']} pairs; recall {recall:.4f} (min {a.min_recall}), "
            f"precision {precision:.4f} (min {a.min_precision}); by resolution "
            + ", ".join(f"{k} {ratio(*v):.3f} ({v[1]})" for k, v in sorted(res_tot.items())))
        check("recall", recall, a.min_recall, failures)
        check("precision", precision, a.min_precision, failures)
        out.update({"recall": round(recall, 5), "precision": round(precision, 5),
                    "precision_by_resolution": {k: round(ratio(*v), 5)
                                                for k, v in sorted(res_tot.items())}})
        say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    else:
        say(f"== combined ground truth: {tot['pairs']} pairs"
            + (f"  FAIL: {failures[0]}" if failures else ""))
    out["pass"] = not failures
    print(json.dumps(out))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
