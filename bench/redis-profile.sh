#!/usr/bin/env bash
# Where does the mid-tier's CPU go over Redis? For each configuration, under wrk (closed loop):
# mid-tier CPU µs per request (from /proc) and a JFR execution profile of the mid-tier, summarised
# by hot methods (self time) and by library (inclusive: io.lettuce, io.netty, io.doubleface, …).
# Interleaved: for each repeat, A B A B ... so ratios come from the same minutes.
#
#   bench/redis-profile.sh [--configs "doubleface type2a-1f1b"] [--fanout 5] [--users 100]
#                          [--duration 10] [--repeats 1] [--out DIR]
#
# Pinning as the experiments: mid-tier on CPU 0 (--io-threads 1), the Redis shards and wrk on CPU 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CONFIGS="doubleface type2a-1f1b"
FANOUT=5
USERS=100
DURATION=10
REPEATS=1
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --configs) CONFIGS="$2"; shift 2 ;;
    --fanout) FANOUT="$2"; shift 2 ;;
    --users) USERS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "redis-profile: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
JDK=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA=$JDK/bin/java
[[ -f cli/target/doubleface.jar ]] || ./mvnw -q -B -DskipTests install
JAR=$(mktemp /tmp/doubleface-rp-XXXXXX.jar); cp cli/target/doubleface.jar "$JAR"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-docs/results/redis-profile-$STAMP}
mkdir -p "$OUT"
PORT=8690; ADMIN=9690; BASE=7651
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$JAR"; }
trap cleanup EXIT

taskset -c 1 "$JAVA" -jar "$JAR" leaf redis --shards 20 --base-port $BASE --records 1000 > "$OUT/leaf.log" 2>&1 &
LEAF=$!; PIDS+=($LEAF)
for _ in $(seq 200); do grep -q "listening on" "$OUT/leaf.log" 2>/dev/null && break; sleep 0.3; done
sleep 2
taskset -c 0 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN \
  --shards redis://127.0.0.1:$BASE-$((BASE + 19)) --config doubleface --io-threads 1 \
  --prepare "$(echo $CONFIGS | tr ' ' ',')" > "$OUT/server.log" 2>&1 &
MID=$!; PIDS+=($MID)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$ADMIN/admin/config" >/dev/null && break; sleep 0.2; done

ok() { curl -s "http://127.0.0.1:$ADMIN/admin/stats" | grep -o '"ok":[0-9]*' | head -1 | cut -d: -f2; }
ticks() { cat /proc/$1/task/*/stat 2>/dev/null | sed 's/.*) //' | awk '{u+=$12; s+=$13} END {print u + s}'; }
URL="http://127.0.0.1:$PORT/query?fanout=$FANOUT&size=small&key=42"
HZ=$(getconf CLK_TCK)

{
  echo "# redis-profile $STAMP"
  echo "commit $(git rev-parse --short HEAD), $("$JAVA" -version 2>&1 | head -1), $(nproc) CPUs"
  echo "mid-tier on CPU 0 (1 I/O loop), 20 redis-server shards ($(redis-server --version | cut -d' ' -f3)) and wrk on CPU 1"
  echo "wrk -t1 -c$USERS -d${DURATION}s $URL, after 10 s warm-up per configuration; JFR settings=profile"
  echo
} > "$OUT/summary.txt"

for c in $CONFIGS; do
  curl -sf -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$c" >/dev/null
  taskset -c 1 wrk -t1 -c"$USERS" -d10s "$URL" >/dev/null
done
for r in $(seq "$REPEATS"); do
  for c in $CONFIGS; do
    curl -sf -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$c" >/dev/null
    taskset -c 1 wrk -t1 -c"$USERS" -d2s "$URL" >/dev/null
    jfr="$OUT/$c-r$r.jfr"
    t0=$(ticks $MID); o0=$(ok)
    "$JDK/bin/jcmd" $MID JFR.start name=p settings=profile filename="$(readlink -f "$OUT")/$c-r$r.jfr" >/dev/null
    taskset -c 1 wrk -t1 -c"$USERS" -d"${DURATION}s" --latency "$URL" > "$OUT/wrk-$c-r$r.txt"
    "$JDK/bin/jcmd" $MID JFR.stop name=p >/dev/null
    t1=$(ticks $MID); o1=$(ok)
    rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/wrk-$c-r$r.txt")
    us=$(awk -v t=$((t1 - t0)) -v n=$((o1 - o0)) -v hz="$HZ" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
    echo "$c repeat $r: $rps req/s, mid-tier CPU $us µs/request (with JFR on)" | tee -a "$OUT/summary.txt"
    "$JDK/bin/jfr" view --width 160 hot-methods "$jfr" > "$OUT/hot-$c-r$r.txt" 2>&1 || true
    "$JDK/bin/jfr" print --json --events jdk.ExecutionSample "$jfr" > "$OUT/samples.json"
    python3 bench/jfr_libraries.py "$OUT/samples.json" > "$OUT/libraries-$c-r$r.txt"
    rm -f "$OUT/samples.json"
    gzip -f "$jfr"
  done
done
echo "results: $OUT"
