#!/usr/bin/env bash
# What running the load adapter costs when it does not switch: the same configuration (doubleface)
# served statically and under the adapter (a profile whose every band keeps doubleface), with the
# adapter thread waking every 1 ms (the default) and every 10 ms, open loop at a fixed rate;
# --repeats interleaved rounds, a fresh server per run (docs/reliability.md, "Overload steps").
#
#   bench/adapter-cost.sh --profile FILE [--rate 1600] [--reply-work-us 50] [--repeats 5]
#                         [--admission off] [--out DIR]
#
# Mid-tier (serve ycsb, embedded KV shards, one I/O thread) pinned to core 0, the generator to
# core 1; 10 s warm-up + 15 s measured per run, 5 s client timeout. Per run it records the
# generator's JSON and the adapter thread's CPU time and context switches (/proc). Writes DIR
# (default docs/results/adapter-cost-<UTC>): run-*.json, threads-*.txt, report.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RATE=1600; WORK=50; REPEATS=5; ADMISSION=off; PROFILE=""; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile) PROFILE=$2; shift 2;;
    --rate) RATE=$2; shift 2;;
    --reply-work-us) WORK=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --admission) ADMISSION=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,13p' "$0"; exit 0;;
    *) echo "adapter-cost.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
[[ -n "$PROFILE" ]] || { echo "adapter-cost.sh: --profile FILE is required (one whose bands keep doubleface)" >&2; exit 2; }
OUT=${OUT:-docs/results/adapter-cost-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
"$JAVA" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])' || { echo "adapter-cost.sh: $JAVA is not Java 21+ (set JAVA_HOME)" >&2; exit 1; }
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true install
JAR=cli/target/doubleface.jar; PORT=18480; ADMIN=19490
cp "$PROFILE" "$OUT/profile.json"
server_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; server_pid=""; }
trap stop_server EXIT
for ((r = 1; r <= REPEATS; r++)); do
  for setting in static adapter-1ms adapter-10ms; do
    case $setting in
      static) extra=(--config doubleface);;
      adapter-1ms) extra=(--config adaptive --profile "$PROFILE");;
      adapter-10ms) extra=(--config adaptive --profile "$PROFILE" --tune-interval 10ms);;
    esac
    taskset -c 0 "$JAVA" -Xmx2g -jar "$JAR" serve ycsb --port $PORT --admin-port $ADMIN --io-threads 1 \
      --reply-work-us "$WORK" --admission "$ADMISSION" "${extra[@]}" > "$OUT/server-$setting-r$r.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$ADMIN/admin/stats" >/dev/null 2>&1 && break; sleep 0.1; done
    printf '[%s] adapter-cost.sh: repeat %d/%d, %s\n' "$(date -u +%H:%M:%S)" "$r" "$REPEATS" "$setting" >&2
    taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$PORT" \
      --url "/query?fanout=5&size=small&key={key}" --quiet --json --rate "$RATE" --warmup 10s --duration 15s \
      --seed "$r" > "$OUT/run-$setting-r$r.json" || true
    for t in /proc/$server_pid/task/*; do
      printf '%s %s %s\n' "$(cat "$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")" \
        "$(awk '/^voluntary_ctxt_switches/ {v=$2} /^nonvoluntary_ctxt_switches/ {n=$2} END {print v, n}' "$t/status")"
    done > "$OUT/threads-$setting-r$r.txt" 2>/dev/null || true
    curl -s "http://127.0.0.1:$ADMIN/admin/stats" > "$OUT/stats-$setting-r$r.json" || true
    stop_server
  done
done
python3 - "$OUT" "$RATE" "$WORK" "$REPEATS" "$ADMISSION" <<'PY' | tee "$OUT/report.md"
import glob, json, os, statistics, sys
out, rate, work, repeats, adm = sys.argv[1:6]
tick = os.sysconf("SC_CLK_TCK")
print(f"# What the load adapter costs when it does not switch\n")
print(f"`bench/adapter-cost.sh --rate {rate} --reply-work-us {work} --repeats {repeats} --admission {adm}`: "
      f"doubleface served statically and under the adapter (its profile keeps doubleface at every load), "
      f"open loop at {rate} req/s, fanout 5, {work} µs per reply, 10 s warm-up + 15 s per run, "
      f"{repeats} interleaved rounds, a fresh server per run.\n")
print("| setting | p99 ms per repeat | p99 median (min–max) | p50 median | errors | switches | tune-0 CPU s per run | tune-0 context switches per s (voluntary) | I/O loop involuntary context switches per run (median) |")
print("|---|---|---|---|---|---|---|---|---|")
for s in ["static", "adapter-1ms", "adapter-10ms"]:
    p99, p50, err, sw, cpu, cs, inv = [], [], 0, 0, [], [], []
    for r in range(1, int(repeats) + 1):
        try:
            j = json.load(open(f"{out}/run-{s}-r{r}.json"))
        except Exception:
            continue
        p99.append(j["p99_ms"]); p50.append(j["p50_ms"]); err += j["errors"]
        try:
            st = json.load(open(f"{out}/stats-{s}-r{r}.json"))
            sw += (st.get("adapter") or {}).get("switches", 0)
        except Exception:
            pass
        for line in open(f"{out}/threads-{s}-r{r}.txt"):
            f = line.split()
            if f[0] == "tune-0":
                cpu.append(int(f[1]) / tick); cs.append(int(f[2]) / 25.0)
            if f[0].startswith("io-"):
                inv.append(int(f[3]))
    if not p99:
        print(f"| {s} | no runs | | | | | | | |"); continue
    rng = lambda v, f="{:.2f}": f"{f.format(statistics.median(v))} ({f.format(min(v))}–{f.format(max(v))})"
    print(f"| {s} | {', '.join(f'{v:.2f}' for v in p99)} | {rng(p99)} | {statistics.median(p50):.2f} | {err} | {sw} | "
          f"{rng(cpu) if cpu else '—'} | {rng(cs, '{:.0f}') if cs else '—'} | {statistics.median(inv) if inv else 'n/a'} |")
print("\nContext switches per second are over the whole run (25 s, warm-up included); "
      "CPU is user + system time of the thread over the run.")
PY
