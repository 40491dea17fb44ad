#!/usr/bin/env bash
# Counts the mid-tier's system calls, CPU time (task-clock) and context switches per request for a
# few configurations under the same wrk load (perf tracepoints on the mid-tier process only).
# (Sampling profiles were dropped: perf gets almost no samples in this VM.)
#
#   bench/syscalls-per-request.sh [--out DIR] [--configs "type2a-1f1b doubleface"] [--fanout 5]
#                                 [--size small] [--conns 16] [--duration 6]
#
# Same set-up as models-wrk.sh (mid-tier on CPU 0, leaf and wrk on CPU 1, nice -10) on its own
# ports (8180/9190/7201..). Each configuration: switch, 8 s warm-up, then a wrk run during which
# `perf stat -p MID` counts syscalls for 4 s; requests in the same window from /admin/stats.
# Needs perf with the syscalls tracepoints (linux-perf). Bounded; kills what it started on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIGS="type2a-1f1b doubleface"; FANOUT=5; SIZE=small; CONNS=16; DURATION=6
OUT=$ROOT/docs/results/syscalls-$(date -u +%Y%m%dT%H%M%SZ)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift ;; --configs) CONFIGS=$2; shift ;; --fanout) FANOUT=$2; shift ;;
    --size) SIZE=$2; shift ;; --conns) CONNS=$2; shift ;; --duration) DURATION=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac; shift
done
PORT=8180; ADMIN=9190; BASE=7201
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
JAR=$(mktemp /tmp/doubleface-sys-XXXXXX.jar); cp "$ROOT/cli/target/doubleface.jar" "$JAR"
command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk >/dev/null)
command -v perf >/dev/null || { echo "perf not found" >&2; exit 1; }
mkdir -p "$OUT"
LP=""; MP=""
cleanup() { for p in $MP $LP; do kill "$p" 2>/dev/null || true; done; sleep 1; for p in $MP $LP; do kill -9 "$p" 2>/dev/null || true; done; rm -f "$JAR"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
taskset -c 1 nice -n -10 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" leaf kv --shards 20 --base-port $BASE --records 1000 > >(head -c 1000000 > "$OUT/leaf.log") 2>&1 & LP=$!
until (exec 3<>/dev/tcp/127.0.0.1/$((BASE + 19))) 2>/dev/null; do sleep 0.2; done
taskset -c 0 nice -n -10 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN \
  --shards kv://127.0.0.1:$BASE-$((BASE + 19)) --records 1000 --config ${CONFIGS%% *} --io-threads 1 > >(head -c 1000000 > "$OUT/server.log") 2>&1 & MP=$!
until (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; do sleep 0.2; done
URL="http://127.0.0.1:$PORT/query?fanout=$FANOUT&size=$SIZE"
ok() { curl -s -m 10 "http://127.0.0.1:$ADMIN/admin/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"]["ok"])'; }
EV="raw_syscalls:sys_enter"
for s in epoll_wait epoll_pwait read write readv writev recvfrom sendto recvmsg sendmsg futex sched_yield epoll_ctl; do
  perf list 2>/dev/null | grep -q "syscalls:sys_enter_$s " && EV="$EV,syscalls:sys_enter_$s"
done
echo "config,requests,seconds,syscall,count,per_request" > "$OUT/syscalls.csv"
for cfg in $CONFIGS; do
  curl -s -m 30 -X PUT "http://127.0.0.1:$ADMIN/admin/config?name=$cfg" > /dev/null
  taskset -c 1 wrk -t1 -c"$CONNS" -d8s "$URL" > /dev/null
  taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL" > "$OUT/$cfg.wrk.txt" &
  W=$!
  sleep 1
  a=$(ok)
  perf stat -x, -e "$EV,task-clock,context-switches" -p "$MP" -o "$OUT/$cfg.perfstat.csv" -- sleep 4
  b=$(ok)
  wait $W
  n=$((b - a))
  awk -F, -v c="$cfg" -v n="$n" '$1 ~ /^[0-9.]+$/ { printf "%s,%d,4,%s,%s,%.3f\n", c, n, $3, $1, $1 / n }' "$OUT/$cfg.perfstat.csv" >> "$OUT/syscalls.csv"
  echo "$cfg: $n requests in 4 s" >&2
done
column -s, -t "$OUT/syscalls.csv" >&2
