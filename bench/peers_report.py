#!/usr/bin/env python3
"""Helpers of bench/peers.sh (issue 18: the peers and the hand-written ceiling beside doubleface).

  peers_report.py dataset FILE KEYS SMALL LARGE   RESP SET commands of the dataset (for redis-cli --pipe)
  peers_report.py check BODY FANOUT SIZE KEY        exit 1 unless BODY is the expected answer
  peers_report.py row REPEAT CELL SYSTEM WRK_OUT    one raw.csv row from a wrk --latency output
  peers_report.py header                            the raw.csv header line
  peers_report.py openheader                        the open.csv header line
  peers_report.py openrate RAW_CSV CELL F SYSTEMS   F x the slowest of SYSTEMS' median req/s in CELL (an int)
  peers_report.py openrow REPEAT CELL SYSTEM RATE JSON  one open.csv row from a `doubleface load --json` output
  peers_report.py kernelheader                      the kernel.csv header line (--kernel-stages)
  peers_report.py kernelrows REPEAT CELL SYSTEM RATE BPFTRACE_OUT  kernel.csv rows from a bpftrace output
  peers_report.py report DIR                        DIR/raw.csv (+ open.csv) + DIR/environment.json -> DIR/report.md

The dataset must match bench/peers/common/src/main/java/peers/Workload.java: key s:<i> holds SMALL
bytes and l:<i> holds LARGE bytes, byte p of key i being 'a' + (7 i + p) mod 26.
"""
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_wrk import parse_wrk  # noqa: E402

SMALL, LARGE = 100, 20_000
HEADER = "repeat,cell,system,requests_per_s,p50_ms,p99_ms,errors,server_cpu_us_per_request,warmup_requests_per_s,shards_cpu_us_per_request"
OPEN_HEADER = "repeat,cell,system,offered_rps,achieved_rps,p50_ms,p99_ms,p999_ms,errors,send_lag_p99_ms"
STAGE_HEADER = "repeat,cell,system,offered_rps,stage,count,mean_us,p50_us,p99_us,p999_us"
KERNEL_HEADER = "repeat,cell,system,offered_rps,measure,count,mean_us,p50_us,p99_us,p999_us"
# --kernel-stages: what each lhist of the bpftrace program measures (bench/peers.sh, kernel_script)
KERNEL_MEASURES = {
    "admit_us": "request readable → the server's read of it (epoll wake-up, wait for the loop)",
    "residence_us": "request readable → the server's first write of its answer",
    "shard_read_us": "shard reply readable → the server's read of it",
    "send_to_client_us": "the server's first write of an answer → the generator's first read of it",
    "client_read_us": "answer bytes readable → the generator's read of them (per read)",
    "wakeup_us": "a server thread woken → running (any thread of the server's JVM)",
    "preempted_us": "a server thread preempted → running again",
}


def value(key, length):
    return bytes(97 + (key * 7 + p) % 26 for p in range(length))


def resp(*parts):
    out = b"*%d\r\n" % len(parts)
    for p in parts:
        out += b"$%d\r\n%s\r\n" % (len(p), p)
    return out


def dataset(path, keys, small, large):
    with open(path, "wb") as f:
        for i in range(int(keys)):
            f.write(resp(b"SET", b"s:%d" % i, value(i, int(small))))
            f.write(resp(b"SET", b"l:%d" % i, value(i, int(large))))


def check(body_path, fanout, size, key):
    body = open(body_path, "rb").read()
    expected = value(int(key), LARGE if size == "large" else SMALL) * int(fanout)
    if body != expected:
        first = next((i for i, (a, b) in enumerate(zip(body, expected)) if a != b), min(len(body), len(expected)))
        print(f"body of {len(body)} bytes, expected {len(expected)}; first difference at byte {first}")
        sys.exit(1)


def row(repeat, cell, system, wrk_out, cpu_file=None, warmup_out=None, shard_cpu_file=None):
    r = parse_wrk(open(wrk_out).read())
    warm = ""
    if warmup_out and os.path.exists(warmup_out):  # the discarded warm-up's own rate: how far from its steady state a fresh JVM starts
        w = parse_wrk(open(warmup_out).read())
        warm = f"{w['rps']:.0f}" if w["requests"] > 0 else ""
    errors = r["errors_socket"] + r["non2xx"]
    def per_request(path):  # "TICKS CLK_TCK": CPU time over the measured window, in µs per request
        if not path or not os.path.exists(path) or r["requests"] == 0:
            return ""
        ticks, hz = (int(x) for x in open(path).read().split())
        return f"{ticks / hz * 1e6 / r['requests']:.1f}"
    print(f"{repeat},{cell},{system},{r['rps']:.0f},{r['p50_ms']:.3f},{r['p99_ms']:.3f},{errors},"
          f"{per_request(cpu_file)},{warm},{per_request(shard_cpu_file)}")


def open_rate(raw_csv, cell, fraction, systems):
    rows = [r for r in csv.DictReader(open(raw_csv)) if r["cell"] == cell]
    medians = []
    for s in systems.split():
        mine = [float(r["requests_per_s"]) for r in rows if r["system"] == s]
        if not mine:
            sys.exit(f"no closed-loop run of {s} in cell {cell}")
        medians.append(statistics.median(mine))
    print(max(1, int(float(fraction) * min(medians))))


def open_row(repeat, cell, system, rate, json_path):
    def fmt(v, spec):
        return "" if v is None else format(v, spec)
    try:
        r = json.load(open(json_path))
    except (OSError, ValueError):
        r = {}
    print(f"{repeat},{cell},{system},{rate},{fmt(r.get('achieved_rate'), '.0f')},{fmt(r.get('p50_ms'), '.3f')},"
          f"{fmt(r.get('p99_ms'), '.3f')},{fmt(r.get('p999_ms'), '.3f')},{r.get('errors', 'no result')},"
          f"{fmt(r.get('send_lag_p99_ms'), '.3f')}")


def stage_rows(repeat, cell, system, rate, stats_path):
    """One row per stage of the (single) configuration in a doubleface server's /admin/stats."""
    stages = json.load(open(stats_path)).get("stages") or {}
    for config, per in stages.items():
        if config == "one_in":
            continue
        for stage, x in per.items():
            print(f"{repeat},{cell},{system},{rate},{stage},{x['count']},{x['mean_us']:.1f},{x['p50_us']:.0f},"
                  f"{x['p99_us']:.0f},{x['p999_us']:.0f}")


def csv_rows(out, name):
    """The rows of DIR/NAME as dicts, or None if the run wrote no such file."""
    path = os.path.join(out, name)
    return list(csv.DictReader(open(path))) if os.path.exists(path) else None


def lhists(text):
    """{name: [(lo, hi, count)]} of every lhist/hist map in a bpftrace output; hi None = open bucket."""
    out, name = {}, None
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}

    def num(v):
        v = v.strip()
        return int(v[:-1]) * units[v[-1]] if v and v[-1] in units else int(v)
    for line in text.splitlines():
        if line.startswith("@") and line.rstrip().endswith(":"):
            name = line.strip()[1:-1]
            out[name] = []
            continue
        if name and line.startswith("["):
            head, _, rest = line.partition("]")
            if not rest:
                head, _, rest = line.partition(")")
            lo, _, hi = head[1:].partition(",")
            hi = hi.strip()
            cnt = rest.split("|")[0].strip() if "|" in rest else rest.strip()
            try:
                out[name].append((num(lo), None if hi in ("...", "") else num(hi), int(cnt)))
            except ValueError:
                pass
        elif not line.strip():
            name = None if name and out.get(name) else name
    return out


def quantile(buckets, q):
    """The upper edge of the bucket holding quantile q (None when the open bucket holds it)."""
    total = sum(b[2] for b in buckets)
    acc = 0
    for lo, hi, n in buckets:
        acc += n
        if acc >= q * total:
            return hi
    return None


def kernel_rows(repeat, cell, system, rate, bt_path):
    """One kernel.csv row per measure of a --kernel-stages bpftrace output (µs, 25 µs buckets)."""
    h = lhists(open(bt_path).read())
    for m in KERNEL_MEASURES:
        b = h.get(m) or []
        n = sum(x[2] for x in b)
        if not n:
            continue
        mean = sum(((lo + (hi if hi is not None else lo)) / 2) * c for lo, hi, c in b) / n
        qs = [quantile(b, q) for q in (0.5, 0.99, 0.999)]
        print(f"{repeat},{cell},{system},{rate},{m},{n},{mean:.1f},"
              + ",".join("" if v is None else str(v) for v in qs))


def kernel_section(out):
    rows = csv_rows(out, "kernel.csv")
    if rows is None:
        return []
    lines = ["## The kernel's side of the open-loop runs (--kernel-stages)", "",
             "bpftrace on the sock and sched tracepoints during each measured window (within a second of its "
             "edges; bpftrace pinned to CPU 1 with the generator and the shards). µs, buckets of 25 µs: a "
             "percentile is the upper edge of its bucket, a mean counts each bucket at its middle; medians over "
             "repeats. Measures:", ""]
    lines += [f"- `{k[:-3]}`: {v}" for k, v in KERNEL_MEASURES.items()] + [""]
    for cell in dict.fromkeys(r["cell"] for r in rows):
        fanout, size, _ = cell.split(":")
        mine = [r for r in rows if r["cell"] == cell]
        systems = list(dict.fromkeys(r["system"] for r in mine))
        lines += [f"### fanout {fanout}, {size}, {mine[0]['offered_rps']} req/s", "",
                  "| measure | " + " | ".join(f"{s} p50 / p99 / p99.9 (mean)" for s in systems) + " |",
                  "|---|" + "---|" * len(systems)]
        for m in KERNEL_MEASURES:
            cells = []
            for s in systems:
                x = [r for r in mine if r["system"] == s and r["measure"] == m]
                if not x:
                    cells.append("–")
                    continue

                def med(k):
                    v = [float(r[k]) for r in x if r[k]]
                    return f"{statistics.median(v):,.0f}" if v else ">20,000"
                cells.append(f"{med('p50_us')} / {med('p99_us')} / {med('p999_us')} ({med('mean_us')})")
            lines.append(f"| {m[:-3]} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def stage_section(out):
    rows = csv_rows(out, "stages.csv")
    if rows is None:
        return []
    lines = ["## Where doubleface's open-loop time goes (--trace-stages)", "",
             "Every request of the generator's measured window traced (tracing switched on, and the admin path "
             "used a dozen times, in the closed-loop warm-up; the figures reset at the generator's first progress "
             "line of the measured window, so the window's first second may be missing); µs inside the server, from admission (request decoded) "
             "to the answer taken by the connection (docs/tracing.md); medians over repeats of each figure. Compare "
             "`total` with the generator's end-to-end figures above: the difference is outside the engine (the "
             "kernel, the read and decode of the request, the write of the answer, the generator).", ""]
    for cell in dict.fromkeys(r["cell"] for r in rows):
        for s in dict.fromkeys(r["system"] for r in rows if r["cell"] == cell):
            mine = [r for r in rows if r["cell"] == cell and r["system"] == s]
            fanout, size, _ = cell.split(":")
            lines += [f"### {s}, fanout {fanout}, {size}, {mine[0]['offered_rps']} req/s", "",
                      "| stage | traced requests | mean µs | p50 µs | p99 µs | p99.9 µs |", "|---|---|---|---|---|---|"]
            for st in dict.fromkeys(r["stage"] for r in mine):
                m = [r for r in mine if r["stage"] == st]
                med = lambda k: statistics.median(float(r[k]) for r in m)
                lines.append(f"| {st} | {med('count'):,.0f} | {med('mean_us'):,.1f} | {med('p50_us'):,.0f} | "
                             f"{med('p99_us'):,.0f} | {med('p999_us'):,.0f} |")
            lines.append("")
    return lines


def open_section(out, env):
    path = os.path.join(out, "open.csv")
    if not os.path.exists(path):
        return []
    rows = list(csv.DictReader(open(path)))
    cells = list(dict.fromkeys(r["cell"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    ol = env.get("open_loop") or {}
    lines = ["## Open loop: every system at one offered rate per cell", "",
             f"Offered rate = {ol.get('fraction')} x the slowest system's median closed-loop capacity in the cell "
             f"(capacities from {ol.get('capacities_from')}); {ol.get('generator')}. Percentiles in ms, medians "
             "over repeats; the p99 ratio pairs a run with the ceiling's run of the same repeat.", ""]
    for cell in cells:
        fanout, size, _ = cell.split(":")
        mine_cell = [r for r in rows if r["cell"] == cell]
        lines += [f"### fanout {fanout}, {size}, {mine_cell[0]['offered_rps']} req/s offered", "",
                  "| system | achieved req/s | p50 | p99 | p99.9 | p99 / ceiling's (median, min–max) | errors | "
                  "generator send lag p99 |", "|---|---|---|---|---|---|---|---|"]
        for s in systems:
            mine = [r for r in mine_cell if r["system"] == s]
            if not mine:
                continue
            def med(k, spec):
                vals = [float(r[k]) for r in mine if r[k]]
                return format(statistics.median(vals), spec) if vals else "n/a"
            ratios = []
            for r in mine:
                c = next((x for x in mine_cell if x["system"] == "ceiling" and x["repeat"] == r["repeat"]
                          and x["p99_ms"]), None)
                if c and float(c["p99_ms"]) > 0:
                    ratios.append(float(r["p99_ms"]) / float(c["p99_ms"]))
            ratio = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else "n/a"
            errors = sum(int(r["errors"]) for r in mine if r["errors"].isdigit())
            name = f"**{s}**" if s == "ceiling" else s
            lines.append(f"| {name} | {med('achieved_rps', ',.0f')} | {med('p50_ms', '.2f')} | {med('p99_ms', '.2f')} | "
                         f"{med('p999_ms', '.2f')} | {ratio} | {errors} | {med('send_lag_p99_ms', '.2f')} |")
        lines.append("")
    return lines


FRAMEWORK_PEERS = ("vertx", "vertx5", "reactor", "helidon")


def spread(ratios):
    """median (min–max), or n/a"""
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})" if ratios else "n/a"


def best_peer(runs, cell, repeat):
    """The fastest framework peer's req/s in one repeat of one cell (None without one)."""
    rates = [float(runs[(cell, p, repeat)]["requests_per_s"]) for p in FRAMEWORK_PEERS if (cell, p, repeat) in runs]
    return max(rates) if rates and max(rates) > 0 else None


def basis_section(out, rows, cells, env):
    """With --open-from the closed-loop rows are a copy of another run's raw.csv (or a hand-made one): they
    only set each cell's offered rate, and are shown as that basis, labelled in the table, not as this
    run's measurements."""
    ol = env.get("open_loop") or {}
    src = ol.get("capacities_from")
    offered = {}
    path = os.path.join(out, "open.csv")
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            offered.setdefault(r["cell"], r["offered_rps"])
    lines = ["## Offered-rate basis (not a measurement)", "",
             f"No closed-loop run was made here: raw.csv is a copy of {src}/raw.csv (--open-from), used only to set "
             f"each cell's offered rate, {ol.get('fraction')} x the slowest system's median req/s in the cell. Only "
             "the open-loop section below was measured in this run.", "",
             "| cell | slowest system's req/s (copied; of the systems run here) | offered req/s | what this row is |", "|---|---|---|---|"]
    for cell in [c for c in cells if c in offered] or cells:
        ran = set(env.get("systems") or [])
        mine = [r for r in rows if r["cell"] == cell and (not ran or r["system"] in ran)] \
            or [r for r in rows if r["cell"] == cell]
        medians = {}
        for r in mine:
            medians.setdefault(r["system"], []).append(float(r["requests_per_s"]))
        slowest = min(statistics.median(v) for v in medians.values())
        # a hand-made basis: one rate for every system, no latency
        made = all(float(r["p50_ms"] or 0) == 0 and float(r["p99_ms"] or 0) == 0 for r in mine)
        what = "not a measurement" if made else "measured there, not in this run"
        lines.append(f"| {cell} | {slowest:,.0f} | {offered.get(cell, 'n/a')} | "
                     f"{what}: offered-rate basis copied from {src} |")
    lines += ["", f"Environment: {out}/environment.json (git {env['git_commit'][:10]}"
                  f"{' dirty' if env.get('dirty') else ''}, {env['java']}, {env['cpu_model']}, kernel {env['kernel']}).", ""]
    return lines


def report(out):
    rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
    env = json.load(open(os.path.join(out, "environment.json")))
    cells, systems = [], []
    for r in rows:
        if r["cell"] not in cells:
            cells.append(r["cell"])
        if r["system"] not in systems:
            systems.append(r["system"])
    runs = {(r["cell"], r["system"], r["repeat"]): r for r in rows}
    lines = ["# The peers and the hand-written ceiling beside doubleface (bench/peers.sh)", ""]
    ol = env.get("open_loop") or {}
    copied = bool(ol) and ol.get("capacities_from") != out
    if copied:
        lines += basis_section(out, rows, cells, env)
    for cell in ([] if copied else cells):
        fanout, size, conns = cell.split(":")
        lines += [f"## fanout {fanout}, {size} ({SMALL if size == 'small' else LARGE} B values), {conns} connections", "",
                  "| system | req/s (median) | p50 ms | p99 ms | / ceiling (median, min–max over repeats) "
                  "| / best framework peer (same) | server CPU µs/request | shards' CPU µs/request | warm-up req/s / ceiling's | errors | runs |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in systems:
            mine = [r for r in rows if r["cell"] == cell and r["system"] == s]
            if not mine:
                continue
            rps = statistics.median(float(r["requests_per_s"]) for r in mine)
            p50 = statistics.median(float(r["p50_ms"]) for r in mine)
            p99 = statistics.median(float(r["p99_ms"]) for r in mine)
            ratios = []
            for r in mine:
                c = runs.get((cell, "ceiling", r["repeat"]))
                if c and float(c["requests_per_s"]) > 0:
                    ratios.append(float(r["requests_per_s"]) / float(c["requests_per_s"]))
            ratio = spread(ratios)
            peer = spread([float(r["requests_per_s"]) / best for r in mine
                           for best in [best_peer(runs, cell, r["repeat"])] if best]) if s.startswith("doubleface") else ""
            name = f"**{s}**" if s == "ceiling" else s
            cpus = [float(r["server_cpu_us_per_request"]) for r in mine if r.get("server_cpu_us_per_request")]
            cpu = f"{statistics.median(cpus):.1f}" if cpus else "n/a"
            shard_cpus = [float(r["shards_cpu_us_per_request"]) for r in mine if r.get("shards_cpu_us_per_request")]
            shard_cpu = f"{statistics.median(shard_cpus):.1f}" if shard_cpus else "n/a"
            warm = []
            for r in mine:
                c = runs.get((cell, "ceiling", r["repeat"]))
                if r.get("warmup_requests_per_s") and c and c.get("warmup_requests_per_s"):
                    warm.append(float(r["warmup_requests_per_s"]) / float(c["warmup_requests_per_s"]))
            warm = spread(warm) if warm else "n/a"
            lines.append(f"| {name} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {ratio} | {peer} | {cpu} | {shard_cpu} | {warm} | "
                         f"{sum(int(r['errors']) for r in mine)} | {len(mine)} |")
        lines.append("")
    layout = (f"Each server pinned to CPU 0 with 1 I/O thread; the 20 redis-server shards and wrk share CPU 1."
              if env.get("layout", "pinned") == "pinned" else
              f"Unpinned: each server with {env['pinning']['server'].split(', ')[1]}; the 20 redis-server shards and "
              f"wrk ({env['pinning']['wrk'].split(', ')[1]}) share the {env['cpus']} cores with it.")
    wrk_t = "1" if env.get("layout", "pinned") == "pinned" else "T"
    lines += [] if copied else [f"wrk -t{wrk_t} -cN, {env['repeats']} repeat(s) of {env['duration_s']} s after a {env['warmup_s']} s warm-up "
              f"(a fresh JVM per run; the warm-up column is the ratio over the discarded warm-up, while the JIT compiles). {layout} The best framework peer is, per repeat, the fastest of Vert.x (4.5 and 5), "
              "Reactor Netty and Helidon in that run. Systems in rotated order per repeat and cell; a ratio pairs a run with the "
              "ceiling's run of the same repeat and cell. wrk's p99 is closed-loop (docs/measuring.md#open-and-closed-loop-coordinated-omission): it shows "
              "queueing at saturation, not the latency at a given load.", "",
              f"Environment: {out}/environment.json (git {env['git_commit'][:10]}{' dirty' if env.get('dirty') else ''}, "
              f"{env['java']}, {env['cpu_model']}, kernel {env['kernel']}).", ""]
    lines += open_section(out, env)
    lines += stage_section(out)
    lines += kernel_section(out)
    text = "\n".join(lines)
    open(os.path.join(out, "report.md"), "w").write(text)
    print(text)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "dataset":
        dataset(*args)
    elif cmd == "check":
        check(*args)
    elif cmd == "row":
        row(*args)
    elif cmd == "header":
        print(HEADER)
    elif cmd == "openheader":
        print(OPEN_HEADER)
    elif cmd == "openrate":
        open_rate(*args)
    elif cmd == "openrow":
        open_row(*args)
    elif cmd == "stageheader":
        print(STAGE_HEADER)
    elif cmd == "stagerows":
        stage_rows(*args)
    elif cmd == "kernelheader":
        print(KERNEL_HEADER)
    elif cmd == "kernelrows":
        kernel_rows(*args)
    elif cmd == "report":
        report(*args)
    else:
        sys.exit("unknown command: " + cmd)


if __name__ == "__main__":
    main()
