#!/usr/bin/env bash
# The kernel's share of a request (issue 12): for every socket of the mid-tier, the time from the
# moment data became readable (tracepoint sock:sk_data_ready, in the softirq that queued it) to the
# mid-tier's first read of it (sock:sock_recv_length in the mid-tier's process, ret > 0) — the
# epoll wake-up and the wait for the I/O thread to come round — split into upstream sockets (local
# port = the HTTP port: a request arriving) and downstream ones (remote port = a shard: a reply
# arriving), per threading configuration, under the same open-loop load.
#
#   bench/kernel-stages.sh [--out DIR] [--configs "doubleface type2a-1f1b thread-64"] [--fanout 5]
#                          [--rate 3000] [--duration 10]
#
# Set-up as bench/syscalls-per-request.sh: KV leaf (20 shards) and the load generator on CPU 1, the
# mid-tier (`serve ycsb --io-threads 1`) on CPU 0, ports 8180/9190/7201-7220. For each
# configuration: switch, 5 s warm-up at the rate, then bpftrace (tracepoints only: this kernel has
# no kprobe_events and no BTF, so kprobes and kfuncs do not attach) records while `doubleface
# load --rate R` runs for --duration seconds. Needs root and bpftrace (apt-get install bpftrace).
# Writes OUT/<config>.bpftrace.txt (histograms in µs, counts, means), OUT/<config>.load.json and
# OUT/report.md. Bounded; kills what it started on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIGS="doubleface type2a-1f1b thread-64"; FANOUT=5; RATE=3000; DURATION=10
OUT=$ROOT/docs/results/kernel-stages-$(date -u +%Y%m%dT%H%M%SZ)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift ;; --configs) CONFIGS=$2; shift ;; --fanout) FANOUT=$2; shift ;;
    --rate) RATE=$2; shift ;; --duration) DURATION=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac; shift
done
PORT=8180; ADMIN=9190; BASE=7201
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
v=$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[ "${v%%.*}" -ge 21 ] 2>/dev/null || { echo "kernel-stages: $JAVA is Java ${v:-?}; set JAVA_HOME to a JDK >= 21" >&2; exit 2; }
# waits for PORT to listen while process PID lives
wait_port() { until (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; do kill -0 "$2" 2>/dev/null || { echo "kernel-stages: process $2 exited before port $1 listened; see $OUT" >&2; exit 1; }; sleep 0.2; done; }
"$ROOT/doubleface" --version > /dev/null
JAR=$(mktemp /tmp/doubleface-ks-XXXXXX.jar); cp "$ROOT/cli/target/doubleface.jar" "$JAR"
command -v bpftrace >/dev/null || (apt-get update -qq && apt-get install -y -qq bpftrace >/dev/null)
mkdir -p "$OUT"
LP=""; MP=""; BP=""
cleanup() { for p in $BP $MP $LP; do kill "$p" 2>/dev/null || true; done; sleep 1; for p in $MP $LP; do kill -9 "$p" 2>/dev/null || true; done; rm -f "$JAR"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
ulimit -l 8192 2>/dev/null || true
taskset -c 1 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" leaf kv --shards 20 --base-port $BASE --records 1000 > >(head -c 1000000 > "$OUT/leaf.log") 2>&1 & LP=$!
wait_port $((BASE + 19)) "$LP"
taskset -c 0 "$JAVA" -Xms1g -Xmx1g -XX:+AlwaysPreTouch -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN \
  --shards kv://127.0.0.1:$BASE-$((BASE + 19)) --records 1000 --config ${CONFIGS%% *} --io-threads 1 \
  > >(head -c 1000000 > "$OUT/server.log") 2>&1 & MP=$!
wait_port $PORT "$MP"; wait_port $ADMIN "$MP"
URL="/query?fanout=$FANOUT&size=small"
load() { taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" \
  --rate "$RATE" --duration "$1" --max-connections 512 --quiet --json; }
cat > "$OUT/stages.bt" <<BT
// arrival (data readable) -> the mid-tier's first read, per socket kind; \$1 = mid-tier pid
tracepoint:tcp:tcp_probe { @lport[args->skaddr] = args->sport; @rport[args->skaddr] = args->dport; }
tracepoint:sock:sk_data_ready { if (@t[args->skaddr] == 0) { @t[args->skaddr] = nsecs; } }
tracepoint:sock:sock_recv_length /pid == \$1 && args->ret > 0/ {
  \$t = @t[args->sk];
  if (\$t != 0) {
    \$us = (nsecs - \$t) / 1000;
    if (@lport[args->sk] == $PORT) { @upstream_us = hist(\$us); @upstream = stats(\$us); }
    else if (@rport[args->sk] >= $BASE && @rport[args->sk] < $((BASE + 20))) { @downstream_us = hist(\$us); @downstream = stats(\$us); }
    delete(@t[args->sk]);
  }
}
END { clear(@t); clear(@lport); clear(@rport); }
BT
{
  echo "# Kernel stages: data readable → the mid-tier's first read"
  echo
  echo "bench/kernel-stages.sh --configs \"$CONFIGS\" --fanout $FANOUT --rate $RATE --duration $DURATION; commit $(git -C "$ROOT" rev-parse --short HEAD); $(nproc) CPUs; kernel $(uname -r); $(bpftrace --version)"
  echo
  echo "| configuration | upstream reads | mean µs | p50 bucket µs | p99 bucket µs | downstream reads | mean µs | p50 bucket µs | p99 bucket µs | end-to-end p50 ms | p99 ms |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$OUT/report.md"
for cfg in $CONFIGS; do
  curl -sf -m 30 -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$cfg" > /dev/null \
    || { echo "kernel-stages: switching to $cfg failed" >&2; exit 1; }
  echo "kernel-stages: $cfg: warm-up 5 s at $RATE req/s" >&2
  load 5s > /dev/null
  bpftrace "$OUT/stages.bt" "$MP" > "$OUT/$cfg.bpftrace.txt" 2>&1 & BP=$!
  sleep 2
  echo "kernel-stages: $cfg: measuring ${DURATION} s" >&2
  load "${DURATION}s" > "$OUT/$cfg.load.json"
  kill -INT "$BP"; wait "$BP" || true; BP=""
  python3 - "$cfg" "$OUT/$cfg.bpftrace.txt" "$OUT/$cfg.load.json" >> "$OUT/report.md" <<'PY'
import json, re, sys
cfg, bt, lj = sys.argv[1:4]
text = open(bt).read()
def stats(name):
    m = re.search(r"@%s: count (\d+), average (\d+), total (\d+)" % name, text)
    return (m.group(1), m.group(2)) if m else ("–", "–")
def unit(v):
    return int(v[:-1]) * {"K": 1024, "M": 1024 * 1024}[v[-1]] if v[-1] in "KM" else int(v)
def quantiles(name):
    # the log2 bucket holding the 50th and 99th percentile, as "lo-hi"
    block = text.split("@%s_us:" % name)[1].split("\n\n\n")[0] if ("@%s_us:" % name) in text else ""
    rows = []
    for m in re.finditer(r"\[(\w+)(?:, (\w+)\))?\]?\s+(\d+) \|", block):
        lo = unit(m.group(1)); hi = unit(m.group(2)) if m.group(2) else lo + 1
        rows.append((lo, hi, int(m.group(3))))
    total = sum(r[2] for r in rows)
    out = []
    for q in (0.5, 0.99):
        acc = 0
        for lo, hi, n in rows:
            acc += n
            if acc >= q * total:
                out.append(f"{lo}–{hi}")
                break
        else:
            out.append("–")
    return out
u, d = stats("upstream"), stats("downstream")
uq, dq = quantiles("upstream"), quantiles("downstream")
load = json.loads(open(lj).read())
print(f"| {cfg} | {u[0]} | {u[1]} | {uq[0]} | {uq[1]} | {d[0]} | {d[1]} | {dq[0]} | {dq[1]} | {load.get('p50_ms')} | {load.get('p99_ms')} |")
PY
done
echo >> "$OUT/report.md"
echo "Histograms (µs, log2 buckets) per configuration: \`<config>.bpftrace.txt\`." >> "$OUT/report.md"
cat "$OUT/report.md"
