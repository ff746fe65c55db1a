"""Random edits of a copy of a corpus; after each, the patch of every stage that applies
patches (tg-extract --patch | tg-classify | tg-plan | tg-enrich), applied to that stage's
previous output by the applier below (written apart from the stages), must be the bytes the
same stage writes on the whole stream of a fresh copy, and the artifacts must be that copy's
(issue 22: stages on patches).

Usage: python3 bench/patch_stages.py CORPUS_DIR WORK_DIR EDITS SEED [MODE]
(BIN names the directory of the binaries; default target/release). The edits are those of
bench/splice_edits.py (MODE `lines` or `append`). The layers config is a generic one (tests,
docs and examples apart from the rest, which may not depend on them) so that layers, marks
and the plan are exercised. A stage that refuses a patch (exit 76) is run on the whole stream
again, as the wrapper would, and counted. Prints the counts; stops at the first mismatch,
keeping both sides beside WORK_DIR.
"""
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splice_edits  # noqa: E402

BIN = os.environ.get("BIN", os.path.abspath("target/release"))
STAGES = ["tg-classify", "tg-plan", "tg-enrich"]
ARTIFACTS = ["layers.yaml", "symbols.md", "plan.json", "intents.ndjson"]
CONFIG = """version: 1
default_layer: core
layers:
  - id: core
    name: Core
    order: 1
    may_depend_on: []
  - id: tests
    name: Tests
    order: 2
    paths: ["**/test/**", "**/tests/**", "**/test_*", "**/*_test.*", "**/testing/**"]
    may_depend_on: [core]
  - id: docs
    name: Docs and examples
    order: 3
    paths: ["docs/**", "doc/**", "examples/**", "Documentation/**"]
    may_depend_on: [core]
"""
EDGE_KINDS = ["contains", "calls", "imports", "includes", "inherits"]


def run(name, work, data=None, *args):
    done = subprocess.run(
        [os.path.join(BIN, name), "--root", ".", *args], cwd=work, input=data, capture_output=True
    )
    return done.returncode, done.stdout, done.stderr.decode()


def whole(work):
    """Each stage's output on the whole stream of `work`."""
    code, stream, err = run("tg-extract", work, None, ".")
    if code != 0:
        sys.exit(f"tg-extract failed: {err}")
    outputs = []
    for stage in STAGES:
        code, stream, err = run(stage, work, stream)
        if code != 0:
            sys.exit(f"{stage} failed on a whole stream: {err}")
        outputs.append(stream)
    return outputs


def apply_patch(base, patch):
    """The patch applied as its record's doc says (tests/patch.rs, again in Python)."""
    lines = patch.split(b"\n")[:-1]
    header = json.loads(lines[0])
    result = header.pop("patch")["result"]
    sections, current = {}, None
    for line in lines[1:]:
        if line.startswith(b'{"type":"patch",'):
            current = json.loads(line)["section"]
            sections[current] = []
        else:
            sections[current].append(line)
    removed = {}
    for line in sections["removed"]:
        removed[line] = removed.get(line, 0) + 1
    base_lines = base.split(b"\n")[:-1]
    base_header = json.loads(base_lines[0])
    base_header.pop("fingerprint", None)
    assert base_header == header, "the patch's header is the base's"
    base_header["fingerprint"] = result
    blocks, edges, path = {}, [], None
    for line in base_lines[1:]:
        kind = json.loads(line)["type"]
        if kind not in ("file", "node", "edge"):
            break
        if kind == "file":
            path = json.loads(line)["path"]
        if removed.get(line, 0):
            removed[line] -= 1
            continue
        if kind == "edge":
            edges.append(line)
        else:
            blocks.setdefault(path, []).append(line)
    assert all(n == 0 for n in removed.values()), "every removed line was in the base"
    for line in sections["added"]:
        record = json.loads(line)
        if record["type"] == "edge":
            edges.append(line)
            continue
        if record["type"] == "file":
            path = record["path"]
        blocks.setdefault(path, []).append(line)

    def key(line):
        edge = json.loads(line)
        return (edge["src"].encode(), EDGE_KINDS.index(edge["kind"]), edge["dst"].encode())

    edges.sort(key=key)
    out = [json.dumps(base_header, separators=(",", ":"), ensure_ascii=False).encode()]
    for path in sorted(blocks, key=lambda p: p.encode()):
        out.extend(blocks[path])
    out.extend(edges)
    out.extend(sections["tail"])
    return b"\n".join(out) + b"\n"


def artifacts(work):
    store = os.path.join(work, ".tldrgraph")
    found = {}
    for name in ARTIFACTS:
        path = os.path.join(store, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                found[name] = f.read()
    return found


def main():
    corpus, work, edits, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "lines"
    rng = random.Random(seed)
    mirror = work + ".whole"
    for target in (work, mirror):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(corpus, target, ignore=shutil.ignore_patterns(".tldrgraph", ".git"))
        os.makedirs(os.path.join(target, ".tldrgraph"))
        with open(os.path.join(target, ".tldrgraph", "layers.config.yaml"), "w") as f:
            f.write(CONFIG)
    files = sorted(
        os.path.join(d, f)
        for d, _, names in os.walk(work)
        if ".tldrgraph" not in d
        for f in names
        if f.endswith((".py", ".rs", ".c", ".h", ".ts", ".tsx", ".js", ".mjs"))
    )
    outputs = whole(work)
    counts = {"patched": 0, "whole stream": 0, "refused": 0}
    appended = []
    for n in range(edits):
        if mode == "append":
            path = splice_edits.append(rng, files, appended)
            if path is None:
                continue
        else:
            path = rng.choice(files)
            if not splice_edits.edit(rng, path):
                continue
        shutil.copyfile(path, os.path.join(mirror, os.path.relpath(path, work)))
        code, stream, err = run("tg-extract", work, None, "--patch", ".")
        if code != 0:
            sys.exit(f"tg-extract --patch failed: {err}")
        is_patch = b'"patch":{' in stream.split(b"\n", 1)[0]
        written = []
        for stage in STAGES:
            code, out, err = run(stage, work, stream)
            if code == 76 and is_patch:
                counts["refused"] += 1
                written = None
                break
            if code != 0:
                sys.exit(f"edit {n}: {stage} failed: {err}")
            written.append(out)
            stream = out
        expected = whole(mirror)
        if written is None:
            # As the wrapper does: the whole stream through every stage.
            outputs = whole(work)
        elif is_patch:
            counts["patched"] += 1
            outputs = [apply_patch(old, patch) for old, patch in zip(outputs, written)]
        else:
            counts["whole stream"] += 1
            outputs = written
        for stage, got, want in zip(STAGES, outputs, expected):
            if got != want:
                for suffix, data in ((".patched", got), (".expected", want)):
                    with open(f"{work}.{stage}{suffix}", "wb") as f:
                        f.write(data)
                sys.exit(f"edit {n} of {os.path.relpath(path, work)}: {stage} differs {counts}")
        if artifacts(work) != artifacts(mirror):
            sys.exit(f"edit {n} of {os.path.relpath(path, work)}: artifacts differ {counts}")
    print(counts)


if __name__ == "__main__":
    main()
