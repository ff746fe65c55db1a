#!/usr/bin/env python3
"""Python call-resolution accuracy of tg-extract streams, against an independent `ast` resolver.

usage: py_calls.py CORPUS STREAM [CORPUS STREAM ...] [--min-precision P] [--min-recall R]
                   [--min-sites N]
       py_calls.py CORPUS [CORPUS ...] --truth-only

The resolver here only answers where Python's scoping rules leave no doubt (the "certain subset"),
and only for calls made inside a def (function or method); the caller is the innermost def:
  rule 1 (local)   `f(...)`, f a module-level def of the same module (its only module-level binding)
  rule 2 (self)    `self.m(...)` in a method whose first parameter is `self` (never rebound), of a
                   class whose body binds m exactly once, by a def
  rule 3 (import)  `f(...)`, f bound only by a module-level `from X import f` / `import g as f`, X a
                   repository module whose only module-level binding of the name is a def
  rule 4 (module)  `m.f(...)`, m bound only by a module-level `import pkg.mod as m`, `import mod` or
                   `from pkg import mod` (mod a repository module), f a def of mod as in rule 3
For rules 1, 3 and 4 the name must not be bound in the calling function nor in any enclosing function
(parameters, assignments, loop/with/except targets, imports, nested defs, global/nonlocal; lambda
parameters and comprehension targets too, conservatively). Class bodies are skipped, as Python does.
Modules with a module-level `import *` are left out of rules 1, 3 and 4. Calls in annotations are
ignored (they may never run); decorators and default values belong to the scope around the def.

Repository modules are found from the importing file's directory for relative imports, and for
absolute ones from the corpus root or its `src/` folder (sdists use both layouts); an import that
resolves in both, or to both `X.py` and `X/__init__.py`, is left out.

Scores, over calls whose caller and callee files are both in the stream:
  recall     share of distinct ground-truth (src, dst) pairs present as `calls` edges
  precision  over the distinct ground-truth (src, callee name) pairs: of the stream's calls edges
             from src whose dst's last name component is the callee's name, the share pointing at
             the ground-truth dst (pairs the stream has no such edge for count as misses, not here)
  sites      number of ground-truth call sites (a floor, so a broken resolver cannot pass vacuously)
Thresholds apply to the combined numbers of all corpora given. A human report goes to stderr, one JSON
line to stdout; exit 0 when every threshold is met, 1 when not.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from common import (PyDef, check, collect_defs, examples, parse_python, ratio, read_stream, say,
                    stream_warnings, walk_corpus)

FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
RULES = ("local", "self", "import", "module")


# --------------------------------------------------------------------------------------------
# Name bindings per scope
# --------------------------------------------------------------------------------------------

@dataclass
class Bindings:
    """What one scope (module, class body or function) binds, as a list of binding sites per name."""
    sites: dict[str, list[ast.AST]] = field(default_factory=lambda: defaultdict(list))
    star_import: bool = False

    def add(self, name: str, node: ast.AST) -> None:
        self.sites[name].append(node)

    def only(self, name: str) -> ast.AST | None:
        """The single node binding `name`, or None when it is bound zero or several times."""
        s = self.sites.get(name, [])
        return s[0] if len(s) == 1 else None


def all_params(args: ast.arguments) -> list[ast.arg]:
    out = args.posonlyargs + args.args + args.kwonlyargs
    out += [a for a in (args.vararg, args.kwarg) if a is not None]
    return out


def scope_bindings(scope: ast.AST) -> Bindings:
    """Names bound by `scope` itself (Module, ClassDef or FunctionDef), not by nested scopes.

    Nested def/class statements bind their own name here, and their decorators and defaults run
    here; their bodies do not. Lambda parameters and comprehension targets live in scopes of
    their own, but are counted here anyway: that only shrinks the certain subset.
    """
    b = Bindings()
    if isinstance(scope, FUNC_TYPES):
        for a in all_params(scope.args):
            b.add(a.arg, a)

    def visit(n: ast.AST) -> None:
        if isinstance(n, FUNC_TYPES + (ast.ClassDef,)):
            b.add(n.name, n)
            outer = list(n.decorator_list)
            if isinstance(n, ast.ClassDef):
                outer += n.bases + [k.value for k in n.keywords]
            else:
                outer += n.args.defaults + [d for d in n.args.kw_defaults if d is not None]
            for c in outer:
                visit(c)
            return
        if isinstance(n, ast.Lambda):
            for a in all_params(n.args):
                b.add(a.arg, a)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            b.add(n.id, n)
        elif isinstance(n, ast.Import):
            for a in n.names:
                b.add(a.asname or a.name.split(".")[0], n)
        elif isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name == "*":
                    b.star_import = True
                else:
                    b.add(a.asname or a.name, n)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                b.add(name, n)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            b.add(n.name, n)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            b.add(n.name, n)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            b.add(n.rest, n)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for stmt in scope.body:
        visit(stmt)
    return b


# --------------------------------------------------------------------------------------------
# Modules of one corpus and how imports resolve between them
# --------------------------------------------------------------------------------------------

@dataclass
class Module:
    rel: str                          # repo-relative path
    tree: ast.Module
    defs: list[PyDef]
    def_of: dict[int, PyDef]          # id(ast node) -> PyDef
    top: Bindings                     # module-scope bindings (+ every `global` declaration)
    funcs: dict[str, PyDef] = field(default_factory=dict)   # certain module-level functions
    # names bound once at module level by an import of a repository function / module
    imported_funcs: dict[str, PyDef] = field(default_factory=dict)
    imported_mods: dict[str, "Module"] = field(default_factory=dict)


class Corpus:
    def __init__(self, root: str):
        self.root = root
        self.rejected: list[str] = []
        self.modules: dict[str, Module] = {}
        self.dirs: set[str] = set()                 # every directory holding a .py file
        for rel in walk_corpus(root, (".py", ".pyi")):
            if rel.endswith(".pyi"):
                continue                            # stubs define no calls worth checking
            tree = parse_python(root, rel)
            if tree is None:
                self.rejected.append(rel)
                continue
            defs = collect_defs(tree, rel)
            top = scope_bindings(tree)
            for n in ast.walk(tree):                # `global f` anywhere may rebind module-level f
                if isinstance(n, ast.Global):
                    for name in n.names:
                        top.add(name, n)
            m = Module(rel, tree, defs, {id(d.node): d for d in defs}, top)
            if not top.star_import:
                for name, sites in top.sites.items():
                    if len(sites) == 1 and isinstance(sites[0], FUNC_TYPES):
                        m.funcs[name] = m.def_of[id(sites[0])]
            self.modules[rel] = m
            d = os.path.dirname(rel)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = os.path.dirname(d)
        # Absolute imports resolve from the corpus root or from src/ (the two sdist layouts).
        self.roots = [""] + (["src"] if "src" in self.dirs else [])
        for m in self.modules.values():
            self._bind_imports(m)

    # -- module lookup ------------------------------------------------------------------------

    def _module_at(self, path: str) -> tuple[str, Module | None] | None:
        """What `path` (a '/'-joined dotted name under some directory) names: a module file, a
        package (its __init__, or None for a namespace package), or nothing. Ambiguous -> None."""
        as_file = self.modules.get(path + ".py")
        as_pkg = self.modules.get(path + "/__init__.py")
        if as_file and as_pkg:
            return None
        if as_file or as_pkg:
            return (path, as_file or as_pkg)
        if path in self.dirs:
            return (path, None)                     # namespace package: a folder, no __init__
        return None

    def resolve(self, importer: str, module: str | None, level: int) -> tuple[str, Module | None] | None:
        """Resolve the module part of an import statement in file `importer` to (path, Module)."""
        parts = module.split(".") if module else []
        if level:
            base = os.path.dirname(importer)
            for _ in range(level - 1):
                if not base:
                    return None                     # above the corpus root
                base = os.path.dirname(base)
            path = "/".join(([base] if base else []) + parts)
            if not path:
                return None
            return self._module_at(path)
        hits = []
        for r in self.roots:
            got = self._module_at("/".join(([r] if r else []) + parts))
            if got:
                hits.append(got)
        return hits[0] if len(hits) == 1 else None

    # -- import bindings ----------------------------------------------------------------------

    def _bind_imports(self, m: Module) -> None:
        """Fill m.imported_funcs / m.imported_mods from its module-level imports (rules 3, 4)."""
        if m.top.star_import:
            return
        for name in list(m.top.sites):
            node = m.top.only(name)
            if isinstance(node, ast.Import):
                alias = next(a for a in node.names if (a.asname or a.name.split(".")[0]) == name)
                if alias.asname is None and "." in alias.name:
                    continue                        # `import pkg.mod` binds pkg, not mod
                got = self.resolve(m.rel, alias.name, 0)
                if got and got[1] is not None:
                    m.imported_mods[name] = got[1]
            elif isinstance(node, ast.ImportFrom):
                alias = next(a for a in node.names if (a.asname or a.name) == name)
                got = self.resolve(m.rel, node.module, node.level)
                if not got:
                    continue
                path, pkg = got
                sub = self._module_at(path + "/" + alias.name)
                func = pkg.funcs.get(alias.name) if pkg else None
                if sub and sub[1] is not None:
                    # A submodule, unless the package's __init__ binds the same name itself.
                    if pkg is None or not any(not isinstance(s, (ast.Import, ast.ImportFrom))
                                              for s in pkg.top.sites.get(alias.name, [])):
                        if func is None:
                            m.imported_mods[name] = sub[1]
                elif func is not None:
                    m.imported_funcs[name] = func


# --------------------------------------------------------------------------------------------
# Ground-truth call sites
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Site:
    src: str
    dst: str
    name: str      # the callee def's own name (last qualified-name component of dst)
    line: int
    rule: str
    file: str      # caller file
    dst_file: str


def call_sites(corpus: Corpus, m: Module) -> tuple[list[Site], Counter]:
    """Ground-truth sites of one module, and counts of why bare/dotted calls were skipped."""
    sites: list[Site] = []
    skipped: Counter = Counter()
    cache: dict[int, Bindings] = {}

    def bindings(node: ast.AST) -> Bindings:
        if id(node) not in cache:
            cache[id(node)] = scope_bindings(node)
        return cache[id(node)]

    def bound_in_chain(name: str, chain: list[ast.AST]) -> bool:
        return any(name in bindings(f).sites for f in chain)

    def on_call(call: ast.Call, caller: PyDef, chain: list[ast.AST]) -> None:
        fn = call.func
        target, rule = None, None
        if isinstance(fn, ast.Name):
            if bound_in_chain(fn.id, chain):
                skipped["name bound in function"] += 1
                return
            if fn.id in m.funcs:
                target, rule = m.funcs[fn.id], "local"
            elif fn.id in m.imported_funcs:
                target, rule = m.imported_funcs[fn.id], "import"
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
            base = fn.value.id
            if base == "self" and caller.kind == "method":
                target = self_target(caller, fn.attr)
                rule = "self"
            elif base in m.imported_mods and not bound_in_chain(base, chain):
                target, rule = m.imported_mods[base].funcs.get(fn.attr), "module"
        if target is not None:
            sites.append(Site(caller.id, target.id, target.node.name, call.lineno, rule,
                              m.rel, target.id.split("::", 1)[0]))

    def self_target(method: PyDef, attr: str) -> PyDef | None:
        params = method.node.args.posonlyargs + method.node.args.args
        if not params or params[0].arg != "self" or len(bindings(method.node).sites.get("self", [])) != 1:
            return None
        cls = method.parent
        node = bindings(cls.node).only(attr)
        return m.def_of[id(node)] if isinstance(node, FUNC_TYPES) else None

    def walk(n: ast.AST, caller: PyDef | None, chain: list[ast.AST]) -> None:
        """Visit n; `caller` is the innermost def/class, `chain` the enclosing function nodes."""
        if isinstance(n, FUNC_TYPES + (ast.ClassDef,)):
            for c in n.decorator_list:
                walk(c, caller, chain)
            if isinstance(n, ast.ClassDef):
                for c in n.bases + [k.value for k in n.keywords]:
                    walk(c, caller, chain)
                inner, inner_chain = m.def_of[id(n)], chain
            else:
                for c in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                    walk(c, caller, chain)
                inner, inner_chain = m.def_of[id(n)], chain + [n]
            for stmt in n.body:
                walk(stmt, inner, inner_chain)
            return
        if isinstance(n, ast.AnnAssign):            # skip the annotation, keep target and value
            for c in (n.target, n.value):
                if c is not None:
                    walk(c, caller, chain)
            return
        if isinstance(n, ast.arg):                  # a lambda parameter: only its annotation
            return                                  # (impossible) lies below
        if isinstance(n, ast.Call) and caller is not None and caller.kind != "class":
            on_call(n, caller, chain)
        for c in ast.iter_child_nodes(n):
            walk(c, caller, chain)

    walk(m.tree, None, [])
    return sites, skipped


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

HASH_SUFFIX = re.compile(r"#\d+$")


def last_name(node_id: str) -> str | None:
    """`a/b.py::C.m#2` -> `m`; None for module ids (no '::')."""
    if "::" not in node_id:
        return None
    return HASH_SUFFIX.sub("", node_id.split("::", 1)[1]).split(".")[-1]


def score(sites: list[Site], calls: list[dict]) -> dict:
    """Recall over distinct (src, dst) pairs, precision over distinct (src, name) pairs."""
    stream_pairs = {(e["src"], e["dst"]) for e in calls}
    by_src_name: dict[tuple, set[str]] = defaultdict(set)
    for e in calls:
        name = last_name(e["dst"])
        if name is not None:
            by_src_name[(e["src"], name)].add(e["dst"])

    pairs = {}
    for s in sites:
        pairs.setdefault((s.src, s.dst), s)         # keep the first site for examples
    hit = {p for p in pairs if p in stream_pairs}

    want: dict[tuple, set[str]] = defaultdict(set)
    for s in sites:
        want[(s.src, s.name)].add(s.dst)
    good = total = 0
    wrong = []
    for key, dsts in want.items():
        got = by_src_name.get(key)
        if not got:
            continue
        ok = len(got & dsts)
        good += ok
        total += len(got)
        if ok < len(got):
            s = next(x for x in sites if (x.src, x.name) == key)
            wrong.append(f"{key[0]} line {s.line} calls {key[1]}: truth {sorted(dsts)}, "
                         f"stream {sorted(got)}")
    misses = [f"{s.file}:{s.line} [{s.rule}] {p[0]} -> {p[1]}"
              for p, s in sorted(pairs.items()) if p not in hit]
    return {"sites": len(sites), "pairs": len(pairs), "pairs_hit": len(hit),
            "recall": ratio(len(hit), len(pairs)), "prec_good": good, "prec_total": total,
            "precision": ratio(good, total), "misses": misses, "wrong": wrong}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("args", nargs="+", metavar="CORPUS STREAM")
    ap.add_argument("--min-precision", type=float, default=0.97)
    ap.add_argument("--min-recall", type=float, default=0.90)
    ap.add_argument("--min-sites", type=int, default=200)
    ap.add_argument("--truth-only", action="store_true",
                    help="arguments are corpora only; print ground-truth counts")
    ap.add_argument("--examples", type=int, default=15, help="examples printed per list")
    a = ap.parse_args()
    if a.truth_only:
        jobs = [(c, None) for c in a.args]
    elif len(a.args) % 2:
        ap.error("give CORPUS STREAM pairs (or --truth-only with corpora)")
    else:
        jobs = list(zip(a.args[0::2], a.args[1::2]))

    all_sites: list[Site] = []
    all_calls: list[dict] = []
    per_corpus = []
    for k, (root, stream_path) in enumerate(jobs):
        corpus = Corpus(root)
        sites: list[Site] = []
        skipped: Counter = Counter()
        for m in corpus.modules.values():
            got, why = call_sites(corpus, m)
            sites += got
            skipped += why
        name = os.path.basename(os.path.normpath(root))
        say(f"== {name}: {len(corpus.modules)} modules parsed, {len(corpus.rejected)} rejected by ast, "
            f"source roots {corpus.roots}")
        rules = Counter(s.rule for s in sites)
        say(f"   ground truth: {len(sites)} sites, {len({(s.src, s.dst) for s in sites})} distinct "
            f"pairs; per rule {dict(rules)}; recursive {sum(s.src == s.dst for s in sites)}; "
            f"skipped {dict(skipped)}")
        entry = {"corpus": name, "sites": len(sites), "by_rule": {r: rules.get(r, 0) for r in RULES}}
        if stream_path is not None:
            s = read_stream(stream_path)
            for w in stream_warnings(s):
                say("   WARNING:", w)
            lacking = [p for p in corpus.modules if p not in s.files]
            if lacking:
                say(f"   the stream lacks {len(lacking)} of {len(corpus.modules)} parsed modules; "
                    f"sites touching them are excluded, e.g. {lacking[:5]}")
            before = len(sites)
            sites = [x for x in sites if x.file in s.files and x.dst_file in s.files]
            if before != len(sites):
                say(f"   {before - len(sites)} sites excluded (file not in the stream)")
            calls = list(s.calls())
            res = score(sites, calls)
            truth_pairs = {(x.src, x.dst) for x in sites}
            hit_res = Counter(e.get("resolution") for e in calls
                              if (e["src"], e["dst"]) in truth_pairs)
            say(f"   recall    {res['recall']:.4f} ({res['pairs_hit']}/{res['pairs']} pairs)")
            say(f"   precision {res['precision']:.4f} ({res['prec_good']}/{res['prec_total']} edges "
                f"over ground-truth (src, name))")
            say(f"   resolution of the stream edges that hit: {dict(hit_res)}")
            for r in RULES:
                rs = [x for x in sites if x.rule == r]
                if rs:
                    rr = score(rs, calls)
                    say(f"     rule {r:7s} sites {rr['sites']:5d} pairs {rr['pairs']:5d} "
                        f"recall {rr['recall']:.4f} precision {rr['precision']:.4f}")
                    entry[f"recall_{r}"] = round(rr["recall"], 5)
                    entry[f"precision_{r}"] = round(rr["precision"], 5)
            examples("misses (ground truth pair not in the stream)", res["misses"], a.examples)
            examples("misbindings (same name, other dst)", res["wrong"], a.examples)
            entry.update({"pairs": res["pairs"], "recall": round(res["recall"], 5),
                          "precision": round(res["precision"], 5)})
            # Keep ids of different corpora apart in the combined score.
            all_calls += [{**e, "src": f"{k}|{e['src']}", "dst": f"{k}|{e['dst']}"} for e in calls]
        all_sites += [Site(f"{k}|{x.src}", f"{k}|{x.dst}", x.name, x.line, x.rule, x.file,
                           x.dst_file) for x in sites]
        per_corpus.append(entry)

    out = {"check": "py_calls", "corpora": per_corpus, "sites": len(all_sites),
           "pairs": len({(s.src, s.dst) for s in all_sites})}
    failures: list[str] = []
    if len(all_sites) < a.min_sites:
        failures.append(f"only {len(all_sites)} ground-truth sites < {a.min_sites}")
    if not a.truth_only:
        res = score(all_sites, all_calls)
        say(f"== combined: {res['sites']} sites, {res['pairs']} pairs; recall {res['recall']:.4f} "
            f"(min {a.min_recall}), precision {res['precision']:.4f} (min {a.min_precision})")
        check("recall", res["recall"], a.min_recall, failures)
        check("precision", res["precision"], a.min_precision, failures)
        out.update({"recall": round(res["recall"], 5), "precision": round(res["precision"], 5)})
        say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    else:
        say(f"== combined ground truth: {out['sites']} sites, {out['pairs']} pairs"
            + (f"  FAIL: {failures[0]}" if failures else ""))
    out["pass"] = not failures
    print(json.dumps(out))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
