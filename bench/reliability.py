#!/usr/bin/env python3
"""Every network-safety probe of issue 16 against a mid-tier as it ships, one table per server.

  python3 bench/reliability.py [--jar JAR] [--label NAME] [--out DIR] [--only PROBE,...]
  python3 bench/reliability.py --table DIR/before.json DIR/after.json   (the before/after table)

Runs `JAR serve ycsb` (default cli/target/doubleface.jar) with its defaults over a KV leaf of 20
shards in a separate process (always the current jar's `leaf kv`, so an old mid-tier can be probed
with the same shards), and asks what a client sees when:

  slow-reader   one connection pipelines fanout=20&size=large requests (~430 kB answers) at 100/s
                for 40 s and never reads; meanwhile another client asks fanout=5 every 100 ms.
                Reported: the mid-tier's peak RSS, when the slow connection was closed, what the
                other client got (statuses, slowest answer).
  overload      wrk -t1 -c1000 for 10 s (closed loop, far past capacity): p99, non-2xx, timeouts.
  drain         shard 0 answers every call after 900 ms (leaf kv --slow 0:1:900ms); three
                requests in flight, then SIGTERM: what each gets, what a new request gets, when
                the process exits.
  admin         --host 0.0.0.0: is the admin port reachable on a non-loopback address; PUT and
                POST of a configuration without credentials; threads after three PUTs of
                thread-2000, -2001, -2002.
  slow-headers  300 connections each sending one header byte every 2 s for 30 s: how many the
                server closed.
  strict-http   HTTP/9.9, HTTP/2.0 in an HTTP/1.1 request line, no Host, two Hosts, obs-fold;
                a malformed protobuf on gRPC (status and log lines it cost).
  tls           --tls-cert/--tls-key: an HTTPS request verified against the certificate.

Every run is bounded (about 3 minutes in all) and stops by itself; servers listen on loopback
(admin probe: the service on 0.0.0.0, as the probe requires). Writes DIR/LABEL.json (the figures)
and DIR/LABEL-*.log (the servers' output); prints the table. Needs java (JAVA_HOME), curl, wrk,
openssl.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAVA = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
LEAF_BASE = 17101
SHARDS = 20
PORT, ADMIN, GRPC = 18180, 19190, 18181


def log(msg):
    print("reliability: " + msg, file=sys.stderr, flush=True)


def free_port_wait(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.1)


def wait_port(port, timeout=30.0, host="127.0.0.1"):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((host, port)) == 0:
                return True
        time.sleep(0.1)
    return False


def proc_status(pid):
    """(RSS in MB, threads) of a process from /proc."""
    rss, threads = None, None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
    except OSError:
        pass
    return rss, threads


class Proc:
    """A java -jar process with its output in a log file; stopped (and waited for) by stop()."""

    def __init__(self, args, logfile):
        self.logfile = logfile
        self.out = open(logfile, "w")
        self.p = subprocess.Popen([JAVA] + args, stdout=self.out, stderr=subprocess.STDOUT)

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.out.close()

    def log_lines(self):
        if not self.out.closed:
            self.out.flush()
        with open(self.logfile, errors="replace") as f:
            return f.read().splitlines()


class Run:
    def __init__(self, jar, label, out):
        self.jar, self.label, self.out = jar, label, out
        self.leaf_jar = os.path.join(ROOT, "cli/target/doubleface.jar")
        self.leaf = None

    def start_leaf(self, slow=None):
        self.stop_leaf()
        free_port_wait(LEAF_BASE)
        args = ["-jar", self.leaf_jar, "leaf", "kv", "--shards", str(SHARDS), "--base-port", str(LEAF_BASE)]
        if slow:
            args += ["--slow", slow]
        self.leaf = Proc(args, os.path.join(self.out, f"{self.label}-leaf.log"))
        if not wait_port(LEAF_BASE + SHARDS - 1):
            raise RuntimeError("leaf did not start")

    def stop_leaf(self):
        if self.leaf:
            self.leaf.stop()
            self.leaf = None

    def serve(self, name, *extra, host=None):
        free_port_wait(PORT)
        free_port_wait(ADMIN)
        args = ["-Xmx1g", "-jar", self.jar, "serve", "ycsb", "--port", str(PORT), "--admin-port", str(ADMIN),
                "--shards", f"kv://127.0.0.1:{LEAF_BASE}-{LEAF_BASE + SHARDS - 1}"]
        if host:
            args += ["--host", host]
        args += list(extra)
        p = Proc(args, os.path.join(self.out, f"{self.label}-{name}.log"))
        if not wait_port(PORT) or p.p.poll() is not None:
            p.stop()
            lines = p.log_lines()
            unknown = [l for l in lines if l.startswith("Unknown option")]
            raise RuntimeError("not supported: " + unknown[0] if unknown
                               else f"serve did not start ({' | '.join(lines[-3:])[:300]})")
        return p


def http(port, raw, timeout=5.0, host="127.0.0.1"):
    """Sends raw bytes, returns (status or None, seconds, whether the server closed)."""
    t0 = time.time()
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        closed = False
        try:
            while b"\r\n\r\n" not in data:
                b = s.recv(65536)
                if not b:
                    closed = True
                    break
                data += b
        except (socket.timeout, ConnectionResetError):
            closed = True
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        return (int(m.group(1)) if m else None), time.time() - t0, closed


def get(path):
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


# ---------------------------------------------------------------------------------------------- probes

def probe_slow_reader(run):
    run.start_leaf()
    srv = run.serve("slow-reader")
    pid = srv.p.pid
    peak, statuses, slowest, closed_at = 0.0, {}, 0.0, None
    stop = threading.Event()
    one = get("/query?fanout=20&size=large&key=3")

    def slow():
        nonlocal closed_at
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", PORT))
        t0 = time.time()
        try:
            while not stop.is_set():
                s.sendall(one)
                time.sleep(0.01)
                # a closed connection shows as a reset on send, or as EOF/reset on a peek
                s.setblocking(False)
                try:
                    if s.recv(1, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError()
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
        except OSError:
            closed_at = time.time() - t0
        finally:
            s.close()

    th = threading.Thread(target=slow, daemon=True)
    th.start()
    t_end = time.time() + 40  # past the 30 s slow-reader timeout
    while time.time() < t_end:
        try:
            st, dt, _ = http(PORT, get("/query?fanout=5&size=small&key=9"), timeout=5)
        except OSError:
            st, dt = "error", 5.0
        statuses[str(st)] = statuses.get(str(st), 0) + 1
        slowest = max(slowest, dt)
        rss, _ = proc_status(pid)
        peak = max(peak, rss or 0)
        time.sleep(0.1)
    stop.set()
    th.join(5)
    alive = srv.p.poll() is None
    srv.stop()
    oom = any("OutOfMemoryError" in l for l in srv.log_lines())
    return {"peak_rss_mb": round(peak), "slow_closed_after_s": None if closed_at is None else round(closed_at, 1),
            "other_client": statuses, "other_slowest_ms": round(slowest * 1000), "server_alive": alive, "oom": oom}


def probe_overload(run):
    run.start_leaf()
    res = {}
    for name, extra in (("as shipped", ()), ("--admission adaptive", ("--admission", "adaptive"))):
        try:
            srv = run.serve("overload-" + name.split()[0].strip("-"), *extra)
        except RuntimeError as e:
            res[name] = {"error": str(e)}
            continue
        subprocess.run(["wrk", "-t1", "-c100", "-d3s", f"http://127.0.0.1:{PORT}/query?fanout=5&size=small&key=1"],
                       capture_output=True)  # warm-up
        w = subprocess.run(["wrk", "-t1", "-c1000", "-d10s", "-T5s", "--latency",
                            f"http://127.0.0.1:{PORT}/query?fanout=5&size=small&key=1"],
                           capture_output=True, text=True).stdout
        srv.stop()
        r = {}
        m = re.search(r"99%\s+([\d.]+)(us|ms|s)", w)
        if m:
            r["p99_ms"] = round(float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)], 1)
        m = re.search(r"(\d+) requests in", w)
        r["requests"] = int(m.group(1)) if m else None
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", w)
        r["non_2xx"] = int(m.group(1)) if m else 0
        m = re.search(r"timeout (\d+)", w)
        r["timeouts"] = int(m.group(1)) if m else 0
        res[name] = r
    return res


def probe_drain(run):
    # 900 ms: late, but inside the KV driver's 1 s call timeout, so only the drain decides
    run.start_leaf(slow="0:1:900ms")
    srv = run.serve("drain", "--deadline", "8s")
    results = [None] * 3

    def ask(i):
        t0 = time.time()
        try:
            st, _, _ = http(PORT, get(f"/query?fanout=1&size=small&key={i * SHARDS}"), timeout=15)  # shard 0
        except OSError as e:
            st = "error: " + type(e).__name__
        results[i] = {"status": st, "after_s": round(time.time() - t0, 2)}

    ths = [threading.Thread(target=ask, args=(i,), daemon=True) for i in range(3)]
    for t in ths:
        t.start()
    time.sleep(0.3)
    t_term = time.time()
    srv.p.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    try:
        new_st, _, _ = http(PORT, get("/query?fanout=2&size=small&key=1"), timeout=3)
        new = str(new_st)
    except OSError as e:
        new = "refused" if isinstance(e, ConnectionRefusedError) else type(e).__name__
    for t in ths:
        t.join(20)
    try:
        srv.p.wait(30)
    except subprocess.TimeoutExpired:
        pass
    gone = round(time.time() - t_term, 2) if srv.p.poll() is not None else None
    srv.stop()
    return {"in_flight": results, "new_connection_after_sigterm": new, "process_gone_after_s": gone}


def non_loopback_ip():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
            return None if ip.startswith("127.") else ip
    except OSError:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        return next((a for a in out if not a.startswith("127.") and ":" not in a), None)


def probe_admin(run):
    run.start_leaf()
    srv = run.serve("admin", host="0.0.0.0")
    wait_port(ADMIN)
    ip = non_loopback_ip()
    r = {"non_loopback_ip": ip}
    if ip:
        try:
            st, _, _ = http(ADMIN, b"GET /admin/stats HTTP/1.1\r\nHost: x\r\n\r\n", timeout=3, host=ip)
            r["admin_from_" + "non_loopback"] = st
        except OSError as e:
            r["admin_from_non_loopback"] = "refused" if isinstance(e, ConnectionRefusedError) else type(e).__name__
    for method in ("PUT", "POST"):
        st, _, _ = http(ADMIN, f"{method} /admin/config?name=thread-3 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
                        .encode(), timeout=5)
        r[method.lower() + "_config_no_token"] = st
    _, before = proc_status(srv.p.pid)
    statuses = []
    for n in (2000, 2001, 2002):
        st, _, _ = http(ADMIN, f"PUT /admin/config?name=thread-{n} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
                        .encode(), timeout=30)
        statuses.append(st)
    time.sleep(1)
    _, after = proc_status(srv.p.pid)
    r["put_thread_2000s"] = statuses
    r["threads_before_after"] = [before, after]
    srv.stop()
    return r


def probe_slow_headers(run):
    run.start_leaf()
    srv = run.serve("slow-headers")
    head = b"GET /query?fanout=1&size=small&key=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    socks = []
    for _ in range(300):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        s.setblocking(False)
        socks.append(s)
    closed = [None] * len(socks)
    t0 = time.time()
    i = 0
    while time.time() - t0 < 30:
        for k, s in enumerate(socks):
            if closed[k] is not None:
                continue
            try:
                s.send(head[i % len(head):i % len(head) + 1])
                s.recv(4096)  # non-blocking: b"" = closed, data = an answer (408) before the close
                closed[k] = time.time() - t0
            except BlockingIOError:
                pass  # still open, nothing to read
            except OSError:
                closed[k] = time.time() - t0
        i += 1
        time.sleep(2)
    for s in socks:
        s.close()
    srv.stop()
    done = [c for c in closed if c is not None]
    return {"connections": len(socks), "closed_by_server": len(done),
            "closed_after_s": [round(min(done), 1), round(max(done), 1)] if done else None}


def probe_strict_http(run):
    run.start_leaf()
    srv = run.serve("strict", "--grpc-port", str(GRPC))
    p = "/query?fanout=2&size=small&key=1"
    cases = {
        "HTTP/9.9": f"GET {p} HTTP/9.9\r\nHost: a\r\n\r\n",
        "HTTP/2.0 request line": f"GET {p} HTTP/2.0\r\nHost: a\r\n\r\n",
        "no Host (HTTP/1.1)": f"GET {p} HTTP/1.1\r\n\r\n",
        "two Hosts": f"GET {p} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "obs-fold": f"GET {p} HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n",
    }
    r = {}
    for name, raw in cases.items():
        try:
            st, _, _ = http(PORT, raw.encode(), timeout=5)
        except OSError as e:
            st = type(e).__name__
        r[name] = st
    # gRPC: a frame whose protobuf is garbage (field 1 declared as 100 bytes long, 2 given)
    if wait_port(GRPC, 5):
        before = len(srv.log_lines())
        with tempfile.NamedTemporaryFile(delete=False) as f:
            body = b"\x0a\x64\x01\x02"
            f.write(b"\x00" + len(body).to_bytes(4, "big") + body)
            frame = f.name
        c = subprocess.run(["curl", "-s", "-v", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
                            "-H", "te: trailers", "--data-binary", "@" + frame, "-o", "/dev/null",
                            f"http://127.0.0.1:{GRPC}/doubleface.ycsb.v1.FanoutService/Query"],
                           capture_output=True, text=True, timeout=15)
        os.unlink(frame)
        m = re.search(r"grpc-status: (\d+)", c.stderr)
        time.sleep(0.5)
        r["gRPC malformed protobuf"] = {"grpc_status": int(m.group(1)) if m else None,
                                        "log_lines": len(srv.log_lines()) - before}
    else:
        r["gRPC malformed protobuf"] = "no gRPC port"
    srv.stop()
    return r


def probe_tls(run):
    run.start_leaf()
    d = tempfile.mkdtemp()
    crt, key = os.path.join(d, "server.crt"), os.path.join(d, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], capture_output=True, check=True)
    try:
        srv = run.serve("tls", "--tls-cert", crt, "--tls-key", key)
    except RuntimeError as e:
        return {"https": str(e)[:120]}
    c = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", crt,
                        f"https://127.0.0.1:{PORT}/query?fanout=2&size=small&key=1"], capture_output=True, text=True)
    srv.stop()
    return {"https": c.stdout}


PROBES = {"slow-reader": probe_slow_reader, "overload": probe_overload, "drain": probe_drain, "admin": probe_admin,
          "slow-headers": probe_slow_headers, "strict-http": probe_strict_http, "tls": probe_tls}


NAMES = {"None": "no answer in 5 s", "error": "connection error"}


def describe(probe, v):
    """One table cell: what a client saw, in words and figures."""
    if v is None:
        return "not run"
    if "error" in v and len(v) == 1:
        return v["error"]
    if probe == "slow-reader":
        o = v["other_client"]
        return (f"peak RSS {v['peak_rss_mb']} MB; slow client "
                + ("never closed" if v["slow_closed_after_s"] is None else f"closed after {v['slow_closed_after_s']} s")
                + f"; other client: {', '.join(f'{n}× {NAMES.get(k, k)}' for k, n in o.items())}, "
                + f"slowest {v['other_slowest_ms']} ms"
                + ("; **OutOfMemoryError**" if v.get("oom") else ""))
    if probe == "overload":
        parts = []
        for name, r in v.items():
            if "error" in r:
                parts.append(f"{name}: {r['error']}")
            else:
                parts.append(f"{name}: {r['requests']:,} answers in 10 s, p99 {r.get('p99_ms')} ms, "
                             f"{r['non_2xx']:,} non-2xx, {r['timeouts']:,} time-outs")
        return "; ".join(parts)
    if probe == "drain":
        got = ", ".join(f"{r['status'] if r['status'] is not None else 'empty reply'} at {r['after_s']} s"
                        for r in v["in_flight"])
        return (f"3 in flight got: {got}; new connection after SIGTERM: {v['new_connection_after_sigterm']}; "
                f"process gone {v['process_gone_after_s']} s after SIGTERM")
    if probe == "admin":
        tb = v["threads_before_after"]
        return (f"admin on {v['non_loopback_ip']} (service on 0.0.0.0): {v.get('admin_from_non_loopback')}; "
                f"PUT / POST config without token: {v['put_config_no_token']} / {v['post_config_no_token']}; "
                f"PUT thread-2000, -2001, -2002: {v['put_thread_2000s']}, threads {tb[0]} → {tb[1]}")
    if probe == "slow-headers":
        c = v["closed_after_s"]
        return (f"{v['closed_by_server']} of {v['connections']} closed by the server"
                + (f" (after {c[0]}–{c[1]} s)" if c else " in 30 s"))
    if probe == "strict-http":
        g = v.get("gRPC malformed protobuf", {})
        codes = {2: "UNKNOWN", 3: "INVALID_ARGUMENT"}
        grpc = (f"gRPC malformed protobuf: {codes.get(g.get('grpc_status'), g.get('grpc_status'))}, "
                f"{g.get('log_lines')} log lines" if isinstance(g, dict) else f"gRPC: {g}")
        return ", ".join(f"{k} → {st}" for k, st in v.items() if k != "gRPC malformed protobuf") + "; " + grpc
    if probe == "tls":
        return f"HTTPS with --tls-cert/--tls-key, verified by curl: {v['https']}"
    return json.dumps(v)


def table(files):
    runs = [json.load(open(f)) for f in files]
    print("| probe | " + " | ".join(f"{r['label']} (`{r['commit']}`)" for r in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for probe in PROBES:
        print(f"| {probe} | " + " | ".join(describe(probe, r["probes"].get(probe)).replace("|", "\\|")
                                          for r in runs) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jar", default=os.path.join(ROOT, "cli/target/doubleface.jar"))
    ap.add_argument("--label", default="after")
    ap.add_argument("--commit", default=None, help="the commit the jar was built from (default: git HEAD)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=",".join(PROBES))
    ap.add_argument("--table", nargs="+", metavar="JSON")
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return
    out = a.out or os.path.join(ROOT, "docs/results", "reliability-" + time.strftime("%Y%m%d", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    for tool in ("curl", "wrk", "openssl"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"reliability: {tool} not found (apt-get install {tool})")
    run = Run(os.path.abspath(a.jar), a.label, out)
    commit = a.commit or subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True).stdout.strip()
    res = {"label": a.label, "jar": a.jar, "commit": commit, "probes": {}}
    try:
        for name in a.only.split(","):
            log(f"{a.label}: {name} ...")
            t0 = time.time()
            try:
                res["probes"][name] = PROBES[name](run)
            except Exception as e:  # a probe that cannot run on this server says so in the table
                res["probes"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            log(f"{a.label}: {name} ({time.time() - t0:.0f} s): {json.dumps(res['probes'][name])}")
    finally:
        run.stop_leaf()
    path = os.path.join(out, a.label + ".json")
    if os.path.exists(path) and a.only != ",".join(PROBES):  # a partial rerun updates its probes only
        old = json.load(open(path))
        old["probes"].update(res["probes"])
        res = old
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
