#!/usr/bin/env python3
"""The fifo/cf p99 curve of a priority sweep (bench/priority-sweep.sh).

Reads every `priority` experiment directory under DIR/runs (its report.md and summary.json) and
writes DIR/sweep.csv and DIR/report.md: per point (per-reply work, load fraction, mix) the offered
rate, the replies per tail batch of both configurations, the generator's send-lag p99, each
configuration's p99 and the fifo/cf ratio per repeat (median, min-max), sorted by replies per
batch, so the curve of the ratio against the batch size can be read off.

    python3 bench/priority_sweep.py DIR
"""
import csv
import glob
import json
import os
import re
import sys

RATIO = re.compile(r"p99 of doubleface-fifo / p99 of doubleface-cf, per repeat: \*\*([0-9.]+)(?: \(([0-9.]+)–([0-9.]+)\))?\*\*")
COMMAND = re.compile(r"- command: `([^`]*)`")


def option(command, name, default):
    m = re.search(r"--" + name + r"[ =]([^ ]+)", command)
    return m.group(1) if m else default


def points(run_dir):
    report = open(os.path.join(run_dir, "report.md"), encoding="utf-8").read()
    summary = json.load(open(os.path.join(run_dir, "summary.json"), encoding="utf-8"))
    command = COMMAND.search(report).group(1)
    work = option(command, "reply-work-us", "200")
    fraction = option(command, "load-fraction", "0.75")
    results = summary["results"]
    # the report's mix sections, in order, each followed by its ratio line
    sections = re.split(r"\n### ", report)[1:]
    for sec in sections:
        title = sec.split(":", 1)[0]
        if title.startswith("Regime") or title not in results:
            continue
        m = RATIO.search(sec)
        if not m:
            continue
        res = results[title]
        regime = results.get("regime " + title, {})
        mix_key = title.replace("Lfan/Sfan ", "")
        rate = summary.get("prepared", {}).get(mix_key, {}).get("rate_rps")
        yield {
            "reply_work_us": int(work),
            "load_fraction": float(fraction),
            "mix": title,
            "rate_rps": rate,
            "replies_per_batch_cf": regime.get("doubleface-cf", {}).get("replies_per_tail_batch"),
            "replies_per_batch_fifo": regime.get("doubleface-fifo", {}).get("replies_per_tail_batch"),
            "events_per_wakeup_cf": regime.get("doubleface-cf", {}).get("events_per_wakeup"),
            "send_lag_p99_ms": regime.get("doubleface-fifo", {}).get("send_lag_p99_ms"),
            "p99_cf_ms": res.get("doubleface-cf", {}).get("p99_ms"),
            "p99_fifo_ms": res.get("doubleface-fifo", {}).get("p99_ms"),
            "fifo_over_cf": float(m.group(1)),
            "fifo_over_cf_min": float(m.group(2)) if m.group(2) else float(m.group(1)),
            "fifo_over_cf_max": float(m.group(3)) if m.group(3) else float(m.group(1)),
            "run": os.path.basename(run_dir),
        }


def fmt(v, f="{:.2f}"):
    return "n/a" if v is None else f.format(v)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: priority_sweep.py DIR (with DIR/runs/priority-*)")
    out = sys.argv[1]
    rows = []
    for d in sorted(glob.glob(os.path.join(out, "runs", "priority-*"))):
        if os.path.exists(os.path.join(d, "report.md")):
            rows.extend(points(d))
    if not rows:
        sys.exit(f"priority_sweep.py: no priority runs under {out}/runs")
    rows.sort(key=lambda r: (r["replies_per_batch_cf"] or 0))
    with open(os.path.join(out, "sweep.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    lines = ["# Completion-first vs FIFO over replies per tail batch", "",
             "Each row one `doubleface experiment priority --configs doubleface-cf,doubleface-fifo` point "
             "(its directory under runs/), sorted by the replies `doubleface-cf`'s tail task held per batch "
             "(median over repeats). fifo / cf: the p99 ratio per repeat, median (min–max); above 1 "
             "completion-first has the lower p99.", "",
             "| replies per tail batch (cf / fifo) | µs per reply | load (of capacity) | mix | offered req/s | events per wake-up (cf) | send lag p99 (ms) | p99 cf / fifo (ms) | fifo / cf | run |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {fmt(r['replies_per_batch_cf'])} / {fmt(r['replies_per_batch_fifo'])} | {r['reply_work_us']} | "
                     f"{r['load_fraction']:.2f} | {r['mix']} | {fmt(r['rate_rps'], '{:,.0f}')} | "
                     f"{fmt(r['events_per_wakeup_cf'])} | {fmt(r['send_lag_p99_ms'])} | "
                     f"{fmt(r['p99_cf_ms'])} / {fmt(r['p99_fifo_ms'])} | **{r['fifo_over_cf']:.2f}** "
                     f"({r['fifo_over_cf_min']:.2f}–{r['fifo_over_cf_max']:.2f}) | [{r['run']}](runs/{r['run']}/report.md) |")
    above = [r for r in rows if r["fifo_over_cf_min"] > 1]
    below = [r for r in rows if r["fifo_over_cf_max"] < 1]
    lines += ["", f"{len(rows)} points; completion-first lower in every repeat at {len(above)}, "
              f"FIFO lower in every repeat at {len(below)}, the repeats on both sides at {len(rows) - len(above) - len(below)}."]
    open(os.path.join(out, "report.md"), "w", encoding="utf-8").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
