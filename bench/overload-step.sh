#!/usr/bin/env bash
# Overload steps in 10-ms intervals: what a client sees when the offered load steps from 0.5x the
# server's capacity to 1.4x and to 4x, under admission control alone (a fixed limit; Gradient2) and
# under Gradient2 with the load adapter choosing the threading configuration (docs/reliability.md,
# "Overload steps").
#
#   bench/overload-step.sh [--fanout K] [--reply-work-us U] [--repeats N] [--steps 1.4,4]
#                          [--calm S] [--overload S] [--profile FILE] [--out DIR]
#
# One mid-tier (serve ycsb, embedded KV shards in the same process, one I/O thread, U us of CPU work
# per shard reply, so that 4x its capacity is a rate the generator's core can offer) pinned to
# core 0; the open-loop generator (Poisson arrivals, latency from the intended send time, 5 s
# timeout, 10-ms interval log) pinned to core 1.
#   1. capacity C: closed loop, 64 users, admission off, configuration doubleface;
#   2. the adapter's profile (unless --profile): doubleface train --midtier over a server with this
#      workload, configurations doubleface and sip, loads 0.25C, 0.5C, 0.8C, 1.1C, 3 repeats;
#   3. N repeats, interleaved: for each setting -- fixed (limit C x 10 ms, at least 8), gradient2
#      (--admission adaptive), gradient2+adapter (the same, --config adaptive --profile FILE) -- a
#      fresh server, 10 s at 0.5C not recorded (JIT), then for each step one run: 0.5C for the
#      warm-up and --calm seconds, then the step for --overload seconds;
#   4. bench/OverloadSteps.java: the repeats merged per 10-ms interval, aligned on the step.
# Every run is bounded and stops by itself. Writes DIR (default docs/results/overload-step-<UTC>):
# capacity.json, profile.json, run-*.hlog and run-*.json (the generator's), stats-*.json (the
# server's /admin/stats after each run), prewarm-*.json, intervals.csv, report.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FANOUT=5; WORK=50; REPEATS=5; STEPS=1.4,4; CALM=3; OVERLOAD=3; WARMUP=5; PREWARM=10; PROFILE=""; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fanout) FANOUT=$2; shift 2;;
    --reply-work-us) WORK=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --steps) STEPS=$2; shift 2;;
    --calm) CALM=$2; shift 2;;
    --overload) OVERLOAD=$2; shift 2;;
    --profile) PROFILE=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,22p' "$0"; exit 0;;
    *) echo "overload-step.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/overload-step-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
for t in taskset python3 curl; do command -v $t >/dev/null || { echo "overload-step.sh: $t not found" >&2; exit 1; }; done
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
"$JAVA" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])' || { echo "overload-step.sh: $JAVA is not Java 21+ (set JAVA_HOME)" >&2; exit 1; }
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true install
JAR=cli/target/doubleface.jar
PORT=18180; ADMIN=19190
URL="/query?fanout=$FANOUT&size=small&key={key}"
log() { printf '[%s] overload-step.sh: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
server_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; server_pid=""; }
trap stop_server EXIT

start_server() { # $1 = log name, then serve options
  local name=$1; shift
  taskset -c 0 "$JAVA" -Xmx2g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN --io-threads 1 \
    --reply-work-us "$WORK" "$@" > "$OUT/server-$name.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$ADMIN/admin/stats" >/dev/null 2>&1 && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "overload-step.sh: server did not start (see $OUT/server-$name.log)" >&2; exit 1
}
load() { # $@ = load options; prints the JSON summary
  taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" --quiet \
    --json --timeout 5s --max-connections 4096 "$@"
}

log "fanout $FANOUT, ${WORK} us per reply, steps $STEPS, $REPEATS repeats -> $OUT"
start_server capacity --config doubleface
load --users 64 --warmup 5s --duration 10s > "$OUT/capacity.json"
CAP=$(python3 -c "import json;print(int(json.load(open('$OUT/capacity.json'))['throughput_rps']))")
FIXED=$(( CAP / 100 > 8 ? CAP / 100 : 8 ))
LOW=$(( CAP / 2 ))
log "capacity $CAP req/s (closed loop, 64 users); fixed limit $FIXED (C x 10 ms); calm rate $LOW req/s"
if [[ -z "$PROFILE" ]]; then
  PROFILE=$OUT/profile.json
  loads=$(python3 -c "c=$CAP;print(','.join(str(int(c*f)) for f in (0.25,0.5,0.8,1.1)))")
  log "training the adapter's profile over this server (doubleface, sip at $loads req/s, 3 repeats)"
  taskset -c 1 "$JAVA" -jar "$JAR" train --midtier "http://127.0.0.1:$PORT" --admin "http://127.0.0.1:$ADMIN" \
    --configs doubleface,sip --loads "$loads" --repeats 3 --warmup 3s --duration 8s --out "$PROFILE" \
    --results "$OUT/train" > "$OUT/train.log" 2>&1 || { echo "overload-step.sh: training failed (see $OUT/train.log)" >&2; exit 1; }
else
  cp "$PROFILE" "$OUT/profile.json"
fi
stop_server

IFS=, read -r -a MULTS <<< "$STEPS"
SETTINGS=(fixed gradient2 gradient2+adapter)
for ((r = 1; r <= REPEATS; r++)); do
  for s in "${SETTINGS[@]}"; do
    case $s in
      fixed) start_server "$s-r$r" --config doubleface --admission "$FIXED";;
      gradient2) start_server "$s-r$r" --config doubleface --admission adaptive;;
      gradient2+adapter) start_server "$s-r$r" --config adaptive --profile "$PROFILE" --admission adaptive;;
    esac
    # JIT and pools warm at the calm rate first, so that every step's calm phase is a warm server's
    load --rate "$LOW" --warmup 0s --duration "${PREWARM}s" --seed 99 > "$OUT/prewarm-$s-r$r.json" || true
    for m in "${MULTS[@]}"; do
      high=$(python3 -c "print(int($CAP * $m))")
      log "repeat $r/$REPEATS, $s: $LOW req/s, then ${m}x = $high req/s"
      load --schedule "steps:$LOW@${CALM}s,$high@${OVERLOAD}s" --warmup "${WARMUP}s" --seed "$r" \
        --interval 10ms --hlog "$OUT/run-$s-${m}x-r$r.hlog" > "$OUT/run-$s-${m}x-r$r.json" || true
      curl -s "http://127.0.0.1:$ADMIN/admin/stats" > "$OUT/stats-$s-${m}x-r$r.json" || true
      sleep 3 # the overload drains before the next step
    done
    stop_server
  done
done

{
  echo "# Overload steps in 10-ms intervals"
  echo
  echo "\`bench/overload-step.sh --fanout $FANOUT --reply-work-us $WORK --repeats $REPEATS --steps $STEPS --calm $CALM --overload $OVERLOAD\`"
  echo "(commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ))."
  echo "Capacity C = $CAP req/s (closed loop, 64 users, doubleface, admission off); fixed limit $FIXED;"
  echo "calm load $LOW req/s for the ${WARMUP}-s warm-up and ${CALM} s, then the step for ${OVERLOAD} s."
  echo "Goodput: answers with status below 400 per second, by the 10-ms interval they ended in, repeats"
  echo "merged (aligned on the step), over C. A 10-ms interval has too few answers for a p99 (10,000 needed): its max, an upper bound, stands for its tail."
  echo
  "$JAVA" -cp "$JAR" bench/OverloadSteps.java "$OUT" "$CAP" "$((WARMUP + CALM))" "$CALM" "$OVERLOAD"
  echo
  python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("Per run: refused (5xx) and timed-out answers, the generator's send-lag p99, and the adapter's switches.\n")
print("| run | answers | 5xx | timeouts | send lag p99 ms | rate kept | adapter: switches since the server started (reasons), active at the end |")
print("|---|---|---|---|---|---|---|")
for p in sorted(glob.glob(os.path.join(out, "run-*.json"))):
    name = os.path.basename(p)[4:-5]
    try:
        j = json.load(open(p))
    except Exception:
        print(f"| {name} | run failed | | | | | |"); continue
    k = j.get("errors_by_kind", {})
    ad = ""
    try:
        st = json.load(open(os.path.join(out, f"stats-{name}.json")))
        a = st.get("adapter")
        if a:
            reasons = ", ".join(f"{r} {n}" for r, n in a["switches_by_reason"].items())
            ad = f"{a['switches']} ({reasons}), {st.get('config')}"
    except Exception:
        pass
    lag = j.get("send_lag_p99_ms")
    print(f"| {name} | {j['requests']:,} | {k.get('status_5xx', 0):,} | {k.get('timeout', 0):,} | "
          f"{'n/a' if lag is None else f'{lag:.2f}'} | {j.get('rate_kept')} | {ad} |")
PY
} > "$OUT/report.md"
cat "$OUT/report.md"
