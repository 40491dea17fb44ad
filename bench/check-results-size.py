#!/usr/bin/env python3
"""Checks that docs/results stays within its budget in git: 12 MB (12,000,000 bytes) in all, and no run
keeps a summary.json that bench/results-pack.py would slim (docs/results/README.md says what a run keeps).

Counts the files git tracks under docs/results (the work tree when git is not there: every file but the
git-ignored raw/ and intervals.tar.xz). Exits 1 over the budget, with the largest runs, or on an unslimmed
summary.json, naming the command that slims it.

  python3 bench/check-results-size.py                   # the check (CI)
  python3 bench/check-results-size.py --top 20          # also list the 20 largest runs
"""
import argparse
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(ROOT, "docs", "results")
LIMIT = 12_000_000


def packer():
    spec = importlib.util.spec_from_file_location("results_pack", os.path.join(ROOT, "bench", "results-pack.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tracked():
    """Paths (relative to ROOT) of the files under docs/results that git tracks, or that the tree holds."""
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "docs/results"], capture_output=True)
    if r.returncode == 0 and r.stdout:
        return [p for p in r.stdout.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]
    out = []
    for root, dirs, files in os.walk(RESULTS):
        dirs[:] = [d for d in dirs if not (os.path.dirname(root) == RESULTS and d == "raw")]
        out += [os.path.relpath(os.path.join(root, f), ROOT) for f in files if f != "intervals.tar.xz"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=0, help="list the N largest runs")
    ap.add_argument("--limit", type=int, default=LIMIT, help=f"bytes (default {LIMIT:,})")
    a = ap.parse_args()
    rp = packer()
    per_run = {}
    unslimmed = []
    total = 0
    for rel in tracked():
        size = os.path.getsize(os.path.join(ROOT, rel))
        total += size
        parts = rel.split("/")
        run = parts[2] if len(parts) > 3 else "(index)"
        per_run[run] = per_run.get(run, 0) + size
        if parts[-1] == "summary.json" and size > rp.SLIM_OVER and run not in rp.WHOLE:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                if rp.slim_text(f.read()) is not None:
                    unslimmed.append(rel)
    largest = sorted(per_run.items(), key=lambda kv: -kv[1])
    failed = False
    if total > a.limit:
        failed = True
        print(f"check-results-size: docs/results holds {total:,} bytes in git, over {a.limit:,}; largest runs:",
              *(f"{size:>10,}  {run}" for run, size in largest[:10]), sep="\n  ", file=sys.stderr)
    for rel in unslimmed:
        failed = True
        print(f"check-results-size: {rel}: its runs belong in raw.tar.xz "
              f"(python3 bench/results-pack.py {'/'.join(rel.split('/')[:3])})",
              file=sys.stderr)
    for run, size in largest[:a.top]:
        print(f"{size:>10,}  {run}")
    if failed:
        sys.exit(1)
    print(f"check-results-size: docs/results holds {total:,} bytes in git ({len(per_run) - ('(index)' in per_run)} runs), "
          f"within {a.limit:,}")


if __name__ == "__main__":
    main()
