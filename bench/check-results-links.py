#!/usr/bin/env python3
"""Checks that the docs' references into docs/results resolve, and that the index lists every run.

Reads README.md, CHANGELOG.md, docs/*.md and every *.md under docs/results. A reference is a markdown
link [text](path) or a code span `docs/results/...` / `results/...`; one that points into docs/results
must name a file or directory that exists (raw files live in each run's raw.tar.xz: link the archive or
the run's report). Exits 1 with the list of broken references. Run by .ci/run.

  python3 bench/check-results-links.py
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(ROOT, "docs", "results")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`((?:docs/)?results/[A-Za-z0-9][^`\s]*)`")


def markdown_files():
    files = [os.path.join(ROOT, f) for f in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(ROOT, f))]
    files += [os.path.join(ROOT, "docs", f) for f in sorted(os.listdir(os.path.join(ROOT, "docs"))) if f.endswith(".md")]
    for root, _, names in os.walk(RESULTS):
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".md")]
    return files


def targets(md, text):
    """(line number, reference, resolved path) of each reference of md that points into docs/results."""
    base = os.path.dirname(md)
    for n, line in enumerate(text.splitlines(), 1):
        for m in LINK.finditer(line):
            ref = m.group(1).split("#")[0]
            if not ref or re.match(r"[a-z]+:", ref):
                continue
            yield n, m.group(1), os.path.normpath(os.path.join(base, ref))
        for m in CODE.finditer(line):
            ref = m.group(1).rstrip(".,;:")
            if "*" in ref or "<" in ref or "{" in ref:
                continue  # a pattern, not a path
            path = os.path.join(ROOT, ref) if ref.startswith("docs/") else os.path.join(ROOT, "docs", ref)
            yield n, ref, os.path.normpath(path)


def main():
    broken = []
    count = 0
    for md in markdown_files():
        with open(md, encoding="utf-8") as f:
            text = f.read()
        for n, ref, path in targets(md, text):
            if not (path + os.sep).startswith(RESULTS + os.sep):
                continue
            count += 1
            if not os.path.exists(path):
                broken.append(f"{os.path.relpath(md, ROOT)}:{n}: {ref}")
    index = os.path.join(RESULTS, "README.md")
    listed = open(index, encoding="utf-8").read() if os.path.exists(index) else ""
    for run in sorted(os.listdir(RESULTS)):
        if os.path.isdir(os.path.join(RESULTS, run)) and f"`{run}`" not in listed:
            broken.append(f"docs/results/README.md: run {run} is not in the index (python3 bench/results-pack.py --index)")
    if broken:
        print("check-results-links: broken references into docs/results:", *broken, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print(f"check-results-links: {count} references into docs/results resolve; the index lists every run")


if __name__ == "__main__":
    main()
