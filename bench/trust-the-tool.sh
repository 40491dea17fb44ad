#!/usr/bin/env bash
# Cross-checks of `doubleface load` (docs/measuring.md#checking-the-tool):
#  1. closed loop vs wrk at the same connection count: throughput and p50 within 10%;
#  2. a 200 ms SIGSTOP of the server during an open-loop run shows up in p99.9/max (vs a run without).
# Server: `serve ycsb` with embedded shards on CPU 0; generators on CPU 1. Runs interleaved.
#
#   bench/trust-the-tool.sh [--repeats 3] [--conns 16] [--duration 10] [--out DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPEATS=3; CONNS=16; DURATION=10; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats) REPEATS="$2"; shift 2 ;;
    --conns) CONNS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "trust-the-tool: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ -f cli/target/doubleface.jar ]] || ./mvnw -q -B -DskipTests install
JAR=$(mktemp /tmp/doubleface-trust-XXXXXX.jar); cp cli/target/doubleface.jar "$JAR"
OUT=${OUT:-docs/results/trust-the-tool-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
PORT=18480
URL="/query?fanout=5&size=small&key=42"
taskset -c 0 "$JAVA" -Xms1g -Xmx1g -jar "$JAR" serve ycsb --port $PORT --admin-port -1 --io-threads 1 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill -CONT $SERVER 2>/dev/null || true; kill $SERVER 2>/dev/null || true; rm -f "$JAR"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT$URL" >/dev/null && break; sleep 0.2; done
echo "{\"git_commit\": \"$(git rev-parse --short HEAD)\", \"jdk\": \"$("$JAVA" -version 2>&1 | head -1 | tr -d '"')\", \"cpus\": $(nproc), \"wrk\": \"$(wrk -v 2>&1 | head -1)\", \"pinning\": \"server taskset -c 0 (1 I/O loop, embedded 20 KV shards in-process), generators taskset -c 1\", \"url\": \"$URL\", \"connections\": $CONNS, \"duration_s\": $DURATION}" > "$OUT/environment.json"
# warm-up (JIT), discarded
taskset -c 1 wrk -t1 -c"$CONNS" -d15s "http://127.0.0.1:$PORT$URL" > /dev/null

ms() { # wrk latency value → ms
  awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v}'
}
echo "tool,repeat,rps,p50_ms" > "$OUT/closed-loop.csv"
for r in $(seq "$REPEATS"); do
  w=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "http://127.0.0.1:$PORT$URL")
  echo "wrk,$r,$(echo "$w" | awk '/Requests\/sec/ {print $2}'),$(echo "$w" | awk '$1=="50%" {print $2}' | ms)" >> "$OUT/closed-loop.csv"
  taskset -c 1 "$JAVA" -Xms512m -Xmx512m -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" \
    --users "$CONNS" --warmup 3s --duration "${DURATION}s" --json --quiet > "$OUT/load-closed-$r.json" 2>/dev/null
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('load,%s,%s,%s' % (sys.argv[2], d['throughput_rps'], d['p50_ms']))" "$OUT/load-closed-$r.json" "$r" >> "$OUT/closed-loop.csv"
  tail -2 "$OUT/closed-loop.csv" >&2
done

echo "run,repeat,requests,p99_ms,p999_ms,max_ms,send_lag_p99_ms" > "$OUT/sigstop.csv"
for r in $(seq "$REPEATS"); do
  for kind in baseline sigstop; do
    taskset -c 1 "$JAVA" -Xms512m -Xmx512m -jar "$JAR" load --target "http://127.0.0.1:$PORT" --url "$URL" \
      --rate 1000 --warmup 3s --duration 20s --json --quiet > "$OUT/load-$kind-$r.json" 2>/dev/null &
    L=$!
    if [[ $kind == sigstop ]]; then
      sleep 13 # 3 s warm-up + 10 s into the measured 20 s
      kill -STOP $SERVER; sleep 0.2; kill -CONT $SERVER
    fi
    wait $L
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(','.join(str(x) for x in [sys.argv[2], sys.argv[3], d['requests'], d['p99_ms'], d['p999_ms'], d['max_ms'], d['send_lag_p99_ms']]))" "$OUT/load-$kind-$r.json" "$kind" "$r" >> "$OUT/sigstop.csv"
    tail -1 "$OUT/sigstop.csv" >&2
  done
done

python3 - "$OUT" <<'PY' > "$OUT/report.md"
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/closed-loop.csv")))
print("# Trust the tool\n")
print("Command: `bench/trust-the-tool.sh`; environment in `environment.json`. Server pinned to CPU 0, generators to CPU 1.\n")
print("## 1. Closed loop: `doubleface load --users N` vs `wrk -cN` (same URL, interleaved)\n")
print("| repeat | wrk req/s | load req/s | ratio | wrk p50 ms | load p50 ms | ratio |")
print("|---|---|---|---|---|---|---|")
reps = sorted({r["repeat"] for r in rows})
rr, pr = [], []
for rep in reps:
    w = next(r for r in rows if r["tool"] == "wrk" and r["repeat"] == rep)
    l = next(r for r in rows if r["tool"] == "load" and r["repeat"] == rep)
    a = float(l["rps"]) / float(w["rps"]); b = float(l["p50_ms"]) / float(w["p50_ms"])
    rr.append(a); pr.append(b)
    print(f"| {rep} | {float(w['rps']):.0f} | {float(l['rps']):.0f} | {a:.3f} | {w['p50_ms']} | {l['p50_ms']} | {b:.3f} |")
print(f"\nMedian ratio load/wrk: throughput {statistics.median(rr):.3f}, p50 {statistics.median(pr):.3f} (target: within 0.90–1.10).\n")
print("## 2. A 200 ms SIGSTOP of the server during an open-loop run (1,000 req/s, 20 s measured)\n")
print("| run | repeat | requests | p99 ms | p99.9 ms | max ms | send lag p99 ms |")
print("|---|---|---|---|---|---|---|")
for r in csv.DictReader(open(out + "/sigstop.csv")):
    na = lambda v: "n/a" if v in ("None", "") else v
    print(f"| {r['run']} | {r['repeat']} | {r['requests']} | {na(r['p99_ms'])} | {na(r['p999_ms'])} | {r['max_ms']} | {r['send_lag_p99_ms']} |")
print("\np99.9 is not reported: 20,000 samples are fewer than the 100,000 that docs/measuring.md#samples-per-percentile asks for (p99.9 of this run would need 100 s at 1,000 req/s). A 200 ms stall delays the ~200 requests due during it by up to 200 ms, i.e. 1% of the run: the max must rise by about 200 ms over the baseline and p99 must rise clearly; the server itself never saw those requests late — only measuring from intended send times shows them.")
PY
echo "wrote $OUT/report.md" >&2
