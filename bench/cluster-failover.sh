#!/usr/bin/env bash
# A Redis Cluster fail-over under open-loop load: the YCSB mid-tier (serve ycsb, one configuration) over a
# 3-master cluster with a replica each; the load generator sends Poisson arrivals at --rate for
# --duration (after --warmup); --kill-at seconds into the measured window master 0 dies
# (redis-cli shutdown nosave). Reports: when the cluster promoted the replica (polled), when the
# mid-tier's slot map changed (its /admin/stats topology, polled every 100 ms), the mid-tier's failed
# requests (503/504) and when they stopped, and the load generator's per-second p50/p99/max before,
# during and after (from its --hlog, latency from the intended send time).
#
# usage: bench/cluster-failover.sh [--config doubleface] [--rate 2000] [--duration 30] [--warmup 10]
#                                  [--kill-at 10] [--url '/query?fanout=1&size=small&key={key}'] [--out DIR]
# Pinning: the mid-tier on CPU 0 (1 I/O loop); the Redis nodes and the load generator on CPU 1.
# Ports: 7401-7406 (3 masters, then their replicas), 8495 (mid-tier), 8496 (its admin listener).
# Writes DIR (default docs/results/cluster-failover-<UTC date>): report.md, timeline.csv (the 100-ms
# samples), seconds.csv (per-second latency), events.txt (shutdown and promotion, epoch ms), load.json,
# environment.json, runs/ (logs). bench/cluster_failover_report.py OUT … writes report.md again from them.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd); cd "$ROOT"
CONFIG=doubleface; RATE=2000; DURATION=30; WARMUP=10; KILL_AT=10; URL='/query?fanout=1&size=small&key={key}'; OUT=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --config) CONFIG=$2; shift 2;; --rate) RATE=$2; shift 2;; --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;; --kill-at) KILL_AT=$2; shift 2;; --url) URL=$2; shift 2;; --out) OUT=$2; shift 2;;
    -h|--help) sed -n 2,16p "$0"; exit 0;;
    *) echo "cluster-failover.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/cluster-failover-$(date -u +%Y%m%d)}
(( KILL_AT > 0 && KILL_AT < DURATION )) || { echo "--kill-at must be inside the measured window (0 < $KILL_AT < $DURATION)" >&2; exit 2; }
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "cluster-failover.sh: error: $*"; exit 1; }
for t in redis-cli taskset python3 curl; do command -v $t >/dev/null || die "$t not found (apt-get install redis-tools util-linux python3 curl)"; done
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -pl cli -am package -DskipTests -Djapicmp.skip
mkdir -p "$OUT/runs"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_line() { for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  die "no '$2' in $1 within $3 s: $(tail -5 "$1")"; }
log "starting a 3-master cluster with a replica each (7401-7406), loaded, on CPU 1"
taskset -c 1 "$JAVA" -jar cli/target/doubleface.jar leaf redis --cluster --masters 3 --replicas 1 --base-port 7401 \
  --records 1000 > "$OUT/runs/leaf.log" 2>&1 & pids+=($!)
wait_line "$OUT/runs/leaf.log" "redis leaf:" 90
for _ in $(seq 100); do # the replicas hold every record before a master dies
  lag=0; for p in 7404 7405 7406; do
    info=$(redis-cli -p $p info replication | tr -d '\r')
    m=$(sed -n 's/^master_repl_offset://p' <<<"$info"); s=$(sed -n 's/^slave_repl_offset://p' <<<"$info")
    [[ -n $m && $m == "$s" ]] || lag=1
  done; [[ $lag == 0 ]] && break; sleep 0.1
done
taskset -c 0 "$JAVA" ${JAVA_OPTS:-} -jar cli/target/doubleface.jar serve ycsb --port 8495 --admin-port 8496 --io-threads 1 \
  --config "$CONFIG" --records 1000 --deadline 1s --shards redis-cluster://127.0.0.1:7401,127.0.0.1:7402,127.0.0.1:7403 \
  > "$OUT/runs/serve.log" 2>&1 & pids+=($!)
wait_line "$OUT/runs/serve.log" "listening" 60
log "open loop at $RATE/s: ${WARMUP}s warm-up + ${DURATION}s; master 0 (7401) dies ${KILL_AT}s into the window"
taskset -c 1 "$JAVA" -jar cli/target/doubleface.jar load --target http://127.0.0.1:8495 --rate "$RATE" --url "$URL" \
  --warmup "${WARMUP}s" --duration "${DURATION}s" --timeout 5s --hlog "$OUT/runs/load.hlog" --json \
  > "$OUT/load.json" 2> "$OUT/runs/load.log" & load_pid=$!; pids+=($load_pid)
python3 - "$OUT/timeline.csv" $((WARMUP + DURATION + 2)) <<'PY' & sampler=$!; pids+=($sampler)
import json, sys, time, urllib.request
out, seconds = sys.argv[1], float(sys.argv[2])
with open(out, "w") as f:
    f.write("epoch_ms,ok,failed,slot_map_version,owner_of_slot_0,master_7401_up\n")
    end = time.time() + seconds
    while time.time() < end:
        t = int(time.time() * 1000)
        try:
            s = json.load(urllib.request.urlopen("http://127.0.0.1:8496/admin/stats", timeout=1))
            req = s["requests"]
            topo = s["backends"][0].get("topology", {})
            owner = next((m["address"] for m in topo.get("masters", []) if m["slots"] and m["slots"][0][0] == 0), "")
            f.write(f"{t},{req.get('ok', 0)},{req['answered'] - req.get('ok', 0)},{topo.get('slot_map_version', '')},{owner},\n")
        except Exception as e:
            f.write(f"{t},,,,,\n")
        f.flush()
        time.sleep(0.1)
PY
sleep $((WARMUP + KILL_AT))
kill_ms=$(date +%s%3N)
redis-cli -p 7401 shutdown nosave > /dev/null 2>&1 || true
log "master 0 shut down at $kill_ms"
promoted_ms=""
for _ in $(seq 600); do
  role=$(redis-cli -p 7404 role 2>/dev/null | head -1 | tr -d '\r')
  [[ $role == master ]] && { promoted_ms=$(date +%s%3N); break; }
  sleep 0.05
done
log "replica 7404 is master at ${promoted_ms:-never}"
wait $load_pid || die "the load generator failed (see $OUT/runs/load.log)"
wait $sampler || true
"$JAVA" -cp cli/target/doubleface.jar bench/HlogSeconds.java "$OUT/runs/load.hlog" > "$OUT/seconds.csv"
echo "$kill_ms ${promoted_ms:-0}" > "$OUT/events.txt"
python3 bench/cluster_failover_report.py "$OUT" "$CONFIG" "$RATE" "$DURATION" "$WARMUP" "$KILL_AT" "$URL"
if [[ $(realpath "$OUT") == "$ROOT"/docs/results/* ]]; then
  python3 bench/results-pack.py "$OUT" >&2 || log "warning: bench/results-pack.py failed; pack $OUT before committing it"
fi
log "report: $OUT/report.md"
