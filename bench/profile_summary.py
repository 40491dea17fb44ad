#!/usr/bin/env python3
"""Where each server's CPU goes per request, from the profiles of `bench/peers.sh --profile`.

    python3 bench/profile_summary.py DIR

DIR is a peers run made with --profile: runs/<run>.collapsed (async-profiler's collapsed stacks,
one line per stack with its sample count; a sample is about 1 ms of CPU) beside runs/<run>.wrk.txt
(the measured window's requests). Writes DIR/profile.md: per cell, one column per system, the CPU
time per request (ns) split into kernel time by system call, user time on the I/O threads by
package, the JIT compiler and the garbage collector; then, per run, the hottest methods by self time
and the heaviest call paths of the systems' own code. Only the ratios within one cell compare: the
sampler's own cost is in every system alike.
"""
import collections
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_wrk import parse_wrk  # noqa: E402

SAMPLE_NS = 997_000  # bench/peers.sh samples every 997 µs of CPU

# user frames grouped by the first package prefix that matches (the order matters)
GROUPS = [
    ("doubleface: server (HTTP, routing)", ("io/doubleface/server",)),
    ("doubleface: engine (exchange, models)", ("io/doubleface/internal", "io/doubleface/sched", "io/doubleface/api")),
    ("doubleface: Redis driver", ("io/doubleface/redis", "io/doubleface/driver")),
    ("Lettuce", ("io/lettuce",)),
    ("Vert.x", ("io/vertx",)),
    ("Reactor", ("reactor/",)),
    ("the peer's own code", ("peers/",)),
    ("Netty buffers", ("io/netty/buffer",)),
    ("Netty codecs", ("io/netty/handler",)),
    ("Netty channels, loop", ("io/netty",)),
]


def category(frames):
    joined = ";".join(frames)
    if "CompileBroker" in joined:
        return "JIT compiler"
    if any(f.startswith(("G1", "GC", "ZThread", "WorkerThread")) for f in frames[:4]) or "GCTask" in joined:
        return "garbage collector"
    leaf = frames[-1]
    if leaf.endswith("_[k]"):
        for f in frames:
            m = re.match(r"__x64_sys_(\w+?)_\[k\]$", f) or re.match(r"__arm64_sys_(\w+?)_\[k\]$", f)
            if m:
                return "kernel: " + m.group(1)
        for f in reversed(frames):  # a syscall entered without its __x64_sys_ frame on the stack
            if not f.endswith("_[k]"):
                return "kernel: " + re.sub(r"^__GI___|@.*$", "", f)
        return "kernel: other"
    for f in reversed(frames):
        for name, prefixes in GROUPS:
            if f.startswith(prefixes):
                return "user: " + name
    if "Thread.run" not in joined and "thread_native_entry" in joined:
        return "other JVM threads"
    return "user: JDK and JVM"


def load(path):
    stacks = []
    with open(path) as f:
        for line in f:
            st, _, n = line.rstrip("\n").rpartition(" ")
            if st and n.isdigit():
                stacks.append((st.split(";"), int(n)))
    return stacks


def summarize(path):
    stacks = load(path)
    cats = collections.Counter()
    self_user = collections.Counter()
    own = collections.Counter()
    for frames, n in stacks:
        c = category(frames)
        cats[c] += n
        if c.startswith("user"):
            self_user[frames[-1]] += n
        # the heaviest paths of the systems' own code: the outermost own frame and its next own callee
        mine = [f for f in frames if f.startswith(("io/doubleface", "peers/", "io/vertx", "reactor/"))]
        if mine:
            own[" > ".join(dict.fromkeys(mine[:2]))] += n
    return cats, self_user, own, sum(n for _, n in stacks)


def main():
    out = sys.argv[1]
    runs = sorted(glob.glob(os.path.join(out, "runs", "*.collapsed")))
    if not runs:
        sys.exit(f"profile_summary: no runs/*.collapsed in {out} (run bench/peers.sh --profile)")
    by_cell = collections.defaultdict(dict)
    details = []
    for path in runs:
        tag = os.path.basename(path)[: -len(".collapsed")]
        m = re.match(r"r(\d+)-(\d+)-(small|large)-(\d+)-(.+)$", tag)
        if not m:
            continue
        wrk = path[: -len(".collapsed")] + ".wrk.txt"
        requests = 0
        if os.path.exists(wrk):
            with open(wrk) as f:
                requests = parse_wrk(f.read())["requests"]
        if requests <= 0:
            continue
        cats, self_user, own, total = summarize(path)
        cell = f"{m.group(2)}:{m.group(3)}:{m.group(4)} (repeat {m.group(1)})"
        per = SAMPLE_NS / requests
        by_cell[cell][m.group(5)] = ({k: v * per for k, v in cats.items()}, total * per)
        details.append((cell, m.group(5), per, self_user, own, total, requests))
    lines = ["# Where the CPU goes per request (bench/peers.sh --profile)", "",
             "async-profiler, CPU samples every 997 µs over each run's measured window (after its warm-up), "
             "divided by the requests wrk counted in that window: ns of CPU per request. Kernel time is "
             "grouped by the system call on the stack, user time by the package of the innermost "
             "frame that names one. The sampler's own cost is in every system alike; compare within a cell.", ""]
    for cell, systems in by_cell.items():
        names = list(systems)
        cats = sorted({c for s in systems.values() for c in s[0]}, key=lambda c: -max(s[0].get(c, 0) for s in systems.values()))
        lines += [f"## {cell}", "", "| ns per request | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        lines.append("| **total** | " + " | ".join(f"**{systems[n][1]:,.0f}**" for n in names) + " |")
        for kind in ("kernel", "user"):
            lines.append(f"| {kind}, all | " + " | ".join(
                f"{sum(v for c, v in systems[n][0].items() if c.startswith(kind)):,.0f}" for n in names) + " |")
        for c in cats:
            vals = [systems[n][0].get(c, 0) for n in names]
            if max(vals) >= 20:
                lines.append(f"| {c} | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
        lines.append("")
    for cell, system, per, self_user, own, total, requests in details:
        lines += [f"### {cell}, {system}: hottest user methods (self) and own call paths", "",
                  f"{total:,} samples, {requests:,} requests.", "", "| ns/request | method (self time) |", "|---|---|"]
        lines += [f"| {v * per:,.0f} | `{k[:110]}` |" for k, v in self_user.most_common(15)]
        lines += ["", "| ns/request | own code, outermost frame > its next own callee (inclusive) |", "|---|---|"]
        lines += [f"| {v * per:,.0f} | `{k[:150]}` |" for k, v in own.most_common(12)]
        lines.append("")
    with open(os.path.join(out, "profile.md"), "w") as f:
        f.write("\n".join(lines))
    print(f"profile summary: {os.path.join(out, 'profile.md')}")


if __name__ == "__main__":
    main()
