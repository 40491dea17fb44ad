#!/usr/bin/env bash
# What Redis Cluster routing costs doubleface: the YCSB mid-tier (`serve ycsb`, one configuration)
# over a 3-master Redis Cluster (records stored once under their natural names, every read routed by
# key, a SCAN's MGET split per slot) against the same mid-tier over 3 standalone redis-server shards
# (every shard holds every record, reads addressed by shard) - the same number of Redis processes.
# Closed loop with wrk (random keys), the two systems interleaved A B A B per cell and repeat.
#
# usage: bench/cluster-vs-standalone.sh [--config doubleface] [--repeats 3] [--duration 10] [--warmup 5]
#                                       [--connections 64] [--cells "1:small 3:small 3:medium 1:large 3:large"]
#                                       [--out docs/results/cluster-vs-standalone-<UTC date>]
# Pinning: each mid-tier on CPU 0 with 1 I/O loop (--io-threads 1); the Redis processes and wrk on CPU 1.
# Ports: 7301-7303 (cluster), 7311-7313 (standalone), 8491/8492 (mid-tiers); all on 127.0.0.1.
# Writes OUT/results.csv (system,cell,repeat,req_s,p50_ms,p99_ms,errors), OUT/report.md, OUT/environment.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CONFIG=doubleface; REPEATS=3; DURATION=10; WARMUP=5; CONNS=64
CELLS="1:small 3:small 3:medium 1:large 3:large"
OUT=docs/results/cluster-vs-standalone-$(date -u +%Y%m%d)
while [[ $# -gt 0 ]]; do
  case $1 in
    --config) CONFIG=$2; shift 2;; --repeats) REPEATS=$2; shift 2;; --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;; --connections) CONNS=$2; shift 2;; --cells) CELLS=$2; shift 2;;
    --out) OUT=$2; shift 2;; -h|--help) sed -n 2,13p "$0"; exit 0;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
die() { echo "cluster-vs-standalone: $*" >&2; exit 1; }
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
for t in wrk redis-server taskset python3; do command -v $t >/dev/null || die "$t is missing (apt-get install wrk redis-server util-linux python3)"; done
[[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -pl cli -am package -DskipTests
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
mkdir -p "$OUT/runs"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_line() { # file pattern seconds
  for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  die "no '$2' in $1 within $3 s: $(tail -5 "$1")"
}
log "starting a 3-master Redis Cluster (7301-7303) and 3 standalone shards (7311-7313), loaded, on CPU 1"
taskset -c 1 "$JAVA" -jar cli/target/doubleface.jar leaf redis --cluster --masters 3 --base-port 7301 --records 1000 \
  > "$OUT/runs/leaf-cluster.log" 2>&1 & pids+=($!)
taskset -c 1 "$JAVA" -jar cli/target/doubleface.jar leaf redis --shards 3 --base-port 7311 --records 1000 \
  > "$OUT/runs/leaf-standalone.log" 2>&1 & pids+=($!)
wait_line "$OUT/runs/leaf-cluster.log" "redis leaf:" 60
wait_line "$OUT/runs/leaf-standalone.log" "redis leaf:" 60
declare -A URI=([cluster]="redis-cluster://127.0.0.1:7301,127.0.0.1:7302,127.0.0.1:7303"
                [standalone]="redis://127.0.0.1:7311-7313?connection=native")
declare -A PORT=([cluster]=8491 [standalone]=8492)
for s in cluster standalone; do
  taskset -c 0 "$JAVA" ${JAVA_OPTS:-} -jar cli/target/doubleface.jar serve ycsb --port ${PORT[$s]} --admin-port 0 \
    --io-threads 1 --config "$CONFIG" --records 1000 --shards "${URI[$s]}" > "$OUT/runs/serve-$s.log" 2>&1 & pids+=($!)
  wait_line "$OUT/runs/serve-$s.log" "listening" 60
done
for s in cluster standalone; do # the two give the same bytes
  for q in "fanout=3&size=small&key=42" "fanout=3&size=large&key=998"; do
    curl -sS -m 10 "http://127.0.0.1:${PORT[$s]}/query?$q" > "$OUT/runs/check-$s-${q//[&=]/_}.json" || die "$s: no answer"
  done
done
for q in "fanout=3&size=small&key=42" "fanout=3&size=large&key=998"; do
  cmp -s "$OUT/runs/check-cluster-${q//[&=]/_}.json" "$OUT/runs/check-standalone-${q//[&=]/_}.json" \
    || die "cluster and standalone answer $q differently"
done
cat > "$OUT/runs/random.lua" <<'LUA'
local fanout, size = os.getenv("FANOUT"), os.getenv("SIZE")
request = function() return wrk.format("GET", "/query?fanout=" .. fanout .. "&size=" .. size .. "&key=" .. math.random(0, 999)) end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %.3f %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
echo "system,cell,repeat,req_s,p50_ms,p99_ms,errors" > "$OUT/results.csv"
for cell in $CELLS; do
  f=${cell%%:*}; z=${cell##*:}
  for ((r = 1; r <= REPEATS; r++)); do
    for s in cluster standalone; do
      url="http://127.0.0.1:${PORT[$s]}"
      FANOUT=$f SIZE=$z taskset -c 1 wrk -t1 -c"$CONNS" -d"${WARMUP}s" -s "$OUT/runs/random.lua" "$url" > /dev/null
      line=$(FANOUT=$f SIZE=$z taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$OUT/runs/random.lua" "$url" | grep '^RESULT')
      read -r _ rps p50 p99 err <<< "$line"
      echo "$s,$f:$z,$r,$rps,$p50,$p99,$err" >> "$OUT/results.csv"
      log "$s fanout $f $z repeat $r: $rps req/s, p50 $p50 ms, p99 $p99 ms (closed loop), errors $err"
    done
  done
done
python3 - "$OUT" "$CONFIG" "$CONNS" "$DURATION" "$WARMUP" <<'PY'
import csv, json, os, platform, statistics, subprocess, sys
out, config, conns, dur, warm = sys.argv[1:]
rows = list(csv.DictReader(open(f"{out}/results.csv")))
cells = list(dict.fromkeys(r["cell"] for r in rows))
lines = [f"# Redis Cluster vs standalone shards ({config}, 3 Redis processes each)", "",
         f"wrk closed loop, {conns} connections, {warm} s warm-up + {dur} s per run, random keys 0..999; "
         "mid-tier pinned to CPU 0 (1 I/O loop), Redis and wrk on CPU 1; cluster and standalone interleaved per repeat.", "",
         "| cell | cluster req/s (median, min-max) | standalone req/s | cluster / standalone (median of per-repeat ratios, min-max) | p50 ms cluster / standalone (closed loop) | errors |",
         "|---|---|---|---|---|---|"]
for c in cells:
    a = [r for r in rows if r["cell"] == c and r["system"] == "cluster"]
    b = [r for r in rows if r["cell"] == c and r["system"] == "standalone"]
    ra = [float(r["req_s"]) for r in a]; rb = [float(r["req_s"]) for r in b]
    ratios = [x / y for x, y in zip(ra, rb)]
    lines.append(f"| {c} | {statistics.median(ra):.0f} ({min(ra):.0f}-{max(ra):.0f}) | {statistics.median(rb):.0f} "
                 f"({min(rb):.0f}-{max(rb):.0f}) | {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) | "
                 f"{statistics.median(float(r['p50_ms']) for r in a):.2f} / {statistics.median(float(r['p50_ms']) for r in b):.2f} | "
                 f"{sum(int(r['errors']) for r in a + b)} |")
open(f"{out}/report.md", "w").write("\n".join(lines) + "\n")
def run(*cmd):
    try: return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except Exception: return "n/a"
json.dump({"commit": run("git", "rev-parse", "HEAD"), "config": config, "cpus": os.cpu_count(), "kernel": platform.release(),
           "pinning": {"mid-tier": "CPU 0, 1 I/O loop", "redis+wrk": "CPU 1"}, "connections": int(conns),
           "duration_s": int(dur), "warmup_s": int(warm), "redis_server": run("redis-server", "--version"),
           "wrk": run("wrk", "--version")}, open(f"{out}/environment.json", "w"), indent=2)
print("\n".join(lines))
PY
if [[ $(realpath "$OUT") == "$(pwd)"/docs/results/* ]]; then
  python3 bench/results-pack.py "$OUT" >&2 || log "warning: bench/results-pack.py failed; pack $OUT before committing it"
fi
log "report: $OUT/report.md"
