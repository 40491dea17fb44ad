#!/usr/bin/env python3
"""The helper of bench/rolling.sh (a rolling restart of mid-tier replicas behind HAProxy, under load).

  rolling.py refs --target URL --url TEMPLATE --keys N --out refs.json
      fetches the answer to TEMPLATE for every key 0..N-1 from a reference mid-tier (one that is not
      behind the balancer) and keeps its SHA-1 and length per key: what every answer is checked against.
  rolling.py sample --stats URL --admins PORT,PORT,... --out timeline.csv --stop FILE --max-seconds S
      every 100 ms until FILE exists: each replica's state as HAProxy sees it (its stats CSV: status,
      current sessions, retries and redispatches counted) and the answer of its admin GET /ready; and
      each second, in cpu.csv one directory up from --out, the machine's CPU used by the processes
      of the script that started it and by everything else.
  rolling.py analyse DIR
      checks every line of DIR/haproxy.log (one per answer HAProxy forwarded: status, replica, retries,
      the SHA-1 of the body) against DIR/refs.json; reads DIR/load.json and DIR/load.hlog (the load
      generator), DIR/events.txt (what the script did, epoch ms) and DIR/runs/timeline.csv; writes
      DIR/summary.json, DIR/seconds.csv (answers per second per replica), DIR/notable.log (every
      answer that was not a plain 200 with the right body on the first try) and keeps the full log
      out of the results (deleted unless --keep-log).
  rolling.py report OUT
      writes OUT/report.md from the summary.json of each scenario directory under OUT.
  rolling.py table RUN RUN ...
      prints one table over the scenarios of several runs (for a page that compares runs).
"""
import argparse
import base64
import csv
import glob
import hashlib
import http.client
import json
import math
import os
import re
import struct
import sys
import time
import urllib.request
import zlib

# --- HdrHistogram interval logs (doubleface load --hlog), decoded here so that a phase of the run
# --- (before / during / after the restarts) gets percentiles of its own merged histogram.

V2_ENCODING = 0x1C849303
V2_COMPRESSED = 0x1C849304


class Hist:
    """Counts per HdrHistogram index, with the value mapping of the Java implementation."""

    def __init__(self, lowest, digits):
        self.unit = int(math.floor(math.log2(lowest)))
        largest_single = 2 * 10 ** digits
        self.sub_count_mag = int(math.ceil(math.log2(largest_single)))
        self.sub_half_mag = max(self.sub_count_mag - 1, 0)
        self.sub_count = 1 << self.sub_count_mag
        self.sub_half = self.sub_count >> 1
        self.key = (lowest, digits)  # what the index-to-value mapping depends on (not the highest value)
        self.counts = {}

    def value_range(self, index):
        """(lowest, highest) value equivalent to the counts at index."""
        bucket = (index >> self.sub_half_mag) - 1
        sub = (index & (self.sub_half - 1)) + self.sub_half
        if bucket < 0:
            sub -= self.sub_half
            bucket = 0
        low = sub << (bucket + self.unit)
        return low, low + (1 << (bucket + self.unit)) - 1

    def add(self, other):
        assert self.key == other.key, "histograms of different configurations"
        for i, c in other.counts.items():
            self.counts[i] = self.counts.get(i, 0) + c

    def total(self):
        return sum(self.counts.values())

    def percentile(self, p):
        """Like Java's getValueAtPercentile: the highest value equivalent to the sample at p."""
        n = self.total()
        if n == 0:
            return None
        want = max(math.ceil(math.nextafter(p, -math.inf) * n / 100.0), 1)
        seen = 0
        for i in sorted(self.counts):
            seen += self.counts[i]
            if seen >= want:
                return self.value_range(i)[1]
        return None

    def max(self):
        return self.value_range(max(self.counts))[1] if self.counts else None


def zigzag_varints(buf, pos, end):
    while pos < end:
        value = shift = 0
        for n in range(9):
            b = buf[pos]
            pos += 1
            if n == 8:  # the ninth byte holds 8 bits
                value |= b << 56
                break
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield (value >> 1) ^ -(value & 1)


def decode_histogram(text):
    raw = base64.b64decode(text)
    cookie, length = struct.unpack(">ii", raw[:8])
    if cookie & ~0xF0 != V2_COMPRESSED & ~0xF0:
        raise ValueError(f"not a compressed V2 histogram (cookie {cookie:#x})")
    data = zlib.decompress(raw[8:8 + length])
    cookie, payload, offset, digits, lowest, highest, _ratio = struct.unpack(">iiiiqqd", data[:40])
    if cookie & ~0xF0 != V2_ENCODING & ~0xF0 or offset != 0:
        raise ValueError(f"unsupported histogram encoding (cookie {cookie:#x}, offset {offset})")
    h = Hist(lowest, digits)
    index = 0
    for v in zigzag_varints(data, 40, 40 + payload):
        if v < 0:
            index += -v
        else:
            if v:
                h.counts[index] = h.counts.get(index, 0) + v
            index += 1
    return h


def read_hlog(path):
    """[(start epoch ms, end epoch ms, Hist)] of the untagged (latency) intervals."""
    base = start = None
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"#\[(StartTime|BaseTime): ([0-9.]+)", line)
            if m:
                if m.group(1) == "StartTime":
                    start = float(m.group(2))
                else:
                    base = float(m.group(2))
                continue
            if not line or line.startswith("#") or line.startswith('"') or line.startswith("Tag="):
                continue
            ts, length, _max, enc = line.split(",", 3)
            t = float(ts)
            if t < 365 * 86400:  # relative to the log's base (or start) time
                t += base if base is not None else (start or 0.0)
            out.append((int(t * 1000), int((t + float(length)) * 1000), decode_histogram(enc)))
    return out


def merged(intervals):
    if not intervals:
        return None
    h = Hist(*intervals[0][2].key)
    for _s, _e, x in intervals:
        h.add(x)
    return h


def latency(h):
    """p50/p99/max in ms of a histogram of µs; as the generator reports them, a percentile p only with at
    least 100/(1-p) samples (p99: 10,000), else None."""
    if h is None or h.total() == 0:
        return {"requests": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    n = h.total()
    return {"requests": n, "p50_ms": round(h.percentile(50) / 1000, 3),
            "p99_ms": round(h.percentile(99) / 1000, 3) if n >= 10000 else None,
            "max_ms": round(h.max() / 1000, 3)}


# --- refs

def refs(a):
    host, port = re.match(r"http://([^:/]+):(\d+)", a.target).groups()
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    out = {"template": a.url, "target": a.target, "keys": a.keys, "sha1": {}, "length": {}}
    for k in range(a.keys):
        path = a.url.replace("{key}", str(k))
        for attempt in range(3):
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read()
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=10)
                if attempt == 2:
                    raise
        if r.status != 200:
            sys.exit(f"refs: {path} answered {r.status}: {body[:200]!r}")
        out["sha1"][str(k)] = hashlib.sha1(body).hexdigest().upper()
        out["length"][str(k)] = len(body)
    out["max_length"] = max(out["length"].values())
    with open(a.out, "w") as f:
        json.dump(out, f)
    print(f"refs: {a.keys} answers of {a.url} from {a.target}, {out['max_length']} bytes at most")


# --- sample

def proc_times(root):
    """{pid: utime + stime (clock ticks)} of root and every process below it."""
    parent, ticks = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = int(fields[1])
        ticks[int(pid)] = int(fields[11]) + int(fields[12])
    ours = {}
    for pid in ticks:
        p, seen = pid, 0
        while p and p != root and seen < 64:
            p, seen = parent.get(p, 0), seen + 1
        if p == root:
            ours[pid] = ticks[pid]
    return ours


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)


def sample(a):
    admins = [int(p) for p in a.admins.split(",")]
    # the script that started this sampler (through `timeout`): its processes are "ours", the rest "others"
    with open(f"/proc/{os.getppid()}/stat") as f:
        root = int(f.read().rsplit(")", 1)[1].split()[1])
    cpu_out = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.out))), "cpu.csv"), "w")
    cpu_out.write("epoch_ms,machine_busy_pct,ours_pct,others_pct,loadavg_1m\n")
    last_cpu = None
    names = [f"m{i + 1}" for i in range(len(admins))]
    end = time.time() + a.max_seconds
    with open(a.out, "w") as f:
        w = csv.writer(f)
        w.writerow(["epoch_ms"] + [f"{n}_{c}" for n in names for c in ("haproxy", "scur", "wretr", "wredis", "ready")])
        while time.time() < end and not os.path.exists(a.stop):
            t = int(time.time() * 1000)
            state = {}
            try:
                with urllib.request.urlopen(a.stats + ";csv", timeout=1) as r:
                    rows = list(csv.reader(r.read().decode().lstrip("# ").splitlines()))
                head = rows[0]
                for row in rows[1:]:
                    d = dict(zip(head, row))
                    if d.get("pxname") == "mid" and d.get("svname") in names:
                        state[d["svname"]] = (d["status"], d["scur"], d["wretr"], d["wredis"])
            except OSError:
                pass
            row = [t]
            for n, p in zip(names, admins):
                s = state.get(n, ("", "", "", ""))
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{p}/ready", timeout=0.5) as r:
                        ready = r.status
                except urllib.error.HTTPError as e:
                    ready = e.code
                except OSError:
                    ready = "refused"
                row += list(s) + [ready]
            w.writerow(row)
            f.flush()
            if last_cpu is None or t - last_cpu[0] >= 1000:
                busy, total = machine_busy()
                ours = proc_times(root)
                if last_cpu is not None:
                    dt = total - last_cpu[2]
                    # a process new since the last sample used all its CPU since then; one that exited
                    # since is not seen (its last second counts as "others")
                    ours_d = sum(v - last_cpu[3].get(p, 0) for p, v in ours.items())
                    if dt > 0:
                        mb = 100 * (busy - last_cpu[1]) / dt
                        op = 100 * ours_d / dt  # /proc/stat's total is over all CPUs, in the same ticks
                        cpu_out.write(f"{t},{mb:.1f},{op:.1f},{max(mb - op, 0):.1f},{open('/proc/loadavg').read().split()[0]}\n")
                        cpu_out.flush()
                last_cpu = (t, busy, total, ours)
            time.sleep(max(0.0, 0.1 - (time.time() * 1000 - t) / 1000))


# --- analyse

LOG = re.compile(r"^(?P<ms>\d{13}) (?P<th>-?\d+) (?P<ti>-?\d+) (?P<client>\S+) (?P<server>\S+) (?P<retries>\+?-?\d+) (?P<status>-?\d+) "
                 r"(?P<bytes>\d+) (?P<tw>-?\d+) (?P<tc>-?\d+) (?P<tr>-?\d+) (?P<ta>-?\d+) (?P<term>\S{4}) "
                 r"(?P<method>\S+) (?P<uri>\S+) (?P<sha>[0-9A-F]{40}|-)$")


def read_events(path):
    ev = []
    with open(path) as f:
        for line in f:
            p = line.split(None, 3)
            if len(p) >= 2:
                ev.append({"ms": int(p[0]), "event": p[1], "replica": p[2] if len(p) > 2 else "",
                           "detail": p[3].strip() if len(p) > 3 else ""})
    return ev


def first(ev, name, replica=None):
    return next((e["ms"] for e in ev if e["event"] == name and (replica is None or e["replica"] == replica)), None)


TCP = re.compile(r"^(\d+)\.(\d{6}) IP [\d.]+\.(\d+) > [\d.]+\.(\d+): Flags \[([^\]]*)\]")


def read_closes(path, scenario, bounds):
    """Every FIN and RST tcpdump saw on HAProxy's port and the replicas' ports, counted by who sent it to
    whom and by phase; the closes of client connections by HAProxy in the measured window listed."""
    if not os.path.exists(path):
        return None
    t_measure, t_action, t_back, t_end = bounds
    ha = scenario["ports"]["haproxy"]
    replicas = {p: f"m{i + 1}" for i, p in enumerate(scenario["ports"]["replicas"])}
    name = lambda port: "haproxy" if port == ha else replicas.get(port, "client" if port != ha else "haproxy")
    counts = {}
    to_clients = []
    first_close = {}  # client port -> who closed that connection first
    for line in open(path, errors="replace"):
        m = TCP.match(line)
        if not m:
            continue
        ms = int(m.group(1)) * 1000 + int(m.group(2)) // 1000
        sport, dport, flags = int(m.group(3)), int(m.group(4)), m.group(5)
        kind = "RST" if "R" in flags else "FIN"
        src = name(sport) if sport in replicas or sport == ha else ("haproxy" if dport in replicas else "client")
        dst = name(dport) if dport in replicas or dport == ha else ("haproxy" if sport in replicas else "client")
        phase = ("warm-up" if t_measure is None or ms < t_measure else "before" if t_action is None or ms < t_action
                 else "during" if t_back is None or ms <= t_back else "after" if t_end is None or ms <= t_end else "end")
        key = f"{kind} {src}->{dst}"
        counts.setdefault(key, {}).setdefault(phase, 0)
        counts[key][phase] += 1
        if "client" in (src, dst):
            port = dport if dst == "client" else sport
            if port not in first_close:
                first_close[port] = src
                if src == "haproxy" and phase in ("before", "during", "after"):
                    to_clients.append(f"{kind} at {ms - (t_action or 0):+,} ms from the action, client port {port}")
    return {"counts": counts, "haproxy_closed_a_client_connection": to_clients}


def spans(items):
    """'N (FIN at +a … +b ms from the action)' for a list of 'KIND at +X ms from the action, …' strings."""
    by = {}
    for it in items:
        m = re.match(r"(\S+) at ([+-][\d,]+) ms", it)
        if m:
            by.setdefault(m.group(1), []).append(int(m.group(2).replace(",", "")))
    return "; ".join(f"{len(v)} {k} at {min(v):+,} … {max(v):+,} ms from the action" for k, v in sorted(by.items()))


def read_cpu(d):
    """CPU seconds used by the scenario's processes (bash `times`: its reaped children) and by the whole
    machine (/proc/stat) between the start and the end of the scenario: what else ran meanwhile."""
    def mark(tag):
        p = os.path.join(d, "runs", f"cpu-{tag}.txt")
        if not os.path.exists(p):
            return None
        lines = open(p).read().split("\n")
        secs = lambda t: sum(float(m) * 60 + float(s_) for m, s_ in re.findall(r"(\d+)m([\d.]+)s", t))
        stat = [int(x) for x in lines[2].split()[1:]]
        hz = os.sysconf("SC_CLK_TCK")
        return {"ours": secs(lines[1]), "busy": (sum(stat) - stat[3] - stat[4]) / hz, "ms": int(lines[3])}
    a, b = mark("start"), mark("end")
    if not a or not b:
        return None
    wall = (b["ms"] - a["ms"]) / 1000
    ours, busy = b["ours"] - a["ours"], b["busy"] - a["busy"]
    others = max(busy - ours, 0.0)  # the two clocks differ by a tick or so: a quiet machine can come out below 0
    return {"wall_s": round(wall, 1), "cpus": os.cpu_count(), "machine_busy_cpu_s": round(busy, 1),
            "this_scenario_cpu_s": round(ours, 1), "others_cpu_s": round(others, 1),
            "others_share_of_machine": round(others / (wall * os.cpu_count()), 3) if wall > 0 else None}


def analyse(a):
    d = a.dir
    refs_ = json.load(open(os.path.join(d, "refs.json")))
    ev = read_events(os.path.join(d, "events.txt"))
    scenario = json.load(open(os.path.join(d, "scenario.json")))
    t_measure = first(ev, "measuring")
    t_action = first(ev, "action")
    t_back = first(ev, "all-up")
    t_end = first(ev, "load-done")
    key_re = re.compile(r"[?&]key=(\d+)")
    lines = ok = wrong = failed = retried = failed_measured = 0
    empty = []
    in_window = 0
    per_second = {}
    failures = {}
    retried_by_phase = {"before": 0, "during": 0, "after": 0, "warm-up": 0}
    notable = []
    state_lines = []
    servers = set()
    with open(os.path.join(d, "haproxy.log"), errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = LOG.match(line)
            if not m:
                if re.match(r"\d{13} ", line):  # an answer's line that does not parse: a failure, never skipped
                    lines += 1
                    failed += 1
                    failed_measured += 1
                    failures.setdefault("unparsed log line", []).append(int(line[:13]))
                    notable.append(f"unparsed {line}")
                else:
                    state_lines.append(line)
                continue
            ms = int(m["ms"]) + max(int(m["th"]), 0) + max(int(m["ti"]), 0)  # when the request began
            if m["method"] == "<BADREQ>" and m["term"][0] in "Cc":
                # a connection the client closed (C) or let time out (c) before sending any request: no
                # request, no answer (the generator resets the connections it never used when it exits)
                empty.append(f"{m['term']} at {int(m['ms']) + int(m['ta']) - (t_action or 0):+,} ms from the action")
                continue
            lines += 1
            status = int(m["status"])
            retries = m["retries"]
            nretries = int(retries.lstrip("+"))
            km = key_re.search(m["uri"])
            expect = refs_["sha1"].get(km.group(1)) if km else None
            good_body = status == 200 and expect is not None and m["sha"] == expect
            phase = ("warm-up" if t_measure is None or ms < t_measure else "before" if ms < (t_action or 1 << 62)
                     else "during" if t_back is None or ms <= t_back else "after")
            if t_measure is not None and ms >= t_measure and (t_end is None or ms <= t_end):
                in_window += 1
            sec = ms // 1000
            row = per_second.setdefault(sec, {})
            srv = m["server"]
            servers.add(srv)
            row[srv] = row.get(srv, 0) + 1
            if nretries > 0:
                retried += 1
                retried_by_phase[phase] += 1
                row["retried"] = row.get("retried", 0) + 1
            kind = None
            if status != 200:
                failed += 1
                kind = f"status {status}, termination {m['term']}, server {srv}, retries {retries}"
                row["failed"] = row.get("failed", 0) + 1
            elif not good_body:
                wrong += 1
                kind = f"wrong body (sha1 {m['sha'] or 'none'}, expected {expect}), server {srv}"
                row["wrong"] = row.get("wrong", 0) + 1
            else:
                ok += 1
            if kind:
                failures.setdefault(f"{'in the warm-up: ' if phase == 'warm-up' else ''}{kind}", []).append(ms)
                if phase != "warm-up":
                    failed_measured += 1
            if kind or nretries > 0 or m["term"] != "----":
                notable.append(f"{phase:8} {line}")
    # the full log (one line per answer, most of it SHA-1 digits) is not kept in the results
    with open(os.path.join(d, "notable.log"), "w") as f:
        f.write("# every answer that was not a 200 with the right body on the first try, with its phase\n")
        f.write("\n".join(notable) + ("\n" if notable else ""))
    with open(os.path.join(d, "haproxy-events.log"), "w") as f:
        f.write("\n".join(state_lines) + ("\n" if state_lines else ""))
    names = sorted(s for s in servers if re.match(r"m\d+$", s)) + sorted(s for s in servers if not re.match(r"m\d+$", s))
    with open(os.path.join(d, "seconds.csv"), "w") as f:
        w = csv.writer(f)
        w.writerow(["second_from_action", "epoch_s"] + names + ["retried", "failed", "wrong"])
        for sec in sorted(per_second):
            r = per_second[sec]
            w.writerow([sec - (t_action or 0) // 1000, sec] + [r.get(n, 0) for n in names]
                       + [r.get("retried", 0), r.get("failed", 0), r.get("wrong", 0)])
    load = json.load(open(os.path.join(d, "load.json")))
    warm = json.load(open(os.path.join(d, "warmup.json"))) if os.path.exists(os.path.join(d, "warmup.json")) else None
    intervals = read_hlog(os.path.join(d, "load.hlog"))
    whole = merged(intervals)
    phases = {
        "before": merged([x for x in intervals if t_action is None or x[1] <= t_action]),
        "during": merged([x for x in intervals if t_action is not None and x[1] > t_action
                          and (t_back is None or x[0] < t_back)]),
        "after": merged([x for x in intervals if t_back is not None and x[0] >= t_back]),
    }
    cpu_phase = {}
    cpu_csv = os.path.join(d, "cpu.csv")
    if os.path.exists(cpu_csv):
        for r in csv.DictReader(open(cpu_csv)):
            t = int(r["epoch_ms"])
            ph = (None if t_measure is None or t < t_measure else "before" if t_action is None or t < t_action
                  else "during" if t_back is None or t <= t_back + 1000 else "after" if t_end is None or t <= t_end else None)
            if ph:
                cpu_phase.setdefault(ph, []).append((float(r["ours_pct"]), float(r["others_pct"])))
    cpu_phase = {k: {"ours_pct": round(sum(x[0] for x in v) / len(v), 1), "others_pct": round(sum(x[1] for x in v) / len(v), 1),
                     "others_max_pct": max(x[1] for x in v), "seconds": len(v)} for k, v in cpu_phase.items()}
    decoded = latency(whole)
    check = {"decoded_p50_ms": decoded["p50_ms"], "decoded_p99_ms": decoded["p99_ms"],
             "generator_p50_ms": load.get("p50_ms"), "generator_p99_ms": load.get("p99_ms"),
             "decoded_requests": decoded["requests"], "generator_requests": load.get("requests")}
    # timings of each replica's restart, from the events and the 100-ms samples
    replicas = []
    tl_path = next((p for p in (os.path.join(d, "runs", "timeline.csv"), os.path.join(d, "timeline.csv")) if os.path.exists(p)), None)
    tl = list(csv.DictReader(open(tl_path))) if tl_path else []
    for e in ev:
        if e["event"] not in ("sigterm", "sigkill"):
            continue
        r, t0 = e["replica"], e["ms"]
        down = next((int(s["epoch_ms"]) for s in tl if int(s["epoch_ms"]) >= t0 and not s[f"{r}_haproxy"].startswith("UP")), None)
        not_ready = next((int(s["epoch_ms"]) for s in tl if int(s["epoch_ms"]) >= t0 and s[f"{r}_ready"] != "200"), None)
        rel = lambda t: None if t is None else t - t0
        replicas.append({"replica": r, "signal": e["event"], "at_ms": t0,
                         "ready_not_200_ms": rel(not_ready), "haproxy_down_ms": rel(down),
                         "exited_ms": rel(next((x["ms"] for x in ev if x["event"] == "exited" and x["replica"] == r and x["ms"] >= t0), None)),
                         "exit_detail": next((x["detail"] for x in ev if x["event"] == "exited" and x["replica"] == r and x["ms"] >= t0), None),
                         "started_ms": rel(next((x["ms"] for x in ev if x["event"] == "started" and x["replica"] == r and x["ms"] >= t0), None)),
                         "ready_ms": rel(next((x["ms"] for x in ev if x["event"] == "ready" and x["replica"] == r and x["ms"] >= t0), None)),
                         "haproxy_up_ms": rel(next((x["ms"] for x in ev if x["event"] == "up" and x["replica"] == r and x["ms"] >= t0), None))})
    closes = read_closes(os.path.join(d, "runs", "closes.txt"), scenario, (t_measure, t_action, t_back, t_end))
    cpu = read_cpu(d)
    counters = {}
    if tl:
        last = tl[-1]
        for k in last:
            m = re.match(r"(m\d+)_(wretr|wredis)$", k)
            if m and last[k]:
                counters.setdefault(m.group(1), {})[{"wretr": "retries", "wredis": "redispatches"}[m.group(2)]] = int(last[k])
    drain_lines = []
    for logf in sorted(glob.glob(os.path.join(d, "runs", "m*.log"))):
        for line in open(logf, errors="replace"):
            if "draining:" in line or "drained" in line or "grace of" in line:
                drain_lines.append(f"{os.path.basename(logf)}: {line.strip()}")
    summary = {
        "scenario": scenario,
        "haproxy": {"answers": lines, "ok": ok, "failed": failed, "wrong": wrong, "failed_or_wrong_after_warmup": failed_measured, "retried_then_ok_or_not": retried,
                    "retried_by_phase": retried_by_phase, "answers_in_measured_window": in_window,
                    "failures": {k: {"count": len(v), "first_ms_from_action": min(v) - (t_action or 0),
                                     "last_ms_from_action": max(v) - (t_action or 0)} for k, v in failures.items()},
                    "connections_without_a_request": empty,
                    "per_replica_counters": counters,
                    "state_changes": [l for l in state_lines if l.startswith("Server ")]},
        "cpu": cpu,
        "cpu_by_phase": cpu_phase,
        "connection_closes": closes,
        "generator": {k: load.get(k) for k in ("requests", "sent", "scheduled", "unfinished", "errors", "errors_by_kind",
                                                "resent", "offered_rate", "achieved_rate", "rate_kept", "p50_ms", "p99_ms",
                                                "p999_ms", "max_ms", "send_lag_p99_ms", "connection_waits", "ok", "failed")},
        "warmup_run": None if warm is None else {k: warm.get(k) for k in ("requests", "errors", "errors_by_kind", "p50_ms", "p99_ms")},
        "phases": {k: latency(v) for k, v in phases.items()},
        "phase_bounds_ms": {"measuring": t_measure, "action": t_action, "all_up": t_back, "load_done": t_end},
        "decoder_check": check,
        "replicas": replicas,
        "drain_log": drain_lines,
        "events": ev,
    }
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if not a.keep_log:
        os.remove(os.path.join(d, "haproxy.log"))
    print(json.dumps({"scenario": scenario["name"], "haproxy": {k: summary["haproxy"][k] for k in ("answers", "ok", "failed", "wrong")},
                      "generator_errors": load.get("errors"), "decoder_check": check}))


# --- report

def fmt(v, unit=""):
    return "n/a" if v is None else f"{v:,.2f}{unit}" if isinstance(v, float) else f"{v:,}{unit}"


def scenarios(run):
    """[(name, summary)] of a run directory, in the order they ran."""
    rows = [(os.path.basename(os.path.dirname(sj)), json.load(open(sj)))
            for sj in glob.glob(os.path.join(run, "*", "summary.json"))]
    return sorted(rows, key=lambda r: r[1]["phase_bounds_ms"]["measuring"] or 0)


def table(runs, link=None):
    """The results table: one row per scenario of each run (link(run) names the run in its first column)."""
    head = ["scenario", "requests measured (generator)", "failed (generator)", "answers checked (HAProxy log)",
            "failed / wrong there (after the warm-up)", "failed in the warm-up", "retried by HAProxy", "resent by the client",
            "p50 ms before / during / after", "p99 ms before / during / after", "max ms during", "CPU used by others"]
    if link:
        head.insert(0, "run")
    L = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        for name, s in scenarios(run):
            g, h, ph, cpu = s["generator"], s["haproxy"], s["phases"], s.get("cpu")
            lat = lambda k: " / ".join(fmt(ph[p][k]) for p in ("before", "during", "after"))
            errs = {k: v for k, v in (g["errors_by_kind"] or {}).items() if v}
            cells = [name, fmt(g["requests"]), f"{fmt(g['errors'])}{' ' + json.dumps(errs) if errs else ''}", fmt(h["answers"]),
                     f"{fmt(h['failed_or_wrong_after_warmup'])} / {fmt(h['wrong'])}", fmt(h["failed"] - h["failed_or_wrong_after_warmup"]),
                     fmt(h["retried_then_ok_or_not"]), fmt(g["resent"]), lat("p50_ms"), lat("p99_ms"), fmt(ph["during"]["max_ms"]),
                     f"{cpu['others_share_of_machine'] * 100:.0f} %" if cpu else "n/a"]
            if link:
                cells.insert(0, link(run))
            L.append("| " + " | ".join(cells) + " |")
    L += ["", "p99 is given only for a phase of 10,000 requests or more (as the generator gives it). The generator counts "
              "its measured window; HAProxy's log every answer of the scenario, the warm-ups included. CPU used by others: "
              "the share of the machine's CPUs used by processes other than the scenario's own over the scenario "
              "(/proc/stat against the script's `times`)."]
    return L


def report(a):
    out = a.out
    rows = scenarios(out)
    if not rows:
        sys.exit(f"report: no */summary.json under {out}")
    env = json.load(open(os.path.join(out, "environment.json"))) if os.path.exists(os.path.join(out, "environment.json")) else {}
    L = [f"# Rolling restarts of mid-tier replicas behind HAProxy, under open-loop load", "",
         f"- command: `{env.get('command', 'bench/rolling.sh')}`",
         f"- jar: {env.get('jar', '?')} (sha256 {env.get('jar_sha256', '?')[:16]}…, modified {env.get('jar_modified_utc', '?')}); "
         f"repository at {env.get('git_commit', '?')}; HAProxy {env.get('haproxy', '?')}", ""]
    L += table([out])
    L.append("")
    for name, s in rows:
        sc, g, h = s["scenario"], s["generator"], s["haproxy"]
        L += [f"## {name}", "", sc.get("description", ""), "",
              f"Load: {fmt(g['offered_rate'])} req/s offered, {fmt(g['achieved_rate'])} achieved, rate kept: {g['rate_kept']}; "
              f"send lag p99 {fmt(g['send_lag_p99_ms'])} ms; resent by the generator: {fmt(g['resent'])}; "
              f"whole window p50 {fmt(g['p50_ms'])} ms, p99 {fmt(g['p99_ms'])} ms, max {fmt(g['max_ms'])} ms.", ""]
        cpu = s.get("cpu")
        if cpu:
            L += [f"CPU over the scenario's {cpu['wall_s']} s on {cpu['cpus']} CPUs: its own processes {cpu['this_scenario_cpu_s']} CPU-s, "
                  f"everything else on the machine {cpu['others_cpu_s']} CPU-s ({cpu['others_share_of_machine'] * 100:.0f} % of the machine).", ""]
        cp = s.get("cpu_by_phase") or {}
        L += ["| phase | requests | p50 ms | p99 ms | max ms | CPU, % of the machine: this scenario / everything else (worst second) |",
              "|---|---|---|---|---|---|"]
        for p in ("before", "during", "after"):
            x, c = s["phases"][p], cp.get(p)
            cpu_txt = f"{c['ours_pct']:.0f} / {c['others_pct']:.0f} ({c['others_max_pct']:.0f})" if c else "n/a"
            L.append(f"| {p} | {fmt(x['requests'])} | {fmt(x['p50_ms'])} | {fmt(x['p99_ms'])} | {fmt(x['max_ms'])} | {cpu_txt} |")
        c = s["decoder_check"]
        L += ["", f"Phases cut at 1-s interval bounds of the generator's `--hlog` (an interval that overlaps the restarts counts as during). "
                  f"Check of this decoding: whole window {fmt(c['decoded_requests'])} requests, p50 {fmt(c['decoded_p50_ms'])} / p99 {fmt(c['decoded_p99_ms'])} ms "
                  f"against the generator's own {fmt(c['generator_requests'])}, {fmt(c['generator_p50_ms'])} / {fmt(c['generator_p99_ms'])} ms.", ""]
        L += ["| replica | signal | /ready not 200 | HAProxy DOWN | exited | new process started | its /ready 200 | HAProxy UP |",
              "|---|---|---|---|---|---|---|---|"]
        for r in s["replicas"]:
            ms = lambda k: "—" if r[k] is None else f"+{r[k]:,} ms"
            L.append(f"| {r['replica']} | {r['signal']} | {ms('ready_not_200_ms')} | {ms('haproxy_down_ms')} | {ms('exited_ms')} ({r['exit_detail'] or '?'}) "
                     f"| {ms('started_ms')} | {ms('ready_ms')} | {ms('haproxy_up_ms')} |")
        L += ["", f"HAProxy forwarded {fmt(h['answers'])} answers in this scenario (warm-up included; {fmt(h['answers_in_measured_window'])} "
                  f"in the generator's measured window): {fmt(h['ok'])} were `200` with the reference body, {fmt(h['failed'])} failed, "
                  f"{fmt(h['wrong'])} had a wrong body; {fmt(h['retried_then_ok_or_not'])} were retried by HAProxy "
                  f"(by phase: {json.dumps(h['retried_by_phase'])}); HAProxy's counters per replica (its stats: a retry "
                  f"is counted on the replica that failed it): {json.dumps(h['per_replica_counters'])}.", ""]
        if h["state_changes"]:
            L += ["HAProxy's health checks:", "", "```"] + h["state_changes"] + ["```", ""]
        if h["connections_without_a_request"]:
            L += [f"Not answers: {len(h['connections_without_a_request'])} connections of the generator closed with no request sent "
                  f"on them (HAProxy logs each as a `400` `<BADREQ>`; {spans(h['connections_without_a_request'])}).", ""]
        if h["failures"]:
            L += ["| failure (HAProxy log) | count | first / last, ms from the action |", "|---|---|---|"]
            for k, v in h["failures"].items():
                L.append(f"| {k} | {v['count']} | {v['first_ms_from_action']:,} / {v['last_ms_from_action']:,} |")
            L.append("")
        cc = s.get("connection_closes")
        if cc:
            L += ["Connection closes (tcpdump: every FIN and RST on HAProxy's port and the replicas' ports), by phase:", "",
                  "| packet | warm-up | before | during | after | end |", "|---|---|---|---|---|---|"]
            for k in sorted(cc["counts"]):
                L.append(f"| {k} | " + " | ".join(fmt(cc["counts"][k].get(p, 0)) for p in ("warm-up", "before", "during", "after", "end")) + " |")
            hc = cc["haproxy_closed_a_client_connection"]
            L += ["", f"HAProxy closed a client's connection first (without an answer; such a close has no line in its log) "
                      f"in the measured window: {spans(hc) if hc else 'never'}.", ""]
        if s["drain_log"]:
            L += ["Drain, from the replicas' logs:", "", "```"] + s["drain_log"] + ["```", ""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L))
    print("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("refs")
    p.add_argument("--target", required=True)
    p.add_argument("--url", required=True)
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("sample")
    p.add_argument("--stats", required=True)
    p.add_argument("--admins", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--stop", required=True)
    p.add_argument("--max-seconds", type=float, required=True)
    p = sub.add_parser("analyse")
    p.add_argument("dir")
    p.add_argument("--keep-log", action="store_true")
    p = sub.add_parser("report")
    p.add_argument("out")
    p = sub.add_parser("table")
    p.add_argument("runs", nargs="+", help="run directories (bench/rolling.sh --out)")
    a = ap.parse_args()
    if a.cmd == "table":  # one table over several runs, each named by its directory (a link to its report)
        print("\n".join(table(a.runs, link=lambda r: f"[{os.path.basename(os.path.normpath(r))}]({os.path.basename(os.path.normpath(r))}/report.md)")))
        return
    {"refs": refs, "sample": sample, "analyse": analyse, "report": report}[a.cmd](a)


if __name__ == "__main__":
    main()
