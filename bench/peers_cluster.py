#!/usr/bin/env python3
"""Helpers of bench/peers-cluster.sh: load the peers' keys into a Redis Cluster where the cluster places
them, check a body of the cluster workload, and write the report (ratios to the best framework peer).

  peers_cluster.py load PORT KEYS SMALL LARGE      # s:<i> (SMALL bytes) and l:<i> (LARGE bytes), i < KEYS
  peers_cluster.py check BODY FANOUT small|large KEY KEYS
  peers_cluster.py report OUT
"""
import csv, json, os, socket, statistics, sys


def value(key, length):
    return bytes(97 + (key * 7 + p) % 26 for p in range(length))


def resp(*parts):
    out = b"*%d\r\n" % len(parts)
    for p in parts:
        out += b"$%d\r\n%s\r\n" % (len(p), p)
    return out


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.s.makefile("rb")

    def send(self, data):
        self.s.sendall(data)

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b"-"):
            return (t + rest).decode()
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2]
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise ValueError("not RESP: %r" % line)


CRC = []
for i in range(256):
    c = i << 8
    for _ in range(8):
        c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
    CRC.append(c & 0xFFFF)


def slot(key):
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    c = 0
    for b in key:
        c = ((c << 8) ^ CRC[((c >> 8) ^ b) & 0xFF]) & 0xFFFF
    return c & 16383


def load(port, keys, small, large):
    seed = Conn(int(port))
    seed.send(resp(b"CLUSTER", b"SLOTS"))
    owners = {}
    for entry in seed.read():
        lo, hi, master = entry[0], entry[1], entry[2]
        for s in range(lo, hi + 1):
            owners[s] = int(master[1])
    if len(owners) != 16384:
        sys.exit("the cluster serves %d slots, expected 16384" % len(owners))
    conns, counts = {}, {}
    for i in range(int(keys)):
        for k, n in ((b"s:%d" % i, int(small)), (b"l:%d" % i, int(large))):
            p = owners[slot(k)]
            if p not in conns:
                conns[p] = Conn(p)
                counts[p] = 0
            conns[p].send(resp(b"SET", k, value(i, n)))
            counts[p] += 1
    for p, c in conns.items():
        for _ in range(counts[p]):
            r = c.read()
            if r != "+OK":
                sys.exit("SET on %d answered %r" % (p, r))
    print("loaded %d keys into %d masters: %s" % (2 * int(keys), len(conns), dict(sorted(counts.items()))))


def check(body_path, fanout, size, key, keys):
    body = open(body_path, "rb").read()
    n = 20000 if size == "large" else 100
    expected = b"".join(value((int(key) + j) % int(keys), n) for j in range(int(fanout)))
    if body != expected:
        first = next((i for i, (a, b) in enumerate(zip(body, expected)) if a != b), min(len(body), len(expected)))
        print(f"body of {len(body)} bytes, expected {len(expected)}; first difference at byte {first}")
        sys.exit(1)


def report(out):
    rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
    env = json.load(open(os.path.join(out, "environment.json")))
    cells = list(dict.fromkeys(r["cell"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    # the hand-written ceiling (raw Netty) is what the hardware allows, not a framework a team would pick
    peers = [s for s in systems if not s.startswith("doubleface") and s != "ceiling"]
    lines = ["# Key-routed fanout over a 3-master Redis Cluster: doubleface and the frameworks' cluster clients "
             "(bench/peers-cluster.sh)", ""]
    ceiling = "ceiling" in systems
    summary = ["| cell | best doubleface | req/s | best peer | req/s | doubleface / best peer (median of per-repeat ratios, min–max) |"
               + (" ceiling req/s | doubleface / ceiling | best peer / ceiling |" if ceiling else ""),
               "|---|---|---|---|---|---|" + ("---|---|---|" if ceiling else "")]
    for cell in cells:
        fanout, size, conns = cell.split(":")
        lines += [f"## {fanout} key(s), {size} ({100 if size == 'small' else 20000} B values), {conns} connections", "",
                  "| system | req/s (median, min–max) | p50 ms | p99 ms (closed loop) | / best peer of the repeat (median, min–max) | errors | runs |",
                  "|---|---|---|---|---|---|---|"]
        med = {}
        for s in systems:
            mine = [r for r in rows if r["cell"] == cell and r["system"] == s]
            if not mine:
                continue
            rps = [float(r["requests_per_s"]) for r in mine]
            med[s] = statistics.median(rps)
            ratios = []
            for r in mine:
                best = max((float(x["requests_per_s"]) for x in rows if x["cell"] == cell and x["repeat"] == r["repeat"]
                            and x["system"] in peers), default=0)
                if best > 0:
                    ratios.append(float(r["requests_per_s"]) / best)
            ratio = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else "n/a"
            lines.append(f"| {s} | {med[s]:,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | "
                         f"{statistics.median(float(r['p50_ms']) for r in mine):.2f} | "
                         f"{statistics.median(float(r['p99_ms']) for r in mine):.2f} | {ratio} | "
                         f"{sum(int(r['errors']) for r in mine)} | {len(mine)} |")
        lines.append("")
        dfs = [s for s in med if s.startswith("doubleface")]
        pcs = [s for s in med if s in peers]
        if dfs and pcs:
            bd = max(dfs, key=med.get)
            bp = max(pcs, key=med.get)
            ratios = []
            for rep in sorted({r["repeat"] for r in rows}):
                d = [float(r["requests_per_s"]) for r in rows if r["cell"] == cell and r["repeat"] == rep and r["system"] == bd]
                p = [float(r["requests_per_s"]) for r in rows if r["cell"] == cell and r["repeat"] == rep and r["system"] in pcs]
                if d and p and max(p) > 0:
                    ratios.append(d[0] / max(p))
            row = (f"| {cell} | {bd} | {med[bd]:,.0f} | {bp} | {med[bp]:,.0f} | "
                   f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
            if ceiling and med.get("ceiling"):
                def to_ceiling(system):
                    rs = []
                    for rep in sorted({r["repeat"] for r in rows}):
                        x = [float(r["requests_per_s"]) for r in rows if r["cell"] == cell and r["repeat"] == rep and r["system"] == system]
                        c = [float(r["requests_per_s"]) for r in rows if r["cell"] == cell and r["repeat"] == rep and r["system"] == "ceiling"]
                        if x and c and c[0] > 0:
                            rs.append(x[0] / c[0])
                    return f"{statistics.median(rs):.2f} ({min(rs):.2f}–{max(rs):.2f})" if rs else "n/a"
                row += f" {med['ceiling']:,.0f} | {to_ceiling(bd)} | {to_ceiling(bp)} |"
            summary.append(row)
    lines = lines[:2] + ["## Summary", ""] + summary + [""] + lines[2:]
    lines += [f"wrk -t1 -cN, {env['repeats']} repeat(s) of {env['duration_s']} s after a {env['warmup_s']} s warm-up "
              "(a fresh JVM per run), random key index per request (the request reads keys i..i+K-1). Each server pinned "
              "to CPU 0 with 1 I/O thread; the 3 cluster masters (redis-server, cluster-enabled) and wrk share CPU 1. "
              "Systems in rotated order per repeat and cell. wrk's p99 is closed-loop: queueing at saturation.", "",
              f"Environment: {out}/environment.json (git {env['git_commit'][:10]}, {env['java']}, kernel {env['kernel']}).", ""]
    text = "\n".join(lines)
    open(os.path.join(out, "report.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"load": load, "check": check, "report": report}[cmd](*args)
