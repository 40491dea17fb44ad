#!/usr/bin/env python3
"""The report of bench/cluster-failover.sh from its files: OUT CONFIG RATE DURATION WARMUP KILL_AT URL."""
import csv, json, os, platform, subprocess, sys
out, config, rate, duration, warmup, kill_at, url = sys.argv[1:8]
kill, promoted = (int(x) for x in open(f"{out}/events.txt").read().split())
tl = [r for r in csv.DictReader(open(f"{out}/timeline.csv")) if r["ok"]]
prev = None; first_err = last_err = None; failed_total = 0; map_change = None; owner_change = None
v0 = tl[0]["slot_map_version"] if tl else ""
o0 = tl[0]["owner_of_slot_0"] if tl else ""
for r in tl:
    t = int(r["epoch_ms"])
    if prev is not None:
        df = int(r["failed"]) - int(prev["failed"])
        if df > 0 and t >= kill:
            failed_total += df
            first_err = first_err or max(kill, int(prev["epoch_ms"]))
            last_err = t
    if map_change is None and r["slot_map_version"] != v0 and t >= kill:
        map_change = t
    if owner_change is None and r["owner_of_slot_0"] != o0 and t >= kill:
        owner_change = t
    prev = r
secs = [r for r in csv.DictReader(open(f"{out}/seconds.csv")) if int(r["count"]) > 0]
def phase(rows):
    if not rows: return "n/a"
    p99 = sorted(float(r["p99_ms"]) for r in rows)
    return f"p99 per second {p99[len(p99)//2]:.2f} ms median, {p99[-1]:.2f} ms worst; max {max(float(r['max_ms']) for r in rows):.2f} ms; {sum(int(r['count']) for r in rows)} requests"
end_err = (last_err or kill) + 1000
before = [r for r in secs if int(r["start_ms"]) + 1000 <= kill]
during = [r for r in secs if int(r["start_ms"]) + 1000 > kill and int(r["start_ms"]) < end_err]
after = [r for r in secs if int(r["start_ms"]) >= end_err]
load = json.load(open(f"{out}/load.json"))
rel = lambda t: "never" if not t else f"+{t - kill} ms"
lines = [f"# Redis Cluster fail-over under open-loop load ({config})", "",
         f"`bench/cluster-failover.sh --config {config} --rate {rate} --duration {duration} --warmup {warmup} --kill-at {kill_at}`: "
         f"the YCSB mid-tier over 3 masters with a replica each, `{url}` at {rate} req/s (Poisson), master 0 shut down "
         f"{kill_at} s into the {duration}-s window. Times from the shutdown; the mid-tier's counters polled every 100 ms.", "",
         "| event | when |", "|---|---|",
         f"| master 0 shut down (`redis-cli shutdown nosave`) | 0 |",
         f"| its replica reports role master | {rel(promoted)} |",
         f"| the mid-tier's slot map first changes (`/admin/stats` topology: `slot_map_version`) | {rel(map_change)} |",
         f"| the mid-tier's map names the promoted replica as the owner of slot 0 | {rel(owner_change)} |",
         f"| first failed request (503/504) seen (100-ms samples) | {rel(first_err)} |",
         f"| last failed request seen | {rel(last_err)} |", "",
         f"Failed requests in between: {failed_total} (load generator: {load['errors']} errors of {load['requests']} measured, "
         f"{json.dumps(load.get('errors_by_kind', {}))}; {load['failed']['requests']} answers with status >= 400).", "",
         "| phase | latency (load generator, from the intended send time) |", "|---|---|",
         f"| before the shutdown | {phase(before)} |",
         f"| from the shutdown to a second after the last failure | {phase(during)} |",
         f"| after | {phase(after)} |", "",
         f"Whole window: p50 {load.get('p50_ms')} ms, p99 {load.get('p99_ms')} ms, p99.9 {load.get('p999_ms') if load.get('p999_ms') is not None else 'n/a (fewer than 100,000 samples)'} ms, max {load.get('max_ms')} ms.", ""]
open(f"{out}/report.md", "w").write("\n".join(lines))
def run(*c):
    p = subprocess.run(c, capture_output=True, text=True); return (p.stdout or p.stderr).strip().splitlines()[0]
json.dump({"script": "bench/cluster-failover.sh", "git_commit": run("git", "rev-parse", "HEAD"), "config": config,
           "rate": int(rate), "duration_s": int(duration), "warmup_s": int(warmup), "kill_at_s": int(kill_at), "url": url,
           "java": run(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64") + "/bin/java", "-version"),
           "kernel": platform.release(), "cpus": os.cpu_count(), "redis_server": run("redis-server", "--version"),
           "pinning": {"mid-tier": "CPU 0, 1 I/O loop", "redis nodes + load generator": "CPU 1"}},
          open(f"{out}/environment.json", "w"), indent=2)
print("\n".join(lines))
