#!/usr/bin/env python3
"""TypeScript/JavaScript call-resolution accuracy of tg-extract streams, against the TypeScript checker.

usage: ts_calls.py CORPUS STREAM [CORPUS STREAM ...] [--min-precision P] [--min-recall R]
                   [--min-pairs N] [--truth FILE ...] [--examples K]
       ts_calls.py CORPUS [CORPUS ...] --truth-only [--truth FILE ...]

Ground truth: ts_oracle.mjs (deps_ts.sh installs the pinned typescript), or files it wrote before
(--truth, once per corpus, in the order of the corpora). Every CallExpression, NewExpression and
Decorator whose target the checker resolves (the resolved signature's declaration, else the symbol
at the callee with aliases followed; overload signatures to their implementation) to a counted
declaration of the corpus (the declarations ts_defs.py scores). `new C()` and `super()` target the
class C. The caller is the innermost enclosing function, method or class, else the module.
Sites the checker resolves to nothing, to several declarations (`(A | B).m()`) or to an uncounted
one (an interface member, a parameter, an anonymous function) are "unjudged": not truth, and listed.

Both ends are mapped to stream nodes by (file, qualified name): `path::Qual.name#k`, the module node
`path` for module-level callers. A truth pair with an end the stream has no node for is left out
and counted (ts_defs.py scores declarations). Only files the stream gives lang typescript or
javascript take part. Scores, over distinct (src, dst) node-id pairs:
  recall     share of truth pairs that are `calls` edges of the stream; for `new C()` / `super()`
             an edge to C's constructor (`C.constructor`) counts as well
  precision  share of the stream's `calls` edges that are truth pairs (or the constructor twin of
             one), among edges whose src is a function/method/class/module node and whose dst is a
             declaration the oracle counted; edges of resolution `closure` are left out; per
             resolution too. Also printed: the wrong edges whose (caller, callee name) is an
             unjudged site of the checker, and the precision without them (informational).
  pairs      number of truth pairs (a floor, so a broken truth cannot pass vacuously)
Thresholds apply to the combined numbers of all corpora. A human report goes to stderr, one JSON
line to stdout; exit 0 when every threshold is met, 1 when not, 2 when a stream or a truth cannot
be read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict

from common import check, corpus_jobs, examples, ratio, read_stream, say, stream_warnings
from ts_common import MODULE, decl_id, load_truth, scope_files

CALLER_KINDS = {"function", "method", "class"}
HASH = "#"


def spread(items: list[tuple[str, str]]) -> list[str]:
    """Texts of (file, text) items, one file after another, so the first examples come from many
    files."""
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


def constructor_twins(decls: list[dict]) -> dict[str, str]:
    """Class id -> the id of its explicit constructor, from the oracle's declarations."""
    classes = [d for d in decls if d["kind"] == "class"]
    ctors = [d for d in decls if d["kind"] == "method" and d["name"] == "constructor"]
    out = {}
    for c in classes:
        base = c["qualname"].split(HASH)[0] + ".constructor"
        for m in ctors:
            if (m["file"] == c["file"] and m["qualname"].split(HASH)[0] == base
                    and c["line_start"] <= m["line_start"] and m["line_end"] <= c["line_end"]):
                out[decl_id(c["file"], c["qualname"])] = decl_id(m["file"], m["qualname"])
                break
    return out


def score(doc: dict, stream, n_examples: int) -> dict:
    scope, lacking, other = scope_files(doc, stream)
    decls = [d for d in doc.get("declarations", []) if d["file"] in scope]
    counted = {decl_id(d["file"], d["qualname"]): d for d in decls}
    callers = {i for i, d in counted.items() if d["kind"] in CALLER_KINDS} | set(scope)
    twins = constructor_twins(decls)
    nodes = stream.nodes

    truth: dict[tuple[str, str], dict] = {}
    accepted: dict[tuple[str, str], tuple[str, str]] = {}     # edge pair -> the truth pair it proves
    dropped: Counter = Counter()
    dropped_ex: list[tuple[str, str]] = []
    truth_at: dict[tuple[str, int], list[str]] = defaultdict(list)
    for c in doc.get("calls", []):
        if c["file"] not in scope or c["callee_file"] not in scope:
            continue
        src, dst = decl_id(c["file"], c["caller"]), decl_id(c["callee_file"], c["callee_qualname"])
        if src not in nodes or dst not in nodes:
            which = "caller" if src not in nodes else "callee"
            dropped[f"{which} without a stream node"] += 1
            dropped_ex.append((c["file"], f"{c['file']}:{c['line']} {which} "
                               f"{src if which == 'caller' else dst} has no node"))
            continue
        if dst not in truth_at[(src, c["line"])]:
            truth_at[(src, c["line"])].append(dst)
        if (src, dst) in truth:
            continue
        truth[(src, dst)] = c
        accepted[(src, dst)] = (src, dst)
        if c["via"] in ("new", "super") and dst in twins:
            accepted.setdefault((src, twins[dst]), (src, dst))

    unjudged: dict[tuple[str, str], str] = {}
    for u in doc.get("unjudged", []):
        if u["file"] in scope and u.get("name"):
            unjudged.setdefault((decl_id(u["file"], u["caller"]), u["name"]), u["reason"])

    stream_calls = list(stream.calls())
    edges: dict[tuple[str, str], dict] = {}
    for e in stream_calls:
        edges.setdefault((e["src"], e["dst"]), e)
    edges_at: dict[tuple[str, int], list[str]] = defaultdict(list)
    for e in stream_calls:
        edges_at[(e["src"], e.get("line"))].append(e["dst"])

    hit_pairs = {accepted[p] for p in edges if p in accepted}
    out_of_scope: Counter = Counter()
    in_scope: dict[tuple[str, str], dict] = {}
    for pair, e in edges.items():
        s_file = nodes.get(pair[0], {}).get("file")
        if s_file not in scope:
            continue                                   # another language's edge
        if e.get("resolution") == "closure":
            out_of_scope["resolution closure"] += 1
        elif pair[0] not in callers:
            out_of_scope[f"src is a {nodes.get(pair[0], {}).get('kind', 'missing node')} the oracle "
                         f"does not count as a caller"] += 1
        elif pair[1] not in counted:
            out_of_scope[f"dst is a {nodes.get(pair[1], {}).get('kind', 'missing node')} the oracle "
                         f"does not count"] += 1
        else:
            in_scope[pair] = e

    good = [p for p in in_scope if p in accepted]
    by_res: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, e in in_scope.items():
        r = by_res[str(e.get("resolution"))]
        r[1] += 1
        r[0] += p in accepted
    by_via: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, c in truth.items():
        r = by_via[c["via"]]
        r[1] += 1
        r[0] += p in hit_pairs

    wrong, wrong_unjudged = [], 0
    for p, e in sorted(in_scope.items(), key=lambda x: (x[1].get("resolution") or "", x[0])):
        if p in accepted:
            continue
        n = nodes.get(p[0], {})
        dst_name = nodes.get(p[1], {}).get("name", "")
        why = unjudged.get((p[0], dst_name))
        wrong_unjudged += why is not None
        here = truth_at.get((p[0], e.get("line")), [])
        wrong.append((n.get("file"), f"{n.get('file')}:{e.get('line')} [{e.get('resolution')}] "
                      f"{p[0]} -> {p[1]}; checker at that line: {here or 'no call into the corpus'}"
                      + (f" (an unjudged `{dst_name}` site of this caller: {why})" if why else "")))
    misses = []
    for p, c in sorted(truth.items(), key=lambda x: (x[1]["file"], x[1]["line"])):
        if p in hit_pairs:
            continue
        got = edges_at.get((p[0], c["line"]), [])
        misses.append((c["file"], f"{c['file']}:{c['line']} [{c['via']}] {p[0]} -> {p[1]}; "
                       f"stream at that line: {got or 'none'}"))
    not_judged = []
    for p, e in sorted(edges.items()):
        if p not in in_scope and nodes.get(p[0], {}).get("file") in scope:
            not_judged.append((nodes.get(p[0], {}).get("file"),
                               f"{nodes.get(p[0], {}).get('file')}:{e.get('line')} "
                               f"[{e.get('resolution')}] {p[0]} -> {p[1]}"))
    return {
        "files": len(scope), "stream_lacks_files": len(lacking), "stream_other_lang": len(other),
        "pairs": len(truth), "pairs_hit": len(hit_pairs), "recall": ratio(len(hit_pairs), len(truth)),
        "edges": len(edges), "edges_in_scope": len(in_scope), "edges_good": len(good),
        "precision": ratio(len(good), len(in_scope)),
        "wrong_unjudged": wrong_unjudged,
        "precision_judged": ratio(len(good), len(in_scope) - wrong_unjudged),
        "by_resolution": {k: v for k, v in sorted(by_res.items())},
        "by_via": {k: v for k, v in sorted(by_via.items())},
        "out_of_scope": dict(out_of_scope), "dropped": dict(dropped),
        "dropped_examples": spread(dropped_ex), "wrong": spread(wrong), "misses": spread(misses),
        "not_judged": spread(not_judged), "lacking": lacking, "other": other,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("args", nargs="+", metavar="CORPUS STREAM")
    ap.add_argument("--min-precision", type=float, default=0.97)
    ap.add_argument("--min-recall", type=float, default=0.80)
    ap.add_argument("--min-pairs", type=int, default=200)
    ap.add_argument("--truth", action="append", default=[],
                    help="ts_oracle.mjs output, once per corpus in order (skips running node)")
    ap.add_argument("--truth-only", action="store_true",
                    help="arguments are corpora only; print ground-truth counts")
    ap.add_argument("--examples", type=int, default=40, help="examples printed per list")
    a = ap.parse_args()
    jobs = corpus_jobs(ap, a.args, a.truth_only)
    if len(a.truth) > len(jobs):
        ap.error("more --truth files than corpora")

    per_corpus = []
    tot: Counter = Counter()
    res_tot: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for k, (root, stream_path) in enumerate(jobs):
        name = os.path.basename(os.path.normpath(root))
        doc, seconds = load_truth(root, a.truth[k] if k < len(a.truth) else None)
        summ = doc.get("summary", {})
        calls = doc.get("calls", [])
        raw_pairs = {(c["file"], c["caller"], c["callee_file"], c["callee_qualname"]) for c in calls}
        say(f"== {name}: typescript {doc.get('typescript')}, {summ.get('files')} files, "
            f"{summ.get('declarations')} declarations, {seconds:.1f}s")
        say(f"   ground truth: {len(calls)} calls of {summ.get('call_sites')} sites "
            f"{summ.get('calls_by_via')}, {len(raw_pairs)} distinct pairs; left out: "
            f"{summ.get('dropped')}; unjudged targets: {summ.get('uncounted_target_kinds')}")
        entry: dict = {"corpus": name, "declarations": summ.get("declarations"), "calls": len(calls),
                       "sites": summ.get("call_sites"), "dropped": summ.get("dropped"),
                       "oracle_seconds": round(seconds, 2)}
        if stream_path is not None:
            s = read_stream(stream_path)
            for w in stream_warnings(s):
                say("   WARNING:", w)
            r = score(doc, s, a.examples)
            if r["lacking"] or r["other"]:
                say(f"   the stream lacks {len(r['lacking'])} corpus files and gives {len(r['other'])} "
                    f"another language (both excluded)")
                examples("missing or other-language files", r["lacking"] + r["other"], 5)
            if r["dropped"]:
                say(f"   truth calls left out (an end without a node): {r['dropped']}")
                examples("left out", r["dropped_examples"], a.examples)
            say(f"   recall    {r['recall']:.4f} ({r['pairs_hit']}/{r['pairs']} pairs)   by via: "
                + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in r["by_via"].items()))
            say(f"   precision {r['precision']:.4f} ({r['edges_good']}/{r['edges_in_scope']} edges in "
                f"scope, of {r['edges']} distinct calls edges); {r['wrong_unjudged']} wrong edges are "
                f"at sites the checker leaves unjudged (without them {r['precision_judged']:.4f})")
            say("   precision by resolution: " + ", ".join(
                f"{k} {ratio(*v):.3f} ({v[0]}/{v[1]})" for k, v in r["by_resolution"].items()))
            if r["out_of_scope"]:
                say(f"   edges not judged: {r['out_of_scope']}")
            examples("wrong edges (not in the truth)", r["wrong"], a.examples)
            examples("misses (truth pair not in the stream)", r["misses"], a.examples)
            examples("edges not judged", r["not_judged"], min(a.examples, 10))
            for key, v in r["by_resolution"].items():
                res_tot[key][0] += v[0]
                res_tot[key][1] += v[1]
            tot.update({"pairs": r["pairs"], "hit": r["pairs_hit"], "good": r["edges_good"],
                        "in_scope": r["edges_in_scope"], "wrong_unjudged": r["wrong_unjudged"]})
            entry.update({"pairs": r["pairs"], "edges_in_scope": r["edges_in_scope"],
                          "recall": round(r["recall"], 5), "precision": round(r["precision"], 5),
                          "precision_judged": round(r["precision_judged"], 5),
                          "precision_by_resolution": {key: round(ratio(*v), 5)
                                                      for key, v in r["by_resolution"].items()},
                          "edges_by_resolution": {key: v[1] for key, v in r["by_resolution"].items()},
                          "recall_by_via": {key: round(ratio(*v), 5) for key, v in r["by_via"].items()}})
        else:
            tot["pairs"] += len(raw_pairs)
            entry["pairs"] = len(raw_pairs)
        per_corpus.append(entry)

    out = {"check": "ts_calls", "corpora": per_corpus, "pairs": tot["pairs"]}
    failures: list[str] = []
    if tot["pairs"] < a.min_pairs:
        failures.append(f"only {tot['pairs']} ground-truth pairs < {a.min_pairs}")
    if not a.truth_only:
        recall, precision = ratio(tot["hit"], tot["pairs"]), ratio(tot["good"], tot["in_scope"])
        judged = ratio(tot["good"], tot["in_scope"] - tot["wrong_unjudged"])
        say(f"== combined: {tot['pairs']} pairs; recall {recall:.4f} (min {a.min_recall}), "
            f"precision {precision:.4f} (min {a.min_precision}; {judged:.4f} without unjudged sites); "
            "by resolution " + ", ".join(f"{k} {ratio(*v):.3f} ({v[1]})" for k, v in sorted(res_tot.items())))
        check("recall", recall, a.min_recall, failures)
        check("precision", precision, a.min_precision, failures)
        out.update({"recall": round(recall, 5), "precision": round(precision, 5),
                    "precision_judged": round(judged, 5),
                    "precision_by_resolution": {k: round(ratio(*v), 5) for k, v in sorted(res_tot.items())}})
        say("PASS" if not failures else "FAIL: " + "; ".join(failures))
    else:
        say(f"== combined ground truth: {tot['pairs']} pairs" + (f"  FAIL: {failures[0]}" if failures else ""))
    out["pass"] = not failures
    print(json.dumps(out))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
