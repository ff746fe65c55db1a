#!/usr/bin/env python3
"""Python attribute-call resolution of tg-extract streams, against Jedi's type inference.

usage: py_attr_calls.py CORPUS STREAM [CORPUS STREAM ...] [--sample N] [--seed S]
                        [--min-precision P] [--min-recall R]
       py_attr_calls.py CORPUS [CORPUS ...] --truth-only [--sample N] [--seed S]

Needs Jedi (`bash bench/accuracy/deps_python.sh` installs it when missing); everything else is the
standard library. Jedi is an independent type-inference engine (the one behind many editors), so
this oracle reaches what py_calls.py's certain subset cannot: calls on typed receivers.

Sites. With `ast`, every attribute call site `<expr>.m(...)` (an ast.Call whose func is an
ast.Attribute: `x.m()`, `self.attr.m()`, `T(...).m()`, `mod.f()`, `super().m()`, decorators such
as `@app.get("/")`) of every .py file of the corpus that ast parses. The caller is the innermost
enclosing FunctionDef/AsyncFunctionDef/ClassDef, or the module; a def's decorators and default
values, and a class's decorators, bases and keywords, belong to the scope AROUND the def (Python
evaluates them there); lambdas and comprehensions belong to the def they are written in.
Annotations are skipped (they may never run), as in py_calls.py. The sites are sorted
(file, line, column) and N of them per corpus (--sample, default 600) are drawn with
random.Random(--seed); the same corpus, seed and N give the same sample.

Verdicts. For each sampled site Jedi is asked `goto(line, column of the attribute name,
follow_imports=True)` (a Script per file, a Project rooted at a copy of the corpus's .py files
without its .pyi stubs, which may disagree with the code, the copy's root and src/ folder first on
sys.path, so an installed copy of the same package never shadows it). A definition Jedi leaves on
a re-export (`from ._make import fields` in a package __init__) is followed on to the def it names.
Jedi's dynamic parameter inference (typing an unannotated parameter from the calls it finds to
its function) is turned off: a verdict rests on what the code states, not on a guess.
  repo       exactly one definition (duplicates removed), a def or class statement (by `ast`)
             in a .py file inside the corpus ("resolves into the repository"); or a single
             module- or class-level alias statement of the corpus (`ib = attr = attrib`: names
             and dotted names only) whose value Jedi's `infer` gives as one such def or class;
  outside    one or more definitions, all defs/classes outside the corpus (standard library,
             typeshed stubs, builtins, installed packages: `d.get()` on a dict, `os.path.join()`);
  unjudged   anything else: no definition, several with at least one in the corpus, a single
             statement/parameter/instance/module, a name Jedi cannot follow to its def, an error.
The calls of the same name in the same caller (see precision) are asked too, always, and every
question goes in one fixed order (file, line, column): one Jedi Script serves a whole file, and
Jedi's inference budget per Script makes a verdict depend, rarely, on the questions before it; the
fixed order keeps the verdicts a function of the corpus, --sample and --seed alone.
A repo target is mapped to the stream's node by file + name + its `def`/`class` line lying within
[line_start, line_end] (the innermost such node); the caller likewise (its def line), and a
module-level caller is the node whose id is the file path. Sites whose file or target file the
stream lacks, or whose caller/target no stream node matches, are left out and counted.

Scores (per corpus and combined; thresholds apply to the combined figures):
  recall     over the sampled `repo` sites: the share whose (caller id, Jedi target id) is a
             `calls` edge of the stream (a class target also counts as hit through an edge to
             its `__init__`).
  precision  over the distinct (caller id, method name) keys of the sampled sites that Jedi
             judged (`repo` or `outside`): of the stream's `calls` edges from the caller whose
             dst's last name component is the method name (edges of resolution `closure` are not
             call sites and are ignored, nor is the edge to `C.__init__` beside an edge to the
             class `C` from the same caller: it stands for the call `C(...)`), the share pointing
             at a Jedi target. Edges carry only
             the first line of a relation, so matching is by (src, name), as in py_calls.py. To
             be fair to edges made by other calls of the same name in the same caller, every call
             there whose callee name is that name (attribute calls and bare `name(...)` calls,
             sampled or not) is judged too, and a key counts only when all of them are judged;
             the targets of all of them are right answers. A key Jedi judged `outside` whose
             stream edges point into the repository counts those edges as wrong.
Keys the stream has no same-named edge for are misses (recall), not precision errors.

A human report (counts, per receiver shape, example misses and wrong edges) goes to stderr, one
JSON line to stdout. Exit 0 when the thresholds are met, 1 when not, 2 when a stream cannot be
read or Jedi is missing.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from common import (corpus_jobs, PyDef, Stream, check, collect_defs, examples, parse_python, ratio, read_stream,
                    say, stream_warnings, walk_corpus)
from py_calls import last_name

try:
    import jedi
    import parso.cache
except ImportError:                                 # reported by main(); selftest skips
    jedi = None

HERE = os.path.dirname(os.path.abspath(__file__))
FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
DEF_TYPES = FUNC_TYPES + (ast.ClassDef,)
NEWLINE = re.compile(r"\r\n|\r|\n")
HASH_SUFFIX = re.compile(r"#\d+$")


# --------------------------------------------------------------------------------------------
# Call sites, with their callers
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Site:
    file: str
    line: int          # the call's first line
    col: int           # the call's column (UTF-8 bytes, as ast gives it), for sorting
    name: str          # the called name (attribute or bare name)
    name_line: int     # where the name itself is, for Jedi: 1-based line,
    name_col: int      # 0-based column in characters
    caller: str        # collect_defs id of the innermost def/class, or the file path (module)
    caller_name: str   # its own name ("" for the module)
    caller_line: int   # its def/class keyword line (0 for the module)
    attr: bool         # `<expr>.name(...)` (True) or `name(...)` (False)
    shape: str         # receiver shape of an attribute call (see receiver_shape)
    decorator: bool    # the call is (in) a decorator expression


def receiver_shape(fn: ast.Attribute) -> str:
    """A coarse class of the receiver, for per-shape recall (it helps find what is missing)."""
    v = fn.value
    if isinstance(v, ast.Name):
        return "self.m" if v.id in ("self", "cls") else "name.m"
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
        return "super().m"
    if isinstance(v, ast.Attribute):
        base = v
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            return "self.a.m"
        return "a.b.m" if isinstance(base, ast.Name) else "expr.a.m"
    if isinstance(v, ast.Call):
        return "call().m"
    return "other"
# In the report, `name.m` and `a.b.m` whose target is a module-level def or class show as
# `mod.f` and `pkg.mod.f`: calls through imported modules rather than typed receivers.


def read_lines(root: str, rel: str) -> tuple[str, list[bytes]] | None:
    """The decoded source (what Jedi reads) and its lines re-encoded as UTF-8 (what ast's
    byte columns count in). None when the file cannot be decoded."""
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(enc)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, [ln.encode("utf-8") for ln in NEWLINE.split(text)]


def list_sites(tree: ast.Module, rel: str, lines: list[bytes]) -> tuple[list[Site], int]:
    """Every attribute and bare-name call site of a module; also how many attribute calls were
    dropped because the attribute name could not be located in the source (NFKC-normalised
    identifiers)."""
    defs = {id(d.node): d for d in collect_defs(tree, rel)}
    sites: list[Site] = []
    lost = 0

    def char_col(line: int, byte_col: int) -> int:
        return len(lines[line - 1][:byte_col].decode("utf-8", errors="replace"))

    def on_call(call: ast.Call, caller: PyDef | None, in_deco: bool) -> None:
        nonlocal lost
        fn = call.func
        if caller is None:
            cid, cname, cline = rel, "", 0
        else:
            cid, cname, cline = caller.id, caller.node.name, caller.node.lineno
        if isinstance(fn, ast.Attribute):
            end_line, end_col = fn.end_lineno, fn.end_col_offset
            raw = fn.attr.encode("utf-8")
            start = end_col - len(raw)
            if end_line is None or start < 0 or lines[end_line - 1][start:end_col] != raw:
                lost += 1
                return
            sites.append(Site(rel, call.lineno, call.col_offset, fn.attr, end_line,
                              char_col(end_line, start), cid, cname, cline, True,
                              receiver_shape(fn), in_deco))
        elif isinstance(fn, ast.Name):
            sites.append(Site(rel, call.lineno, call.col_offset, fn.id, fn.lineno,
                              char_col(fn.lineno, fn.col_offset), cid, cname, cline, False,
                              "bare", in_deco))

    def walk(n: ast.AST, caller: PyDef | None, in_deco: bool = False) -> None:
        if isinstance(n, DEF_TYPES):
            for c in n.decorator_list:
                walk(c, caller, True)
            if isinstance(n, ast.ClassDef):
                for c in n.bases + [k.value for k in n.keywords]:
                    walk(c, caller, in_deco)
            else:
                for c in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                    walk(c, caller, in_deco)
            inner = defs[id(n)]
            for stmt in n.body:
                walk(stmt, inner)
            return
        if isinstance(n, ast.AnnAssign):            # skip the annotation, keep target and value
            for c in (n.target, n.value):
                if c is not None:
                    walk(c, caller, in_deco)
            return
        if isinstance(n, ast.arg):                  # lambda parameters: only annotations below
            return
        if isinstance(n, ast.Call):
            on_call(n, caller, in_deco)
        for c in ast.iter_child_nodes(n):
            walk(c, caller, in_deco)

    walk(tree, None)
    return sites, lost


@dataclass
class Corpus:
    root: str
    name: str
    sites: list[Site] = field(default_factory=list)        # attribute + bare-name calls
    texts: dict[str, str] = field(default_factory=dict)
    parsed: int = 0
    rejected: list[str] = field(default_factory=list)
    lost: int = 0
    def_lines: set = field(default_factory=set)     # (file, name, def/class keyword line)

    @classmethod
    def load(cls, root: str) -> "Corpus":
        c = cls(root, os.path.basename(os.path.normpath(root)))
        for rel in walk_corpus(root, (".py",)):
            tree = parse_python(root, rel)
            got = read_lines(root, rel) if tree is not None else None
            if got is None:
                c.rejected.append(rel)
                continue
            c.parsed += 1
            c.texts[rel] = got[0]
            c.def_lines.update((rel, d.node.name, d.node.lineno) for d in collect_defs(tree, rel))
            sites, lost = list_sites(tree, rel, got[1])
            c.sites += sites
            c.lost += lost
        c.sites.sort(key=lambda s: (s.file, s.line, s.col, s.name_line, s.name_col))
        return c

    def attr_sites(self) -> list[Site]:
        return [s for s in self.sites if s.attr]

    def sample(self, n: int, seed: int) -> list[Site]:
        pool = self.attr_sites()
        got = pool if n >= len(pool) else random.Random(seed).sample(pool, n)
        return sorted(got, key=lambda s: (s.file, s.line, s.col, s.name_line, s.name_col))


# --------------------------------------------------------------------------------------------
# Jedi's verdicts
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    status: str                 # "repo" | "outside" | "unjudged"
    file: str = ""              # repo: the target's repo-relative path
    line: int = 0               # repo: the line of the def/class name
    name: str = ""              # repo: the def/class name
    kind: str = ""              # repo: "function" | "class"
    detail: str = ""            # outside: Jedi's full name(s); unjudged: why


def dedup(defs: list) -> list:
    seen, out = set(), []
    for d in defs:
        k = (str(d.module_path), d.line, d.column, d.name)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out


ALIAS = re.compile(r"^\s*[A-Za-z_]\w*\s*=\s*(?:[A-Za-z_]\w*\s*=\s*)*[A-Za-z_][\w.]*\s*(?:#.*)?$")


class Judge:
    """Jedi over one corpus: one Project, one Script per file (kept while that file's sites
    are asked, which is why callers go file by file: three times faster than a Script per
    question, and the same verdicts but for a few builtin methods Jedi gives up on).

    Jedi reads a copy of the corpus's parsed .py files, without its .pyi stubs: a package's own
    stubs can disagree with its code (attrs' `attrs/__init__.pyi` re-exports `astuple` from
    `attr`, the code imports it from `attr._next_gen`), Jedi prefers stubs, and calls run the code.
    """

    def __init__(self, corpus: "Corpus"):
        self._tmp = tempfile.TemporaryDirectory(prefix="tg-jedi-")
        self.root = os.path.realpath(self._tmp.name)
        for rel in corpus.texts:
            dst = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(corpus.root, rel), dst)
        self.def_lines = corpus.def_lines
        # Parsed trees are shared between Scripts through parso's cache, and Jedi keeps state on
        # them: start each corpus afresh so that its verdicts do not depend on the one before.
        parso.cache.parser_cache.clear()
        # No guessing a parameter's type from the calls found to the function: the truth is
        # what the code states (annotations, constructions, returns, imports, assignments).
        jedi.settings.dynamic_params = False
        jedi.settings.dynamic_params_for_other_modules = False
        env = jedi.InterpreterEnvironment()
        here = {os.path.realpath(HERE), os.path.realpath(os.getcwd())}
        base = [p for p in env.get_sys_path() if p and os.path.realpath(p) not in here]
        src = os.path.join(self.root, "src")
        first = [src, self.root] if os.path.isdir(src) else [self.root]
        self.project = jedi.Project(self.root, sys_path=first + base)
        self.env = env
        self._file: str | None = None
        self._script = None
        self.cache: dict[tuple, Verdict] = {}

    def _rel(self, path) -> str | None:
        """Repo-relative path of a Jedi module path, or None when it lies outside the corpus."""
        if path is None:
            return None
        real = os.path.realpath(str(path))
        rel = os.path.relpath(real, self.root)
        if rel == ".." or rel.startswith(".." + os.sep):
            return None
        return rel.replace(os.sep, "/")

    def judge(self, rel: str, text: str, line: int, col: int) -> Verdict:
        key = (rel, line, col)
        if key in self.cache:
            return self.cache[key]
        defs = None
        for attempt in range(2):
            if self._file != rel or attempt:
                self._file = rel
                self._script = jedi.Script(text, path=os.path.join(self.root, rel),
                                           project=self.project, environment=self.env)
            try:
                defs = dedup([self._settle(d)
                              for d in self._script.goto(line, col, follow_imports=True)])
                break
            except Exception as err:
                # Jedi's own bugs (a KeyError deep in its inference, after some earlier
                # questions): once more with a fresh Script, then count it, never crash.
                error = f"jedi error {type(err).__name__}"
        if defs is None:
            v = Verdict("unjudged", detail=error)
            self.cache[key] = v
            return v
        v = self._verdict(defs)
        if v.detail == "a statement in the repository" and self._is_alias(defs[0]):
            # `ib = attr = attrib` at module or class level: what the name holds is certain.
            try:
                held = self._verdict(dedup(self._script.infer(line, col)))
            except Exception:
                held = v
            if held.status == "repo":
                v = Verdict("repo", held.file, held.line, held.name, held.kind, detail="alias")
        self.cache[key] = v
        return v

    def _settle(self, d, hops: int = 3):
        """Follow a definition Jedi leaves on a re-export (`from ._make import fields` in a
        package __init__ that has a .pyi beside it) to the def it names, while that is one."""
        for _ in range(hops):
            r = self._rel(d.module_path)
            if r is None or d.type not in ("function", "class") or self._is_def(r, d):
                break
            nxt = dedup(d.goto(follow_imports=True))
            if len(nxt) != 1 or (nxt[0].module_path, nxt[0].line) == (d.module_path, d.line):
                break
            d = nxt[0]
        return d

    def _is_def(self, rel: str, d) -> bool:
        """Is Jedi's definition a def/class statement of the corpus (by `ast`)?"""
        return (rel, d.name, d.line) in self.def_lines

    @staticmethod
    def _is_alias(d) -> bool:
        """A module- or class-level `name = other` (or `a = b = other`, dotted names allowed)."""
        try:
            scope = d.parent().type
        except Exception:
            return False
        return scope in ("module", "class") and ALIAS.match(d.get_line_code()) is not None

    def _verdict(self, defs: list) -> Verdict:
        if not defs:
            return Verdict("unjudged", detail="no definition")
        inside = [(d, self._rel(d.module_path)) for d in defs]
        if all(r is None for _, r in inside):
            if all(d.type in ("function", "class") for d in defs):
                return Verdict("outside", detail=", ".join(sorted({d.full_name or d.name
                                                                   for d in defs})))
            kinds = "/".join(sorted({d.type for d in defs}))
            return Verdict("unjudged", detail=f"outside, {kinds}")
        if len(defs) > 1:
            return Verdict("unjudged", detail=f"{len(defs)} definitions")
        d, r = inside[0]
        if d.type not in ("function", "class"):
            return Verdict("unjudged", detail=f"a {d.type} in the repository")
        if not r.endswith(".py"):
            return Verdict("unjudged", detail="a stub in the repository")
        if not self._is_def(r, d):
            return Verdict("unjudged", detail=f"a {d.type} name, not its def, in the repository")
        return Verdict("repo", r, d.line, d.name, d.type)


# --------------------------------------------------------------------------------------------
# Mapping to stream ids
# --------------------------------------------------------------------------------------------

class NodeIndex:
    """Stream nodes by (file, name), to find the node of a def by a line inside its span."""

    def __init__(self, s: Stream):
        self.by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for n in s.nodes.values():
            if "file" in n and "name" in n:
                self.by_key[(n["file"], n["name"])].append(n)
        self.files = s.files

    def find(self, file: str, name: str, line: int) -> str | None:
        """The innermost stream node named `name` in `file` whose span holds `line`."""
        best = None
        for n in self.by_key.get((file, name), []):
            lo, hi = n.get("line_start", 0), n.get("line_end", 0)
            if lo <= line <= hi and (best is None or hi - lo < best[0]):
                best = (hi - lo, n["id"])
        return best[1] if best else None

    def caller(self, s: Site) -> str | None:
        if not s.caller_name:
            return s.file if s.file in self.files else None
        return self.find(s.file, s.caller_name, s.caller_line)


# --------------------------------------------------------------------------------------------
# Scoring one corpus
# --------------------------------------------------------------------------------------------

def judge_sample(corpus: Corpus, sample: list[Site], judge: Judge,
                 siblings: dict[tuple, list[Site]] | None) -> dict[Site, Verdict]:
    """Verdicts for the sample and (when `siblings` is given) for every call of the same name
    in the same caller; file by file so each file's Script is built once."""
    todo = set(sample)
    if siblings is not None:
        for s in sample:
            todo.update(siblings[(s.file, s.caller, s.name)])
    out = {}
    for s in sorted(todo, key=lambda s: (s.file, s.line, s.col, s.name_line, s.name_col)):
        out[s] = judge.judge(s.file, corpus.texts[s.file], s.name_line, s.name_col)
    return out


def score_corpus(corpus: Corpus, sample: list[Site], verdicts: dict[Site, Verdict],
                 siblings: dict[tuple, list[Site]], s: Stream) -> dict:
    idx = NodeIndex(s)
    calls = [e for e in s.calls()]
    pairs = {(e["src"], e["dst"]): e for e in calls}
    by_src_name: dict[tuple, set[str]] = defaultdict(set)
    for e in calls:
        name = last_name(e["dst"])
        # A call of a class also has an edge to the class's `__init__`: that edge stands for
        # `C(...)`, not for a `.__init__(...)` call site, so it is not scored under `__init__`.
        constructor = (name == "__init__"
                       and (e["src"], e["dst"].rsplit(".", 1)[0]) in pairs)
        if name is not None and e.get("resolution") != "closure" and not constructor:
            by_src_name[(e["src"], name)].add(e["dst"])

    left_out: Counter = Counter()
    target_ids: dict[Site, str | None] = {}

    def target_of(x: Site) -> str | None:
        if x not in target_ids:
            v = verdicts[x]
            target_ids[x] = idx.find(v.file, v.name, v.line) if v.status == "repo" else None
        return target_ids[x]

    # Recall over the sampled `repo` sites.
    resolved, hits, misses = [], [], []
    shape_tot: Counter = Counter()
    shape_hit: Counter = Counter()
    hit_res: Counter = Counter()
    for x in sample:
        v = verdicts[x]
        if v.status != "repo":
            continue
        if x.file not in s.files or v.file not in s.files:
            left_out["file not in the stream"] += 1
            continue
        src, dst = idx.caller(x), target_of(x)
        if src is None:
            left_out["caller has no stream node"] += 1
            continue
        if dst is None:
            left_out["Jedi's target has no stream node"] += 1
            continue
        resolved.append(x)
        shape = x.shape
        if shape in ("name.m", "a.b.m") and "." not in HASH_SUFFIX.sub("", dst.split("::")[-1]):
            shape = {"name.m": "mod.f", "a.b.m": "pkg.mod.f"}[shape]   # a module-level target
        shape += ((" decorator" if x.decorator else "")
                  + (" via alias" if v.detail == "alias" else "") + f" -> {v.kind}")
        shape_tot[shape] += 1
        e = pairs.get((src, dst)) or (pairs.get((src, dst + ".__init__")) if v.kind == "class"
                                      else None)
        if e is not None:
            hits.append(x)
            shape_hit[shape] += 1
            hit_res[e.get("resolution")] += 1
        else:
            same = sorted(by_src_name.get((src, x.name), ()))
            misses.append(f"{x.file}:{x.line} [{shape}] {src} -> {dst}"
                          + (f"; stream has {same}" if same else ""))

    # Precision over the judged (caller, name) keys.
    good = total = 0
    keys_judged = keys_skipped = 0
    wrong = []
    seen_keys = set()
    for x in sample:
        if verdicts[x].status not in ("repo", "outside"):
            continue
        k = (x.file, x.caller, x.name)
        if k in seen_keys:
            continue
        seen_keys.add(k)
        src = idx.caller(x)
        if src is None or x.file not in s.files:
            continue
        want, ok_all, outside = set(), True, []
        for y in siblings[k]:
            vy = verdicts[y]
            if vy.status == "outside":
                outside.append(vy.detail)
            elif vy.status == "repo" and vy.file in s.files and target_of(y) is not None:
                want.add(target_of(y))
                if vy.kind == "class":
                    want.add(target_of(y) + ".__init__")
            else:
                ok_all = False
        if not ok_all:
            keys_skipped += 1
            continue
        keys_judged += 1
        got = by_src_name.get((src, x.name), set())
        if not got:
            continue
        ok = len(got & want)
        good += ok
        total += len(got)
        if ok < len(got):
            truth = sorted(t for t in want if not t.endswith(".__init__") or t[:-9] not in want)
            truth += [f"outside: {d}" for d in sorted(set(outside))]
            wrong.append(f"{x.file}:{x.line} [{x.shape}] {src} calls .{x.name}: Jedi {truth}, "
                         f"stream {sorted(got - want)}")

    return {"resolved": len(resolved), "hits": len(hits), "recall": ratio(len(hits), len(resolved)),
            "prec_good": good, "prec_total": total, "precision": ratio(good, total),
            "keys_judged": keys_judged, "keys_skipped": keys_skipped, "left_out": left_out,
            "misses": misses, "wrong": wrong, "shape_tot": shape_tot, "shape_hit": shape_hit,
            "hit_res": hit_res}


def sibling_index(corpus: Corpus) -> dict[tuple, list[Site]]:
    sib: dict[tuple, list[Site]] = defaultdict(list)
    for x in corpus.sites:
        sib[(x.file, x.caller, x.name)].append(x)
    return sib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("args", nargs="+", metavar="CORPUS STREAM")
    ap.add_argument("--sample", type=int, default=600, help="attribute call sites per corpus")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-precision", type=float, default=0.95)
    ap.add_argument("--min-recall", type=float, default=0.60)
    ap.add_argument("--truth-only", action="store_true",
                    help="arguments are corpora only; print Jedi's verdict counts")
    ap.add_argument("--examples", type=int, default=15, help="examples printed per list")
    a = ap.parse_args()
    if jedi is None:
        say("jedi is not installed: run bash bench/accuracy/deps_python.sh")
        return 2
    jobs = corpus_jobs(ap, a.args, a.truth_only)

    per_corpus = []
    tot = Counter()
    for root, stream_path in jobs:
        t0 = time.monotonic()
        s = None
        if stream_path is not None:                 # read first: a bad stream fails fast
            s = read_stream(stream_path)
        corpus = Corpus.load(root)
        sample = corpus.sample(a.sample, a.seed)
        sib = sibling_index(corpus)
        judge = Judge(corpus)
        verdicts = judge_sample(corpus, sample, judge, sib)
        status = Counter(verdicts[x].status for x in sample)
        why = Counter(verdicts[x].detail for x in sample if verdicts[x].status == "unjudged")
        n_attr = len(corpus.attr_sites())
        say(f"== {corpus.name}: {corpus.parsed} modules parsed, {len(corpus.rejected)} rejected; "
            f"{n_attr} attribute call sites ({corpus.lost} unlocatable), {len(sample)} sampled "
            f"(seed {a.seed})")
        say(f"   Jedi: {status.get('repo', 0)} into the repository, {status.get('outside', 0)} "
            f"outside, {status.get('unjudged', 0)} unjudged {dict(why.most_common(6))}")
        entry = {"corpus": corpus.name, "attr_sites": n_attr, "sampled": len(sample),
                 "jedi_repo": status.get("repo", 0), "jedi_outside": status.get("outside", 0),
                 "jedi_unjudged": status.get("unjudged", 0)}
        if s is not None:
            for w in stream_warnings(s):
                say("   WARNING:", w)
            res = score_corpus(corpus, sample, verdicts, sib, s)
            if res["left_out"]:
                say(f"   left out of recall: {dict(res['left_out'])}")
            say(f"   recall    {res['recall']:.4f} ({res['hits']}/{res['resolved']} sites Jedi "
                f"resolves into the repository)")
            say(f"   precision {res['precision']:.4f} ({res['prec_good']}/{res['prec_total']} "
                f"same-named edges over {res['keys_judged']} judged (caller, name) keys; "
                f"{res['keys_skipped']} keys left out: another call of the name there unjudged)")
            say(f"   resolution of the stream edges that hit: {dict(res['hit_res'])}")
            for shape, n in sorted(res["shape_tot"].items(), key=lambda kv: -kv[1]):
                say(f"     {shape:40s} {n:4d} sites, recall {res['shape_hit'][shape] / n:.3f}")
            examples("misses (Jedi's target, no such stream edge)", res["misses"], a.examples)
            examples("wrong edges (same name, not Jedi's target)", res["wrong"], a.examples)
            entry.update({"resolved": res["resolved"], "recall": round(res["recall"], 5),
                          "precision": round(res["precision"], 5), "prec_edges": res["prec_total"]})
            tot.update({"hits": res["hits"], "resolved": res["resolved"],
                        "good": res["prec_good"], "total": res["prec_total"]})
        entry["seconds"] = round(time.monotonic() - t0, 1)
        say(f"   {entry['seconds']} s")
        per_corpus.append(entry)

    out = {"check": "py_attr_calls", "seed": a.seed, "sample": a.sample, "corpora": per_corpus}
    failures: list[str] = []
    if not a.truth_only:
        recall = ratio(tot["hits"], tot["resolved"])
        precision = ratio(tot["good"], tot["total"])
        say(f"== combined: recall {recall:.4f} ({tot['hits']}/{tot['resolved']}, "
            f"min {a.min_recall}), precision {precision:.4f} ({tot['good']}/{tot['total']}, "
            f"min {a.min_precision})")
        if tot["resolved"] == 0:
            failures.append("no sampled site resolves into a repository (nothing measured)")
        check("recall", recall, a.min_recall, failures)
        check("precision", precision, a.min_precision, failures)
        out.update({"recall": round(recall, 5), "precision": round(precision, 5),
                    "resolved": tot["resolved"], "prec_edges": tot["total"]})
        say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    out["pass"] = not failures
    print(json.dumps(out))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
