#!/usr/bin/env python3
"""Markdown tables from JMH JSON results (for docs/benchmarks.md).

  bench/jmh_table.py docs/results/jmh-DATE/sched.json [more.json ...]

Per benchmark and parameter set: score ± the 99.9% error JMH reports, the min–max of the
measurement iterations, and for SchedulerBenchmark the score divided by the batch size
(ns per reply).
"""
import json
import sys


def main():
    for f in sys.argv[1:]:
        rows = json.load(open(f))
        print("`%s` — %s, %s, forks %s, warm-up %s × %s, measurement %s × %s\n" % (
            f, rows[0]["vmName"], rows[0]["jdkVersion"], rows[0]["forks"], rows[0]["warmupIterations"],
            rows[0]["warmupTime"], rows[0]["measurementIterations"], rows[0]["measurementTime"]))
        params = sorted({k for r in rows for k in (r.get("params") or {})})
        sched = any("SchedulerBenchmark" in r["benchmark"] for r in rows)
        head = ["benchmark"] + params + ["ns/op", "± error", "iterations min–max"] + (["ns/reply"] if sched else [])
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            m = r["primaryMetric"]
            raw = [x for fork in m["rawData"] for x in fork]
            p = r.get("params") or {}
            cells = [r["benchmark"].rsplit(".", 2)[-2] + "." + r["benchmark"].rsplit(".", 1)[-1]]
            cells += [p.get(k, "") for k in params]
            cells += ["%.1f" % m["score"], "%.1f" % m["scoreError"], "%.1f–%.1f" % (min(raw), max(raw))]
            if sched:
                cells.append("%.1f" % (m["score"] / int(p["batch"])) if "batch" in p else "")
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
