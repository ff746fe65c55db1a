#!/usr/bin/env python3
"""TypeScript/JavaScript declaration accuracy of a tg-extract stream, against the TypeScript compiler.

usage: ts_defs.py CORPUS STREAM [--min-recall R] [--min-precision P] [--min-lines L] [--truth FILE]
       ts_defs.py CORPUS --truth-only [--truth FILE]

Ground truth: ts_oracle.mjs (the TypeScript compiler's own parser, a Program over every
.ts/.tsx/.mts/.cts/.js/.jsx/.mjs/.cjs file, .d.ts included; deps_ts.sh installs it), or a file it
wrote before (--truth). Counted: functions (declarations with a body, const arrow/function
expressions, functions of an exported const object literal), classes (declarations, const class
expressions), methods (with a body or abstract; accessors; constructors; arrow-valued properties),
interfaces (trait), type aliases (typedef), enums, identifier-named namespaces (mod); named by the
stream's id rules (qualified name joined by `.`, `#k` for repeats). The rules are in ts_oracle.mjs.

The stream's `node` records of kind function/method/class/trait/typedef/enum/mod in files whose `file`
record has lang typescript or javascript are matched by (file, qualified name), the qualified name
being the node id after `path::`. Scores:
  recall     share of the compiler's declarations present in the stream (also per kind)
  precision  share of the stream's declarations the compiler also has
  lines      share of matched declarations whose (line_start, line_end) equal the compiler's
  kind       share of matched declarations with the same kind (informational)
Oracle files the stream lacks (or gives another language) are left out of both sides and counted.
A human report goes to stderr, one JSON line to stdout; exit 0 when every threshold is met, 1 when
not, 2 when the stream or the truth cannot be had.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from common import check, examples, ratio, read_stream, say, stream_warnings
from ts_common import DEF_KINDS, load_truth, scope_files, stream_qualname


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("corpus")
    ap.add_argument("stream", nargs="?", help="tg-extract NDJSON output, or - for stdin")
    ap.add_argument("--min-recall", type=float, default=0.995)
    ap.add_argument("--min-precision", type=float, default=0.995)
    ap.add_argument("--min-lines", type=float, default=0.99)
    ap.add_argument("--truth", help="ts_oracle.mjs output for CORPUS (skips running node)")
    ap.add_argument("--examples", type=int, default=30, help="examples printed per list")
    ap.add_argument("--truth-only", action="store_true",
                    help="print the ground-truth counts only (no stream needed)")
    args = ap.parse_args()

    doc, seconds = load_truth(args.corpus, args.truth)
    summ = doc.get("summary", {})
    decls = doc.get("declarations", [])
    by_kind = Counter(d["kind"] for d in decls)
    say(f"corpus {args.corpus}: {summ.get('files')} files {summ.get('files_by_ext')}, "
        f"{len(summ.get('files_with_syntax_errors', []))} with syntax errors, "
        f"{len(summ.get('files_not_in_program', []))} not in the program; "
        f"typescript {doc.get('typescript')}, {seconds:.1f}s")
    examples("files with syntax errors", summ.get("files_with_syntax_errors", []), 5)
    say(f"ground truth: {len(decls)} declarations {dict(sorted(by_kind.items()))}")

    if args.truth_only or args.stream is None:
        print(json.dumps({"check": "ts_defs", "corpus": args.corpus, "files": summ.get("files"),
                          "syntax_errors": len(summ.get("files_with_syntax_errors", [])),
                          "truth": len(decls), "truth_by_kind": dict(by_kind),
                          "seconds": round(seconds, 2)}))
        return 0

    s = read_stream(args.stream)
    for w in stream_warnings(s):
        say("WARNING:", w)
    scope, lacking, other = scope_files(doc, s)
    if lacking:
        say(f"the stream lacks {len(lacking)} of {summ.get('files')} corpus files (excluded)")
        examples("missing files", lacking, 5)
    if other:
        say(f"the stream gives {len(other)} files a language other than typescript/javascript (excluded)")
        examples("other language", other, 5)

    truth = {(d["file"], d["qualname"]): d for d in decls if d["file"] in scope}
    ours: dict[tuple[str, str], dict] = {}
    for n in s.nodes.values():
        if n.get("kind") in DEF_KINDS and n.get("file") in scope:
            ours[(n["file"], stream_qualname(n))] = n

    matched = [k for k in truth if k in ours]
    misses = sorted((k for k in truth if k not in ours), key=lambda k: (k[0], truth[k]["line_start"]))
    extras = sorted((k for k in ours if k not in truth), key=lambda k: (k[0], ours[k].get("line_start", 0)))
    line_bad, kind_bad = [], []
    for k in sorted(matched, key=lambda k: (k[0], truth[k]["line_start"])):
        t, n = truth[k], ours[k]
        if (n.get("line_start"), n.get("line_end")) != (t["line_start"], t["line_end"]):
            line_bad.append(f"{k[0]}:{t['line_start']} {k[1]}: stream {n.get('line_start')}-"
                            f"{n.get('line_end')}, compiler {t['line_start']}-{t['line_end']}")
        if n.get("kind") != t["kind"]:
            kind_bad.append(f"{k[0]}:{t['line_start']} {k[1]}: stream {n.get('kind')}, compiler {t['kind']}")
    kind_recall = {}
    for kind in sorted({t["kind"] for t in truth.values()}):
        ks = [k for k, t in truth.items() if t["kind"] == kind]
        kind_recall[kind] = (sum(k in ours for k in ks), len(ks))

    recall = ratio(len(matched), len(truth))
    precision = ratio(len(matched), len(ours))
    lines = ratio(len(matched) - len(line_bad), len(matched))
    kinds = ratio(len(matched) - len(kind_bad), len(matched))

    say(f"compared over {len(scope)} files: compiler {len(truth)}, stream {len(ours)}, matched {len(matched)}")
    say(f"  recall    {recall:.4f}  (min {args.min_recall})   by kind: "
        + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kind_recall.items()))
    say(f"  precision {precision:.4f}  (min {args.min_precision})")
    say(f"  lines     {lines:.4f}  (min {args.min_lines})   exact (line_start, line_end)")
    say(f"  kind      {kinds:.4f}  (informational)")
    n = args.examples
    examples("misses (compiler has, stream lacks)",
             [f"{k[0]}:{truth[k]['line_start']} {k[1]} ({truth[k]['kind']})" for k in misses], n)
    examples("extras (stream has, compiler lacks)",
             [f"{k[0]}:{ours[k].get('line_start')} {k[1]} ({ours[k].get('kind')})" for k in extras], n)
    examples("line mismatches", line_bad, n)
    examples("kind mismatches", kind_bad, n)

    failures: list[str] = []
    check("recall", recall, args.min_recall, failures)
    check("precision", precision, args.min_precision, failures)
    check("lines", lines, args.min_lines, failures)
    say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    print(json.dumps({
        "check": "ts_defs", "corpus": args.corpus, "files": len(scope),
        "syntax_errors": len(summ.get("files_with_syntax_errors", [])),
        "stream_lacks_files": len(lacking), "stream_other_lang": len(other),
        "truth": len(truth), "stream": len(ours), "matched": len(matched),
        "recall": round(recall, 5), "precision": round(precision, 5), "lines": round(lines, 5),
        "kind": round(kinds, 5), "recall_by_kind": {k: round(ratio(a, b), 5) for k, (a, b) in kind_recall.items()},
        "seconds": round(seconds, 2), "pass": not failures}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
