"""Independent ground truth for `tldrgraph impact`: the Python functions and classes whose own
source changed between two trees, by Python's `ast` (not by tldrgraph). A symbol's own text is
its lines from its first decorator (or the `def`/`class` line) to its end, with the defs nested in it
(and their decorators) and blank lines cut
out (so a class changes only when something outside its methods does, as impact reports it). Symbols only in
one tree are added or removed. Modules are left out (impact names a module only when nothing
inside it changed).
  usage: python3 impact_oracle.py BEFORE_DIR AFTER_DIR IMPACT_JSON
Prints precision and recall of impact's changed/added/removed (moves count as removed+added
here) against the oracle, and the misses on each side."""
import ast
import json
import os
import sys

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def own_texts(path, rel):
    try:
        source = open(path, encoding="utf-8").read()
        tree = ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    lines = source.splitlines()
    out = {}
    seen = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, DEFS):
                qual = f"{prefix}{child.name}"
                seen[qual] = seen.get(qual, 0) + 1
                if seen[qual] > 1:
                    visit(child, qual + ".")
                    continue
                # A definition begins at its first decorator: a decorator's arguments (a test's
                # parameters) are part of what it is.
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                end = child.end_lineno
                own = lines[start - 1:end]
                for inner in ast.walk(child):
                    if inner is not child and isinstance(inner, DEFS) and inner.lineno > start:
                        first = min([inner.lineno] + [d.lineno for d in inner.decorator_list])
                        for i in range(first - start, inner.end_lineno - start + 1):
                            if 0 <= i < len(own):
                                own[i] = ""
                out[f"{rel}::{qual}"] = "\n".join(line for line in own if line.strip())
                visit(child, qual + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def symbols(root):
    out = {}
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(base, name)
                out.update(own_texts(path, os.path.relpath(path, root).replace(os.sep, "/")))
    return out


def main():
    before, after = symbols(sys.argv[1]), symbols(sys.argv[2])
    truth = set()
    for sid, text in after.items():
        if sid not in before or before[sid] != text:
            truth.add(sid)
    truth |= {sid for sid in before if sid not in after}
    found = json.load(open(sys.argv[3]))
    ours = set()
    for c in found["changed"]:
        if c["kind"] == "module":
            continue
        ours.add(c["id"])
        if c.get("from"):
            ours.add(c["from"])
    # Only Python symbols are judged.
    ours = {s for s in ours if s.split("::")[0].endswith(".py") and "#" not in s}
    hit = ours & truth
    precision = len(hit) / len(ours) if ours else 1.0
    recall = len(hit) / len(truth) if truth else 1.0
    print(f"oracle (ast): {len(truth)} changed symbols; impact: {len(ours)}; "
          f"precision {precision:.3f}, recall {recall:.3f}")
    for label, missing in (("only impact", sorted(ours - truth)), ("only the oracle", sorted(truth - ours))):
        if missing:
            print(f"  {label} ({len(missing)}): {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")


main()
