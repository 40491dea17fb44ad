#!/usr/bin/env python3
"""Regenerates the --help sections of docs/cli.md from the built CLI.

Keeps everything before the first "## `doubleface`" heading (the hand-written intro), then
writes one section per command and subcommand, found by walking the "Commands:" lists of
`doubleface --help`, each with the command's --help output verbatim.

Usage: python3 bench/cli-doc.py            (from the repository root; builds the jar if stale)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "cli.md")


def help_of(args):
    env = dict(os.environ, COLUMNS="80")
    env.pop("JAVA_TOOL_OPTIONS", None)
    r = subprocess.run([os.path.join(ROOT, "doubleface")] + args + ["--help"], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    if r.returncode != 0:
        sys.exit("doubleface %s --help failed (%d):\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout.rstrip("\n")


def subcommands(text):
    m = re.search(r"^Commands:\n((?:  \S.*\n?|    .*\n?)*)", text + "\n", re.M)
    if not m:
        return []
    return [line.split()[0] for line in m.group(1).splitlines() if line.startswith("  ") and not line.startswith("   ")]


def walk(args, out):
    text = help_of(args)
    out.append((args, text))
    for sub in subcommands(text):
        if sub != "help":
            walk(args + [sub], out)


def main():
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    head = doc[: doc.index("## `doubleface`")]
    sections = []
    walk([], sections)
    body = []
    for args, text in sections:
        body.append("## `%s`\n\n```\n%s\n```\n" % (" ".join(["doubleface"] + args), text))
    version = subprocess.run([os.path.join(ROOT, "doubleface"), "--version"], capture_output=True, text=True,
                             cwd=ROOT).stdout.strip()
    version = re.sub(r"(?m)^JVM: .*$", "JVM: <the running JVM>", version)
    body.append("## `doubleface --version`\n\n```\n%s\n```\n" % version)
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(head + "\n".join(body))
    print("docs/cli.md: %d sections" % (len(sections) + 1))


if __name__ == "__main__":
    main()
