#!/usr/bin/env python3
"""The answer benchmark: runs tldrgraph on four corpora the way an agent would and checks its
answers against expected answers written by reading the code (bench/answers/<corpus>.json).

usage: python3 bench/answers/run.py BIN_DIR [--corpora-tsv FILE] [--mode off|doc|both]
                                    [--json OUT] [--only CORPUS]

  BIN_DIR        directory holding tldrgraph and its tg-* stages
  --corpora-tsv  lines `name<TAB>path<TAB>language` (default: the output of
                 `bash /work/shared/corpora/get.sh`)
  --mode         off: every init with `--enrich off` (zero-token mode); doc: approve the plan and
                 answer each needs_enrichment batch with the symbols' own `doc` line (items with
                 no doc are skipped, and the build is then finished with `--enrich off`);
                 agent: answer with the intents an agent wrote for the corpus's plan, reading
                 the code and not the expected answers (bench/answers/intents/<corpus>.json);
                 both: off and agent (default: off)
  --json OUT     also write the raw results
  --only CORPUS  one corpus (repeatable)

Check kinds (see README.md): query (any expected id in the top 5), trace (a call path from -> to
exists), plan_core (share of core ids among plan.json candidates >= min_cover), not_dead (none of
the symbols among the dead-code findings). Ids are compared with a trailing `#N` removed. An
expected id that is not a node of the graph is reported as `unknown id` (a spelling problem of
the benchmark) and is not counted against the tool.

Python 3.11, standard library only.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GET_SH = "/work/shared/corpora/get.sh"
# answer-file corpus name -> name printed by get.sh, when they differ
ALIASES = {"lz4": "lz4-sys"}
TOP_K = 5
MAX_INIT_ROUNDS = 12


def norm(node_id):
    """An id with a trailing `#N` (the tool's suffix for a repeated definition) removed."""
    return re.sub(r"#\d+$", "", node_id)


def run(cmd, timeout=900):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def parse_json(text):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


# ---------------------------------------------------------------- corpora and answers

def read_corpora(tsv_path):
    if tsv_path:
        text = open(tsv_path).read()
    else:
        text = subprocess.run(["bash", GET_SH], capture_output=True, text=True, check=True).stdout
    corpora = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0].strip():
            corpora[parts[0].strip()] = {"path": parts[1].strip(),
                                         "language": parts[2].strip() if len(parts) > 2 else ""}
    return corpora


def find_corpus(name, corpora):
    for candidate in (name, ALIASES.get(name)):
        if candidate and candidate in corpora:
            return candidate, corpora[candidate]
    prefixed = [n for n in corpora if n.startswith(name + "-")]
    if len(prefixed) == 1:
        return prefixed[0], corpora[prefixed[0]]
    return None, None


def read_answers(only):
    answers = []
    for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        data = parse_json(open(path).read())
        if not isinstance(data, dict) or "checks" not in data or "corpus" not in data:
            continue
        if only and data["corpus"] not in only:
            continue
        answers.append(data)
    return answers


# ---------------------------------------------------------------- the contract loop

def first_paragraph(doc):
    para = re.split(r"\n\s*\n", doc.strip())[0] if doc else ""
    return " ".join(para.split())


def drive_init(tg, repo, mode, scratch, written=None):
    """Runs `tldrgraph init --json` until `done` (or a cap), answering each state as an agent
    would: in mode doc with each item's doc line, in mode agent with the intents an agent wrote
    for the corpus (`written`, id -> intent). Returns (log, final_state, seconds)."""
    def intent_for(item):
        if mode == "agent":
            return (written or {}).get(item["id"], "")
        return first_paragraph(item.get("doc") or "")

    log = []
    extra = ["--enrich", "off"] if mode == "off" else []
    approve = False
    answered = set()
    seconds = 0.0
    state = None
    for round_no in range(1, MAX_INIT_ROUNDS + 1):
        cmd = [tg, "init", "--json"] + (["--yes"] if approve else []) + extra + [repo]
        approve = False
        rc, out, err, dt = run(cmd)
        seconds += dt
        state = parse_json(out) or {"status": "error", "error": "no JSON on stdout",
                                    "stdout": out[-500:], "stderr": err[-500:]}
        status = state.get("status")
        entry = {"round": round_no, "args": cmd[2:-1], "rc": rc, "status": status,
                 "seconds": round(dt, 2)}
        log.append(entry)
        if status == "done":
            break
        if status == "needs_layers":
            entry["note"] = "needs_layers although the config was copied: " + str(state.get("reason"))
            break
        if status == "needs_confirmation":
            entry["note"] = f"candidates {state.get('candidates_count')}, approving with --yes"
            approve = True
            continue
        if status == "needs_enrichment":
            batch = state.get("batch") or []
            intents = []
            for item in batch:
                intent = intent_for(item)
                if intent and item["id"] not in answered:
                    intents.append({"id": item["id"], "intent": intent})
            skipped = sum(1 for item in batch if not intent_for(item))
            entry["note"] = (f"batch {len(batch)}, pending {state.get('pending')}: "
                             f"{len(intents)} answered ({mode}), {skipped} without an intent skipped")
            if not intents:
                # nothing more we can answer: finish the build without summaries
                entry["note"] += "; finishing with --enrich off"
                extra = ["--enrich", "off"]
                continue
            resp = os.path.join(scratch, f"intents-{round_no}.json")
            with open(resp, "w") as f:
                json.dump(intents, f, indent=1)
            rc2, out2, err2, dt2 = run([tg, "enrich", "--apply", resp, "--json", repo])
            seconds += dt2
            entry["enrich_rc"] = rc2
            if rc2 != 0:
                entry["note"] += f"; enrich --apply failed: {(out2 or err2).strip()[:400]}"
                break
            answered.update(i["id"] for i in intents)
            continue
        if status == "needs_embeddings":
            entry["note"] = f"{state.get('reason')}; continuing with --embeddings off"
            extra = extra + ["--embeddings", "off"]
            continue
        entry["note"] = (state.get("error") or f"unexpected status {status!r}") + \
            (f" (stderr: {err.strip()[-300:]})" if err.strip() else "")
        break
    else:
        log[-1]["note"] = (log[-1].get("note", "") + f"; gave up after {MAX_INIT_ROUNDS} rounds").lstrip("; ")
    return log, state, seconds, len(answered)


# ---------------------------------------------------------------- graph ids

class Ids:
    def __init__(self, repo):
        self.repo = repo
        self.by_norm = {}
        graph = os.path.join(repo, ".tldrgraph", "graph.json")
        data = parse_json(open(graph).read()) if os.path.exists(graph) else None
        self.ok = bool(data and isinstance(data.get("nodes"), list))
        for node in (data or {}).get("nodes", []):
            self.by_norm.setdefault(norm(node["id"]), []).append(node["id"])

    def known(self, expected):
        return norm(expected) in self.by_norm

    def variants(self, expected):
        """Graph ids for an expected id: the exact one first, then the other #N versions."""
        found = self.by_norm.get(norm(expected), [])
        return sorted(found, key=lambda i: (i != expected, i))

    def defined_at(self, expected):
        """For an id that is not a node: `file:line` where the source seems to define its last
        name (so the tool missed it), else None (the benchmark misspelled it). A heuristic."""
        path, _, qual = norm(expected).partition("::")
        name = re.split(r"::|\.", qual)[-1] if qual else ""
        full = os.path.join(self.repo, path)
        if not name or not os.path.isfile(full):
            return None
        text = open(full, errors="replace").read()
        n = re.escape(name)
        patterns = [rf"\b(?:def|class|fn|struct|enum|trait|type|union|mod)\s+{n}\b",  # py, rust
                    rf"^[ \t]*\**{n}\s*\(",                                        # C: name at line start
                    rf"[\w\*][ \t\*]+{n}\s*\([^;{{}}]*\)\s*\{{"]                   # C: type name(...) {
        for pat in patterns:
            m = re.search(pat, text, re.M)
            if m:
                return f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        return None

    def split(self, expected_ids):
        """(known, not_extracted {id: file:line}, unknown) for a list of expected ids."""
        known, missing, unknown = [], {}, []
        for e in expected_ids:
            if self.known(e):
                known.append(e)
            elif (where := self.defined_at(e)):
                missing[e] = where
            else:
                unknown.append(e)
        return known, missing, unknown


def missing_text(missing):
    return "not extracted by the tool: " + ", ".join(f"{short(i)} (defined at {w})" for i, w in missing.items())


# ---------------------------------------------------------------- checks

def check_query(tg, repo, check, ids):
    expect = check["expect"]
    known, missing, unknown = ids.split(expect)
    rc, out, err, _ = run([tg, "query", check["question"], "--root", repo, "--json",
                           "--top-k", str(TOP_K)])
    data = parse_json(out)
    res = {"unknown": unknown, "not_extracted": missing}
    if rc != 0 or not isinstance(data, dict) or "results" not in data:
        res.update(status="error", detail=f"query exit {rc}: {(err or out).strip()[:300]}")
        return res
    got = [r["id"] for r in data["results"]][:TOP_K]
    res["got"] = got
    want = {norm(e) for e in expect}
    rank = next((i for i, g in enumerate(got, 1) if norm(g) in want), None)
    if not known and not missing:
        res.update(status="unknown id", detail="no expected id is in the graph: " + ", ".join(unknown))
    elif rank:
        res.update(status="pass", rank=rank, detail=f"rank {rank} ({short(got[rank - 1])})")
    else:
        res.update(status="fail", detail="not in top 5: got " + ", ".join(short(g) for g in got))
    if missing:
        res["detail"] += "; " + missing_text(missing)
    if unknown and res["status"] != "unknown id":
        res["detail"] += "; unknown id: " + ", ".join(unknown)
    return res


def check_trace(tg, repo, check, ids):
    src, dst = check["from"], check["to"]
    known, missing, unknown = ids.split([src, dst])
    res = {"unknown": unknown, "not_extracted": missing}
    if unknown:
        res.update(status="unknown id", detail="not in the graph: " + ", ".join(unknown))
        return res
    if missing:
        res.update(status="fail", detail="no path: " + missing_text(missing))
        return res
    attempts = []
    for a in ids.variants(src):
        for b in ids.variants(dst):
            rc, out, err, _ = run([tg, "trace", a, b, "--root", repo, "--json"])
            data = parse_json(out)
            attempts.append({"from": a, "to": b, "rc": rc, "stderr": err.strip()[:300],
                             "found": data.get("found") if isinstance(data, dict) else None})
            if rc == 0 and isinstance(data, dict) and data.get("found"):
                path = [p["id"] for p in data.get("path", [])]
                expected = [norm(p) for p in check.get("path", [])]
                same = " (the expected path)" if [norm(p) for p in path] == expected else ""
                res.update(status="pass", path=path, attempts=attempts,
                           detail=f"path of {len(path) - 1} hops{same}: "
                                  + " -> ".join(short(p) for p in path))
                return res
            if rc == 0 and isinstance(data, dict):
                res["reachable"] = data.get("reachable")
    res["attempts"] = attempts
    errors = [a for a in attempts if a["rc"] != 0]
    if errors and len(errors) == len(attempts):
        res.update(status="error", detail=f"trace exit {errors[0]['rc']}: {errors[0]['stderr']}")
    else:
        res.update(status="fail", detail=f"no path (from reaches {res.get('reachable', '?')} symbols)")
    return res


def read_plan(repo):
    path = os.path.join(repo, ".tldrgraph", "plan.json")
    data = parse_json(open(path).read()) if os.path.exists(path) else None
    if not isinstance(data, dict):
        return None
    return [c["id"] for c in data.get("candidates", [])]


def check_plan(repo, check, ids):
    core = check["core"]
    known, missing, unknown = ids.split(core)
    known = [c for c in core if c in known or c in missing]   # a missed node counts as missed
    candidates = read_plan(repo)
    res = {"unknown": unknown, "not_extracted": missing}
    if candidates is None:
        res.update(status="error", detail="no .tldrgraph/plan.json")
        return res
    have = {norm(c) for c in candidates}
    covered = [c for c in known if norm(c) in have]
    missed = [c for c in known if norm(c) not in have]
    share = len(covered) / len(known) if known else 0.0
    res.update(candidates=len(candidates), covered=covered, missed=missed, cover=share)
    if not known:
        res.update(status="unknown id", detail="no core id is in the graph")
        return res
    res["status"] = "pass" if share >= check["min_cover"] else "fail"
    res["detail"] = (f"covered {len(covered)}/{len(known)} ({share:.0%}, need "
                     f"{check['min_cover']:.0%}) of {len(candidates)} candidates"
                     + ("; missed " + ", ".join(short(m) for m in missed) if missed else ""))
    if missing:
        res["detail"] += "; " + missing_text(missing)
    if unknown:
        res["detail"] += "; unknown id: " + ", ".join(unknown)
    return res


def dead_findings(tg, repo, cache):
    if "dead" not in cache:
        rc, out, err, _ = run([tg, "dead-code", "--root", repo, "--json"])
        data = parse_json(out)
        cache["dead"] = (rc, data, err)
    return cache["dead"]


def check_not_dead(tg, repo, check, ids, cache):
    symbols = check["symbols"]
    known, missing, unknown = ids.split(symbols)
    rc, data, err = dead_findings(tg, repo, cache)
    res = {"unknown": unknown, "not_extracted": missing}
    if rc != 0 or not isinstance(data, dict):
        res.update(status="error", detail=f"dead-code exit {rc}: {err.strip()[:300]}")
        return res
    dead = {}
    for f in data.get("findings", []):
        dead.setdefault(norm(f["id"]), f)
    flagged = [(s, dead[norm(s)]) for s in known if norm(s) in dead]
    res["flagged"] = [{"id": s, "confidence": f.get("confidence"), "reason": f.get("reason")}
                      for s, f in flagged]
    if not known:
        res.update(status="unknown id", detail="no symbol is in the graph")
        return res
    if flagged:
        res.update(status="fail", detail=f"{len(flagged)}/{len(known)} reported dead: " + ", ".join(
            f"{short(s)} ({f.get('confidence')})" for s, f in flagged))
    else:
        res.update(status="pass", detail=f"none of {len(known)} reported dead "
                                         f"({data.get('count', len(data.get('findings', [])))} findings in all)")
    if missing:
        res["detail"] += "; " + missing_text(missing)
    if unknown:
        res["detail"] += "; unknown id: " + ", ".join(unknown)
    return res


def short(node_id):
    """`path::Qual.name` -> `file::Qual.name` without directories, for the tables."""
    path, sep, rest = node_id.partition("::")
    return os.path.basename(path) + sep + rest if sep else node_id


# ---------------------------------------------------------------- one corpus

def run_corpus(bin_dir, answers, corpus_name, corpus, mode):
    tg = os.path.join(bin_dir, "tldrgraph")
    name = answers["corpus"]
    config = os.path.join(HERE, f"{name}.layers.config.yaml")
    result = {"corpus": name, "corpus_entry": corpus_name, "source": corpus["path"], "mode": mode}
    with tempfile.TemporaryDirectory(prefix=f"answers-{name}-") as tmp:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(corpus["path"], repo, symlinks=True,
                        ignore=shutil.ignore_patterns(".tldrgraph"))
        os.makedirs(os.path.join(repo, ".tldrgraph"))
        if os.path.exists(config):
            shutil.copy(config, os.path.join(repo, ".tldrgraph", "layers.config.yaml"))
        else:
            result["warning"] = f"no layer config {config}"
        scratch = os.path.join(tmp, "scratch")
        os.makedirs(scratch)
        written = {}
        intents_file = os.path.join(HERE, "intents", f"{name}.json")
        if mode == "agent" and os.path.exists(intents_file):
            with open(intents_file) as f:
                written = {e["id"]: e["intent"] for e in json.load(f)}
        log, state, seconds, n_intents = drive_init(tg, repo, mode, scratch, written)
        result.update(init_log=log, init_seconds=round(seconds, 2), intents_applied=n_intents,
                      final_state={k: v for k, v in (state or {}).items() if k != "batch"})
        ids = Ids(repo)
        result["graph_nodes"] = sum(len(v) for v in ids.by_norm.values())
        cache = {}
        checks = []
        for check in answers["checks"]:
            kind = check["kind"]
            t0 = time.monotonic()
            try:
                if kind == "query":
                    res = check_query(tg, repo, check, ids)
                elif kind == "trace":
                    res = check_trace(tg, repo, check, ids)
                elif kind == "plan_core":
                    res = check_plan(repo, check, ids)
                elif kind == "not_dead":
                    res = check_not_dead(tg, repo, check, ids, cache)
                else:
                    res = {"status": "error", "detail": f"unknown check kind {kind!r}", "unknown": []}
            except subprocess.TimeoutExpired as e:
                res = {"status": "error", "detail": f"timeout: {e}", "unknown": []}
            res.update(id=check["id"], kind=kind + (" (exact)" if check.get("exact") else ""),
                       seconds=round(time.monotonic() - t0, 2))
            checks.append(res)
        result["checks"] = checks
        dead = cache.get("dead")
        if dead and isinstance(dead[1], dict):
            result["dead_code_findings"] = dead[1].get("count", len(dead[1].get("findings", [])))
        cands = read_plan(repo)
        result["plan_candidates"] = len(cands) if cands is not None else None
    return result


# ---------------------------------------------------------------- report

def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def report(results):
    lines = []
    total_pass = total_scored = 0
    unknown_lines, missing_lines = [], []
    for r in results:
        lines.append(f"\n### {r['corpus']} (mode {r['mode']})\n")
        steps = ", ".join(f"{e['status']}" + (f" [{e['note']}]" if e.get("note") else "")
                          for e in r["init_log"])
        lines.append(f"init: {steps}; {r['init_seconds']} s; {r['graph_nodes']} nodes; "
                     f"{r['plan_candidates']} plan candidates; intents applied: {r['intents_applied']}; "
                     f"dead-code findings: {r.get('dead_code_findings')}\n")
        lines.append("| check | kind | result | detail |")
        lines.append("|---|---|---|---|")
        for c in r["checks"]:
            lines.append(f"| {c['id']} | {c['kind']} | {c['status']} | {md_cell(c['detail'])} |")
            for u in c.get("unknown", []):
                unknown_lines.append(f"- {r['corpus']} {c['id']}: `{u}`")
            for m, where in c.get("not_extracted", {}).items():
                missing_lines.append(f"- {r['corpus']} {c['id']}: `{m}` (defined at {where})")
        scored = [c for c in r["checks"] if c["status"] != "unknown id"]
        passed = sum(1 for c in scored if c["status"] == "pass")
        total_pass += passed
        total_scored += len(scored)
        plan = [c for c in r["checks"] if c["kind"].startswith("plan_core") and "cover" in c]
        plan_text = "; ".join(f"plan_core coverage {len(c['covered'])}/{len(c['covered']) + len(c['missed'])}"
                              f" ({c['cover']:.0%})" for c in plan)
        lines.append(f"\n{r['corpus']}: {passed} of {len(scored)} checks hold"
                     + (f"; {plan_text}" if plan_text else ""))
    by_mode = {}
    for r in results:
        m = by_mode.setdefault(r["mode"], [0, 0])
        for c in r["checks"]:
            if c["status"] != "unknown id":
                m[1] += 1
                m[0] += c["status"] == "pass"
    lines.append("")
    for mode, (p, n) in by_mode.items():
        lines.append(f"**Total (mode {mode}): {p} of {n} checks hold ({(100 * p / n) if n else 0:.0f}%)**")
        cover = [f"{r['corpus']} {len(c['covered'])}/{len(c['covered']) + len(c['missed'])} ({c['cover']:.0%})"
                 for r in results if r["mode"] == mode
                 for c in r["checks"] if c["kind"].startswith("plan_core") and "cover" in c]
        if cover:
            lines.append(f"plan_core coverage (mode {mode}): " + ", ".join(cover) + "  ")
    if unknown_lines:
        lines.append("\nUnknown ids (expected ids that are not nodes of the graph: benchmark spelling problems):")
        lines.extend(sorted(set(unknown_lines)))
    else:
        lines.append("\nUnknown ids: none")
    if missing_lines:
        lines.append("\nExpected symbols defined in the source but absent from the graph "
                     "(the tool did not extract them; counted against the tool):")
        lines.extend(sorted(set(missing_lines)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bin_dir")
    ap.add_argument("--corpora-tsv")
    ap.add_argument("--mode", choices=["off", "doc", "agent", "both"], default="off")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    bin_dir = os.path.abspath(args.bin_dir)
    tg = os.path.join(bin_dir, "tldrgraph")
    if not os.access(tg, os.X_OK):
        sys.exit(f"no executable {tg}")
    version = run([tg, "--version"])[1].strip()
    head = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": f"{platform.node()} {platform.platform()} {platform.machine()}, "
                       f"{os.cpu_count()} cpus, python {platform.python_version()}",
            "bin_dir": bin_dir, "version": version, "answers_commit": head, "mode": args.mode}
    print(f"# Answer benchmark\n\ndate: {meta['date']}  \nmachine: {meta['machine']}  \n"
          f"binaries: {bin_dir} ({version})  \nanswers at: {head}  \nmode: {args.mode}")
    corpora = read_corpora(args.corpora_tsv)
    modes = ["off", "agent"] if args.mode == "both" else [args.mode]
    results = []
    for answers in read_answers(args.only):
        corpus_name, corpus = find_corpus(answers["corpus"], corpora)
        if not corpus:
            print(f"\n{answers['corpus']}: not in the corpora list, skipped", file=sys.stderr)
            continue
        for mode in modes:
            print(f"running {answers['corpus']} ({mode})...", file=sys.stderr, flush=True)
            results.append(run_corpus(bin_dir, answers, corpus_name, corpus, mode))
    print(report(results))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
