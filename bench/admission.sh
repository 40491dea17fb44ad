#!/usr/bin/env bash
# Load shedding, measured: what a served client and a refused client see at 0.5x, 2x and 4x the
# server's capacity, with admission control off, fixed and adaptive (docs/reliability.md).
#
#   bench/admission.sh [--config NAME] [--fanout K] [--reply-work-us U] [--duration S] [--warmup S] [--out DIR]
#
# One mid-tier (serve ycsb, embedded KV shards in the same process, one I/O thread, U µs of CPU work
# per shard reply so that one core's capacity is a rate the generator's core can offer 4x of) pinned to core 0;
# the open-loop generator (Poisson arrivals, latency from the intended send time) pinned to core 1.
#   1. capacity C: closed loop, 64 users, admission off;
#   2. for each admission setting -- off, fixed N (N = C x 10 ms by Little's law, at least 8),
#      adaptive (Gradient2 defaults) -- a fresh server, then open loop at 0.5C, 2C and 4C.
# Every run is bounded (warm-up + duration, 5 s client timeout) and stops by itself. Writes the JSON
# summaries and the server's /admin/stats per run into DIR and prints a table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CONFIG=doubleface; FANOUT=5; WORK=100; DURATION=15; WARMUP=5; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) CONFIG=$2; shift 2;;
    --fanout) FANOUT=$2; shift 2;;
    --reply-work-us) WORK=$2; shift 2;;
    --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,14p' "$0"; exit 0;;
    *) echo "admission.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/admission-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$OUT"
for t in taskset python3 curl; do command -v $t >/dev/null || { echo "admission.sh: $t not found" >&2; exit 1; }; done
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true install
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAR=cli/target/doubleface.jar
PORT=18080; ADMIN=19090
URL="/query?fanout=$FANOUT&size=small&key={key}"
server_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; server_pid=""; }
trap stop_server EXIT

start_server() { # $1 = admission spec
  taskset -c 0 "$JAVA" -Xmx2g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN --io-threads 1 \
    --config "$CONFIG" --reply-work-us "$WORK" --admission "$1" > "$OUT/server-$1.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$ADMIN/admin/stats" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "admission.sh: server did not start (see $OUT/server-$1.log)" >&2; exit 1
}
load() { # $@ = load options; prints the JSON summary
  taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" --quiet --json \
    --warmup "${WARMUP}s" --duration "${DURATION}s" --timeout 5s --max-connections 4096 "$@"
}

echo "admission.sh: config $CONFIG, fanout $FANOUT, ${WORK} us per reply, ${WARMUP}s + ${DURATION}s per run -> $OUT"
start_server off
load --users 64 > "$OUT/capacity.json"
stop_server
CAP=$(python3 -c "import json;print(int(json.load(open('$OUT/capacity.json'))['throughput_rps']))")
FIXED=$(( CAP / 100 > 8 ? CAP / 100 : 8 ))
echo "admission.sh: capacity $CAP req/s (closed loop, 64 users); fixed limit $FIXED (C x 10 ms)"

for adm in off "$FIXED" adaptive; do
  start_server "$adm"
  for mult in 0.5 2 4; do
    rate=$(python3 -c "print(int($CAP * $mult))")
    echo "admission.sh: admission $adm, ${mult}x = $rate req/s ..."
    load --rate "$rate" --seed 7 > "$OUT/open-$adm-${mult}x.json" || true
    curl -s "http://127.0.0.1:$ADMIN/admin/stats" > "$OUT/stats-$adm-${mult}x.json" || true
    sleep 2 # let the overload drain before the next rate
  done
  stop_server
done

python3 - "$OUT" "$CAP" "$FIXED" "$CONFIG" "$FANOUT" "$WORK" <<'PY' | tee "$OUT/table.md"
import json, sys, os
out, cap, fixed, config, fanout, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
def f(v, fmt="{:.1f}"): return "n/a" if v is None else fmt.format(v)
print(f"config `{config}`, fanout {fanout} small, {work} µs of work per reply, capacity {cap:,} req/s (closed loop, 64 users); fixed limit {fixed}\n")
print("| admission | offered | served (2xx) req/s | served p50 / p99 / p99.9 ms | 5xx req/s | 5xx p99 ms | server: 503 overloaded / 504 late | client timeouts (5 s) | other errors |")
print("|---|---|---|---|---|---|---|---|---|")
for adm in ["off", fixed, "adaptive"]:
    prev = {}
    for mult in ["0.5", "2", "4"]:
        p = os.path.join(out, f"open-{adm}-{mult}x.json")
        st = {}
        try:
            st = json.load(open(os.path.join(out, f"stats-{adm}-{mult}x.json")))["requests"]
        except Exception:
            pass
        over = st.get("overloaded", 0) - prev.get("overloaded", 0)
        late = st.get("timeout", 0) - prev.get("timeout", 0)
        prev = st or prev
        if not os.path.exists(p) or os.path.getsize(p) == 0:
            print(f"| {adm} | {mult}x | run failed | | | | | | |"); continue
        j = json.load(open(p))
        d = j["duration_s"]; ok = j["ok"]; bad = j["failed"]; kinds = j["errors_by_kind"]
        other = kinds.get("connect", 0) + kinds.get("closed", 0) + kinds.get("status_4xx", 0)
        print(f"| {adm} | {mult}x ({int(j['offered_rate']):,}/s{'' if j['rate_kept'] else ', rate NOT kept'}) "
              f"| {ok['requests']/d:,.0f} | {f(ok['p50_ms'])} / {f(ok['p99_ms'])} / {f(ok['p999_ms'])} "
              f"| {kinds.get('status_5xx',0)/d:,.0f} | {f(bad['p99_ms'])} | {over:,} / {late:,} "
              f"| {kinds.get('timeout',0):,} | {other:,} |")
print("\nserver counts include the warm-up; client columns are the measured part only.")
PY
