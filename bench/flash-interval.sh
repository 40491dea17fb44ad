#!/usr/bin/env bash
# A flash crowd under the load adapter with its thread waking every 1 ms (the default) and every
# 10 ms (--tune-interval 10ms): how fast it leaves a low-load configuration when the spike comes,
# the worst request and the time back to calm (docs/reliability.md, "Overload steps").
#
#   bench/flash-interval.sh [--profile profiles/ycsb-kv-sip-doubleface.json] [--spike 6000]
#                           [--calm 20] [--repeats 3] [--out DIR]
#
# serve ycsb (embedded KV shards, one I/O thread, --config adaptive over --profile, whose bands put
# sip at low load and doubleface at high) pinned to core 0; the open-loop generator on core 1:
# 5 s warm-up at 100 req/s, then 100 req/s for --calm s, --spike req/s for 1 s, 100 req/s for
# --calm s, with a 100-ms interval log. Interleaved repeats, a fresh server per run. Writes DIR
# (default docs/results/flash-interval-<UTC>): per run the generator's JSON, its interval log and
# the server's /admin/stats; report.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROFILE=profiles/ycsb-kv-sip-doubleface.json; SPIKE=6000; CALM=20; REPEATS=3; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile) PROFILE=$2; shift 2;;
    --spike) SPIKE=$2; shift 2;;
    --calm) CALM=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,14p' "$0"; exit 0;;
    *) echo "flash-interval.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/flash-interval-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
"$JAVA" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])' || { echo "flash-interval.sh: $JAVA is not Java 21+ (set JAVA_HOME)" >&2; exit 1; }
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true install
JAR=cli/target/doubleface.jar; PORT=18680; ADMIN=19690
cp "$PROFILE" "$OUT/profile.json"
server_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; server_pid=""; }
trap stop_server EXIT
for ((r = 1; r <= REPEATS; r++)); do
  for interval in 1ms 10ms; do
    taskset -c 0 "$JAVA" -Xmx2g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN --io-threads 1 \
      --config adaptive --profile "$PROFILE" --tune-interval "$interval" > "$OUT/server-$interval-r$r.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$ADMIN/admin/stats" >/dev/null 2>&1 && break; sleep 0.1; done
    printf '[%s] flash-interval.sh: repeat %d/%d, --tune-interval %s\n' "$(date -u +%H:%M:%S)" "$r" "$REPEATS" "$interval" >&2
    taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" \
      --url "/query?fanout=5&size=small&key={key}" --quiet --json --warmup 5s --seed "$r" \
      --schedule "flash:100@${CALM}s,${SPIKE}@1s,100@${CALM}s" --interval 100ms \
      --hlog "$OUT/run-$interval-r$r.hlog" > "$OUT/run-$interval-r$r.json" || true
    curl -s "http://127.0.0.1:$ADMIN/admin/stats" > "$OUT/stats-$interval-r$r.json" || true
    "$JAVA" -cp "$JAR" bench/HlogSeconds.java "$OUT/run-$interval-r$r.hlog" > "$OUT/run-$interval-r$r.csv"
    stop_server
  done
done
python3 - "$OUT" "$CALM" "$SPIKE" "$REPEATS" <<'PY' | tee "$OUT/report.md"
import csv, datetime, json, statistics, sys
out, calm, spike, repeats = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
print("# A flash crowd under the adapter: 1-ms and 10-ms adapter wake-ups\n")
print(f"`bench/flash-interval.sh --spike {spike} --calm {calm:g} --repeats {repeats}`: 100 req/s for {calm:g} s, "
      f"{spike} req/s for 1 s, 100 req/s for {calm:g} s (after a 5-s warm-up); 100-ms intervals. "
      "Back to calm: the end of the last 100-ms interval after the spike began whose max was over 2x the "
      "median max of the calm intervals before it.\n")
print("| --tune-interval | repeat | worst request (ms) | worst in the spike second (ms) | back to calm after the spike began (s) | errors | left sip after the spike began (ms) | switches |")
print("|---|---|---|---|---|---|---|---|")
summary = {}
for interval in ["1ms", "10ms"]:
    for r in range(1, repeats + 1):
        try:
            j = json.load(open(f"{out}/run-{interval}-r{r}.json"))
            rows = list(csv.DictReader(open(f"{out}/run-{interval}-r{r}.csv")))
        except Exception:
            print(f"| {interval} | {r} | run failed | | | | | |"); continue
        t0 = int(rows[0]["start_ms"])
        warm = 5.0
        pts = [((int(x["start_ms"]) - t0) / 1000.0 - warm, int(x["count"]), float(x["max_ms"])) for x in rows]
        calm_max = [m for t, n, m in pts if 1 <= t < calm and n > 0]
        level = statistics.median(calm_max) if calm_max else float("nan")
        after = [(t, m) for t, n, m in pts if t >= calm and n > 0]
        bad = [t for t, m in after if m > 2 * level]
        back = (max(bad) + 0.1 - calm) if bad else 0.0
        spike_lat = [(t, n, m) for t, n, m in pts if calm <= t < calm + 1]
        st = json.load(open(f"{out}/stats-{interval}-r{r}.json")).get("adapter", {})
        log = st.get("switch_log", [])
        start_wall = datetime.datetime.fromtimestamp(t0 / 1000 + warm + calm, datetime.timezone.utc)
        left = None
        for e in log:
            at = datetime.datetime.fromisoformat(e["at"].replace("Z", "+00:00"))
            if e["from"] == "sip" and at >= start_wall - datetime.timedelta(seconds=0.5):
                left = (at - start_wall).total_seconds() * 1000
                break
        print(f"| {interval} | {r} | {j['max_ms']:.1f} | {max((m for _, _, m in spike_lat), default=float('nan')):.1f} | "
              f"{back:.1f} | {j['errors']} | {'n/a' if left is None else f'{left:.0f}'} | {st.get('switches', 'n/a')} |")
        summary.setdefault(interval, []).append(j["max_ms"])
print()
for k, v in summary.items():
    print(f"- {k}: worst request median {statistics.median(v):.1f} ms over {len(v)} runs ({min(v):.1f}–{max(v):.1f})")
PY
