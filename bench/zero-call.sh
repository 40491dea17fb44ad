#!/usr/bin/env bash
# A route with zero shard calls against the per-request floor: doubleface's GET /health (a plan of no
# calls, through decode, admission, the model, the engine and the response path) versus a raw Netty
# HTTP server with no framework (bench/peers/RawNettyHttp.java, Netty's hello-world shape), both
# answering "ok\n" (issue 18: target >= 0.9x the raw floor).
#
#   bench/zero-call.sh [--configs "doubleface type2a-1f1b"] [--conns N] [--repeats N] [--duration S]
#                      [--warmup S] [--out DIR] [--jars "LABEL=PATH LABEL=PATH"]
#
# --jars: run each configuration from each of these builds of doubleface.jar (system CONFIG~LABEL,
# e.g. --jars "before=/tmp/old.jar after=cli/target/doubleface.jar" for a change's before and after
# beside the floor); default: cli/target/doubleface.jar alone.
#
# Defaults: doubleface, wrk -t1 -c100, 3 repeats of 10 s after a 10 s warm-up. Each server runs
# alone, pinned to CPU 0 with one I/O thread (doubleface: serve ycsb --io-threads 1 with a 1-shard
# embedded KV leaf that /health never calls); wrk is pinned to CPU 1. Systems alternate in rotated
# order per repeat, so each ratio comes from adjacent runs. Writes raw.csv, report.md and
# environment.json into DIR. Every run is bounded; the processes are killed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
CONFIGS="doubleface"; CONNS=100; REPEATS=3; DURATION=10; WARMUP=10; OUT=""; JARS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --configs) CONFIGS=$2; shift 2;;
    --conns) CONNS=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --jars) JARS=$2; shift 2;;
    -h|--help) sed -n '2,18p' "$0"; exit 0;;
    *) echo "zero-call.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/zero-call-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$OUT/runs"
die() { echo "zero-call.sh: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
if ! command -v wrk >/dev/null 2>&1; then
  { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; } || die "wrk not found and apt-get install failed"
fi
for t in taskset python3; do command -v $t >/dev/null || die "$t not found"; done
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true install
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAR=$(mktemp /tmp/zero-call-XXXXXX.jar); cp cli/target/doubleface.jar "$JAR"
declare -A JAR_OF=()   # label -> a private copy of that build (the original may be rebuilt meanwhile)
for j in $JARS; do
  [[ $j == *=* && -f ${j#*=} ]] || die "--jars: '$j' (expected LABEL=PATH to an existing jar)"
  JAR_OF[${j%%=*}]=$(mktemp /tmp/zero-call-XXXXXX.jar); cp "${j#*=}" "${JAR_OF[${j%%=*}]}"
done
PORT=18181; PID=""
stop() { [[ -n "$PID" ]] || return 0; kill "$PID" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || { PID=""; return 0; }; sleep 0.1; done; kill -9 "$PID" 2>/dev/null || true; PID=""; }
trap 'stop; rm -f "$JAR" "${JAR_OF[@]}"' EXIT
wait_port() { local deadline=$(( $(date +%s) + 60 ))
  until (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; do
    kill -0 "$PID" 2>/dev/null || die "server exited before listening (see $OUT/runs)"
    [ "$(date +%s)" -lt "$deadline" ] || die "nothing listens on $PORT after 60 s"; sleep 0.2; done; }
parse() { python3 - "$1" <<'PY'
import re,sys
t=open(sys.argv[1]).read()
def ms(s):
    v=float(re.match(r'([\d.]+)',s).group(1)); u=s[len(re.match(r'[\d.]+',s).group(0)):]
    return v*{'us':0.001,'ms':1,'s':1000,'m':60000}.get(u,1)
rps=float(re.search(r'Requests/sec:\s+([\d.]+)',t).group(1))
p50=ms(re.search(r'^\s+50%\s+(\S+)',t,re.M).group(1)); p99=ms(re.search(r'^\s+99%\s+(\S+)',t,re.M).group(1))
e=re.search(r'Non-2xx or 3xx responses: (\d+)',t); s=re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)',t)
print(f"{rps:.0f},{p50:.3f},{p99:.3f},{(int(e.group(1)) if e else 0)+(sum(map(int,s.groups())) if s else 0)}")
PY
}
run_one() { # repeat system
  if [[ $2 == raw-netty ]]; then
    taskset -c 0 "$JAVA" -cp "$JAR" bench/peers/RawNettyHttp.java $PORT 1 > "$OUT/runs/server-$2.log" 2>&1 &
  else
    local jar=$JAR config=$2
    if [[ $2 == *~* ]]; then jar=${JAR_OF[${2#*~}]}; config=${2%%~*}; fi
    taskset -c 0 "$JAVA" -jar "$jar" serve ycsb --port $PORT --admin-port -1 --io-threads 1 --embedded-shards 1 \
      --config "$config" > "$OUT/runs/server-$2.log" 2>&1 &
  fi
  PID=$!
  wait_port
  taskset -c 1 wrk -t1 -c"$CONNS" -d"${WARMUP}s" "http://127.0.0.1:$PORT/health" > /dev/null 2>&1 || true
  local f="$OUT/runs/r$1-$2.txt"
  taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "http://127.0.0.1:$PORT/health" > "$f" 2>&1
  stop
  echo "$1,$2,$(parse "$f")" >> "$OUT/raw.csv"
  log "repeat $1 $2: $(tail -1 "$OUT/raw.csv" | cut -d, -f3-)"
}
echo "repeat,system,requests_per_s,p50_ms,p99_ms,errors" > "$OUT/raw.csv"
SYSTEMS="raw-netty"
for c in $CONFIGS; do
  if [[ -z $JARS ]]; then SYSTEMS+=" $c"; else for j in $JARS; do SYSTEMS+=" $c~${j%%=*}"; done; fi
done
log "$(( REPEATS * $(wc -w <<<"$SYSTEMS") )) runs of ${WARMUP}+${DURATION} s, wrk -t1 -c$CONNS -> $OUT"
for r in $(seq "$REPEATS"); do
  order=$SYSTEMS; (( r % 2 == 0 )) && order=$(tr ' ' '\n' <<<"$SYSTEMS" | tac | tr '\n' ' ')
  for s in $order; do run_one "$r" "$s"; done
done
python3 - "$OUT" "$CONNS" "$REPEATS" "$DURATION" "$WARMUP" "$JAVA" <<'PY'
import csv, json, os, platform, statistics, subprocess, sys
out, conns, repeats, duration, warmup, java = sys.argv[1:7]
rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
by = {}
for r in rows: by.setdefault(r["system"], {})[r["repeat"]] = r
raw = by.pop("raw-netty")
lines = ["| system | req/s (median) | vs raw Netty (min–max over repeats) | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|"]
def med(rs, k): return statistics.median(float(x[k]) for x in rs)
lines.append(f"| raw Netty (floor) | {med(raw.values(),'requests_per_s'):,.0f} | 1 | {med(raw.values(),'p50_ms'):.2f} | {med(raw.values(),'p99_ms'):.2f} | {sum(int(x['errors']) for x in raw.values())} |")
for s, rs in by.items():
    ratios = [float(rs[k]["requests_per_s"]) / float(raw[k]["requests_per_s"]) for k in rs if k in raw]
    lines.append(f"| doubleface `{s}` GET /health | {med(rs.values(),'requests_per_s'):,.0f} | {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) | {med(rs.values(),'p50_ms'):.2f} | {med(rs.values(),'p99_ms'):.2f} | {sum(int(x['errors']) for x in rs.values())} |")
txt = ("# A zero-call route against raw Netty (bench/zero-call.sh)\n\n" + "\n".join(lines) +
       f"\n\nwrk -t1 -c{conns}, {repeats} repeats of {duration} s after a {warmup} s warm-up; servers pinned to CPU 0 with one I/O thread, wrk on CPU 1; "
       "ratios pair the runs of one repeat. wrk's p99 is closed-loop (docs/measuring.md#open-and-closed-loop-coordinated-omission).\n")
open(os.path.join(out, "report.md"), "w").write(txt); print(txt)
def run(*c):
    p = subprocess.run(c, capture_output=True, text=True); return (p.stdout or p.stderr).strip()
json.dump({"script": "bench/zero-call.sh", "commit": run("git", "rev-parse", "HEAD"), "dirty": bool(run("git", "status", "--porcelain")),
           "java": run(java, "-version").splitlines()[0], "cpus": os.cpu_count(), "kernel": platform.release(),
           "wrk": run("wrk", "--version").splitlines()[0], "pinning": {"server": "cpu 0, 1 I/O thread", "wrk": "cpu 1"},
           "connections": int(conns), "repeats": int(repeats), "duration_s": int(duration), "warmup_s": int(warmup)},
          open(os.path.join(out, "environment.json"), "w"), indent=2)
PY
