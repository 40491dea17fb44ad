#!/usr/bin/env bash
# The load generator's own performance (issue 3: >= 20,000 req/s open loop from one core; p99 send
# lag < 1 ms at 5,000 req/s). Server: `serve ycsb` with one embedded shard and one I/O loop on
# CPU 0, fanout 1 small (a near-trivial endpoint). Generator: `load` pinned to CPU 1.
#
#   bench/loadgen-self.sh [--rates "5000 20000"] [--repeats 3] [--duration 10s] [--warmup 10s]
#                         [--gen-jvm "-Xms512m -Xmx512m"] [--variants "LABEL|JVM FLAGS|LOAD ARGS;..."]
#                         [--out DIR]
#
# --gen-jvm: the generator JVM's flags, e.g. "-XX:+UseParallelGC -Xms1g -Xmx1g -Xmn768m"; its GC
# log (-Xlog:gc) is kept next to each run so stalls can be told from GC pauses.
# --variants: several generator set-ups compared in one run, interleaved (each repeat runs every
# variant at every rate, in rotated order), e.g.
#   "default|-Xms512m -Xmx512m|;c1|-Xms512m -Xmx512m -XX:TieredStopAtLevel=1|;spin|-Xms512m -Xmx512m|--busy-poll"
# (default: one variant, "default", with --gen-jvm and no extra load arguments). Every run keeps its
# lag log (load --lag-log: each send 1 ms or more late) and the report says how many late sends
# fall within 5 ms of a whole second of the run (the coordinator's interval roll) against the 1 %
# that uniformly spread ones would.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RATES="5000 20000"; REPEATS=3; DURATION=10s; WARMUP=10s; OUT=""; GEN_JVM="-Xms512m -Xmx512m"; VARIANTS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rates) RATES="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --gen-jvm) GEN_JVM="$2"; shift 2 ;;
    --variants) VARIANTS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "loadgen-self: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ -f cli/target/doubleface.jar ]] || ./mvnw -q -B -DskipTests install
JAR=$(mktemp /tmp/doubleface-lg-XXXXXX.jar); cp cli/target/doubleface.jar "$JAR"
OUT=${OUT:-docs/results/loadgen-self-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
PORT=18380
taskset -c 0 "$JAVA" -Xms512m -Xmx512m -jar "$JAR" serve ycsb --port $PORT --admin-port -1 --embedded-shards 1 --io-threads 1 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -f "$JAR"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/query?fanout=1&size=small&key=1" >/dev/null && break; sleep 0.2; done
{
  echo "{\"git_commit\": \"$(git rev-parse --short HEAD)\", \"jdk\": \"$("$JAVA" -version 2>&1 | head -1 | tr -d '"')\","
  echo " \"cpus\": $(nproc), \"pinning\": \"server taskset -c 0 (1 I/O loop, 1 embedded shard), generator taskset -c 1\","
  echo " \"generator_jvm\": \"$GEN_JVM\","
  echo " \"endpoint\": \"/query?fanout=1&size=small&key={key}\", \"duration\": \"$DURATION\", \"warmup\": \"$WARMUP\","
  echo " \"loadavg_at_start\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
} > "$OUT/environment.json"
VARIANTS=${VARIANTS:-"default|$GEN_JVM|"}
IFS=';' read -r -a VARS <<<"$VARIANTS"
for v in "${VARS[@]}"; do
  [[ $(awk -F'|' '{print NF}' <<<"$v") == 3 ]] || { echo "loadgen-self: bad variant '$v' (expected LABEL|JVM FLAGS|LOAD ARGS)" >&2; exit 2; }
done
echo "variant,rate,repeat,achieved_rps,rate_kept,send_lag_p99_ms,p50_ms,p99_ms,p999_ms,max_ms,errors,late_sends,late_near_second" > "$OUT/raw.csv"
nv=${#VARS[@]}
for r in $(seq "$REPEATS"); do
  for rate in $RATES; do
    for k in $(seq 0 $((nv - 1))); do
      v=${VARS[$(( (k + r - 1) % nv ))]}
      IFS='|' read -r label jvm largs <<<"$v"
      base="$OUT/run-$label-$rate-$r"
      # shellcheck disable=SC2086 # jvm and largs are lists of flags
      taskset -c 1 "$JAVA" $jvm -Xlog:gc:file="$OUT/gc-$label-$rate-$r.log" -jar "$JAR" load --target "http://127.0.0.1:$PORT" \
        --url '/query?fanout=1&size=small&key={key}' --rate "$rate" --warmup "$WARMUP" --duration "$DURATION" \
        --lag-log "$base.lag.csv" $largs --json --quiet > "$base.json" 2> "$base.err" || true
      python3 - "$base.json" "$base.lag.csv" "$label" "$rate" "$r" >> "$OUT/raw.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = lambda k: "" if d.get(k) is None else d.get(k)
late = near = 0
try:
    for line in open(sys.argv[2]):
        if line[0].isdigit():
            late += 1
            ms = float(line.split(",")[0]) % 1000.0
            near += ms < 5 or ms > 995
except FileNotFoundError:
    late = near = ""
print(",".join(str(x) for x in [sys.argv[3], sys.argv[4], sys.argv[5], f("throughput_rps"), f("rate_kept"),
                                 f("send_lag_p99_ms"), f("p50_ms"), f("p99_ms"), f("p999_ms"), f("max_ms"),
                                 f("errors"), late, near]))
PY
      tail -1 "$OUT/raw.csv" >&2
    done
  done
done
{
  echo "# Load generator self-test"
  echo
  echo "Command: \`bench/loadgen-self.sh --rates \"$RATES\" --repeats $REPEATS --duration $DURATION --warmup $WARMUP --variants \"$VARIANTS\"\`; environment in \`environment.json\`; per run its JSON summary, GC log (\`gc-VARIANT-RATE-REPEAT.log\`) and lag log (\`*.lag.csv\`: every send 1 ms or more late)."
  echo
  echo "\"late\" = measured sends 1 ms or more late; \"at whole s\" = those within 5 ms of a whole second of the measured part (uniformly spread late sends would put 1 % there)."
  echo
  echo "| variant | offered req/s | repeat | achieved req/s | rate kept | send lag p99 ms | p50 ms | p99 ms | p99.9 ms | max ms | errors | late | at whole s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$OUT/raw.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1,$2,$3,$4,$5,$6,$7,$8,($9==""?"n/a":$9),$10,$11,$12,$13}'
} > "$OUT/report.md"
echo "wrote $OUT/report.md" >&2
