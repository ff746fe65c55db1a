"""Writes REPO/.tldrgraph/layers.config.yaml the way the original tool's driver designs layers:
one layer per top-level directory holding source files (the largest five by file count),
plus a catch-all. `--format original` writes the original tool's format (path_regex rules),
`--format native` ours (paths globs, default layer `shared`).
  usage: python3 bench/layers_for.py REPO [--format original|native]"""
import os
import sys

SOURCE = ('.py', '.pyi', '.c', '.h', '.rs')


def top_dirs(repo):
    counts = []
    for d in sorted(os.listdir(repo)):
        path = os.path.join(repo, d)
        if d.startswith('.') or not os.path.isdir(path):
            continue
        n = sum(1 for _, _, files in os.walk(path) for f in files if f.endswith(SOURCE))
        if n:
            counts.append((-n, d))
    return [d for _, d in sorted(counts)[:5]]


def main():
    repo = sys.argv[1]
    fmt = sys.argv[sys.argv.index('--format') + 1] if '--format' in sys.argv else 'original'
    dirs = sorted(top_dirs(repo))
    if fmt == 'original':
        lines = ["version: 1", "utility_id: shared", "layers:"]
        for i, d in enumerate(dirs, 1):
            lines += [f"- id: l{i}", f"  name: 'Layer {i}: {d}'", f"  order: {i}", "  rules:",
                      f"  - path_regex: ^{d}/"]
        lines += ["- id: shared", "  name: Shared", f"  order: {len(dirs) + 1}"]
    else:
        lines = ["version: 1", "default_layer: shared", "layers:"]
        for i, d in enumerate(dirs, 1):
            lines += [f"  - id: l{i}", f"    name: '{d}'", f"    order: {i}", f"    paths: ['{d}/**']"]
        lines += ["  - id: shared", "    name: Shared", f"    order: {len(dirs) + 1}"]
    os.makedirs(os.path.join(repo, ".tldrgraph"), exist_ok=True)
    with open(os.path.join(repo, ".tldrgraph", "layers.config.yaml"), "w") as out:
        out.write("\n".join(lines) + "\n")


main()
