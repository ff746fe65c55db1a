#!/usr/bin/env python3
"""Python definition accuracy of a tg-extract stream, against Python's own `ast`.

usage: py_defs.py CORPUS STREAM [--min-recall R] [--min-precision P] [--min-lines L]
       py_defs.py CORPUS --truth-only

Ground truth: every ClassDef / FunctionDef / AsyncFunctionDef of every .py/.pyi file under CORPUS
that `ast` can parse, named by the stream's id rules (qualified name, `#k` for repeats; see
common.collect_defs). The stream's `node` records of kind class/function/method are matched to it
by id, and scored on:
  recall     share of ast definitions present in the stream
  precision  share of stream definitions that ast also has
  lines      share of matched definitions whose (line_start, line_end) equal ast's
             (lineno of the def/class keyword, end_lineno)
  kind       share of matched definitions with the same kind (informational)
Files that ast rejects, and files the stream has no `file` record for, are left out of both sides
and counted. A human report goes to stderr, one JSON line to stdout; exit 0 when every threshold is
met, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import sys

from common import (check, collect_defs, examples, parse_python, ratio, read_stream, say,
                    stream_warnings, walk_corpus)

DEF_KINDS = {"class", "function", "method"}


def ground_truth(corpus: str):
    """(truth defs by id, paths parsed, paths ast rejected)."""
    truth: dict[str, tuple[str, str, int, int]] = {}   # id -> (file, kind, line_start, line_end)
    parsed, rejected = [], []
    for rel in walk_corpus(corpus, (".py", ".pyi")):
        tree = parse_python(corpus, rel)
        if tree is None:
            rejected.append(rel)
            continue
        parsed.append(rel)
        for d in collect_defs(tree, rel):
            truth[d.id] = (rel, d.kind, d.node.lineno, d.node.end_lineno)
    return truth, parsed, rejected


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("corpus")
    ap.add_argument("stream", nargs="?", help="tg-extract NDJSON output, or - for stdin")
    ap.add_argument("--min-recall", type=float, default=0.995)
    ap.add_argument("--min-precision", type=float, default=0.995)
    ap.add_argument("--min-lines", type=float, default=0.99)
    ap.add_argument("--truth-only", action="store_true",
                    help="print the ground-truth counts only (no stream needed)")
    args = ap.parse_args()

    truth, parsed, rejected = ground_truth(args.corpus)
    by_kind: dict[str, int] = {}
    for _, kind, _, _ in truth.values():
        by_kind[kind] = by_kind.get(kind, 0) + 1
    say(f"corpus {args.corpus}: {len(parsed) + len(rejected)} Python files, "
        f"{len(rejected)} rejected by ast")
    examples("rejected by ast", rejected, 5)
    say(f"ground truth: {len(truth)} definitions {dict(sorted(by_kind.items()))}")

    if args.truth_only or args.stream is None:
        print(json.dumps({"check": "py_defs", "corpus": args.corpus, "files": len(parsed),
                          "rejected": len(rejected), "truth": len(truth), "truth_by_kind": by_kind}))
        return 0

    s = read_stream(args.stream)
    for w in stream_warnings(s):
        say("WARNING:", w)

    # Compare only files both sides can speak about.
    lacking = [p for p in parsed if p not in s.files]
    scope = set(parsed) - set(lacking)
    if lacking:
        say(f"the stream lacks {len(lacking)} of {len(parsed)} parsable corpus files (excluded)")
        examples("missing files", lacking, 5)
    truth = {i: t for i, t in truth.items() if t[0] in scope}
    ours = {i: n for i, n in s.nodes.items() if n.get("kind") in DEF_KINDS and n.get("file") in scope}

    matched = [i for i in truth if i in ours]
    misses = sorted(i for i in truth if i not in ours)
    extras = sorted(i for i in ours if i not in truth)
    line_bad, kind_bad = [], []
    for i in matched:
        _, kind, lo, hi = truth[i]
        n = ours[i]
        if (n.get("line_start"), n.get("line_end")) != (lo, hi):
            line_bad.append(f"{i}: stream {n.get('line_start')}-{n.get('line_end')}, ast {lo}-{hi}")
        if n.get("kind") != kind:
            kind_bad.append(f"{i}: stream {n.get('kind')}, ast {kind}")

    recall = ratio(len(matched), len(truth))
    precision = ratio(len(matched), len(ours))
    lines = ratio(len(matched) - len(line_bad), len(matched))
    kinds = ratio(len(matched) - len(kind_bad), len(matched))

    say(f"compared over {len(scope)} files: ast {len(truth)}, stream {len(ours)}, matched {len(matched)}")
    say(f"  recall    {recall:.4f}  (min {args.min_recall})")
    say(f"  precision {precision:.4f}  (min {args.min_precision})")
    say(f"  lines     {lines:.4f}  (min {args.min_lines})   exact (line_start, line_end)")
    say(f"  kind      {kinds:.4f}  (informational)")
    examples("misses (ast has, stream lacks)", misses)
    examples("extras (stream has, ast lacks)", extras)
    examples("line mismatches", line_bad)
    examples("kind mismatches", kind_bad)

    failures: list[str] = []
    check("recall", recall, args.min_recall, failures)
    check("precision", precision, args.min_precision, failures)
    check("lines", lines, args.min_lines, failures)
    say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    print(json.dumps({
        "check": "py_defs", "corpus": args.corpus, "files": len(scope), "rejected": len(rejected),
        "stream_lacks_files": len(lacking), "truth": len(truth), "stream": len(ours),
        "matched": len(matched), "recall": round(recall, 5), "precision": round(precision, 5),
        "lines": round(lines, 5), "kind": round(kinds, 5), "pass": not failures}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
