#!/usr/bin/env python3
"""loopsim: where does completion-first reply scheduling pay? A discrete-event model of the
DoubleFace event loop (docs/loopsim.md). Stdlib only.

  sim.py run        one point: fifo vs completion-first (and others), p50/p99, replies per batch
  sim.py calibrate  the measured points of `experiment priority` (docs/results/priority-*)
  sim.py sweep      fifo/cf p99 ratio against replies per batch: load x fanout mix x reply work
  sim.py paper      the DoubleFaceAD paper's setting, on 1, 4, 8 and 16 loops
  sim.py poll       busy-polling vs blocking: the wake-up latency saved against the core it takes
  sim.py report     all of the above into a results directory (report.md, sweep.csv, environment.json)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import loopsim as ls  # noqa: E402

# The measured points (docs/results/priority-20261124T143300Z and priority-20261126T134248Z):
# offered rate, mix, per-reply work, loop CPU per request, the requests one repeat measured, and
# the measured figures the simulation is compared with (read from the committed summary.json).
MEASURED = [
    {"name": "kv Lfan/Sfan 5/3, 200 us/reply", "dir": "priority-20261124T143300Z", "point": "Lfan/Sfan 5/3",
     "rate": 842.0, "mix": "5/3", "work": "const:200"},
    {"name": "kv Lfan/Sfan 7/1, 200 us/reply", "dir": "priority-20261124T143300Z", "point": "Lfan/Sfan 7/1",
     "rate": 872.0, "mix": "7/1", "work": "const:200"},
    {"name": "hdsearch, 4 shards", "dir": "priority-20261126T134248Z", "point": None,
     "rate": 1186.0, "mix": "4", "work": None},
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Budget:
    """Bounded run time: a sweep stops (and says so) when its budget is spent."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds if seconds else None
        self.exhausted = False

    def left(self):
        if self.end is not None and time.monotonic() > self.end:
            self.exhausted = True
        return not self.exhausted


def costs_from(a) -> ls.Costs:
    return ls.Costs(request=a.c_request, call=a.c_call, decode=a.c_decode, respond=a.c_respond,
                    iteration=a.c_iteration, wake=a.wake_us, poll_detect=a.poll_detect_us)


def workload(a, rate=None, mix=None, work=None, rtt=None) -> ls.Workload:
    return ls.Workload(rate if rate is not None else a.rate, ls.parse_mix(mix or a.mix),
                       ls.Dist(rtt or a.rtt), ls.Dist(work or a.reply_work),
                       arrivals=a.arrivals, jitter=ls.Dist(a.rtt_jitter))


def compare(wl, costs, a, policies=("fifo", "cf"), loops=1, assignment=None, n=None, repeats=None,
            polling=(False, False)):
    """Runs each policy on the same requests per repeat (paired); returns per-policy pooled
    figures and the per-repeat p99 ratio policies[0] / policies[1]."""
    n = n or a.requests
    repeats = repeats or a.repeats
    pooled = {p: [] for p in policies}
    stats = {p: ls.LoopStats() for p in policies}
    by_class = {p: {} for p in policies}
    ratios, util, p99s = [], [], {p: [] for p in policies}
    for r in range(repeats):
        seed = a.seed + 1000 * r
        reqs = ls.generate(wl, n, seed)
        p99 = {}
        for i, p in enumerate(policies):
            res = ls.simulate(wl, costs, p, n, seed, loops=loops, assignment=assignment or a.assignment,
                              warmup=a.warmup, polling=polling[i] if len(polling) > i else False,
                              tail_limit=a.tail_limit, requests=reqs)
            p99[p] = res.p(99)
            p99s[p].append(p99[p])
            pooled[p].extend(res.latencies_us)
            stats[p].add(res.stats)
            for x, k in zip(res.latencies_us, res.fanouts):
                by_class[p].setdefault(k, []).append(x)
            if i == 0:
                util.append(res.stats.busy_us / res.stats.span_us)  # summed over loops: the mean per loop
        ratios.append(p99[policies[0]] / p99[policies[1]])
    out = {}
    for p in policies:
        v = sorted(pooled[p])
        st = stats[p]
        out[p] = {"p50_ms": ls.percentile(v, 50) / 1000, "p99_ms": ls.percentile(v, 99) / 1000,
                  "mean_ms": statistics.fmean(v) / 1000, "samples": len(v),
                  "replies_per_batch": st.tail_replies / st.tail_batches if st.tail_batches else 0.0,
                  "iterations_per_request": st.iterations / (n * repeats),
                  "class_p50_ms": {k: ls.percentile(sorted(x), 50) / 1000 for k, x in sorted(by_class[p].items())}}
    ratios.sort()
    # unpaired: each repeat's first policy against the next repeat's second (independent requests),
    # the noise a measurement that runs the policies on different requests has at this sample size
    a0, a1 = p99s[policies[0]], p99s[policies[1]]
    unpaired = sorted(a0[r] / a1[(r + 1) % repeats] for r in range(repeats)) if repeats > 1 else ratios
    out["ratio"] = {"median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1],
                    "pooled": out[policies[0]]["p99_ms"] / out[policies[1]]["p99_ms"], "per_repeat": ratios,
                    "unpaired_min": unpaired[0], "unpaired_max": unpaired[-1]}
    out["utilization"] = statistics.fmean(util)
    return out


def fmt_ratio(r):
    return f"{r['pooled']:.2f} (median {r['median']:.2f}, {r['min']:.2f}–{r['max']:.2f})"


# ------------------------------------------------------------------------------------- commands

def cmd_run(a):
    costs = costs_from(a)
    wl = workload(a)
    if a.load_fraction is not None:
        cap = a.loops * 1e6 / ls.cpu_per_request(costs, wl)
        wl.rate_rps = a.load_fraction * cap
    pols = a.policies.split(",")
    log(f"run: {wl.rate_rps:.0f} req/s, mix {a.mix}, work {a.reply_work}, {a.loops} loop(s), "
        f"CPU per request {ls.cpu_per_request(costs, wl):.0f} us")
    res = compare(wl, costs, a, policies=tuple(pols), loops=a.loops)
    print(f"utilization per loop {res['utilization']:.3f}")
    print("| policy | p50 ms | p99 ms | mean ms | replies per tail batch | p50 ms by fanout |")
    print("|---|---|---|---|---|---|")
    for p in pols:
        r = res[p]
        cls = ", ".join(f"{k}: {v:.2f}" for k, v in r["class_p50_ms"].items())
        print(f"| {p} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['mean_ms']:.2f} | {r['replies_per_batch']:.2f} | {cls} |")
    print(f"p99 {pols[0]} / {pols[1]}: {fmt_ratio(res['ratio'])}")
    return res


def measured_figures(results_dir, m):
    """The measured p99s, ratio and replies per batch of one committed priority run."""
    path = os.path.join(results_dir, m["dir"], "summary.json")
    with open(path) as f:
        d = json.load(f)
    runs = [r for r in d["runs"] if (m["point"] is None or r["point"] == m["point"])]
    out = {"cpu_us_per_request": [], "rpb": {"doubleface-fifo": [], "doubleface-cf": []},
           "p99": {"doubleface-fifo": [], "doubleface-cf": []}, "samples_per_repeat": []}
    for r in runs:
        if r["config"] not in out["rpb"]:
            continue
        io_loop = r["mid_tier"]["loops"]["io"]
        out["rpb"][r["config"]].append(io_loop["replies_per_tail_batch"])
        out["p99"][r["config"]].append(r["load"]["p99_ms"])
        out["cpu_us_per_request"].append(r["mid_tier"]["cpu_us_per_request"])
        out["samples_per_repeat"].append(r["load"]["requests"])
    res = d["results"][m["point"] if m["point"] else next(iter(d["results"]))]
    out["pooled_p99"] = {c: res[c]["p99_ms"] for c in ("doubleface-fifo", "doubleface-cf")}
    f, c = out["p99"]["doubleface-fifo"], out["p99"]["doubleface-cf"]
    out["ratios"] = sorted(x / y for x, y in zip(f, c))
    return out


def cmd_calibrate(a, sink=None):
    costs = costs_from(a)
    rows = []
    for m in MEASURED:
        meas = measured_figures(a.results_dir, m)
        cpu = statistics.median(meas["cpu_us_per_request"])
        k = ls.mean_fanout(ls.parse_mix(m["mix"]))
        overhead = costs.request + costs.respond + k * (costs.call + costs.decode)
        # the per-reply work: the experiment's setting, or (hdsearch, whose work is the service's
        # own) what is left of the measured CPU per request after the fixed costs
        work = m["work"] or f"const:{max(0.0, (cpu - overhead) / k):.1f}"
        wl = workload(a, rate=m["rate"], mix=m["mix"], work=work)
        n = int(statistics.median(meas["samples_per_repeat"]))  # one measured repeat's requests
        log(f"calibrate: {m['name']}: {a.repeats} repeats of {n} requests")
        res = compare(wl, costs, a, n=n)
        row = {"point": m["name"], "rate": m["rate"], "work": work,
               "cpu_model_us": ls.cpu_per_request(costs, wl), "cpu_measured_us": cpu,
               "sim": res, "measured": meas}
        rows.append(row)
    out = io.StringIO()
    out.write("| point | CPU/request µs sim / measured | utilization (sim) | p99 fifo ms sim / measured | "
              "p99 cf ms sim / measured | fifo/cf sim: pooled (median, range over repeats) | sim unpaired range | "
              "fifo/cf measured: pooled (per repeat) | replies per tail batch sim fifo/cf | measured fifo/cf |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        s, me = r["sim"], r["measured"]
        mr = me["ratios"]
        pooled_meas = me["pooled_p99"]["doubleface-fifo"] / me["pooled_p99"]["doubleface-cf"]
        out.write(f"| {r['point']} | {r['cpu_model_us']:.0f} / {r['cpu_measured_us']:.0f} | {s['utilization']:.2f} | "
                  f"{s['fifo']['p99_ms']:.2f} / {me['pooled_p99']['doubleface-fifo']:.2f} | "
                  f"{s['cf']['p99_ms']:.2f} / {me['pooled_p99']['doubleface-cf']:.2f} | {fmt_ratio(s['ratio'])} | "
                  f"{s['ratio']['unpaired_min']:.2f}–{s['ratio']['unpaired_max']:.2f} | {pooled_meas:.2f} ({', '.join(f'{x:.2f}' for x in mr)}) | "
                  f"{s['fifo']['replies_per_batch']:.2f} / {s['cf']['replies_per_batch']:.2f} | "
                  f"{statistics.median(me['rpb']['doubleface-fifo']):.2f} / {statistics.median(me['rpb']['doubleface-cf']):.2f} |\n")
    text = out.getvalue()
    print(text)
    if sink is not None:
        sink["calibrate"] = rows
    return text


SWEEP_FIELDS = ["loops", "assignment", "mix", "reply_work_us", "load_fraction", "rate_rps", "utilization",
                "replies_per_batch_fifo", "replies_per_batch_cf", "p50_fifo_ms", "p50_cf_ms",
                "p99_fifo_ms", "p99_cf_ms", "ratio_pooled", "ratio_median", "ratio_min", "ratio_max"]


def sweep_rows(a, costs, budget, loads, mixes, works, loops_list, label, assignment=None):
    rows = []
    total = len(loads) * len(mixes) * len(works) * len(loops_list)
    done = 0
    for L in loops_list:
        for mix in mixes:
            for w in works:
                for f in loads:
                    if not budget.left():
                        log(f"{label}: time budget spent after {done}/{total} points; the rest are not run")
                        return rows
                    wl = workload(a, mix=mix, work=f"const:{w}")
                    wl.rate_rps = f * L * 1e6 / ls.cpu_per_request(costs, wl)
                    t0 = time.monotonic()
                    res = compare(wl, costs, a, loops=L, assignment=assignment)
                    done += 1
                    log(f"{label}: {done}/{total} loops={L} mix={mix} work={w}us load={f:.2f}: "
                        f"fifo/cf {res['ratio']['pooled']:.2f}, {res['fifo']['replies_per_batch']:.1f} replies/batch "
                        f"({time.monotonic() - t0:.1f}s)")
                    rows.append({"loops": L, "assignment": assignment or a.assignment, "mix": mix,
                                 "reply_work_us": w, "load_fraction": f, "rate_rps": round(wl.rate_rps, 1),
                                 "utilization": round(res["utilization"], 3),
                                 "replies_per_batch_fifo": round(res["fifo"]["replies_per_batch"], 2),
                                 "replies_per_batch_cf": round(res["cf"]["replies_per_batch"], 2),
                                 "p50_fifo_ms": round(res["fifo"]["p50_ms"], 3), "p50_cf_ms": round(res["cf"]["p50_ms"], 3),
                                 "p99_fifo_ms": round(res["fifo"]["p99_ms"], 3), "p99_cf_ms": round(res["cf"]["p99_ms"], 3),
                                 "ratio_pooled": round(res["ratio"]["pooled"], 3),
                                 "ratio_median": round(res["ratio"]["median"], 3),
                                 "ratio_min": round(res["ratio"]["min"], 3), "ratio_max": round(res["ratio"]["max"], 3)})
    return rows


def floats(s):
    return [float(x) for x in s.split(",") if x]


def cmd_sweep(a, sink=None, budget=None):
    costs = costs_from(a)
    budget = budget or Budget(a.max_seconds)
    rows = sweep_rows(a, costs, budget, floats(a.loads), a.mixes.split(";"), floats(a.works), [int(x) for x in a.loops_list.split(",")], "sweep")
    w = csv.DictWriter(sys.stdout if sink is None else io.StringIO(), fieldnames=SWEEP_FIELDS)
    if sink is None:
        w.writeheader()
        w.writerows(rows)
    else:
        sink["sweep"] = rows
    return rows


def cmd_paper(a, sink=None, budget=None):
    """The paper's setting: 230 req/s (2,500 users with think times far longer than the
    response time: Poisson-like arrivals), ~3 ms of CPU per request, Lfan/Sfan 5/3 and 7/1, shard
    round trip 0.12 ms; on L loops at the same total rate, and at the same per-loop load."""
    costs = costs_from(a)
    budget = budget or Budget(a.max_seconds)
    rows = []
    for mix in ("5/3", "7/1"):
        k = ls.mean_fanout(ls.parse_mix(mix))
        fixed = costs.request + costs.respond + k * (costs.call + costs.decode)
        work = (a.paper_cpu_us - fixed) / k
        for L in (1, 4, 8, 16):
            for mode in ("same total rate", "same load per loop"):
                if L == 1 and mode == "same load per loop":
                    continue
                for assign in (("random", "rr") if mode == "same load per loop" else ("random",)):
                    if not budget.left():
                        log("paper: time budget spent; the rest is not run")
                        break
                    rate = a.paper_rate * (L if mode == "same load per loop" else 1)
                    wl = workload(a, rate=rate, mix=mix, work=f"const:{work:.1f}", rtt=a.paper_rtt)
                    res = compare(wl, costs, a, loops=L, assignment=assign)
                    log(f"paper: {mix} L={L} {mode} {assign}: fifo/cf {res['ratio']['pooled']:.2f}")
                    rows.append({"mix": mix, "loops": L, "mode": mode, "assignment": assign, "rate": rate,
                                 "work_us": round(work, 1), "utilization": res["utilization"],
                                 "rpb": res["fifo"]["replies_per_batch"], "p99_fifo": res["fifo"]["p99_ms"],
                                 "p99_cf": res["cf"]["p99_ms"], "ratio": res["ratio"]})
    out = io.StringIO()
    out.write("| mix | loops | rate req/s | loads | assignment | utilization per loop | replies per tail batch (fifo) | "
              "p99 fifo ms | p99 cf ms | fifo/cf pooled (median, range) |\n|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        out.write(f"| {r['mix']} | {r['loops']} | {r['rate']:.0f} | {r['mode']} | {r['assignment']} | {r['utilization']:.2f} | "
                  f"{r['rpb']:.2f} | {r['p99_fifo']:.2f} | {r['p99_cf']:.2f} | {fmt_ratio(r['ratio'])} |\n")
    text = out.getvalue()
    print(text)
    if sink is not None:
        sink["paper"] = rows
    return text


def cmd_poll(a, sink=None, budget=None):
    """Blocking loop (each wait ends wake_us after the event) vs busy-polling loop (poll_detect_us),
    same requests; the polling loop holds its core whether busy or not."""
    budget = budget or Budget(a.max_seconds)
    rows = []
    base = costs_from(a)
    for wake in floats(a.poll_wakes):
        costs = ls.Costs(**{**base.__dict__, "wake": wake})
        for f in floats(a.poll_loads):
            if not budget.left():
                log("poll: time budget spent; the rest is not run")
                break
            wl = workload(a, mix=a.poll_mix, work=a.poll_work)
            wl.rate_rps = f * 1e6 / ls.cpu_per_request(costs, wl)
            blk = ls.simulate(wl, costs, "fifo", a.requests, a.seed, polling=False)
            pol = ls.simulate(wl, costs, "fifo", a.requests, a.seed, polling=True)
            saved = (blk.mean() - pol.mean()) / wake if wake else 0.0
            rows.append({"wake_us": wake, "load": f, "p50_block": blk.p(50) / 1000, "p50_poll": pol.p(50) / 1000,
                         "p99_block": blk.p(99) / 1000, "p99_poll": pol.p(99) / 1000,
                         "gain_p99": blk.p(99) / pol.p(99), "gain_mean": blk.mean() / pol.mean(),
                         "wakeups_on_path": saved, "core_busy_block": blk.stats.busy_us / blk.stats.span_us})
            log(f"poll: wake={wake}us load={f:.2f}: p99 gain {rows[-1]['gain_p99']:.2f}")
    out = io.StringIO()
    out.write("| wake-up µs | load | p50 block / poll ms | p99 block / poll ms | gain p99 | gain mean | "
              "wake-ups saved per request | core busy (blocking) → polling |\n|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        out.write(f"| {r['wake_us']:.0f} | {r['load']:.2f} | {r['p50_block']:.3f} / {r['p50_poll']:.3f} | "
                  f"{r['p99_block']:.3f} / {r['p99_poll']:.3f} | {r['gain_p99']:.2f} | {r['gain_mean']:.2f} | "
                  f"{r['wakeups_on_path']:.2f} | {r['core_busy_block']:.2f} → 1.00 |\n")
    text = out.getvalue()
    print(text)
    if sink is not None:
        sink["poll"] = rows
    return text


def git_commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        c = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "."], capture_output=True,
                                    text=True).stdout.strip())
        return c, dirty
    except OSError:
        return None, None


def cmd_report(a):
    os.makedirs(a.out, exist_ok=True)
    budget = Budget(a.max_seconds)
    sink = {}
    t0 = time.monotonic()
    cal = cmd_calibrate(a, sink)
    swp = cmd_sweep(a, sink, budget)
    pap = cmd_paper(a, sink, budget)
    pol = cmd_poll(a, sink, budget)
    with open(os.path.join(a.out, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=SWEEP_FIELDS)
        w.writeheader()
        w.writerows(swp)
    commit, dirty = git_commit()
    env = {"command_line": "python3 bench/loopsim/sim.py " + " ".join(sys.argv[1:]), "git_commit": commit,
           "git_dirty_bench_loopsim": dirty, "python": platform.python_version(), "machine": platform.machine(),
           "cpus": os.cpu_count(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "seconds": round(time.monotonic() - t0, 1), "budget_exhausted": budget.exhausted,
           "options": {k: v for k, v in vars(a).items() if k != "func"}}
    with open(os.path.join(a.out, "environment.json"), "w") as f:
        json.dump(env, f, indent=2)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(render_report(a, env, cal, swp, pap, pol))
    log(f"report: wrote {a.out} in {env['seconds']} s")


def ratio_curve(rows):
    """The sweep's points binned by replies per tail batch (fifo): ratio range per bin."""
    bins = [(0, 1.5), (1.5, 2.5), (2.5, 4), (4, 6), (6, 10), (10, 20), (20, 1e9)]
    out = []
    for lo, hi in bins:
        sel = [r for r in rows if lo <= r["replies_per_batch_fifo"] < hi]
        if sel:
            rs = sorted(r["ratio_pooled"] for r in sel)
            out.append((lo, hi, len(sel), rs[0], statistics.median(rs), rs[-1],
                        min(r["utilization"] for r in sel), max(r["utilization"] for r in sel)))
    return out


def render_report(a, env, cal, swp, pap, pol):
    s = io.StringIO()
    s.write("# loopsim: where completion-first reply scheduling pays (simulation)\n\n")
    s.write("A discrete-event model of the DoubleFace event loop (docs/loopsim.md): Poisson arrivals over "
            "independent loops, per-request and per-reply CPU, shard round trips, iterations whose replies a "
            "tail task orders FIFO or completion-first exactly as `io.doubleface.sched.CompletionFirstOrder`.\n\n")
    s.write(f"- command: `{env['command_line']}`\n- git commit: {env['git_commit']} (bench/loopsim dirty: "
            f"{env['git_dirty_bench_loopsim']}); Python {env['python']}; took {env['seconds']} s"
            f"{' (time budget spent: some points not run)' if env['budget_exhausted'] else ''}\n")
    s.write(f"- costs (µs): request {a.c_request}, per call {a.c_call}, per reply decode {a.c_decode}, "
            f"merge+respond {a.c_respond}, per iteration {a.c_iteration}; shard round trip `{a.rtt}` per request "
            f"+ `{a.rtt_jitter}` per call; {a.repeats} repeats per point, paired (fifo and cf see the same "
            f"requests); {a.requests} requests per repeat unless stated; first {a.warmup:.0%} dropped\n")
    s.write("- ratio cells: fifo p99 / cf p99 over all repeats pooled (median over repeats, min–max over repeats)\n\n")
    s.write("## Against the measurements (docs/results/priority-*)\n\n")
    s.write("Each point is simulated at the measured offered rate with as many requests per repeat as one "
            "measured repeat had, so the simulated spread over repeats is the sampling noise the measurement "
            "had too.\n\n")
    s.write(cal + "\n")
    s.write("## fifo/cf p99 against replies per tail batch (sweep.csv)\n\n")
    s.write(f"Loads {a.loads} of the modelled capacity, mixes `{a.mixes}`, per-reply work {a.works} µs, "
            f"loops {a.loops_list}. Binned by replies per tail batch under fifo:\n\n")
    s.write("| replies per tail batch | points | fifo/cf min | median | max | utilization range |\n|---|---|---|---|---|---|\n")
    for lo, hi, n, mn, md, mx, ulo, uhi in ratio_curve(swp):
        s.write(f"| {lo:g}–{'∞' if hi > 1e8 else f'{hi:g}'} | {n} | {mn:.2f} | {md:.2f} | {mx:.2f} | {ulo:.2f}–{uhi:.2f} |\n")
    s.write("\nAll points:\n\n| mix | work µs | load | utilization | replies/batch | p99 fifo ms | p99 cf ms | fifo/cf (median, range) |\n"
            "|---|---|---|---|---|---|---|---|\n")
    for r in swp:
        s.write(f"| {r['mix']} | {r['reply_work_us']:g} | {r['load_fraction']:.2f} | {r['utilization']:.2f} | "
                f"{r['replies_per_batch_fifo']:.2f} | {r['p99_fifo_ms']:.2f} | {r['p99_cf_ms']:.2f} | "
                f"{r['ratio_pooled']:.2f} ({r['ratio_median']:.2f}, {r['ratio_min']:.2f}–{r['ratio_max']:.2f}) |\n")
    s.write(f"\n## The paper's setting on 1, 4, 8 and 16 loops\n\n{a.paper_rate:g} req/s, {a.paper_cpu_us:g} µs of "
            f"CPU per request (the fixed costs above, the rest as per-reply work), shard round trip `{a.paper_rtt}`.\n\n")
    s.write(pap + "\n")
    s.write(f"## Busy-polling vs blocking\n\nMix `{a.poll_mix}`, per-reply work `{a.poll_work}`, one loop, the same "
            f"requests blocking (each wait ends a wake-up latency after the event) and polling "
            f"({a.poll_detect_us} µs to notice); the polling loop holds its core all the time.\n\n")
    s.write(pol + "\n")
    return s.getvalue()


def main(argv=None):
    p = argparse.ArgumentParser(prog="sim.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("workload")
    g.add_argument("--rate", type=float, default=842.0, help="offered requests per second, all loops (default 842)")
    g.add_argument("--load-fraction", type=float, default=None,
                   help="run: offered load as a fraction of the modelled capacity (overrides --rate)")
    g.add_argument("--mix", default="5/3", help="fanout mix: 4, 5/3 (half 5, half 3: Lfan/Sfan), or K:W,K:W (default 5/3)")
    g.add_argument("--reply-work", default="const:200",
                   help="onReply CPU per reply, µs: const:X, exp:M, lognormal:M:CV, gamma:M:CV, hyper:M:CV (default const:200)")
    g.add_argument("--rtt", default="lognormal:200:1", help="shard round trip per request, µs, shared by its calls (default lognormal:200:1)")
    g.add_argument("--rtt-jitter", default="exp:60", help="added per call, µs: the spread of one fanout's replies (default exp:60)")
    g.add_argument("--arrivals", default="poisson", help="poisson or h2:C2 (bursty hyperexponential; default poisson)")
    g = common.add_argument_group("loop")
    g.add_argument("--loops", type=int, default=1, help="event loops (one per core; default 1)")
    g.add_argument("--assignment", default="random", choices=("random", "rr"), help="connection to loop assignment (default random)")
    g.add_argument("--c-request", type=float, default=40.0, help="µs to read, parse and plan a request (default 40)")
    g.add_argument("--c-call", type=float, default=5.0, help="µs to encode one shard call (default 5)")
    g.add_argument("--c-decode", type=float, default=8.0, help="µs to read and decode one reply (default 8)")
    g.add_argument("--c-respond", type=float, default=35.0, help="µs to merge and write the response (default 35)")
    g.add_argument("--c-iteration", type=float, default=0.0, help="µs of fixed cost per loop iteration (default 0)")
    g.add_argument("--wake-us", type=float, default=0.0, help="wake-up latency of a blocked loop, µs (default 0)")
    g.add_argument("--poll-detect-us", type=float, default=0.5, help="latency for a busy-polling loop to notice an event (default 0.5)")
    g.add_argument("--tail-limit", type=int, default=None, help="replies per tail task before choosing again (default: none, as the Java scheduler)")
    g = common.add_argument_group("run")
    g.add_argument("--requests", type=int, default=30000, help="requests per repeat (default 30000)")
    g.add_argument("--repeats", type=int, default=5, help="paired repeats per point (default 5)")
    g.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    g.add_argument("--warmup", type=float, default=0.1, help="fraction of requests dropped at the start (default 0.1)")
    g.add_argument("--max-seconds", type=float, default=600.0, help="time budget of a sweep; it stops when spent (default 600)")
    g.add_argument("--results-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "results"),
                   help="where the committed priority results are (default docs/results)")
    g = common.add_argument_group("sweep, paper, poll")
    g.add_argument("--loads", default="0.3,0.5,0.7,0.8,0.9,0.95", help="sweep: load fractions of capacity")
    g.add_argument("--mixes", default="5/3;7/1;1:0.5,2:0.25,4:0.125,16:0.125", help="sweep: fanout mixes, ';'-separated")
    g.add_argument("--works", default="20,200,700", help="sweep: per-reply work values, µs")
    g.add_argument("--loops-list", default="1", help="sweep: loop counts")
    g.add_argument("--paper-rate", type=float, default=230.0, help="paper: req/s (default 230, DoubleFaceAD §6)")
    g.add_argument("--paper-cpu-us", type=float, default=3000.0, help="paper: CPU per request, µs (default 3000)")
    g.add_argument("--paper-rtt", default="lognormal:120:1", help="paper: shard round trip (default lognormal:120:1; 0.12 ms mean in the paper)")
    g.add_argument("--poll-wakes", default="7,30,100", help="poll: wake-up latencies to compare, µs")
    g.add_argument("--poll-loads", default="0.05,0.1,0.3,0.5,0.7,0.9", help="poll: load fractions")
    g.add_argument("--poll-mix", default="4", help="poll: fanout mix (default 4)")
    g.add_argument("--poll-work", default="const:30", help="poll: per-reply work (default const:30)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", parents=[common], help="one point")
    r.add_argument("--policies", default="fifo,cf", help="comma-separated, the ratio is first/second (fifo, cf, cfa)")
    r.set_defaults(func=cmd_run)
    sub.add_parser("calibrate", parents=[common], help="the measured points").set_defaults(func=cmd_calibrate)
    sub.add_parser("sweep", parents=[common], help="ratio vs replies per batch, CSV on stdout").set_defaults(func=cmd_sweep)
    sub.add_parser("paper", parents=[common], help="the paper's setting on 1-16 loops").set_defaults(func=cmd_paper)
    sub.add_parser("poll", parents=[common], help="busy-polling vs blocking").set_defaults(func=cmd_poll)
    rp = sub.add_parser("report", parents=[common], help="everything into a results directory")
    rp.add_argument("--out", default="docs/results/loopsim-20261129", help="results directory (default docs/results/loopsim-20261129)")
    rp.set_defaults(func=cmd_report)
    a = p.parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main()
