#!/usr/bin/env bash
# Compares two builds of the mid-tier (e.g. before and after a change) with wrk, interleaved.
#
#   bench/jars-wrk.sh --a OLD.jar --b NEW.jar [--labels "before after"] [--store kv|redis]
#                     [--configs "doubleface type2a-1f1b"] [--cells "5:small:256 ..."]
#                     [--repeats N] [--duration S] [--warmup S] [--out DIR]
#                     [--a-args "SERVE ARGS"] [--b-args "SERVE ARGS"]
#
# A cell is FANOUT:SIZE:CONNECTIONS. Defaults: --store kv, --configs doubleface, --cells
# "1:small:256 5:small:256 20:small:256", 3 repeats of 10 s after a 5 s warm-up.
# With --store redis the shards are 20 real redis-server processes (`leaf redis`, installed with
# apt-get when missing) and the default cells are 1/5/20 small and 5 large at 100 connections.
#
# What it does: starts the leaf (KV or Redis, 20 shards, 1000 records) pinned to CPU 1; then for
# each repeat, cell and configuration, for each jar in rotated order (A B, then B A, …) starts that
# jar's mid-tier pinned to CPU 0 (`serve ycsb --io-threads 1 --config C`), runs a discarded
# warm-up and a measured `wrk -t1 -cN -dD --latency` pinned to CPU 1, and stops the mid-tier. So
# every ratio comes from adjacent runs on the same leaf. Writes raw.csv (one row per run),
# environment.json and report.md (median req/s and p99 per jar, ratio B/A with min/max over repeats).
# Bounded: every wrk run has a duration; the processes are killed on exit.
# --a-args/--b-args: extra `serve ycsb` options for that side, e.g. the same jar twice with
# --b-args "--admission adaptive" to measure what an option costs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=""; B=""; A_ARGS=""; B_ARGS=""; LABELS="before after"; STORE=kv; CONFIGS="doubleface"; CELLS=""
REPEATS=3; DURATION=10; WARMUP=5; OUT=""
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}; export JAVA
PORT=${PORT:-8080}; BASE_PORT=${BASE_PORT:-7101}; SHARDS=20; RECORDS=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --a) A=$2; shift ;;
    --b) B=$2; shift ;;
    --a-args) A_ARGS=$2; shift ;;
    --b-args) B_ARGS=$2; shift ;;
    --labels) LABELS=$2; shift ;;
    --store) STORE=$2; shift ;;
    --configs) CONFIGS=$2; shift ;;
    --cells) CELLS=$2; shift ;;
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
[ -f "$A" ] && [ -f "$B" ] || die "--a and --b must name two jars (try --help)"
if [ -z "$CELLS" ]; then
  if [ "$STORE" = redis ]; then CELLS="1:small:100 5:small:100 20:small:100 5:large:100"
  else CELLS="1:small:256 5:small:256 20:small:256"; fi
fi
read -r LA LB <<<"$LABELS"
install_pkg wrk wrk
[ "$STORE" = redis ] && install_pkg redis-server redis-server
for t in curl taskset python3; do command -v $t >/dev/null 2>&1 || die "$t not found"; done
if [ "$(id -u)" = 0 ]; then NICE=${NICE:--10}; else NICE=${NICE:-0}; fi
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/docs/results/jars-wrk-$STORE-$STAMP}
mkdir -p "$OUT/runs"
RUN_A=$(mktemp /tmp/jar-a-XXXXXX.jar); RUN_B=$(mktemp /tmp/jar-b-XXXXXX.jar)
cp "$A" "$RUN_A"; cp "$B" "$RUN_B"
stop_on_exit "$RUN_A" "$RUN_B"

start_leaf "$STORE" "$RUN_B" "$OUT/runs/leaf.log"
SCHEME=$STORE
echo "repeat,cell,config,jar,label,requests_per_s,p50_ms,p99_ms,errors" > "$OUT/raw.csv"
parse() { # wrk output -> req/s p50 p99 errors
  python3 - "$1" <<'PY'
import re,sys
t=open(sys.argv[1]).read()
def ms(s):
    v=float(re.match(r'([\d.]+)',s).group(1)); u=s[len(re.match(r'[\d.]+',s).group(0)):]
    return v*{'us':0.001,'ms':1,'s':1000,'m':60000}.get(u,1)
rps=float(re.search(r'Requests/sec:\s+([\d.]+)',t).group(1))
p50=ms(re.search(r'^\s+50%\s+(\S+)',t,re.M).group(1)); p99=ms(re.search(r'^\s+99%\s+(\S+)',t,re.M).group(1))  # line starts: '98.99%' in the stdev column is not the p99
e=re.search(r'Non-2xx or 3xx responses: (\d+)',t); s=re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)',t)
err=(int(e.group(1)) if e else 0)+(sum(map(int,s.groups())) if s else 0)
print(f"{rps:.0f},{p50:.3f},{p99:.3f},{err}")
PY
}
run_one() { # repeat cell config jar label
  local fan size conns; IFS=: read -r fan size conns <<<"$2"
  taskset -c 0 nice -n "$NICE" "$JAVA" -jar "$4" serve ycsb --port $PORT --admin-port -1 --io-threads 1 \
    --shards "$SCHEME://127.0.0.1:$BASE_PORT-$LAST" --records $RECORDS --config "$3" $(if [ "$5" = "$LB" ]; then echo "$B_ARGS"; else echo "$A_ARGS"; fi) \
    > "$OUT/runs/mid-$5.log" 2>&1 &
  MID_PID=$!
  wait_port $PORT 60 "$MID_PID"
  local url="http://127.0.0.1:$PORT/query?fanout=$fan&size=$size"
  taskset -c 1 nice -n "$NICE" wrk -t1 -c"$conns" -d"${WARMUP}s" "$url" > /dev/null 2>&1 || true
  local f="$OUT/runs/r$1-${fan}-${size}-${conns}-$3-$5.txt"
  taskset -c 1 nice -n "$NICE" wrk -t1 -c"$conns" -d"${DURATION}s" --latency "$url" > "$f" 2>&1
  stop "$MID_PID"; MID_PID=""
  echo "$1,$2,$3,$(basename "$4"),$5,$(parse "$f")" >> "$OUT/raw.csv"
  log "repeat $1 cell $2 $3 $5: $(tail -1 "$OUT/raw.csv" | cut -d, -f6-)"
}
total=$(( REPEATS * $(wc -w <<<"$CELLS") * $(wc -w <<<"$CONFIGS") * 2 ))
log "$total runs of ${WARMUP}+${DURATION} s (about $(( total * (WARMUP + DURATION + 3) / 60 )) min)"
turn=0
for r in $(seq "$REPEATS"); do
  for cell in $CELLS; do
    for c in $CONFIGS; do
      # which jar goes first alternates per (cell, configuration) and per repeat, so that with an
      # even number of cells x configurations no cell has the same jar first in every repeat
      if [ $(((turn + r) % 2)) = 1 ]; then run_one "$r" "$cell" "$c" "$RUN_A" "$LA"; run_one "$r" "$cell" "$c" "$RUN_B" "$LB"
      else run_one "$r" "$cell" "$c" "$RUN_B" "$LB"; run_one "$r" "$cell" "$c" "$RUN_A" "$LA"; fi
      turn=$((turn + 1))
    done
  done
done
python3 - "$OUT" "$LA" "$LB" <<'PY'
import csv,json,statistics,sys,os,subprocess,platform
out,la,lb=sys.argv[1:4]
rows=list(csv.DictReader(open(os.path.join(out,'raw.csv'))))
cells=[]; 
for r in rows:
    k=(r['cell'],r['config'])
    if k not in cells: cells.append(k)
lines=["| cell (fanout:size:conns) | config | "+la+" req/s (median) | "+lb+" req/s (median) | "+lb+"/"+la+" (min–max over repeats) | "+la+" p99 ms | "+lb+" p99 ms | errors |","|---|---|---|---|---|---|---|---|"]
for cell,cfg in cells:
    a=[r for r in rows if r['cell']==cell and r['config']==cfg and r['label']==la]
    b=[r for r in rows if r['cell']==cell and r['config']==cfg and r['label']==lb]
    ra=[float(x['requests_per_s']) for x in a]; rb=[float(x['requests_per_s']) for x in b]
    ratios=[y/x for x,y in zip(sorted(ra,key=lambda v:0),rb)] if ra and rb else []
    ratios=[float(b[i]['requests_per_s'])/float(a[i]['requests_per_s']) for i in range(min(len(a),len(b)))]
    lines.append(f"| {cell} | {cfg} | {statistics.median(ra):,.0f} | {statistics.median(rb):,.0f} | {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) | {statistics.median([float(x['p99_ms']) for x in a]):.2f} | {statistics.median([float(x['p99_ms']) for x in b]):.2f} | {sum(int(x['errors']) for x in a+b)} |")
open(os.path.join(out,'report.md'),'w').write("# "+lb+" vs "+la+" (bench/jars-wrk.sh)\n\n"+"\n".join(lines)+"\n\nRatios pair the runs of the same repeat (adjacent in time). Mid-tier pinned to CPU 0 with one I/O loop; leaf and wrk on CPU 1.\n")
env={"git_commit":subprocess.run(['git','rev-parse','HEAD'],capture_output=True,text=True).stdout.strip(),
     "java":subprocess.run([os.environ.get('JAVA','java'),'-version'],capture_output=True,text=True).stderr.splitlines()[0] if True else "",
     "cpus":os.cpu_count(),"pinning":{"mid_tier":"cpu 0","leaf_and_wrk":"cpu 1"},"kernel":platform.release(),
     "wrk":subprocess.run(['wrk','-v'],capture_output=True,text=True).stdout.splitlines()[0] if True else ""}
json.dump(env,open(os.path.join(out,'environment.json'),'w'),indent=2)
print("\n".join(lines))
PY
log "report: $OUT/report.md"
