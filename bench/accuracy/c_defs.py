#!/usr/bin/env python3
"""C definition accuracy of a tg-extract stream, against universal-ctags.

usage: c_defs.py CORPUS STREAM [--min-recall R] [--min-line-recall L] [--ctags PATH]
       c_defs.py CORPUS --truth-only

Ground truth: universal-ctags' definitions of functions, structs, unions and enums in the .c and .h
files under CORPUS (prototypes, typedefs, macros and anonymous `__anon*` types are left out). ctags
reads .h as C++ by default, so C is forced on both extensions; option files (~/.ctags.d, the
corpus' own .ctags.d/) are not read. Each ctags tag (file, name, kind,
line) is matched to the stream's `node` records of the same (file, name, kind); repeated definitions
of one key (#if/#else variants) are matched as multisets. Scores:
  recall       share of ctags definitions with a stream node of the same (file, name, kind)
  line recall  share whose stream line_start equals ctags' line exactly
  in span      share whose ctags line lies within the stream's [line_start, line_end]
               (ctags puts a function on the line of its name; a definition whose return type
               sits on the line above starts one line earlier in a tree-sitter extractor)
  precision    share of stream function/struct/union/enum nodes that ctags also has
               (informational: ctags skips `#if 0` regions and some macro-heavy code)
ctags itself misreads macro-heavy code: `static STACK_OF(X509) *f(void)` becomes a function named
STACK_OF, `DEFINE_RUN_ONCE_STATIC(do_init)` a function named DEFINE_RUN_ONCE_STATIC. The recall
without ctags functions whose name is ALL_CAPS is printed beside the plain one, and
--ignore-caps-functions drops them from the ground truth altogether (thresholds included).
A human report goes to stderr, one JSON line to stdout; exit 0 when thresholds are met, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict

from common import check, examples, ratio, read_stream, say, stream_warnings, walk_corpus

KINDS = ("function", "struct", "union", "enum")
CAPS = re.compile(r"[A-Z][A-Z0-9_]*")


def caps_function(name: str, kind: str) -> bool:
    """A ctags 'function' named like a macro: most often ctags misreading a macro invocation."""
    return kind == "function" and CAPS.fullmatch(name) is not None


def ctags_truth(corpus: str, ctags: str) -> list[tuple[str, str, str, int]]:
    """(file, name, kind, line) for every definition ctags reports, sorted."""
    # --options=NONE (it must come first): ignore option files, above all a corpus' own .ctags.d/
    # (openssl ships one that excludes test/ and adds macro regexes).
    cmd = [ctags, "--options=NONE", "-R", "--languages=C", "--langmap=C:.c.h",
           "--kinds-C=fsug",            # function, struct, union, enum (not p = prototype)
           "--extras=-{anonymous}",     # no __anonXXXX tags for unnamed types
           "--fields=+ne", "--output-format=json", "--sort=no", "-o", "-", "."]
    proc = subprocess.run(cmd, cwd=corpus, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"ctags failed ({proc.returncode}): {proc.stderr.strip()}")
    tags = []
    for line in proc.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("kind") not in KINDS:
            continue
        if tag["name"].startswith("__anon"):   # belt and braces next to --extras
            continue
        path = tag["path"].removeprefix("./")
        tags.append((path, tag["name"], tag["kind"], int(tag["line"])))
    tags.sort()
    return tags


def node_name(node: dict) -> str:
    """The bare name of a struct/union/enum node, whether `name` carries the keyword or not."""
    name = node.get("name", "")
    for kw in ("struct ", "union ", "enum "):
        name = name.removeprefix(kw)
    return name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("corpus")
    ap.add_argument("stream", nargs="?", help="tg-extract NDJSON output, or - for stdin")
    ap.add_argument("--min-recall", type=float, default=0.99)
    ap.add_argument("--min-line-recall", type=float, default=0.0,
                    help="threshold on line-exact recall (default 0: informational)")
    ap.add_argument("--ignore-caps-functions", action="store_true",
                    help="drop ctags functions named in ALL_CAPS from the ground truth")
    ap.add_argument("--ctags", default="ctags")
    ap.add_argument("--truth-only", action="store_true",
                    help="print the ground-truth counts only (no stream needed)")
    args = ap.parse_args()

    c_files = walk_corpus(args.corpus, (".c", ".h"))
    truth = ctags_truth(args.corpus, args.ctags)
    if args.ignore_caps_functions:
        n = len(truth)
        truth = [t for t in truth if not caps_function(t[1], t[2])]
        say(f"dropped {n - len(truth)} ctags functions named in ALL_CAPS")
    say(f"corpus {args.corpus}: {len(c_files)} .c/.h files")
    say(f"ground truth (ctags): {len(truth)} definitions "
        f"{dict(sorted(Counter(t[2] for t in truth).items()))}")
    if args.truth_only or args.stream is None:
        print(json.dumps({"check": "c_defs", "corpus": args.corpus, "files": len(c_files),
                          "truth": len(truth), "truth_by_kind": Counter(t[2] for t in truth)}))
        return 0

    s = read_stream(args.stream)
    for w in stream_warnings(s):
        say("WARNING:", w)
    lacking = [p for p in c_files if p not in s.files]
    scope = set(c_files) - set(lacking)
    if lacking:
        say(f"the stream lacks {len(lacking)} of {len(c_files)} corpus .c/.h files (excluded)")
        examples("missing files", lacking, 5)

    # Group both sides by (file, name, kind); each group holds the definition lines.
    want: dict[tuple, list[int]] = defaultdict(list)
    for path, name, kind, line in truth:
        if path in scope:
            want[(path, name, kind)].append(line)
    have: dict[tuple, list[dict]] = defaultdict(list)
    for n in s.nodes.values():
        if n.get("kind") in KINDS and n.get("file") in scope:
            have[(n["file"], node_name(n), n["kind"])].append(n)

    n_truth = sum(map(len, want.values()))
    n_ours = sum(map(len, have.values()))
    name_hits = line_hits = span_hits = 0
    caps_truth = caps_hits = 0      # ALL_CAPS ctags functions, for the adjusted recall
    misses, line_bad = [], []
    for key, lines in sorted(want.items()):
        nodes = have.get(key, [])
        name_hits += min(len(lines), len(nodes))
        if caps_function(key[1], key[2]):
            caps_truth += len(lines)
            caps_hits += min(len(lines), len(nodes))
        if len(nodes) < len(lines):
            misses.append(f"{key[0]}:{lines[0]} {key[2]} {key[1]}"
                          + (f" ({len(lines)} in ctags, {len(nodes)} in stream)" if nodes else ""))
        # Line-exact and in-span matches, each stream node used at most once.
        starts = Counter(n.get("line_start") for n in nodes)
        spans = [(n.get("line_start", 0), n.get("line_end", 0)) for n in nodes]
        for line in lines:
            if starts[line] > 0:
                starts[line] -= 1
                line_hits += 1
            elif nodes:
                line_bad.append(f"{key[0]}::{key[1]} ({key[2]}): ctags line {line}, stream "
                                + ", ".join(f"{a}-{b}" for a, b in spans))
            for j, (a, b) in enumerate(spans):
                if a <= line <= b:
                    span_hits += 1
                    del spans[j]
                    break
    extras = []
    for key, nodes in sorted(have.items()):
        surplus = len(nodes) - len(want.get(key, []))
        if surplus > 0:
            extras.append(f"{key[0]}:{nodes[0].get('line_start')} {key[2]} {key[1]}"
                          + (f" (+{surplus})" if key in want else ""))

    recall = ratio(name_hits, n_truth)
    line_recall = ratio(line_hits, n_truth)
    span_recall = ratio(span_hits, n_truth)
    precision = ratio(name_hits, n_ours)
    recall_no_caps = ratio(name_hits - caps_hits, n_truth - caps_truth)
    say(f"compared over {len(scope)} files: ctags {n_truth}, stream {n_ours}, "
        f"name matches {name_hits}")
    per_kind = {}
    for kind in KINDS:
        t = sum(len(v) for k, v in want.items() if k[2] == kind)
        h = sum(min(len(v), len(have.get(k, []))) for k, v in want.items() if k[2] == kind)
        o = sum(len(v) for k, v in have.items() if k[2] == kind)
        per_kind[kind] = {"ctags": t, "stream": o, "matched": h}
        say(f"  {kind:9s} ctags {t:6d}  stream {o:6d}  matched {h:6d}  recall {ratio(h, t):.4f}")
    say(f"  recall (file, name, kind)  {recall:.4f}  (min {args.min_recall})")
    say(f"  recall without ALL_CAPS ctags functions {recall_no_caps:.4f}  "
        f"({caps_truth - caps_hits} of the {n_truth - name_hits} misses are such names)")
    say(f"  line-exact recall          {line_recall:.4f}  (min {args.min_line_recall})")
    say(f"  ctags line within span     {span_recall:.4f}  (informational)")
    say(f"  precision vs ctags         {precision:.4f}  (informational)")
    examples("misses (ctags has, stream lacks)", misses)
    examples("line mismatches", line_bad)
    examples("extras (stream has, ctags lacks)", extras)

    failures: list[str] = []
    check("recall", recall, args.min_recall, failures)
    check("line recall", line_recall, args.min_line_recall, failures)
    say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    print(json.dumps({
        "check": "c_defs", "corpus": args.corpus, "files": len(scope),
        "stream_lacks_files": len(lacking), "truth": n_truth, "stream": n_ours,
        "matched": name_hits, "recall": round(recall, 5),
        "recall_no_caps": round(recall_no_caps, 5), "line_recall": round(line_recall, 5),
        "span_recall": round(span_recall, 5), "precision": round(precision, 5),
        "per_kind": per_kind, "pass": not failures}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
