#!/usr/bin/env python3
"""Rust test code and tests of tg-extract streams, against what rustc and libtest say.

usage: rust_test_code.py CRATE STREAM [CRATE STREAM ...] [--features F] [--max-wrong-files N]

For each crate (a directory holding Cargo.toml and src/lib.rs), on a copy of it (cargo writes
target/ and Cargo.lock, which must not land in the corpus):
- `cargo check --lib` and `cargo check --lib --profile test` write rustc's dep-info: the source files
  each build compiled. A file only the test build compiles is test code (a `#[cfg(test)] mod x;`
  and what it declares); a file both compile is product code, though it may hold test items.
- `cargo test --lib -- --list` is libtest's own list of the crate's unit tests (when the test build
  compiles with this toolchain; some crates' `#![deny]` lints break it, and then only roles are judged).

Judged against the stream (its paths relative to the crate, or to a directory above it: the
directory holding src/lib.rs is taken as the crate's):
  files      a test-only file is right when all its nodes (other than the module) have role `test`;
             a file both builds compile is right when some node has role `product`
  tests      the functions marked `test_case` in the files the test build compiles, named as cargo
             names them (module path from src/, then the qualified name), against libtest's list:
             recall over libtest's tests; the marked functions libtest does not list are printed
             (tests under a `cfg` this build leaves out)
  helpers    the functions of role `test` without `test_case`: what `impact` no longer lists as tests

One JSON line per crate goes to stdout, a report to stderr; exit 1 when more files than
--max-wrong-files (0) are wrong or a listed test is missed, 2 when a crate cannot be built at all.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile


def dep_info_files(crate, name):
    """The .rs sources of each dep-info file cargo wrote for the crate's library, as sets."""
    sets = []
    for path in glob.glob(os.path.join(crate, "target", "debug", "deps", f"{name}-*.d")):
        with open(path) as f:
            first = f.readline()
        deps = first.split(":", 1)[1].split() if ":" in first else []
        sets.append({os.path.relpath(p, crate) if os.path.isabs(p) else p for p in deps if p.endswith(".rs")})
    return sets


def cargo(crate, command, *args):
    # The target directory named, so that a CARGO_TARGET_DIR set outside does not move dep-info.
    target = ["--target-dir", os.path.join(crate, "target")]
    return subprocess.run(["cargo", command, *target, *args], cwd=crate, capture_output=True, text=True)


def build_truth(crate, features):
    """(product files, test-only files, libtest's test names or None)."""
    name = crate_name(crate)
    feature_args = ["--features", features] if features else []
    checked = cargo(crate, "check", "--lib", "-q", *feature_args)
    lib = dep_info_files(crate, name)
    if checked.returncode != 0 or len(lib) != 1:
        raise RuntimeError(f"cargo check --lib failed:\n{checked.stderr[-2000:]}")
    cargo(crate, "check", "--lib", "--profile", "test", "-q", *feature_args)
    both = dep_info_files(crate, name)
    test = max(both, key=len)
    listed = cargo(crate, "test", "--lib", "-q", *feature_args, "--", "--list")
    tests = None
    if listed.returncode == 0:
        tests = {line[: -len(": test")] for line in listed.stdout.splitlines() if line.endswith(": test")}
    return lib[0], test - lib[0], tests


def crate_name(crate):
    with open(os.path.join(crate, "Cargo.toml")) as f:
        in_package = False
        for line in f:
            line = line.strip()
            if line.startswith("["):
                in_package = line == "[package]"
            elif in_package and line.startswith("name") and "=" in line:
                return line.split("=", 1)[1].strip().strip('"').replace("-", "_")
    raise RuntimeError("no [package] name in Cargo.toml")


def stream_nodes(stream):
    nodes = []
    with open(stream) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") == "node":
                nodes.append(record)
    return nodes


def runner_name(node, root):
    """cargo's name for a unit test: the module path from src/, then the qualified name."""
    rel = node["file"][len(root):].lstrip("/") if root else node["file"]
    if not rel.startswith("src/") or not rel.endswith(".rs"):
        return None
    module = rel[len("src/") : -len(".rs")].split("/")
    if module[-1] in ("lib", "mod", "main"):
        module.pop()
    qualname = node["id"].split("::", 1)[1].split("#")[0]
    return "::".join(module + [qualname])


def judge(crate_dir, stream, features):
    with tempfile.TemporaryDirectory(prefix="tg-rust-tests.") as tmp:
        copy = os.path.join(tmp, "crate")
        shutil.copytree(crate_dir, copy, ignore=shutil.ignore_patterns("target"))
        product, test_only, tests = build_truth(copy, features)
    nodes = [n for n in stream_nodes(stream) if n["kind"] != "module"]
    # The stream's paths may start with the crate's directory (tg-extract run from above it).
    root = ""
    if nodes and not any(n["file"].startswith("src/") for n in nodes):
        root = os.path.commonpath([n["file"] for n in nodes])
        while root and not any(n["file"] == f"{root}/src/lib.rs" for n in nodes):
            root = os.path.dirname(root)
    rel = lambda n: n["file"][len(root):].lstrip("/") if root else n["file"]
    roles = {}
    for n in nodes:
        roles.setdefault(rel(n), set()).add(n.get("role", "product"))
    wrong = []
    judged = 0
    for path in sorted(product | test_only):
        if path not in roles:
            continue
        judged += 1
        ok = roles[path] == {"test"} if path in test_only else "product" in roles[path]
        if not ok:
            wrong.append((path, "test" if path in test_only else "product", sorted(roles[path])))
    compiled = product | test_only
    marked = {
        runner_name(n, root)
        for n in nodes
        if n["kind"] == "function" and n.get("test_case") and rel(n) in compiled
    } - {None}
    helpers = sum(1 for n in nodes if n["kind"] in ("function", "method") and n.get("role") == "test" and not n.get("test_case"))
    result = {
        "crate": os.path.basename(os.path.normpath(crate_dir)),
        "files_judged": judged,
        "test_only_files": len(test_only),
        "files_wrong": len(wrong),
        "libtest_tests": None if tests is None else len(tests),
        "tests_marked": len(marked),
        "tests_found": None if tests is None else len(tests & marked),
        "helpers": helpers,
    }
    print(f"{result['crate']}: {judged} files judged, {len(test_only)} test-only by rustc, {len(wrong)} wrong", file=sys.stderr)
    for path, want, got in wrong:
        print(f"  {path}: rustc says {want}, the stream {got}", file=sys.stderr)
    if tests is None:
        print("  libtest: the test build does not compile here; tests not judged", file=sys.stderr)
    else:
        print(f"  libtest lists {len(tests)}; {len(tests & marked)} of them marked test_case; {len(marked - tests)} marked but not listed; {helpers} helpers", file=sys.stderr)
        for name in sorted(tests - marked)[:10]:
            print(f"  missed {name}", file=sys.stderr)
        for name in sorted(marked - tests)[:10]:
            print(f"  marked, not listed (a cfg this build leaves out?) {name}", file=sys.stderr)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", nargs="+", help="CRATE STREAM pairs")
    parser.add_argument("--features", default="")
    parser.add_argument("--max-wrong-files", type=int, default=0)
    args = parser.parse_args()
    if len(args.pairs) % 2:
        parser.error("give CRATE STREAM pairs")
    failed = False
    for crate, stream in zip(args.pairs[::2], args.pairs[1::2]):
        try:
            result = judge(crate, stream, args.features)
        except (RuntimeError, OSError) as err:
            print(f"{crate}: {err}", file=sys.stderr)
            sys.exit(2)
        print(json.dumps(result))
        missed = result["libtest_tests"] is not None and result["tests_found"] < result["libtest_tests"]
        failed |= result["files_wrong"] > args.max_wrong_files or missed
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
