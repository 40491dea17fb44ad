#!/usr/bin/env bash
# Hedging, measured: one slow shard (a share of its calls answered late), p99 with hedging off and
# on at 30%, 60% and 90% of capacity, and the extra calls hedging costs (docs/reliability.md).
#
#   bench/hedging.sh [--config NAME] [--fanout K] [--slow SHARD:FRACTION:DELAY] [--hedge DELAY:RATIO:FLOOR]
#                    [--reply-work-us U] [--loads "0.3 0.6 0.9"] [--repeats N] [--duration S] [--warmup S]
#                    [--out DIR]
#
# Defaults: doubleface, fanout 5 small, --slow 0:0.05:200ms (5% of shard 0's calls 200 ms late:
# with fanout 5 over 20 shards a quarter of the requests touch shard 0, so about 1.25% of them are
# slow and p99 sees it), --hedge 30ms:0.1:100 (on this 2-core VM the open-loop tail without any slow
# shard is already 10-40 ms at 60% load, so a 50 ms slowness and a 10 ms hedge delay drown in it), 20 µs of CPU work per reply in the mid-tier (so that its
# capacity is a rate the generator, sharing core 1 with the leaf, can offer on time), 2 repeats of
# 15 s after a 10 s warm-up.
# The KV leaf (20 shards, `leaf kv --slow`) and the open-loop generator share core 1; the mid-tier
# (`serve ycsb --io-threads 1 --resilience hedge:…` or off) is pinned to core 0, started fresh per
# run. Capacity C: closed loop, 64 users, hedging off (and, for the record, on). Then per repeat and load, off and on in
# rotated order. Every run is bounded and stops by itself. Writes per-run JSON summaries, the
# server's /metrics, and table.md into DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CONFIG=doubleface; FANOUT=5; SLOW=0:0.05:200ms; HEDGE=30ms:0.1:100; LOADS="0.3 0.6 0.9"; REPEATS=2
WORK=20; DURATION=15; WARMUP=10; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) CONFIG=$2; shift 2;;
    --fanout) FANOUT=$2; shift 2;;
    --slow) SLOW=$2; shift 2;;
    --hedge) HEDGE=$2; shift 2;;
    --reply-work-us) WORK=$2; shift 2;;
    --loads) LOADS=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,19p' "$0"; exit 0;;
    *) echo "hedging.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/hedging-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$OUT"
for t in taskset python3 curl; do command -v $t >/dev/null || { echo "hedging.sh: $t not found" >&2; exit 1; }; done
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true install
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAR=cli/target/doubleface.jar
PORT=18080; ADMIN=19090; BASE=17101; SHARDS=20
URL="/query?fanout=$FANOUT&size=small&key={key}"
server_pid=""; leaf_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; server_pid=""; }
cleanup() { stop_server; [[ -n "$leaf_pid" ]] && kill "$leaf_pid" 2>/dev/null || true; }
trap cleanup EXIT

taskset -c 1 "$JAVA" -jar "$JAR" leaf kv --shards $SHARDS --base-port $BASE --slow "$SLOW" > "$OUT/leaf.log" 2>&1 &
leaf_pid=$!
for _ in $(seq 1 100); do grep -q "listening" "$OUT/leaf.log" 2>/dev/null && break; sleep 0.1; done
grep -q "listening" "$OUT/leaf.log" || { echo "hedging.sh: leaf did not start (see $OUT/leaf.log)" >&2; exit 1; }

start_server() { # $1 = resilience spec, $2 = log name
  taskset -c 0 "$JAVA" -Xmx2g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN --io-threads 1 \
    --shards "kv://127.0.0.1:$BASE-$((BASE + SHARDS - 1))" --config "$CONFIG" --resilience "$1" --reply-work-us "$WORK" \
    > "$OUT/server-$2.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$ADMIN/admin/stats" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "hedging.sh: server did not start (see $OUT/server-$2.log)" >&2; exit 1
}
load() { # $@ = load options; prints the JSON summary
  taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" --quiet --json \
    --warmup "${WARMUP}s" --duration "${DURATION}s" --timeout 5s --max-connections 4096 "$@"
}

write_environment() { # docs/measuring.md#the-environment-file
  python3 - "$OUT" "$CONFIG" "$FANOUT" "$SLOW" "$HEDGE" "$LOADS" "$REPEATS" "$WORK" "$DURATION" "$WARMUP" "$JAVA" <<'PY'
import json, os, platform, subprocess, sys
out, config, fanout, slow, hedge, loads, repeats, work, duration, warmup, java = sys.argv[1:12]
def run(*c):
    try: return subprocess.run(c, capture_output=True, text=True).stdout.strip() or subprocess.run(c, capture_output=True, text=True).stderr.strip()
    except Exception as e: return str(e)
json.dump({"script": "bench/hedging.sh", "commit": run("git", "rev-parse", "HEAD"), "dirty": bool(run("git", "status", "--porcelain")),
           "java": run(java, "-version").splitlines()[0], "cpus": os.cpu_count(), "kernel": platform.release(),
           "pinning": {"mid_tier": "cpu 0, 1 I/O thread", "leaf_and_generator": "cpu 1"},
           "config": config, "fanout": int(fanout), "slow": slow, "hedge": hedge, "loads": loads.split(),
           "repeats": int(repeats), "reply_work_us": int(work), "duration_s": int(duration), "warmup_s": int(warmup),
           "generator": "doubleface load, open loop, Poisson, latency from intended send times, --timeout 5s"},
          open(os.path.join(out, "environment.json"), "w"), indent=2)
PY
}
write_environment

echo "hedging.sh: config $CONFIG, fanout $FANOUT, slow $SLOW, hedge $HEDGE, loads $LOADS, $REPEATS repeats of ${WARMUP}s + ${DURATION}s -> $OUT"
start_server off capacity
load --users 64 > "$OUT/capacity.json"
stop_server
start_server "hedge:$HEDGE" capacity-on
load --users 64 > "$OUT/capacity-on.json"
stop_server
CAP=$(python3 -c "import json;print(int(json.load(open('$OUT/capacity.json'))['throughput_rps']))")
CAP_ON=$(python3 -c "import json;print(int(json.load(open('$OUT/capacity-on.json'))['throughput_rps']))")
echo "hedging.sh: capacity $CAP req/s hedging off, $CAP_ON on (closed loop, 64 users)"

i=0
for r in $(seq 1 "$REPEATS"); do
  for l in $LOADS; do
    rate=$(python3 -c "print(int($CAP * $l))")
    if (( i % 2 == 0 )); then order="off on"; else order="on off"; fi
    i=$((i + 1))
    for side in $order; do
      spec=off; [[ $side == on ]] && spec="hedge:$HEDGE"
      name="r$r-$l-$side"
      start_server "$spec" "$name"
      echo "hedging.sh: repeat $r, load $l ($rate req/s), hedging $side ..."
      load --rate "$rate" --seed "$r" > "$OUT/open-$name.json" || true
      curl -s "http://127.0.0.1:$ADMIN/metrics" > "$OUT/metrics-$name.txt" || true
      curl -s "http://127.0.0.1:$ADMIN/admin/stats" > "$OUT/stats-$name.json" || true
      stop_server
    done
  done
done

python3 - "$OUT" "$CAP" "$CAP_ON" "$CONFIG" "$FANOUT" "$SLOW" "$HEDGE" "$REPEATS" "$LOADS" "$WORK" <<'PY' | tee "$OUT/table.md"
import json, sys, os, re, statistics
out, cap, cap_on, config, fanout, slow, hedge, repeats, loads, work = sys.argv[1:11]
cap, fanout, repeats, loads = int(cap), int(fanout), int(repeats), loads.split()
def metric(name, text, outcome):
    m = re.search(r'^' + name + r'\{[^}]*outcome="' + outcome + r'"[^}]*\} ([0-9.eE+]+)$', text, re.M)
    return float(m.group(1)) if m else 0.0
def served(stats):
    try:
        return json.load(open(stats))["requests"]["answered"]
    except Exception:
        return 0
print(f"config `{config}`, fanout {fanout} small over 20 KV shards, {work} µs of work per reply, slow shard `{slow}`, hedge `{hedge}`; "
      f"capacity {cap:,} req/s hedging off, {int(cap_on):,} on (closed loop, 64 users); loads are shares of the first; "
      f"{repeats} repeats, median (min–max)\n")
print("| load | offered req/s | p50 ms off / on | p99 ms off / on | p99.9 ms off / on | p99 on/off | extra calls (hedges / calls) | hedges won | generator send lag p99 ms |")
print("|---|---|---|---|---|---|---|---|---|")
def fmt(xs):
    xs = [x for x in xs if x is not None]
    if not xs: return "n/a"
    return f"{statistics.median(xs):.2f}" + (f" ({min(xs):.2f}–{max(xs):.2f})" if len(xs) > 1 else "")
for l in loads:
    rows = {"off": [], "on": []}; extra = []; won = []; lag = []; offered = None
    for r in range(1, repeats + 1):
        for side in ("off", "on"):
            p = os.path.join(out, f"open-r{r}-{l}-{side}.json")
            if not os.path.exists(p) or os.path.getsize(p) == 0: continue
            j = json.load(open(p)); offered = int(j["offered_rate"])
            rows[side].append(j["ok"]); lag.append(j.get("send_lag_p99_ms"))
            if side == "on":
                text = open(os.path.join(out, f"metrics-r{r}-{l}-on.txt")).read()
                sent = metric("doubleface_backend_hedges_total", text, "sent")
                calls = served(os.path.join(out, f"stats-r{r}-{l}-on.json")) * fanout
                if calls: extra.append(100 * sent / calls)
                if sent: won.append(100 * metric("doubleface_backend_hedges_total", text, "won") / sent)
    def col(key, side): return [x.get(key) for x in rows[side]]
    ratio = [a / b for a, b in zip(col("p99_ms", "on"), col("p99_ms", "off")) if a and b]
    print(f"| {l} | {offered or 0:,} | {fmt(col('p50_ms','off'))} / {fmt(col('p50_ms','on'))} "
          f"| {fmt(col('p99_ms','off'))} / {fmt(col('p99_ms','on'))} | {fmt(col('p999_ms','off'))} / {fmt(col('p999_ms','on'))} "
          f"| {fmt(ratio)} | {fmt(extra)} % | {fmt(won)} % | {fmt(lag)} |")
print("\nlatency from the intended send time (open loop, Poisson); extra calls and hedges won from the server's "
      "/metrics and /admin/stats of the run (warm-up included).")
PY
