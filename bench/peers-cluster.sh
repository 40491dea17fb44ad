#!/usr/bin/env bash
# Key-routed fanout over a real 3-master Redis Cluster: doubleface (redis-cluster://, calls routed by key)
# beside the frameworks' own cluster clients — Reactor Netty + Lettuce's RedisClusterClient and Vert.x with
# its Redis client in cluster mode — on equal work, interleaved; optionally (--systems "... ceiling") the
# hand-written raw-Netty ceiling (bench/peers/ceiling: slot map read once at start, keys placed by it), which
# is reported beside the peers, not as one of them.
#
#   bench/peers-cluster.sh [--systems "vertx reactor doubleface"] [--configs "doubleface type2a-1f1b"]
#                          [--cells "1:small:100 5:small:100 20:small:100 5:large:100"]
#                          [--repeats 3] [--duration 10] [--warmup 5] [--out DIR]
#
# Workload (bench/peers/, PEER_CLUSTER=1): GET /?fanout=K&size=small|large[&key=N] reads the K distinct keys
# s:<i>..s:<i+K-1> (100 B) or l:<i>.. (20,000 B), i random in 0..999, each where the cluster keeps it, and
# answers their values concatenated in key order. The cluster: 3 redis-server masters, cluster-enabled,
# created with `redis-cli --cluster create` on ports REDIS_BASE_PORT.. (default 6500-6502), pinned to CPU 1,
# the 2,000 keys written to their slots' owners (bench/peers_cluster.py load). Every system's body is checked
# byte for byte first (fanout 1, 5, 20 small and 5 large, key=42); then per repeat and cell each system runs
# in rotated order: started pinned to CPU 0 with 1 I/O thread, wrk -t1 -cN -dW warm-up (discarded), wrk -t1
# -cN -dD --latency (pinned to CPU 1 with the cluster), stopped. Writes DIR (default
# docs/results/peers-cluster-<UTC date>): raw.csv, environment.json, report.md (per cell every system's
# req/s and its ratio to the best framework peer of the same repeat; a summary of the best doubleface
# configuration against the best peer), runs/ (logs; packed into raw.tar.xz under docs/results).
# Bounded: every wrk run has a duration, every wait a timeout; every process is killed on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SYSTEMS="vertx reactor doubleface"; CONFIGS="doubleface type2a-1f1b"
CELLS="1:small:100 5:small:100 20:small:100 5:large:100"
REPEATS=3; DURATION=10; WARMUP=5; OUT=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --systems) SYSTEMS=$2; shift 2;; --configs) CONFIGS=$2; shift 2;; --cells) CELLS=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;; --duration) DURATION=$2; shift 2;; --warmup) WARMUP=$2; shift 2;;
    --out) OUT=$2; shift 2;; -h|--help) sed -n 2,24p "$0"; exit 0;;
    *) echo "peers-cluster.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/peers-cluster-$(date -u +%Y%m%d)}
PORT=${PORT:-8480}; REDIS_BASE_PORT=${REDIS_BASE_PORT:-6500}; MASTERS=3; KEYS=1000; CHECK_KEY=42
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "peers-cluster.sh: error: $*"; exit 1; }
for n in "$REPEATS" "$DURATION" "$WARMUP"; do [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || die "--repeats/--duration/--warmup: '$n' (expected a positive integer)"; done
for c in $CELLS; do [[ $c =~ ^[0-9]+:(small|large):[0-9]+$ ]] || die "cell '$c' (expected KEYS:small|large:CONNECTIONS)"; done
install_pkg() { command -v "$1" >/dev/null 2>&1 && return 0; log "installing $2"
  { apt-get update -qq && apt-get install -y -qq "$2"; } >/dev/null 2>&1 || die "$1 not found and apt-get install $2 failed"; }
install_pkg wrk wrk; install_pkg redis-server redis-server; install_pkg redis-cli redis-tools
for t in taskset python3 curl; do command -v $t >/dev/null || die "$t not found"; done

RUN_SYSTEMS=()
for s in $SYSTEMS; do
  case "$s" in
    vertx|reactor|ceiling) RUN_SYSTEMS+=("$s");;
    doubleface) for c in $CONFIGS; do RUN_SYSTEMS+=("doubleface/$c"); done;;
    *) die "unknown system '$s' (expected: vertx reactor ceiling doubleface)";;
  esac
done
MODULES=$(printf '%s\n' "${RUN_SYSTEMS[@]}" | cut -d/ -f1 | sort -u)
PEERS=bench/peers
if ! ls ~/.m2/repository/io/doubleface/doubleface-driver-redis/0.1.0-SNAPSHOT/*.jar >/dev/null 2>&1 && grep -qx doubleface <<<"$MODULES"; then
  log "installing doubleface's artifacts to ~/.m2"
  ./mvnw -B -q install -DskipTests -Dmaven.javadoc.skip -Djapicmp.skip
fi
stale=""
for m in $MODULES; do
  jar=$PEERS/$m/target/peer-$m.jar
  if [[ ! -f $jar ]] || [[ -n $(find "$PEERS/pom.xml" "$PEERS/$m" "$PEERS/common" -newer "$jar" -type f -not -path '*/target/*' | head -1) ]]; then stale+=" $m"; fi
done
if [[ -n $stale ]]; then
  log "building the peers (stale:$stale)"
  ./mvnw -B -q -f $PEERS/pom.xml package -DskipTests -pl "common,$(tr ' ' ',' <<<"${stale# }")" -am || die "the peers do not build"
fi
mkdir -p "$OUT/runs"
WORK=$(mktemp -d /tmp/peers-cluster-XXXXXX)
for m in $MODULES; do cp "$PEERS/$m/target/peer-$m.jar" "$WORK/"; done

SERVER_PID=""; NODE_PIDS=()
stop() { local pid=$1; [[ -n $pid ]] || return 0; kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$pid" 2>/dev/null || true; }
cleanup() { local rc=$?; stop "$SERVER_PID"; for p in "${NODE_PIDS[@]}"; do stop "$p"; done; rm -rf "$WORK"; exit $rc; }
trap cleanup EXIT
trap 'exit 130' INT TERM
port_open() { (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; }

LAST=$((REDIS_BASE_PORT + MASTERS - 1))
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do port_open $p && die "port $p is in use: set REDIS_BASE_PORT"; done
port_open $PORT && die "port $PORT is in use: set PORT"
log "starting a $MASTERS-master Redis Cluster on ports $REDIS_BASE_PORT-$LAST, pinned to CPU 1"
nodes=()
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  taskset -c 1 redis-server --save '' --appendonly no --port $p --bind 127.0.0.1 --daemonize no \
    --cluster-enabled yes --cluster-config-file "$WORK/nodes-$p.conf" --dir "$WORK" > "$OUT/runs/redis-$p.log" 2>&1 &
  NODE_PIDS+=($!); nodes+=("127.0.0.1:$p")
done
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  for _ in $(seq 100); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p $p ping >/dev/null 2>&1 || die "redis-server on $p does not answer (see $OUT/runs/redis-$p.log)"
done
timeout 60 redis-cli --cluster create "${nodes[@]}" --cluster-yes > "$OUT/runs/cluster-create.log" 2>&1 \
  || die "redis-cli --cluster create failed (see $OUT/runs/cluster-create.log)"
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  for _ in $(seq 300); do redis-cli -p $p cluster info 2>/dev/null | grep -q cluster_state:ok && break; sleep 0.1; done
  redis-cli -p $p cluster info | grep -q cluster_state:ok || die "node $p: cluster not ok"
done
log "loading $KEYS keys of 100 B and of 20,000 B where the cluster places them"
timeout 120 python3 bench/peers_cluster.py load $REDIS_BASE_PORT $KEYS 100 20000 | tee "$OUT/runs/load.log" >&2

start() { # system log -> SERVER_PID, once "ready on PORT" is printed
  local s=$1 cfg=() m=${1%%/*}
  [[ $s == */* ]] && cfg=("${s#*/}")
  : > "$2"
  PEER_CLUSTER=1 taskset -c 0 "$JAVA" ${JAVA_OPTS:-} -jar "$WORK/peer-$m.jar" $PORT 1 $REDIS_BASE_PORT $MASTERS "${cfg[@]}" > "$2" 2>&1 &
  SERVER_PID=$!
  local deadline=$(( $(date +%s) + 60 ))
  until grep -q "^ready on $PORT" "$2"; do
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$2" >&2; die "$s exited before it was ready (see $2)"; }
    [[ $(date +%s) -lt $deadline ]] || die "$s not ready after 60 s (see $2)"
    sleep 0.1
  done
}
for s in "${RUN_SYSTEMS[@]}"; do
  log "checking $s's bodies"
  start "$s" "$OUT/runs/check-${s//\//-}.log"
  grep -m1 "^ready on" "$OUT/runs/check-${s//\//-}.log" > "$WORK/ready-${s//\//-}"
  for c in 1:small 5:small 20:small 5:large; do
    fan=${c%%:*}; size=${c##*:}
    url="http://127.0.0.1:$PORT/?fanout=$fan&size=$size&key=$CHECK_KEY"
    code=$(curl -sS -m 10 -o "$WORK/body" -w '%{http_code}' "$url") || die "$s: $url: no answer"
    [[ $code == 200 ]] || die "$s: $url: status $code: $(head -c 300 "$WORK/body")"
    python3 bench/peers_cluster.py check "$WORK/body" "$fan" "$size" $CHECK_KEY $KEYS || die "$s: $url: WRONG BODY"
  done
  stop "$SERVER_PID"; SERVER_PID=""
done

echo "repeat,cell,system,requests_per_s,p50_ms,p99_ms,errors" > "$OUT/raw.csv"
n=${#RUN_SYSTEMS[@]}; turn=0
total=$(( REPEATS * $(wc -w <<<"$CELLS") * n )); done_runs=0
for r in $(seq "$REPEATS"); do
  for cell in $CELLS; do
    IFS=: read -r fan size conns <<<"$cell"
    for ((i = 0; i < n; i++)); do
      s=${RUN_SYSTEMS[$(( (i + turn) % n ))]}
      tag="r$r-${cell//:/-}-${s//\//-}"
      start "$s" "$OUT/runs/$tag.log"
      url="http://127.0.0.1:$PORT/?fanout=$fan&size=$size"
      taskset -c 1 wrk -t1 -c"$conns" -d"${WARMUP}s" "$url" > /dev/null 2>&1 || true
      taskset -c 1 wrk -t1 -c"$conns" -d"${DURATION}s" --latency "$url" > "$OUT/runs/$tag.wrk" 2>&1 || die "wrk failed: $OUT/runs/$tag.wrk"
      stop "$SERVER_PID"; SERVER_PID=""
      python3 bench/peers_report.py row "$r" "$cell" "$s" "$OUT/runs/$tag.wrk" >> "$OUT/raw.csv"
      done_runs=$((done_runs + 1))
      log "[$done_runs/$total] repeat $r, $fan key(s) $size, $conns connections, $s: $(tail -1 "$OUT/raw.csv" | cut -d, -f4-) (req/s,p50,p99,errors)"
    done
    turn=$((turn + 1))
  done
done

python3 - "$OUT" "$WORK" "$JAVA" "$REPEATS" "$DURATION" "$WARMUP" "$CELLS" "${RUN_SYSTEMS[*]}" <<'PY'
import json, os, platform, re, subprocess, sys
out, work, java, repeats, duration, warmup, cells, systems = sys.argv[1:9]
def run(*c):
    p = subprocess.run(c, capture_output=True, text=True); return (p.stdout or p.stderr).strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
pom = open("bench/peers/pom.xml").read()
ready = {f[len("ready-"):]: open(os.path.join(work, f)).read().strip() for f in os.listdir(work) if f.startswith("ready-")}
json.dump({"script": "bench/peers-cluster.sh", "git_commit": run("git", "rev-parse", "HEAD"),
           "dirty": bool(run("git", "status", "--porcelain")), "java": run(java, "-version").splitlines()[0],
           "kernel": platform.release(), "cpu_model": cpu, "cpus": os.cpu_count(), "wrk": run("wrk", "-v").splitlines()[0],
           "redis_server": run("redis-server", "--version"),
           "pinning": {"server": "cpu 0, 1 I/O thread", "redis_cluster": "cpu 1 (3 masters)", "wrk": "cpu 1"},
           "systems": systems.split(), "peer_versions_pom": dict(re.findall(r"<([a-z0-9.-]+\.version)>([^<]+)<", pom)),
           "peer_ready_lines": ready, "cells": cells.split(), "repeats": int(repeats), "duration_s": int(duration),
           "warmup_s": int(warmup), "masters": 3, "keys": 1000, "value_bytes": {"small": 100, "large": 20000}},
          open(os.path.join(out, "environment.json"), "w"), indent=2)
PY
python3 bench/peers_cluster.py report "$OUT"
if [[ $(realpath "$OUT") == "$ROOT"/docs/results/* ]]; then
  python3 bench/results-pack.py "$OUT" >&2 || log "warning: bench/results-pack.py failed; pack $OUT before committing it"
fi
log "report: $OUT/report.md"
