#!/usr/bin/env python3
"""Python call-resolution accuracy of tg-extract streams, against an independent `ast` resolver.

usage: py_calls.py CORPUS STREAM [CORPUS STREAM ...] [--min-precision P] [--min-recall R]
                   [--min-sites N] [--max-overload-stub-edges N] [--min-overload-recall R]
                   [--min-conditional-share S] [--max-shadowed-violations N]
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

Three further checks, scored apart (each over calls whose caller and callee files are in the stream):
  overloads    a module-level name (or a class-level one, for rule 2) bound only by two or more defs,
               every one but the last decorated `@overload` / `@typing.overload` / `@<alias>.overload`
               and the last not: a call that rules 1-4 would accept with the same scoping conditions
               goes to the LAST def (the implementation, `#k` in its id). Scored: recall over distinct
               (caller, implementation) pairs; stub edges = distinct edges from those callers to any
               stub of the group (gated: must be 0); edges from anywhere to any stub, reported.
  conditional  a module-level name bound by two or more defs, each under `if`/`else`/`try`/`except`
               blocks only (no with/for/while between it and the module), none decorated as an overload,
               and by nothing else except imports of the name in the body of a `try` whose
               `except ImportError` handler (or ModuleNotFoundError, Exception, bare) defines a
               fallback def: a call accepted with the scoping of rules 1, 3 and 4 must have an edge to
               each of the defs, every one with `"resolution": "ambiguous"`. Scored per distinct
               (caller, group): share of cases where all defs are reached and all those edges are
               ambiguous (same-named edges elsewhere are listed with a failure, not judged).
  shadowed     in a package file (its folder has an `__init__.py`), an absolute `import X`,
               `import X as Y`, `from X import name` whose top package P (X's first component) cannot
               be imported from the corpus root, its `src/` folder or the file's own package root (the
               folder above its outermost `__init__.py`), while a module `P.py` or a folder `P/` with
               Python files exists deeper below the root: Python 3 imports the outside module. Truth:
               no `imports` edge from the file to a repository module named by P (`.../P.py`,
               anything under `.../P/`) unless another import of the file resolves to it, and no
               `calls` edge for a call made through the bound name (`Y.f()`, `name()`, `name.f()`;
               scope checked as for rule 1) from the caller (innermost def/class, else the module) to
               a repository def of the called name (or its `__init__`/`__new__`); a (caller, name)
               that other calls share is not judged. Violations are counted (gated: must be 0).

Scores, over calls whose caller and callee files are both in the stream:
  recall     share of distinct ground-truth (src, dst) pairs present as `calls` edges
  precision  over the distinct ground-truth (src, callee name) pairs: of the stream's calls edges
             from src whose dst's last name component is the callee's name, the share pointing at
             the ground-truth dst (pairs the stream has no such edge for count as misses, not here)
  sites      number of ground-truth call sites (a floor, so a broken resolver cannot pass vacuously)
  and for the checks above: overload recall and stub edges, conditional share, shadowed violations.
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

from common import (corpus_jobs, PyDef, check, collect_defs, examples, parse_python, ratio, read_stream, say,
                    stream_warnings, walk_corpus)

FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
RULES = ("local", "self", "import", "module")
TRY_TYPES = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


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
    # module-level overload groups (name -> group) and conditional groups (name -> defs), and the
    # names bound once at module level by an import of one of another module's groups
    overloads: dict[str, "Overload"] = field(default_factory=dict)
    conds: dict[str, list[PyDef]] = field(default_factory=dict)
    imported_overloads: dict[str, "Overload"] = field(default_factory=dict)
    imported_conds: dict[str, list[PyDef]] = field(default_factory=dict)


@dataclass
class Overload:
    impl: PyDef                # the last def: the implementation
    stubs: tuple[PyDef, ...]   # the @overload defs before it


def is_overload_decorator(d: ast.AST) -> bool:
    """`@overload`, `@typing.overload`, `@t.overload` (any one-name alias of the module)."""
    if isinstance(d, ast.Name):
        return d.id == "overload"
    return isinstance(d, ast.Attribute) and d.attr == "overload" and isinstance(d.value, ast.Name)


def has_overload_decorator(node: ast.AST) -> bool:
    return any(is_overload_decorator(d) for d in getattr(node, "decorator_list", []))


def overload_group(sites: list[ast.AST], def_of: dict[int, PyDef]) -> Overload | None:
    """The group when `sites` (every binding of one name in one scope) are two or more defs, all
    but the last (source order) decorated as overloads, the last not."""
    if len(sites) < 2 or not all(isinstance(n, FUNC_TYPES) for n in sites):
        return None
    order = sorted(sites, key=lambda n: (n.lineno, n.col_offset))
    *stubs, impl = order
    if has_overload_decorator(impl) or not all(has_overload_decorator(n) for n in stubs):
        return None
    return Overload(def_of[id(impl)], tuple(def_of[id(n)] for n in stubs))


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    """The handler catches ImportError: by name, a subclass, a base class or a bare `except:`."""
    names = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
    t = handler.type
    if t is None:
        return True
    elts = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(e, ast.Name) and e.id in names
               or isinstance(e, ast.Attribute) and e.attr in names for e in elts)


def conditional_paths(tree: ast.Module) -> dict[int, list[tuple[ast.AST, str]]]:
    """For every statement reached from the module body through if/try blocks only: id(stmt) ->
    its enclosing blocks, outermost first, each as (If/Try node, part) with part one of "body",
    "orelse", "finalbody" or "handler<i>". Module-body statements map to []."""
    out: dict[int, list[tuple[ast.AST, str]]] = {}

    def visit(stmts: list[ast.stmt], path: list[tuple[ast.AST, str]]) -> None:
        for st in stmts:
            out[id(st)] = path
            if isinstance(st, ast.If):
                visit(st.body, path + [(st, "body")])
                visit(st.orelse, path + [(st, "orelse")])
            elif isinstance(st, TRY_TYPES):
                visit(st.body, path + [(st, "body")])
                for i, h in enumerate(st.handlers):
                    visit(h.body, path + [(st, f"handler{i}")])
                visit(st.orelse, path + [(st, "orelse")])
                visit(st.finalbody, path + [(st, "finalbody")])

    visit(tree.body, [])
    return out


def conditional_group(sites: list[ast.AST], paths: dict[int, list], def_of: dict[int, PyDef]
                      ) -> list[PyDef] | None:
    """The defs, in source order, when `sites` (every module-level binding of one name) make a
    conditional group (see the docstring): two or more defs each under if/try blocks only, no
    overload decorator, other bindings only imports in a `try` body whose ImportError handler
    holds one of the defs."""
    defs = [n for n in sites if isinstance(n, FUNC_TYPES)]
    if len(defs) < 2 or any(id(n) not in paths or not paths[id(n)] or has_overload_decorator(n)
                            for n in defs):
        return None
    for n in sites:
        if isinstance(n, FUNC_TYPES):
            continue
        if not isinstance(n, (ast.Import, ast.ImportFrom)) or not paths.get(id(n)):
            return None
        block, part = paths[id(n)][-1]
        if not isinstance(block, TRY_TYPES) or part != "body":
            return None
        fallback = False
        for i, h in enumerate(block.handlers):
            if not catches_import_error(h):
                continue
            for d in defs:
                p = paths[id(d)]
                if any(b is block and pt == f"handler{i}" for b, pt in p):
                    fallback = True
        if not fallback:
            return None
    defs.sort(key=lambda n: (n.lineno, n.col_offset))
    return [def_of[id(n)] for n in defs]


class Corpus:
    def __init__(self, root: str):
        self.root = root
        self.rejected: list[str] = []
        self._importable: dict[tuple[str, str], bool] = {}      # check 3 caches
        self._named: dict[str, frozenset[str]] | None = None
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
                paths = conditional_paths(tree)
                for name, sites in top.sites.items():
                    if len(sites) == 1 and isinstance(sites[0], FUNC_TYPES):
                        m.funcs[name] = m.def_of[id(sites[0])]
                    elif (ov := overload_group(sites, m.def_of)) is not None:
                        m.overloads[name] = ov
                    elif (cd := conditional_group(sites, paths, m.def_of)) is not None:
                        m.conds[name] = cd
            self.modules[rel] = m
            d = os.path.dirname(rel)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = os.path.dirname(d)
        # Absolute imports resolve from the corpus root or from src/ (the two sdist layouts).
        self.roots = [""] + (["src"] if "src" in self.dirs else [])
        for m in self.modules.values():
            self._bind_imports(m)

    # -- check 3: what a top-level name could mean ----------------------------------------------

    def importable_from(self, r: str, top: str) -> bool:
        """Does `top` name a module or package (a folder: maybe a namespace one) in folder `r`?"""
        key = (r, top)
        if key not in self._importable:
            base = os.path.join(self.root, r, top)
            self._importable[key] = (os.path.isdir(base) or os.path.isfile(base + ".py")
                                     or os.path.isfile(base + ".pyi"))
        return self._importable[key]

    def named_by(self, top: str) -> frozenset[str]:
        """Repository modules a top package `top` could be taken for anywhere below the root:
        every `.../top.py` and every module under a folder `.../top/`."""
        if self._named is None:
            index: dict[str, set[str]] = defaultdict(set)
            for rel in self.modules:
                parts = rel.split("/")
                index[parts[-1][:-3]].add(rel)              # .../top.py
                for p in set(parts[:-1]):                   # anything under a folder top/
                    index[p].add(rel)
            self._named = {k: frozenset(v) for k, v in index.items()}
        return self._named.get(top, frozenset())

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
                elif pkg is not None and alias.name in pkg.overloads:
                    m.imported_overloads[name] = pkg.overloads[alias.name]
                elif pkg is not None and alias.name in pkg.conds:
                    m.imported_conds[name] = pkg.conds[alias.name]


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


@dataclass(frozen=True)
class OverloadSite:
    src: str
    impl: str                  # id of the implementation (the last def)
    stubs: tuple[str, ...]     # ids of the @overload stubs
    line: int
    rule: str
    file: str
    dst_file: str


@dataclass(frozen=True)
class CondSite:
    src: str
    defs: tuple[str, ...]      # ids of every def of the conditional group, source order
    name: str                  # the defs' own name
    line: int
    rule: str
    file: str
    dst_file: str


@dataclass
class Extra:
    """Sites of the overload and conditional checks, collected by call_sites when asked."""
    overload: list[OverloadSite] = field(default_factory=list)
    cond: list[CondSite] = field(default_factory=list)


def call_sites(corpus: Corpus, m: Module, extra: Extra | None = None) -> tuple[list[Site], Counter]:
    """Ground-truth sites of one module, and counts of why bare/dotted calls were skipped.
    With `extra`, the sites of the overload and conditional checks are collected there too."""
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
        ov: Overload | None = None          # an overload group the call reaches (check 1)
        cond: list[PyDef] | None = None     # a conditional group the call reaches (check 2)
        if isinstance(fn, ast.Name):
            if bound_in_chain(fn.id, chain):
                skipped["name bound in function"] += 1
                return
            if fn.id in m.funcs:
                target, rule = m.funcs[fn.id], "local"
            elif fn.id in m.imported_funcs:
                target, rule = m.imported_funcs[fn.id], "import"
            elif fn.id in m.overloads or fn.id in m.conds:
                ov, cond, rule = m.overloads.get(fn.id), m.conds.get(fn.id), "local"
            elif fn.id in m.imported_overloads or fn.id in m.imported_conds:
                ov, cond = m.imported_overloads.get(fn.id), m.imported_conds.get(fn.id)
                rule = "import"
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
            base = fn.value.id
            if base == "self" and caller.kind == "method":
                target = self_target(caller, fn.attr)
                if target is None and self_ok(caller):
                    scope = bindings(caller.parent.node)
                    ov = overload_group(scope.sites.get(fn.attr, []), m.def_of)
                rule = "self"
            elif base in m.imported_mods and not bound_in_chain(base, chain):
                mod = m.imported_mods[base]
                target, rule = mod.funcs.get(fn.attr), "module"
                ov, cond = mod.overloads.get(fn.attr), mod.conds.get(fn.attr)
        if target is not None:
            sites.append(Site(caller.id, target.id, target.node.name, call.lineno, rule,
                              m.rel, target.id.split("::", 1)[0]))
        elif extra is not None and ov is not None:
            extra.overload.append(OverloadSite(caller.id, ov.impl.id, tuple(d.id for d in ov.stubs),
                                               call.lineno, rule, m.rel,
                                               ov.impl.id.split("::", 1)[0]))
        elif extra is not None and cond is not None:
            extra.cond.append(CondSite(caller.id, tuple(d.id for d in cond), cond[0].node.name,
                                       call.lineno, rule, m.rel, cond[0].id.split("::", 1)[0]))

    def self_ok(method: PyDef) -> bool:
        """A method whose first parameter is `self`, never rebound."""
        params = method.node.args.posonlyargs + method.node.args.args
        return bool(params) and params[0].arg == "self" and \
            len(bindings(method.node).sites.get("self", [])) == 1

    def self_target(method: PyDef, attr: str) -> PyDef | None:
        if not self_ok(method):
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
# Absolute imports of outside modules that a repository folder of the same name could shadow
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShadowImport:
    file: str
    line: int
    text: str                     # `import email.utils as eu`, `from email import utils`
    top: str                      # the top package P
    targets: frozenset[str]       # repository modules named by P (.../P.py, anything under .../P/)


@dataclass(frozen=True)
class ShadowCall:
    src: str                      # caller: innermost def/class id, or the module
    name: str                     # the called name (last component)
    line: int
    file: str
    via: str                      # the bound name the call goes through


def package_root(corpus: Corpus, rel: str) -> str | None:
    """The folder above the outermost package holding `rel` ('' = corpus root), or None when the
    file's folder has no __init__.py (a script or a top-level module)."""
    d = os.path.dirname(rel)
    if not d or not os.path.isfile(os.path.join(corpus.root, d, "__init__.py")):
        return None
    while d and os.path.isfile(os.path.join(corpus.root, d, "__init__.py")):
        d = os.path.dirname(d)
    return d


def shadowed(corpus: Corpus, m: Module) -> tuple[list[ShadowImport], set[str], list[ShadowCall],
                                                  set[tuple[str, str]]]:
    """Check 3 for one module: its shadowed import sites, the repository modules its other imports
    resolve to (edges to those are fine), the calls made through names those sites bind, and the
    (caller, name) keys other calls share (not judged)."""
    pkgroot = package_root(corpus, m.rel)
    if pkgroot is None:
        return [], set(), [], set()
    roots = list(dict.fromkeys(corpus.roots + [pkgroot]))

    def importable(top: str) -> bool:
        return any(corpus.importable_from(r, top) for r in roots)

    named_by = corpus.named_by

    # Which modules the file's imports resolve to (any root, ambiguity allowed: this only excuses).
    legit: set[str] = set()

    def add_path(path: str) -> None:
        parts = path.split("/")
        for k in range(1, len(parts) + 1):
            p = "/".join(parts[:k])
            for cand in (p + ".py", p + "/__init__.py"):
                if cand in corpus.modules:
                    legit.add(cand)

    def base_paths(module: str | None, level: int) -> list[str]:
        parts = module.split(".") if module else []
        if level:
            base = os.path.dirname(m.rel)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return ["/".join(([base] if base else []) + parts)]
        return ["/".join(([r] if r else []) + parts) for r in roots]

    sites: list[ShadowImport] = []
    shadow_names: dict[int, set[str]] = defaultdict(set)   # id(import stmt) -> names it binds
    for n in ast.walk(m.tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                for bp in base_paths(a.name, 0):
                    add_path(bp)
                top = a.name.split(".")[0]
                if importable(top):
                    continue
                targets = named_by(top)
                if targets:
                    text = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
                    sites.append(ShadowImport(m.rel, n.lineno, text, top, targets))
                    shadow_names[id(n)].add(a.asname or top)
        elif isinstance(n, ast.ImportFrom):
            for bp in base_paths(n.module, n.level):
                add_path(bp)
                for a in n.names:
                    add_path(bp + "/" + a.name)
            if n.level or not n.module:
                continue
            top = n.module.split(".")[0]
            if importable(top):
                continue
            targets = named_by(top)
            if targets:
                text = f"from {n.module} import " + ", ".join(
                    a.name + (f" as {a.asname}" if a.asname else "") for a in n.names)
                sites.append(ShadowImport(m.rel, n.lineno, text, top, targets))
                shadow_names[id(n)] |= {a.asname or a.name for a in n.names if a.name != "*"}
    if not sites:
        return [], legit, [], set()

    # Calls through the names those imports bind.
    calls: list[ShadowCall] = []
    others: set[tuple[str, str]] = set()
    cache: dict[int, Bindings] = {id(m.tree): m.top}

    def bindings(node: ast.AST) -> Bindings:
        if id(node) not in cache:
            cache[id(node)] = scope_bindings(node)
        return cache[id(node)]

    def through(root: str, chain: list[ast.AST], cls: ast.ClassDef | None) -> bool:
        """Is `root`, read here, bound only by shadowed imports?"""
        if cls is not None and root in bindings(cls).sites:
            scope = cls                     # a class body reads its own namespace first
        else:
            scope = next((f for f in reversed(chain) if root in bindings(f).sites), None)
        if scope is None:
            if m.top.star_import:
                return False
            scope = m.tree
        s = bindings(scope).sites.get(root, [])
        return bool(s) and all(root in shadow_names.get(id(x), ()) for x in s)

    def on_call(call: ast.Call, caller: str, chain: list[ast.AST], cls: ast.ClassDef | None) -> None:
        fn = call.func
        if isinstance(fn, ast.Name):
            name, root = fn.id, fn.id
        elif isinstance(fn, ast.Attribute):
            name, v = fn.attr, fn.value
            while isinstance(v, ast.Attribute):
                v = v.value
            root = v.id if isinstance(v, ast.Name) else None
        else:
            return
        if root is not None and through(root, chain, cls):
            calls.append(ShadowCall(caller, name, call.lineno, m.rel, root))
        else:
            others.add((caller, name))

    def walk(n: ast.AST, caller: str, chain: list[ast.AST], cls: ast.ClassDef | None) -> None:
        if isinstance(n, FUNC_TYPES + (ast.ClassDef,)):
            for c in n.decorator_list:
                walk(c, caller, chain, cls)
            if isinstance(n, ast.ClassDef):
                for c in n.bases + [k.value for k in n.keywords]:
                    walk(c, caller, chain, cls)
                inner_chain, inner_cls = chain, n
            else:
                for c in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                    walk(c, caller, chain, cls)
                inner_chain, inner_cls = chain + [n], None
            for stmt in n.body:
                walk(stmt, m.def_of[id(n)].id, inner_chain, inner_cls)
            return
        if isinstance(n, ast.AnnAssign):
            for c in (n.target, n.value):
                if c is not None:
                    walk(c, caller, chain, cls)
            return
        if isinstance(n, ast.arg):
            return
        if isinstance(n, ast.Call):
            on_call(n, caller, chain, cls)
        for c in ast.iter_child_nodes(n):
            walk(c, caller, chain, cls)

    walk(m.tree, m.rel, [], None)
    return sites, legit, calls, others


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


def all_overload_stubs(m: Module) -> set[str]:
    """Ids of the stubs of every overload group of the module: module level and class bodies."""
    out: set[str] = set()
    scopes = [m.top] + [scope_bindings(d.node) for d in m.defs if d.kind == "class"]
    for b in scopes:
        for sites in b.sites.values():
            ov = overload_group(sites, m.def_of)
            if ov is not None:
                out |= {d.id for d in ov.stubs}
    return out


def edge_index(calls: list[dict]) -> tuple[dict, dict]:
    """(src, dst) -> resolutions of the stream's edges; (src, last name) -> dsts."""
    res: dict[tuple, list] = defaultdict(list)
    by_name: dict[tuple, set[str]] = defaultdict(set)
    for e in calls:
        res[(e["src"], e["dst"])].append(e.get("resolution"))
        name = last_name(e["dst"])
        if name is not None:
            by_name[(e["src"], name)].add(e["dst"])
    return res, by_name


def fmt_edges(dsts: set[str] | list[str], src: str, res: dict) -> str:
    if not dsts:
        return "none"
    return ", ".join(f"{d} ({'/'.join(str(r) for r in res[(src, d)])})" for d in sorted(dsts))


def score_overloads(sites: list[OverloadSite], calls: list[dict], stubs_all: set[str]) -> dict:
    """Check 1: recall over (caller, implementation) pairs; edges from those callers to stubs;
    edges from anywhere to any stub."""
    res, by_name = edge_index(calls)
    pairs: dict[tuple, OverloadSite] = {}
    for x in sites:
        pairs.setdefault((x.src, x.impl), x)
    hit = [p for p in pairs if p in res]
    misses, stub_edges = [], []
    for (src, impl), x in sorted(pairs.items()):
        name = last_name(impl)
        stubs = [d for d in x.stubs if (src, d) in res]
        for d in stubs:
            stub_edges.append(f"{x.file}:{x.line} [{x.rule}] {src} -> stub {d} "
                              f"({'/'.join(str(r) for r in res[(src, d)])}); implementation {impl} "
                              f"{'present' if (src, impl) in res else 'missing'}")
        if (src, impl) not in res:
            misses.append(f"{x.file}:{x.line} [{x.rule}] {src} -> {impl}: stream's {name} edges "
                          f"from the caller: {fmt_edges(by_name.get((src, name), set()), src, res)}")
    anywhere = sorted(f"{e['src']} -> {e['dst']} ({e.get('resolution')}, line {e.get('line')})"
                      for e in calls if e["dst"] in stubs_all)
    return {"sites": len(sites), "pairs": len(pairs), "pairs_hit": len(hit),
            "recall": ratio(len(hit), len(pairs)), "stub_edges": len(stub_edges),
            "stub_edges_anywhere": len(anywhere), "misses": misses, "stub_list": stub_edges,
            "anywhere_list": anywhere}


def score_conds(sites: list[CondSite], calls: list[dict]) -> dict:
    """Check 2: per distinct (caller, group), every def reached and every such edge ambiguous."""
    res, by_name = edge_index(calls)
    cases: dict[tuple, CondSite] = {}
    for x in sites:
        cases.setdefault((x.src, x.defs), x)
    ok = reached_all = 0
    failures = []
    for (src, defs), x in sorted(cases.items()):
        reached = [d for d in defs if (src, d) in res]
        bad = [d for d in reached if any(r != "ambiguous" for r in res[(src, d)])]
        reached_all += len(reached) == len(defs)
        if len(reached) == len(defs) and not bad:
            ok += 1
            continue
        missing = [d for d in defs if d not in reached]
        others = by_name.get((src, x.name), set()) - set(defs)
        failures.append(f"{x.file}:{x.line} [{x.rule}] {src} calls {x.name} ({len(defs)} defs): "
                        f"missing {missing or 'none'}; edges to the defs: "
                        f"{fmt_edges(reached, src, res)}; other {x.name} edges: "
                        f"{fmt_edges(others, src, res)}")
    return {"sites": len(sites), "cases": len(cases), "ok": ok, "reached_all": reached_all,
            "share": ratio(ok, len(cases)), "failures": failures}


def score_shadowed(imports: list[ShadowImport], legit: dict[str, set[str]],
                   scalls: list[ShadowCall], others: set[tuple[str, str]], s) -> dict:
    """Check 3: imports edges to repository modules named by the outside package, and calls edges
    from calls through the names such imports bind to repository defs of the called name."""
    by_file: dict[str, list[ShadowImport]] = defaultdict(list)
    for x in imports:
        by_file[x.file].append(x)
    imp_edges: dict[str, dict[str, int | None]] = defaultdict(dict)   # file -> dst -> line
    for e in s.edges:
        if e.get("kind") == "imports" and e["src"] in by_file:
            imp_edges[e["src"]].setdefault(e["dst"], e.get("line"))
    imp_viol = []
    for f, xs in sorted(by_file.items()):
        for dst in sorted(set(imp_edges.get(f, {})) - legit.get(f, set())):
            line = imp_edges[f][dst]
            x = next((x for x in xs if dst in x.targets and x.line == line), None) or \
                next((x for x in xs if dst in x.targets), None)
            if x is not None:
                imp_viol.append(f"{x.file}:{x.line} `{x.text}` (outside): imports edge {f} -> {dst} "
                                f"(line {line})")

    def matches(dst: str, name: str) -> bool:
        if "::" not in dst:
            return False
        q = HASH_SUFFIX.sub("", dst.split("::", 1)[1]).split(".")
        return q[-1] == name or (len(q) > 1 and q[-1] in ("__init__", "__new__") and q[-2] == name)

    out_edges: dict[str, list[dict]] = defaultdict(list)
    for e in s.edges:
        if e.get("kind") == "calls":
            out_edges[e["src"]].append(e)
    keys: dict[tuple, ShadowCall] = {}
    for c in scalls:
        keys.setdefault((c.src, c.name), c)
    judged = {k: c for k, c in keys.items() if k not in others}
    call_viol = []
    for (src, name), c in sorted(judged.items()):
        for e in out_edges.get(src, []):
            if matches(e["dst"], name):
                call_viol.append(f"{c.file}:{c.line} {src} calls {name} through `{c.via}` (outside): "
                                 f"calls edge -> {e['dst']} ({e.get('resolution')}, "
                                 f"line {e.get('line')})")
    return {"import_sites": len(imports), "files": len(by_file), "call_sites": len(scalls),
            "call_keys": len(keys), "call_keys_judged": len(judged),
            "import_violations": len(imp_viol), "call_violations": len(call_viol),
            "violations": len(imp_viol) + len(call_viol), "import_list": imp_viol,
            "call_list": call_viol}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("args", nargs="+", metavar="CORPUS STREAM")
    ap.add_argument("--min-precision", type=float, default=0.97)
    ap.add_argument("--min-recall", type=float, default=0.90)
    ap.add_argument("--min-sites", type=int, default=200)
    ap.add_argument("--max-overload-stub-edges", type=int, default=0,
                    help="most edges from overload call sites' callers to @overload stubs")
    ap.add_argument("--min-overload-recall", type=float, default=0.0,
                    help="least share of (caller, implementation) pairs of overloaded calls")
    ap.add_argument("--min-conditional-share", type=float, default=0.95,
                    help="least share of conditional-definition cases reaching every def, ambiguous")
    ap.add_argument("--max-shadowed-violations", type=int, default=0,
                    help="most imports/calls edges into the repository through outside imports")
    ap.add_argument("--truth-only", action="store_true",
                    help="arguments are corpora only; print ground-truth counts")
    ap.add_argument("--examples", type=int, default=15, help="examples printed per list")
    a = ap.parse_args()
    jobs = corpus_jobs(ap, a.args, a.truth_only)

    all_sites: list[Site] = []
    all_calls: list[dict] = []
    per_corpus = []
    tot = Counter()                      # summed counts of the three further checks
    for k, (root, stream_path) in enumerate(jobs):
        corpus = Corpus(root)
        sites: list[Site] = []
        skipped: Counter = Counter()
        extra = Extra()
        sh_imports: list[ShadowImport] = []
        sh_calls: list[ShadowCall] = []
        sh_others: set[tuple[str, str]] = set()
        sh_legit: dict[str, set[str]] = {}
        stubs_all: set[str] = set()
        for m in corpus.modules.values():
            got, why = call_sites(corpus, m, extra)
            sites += got
            skipped += why
            si, lg, sc, so = shadowed(corpus, m)
            sh_imports += si
            sh_calls += sc
            sh_others |= so
            sh_legit[m.rel] = lg
            stubs_all |= all_overload_stubs(m)
        name = os.path.basename(os.path.normpath(root))
        say(f"== {name}: {len(corpus.modules)} modules parsed, {len(corpus.rejected)} rejected by ast, "
            f"source roots {corpus.roots}")
        rules = Counter(s.rule for s in sites)
        say(f"   ground truth: {len(sites)} sites, {len({(s.src, s.dst) for s in sites})} distinct "
            f"pairs; per rule {dict(rules)}; recursive {sum(s.src == s.dst for s in sites)}; "
            f"skipped {dict(skipped)}")
        say(f"   overloads: {len(extra.overload)} sites, "
            f"{len({(x.src, x.impl) for x in extra.overload})} (caller, implementation) pairs, "
            f"per rule {dict(Counter(x.rule for x in extra.overload))}; {len(stubs_all)} stubs in all")
        say(f"   conditional defs: {len(extra.cond)} sites, "
            f"{len({(x.src, x.defs) for x in extra.cond})} (caller, group) cases, "
            f"per rule {dict(Counter(x.rule for x in extra.cond))}")
        say(f"   shadowed imports: {len(sh_imports)} import sites in "
            f"{len({x.file for x in sh_imports})} files, {len(sh_calls)} calls through them")
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

            # The three further checks.
            ov = score_overloads([x for x in extra.overload
                                  if x.file in s.files and x.dst_file in s.files], calls, stubs_all)
            say(f"   overloads: recall {ov['recall']:.4f} ({ov['pairs_hit']}/{ov['pairs']} pairs), "
                f"stub edges {ov['stub_edges']} (max {a.max_overload_stub_edges}), edges to stubs "
                f"from anywhere {ov['stub_edges_anywhere']}")
            examples("overload misses (implementation not reached)", ov["misses"], a.examples)
            examples("overload stub edges", ov["stub_list"], a.examples)
            examples("edges to overload stubs from anywhere", ov["anywhere_list"], a.examples)
            cd = score_conds([x for x in extra.cond
                              if x.file in s.files and x.dst_file in s.files], calls)
            say(f"   conditional defs: {cd['ok']}/{cd['cases']} cases all defs reached and ambiguous "
                f"({cd['share']:.4f}); all defs reached in {cd['reached_all']}")
            examples("conditional-definition failures", cd["failures"], a.examples)
            sh = score_shadowed([x for x in sh_imports if x.file in s.files], sh_legit,
                                [x for x in sh_calls if x.file in s.files], sh_others, s)
            say(f"   shadowed imports: {sh['import_sites']} sites in {sh['files']} files, "
                f"{sh['import_violations']} imports-edge violations; {sh['call_sites']} calls "
                f"({sh['call_keys_judged']} of {sh['call_keys']} (caller, name) judged), "
                f"{sh['call_violations']} calls-edge violations")
            examples("shadowed-import imports edges", sh["import_list"], a.examples)
            examples("shadowed-import calls edges", sh["call_list"], a.examples)
            entry["overload"] = {"sites": ov["sites"], "pairs": ov["pairs"], "pairs_hit": ov["pairs_hit"],
                                 "recall": round(ov["recall"], 5), "stub_edges": ov["stub_edges"],
                                 "stub_edges_anywhere": ov["stub_edges_anywhere"]}
            entry["conditional"] = {"sites": cd["sites"], "cases": cd["cases"], "ok": cd["ok"],
                                    "reached_all": cd["reached_all"], "share": round(cd["share"], 5)}
            entry["shadowed"] = {k2: sh[k2] for k2 in ("import_sites", "files", "call_sites",
                                                       "call_keys_judged", "import_violations",
                                                       "call_violations", "violations")}
            tot.update({"ov_pairs": ov["pairs"], "ov_hit": ov["pairs_hit"], "ov_stub": ov["stub_edges"],
                        "ov_any": ov["stub_edges_anywhere"], "cd_cases": cd["cases"], "cd_ok": cd["ok"],
                        "sh_sites": sh["import_sites"], "sh_calls": sh["call_sites"],
                        "sh_viol": sh["violations"]})
        else:
            entry["overload"] = {"sites": len(extra.overload),
                                 "pairs": len({(x.src, x.impl) for x in extra.overload})}
            entry["conditional"] = {"sites": len(extra.cond),
                                    "cases": len({(x.src, x.defs) for x in extra.cond})}
            entry["shadowed"] = {"import_sites": len(sh_imports), "call_sites": len(sh_calls)}
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
        ov_recall = ratio(tot["ov_hit"], tot["ov_pairs"])
        cd_share = ratio(tot["cd_ok"], tot["cd_cases"])
        say(f"   overloads: {tot['ov_pairs']} pairs, recall {ov_recall:.4f} (min "
            f"{a.min_overload_recall}), stub edges {tot['ov_stub']} (max {a.max_overload_stub_edges}), "
            f"edges to stubs from anywhere {tot['ov_any']}")
        say(f"   conditional defs: {tot['cd_cases']} cases, share {cd_share:.4f} "
            f"(min {a.min_conditional_share})")
        say(f"   shadowed imports: {tot['sh_sites']} import sites, {tot['sh_calls']} calls, "
            f"violations {tot['sh_viol']} (max {a.max_shadowed_violations})")
        check("overload recall", ov_recall, a.min_overload_recall, failures)
        if tot["ov_stub"] > a.max_overload_stub_edges:
            failures.append(f"overload stub edges {tot['ov_stub']} > {a.max_overload_stub_edges}")
        check("conditional share", cd_share, a.min_conditional_share, failures)
        if tot["sh_viol"] > a.max_shadowed_violations:
            failures.append(f"shadowed-import violations {tot['sh_viol']} > {a.max_shadowed_violations}")
        out.update({"overload": {"pairs": tot["ov_pairs"], "recall": round(ov_recall, 5),
                                 "stub_edges": tot["ov_stub"], "stub_edges_anywhere": tot["ov_any"]},
                    "conditional": {"cases": tot["cd_cases"], "ok": tot["cd_ok"],
                                    "share": round(cd_share, 5)},
                    "shadowed": {"import_sites": tot["sh_sites"], "call_sites": tot["sh_calls"],
                                 "violations": tot["sh_viol"]}})
        say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    else:
        say(f"== combined ground truth: {out['sites']} sites, {out['pairs']} pairs"
            + (f"  FAIL: {failures[0]}" if failures else ""))
    out["pass"] = not failures
    print(json.dumps(out))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
