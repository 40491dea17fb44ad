#!/usr/bin/env bash
# Where does the kernel time go? For each configuration and cell, under wrk (closed loop):
# TCP segments per request on each leg (from `ss -ti` segs_out of the live sockets), and user/
# system CPU per request of the mid-tier and of the KV leaf (from /proc/<pid>/task/*/stat).
# Interleaved: for each cell, A B A B ... so ratios come from the same minutes.
#
#   bench/tcp-segments.sh [--configs "doubleface type2a-1f1b"] [--cells "5:small:16 5:small:256"]
#                         [--duration 6] [--repeats 2] [--out DIR]
#
# Pinning as bench/models-wrk.sh: mid-tier on CPU 0 (--io-threads 1), leaf and wrk on CPU 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CONFIGS="doubleface type2a-1f1b"
CELLS="1:small:16 5:small:16 20:small:16 5:small:256 20:small:256"
DURATION=6
REPEATS=2
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --configs) CONFIGS="$2"; shift 2 ;;
    --cells) CELLS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "tcp-segments: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
command -v ss >/dev/null || { apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null; }
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ -f cli/target/doubleface.jar ]] || ./mvnw -q -B -DskipTests install
JAR=$(mktemp /tmp/doubleface-seg-XXXXXX.jar); cp cli/target/doubleface.jar "$JAR"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-docs/results/tcp-segments-$STAMP}
mkdir -p "$OUT"
PORT=8680; ADMIN=9680; BASE=7601
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$JAR"; }
trap cleanup EXIT

taskset -c 1 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" leaf kv --shards 20 --base-port $BASE --records 1000 > "$OUT/leaf.log" 2>&1 &
LEAF=$!; PIDS+=($LEAF)
sleep 2
taskset -c 0 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN \
  --shards kv://127.0.0.1:$BASE-$((BASE + 19)) --config doubleface --io-threads 1 > "$OUT/server.log" 2>&1 &
MID=$!; PIDS+=($MID)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$ADMIN/admin/config" >/dev/null && break; sleep 0.2; done

ok() { curl -s "http://127.0.0.1:$ADMIN/admin/stats" | grep -o '"ok":[0-9]*' | head -1 | cut -d: -f2; }
# user and system clock ticks of a process, summed over its threads
ticks() { cat /proc/$1/task/*/stat 2>/dev/null | sed 's/.*) //' | awk '{u+=$12; s+=$13} END {print u, s}'; }
segs() {
  ss -tinH state established | awk -v base=$BASE -v port=$PORT '
    NR % 2 == 1 { lp = $3; sub(/.*:/, "", lp); rp = $4; sub(/.*:/, "", rp); next }
    { so = 0; for (i = 1; i <= NF; i++) if ($i ~ /^segs_out:/) { split($i, x, ":"); so = x[2] }
      if (lp >= base && lp < base + 20) k = "leaf_to_mid"; else if (rp >= base && rp < base + 20) k = "mid_to_leaf";
      else if (lp == port) k = "mid_to_client"; else if (rp == port) k = "client_to_mid"; else next
      s[k] += so }
    END { printf "%d %d %d %d\n", s["client_to_mid"], s["mid_to_leaf"], s["leaf_to_mid"], s["mid_to_client"] }'
}
HZ=$(getconf CLK_TCK)
echo "config,repeat,fanout,size,conns,rps,requests,segs_client_to_mid,segs_mid_to_leaf,segs_leaf_to_mid,segs_mid_to_client,calls_per_leaf_segment,mid_user_us,mid_sys_us,leaf_user_us,leaf_sys_us" > "$OUT/raw.csv"

# warm-up: every configuration, 10 s each (JIT), discarded
for c in $CONFIGS; do
  curl -s -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$c" >/dev/null
  taskset -c 1 wrk -t1 -c16 -d10s "http://127.0.0.1:$PORT/query?fanout=5&size=small" >/dev/null
  echo "warm-up $c done" >&2
done

for r in $(seq "$REPEATS"); do
  for cell in $CELLS; do
    IFS=: read -r F S C <<< "$cell"
    for c in $CONFIGS; do
      curl -s -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$c" >/dev/null
      URL="http://127.0.0.1:$PORT/query?fanout=$F&size=$S"
      taskset -c 1 wrk -t1 -c"$C" -d"$((DURATION + 2))s" "$URL" > "$OUT/wrk.tmp" &
      W=$!
      sleep 1 # connections up, steady state
      s0=$(segs); o0=$(ok); m0=$(ticks $MID); l0=$(ticks $LEAF)
      sleep "$DURATION"
      s1=$(segs); o1=$(ok); m1=$(ticks $MID); l1=$(ticks $LEAF)
      wait $W
      rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/wrk.tmp")
      n=$((o1 - o0))
      line=$(echo "$s0 $s1 $m0 $m1 $l0 $l1" | awk -v n=$n -v hz=$HZ -v f=$F '{
        cm = ($5 - $1) / n; ml = ($6 - $2) / n; lm = ($7 - $3) / n; mc = ($8 - $4) / n
        us = 1e6 / hz / n
        printf "%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.2f,%.2f,%.2f", cm, ml, lm, mc, (ml > 0 ? f / ml : 0), ($11 - $9) * us, ($12 - $10) * us, ($15 - $13) * us, ($16 - $14) * us }')
      echo "$c,$r,$F,$S,$C,$rps,$n,$line" >> "$OUT/raw.csv"
      echo "repeat $r fanout $F $S c$C $c: $rps req/s, $line" >&2
    done
  done
done
rm -f "$OUT/wrk.tmp"

{
  echo "# TCP segments and CPU per request"
  echo
  echo "Command: \`bench/tcp-segments.sh --configs \"$CONFIGS\" --cells \"$CELLS\" --duration $DURATION --repeats $REPEATS\`"
  echo "Commit $(git rev-parse --short HEAD), $(\"$JAVA\" -version 2>&1 | head -1), $(nproc) CPUs. Mid-tier pinned to CPU 0 with one I/O loop;"
  echo "KV leaf (20 shards, 1 loop) and wrk (1 thread) pinned to CPU 1. Closed loop (wrk). Each configuration warmed up"
  echo "10 s first. Segments from \`ss -ti\` segs_out of the live sockets; CPU from /proc task stats; both over"
  echo "${DURATION} s windows inside the wrk run. Per request = delta / requests answered ok in the window."
  echo
  echo "| config | rep | fanout | size | conns | req/s | segs client→mid | mid→leaf | leaf→mid | mid→client | calls per leaf segment | mid user µs | mid sys µs | leaf user µs | leaf sys µs |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$OUT/raw.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1,$2,$3,$4,$5,$6,$8,$9,$10,$11,$12,$13,$14,$15,$16}'
} > "$OUT/report.md"
echo "wrote $OUT/report.md" >&2
