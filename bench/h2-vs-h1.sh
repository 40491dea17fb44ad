#!/usr/bin/env bash
# HTTP/2 (h2c, prior knowledge) against HTTP/1.1 on the same mid-tier and route, with h2load, interleaved.
#
#   bench/h2-vs-h1.sh [--jar cli/target/doubleface.jar] [--cells "h1:100:1 h2:10:10 h2:100:1"]
#                     [--path "/query?fanout=5&size=small"] [--config doubleface]
#                     [--repeats 3] [--duration 10] [--warmup 2] [--out DIR]
#
# A cell is PROTOCOL:CONNECTIONS:STREAMS (h2load -c and -m; for h1, -m 1 is no pipelining).
# What it does: starts the KV leaf (20 shards, 1000 records) pinned to CPU 1 and one mid-tier
# (`serve ycsb --io-threads 1 --config C`) pinned to CPU 0, both left running for the whole
# benchmark; then for each repeat runs every cell once, in an order rotated per repeat, as
# `h2load [--h1] -t1 -cC -mM --warm-up-time W -D D --log-file F URL` pinned to CPU 1. Each run
# stops by itself (-D). Writes runs/*.txt (h2load's output), raw.csv (one row per run: req/s, p50,
# p99, max, failed), latency.csv (p50, p90, p99, p99.9, max per run, from h2load's per-request log,
# which is then deleted: it is tens of MB), environment.json and report.md (median req/s and p99 per
# cell with min–max over repeats).
# Load runs take an exclusive lock on /tmp/doubleface-load.lock (builds take it shared).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAR=$ROOT/cli/target/doubleface.jar; CELLS="h1:100:1 h2:10:10 h2:100:1"; URLPATH="/query?fanout=5&size=small"
CONFIG=doubleface; REPEATS=3; DURATION=10; WARMUP=2; OUT=""
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}; export JAVA
PORT=${PORT:-8080}; BASE_PORT=${BASE_PORT:-7101}; SHARDS=20; RECORDS=1000
LOCK=${LOCK:-/tmp/doubleface-load.lock}
while [ $# -gt 0 ]; do
  case "$1" in
    --jar) JAR=$2; shift ;;
    --cells) CELLS=$2; shift ;;
    --path) URLPATH=$2; shift ;;
    --config) CONFIG=$2; shift ;;
    --repeats) REPEATS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
. "$ROOT/bench/lib/procs.sh"
[ -f "$JAR" ] || die "no jar at $JAR (build: ./mvnw -B -q package -DskipTests)"
install_pkg h2load nghttp2-client
for t in taskset python3 flock; do command -v $t >/dev/null 2>&1 || die "$t not found"; done
if [ "$(id -u)" = 0 ]; then NICE=${NICE:--10}; else NICE=${NICE:-0}; fi
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/docs/results/h2-vs-h1-$STAMP}
mkdir -p "$OUT/runs"
RUN_JAR=$(mktemp /tmp/h2-vs-h1-XXXXXX.jar); cp "$JAR" "$RUN_JAR"
stop_on_exit "$RUN_JAR"

start_leaf kv "$RUN_JAR" "$OUT/runs/leaf.log"
log "starting the mid-tier on CPU 0 (serve ycsb --io-threads 1 --config $CONFIG)"
taskset -c 0 nice -n "$NICE" "$JAVA" -jar "$RUN_JAR" serve ycsb --port "$PORT" --admin-port -1 --io-threads 1 \
  --shards "kv://127.0.0.1:$BASE_PORT-$LAST" --records $RECORDS --config "$CONFIG" > "$OUT/runs/mid.log" 2>&1 &
MID_PID=$!
wait_port "$PORT" 60 "$MID_PID"
URL="http://127.0.0.1:$PORT$URLPATH"
echo "repeat,cell,protocol,connections,streams,requests_per_s,p50_ms,p99_ms,max_ms,succeeded,failed" > "$OUT/raw.csv"
echo "run,requests,p50_ms,p90_ms,p99_ms,p99_9_ms,max_ms" > "$OUT/latency.csv"
summarise() { # h2load output, its per-request log, run name -> req/s p50 p99 max succeeded failed; a latency.csv row
  python3 - "$1" "$2" "$3" "$OUT/latency.csv" <<'PY'
import re,sys
t=open(sys.argv[1]).read()
rps=float(re.search(r'finished in [^,]+, ([\d.]+) req/s',t).group(1))
req=re.search(r'requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed',t)
lat=sorted(int(l.split('\t')[2]) for l in open(sys.argv[2]) if l.count('\t')>=2)
q=lambda p: lat[min(len(lat)-1,int(p*len(lat)))]/1000 if lat else float('nan')
mx=lat[-1]/1000 if lat else float('nan')
open(sys.argv[4],'a').write(f"{sys.argv[3]},{len(lat)},{q(0.5):.3f},{q(0.9):.3f},{q(0.99):.3f},{q(0.999):.3f},{mx:.3f}\n")
print(f"{rps:.0f},{q(0.5):.3f},{q(0.99):.3f},{mx:.3f},{req.group(1)},{req.group(2)}")
PY
}
run_one() { # repeat cell
  local proto conns streams; IFS=: read -r proto conns streams <<<"$2"
  local name="r$1-$proto-c$conns-m$streams" flag=""
  [ "$proto" = h1 ] && flag="--h1"
  # exclusive: no build or other load run shares the two cores with this one
  flock "$LOCK" taskset -c 1 nice -n "$NICE" h2load $flag -t1 -c"$conns" -m"$streams" --warm-up-time="$WARMUP" \
    -D "$DURATION" --log-file="$OUT/runs/$name.log" "$URL" > "$OUT/runs/$name.txt" 2>&1
  echo "$1,$2,$proto,$conns,$streams,$(summarise "$OUT/runs/$name.txt" "$OUT/runs/$name.log" "$name")" >> "$OUT/raw.csv"
  rm -f "$OUT/runs/$name.log"
  log "repeat $1 $2: $(tail -1 "$OUT/raw.csv" | cut -d, -f6-)"
}
read -r -a cells <<<"$CELLS"
n=${#cells[@]}
log "$((REPEATS * n)) runs of ${WARMUP}+${DURATION} s against $URL"
for r in $(seq "$REPEATS"); do
  for i in $(seq 0 $((n - 1))); do run_one "$r" "${cells[$(( (i + r - 1) % n ))]}"; done  # rotated per repeat
done
python3 - "$OUT" "$URL" "$CONFIG" "$ROOT" <<'PY'
import csv,json,statistics,sys,os,subprocess,platform
out,url,config,root=sys.argv[1:5]
rows=list(csv.DictReader(open(os.path.join(out,'raw.csv'))))
cells=[]
for r in rows:
    if r['cell'] not in cells: cells.append(r['cell'])
def span(v,fmt): return f"{fmt(statistics.median(v))} ({fmt(min(v))}–{fmt(max(v))})"
lines=["| protocol | connections | streams per connection | req/s, median (min–max) | p50 ms, median | p99 ms, median (min–max) | failed |","|---|---|---|---|---|---|---|"]
for c in cells:
    rs=[r for r in rows if r['cell']==c]
    lines.append(f"| {rs[0]['protocol']} | {rs[0]['connections']} | {rs[0]['streams']} | "
                 f"{span([float(r['requests_per_s']) for r in rs], lambda v: f'{v:,.0f}')} | "
                 f"{statistics.median(float(r['p50_ms']) for r in rs):.2f} | "
                 f"{span([float(r['p99_ms']) for r in rs], lambda v: f'{v:.2f}')} | {sum(int(r['failed']) for r in rs)} |")
open(os.path.join(out,'report.md'),'w').write("# HTTP/2 (h2c) vs HTTP/1.1 (bench/h2-vs-h1.sh)\n\n"
    f"`{url}`, configuration {config}, {len(rows)//len(cells)} repeats per cell.\n\n"+"\n".join(lines)+
    "\n\nMid-tier pinned to CPU 0 with one I/O loop; KV leaf and h2load (one thread) on CPU 1. p50/p99 from h2load's per-request log (latency.csv: more percentiles per run).\n")
run=lambda a: subprocess.run(a,capture_output=True,text=True)
env={"git_commit":run(['git','-C',root,'rev-parse','HEAD']).stdout.strip(),
     "java":(run([os.environ.get('JAVA','java'),'-version']).stderr.splitlines() or [''])[0],
     "h2load":(run(['h2load','--version']).stdout.splitlines() or [''])[0],
     "cpus":os.cpu_count(),"pinning":{"mid_tier":"cpu 0","leaf_and_h2load":"cpu 1"},"kernel":platform.release()}
json.dump(env,open(os.path.join(out,'environment.json'),'w'),indent=2)
print("\n".join(lines))
PY
log "report: $OUT/report.md"
