#!/usr/bin/env bash
# The load generator's own performance (issue 3: >= 20,000 req/s open loop from one core; p99 send
# lag < 1 ms at 5,000 req/s). Server: `serve ycsb` with one embedded shard and one I/O loop on
# CPU 0, fanout 1 small (a near-trivial endpoint). Generator: `load` pinned to CPU 1.
#
#   bench/loadgen-self.sh [--rates "5000 20000"] [--repeats 3] [--duration 10s] [--warmup 10s]
#                         [--gen-jvm "-Xms512m -Xmx512m"] [--out DIR]
#
# --gen-jvm: the generator JVM's flags, e.g. "-XX:+UseParallelGC -Xms1g -Xmx1g -Xmn768m"; its GC
# log (-Xlog:gc) is kept next to each run so stalls can be told from GC pauses.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RATES="5000 20000"; REPEATS=3; DURATION=10s; WARMUP=10s; OUT=""; GEN_JVM="-Xms512m -Xmx512m"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rates) RATES="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --gen-jvm) GEN_JVM="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
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
echo "rate,repeat,achieved_rps,rate_kept,send_lag_p99_ms,p50_ms,p99_ms,p999_ms,max_ms,errors" > "$OUT/raw.csv"
for r in $(seq "$REPEATS"); do
  for rate in $RATES; do
    # shellcheck disable=SC2086 # GEN_JVM is a list of flags
    taskset -c 1 "$JAVA" $GEN_JVM -Xlog:gc:file="$OUT/gc-$rate-$r.log" -jar "$JAR" load --target "http://127.0.0.1:$PORT" \
      --url '/query?fanout=1&size=small&key={key}' --rate "$rate" --warmup "$WARMUP" --duration "$DURATION" \
      --json --quiet > "$OUT/run-$rate-$r.json" 2> "$OUT/run-$rate-$r.err" || true
    python3 - "$OUT/run-$rate-$r.json" "$rate" "$r" >> "$OUT/raw.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = lambda k: "" if d.get(k) is None else d.get(k)
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], f("throughput_rps"), f("rate_kept"), f("send_lag_p99_ms"),
                                 f("p50_ms"), f("p99_ms"), f("p999_ms"), f("max_ms"), f("errors")]))
PY
    tail -1 "$OUT/raw.csv" >&2
  done
done
{
  echo "# Load generator self-test"
  echo
  echo "Command: \`bench/loadgen-self.sh --rates \"$RATES\" --repeats $REPEATS --duration $DURATION --warmup $WARMUP --gen-jvm \"$GEN_JVM\"\`; environment in \`environment.json\`; GC logs of the generator in \`gc-RATE-REPEAT.log\`."
  echo
  echo "| offered req/s | repeat | achieved req/s | rate kept | send lag p99 ms | p50 ms | p99 ms | p99.9 ms | max ms | errors |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$OUT/raw.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1,$2,$3,$4,$5,$6,$7,($8==""?"n/a":$8),$9,$10}'
} > "$OUT/report.md"
echo "wrote $OUT/report.md" >&2
