#!/usr/bin/env python3
"""Busy share of the mid-tier's I/O loop per window, per offered load: calibrates the load
adapter's saturation signal (--tune-saturation, docs/tuning.md).

Starts a KV leaf (20 shards) and `serve ycsb --config CONFIG` like the mutune experiments
(mid-tier pinned to CPU 0, leaf and generator to CPU 1, one I/O loop), runs one open-loop load
per offered rate (fanout 5, small replies, 3 s warm-up after a 10-s warm-up of the mid-tier), polls /admin/stats every --poll-ms and
prints, per rate, the distribution of the loop's busy share over --window-ms windows (the
quantity the adapter compares with its threshold) next to the run's p99 from the generator.

Usage: bench/loop-utilization.py --config doubleface-poll --steps 4000,8000,12000,14000 \
           [--step-s 6] [--window-ms 100] [--out FILE.json]
Bounded: every run stops by itself after the schedule; all processes are killed on exit.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAR = os.path.join(ROOT, "cli", "target", "doubleface.jar")
JAVA = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "java")


def free_port_range(n):
    for base in range(20600, 30000, 50):
        ok = True
        for p in range(base, base + n):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            finally:
                s.close()
            if not ok:
                break
        if ok:
            return base
    raise SystemExit("no free port range")


def cli(cpu, args, log):
    cmd = ["taskset", "-c", cpu, JAVA, "-Xms1g", "-Xmx1g", "-cp", JAR, "io.doubleface.cli.DoubleFaceCli"] + args
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)


def wait_for(path, pattern, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path) as f:
            m = re.search(pattern, f.read())
        if m:
            return m
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {pattern!r} in {path}")


def thread_cpu_s(pid, name):
    """CPU seconds (user + system) of the thread of `pid` named `name`, from /proc."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return float("nan")


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True, help="static configuration, e.g. doubleface-poll")
    ap.add_argument("--steps", required=True, help="offered loads, req/s, comma-separated")
    ap.add_argument("--step-s", type=float, default=6, help="seconds per step (default 6)")
    ap.add_argument("--window-ms", type=int, default=200, help="busy-share window (default 200, the adapter's)")
    ap.add_argument("--poll-ms", type=int, default=25, help="/admin/stats poll period (default 25)")
    ap.add_argument("--threshold", type=float, default=0.98, help="report the share of windows at or above this")
    ap.add_argument("--reply-work-us", type=int, default=0,
                    help="CPU work per shard reply on the mid-tier (serve --reply-work-us), to make its loop the bottleneck")
    ap.add_argument("--out", help="write the per-step results as JSON here")
    a = ap.parse_args()
    if not os.path.exists(JAR):
        raise SystemExit(f"{JAR} missing: build first (./mvnw -q install -DskipTests, or run ./doubleface --help)")
    steps = [int(x) for x in a.steps.split(",")]
    work = f"/tmp/loop-util-{os.getpid()}"
    os.makedirs(work, exist_ok=True)
    procs = []
    try:
        base = free_port_range(20)
        leaf_log = open(f"{work}/leaf.log", "w")
        procs.append(cli("1", ["leaf", "kv", "--shards", "20", "--base-port", str(base), "--records", "1000",
                               "--loops", "1"], leaf_log))
        time.sleep(3)
        mid_log = open(f"{work}/mid.log", "w")
        procs.append(cli("0", ["serve", "ycsb", "--shards", f"kv://127.0.0.1:{base}-{base + 19}", "--port", "0",
                               "--admin-port", "0", "--io-threads", "1", "--records", "1000", "--deadline", "5000ms",
                               "--reply-work-us", str(a.reply_work_us),
                               "--config", a.config], mid_log))
        port = int(wait_for(f"{work}/mid.log", r"listening on http://[^ ]+:(\d+)", 60).group(1))
        admin = int(wait_for(f"{work}/mid.log", r"admin +http://[^ ]+:(\d+)/admin/config", 10).group(1))
        print(f"mid-tier {a.config} on :{port}, admin :{admin}; logs in {work}", file=sys.stderr)
        samples = []  # (t, busy_ms, idle_ms)
        stop = threading.Event()

        def poll():
            url = f"http://127.0.0.1:{admin}/admin/stats"
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        d = json.load(r)
                    io = [l for l in d["loops"] if l["group"] == "io"][0]
                    samples.append((time.monotonic(), io["busy_ms"], io["idle_ms"]))
                except Exception as e:  # noqa: BLE001 - keep polling through a slow moment
                    print(f"poll: {e}", file=sys.stderr)
                time.sleep(a.poll_ms / 1000)

        warm = f"steps:{min(steps)}@5s,{max(steps) // 2}@5s"  # JIT-compile the mid-tier first
        subprocess.run(["taskset", "-c", "1", JAVA, "-XX:TieredStopAtLevel=1", "-cp", JAR,
                        "io.doubleface.cli.DoubleFaceCli", "load", "--target", f"http://127.0.0.1:{port}",
                        "--schedule", warm, "--url", "/query?fanout=5&size=small&key={key}", "--warmup", "0s",
                        "--quiet", "--json"], stdout=subprocess.DEVNULL, check=True, timeout=120)
        t = threading.Thread(target=poll, daemon=True)
        t.start()
        results = []
        w = a.window_ms / 1000
        for rate in steps:
            t0 = time.monotonic()
            cpu0 = thread_cpu_s(procs[1].pid, "io-0")
            out = subprocess.run(["taskset", "-c", "1", JAVA, "-XX:TieredStopAtLevel=1", "-cp", JAR,
                                  "io.doubleface.cli.DoubleFaceCli", "load", "--target", f"http://127.0.0.1:{port}",
                                  "--rate", str(rate), "--url", "/query?fanout=5&size=small&key={key}",
                                  "--warmup", "3s", "--duration", f"{int(a.step_s * 1000)}ms",
                                  "--max-connections", "2048", "--quiet", "--json"],
                                 capture_output=True, text=True, timeout=120 + a.step_s * 3)
            t1 = time.monotonic()
            cpu_share = (thread_cpu_s(procs[1].pid, "io-0") - cpu0) / (t1 - t0)
            lr = json.loads(out.stdout) if out.stdout.strip() else {}
            pts = [x for x in samples if t0 + 3.5 <= x[0] <= t1]  # after the generator's warm-up
            shares = []
            for j, (ts, b, idl) in enumerate(pts):
                k = j
                while k < len(pts) and pts[k][0] - ts < w:
                    k += 1
                if k == len(pts):
                    break
                db, di = pts[k][1] - b, pts[k][2] - idl
                if db + di >= 0.25 * a.window_ms:
                    shares.append(db / (db + di))
            r = {"offered": rate, "achieved_rps": lr.get("achieved_rate"), "p99_ms": lr.get("p99_ms"),
                 "max_ms": lr.get("max_ms"), "io0_cpu_share_whole_run": round(cpu_share, 3), "windows": len(shares), "busy_p1": pct(shares, 0.01),
                 "busy_p50": pct(shares, 0.5), "busy_p99": pct(shares, 0.99),
                 "at_or_above_threshold": (sum(1 for x in shares if x >= a.threshold) / len(shares)) if shares else None}
            results.append(r)
            print(f"{a.config:16s} {rate:6d} req/s (achieved {r['achieved_rps']}, p99 {r['p99_ms']} ms, max "
                  f"{r['max_ms']} ms)  busy share over {a.window_ms} ms: p1 {r['busy_p1']:.3f} p50 "
                  f"{r['busy_p50']:.3f} p99 {r['busy_p99']:.3f}; windows >= {a.threshold}: "
                  f"{100 * (r['at_or_above_threshold'] or 0):.1f}% of {r['windows']}; io-0 CPU {cpu_share:.2f}", flush=True)
        stop.set()
        t.join()
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"config": a.config, "reply_work_us": a.reply_work_us, "window_ms": a.window_ms, "threshold": a.threshold,
                           "steps": results}, f, indent=1)
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


if __name__ == "__main__":
    main()
