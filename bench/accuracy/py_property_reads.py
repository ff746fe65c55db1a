#!/usr/bin/env python3
"""Python property reads in tg-extract streams, against Jedi.

usage: py_property_reads.py CORPUS STREAM [CORPUS STREAM ...] [--sample N] [--seed S]
                            [--min-precision P] [--min-recall R]

Reading `obj.name` where `name` is a `@property` (or `functools.cached_property`,
`abc.abstractproperty`) runs the getter's body: tg-extract gives the reader a `calls` edge to it.
This checks those edges against Jedi (`bash bench/accuracy/deps_python.sh` installs it).

Getters: with `ast`, every def of the corpus decorated `@property`, `@cached_property` or
`@abstractproperty` (any dotted prefix). Sites: every attribute read of a getter's name that is
not a call's function (`x.name` loaded, or the target of `x.name += 1`), with its caller: the
innermost enclosing def or class, or the module; decorators, defaults and class bases belong to
the scope around the def. Attribute reads of other names cannot reach a repository getter and
are not asked. N sites per corpus (--sample, default 400) are drawn with random.Random(--seed).

Verdicts: Jedi's `goto(follow_imports=True)` on the attribute name. `getter`: exactly one
definition, a getter of the corpus (by file and def line); `other`: anything else Jedi names
(a plain attribute, an instance variable, something outside the corpus); `unjudged`: no
definition or an error.

Scores:
  recall     over sampled `getter` sites: the share whose (caller, getter) is a `calls` edge.
  precision  over the stream's `calls` edges from a sampled site's caller to a getter of the
             site's name: an edge is right when some sampled site of that caller and name was
             judged to be that getter, wrong when every judged one was judged elsewhere.
"""
import argparse
import ast
import json
import os
import random
import sys

GETTERS = {"property", "cached_property", "abstractproperty"}
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def decorator_name(d):
    if isinstance(d, ast.Call):
        d = d.func
    parts = []
    while isinstance(d, ast.Attribute):
        parts.append(d.attr)
        d = d.value
    if isinstance(d, ast.Name):
        parts.append(d.id)
    return ".".join(reversed(parts))


def is_getter(fn):
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        decorator_name(d).rsplit(".", 1)[-1] in GETTERS for d in fn.decorator_list)


def python_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
    return out


def corpus_getters(root):
    """The corpus's parsed files, its getters as (file, def line, name), and per (file, name)
    the (first line, last line, getter line) of each class defining such a getter."""
    trees, getter_lines, aliases = {}, set(), {}
    for rel in python_files(root):
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        trees[rel] = tree
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef):
                for m in n.body:
                    if is_getter(m):
                        getter_lines.add((rel, m.lineno, m.name))
                        # A property is a data descriptor: `self.NAME = ...` anywhere in the
                        # class (which Jedi may give as NAME's definition) and the setter
                        # (`@NAME.setter`, which Jedi may give as the last def of NAME)
                        # stand for it.
                        aliases.setdefault((rel, m.name), []).append(
                            (n.lineno, n.end_lineno or n.lineno, m.lineno))
            elif is_getter(n) and (rel, n.lineno, n.name) not in getter_lines:
                getter_lines.add((rel, n.lineno, n.name))
    return trees, getter_lines, aliases


def sites_of(tree, rel, names):
    """(rel, line, col, name, caller) for each read of one of `names`; caller is
    (name, def line) of the innermost def/class, or ("", 0) for the module."""
    out = []
    called = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            called.add(id(n.func))

    def visit(n, caller):
        if isinstance(n, DEFS):
            for c in n.decorator_list:
                visit(c, caller)
            if isinstance(n, ast.ClassDef):
                for c in n.bases + [k.value for k in n.keywords]:
                    visit(c, caller)
            else:
                for c in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                    visit(c, caller)
            for stmt in n.body:
                visit(stmt, (n.name, n.lineno))
            return
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute):
            add(n.target, caller)
        if (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
                and id(n) not in called):
            add(n, caller)
        for c in ast.iter_child_nodes(n):
            visit(c, caller)

    def add(attr, caller):
        if attr.attr in names and attr.end_lineno is not None:
            out.append((rel, attr.end_lineno, attr.end_col_offset - len(attr.attr), attr.attr,
                        caller))

    visit(tree, ("", 0))
    return out


def load_stream(path):
    nodes, edges = [], set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "node":
                nodes.append(r)
            elif r.get("type") == "edge" and r.get("kind") == "calls":
                edges.add((r["src"], r["dst"]))
    by_def = {}
    for n in nodes:
        by_def.setdefault((n["file"], n["name"], n["line_start"]), n["id"])
        if n["kind"] == "module":
            by_def[(n["file"], "", 0)] = n["id"]
    return by_def, edges


def judge(root, rel_sites, getter_lines, aliases):
    import jedi
    project = jedi.Project(root, smart_sys_path=False, added_sys_path=[root, os.path.join(root, "src")])
    verdicts = {}
    files = python_files(root)

    def corpus_file(tail):
        found = [f for f in files if f == tail or f.endswith("/" + tail)]
        return found[0] if len(found) == 1 else None

    for rel in sorted({s[0] for s in rel_sites}):
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            code = fh.read()
        script = jedi.Script(code, path=os.path.join(root, rel), project=project)
        lines = code.splitlines()
        for s in [s for s in rel_sites if s[0] == rel]:
            _, line, byte_col, name, _ = s
            col = len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))
            try:
                defs = script.goto(line, col, follow_imports=True)
            except Exception as e:  # Jedi's own failures are unjudged, not ours
                verdicts[s] = ("unjudged", str(e)[:60])
                continue
            keys = set()
            for d in defs:
                path = str(d.module_path) if d.module_path else ""
                rel_path = os.path.relpath(path, root).replace(os.sep, "/") if path else ""
                key = (rel_path, d.line, d.name)
                if "site-packages/" in path:
                    # An installed copy of the corpus's own package (another release, so other
                    # lines): the getter of that name in the same file of the corpus, if one.
                    tail = path.split("site-packages/", 1)[1]
                    same = corpus_file(tail)
                    named = [g for g in getter_lines if g[0] == same and g[2] == d.name]
                    if len(named) == 1:
                        key = named[0]
                for first, last, getter_line in aliases.get((rel_path, d.name), []):
                    if first <= d.line <= last:
                        key = (rel_path, getter_line, d.name)
                        break
                keys.add(key)
            if not keys:
                verdicts[s] = ("unjudged", "no definition")
                continue
            targets = [(k[0], k[2], k[1]) for k in keys if k in getter_lines]
            if len(keys) == 1 and len(targets) == 1:
                verdicts[s] = ("getter", targets[0])
            else:
                verdicts[s] = ("other", sorted(keys)[0])
    return verdicts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs", nargs="+")
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--min-precision", type=float, default=0.0)
    ap.add_argument("--min-recall", type=float, default=0.0)
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("CORPUS STREAM pairs")
    total = {"hit": 0, "getter": 0, "right": 0, "wrong": 0}
    print("| corpus | getters | sites | sampled | judged getter | recall | edges judged | precision |")
    print("|---|---|---|---|---|---|---|---|")
    for root, stream in zip(a.pairs[::2], a.pairs[1::2]):
        trees, getter_lines, aliases = corpus_getters(root)
        names = {g[2] for g in getter_lines}
        sites = [s for rel, t in trees.items() for s in sites_of(t, rel, names)]
        sites.sort(key=lambda s: s[:4])
        sample = sites if len(sites) <= a.sample else sorted(
            random.Random(a.seed).sample(sites, a.sample), key=lambda s: s[:4])
        # Every read of the same name in the same caller is judged too (an edge stands for all
        # of them); recall counts the sample only.
        keys = {(s[0], s[4], s[3]) for s in sample}
        siblings = [s for s in sites if (s[0], s[4], s[3]) in keys]
        verdicts = judge(os.path.abspath(root), siblings, getter_lines, aliases)
        by_def, edges = load_stream(stream)
        hit = getter = 0
        misses = []
        # (caller id, name) -> (set of getter ids judged, any judged elsewhere)
        judged = {}
        sampled = set(sample)
        for s in siblings:
            rel, _, _, name, (cname, cline) = s
            caller = by_def.get((rel, cname, cline))
            status, target = verdicts[s]
            if caller is None or status == "unjudged":
                continue
            entry = judged.setdefault((caller, name), [set(), False, None])
            if status == "getter":
                dst = by_def.get((target[0], target[1], target[2]))
                if dst is None:
                    continue
                entry[0].add(dst)
                if s not in sampled:
                    continue
                getter += 1
                if (caller, dst) in edges:
                    hit += 1
                else:
                    misses.append(f"{rel}:{s[1]} {caller} -> {dst}")
            else:
                entry[1] = True
                entry[2] = f"{rel}:{s[1]} Jedi: {target}"
        getter_ids = {by_def.get((g[0], g[2], g[1])) for g in getter_lines}
        right = wrong = 0
        wrongs = []
        for (caller, name), (targets, elsewhere, why) in judged.items():
            for src, dst in edges:
                if src != caller or dst not in getter_ids or dst.split("::")[-1].split(".")[-1].split("#")[0] != name:
                    continue
                if dst in targets:
                    right += 1
                elif elsewhere and not targets:
                    wrong += 1
                    wrongs.append(f"{caller} -> {dst} ({why})")
        total["hit"] += hit
        total["getter"] += getter
        total["right"] += right
        total["wrong"] += wrong
        rec = hit / getter if getter else 1.0
        prec = right / (right + wrong) if right + wrong else 1.0
        print(f"| {os.path.basename(os.path.normpath(root))} | {len(getter_lines)} | {len(sites)} | "
              f"{len(sample)} | {getter} | {rec:.3f} | {right + wrong} | {prec:.3f} |")
        for m in misses[:8]:
            print(f"  missed: {m}", file=sys.stderr)
        for w in wrongs[:8]:
            print(f"  wrong: {w}", file=sys.stderr)
    rec = total["hit"] / total["getter"] if total["getter"] else 1.0
    judged_edges = total["right"] + total["wrong"]
    prec = total["right"] / judged_edges if judged_edges else 1.0
    print(f"| all | | | | {total['getter']} | {rec:.3f} | {judged_edges} | {prec:.3f} |")
    failed = rec < a.min_recall or prec < a.min_precision
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
