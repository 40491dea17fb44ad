#!/usr/bin/env python3
"""Summarise `jfr print --json --events jdk.ExecutionSample` by library and by method.

  python3 bench/jfr_libraries.py samples.json

Prints, over all threads: the share of samples whose stack holds a frame of each library
(inclusive; a sample counts once per library), the share of samples whose *top* frame is in
each library (self), and the 25 hottest top frames. Libraries are package prefixes.
"""
import collections
import json
import sys

LIBRARIES = [
    ("io.lettuce", "Lettuce"),
    ("reactor.", "Reactor"),
    ("io.netty.handler.codec.http", "Netty HTTP codec"),
    ("io.netty", "Netty (other)"),
    ("io.doubleface.redis", "doubleface Redis driver"),
    ("io.doubleface.services", "YCSB service"),
    ("io.doubleface", "doubleface framework"),
    ("sun.nio", "JDK NIO"),
    ("java.util.concurrent", "java.util.concurrent"),
    ("java.", "JDK (other)"),
    ("jdk.", "JDK (other)"),
]


def library(method_type):
    method_type = method_type.replace("/", ".")  # JFR's JSON writes internal names: io/netty/...
    for prefix, name in LIBRARIES:
        if method_type.startswith(prefix):
            return name
    return "other"


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["recording"]["events"]
    inclusive = collections.Counter()
    self_lib = collections.Counter()
    top = collections.Counter()
    threads = collections.Counter()
    n = 0
    for e in events:
        frames = e["values"]["stackTrace"]["frames"] if e["values"].get("stackTrace") else []
        if not frames:
            continue
        n += 1
        thread = e["values"].get("sampledThread", {}) or {}
        threads[(thread.get("javaName") or thread.get("osName") or "?").rstrip("0123456789-")] += 1
        seen = set()
        for fr in frames:
            m = fr["method"]
            seen.add(library(m["type"]["name"]))
        for lib in seen:
            inclusive[lib] += 1
        m = frames[0]["method"]
        self_lib[library(m["type"]["name"])] += 1
        top[m["type"]["name"].replace("/", ".") + "." + m["name"]] += 1
    if n == 0:
        print("no samples")
        return
    print(f"{n} execution samples")
    print("\nthreads (name without trailing digits): share of samples")
    for t, c in threads.most_common(10):
        print(f"  {100 * c / n:5.1f}%  {t}")
    print("\nlibrary: inclusive (a frame anywhere in the stack) / self (top frame)")
    for lib, c in inclusive.most_common():
        print(f"  {100 * c / n:5.1f}% / {100 * self_lib[lib] / n:5.1f}%  {lib}")
    print("\nhottest top frames")
    for m, c in top.most_common(25):
        print(f"  {100 * c / n:5.1f}%  {m}")


if __name__ == "__main__":
    main(sys.argv[1])
