"""Random edits of a copy of a corpus; after each, tg-extract's incremental output must be the
bytes of a --no-cache run (issue 22: the splice of an edit inside bodies, the cache's delta).

Usage: python3 bench/splice_edits.py CORPUS_DIR WORK_DIR EDITS SEED [MODE]
(TG_EXTRACT names the binary; default target/release/tg-extract). Sources are Python, Rust,
C, TypeScript and JavaScript files. In MODE `lines` (the default) each edit picks a source file and an indented line at random and inserts a blank
line, duplicates the line, deletes it, or inserts a copy of another indented line of the file.
In MODE `append` each edit appends a function to a file's end, named after a call written
somewhere in the corpus (so other files may now resolve to it), or takes an earlier appended
function away again. Prints how many runs spliced and how many resolved everything; stops at
the first mismatch, keeping both outputs beside WORK_DIR.
"""
import re
import os
import random
import shutil
import subprocess
import sys

EXTRACT = os.environ.get("TG_EXTRACT", os.path.abspath("target/release/tg-extract"))


def run(work, *args):
    done = subprocess.run([EXTRACT, ".", *args], cwd=work, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"tg-extract failed: {done.stderr.decode()}")
    return done.stdout, done.stderr.decode()


def edit(rng, path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    body = [i for i, line in enumerate(lines) if line.startswith((" ", "\t")) and line.strip()]
    if not body:
        return False
    i = rng.choice(body)
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    op = rng.choice(["blank", "dup", "del", "copy"])
    if op == "blank":
        lines.insert(i, "")
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "del":
        del lines[i]
    else:
        lines.insert(i, indent + lines[rng.choice(body)].strip())
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\n".join(lines))
    return True


CALLED = re.compile(rb"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
KEYWORDS = {b"if", b"for", b"while", b"switch", b"return", b"sizeof", b"print", b"match", b"def", b"fn"}
DEFINITION = {
    ".py": "\n\ndef {name}(*args, **kwargs):\n    return None\n",
    ".rs": "\npub fn {name}() {{}}\n",
    ".c": "\nint {name}(void)\n{{\n\treturn 0;\n}}\n",
    ".h": "\nint {name}(void);\n",
    ".ts": "\nexport function {name}(): void {{}}\n",
    ".tsx": "\nexport function {name}(): void {{}}\n",
    ".js": "\nfunction {name}() {{}}\n",
    ".mjs": "\nexport function {name}() {{}}\n",
}


def append(rng, files, appended):
    """Appends a function named after a call somewhere in the corpus, or undoes an append."""
    if appended and rng.random() < 0.4:
        path, before = appended.pop(rng.randrange(len(appended)))
        with open(path, "wb") as f:
            f.write(before)
        return path
    path = rng.choice(files)
    with open(rng.choice(files), "rb") as f:
        names = [n for n in CALLED.findall(f.read()) if n not in KEYWORDS]
    if not names:
        return None
    name = rng.choice(names).decode()
    with open(path, "rb") as f:
        before = f.read()
    definition = DEFINITION[os.path.splitext(path)[1]].format(name=name)
    with open(path, "wb") as f:
        f.write(before + definition.encode())
    appended.append((path, before))
    return path


def main():
    corpus, work, edits, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "lines"
    rng = random.Random(seed)
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(corpus, work, ignore=shutil.ignore_patterns(".tldrgraph", ".git"))
    files = sorted(
        os.path.join(d, f)
        for d, _, names in os.walk(work)
        for f in names
        if f.endswith((".py", ".rs", ".c", ".h", ".ts", ".tsx", ".js", ".mjs"))
    )
    run(work)
    counts = {"spliced": 0, "resolved all": 0}
    appended = []
    for n in range(edits):
        if mode == "append":
            path = append(rng, files, appended)
            if path is None:
                continue
        else:
            path = rng.choice(files)
            if not edit(rng, path):
                continue
        incremental, stderr = run(work)
        clean, _ = run(work, "--no-cache")
        counts["spliced" if "spliced" in stderr else "resolved all"] += 1
        if incremental != clean:
            for suffix, data in ((".incremental", incremental), (".clean", clean)):
                with open(work + suffix, "wb") as f:
                    f.write(data)
            sys.exit(f"edit {n} of {os.path.relpath(path, work)}: outputs differ {counts}")
    print(counts)


if __name__ == "__main__":
    main()
