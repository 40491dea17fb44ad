#!/usr/bin/env python3
"""The checks of docker/smoke.sh (Python 3; PyYAML for default-services); each prints what it
found and exits 1 with the reason when the check fails.

  default-services             the services of a `compose config` (on stdin) that no profile gates
  free-ports N                 N free TCP ports on 127.0.0.1, one per line
  ready-port FILE              the "port" of a `serve --ready-file` JSON file
  replies REF_PORT PORT SEED   the topology's replies against a reference mid-tier's
  experiment SUMMARY_JSON      every run of an experiment answered, without an error
  load LOAD_JSON               a `doubleface load --json` summary: answered, without an error
  prometheus PORT JOB SUMMARY  Prometheus scrapes JOB and has seen the experiment's requests
"""
import http.client
import json
import random
import socket
import sys
import time
import urllib.parse
import urllib.request

RECORDS = 1000  # records per shard in every compose topology (--records 1000)
FANOUTS = (1, 2, 3, 4)  # every topology has at least 4 shards
SIZES = ("small", "medium", "large")


def fail(msg):
    print(f"smoke: {msg}", file=sys.stderr)
    sys.exit(1)


def default_services():
    import yaml  # Debian: python3-yaml; only this command needs it

    for name, svc in yaml.safe_load(sys.stdin)["services"].items():
        if not svc.get("profiles"):
            print(name)


def free_ports(n):
    socks = []
    for _ in range(int(n)):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    for s in socks:
        print(s.getsockname()[1])
        s.close()


def ready_port(path):
    print(json.load(open(path))["port"])


def get(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()


def replies(ref_port, port, seed):
    """Every fanout and size, for the first and last keys and random ones: same status, same bytes."""
    rnd = random.Random(int(seed))
    ref = http.client.HTTPConnection("127.0.0.1", int(ref_port), timeout=10)
    top = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
    checked = 0
    for size in SIZES:
        for fanout in FANOUTS:
            for key in (0, RECORDS - 1, *rnd.sample(range(1, RECORDS - 1), 4)):
                path = f"/query?fanout={fanout}&size={size}&key={key}"
                want_status, want = get(ref, path)
                status, got = get(top, path)
                if want_status != 200:
                    fail(f"the reference mid-tier answered {path} with {want_status}")
                if status != 200 or got != want:
                    fail(f"{path}: the topology answered {status}, {len(got)} bytes, not the reference's "
                         f"200, {len(want)} bytes:\n  got  {got[:300]!r}\n  want {want[:300]!r}")
                checked += 1
    # a key past the records is refused by both
    path = f"/query?fanout=1&size=small&key={RECORDS}"
    want_status, _ = get(ref, path)
    status, _ = get(top, path)
    if status != want_status:
        fail(f"{path}: the topology answered {status}, the reference {want_status}")
    print(f"smoke: {checked} replies byte-identical to the reference mid-tier's (fanouts 1-4, "
          f"small/medium/large, keys 0, {RECORDS - 1} and random); key {RECORDS} refused with {status} by both")


def check_load(name, load):
    """A load summary (load --json, or a run of an experiment): answered, nothing lost."""
    problems = []
    if not load.get("requests"):
        problems.append("no request answered")
    if load.get("errors"):
        problems.append(f"{load['errors']} errors {load.get('errors_by_kind')}")
    if load.get("unfinished"):
        problems.append(f"{load['unfinished']} unanswered at the end")
    if problems:
        fail(f"{name}: " + "; ".join(problems))


def ms(v):
    return "n/a" if v is None else f"{v:.2f} ms"


def experiment(path):
    summary = json.load(open(path))
    runs = summary.get("runs") or []
    if not runs:
        fail(f"{path}: no run")
    answered = 0
    print(f"{'point':<22} {'configuration':<14} {'req/s':>8} {'p50':>10} {'p99':>10} {'answered':>9} {'errors':>6}")
    for r in runs:
        load = r["load"]
        print(f"{r['point']:<22} {r['config']:<14} {load['throughput_rps']:>8.0f} {ms(load['p50_ms']):>10} "
              f"{ms(load['p99_ms']):>10} {load['requests']:>9} {load['errors']:>6}")
    for r in runs:
        check_load(f"experiment run {r['point']} {r['config']}", r["load"])
        answered += r["load"]["requests"]
    print(f"smoke: experiment {summary['experiment']}: {len(runs)} runs, {answered} requests answered, 0 errors")


def load(path):
    summary = json.load(open(path))
    check_load(f"load {summary.get('target')}", summary)
    print(f"smoke: load {summary.get('target')} {summary.get('mix')}: {summary['requests']} answered, "
          f"{summary['throughput_rps']:.0f} req/s, p50 {ms(summary['p50_ms'])}, p99 {ms(summary['p99_ms'])}, 0 errors")


def prom(port, path, **params):
    url = f"http://127.0.0.1:{port}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{url}: {body}")
    return body["data"]


def prometheus(port, job, summary_path, timeout_s=45):
    """The job's target is up with no scrape error, and a scrape after the experiment has its requests."""
    answered = sum(r["load"]["requests"] for r in json.load(open(summary_path))["runs"])
    deadline = time.monotonic() + timeout_s
    last = "Prometheus did not answer"
    while time.monotonic() < deadline:
        try:
            targets = [t for t in prom(port, "/api/v1/targets")["activeTargets"] if t["labels"].get("job") == job]
            if not targets:
                last = f"no active target of job {job}"
            elif any(t["health"] != "up" for t in targets):
                last = "; ".join(f"{t['scrapeUrl']}: {t['health']} {t['lastError']}" for t in targets)
            else:
                up = prom(port, "/api/v1/query", query=f'up{{job="{job}"}}')["result"]
                ok = prom(port, "/api/v1/query", query=f'sum(doubleface_requests_total{{job="{job}",outcome="ok"}})')["result"]
                seen = float(ok[0]["value"][1]) if ok else 0.0
                if up and all(s["value"][1] == "1" for s in up) and seen >= answered:
                    t = targets[0]
                    print(f"smoke: prometheus: target {t['scrapeUrl']} up (last scrape {t['lastScrapeDuration'] * 1000:.0f} ms, "
                          f"no error); up{{job=\"{job}\"}} = 1; doubleface_requests_total{{outcome=\"ok\"}} = {seen:.0f} "
                          f"(the experiment alone answered {answered})")
                    return
                last = f"up{{job=\"{job}\"}} = {[s['value'][1] for s in up]}, ok requests seen {seen:.0f} < {answered}"
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            last = f"{type(e).__name__}: {e}"
        time.sleep(1)
    fail(f"prometheus on 127.0.0.1:{port} within {timeout_s} s: {last}")


COMMANDS = {"default-services": default_services, "free-ports": free_ports, "ready-port": ready_port, "replies": replies,
            "experiment": experiment, "load": load, "prometheus": prometheus}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
