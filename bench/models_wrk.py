#!/usr/bin/env python3
"""Helpers of bench/models-wrk.sh: parse wrk output, diff /admin/stats snapshots, write the report.

  models_wrk.py row  CONFIG REPEAT FANOUT SIZE CONNS DURATION WRK_OUT STATS_BEFORE STATS_AFTER >> raw.csv
  models_wrk.py header                      (the raw.csv header line)
  models_wrk.py report DIR                  (DIR/raw.csv + DIR/environment.json -> DIR/report.md)

Counters (from the mid-tier's /admin/stats, after minus before the measured run):
  io_ev_per_iter   I/O events per loop iteration on the upstream I/O loops (group "io")
  be_ev_per_iter   the same on the backend loops of type2a ("t2a-be") / reactors of type2b ("t2b-rx")
  io_ev_per_wakeup events per iteration that was allowed to block (epoll_wait with timeout)
  cs_per_req       (voluntary + involuntary) context switches of all thread groups / requests
  cpu_ms_per_req   CPU ms of all thread groups / requests
  tail_batch_mean  DoubleFace replies per end-of-iteration tail batch (io loops)
From /proc (before/after snapshots of the mid-tier process and its core, `procsnap`):
  mid_cpu_util     CPU time of all mid-tier threads / wall time (1.0 = one core)
  mid_rq_wait_util time mid-tier threads were runnable but waiting for a CPU / wall time (schedstat)
  io0_*            the same for the upstream I/O loop thread io-0 alone
  core_busy        busy fraction of the mid-tier's core (all processes, /proc/stat)
  core_busy_other  core_busy minus the mid-tier threads' CPU: other processes on that core plus softirq
                   time (loopback TCP receive processing, much of it for the mid-tier's own sockets)
Thread groups whose counters went down (threads exited, e.g. an idle cached pool) count as 0.
"""
import csv
import json
import os
import re
import statistics
import sys

FIELDS = ["config", "repeat", "fanout", "size", "conns", "duration_s", "rps", "requests",
          "p50_ms", "p90_ms", "p99_ms", "errors_socket", "non2xx", "server_ok", "server_other",
          "io_ev_per_iter", "io_ev_per_wakeup", "be_ev_per_iter", "be_ev_per_wakeup",
          "cs_per_req", "vol_cs_per_req", "invol_cs_per_req", "cpu_ms_per_req", "tail_batch_mean",
          "io_iter_per_req", "mid_cpu_util", "mid_rq_wait_util", "io0_cpu_util", "io0_rq_wait_util",
          "core_busy", "core_busy_other", "mid_fds", "syscr_per_req", "syscw_per_req"]

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}
BACKEND_GROUPS = ("t2a-be", "t2b-rx")


def to_ms(v):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", v)
    return float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")


def parse_wrk(text):
    r = {"rps": float("nan"), "requests": 0, "p50_ms": float("nan"), "p90_ms": float("nan"),
         "p99_ms": float("nan"), "errors_socket": 0, "non2xx": 0}
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"Requests/sec:\s+([\d.]+)", s)
        if m:
            r["rps"] = float(m.group(1))
        m = re.match(r"(\d+) requests in", s)
        if m:
            r["requests"] = int(m.group(1))
        m = re.match(r"(50|90|99)%\s+(\S+)$", s)
        if m:
            r["p%s_ms" % m.group(1)] = to_ms(m.group(2))
        m = re.match(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", s)
        if m:
            r["errors_socket"] = sum(int(x) for x in m.groups())
        m = re.match(r"Non-2xx or 3xx responses: (\d+)", s)
        if m:
            r["non2xx"] = int(m.group(1))
    return r


def loops_by_group(stats):
    g = {}
    for l in stats.get("loops", []):
        a = g.setdefault(l["group"], [0, 0, 0, 0, 0])
        a[0] += l.get("iterations", 0)
        a[1] += l.get("wakeups", 0)
        a[2] += l.get("events", 0)
        a[3] += l.get("tail_batches", 0)
        a[4] += l.get("tail_replies", 0)
    return g


def delta(before, after):
    lb, la = loops_by_group(before), loops_by_group(after)
    d = {}
    for name, a in la.items():
        b = lb.get(name, [0] * 5)
        d[name] = [x - y for x, y in zip(a, b)]
    tb = {t["group"]: t for t in before.get("threads", [])}
    vol = invol = cpu = 0
    for t in after.get("threads", []):
        b = tb.get(t["group"], {})
        dv = t["voluntary_switches"] - b.get("voluntary_switches", 0)
        di = t["involuntary_switches"] - b.get("involuntary_switches", 0)
        dc = t["cpu_ms"] - b.get("cpu_ms", 0)
        if dv < 0 or di < 0 or dc < 0:  # threads of the group exited: their history is gone
            continue
        vol += dv
        invol += di
        cpu += dc
    rq_b, rq_a = before.get("requests", {}), after.get("requests", {})
    ok = rq_a.get("ok", 0) - rq_b.get("ok", 0)
    answered = rq_a.get("answered", 0) - rq_b.get("answered", 0)
    return d, vol, invol, cpu, ok, answered - ok


def procsnap(pid, cpu):
    import time
    tot = [0, 0]
    io0 = [0, 0]
    tids = {}
    base = "/proc/%s/task" % pid
    for tid in os.listdir(base):
        try:
            run, wait, _ = open("%s/%s/schedstat" % (base, tid)).read().split()
            comm = open("%s/%s/comm" % (base, tid)).read().strip()
        except OSError:
            continue
        tids[tid] = [int(run), int(wait)]
        tot[0] += int(run)
        tot[1] += int(wait)
        if comm == "io-0":
            io0 = [int(run), int(wait)]
    io = {}
    try:
        for line in open("/proc/%s/io" % pid):
            k, v = line.split(":")
            io[k.strip()] = int(v)
    except OSError:
        pass
    core = [0, 0]
    for line in open("/proc/stat"):
        if line.startswith("cpu%s " % cpu):
            v = [int(x) for x in line.split()[1:]]
            idle = v[3] + v[4]
            core = [sum(v) - idle, sum(v)]  # jiffies
    try:
        fds = len(os.listdir("/proc/%s/fd" % pid))
    except OSError:
        fds = -1
    print(json.dumps({"t": time.time(), "mid": tot, "io0": io0, "core": core, "fds": fds, "tids": tids,
                      "syscr": io.get("syscr", 0), "syscw": io.get("syscw", 0)}))


def ratio(a, b):
    return a / b if b else float("nan")


def row(args):
    config, repeat, fanout, size, conns, duration, wrk_out, sb, sa = args[:9]
    proc = {}
    if len(args) >= 11:
        pb, pa = json.load(open(args[9])), json.load(open(args[10]))
        wall = (pa["t"] - pb["t"]) * 1e9
        mid_cpu = (pa["mid"][0] - pb["mid"][0]) / wall
        mid_wait = (pa["mid"][1] - pb["mid"][1]) / wall
        if "tids" in pa and "tids" in pb:  # only threads alive at both ends (idle cached-pool threads exit)
            tb = pb["tids"]
            common = [t for t in pa["tids"] if t in tb]
            mid_cpu = sum(pa["tids"][t][0] - tb[t][0] for t in common) / wall
            mid_wait = sum(pa["tids"][t][1] - tb[t][1] for t in common) / wall
        core = pa["core"][1] - pb["core"][1]
        busy = (pa["core"][0] - pb["core"][0]) / core if core else float("nan")
        proc = dict(mid_cpu_util=mid_cpu, mid_rq_wait_util=mid_wait,
                    io0_cpu_util=(pa["io0"][0] - pb["io0"][0]) / wall,
                    io0_rq_wait_util=(pa["io0"][1] - pb["io0"][1]) / wall,
                    core_busy=busy, core_busy_other=busy - mid_cpu, mid_fds=pa.get("fds", ""),
                    syscr_per_req=pa.get("syscr", 0) - pb.get("syscr", 0), syscw_per_req=pa.get("syscw", 0) - pb.get("syscw", 0))
    w = parse_wrk(open(wrk_out).read())
    before, after = json.load(open(sb)), json.load(open(sa))
    d, vol, invol, cpu, ok, other = delta(before, after)
    io = d.get("io", [0] * 5)
    be = [0] * 5  # only the active configuration's backend loops (parked ones still tick)
    own = {"type2a": "t2a-be", "type2b": "t2b-rx"}.get(config.split("-")[0])
    if own in d:
        be = d[own]
    reqs = ok + other
    for k in ("syscr_per_req", "syscw_per_req"):
        if k in proc:
            proc[k] = ratio(proc[k], reqs)
    out = dict(config=config, repeat=repeat, fanout=fanout, size=size, conns=conns, duration_s=duration,
               server_ok=ok, server_other=other,
               io_ev_per_iter=ratio(io[2], io[0]), io_ev_per_wakeup=ratio(io[2], io[1]),
               be_ev_per_iter=ratio(be[2], be[0]) if be[0] else "",
               be_ev_per_wakeup=ratio(be[2], be[1]) if be[1] else "",
               cs_per_req=ratio(vol + invol, reqs), vol_cs_per_req=ratio(vol, reqs),
               invol_cs_per_req=ratio(invol, reqs), cpu_ms_per_req=ratio(cpu, reqs),
               tail_batch_mean=ratio(io[4], io[3]) if io[3] else "",
               io_iter_per_req=ratio(io[0], reqs), **proc, **w)
    wr = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    for k, v in out.items():
        if isinstance(v, float):
            out[k] = "%.4g" % v
    wr.writerow(out)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def fmt(v, digits=3):
    if v != v:  # nan
        return "–"
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%." + str(digits) + "g") % v


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def report(d):
    env = json.load(open(os.path.join(d, "environment.json")))
    lines = list(csv.reader(open(os.path.join(d, "raw.csv"))))
    rows = [dict(zip(FIELDS, l)) for l in lines[1:]]
    for r in rows:
        # a thread that exits between the snapshots made the process sum drop (older rows): not valid
        if num(r.get("mid_cpu_util")) < num(r.get("io0_cpu_util")):
            r["core_busy_other"] = ""
            r["mid_cpu_util"] = ""
    configs = env["configurations"]
    df = env.get("doubleface_config", "doubleface")
    cells = []
    for r in rows:
        c = (int(r["fanout"]), r["size"], int(r["conns"]))
        if c not in cells:
            cells.append(c)
    size_order = {"small": 0, "medium": 1, "large": 2}
    cells.sort(key=lambda c: (c[0], size_order.get(c[1], 9), c[2]))
    L = []
    L.append("# Five threading models under wrk (closed loop)\n")
    L.append("Results directory: `%s`. Generated by `bench/models-wrk.sh`; raw rows in `raw.csv`, "
             "environment in `environment.json`.\n" % os.path.basename(os.path.abspath(d)))
    L.append("- commit `%s`, %s, %s CPUs; mid-tier pinned to CPU %s (`--io-threads %s`), KV leaf (%s shards) and wrk "
             "pinned to CPU %s" % (env["git_commit"], env["jdk"], env["cpu_count"], env["mid_cpu"],
                                     env["io_threads"], env["shards"], env["aux_cpu"]))
    L.append("- measured runs: `wrk -t1 -c<conns> -d%ss --latency`, %s repeats; configurations interleaved per cell, "
             "order rotated each repeat" % (env["duration_s"], env["repeats"]))
    L.append("- warm-up: %s; every measured run is preceded by a discarded %s s run of the same cell"
             % (env["warmup"], env["cell_warmup_s"]))
    L.append("- latency columns are wrk's **closed-loop** percentiles (N connections, zero think time): a capacity "
             "run, not an open-loop latency measurement — do not quote them as \"the\" p50/p99.")
    L.append("- values are the median over repeats; throughput also shows [min–max].\n")
    L.append("Columns: `req/s` wrk throughput; `p50`/`p99` closed-loop latency (ms); `err` socket errors + non-2xx; "
             "`ev/it io` I/O events per loop iteration on the upstream I/O loop; `ev/it be` the same on type2a/type2b "
             "backend loops; `cs/req` context switches per request (all threads of the mid-tier, voluntary+involuntary); "
             "`cpu/req` mid-tier CPU µs per request; `it/req` I/O-loop iterations per request; `batch` DoubleFace tail "
             "batch mean; `core` busy fraction of the mid-tier's CPU (all processes) and, after the slash, the part "
             "not charged to mid-tier threads: other processes *and* softirq time (loopback TCP processing, largely the "
             "mid-tier's own traffic; ~0.18 of the core was softirq in a spot check); `io-0 run/wait` fraction of wall time the upstream loop thread ran / sat "
             "runnable waiting for the CPU (schedstat); `rd+wr syscalls/req` read- and write-type system calls of the mid-tier "
             "process per request (/proc/PID/io syscr+syscw; epoll_wait not included; recorded from part-way through the run).\n")
    by = {}
    for r in rows:
        by.setdefault((int(r["fanout"]), r["size"], int(r["conns"]), r["config"]), []).append(r)
    ratio_rows = []
    eff_rows = []
    bad_cells = []
    for c in cells:
        L.append("## fanout %d, %s replies, %d connections\n" % c)
        L.append("| config | req/s [min–max] | p50 ms | p99 ms | err | ev/it io | ev/it be | cs/req | cpu/req µs | it/req | batch | core / other | io-0 run/wait | rd+wr syscalls/req |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for cfg in configs:
            rs = by.get(c + (cfg,), [])
            if not rs:
                continue
            rps = [num(r["rps"]) for r in rs]
            err = sum(int(num(r["errors_socket"]) or 0) + int(num(r["non2xx"]) or 0) for r in rs)
            if err:
                bad_cells.append((c, cfg, err, sum(int(num(r["requests"])) for r in rs)))
            L.append("| %s | %s [%s–%s] | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s |" % (
                cfg, fmt(med(rps)), fmt(min(rps)), fmt(max(rps)),
                fmt(med([num(r["p50_ms"]) for r in rs])), fmt(med([num(r["p99_ms"]) for r in rs])), err,
                fmt(med([num(r["io_ev_per_iter"]) for r in rs])), fmt(med([num(r["be_ev_per_iter"]) for r in rs])),
                fmt(med([num(r["cs_per_req"]) for r in rs])),
                fmt(1000 * med([num(r["cpu_ms_per_req"]) for r in rs])),
                fmt(med([num(r["io_iter_per_req"]) for r in rs])),
                fmt(med([num(r["tail_batch_mean"]) for r in rs])),
                fmt(med([num(r.get("core_busy")) for r in rs]), 2), fmt(med([num(r.get("core_busy_other")) for r in rs]), 2),
                fmt(med([num(r.get("io0_cpu_util")) for r in rs]), 2), fmt(med([num(r.get("io0_rq_wait_util")) for r in rs]), 2),
                fmt(med([num(r.get("syscr_per_req")) + num(r.get("syscw_per_req")) for r in rs]))))
        L.append("")
        # ratio of doubleface to the best other configuration, per repeat (same period)
        for key, store in (("rps", ratio_rows), ("eff", eff_rows)):
            per, bests = per_repeat(by, c, configs, df, rows, key)
            if per:
                store.append((c, per, bests))
        continue
    if bad_cells:
        L.append("## Runs with errors\n")
        L.append("Throughput of these cells counts failed requests too; do not compare them.\n")
        for c, cfg, err, n in bad_cells:
            L.append("- fanout %d %s c%d `%s`: %d of %d responses were socket errors or non-2xx" % (c + (cfg, err, n)))
        L.append("")
    emit_ratio(L, df, ratio_rows, "throughput", "Target (issue 2): ≥ 1.3 at fanout 5 and 20 with small replies, and ≥ 1.0 everywhere.")
    emit_ratio(L, df, eff_rows, "requests per mid-tier CPU-second (1 / CPU per request)",
               "CPU efficiency: the capacity each model would have with its core to itself; not affected by how "
               "much of the core neighbouring processes took.")
    open(os.path.join(d, "report.md"), "w").write("\n".join(L) + "\n")


def value(r, key):
    if key == "rps":
        return num(r["rps"])
    c = num(r["cpu_ms_per_req"])
    return 1000.0 / c if c and c == c else float("nan")


def per_repeat(by, c, configs, df, rows, key):
    per = []
    bests = []
    if True:
        for rep in sorted({r["repeat"] for r in rows}):
            get = {cfg: value(r, key) for cfg in configs for r in by.get(c + (cfg,), []) if r["repeat"] == rep}
            if df not in get:
                continue
            others = {k: v for k, v in get.items() if k != df and v == v}
            if not others:
                continue
            best = max(others, key=others.get)
            per.append(get[df] / others[best])
            bests.append(best)
    return per, bests


def emit_ratio(L, df, ratio_rows, what, note):
    L.append("## Ratio: %s %s / best other configuration (same repeat)\n" % (df, what))
    L.append(note + "\n")
    L.append("| fanout | size | conns | median | min | max | best other (per repeat) | target met |")
    L.append("|---|---|---|---|---|---|---|---|")
    for c, per, bests in ratio_rows:
        target = 1.3 if (c[0] in (5, 20) and c[1] == "small") else 1.0
        met = "yes" if min(per) >= target else ("median only" if med(per) >= target else "no")
        L.append("| %d | %s | %d | %.2f | %.2f | %.2f | %s | %s (≥%.1f) |" % (
            c[0], c[1], c[2], med(per), min(per), max(per), ", ".join(bests), met, target))
    L.append("")


def main():
    cmd = sys.argv[1]
    if cmd == "header":
        print(",".join(FIELDS))
    elif cmd == "row":
        row(sys.argv[2:])
    elif cmd == "procsnap":
        procsnap(sys.argv[2], sys.argv[3])
    elif cmd == "report":
        report(sys.argv[2])
    elif cmd == "wrk":
        print(json.dumps(parse_wrk(open(sys.argv[2]).read())))
    else:
        sys.exit("unknown command: " + cmd)


if __name__ == "__main__":
    main()
