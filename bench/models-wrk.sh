#!/usr/bin/env bash
# Compares the five threading models with wrk (closed loop) on one machine.
#
# Kept beside the experiment runner (`doubleface experiment fanout --generator wrk` runs the same
# sweep) for the per-run counters the runner does not take: run-queue wait from schedstat, syscalls
# per request from /proc/PID/io, open descriptors, core utilisation (docs/benchmarks.md).
#
#   bench/models-wrk.sh [--quick] [--out DIR] [--configs "thread-64 type1-32 ..."] [--repeats N]
#                       [--duration S] [--warmup S] [--cell-warmup S]
#                       [--fanouts "1 5 20"] [--sizes "small large"] [--conns "16 256"]
#
# Every flag has an environment twin (CONFIGS, REPEATS, DURATION, WARMUP, CELL_WARMUP, FANOUTS,
# SIZES, CONNS, OUT); flags win. Other knobs: NICE (-10 as root, else 0), MID_CPU (0), AUX_CPU (1), PORT (8080),
# ADMIN_PORT (9090), BASE_PORT (7101), SHARDS (20), RECORDS (1000), IO_THREADS (1), JAVA, JAR.
#
# What it does (see docs/benchmarks.md):
#  - starts the KV leaf (SHARDS shards) pinned to AUX_CPU and the mid-tier pinned to MID_CPU
#    (`taskset -c`), one upstream I/O loop; wrk runs pinned to AUX_CPU with the leaf;
#  - warm-up: once per configuration, the first time it is activated, one discarded WARMUP-second
#    run over every (fanout, size) of the sweep, then before every measured run a discarded
#    CELL_WARMUP-second run of that cell;
#  - for each repeat, for each cell (fanout × size × connections), for each configuration in
#    rotated order (the configurations are interleaved per cell so ratios come from one period):
#    PUT /admin/config, warm-up, GET /admin/stats, `wrk -t1 -cC -dDs --latency`, GET /admin/stats;
#  - writes raw.csv (one row per measured run), environment.json and report.md (per-cell tables,
#    ratio of doubleface to the best other configuration with min/max over repeats).
# Bounded: every wrk run has a duration; the servers are killed on exit (trap).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HELPER="$ROOT/bench/models_wrk.py"

CONFIGS=${CONFIGS:-"thread-64 type1-32 type2a-1f1b type2b doubleface"}
DF_CONFIG=${DF_CONFIG:-doubleface}
REPEATS=${REPEATS:-2}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}          # seconds per (fanout,size) of the one-time warm-up per configuration
CELL_WARMUP=${CELL_WARMUP:-2}
FANOUTS=${FANOUTS:-"1 5 20"}
SIZES=${SIZES:-"small large"}
CONNS=${CONNS:-"16 256"}
OUT=${OUT:-}
MID_CPU=${MID_CPU:-0}
AUX_CPU=${AUX_CPU:-1}
PORT=${PORT:-8080}
ADMIN_PORT=${ADMIN_PORT:-9090}
BASE_PORT=${BASE_PORT:-7101}
SHARDS=${SHARDS:-20}
RECORDS=${RECORDS:-1000}
IO_THREADS=${IO_THREADS:-1}
# The machine is shared: other processes' threads compete for the pinned cores, and CFS shares a
# core per thread, so a one-thread model (doubleface) loses more of its core to neighbours than a
# 64-thread one. Raising the priority of the benchmark's own processes (leaf, mid-tier, wrk)
# keeps the comparison about the models. NICE=0 turns this off.
if [ "$(id -u)" = 0 ]; then NICE=${NICE:--10}; else NICE=${NICE:-0}; fi
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
JAR=${JAR:-$ROOT/cli/target/doubleface.jar}
QUICK=0

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --out) OUT=$2; shift ;;
    --configs) CONFIGS=$2; shift ;;
    --repeats) REPEATS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --cell-warmup) CELL_WARMUP=$2; shift ;;
    --fanouts) FANOUTS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --conns) CONNS=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$QUICK" = 1 ]; then
  # a smoke: two cells, one repeat, short runs
  FANOUTS=${QUICK_FANOUTS:-"5"}; SIZES="small"; CONNS="16 256"; REPEATS=1; DURATION=3; WARMUP=1; CELL_WARMUP=1
fi

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- tools -------------------------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
  log "installing wrk"
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null 2>&1 || die "could not install wrk"
  else
    die "wrk not found and no apt-get to install it"
  fi
fi
for t in curl taskset python3; do command -v $t >/dev/null 2>&1 || die "$t not found"; done
command -v "$JAVA" >/dev/null 2>&1 || die "java not found (set JAVA_HOME or JAVA)"
if [ ! -f "$JAR" ]; then
  if [ -x "$ROOT/doubleface" ]; then
    log "building the CLI jar (./doubleface --help)"
    (cd "$ROOT" && ./doubleface --help >/dev/null) || true
  fi
  [ -f "$JAR" ] || die "CLI jar not found: $JAR (build it: ./mvnw -B -q -pl cli -am package -DskipTests)"
fi
# Run a private copy: the jar may be rebuilt while the sweep runs.
JAR_SHA=$(sha256sum "$JAR" | cut -c1-16)
JAR_MTIME=$(date -u -r "$JAR" +%Y-%m-%dT%H:%M:%SZ)
RUN_JAR=$(mktemp /tmp/doubleface-bench-XXXXXX.jar)
cp "$JAR" "$RUN_JAR"
NCPU=$(nproc)
[ "$MID_CPU" -lt "$NCPU" ] && [ "$AUX_CPU" -lt "$NCPU" ] || die "MID_CPU/AUX_CPU out of range (CPUs: $NCPU)"

for p in $PORT $ADMIN_PORT $BASE_PORT $((BASE_PORT + SHARDS - 1)); do
  if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is already in use"; fi
done

# Sockets: blocking models keep a connection per thread and shard; allow as many as the hard limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
LOG_CAP=${LOG_CAP:-20000000}  # bytes kept of each process's log (a failing server can log GBs)

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/docs/results/models-wrk-$STAMP}
mkdir -p "$OUT/runs"
RAW="$OUT/raw.csv"
python3 "$HELPER" header > "$RAW"

# --- processes -----------------------------------------------------------------------------------
LEAF_PID=""; MID_PID=""
cleanup() {
  local rc=$?
  for pid in $MID_PID $LEAF_PID; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$RUN_JAR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_port() { # port seconds pid
  local deadline=$(( $(date +%s) + $2 ))
  until (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || die "process $3 exited before port $1 opened (see $OUT/*.log)"
    [ "$(date +%s)" -lt "$deadline" ] || die "port $1 did not open within $2 s"
    sleep 0.2
  done
}

JVM_OPTS=${JVM_OPTS:-"-Xms1g -Xmx1g -XX:+AlwaysPreTouch"}
log "starting KV leaf: $SHARDS shards on $BASE_PORT.., CPU $AUX_CPU"
# shellcheck disable=SC2086
taskset -c "$AUX_CPU" nice -n "$NICE" "$JAVA" $JVM_OPTS -jar "$RUN_JAR" leaf kv --shards "$SHARDS" --base-port "$BASE_PORT" \
  --records "$RECORDS" > >(head -c "$LOG_CAP" > "$OUT/leaf.log") 2>&1 &
LEAF_PID=$!
wait_port "$BASE_PORT" 60 "$LEAF_PID"
wait_port $((BASE_PORT + SHARDS - 1)) 30 "$LEAF_PID"

FIRST=${CONFIGS%% *}
log "starting mid-tier: serve ycsb --io-threads $IO_THREADS, CPU $MID_CPU"
SHARD_URI="kv://127.0.0.1:$BASE_PORT-$((BASE_PORT + SHARDS - 1))"
# shellcheck disable=SC2086
taskset -c "$MID_CPU" nice -n "$NICE" "$JAVA" $JVM_OPTS -jar "$RUN_JAR" serve ycsb --port "$PORT" --admin-port "$ADMIN_PORT" \
  --shards "$SHARD_URI" --records "$RECORDS" --config "$FIRST" --io-threads "$IO_THREADS" > >(head -c "$LOG_CAP" > "$OUT/server.log") 2>&1 &
MID_PID=$!
wait_port "$ADMIN_PORT" 60 "$MID_PID"
wait_port "$PORT" 30 "$MID_PID"

admin() { curl -sS -m 30 -f "$@"; }
switch() {
  admin -X PUT "http://127.0.0.1:$ADMIN_PORT/admin/config?name=$1" > /dev/null || die "switch to $1 failed"
  local active
  active=$(admin "http://127.0.0.1:$ADMIN_PORT/admin/config" | python3 -c 'import json,sys; print(json.load(sys.stdin)["active"])')
  [ "$active" = "$1" ] || log "note: asked for $1, active is $active"
}
stats() { admin "http://127.0.0.1:$ADMIN_PORT/admin/stats" > "$1"; }
url() { echo "http://127.0.0.1:$PORT/query?fanout=$1&size=$2"; }
wrk_run() { # conns seconds url outfile
  taskset -c "$AUX_CPU" nice -n "$NICE" wrk -t1 -c"$1" -d"$2"s --latency --timeout 5s "$3" > "$4" 2>&1 || true
}

# sanity: one query answers 200
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$(url 5 small)")
[ "$code" = 200 ] || die "GET $(url 5 small) answered $code"

# --- environment -------------------------------------------------------------------------------
JDK=$("$JAVA" -version 2>&1 | head -1)
WRK_VERSION=$(wrk -v 2>&1 | head -1 || true)
N_CELLS=$(( $(wc -w <<<"$FANOUTS") * $(wc -w <<<"$SIZES") * $(wc -w <<<"$CONNS") ))
N_CONFIGS=$(wc -w <<<"$CONFIGS")
WARMUP_DESC="once per configuration on first activation: ${WARMUP} s of wrk (-c16) per (fanout,size) over $(wc -w <<<"$FANOUTS")x$(wc -w <<<"$SIZES") combinations (discarded)"
python3 - "$OUT/environment.json" <<PY
import json, sys, subprocess, os
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True, cwd="$ROOT").stdout.strip()
    except Exception: return ""
env = {
  "script": "bench/models-wrk.sh", "started_utc": "$STAMP",
  "git_commit": sh("git rev-parse --short HEAD"), "git_dirty": bool(sh("git status --porcelain -- framework drivers services")),
  "jdk": """$JDK""", "cpu_count": $NCPU, "cpu_model": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
  "kernel": sh("uname -r"),
  "mid_cpu": $MID_CPU, "aux_cpu": $AUX_CPU, "pinning": "mid-tier taskset -c $MID_CPU; KV leaf and wrk taskset -c $AUX_CPU; all three at nice $NICE",
  "nice": $NICE, "loadavg_at_start": sh("cat /proc/loadavg"),
  "io_threads": $IO_THREADS, "shards": $SHARDS, "records": $RECORDS, "shard_uri": "$SHARD_URI",
  "jvm_opts": "$JVM_OPTS", "jar": os.path.relpath("$JAR", "$ROOT"), "jar_sha256_16": "$JAR_SHA", "jar_mtime_utc": "$JAR_MTIME",
  "configurations": "$CONFIGS".split(), "doubleface_config": "$DF_CONFIG",
  "fanouts": [int(x) for x in "$FANOUTS".split()], "sizes": "$SIZES".split(), "conns": [int(x) for x in "$CONNS".split()],
  "repeats": $REPEATS, "duration_s": $DURATION, "cell_warmup_s": $CELL_WARMUP, "warmup": "$WARMUP_DESC",
  "quick": bool($QUICK), "load": "wrk -t1 -c<conns> -d${DURATION}s --latency --timeout 5s, closed loop, GET /query?fanout=K&size=S (random key)",
  "wrk_version": """$WRK_VERSION""",
  "order": "per repeat: for each cell, configurations interleaved, order rotated by the repeat index",
}
json.dump(env, open(sys.argv[1], "w"), indent=2)
PY

TOTAL=$(( REPEATS * N_CELLS * N_CONFIGS ))
EST=$(( TOTAL * (DURATION + CELL_WARMUP + 2) + N_CONFIGS * WARMUP * $(wc -w <<<"$FANOUTS") * $(wc -w <<<"$SIZES") ))
log "$TOTAL measured runs of ${DURATION}s, ~$((EST / 60)) min; results in $OUT"

# --- sweep -------------------------------------------------------------------------------------
declare -A WARM
read -r -a CFG <<<"$CONFIGS"
run=0
for rep in $(seq 1 "$REPEATS"); do
  for f in $FANOUTS; do
    for s in $SIZES; do
      for c in $CONNS; do
        for i in $(seq 0 $((N_CONFIGS - 1))); do
          cfg=${CFG[$(( (i + rep - 1) % N_CONFIGS ))]}
          switch "$cfg"
          if [ -z "${WARM[$cfg]:-}" ]; then
            log "warm-up $cfg"
            for wf in $FANOUTS; do for ws in $SIZES; do
              wrk_run 16 "$WARMUP" "$(url "$wf" "$ws")" /dev/null
            done; done
            WARM[$cfg]=1
          fi
          tag="r${rep}-f${f}-${s}-c${c}-${cfg}"
          wrk_run "$c" "$CELL_WARMUP" "$(url "$f" "$s")" "$OUT/runs/$tag.warm.txt"
          stats "$OUT/runs/$tag.before.json"
          python3 "$HELPER" procsnap "$MID_PID" "$MID_CPU" > "$OUT/runs/$tag.proc-before.json"
          wrk_run "$c" "$DURATION" "$(url "$f" "$s")" "$OUT/runs/$tag.wrk.txt"
          python3 "$HELPER" procsnap "$MID_PID" "$MID_CPU" > "$OUT/runs/$tag.proc-after.json"
          stats "$OUT/runs/$tag.after.json"
          python3 "$HELPER" row "$cfg" "$rep" "$f" "$s" "$c" "$DURATION" "$OUT/runs/$tag.wrk.txt" \
            "$OUT/runs/$tag.before.json" "$OUT/runs/$tag.after.json" \
            "$OUT/runs/$tag.proc-before.json" "$OUT/runs/$tag.proc-after.json" >> "$RAW"
          run=$((run + 1))
          log "$(tail -1 "$RAW" | awk -F, -v n="$run" -v t="$TOTAL" '{printf "[%d/%d] %-13s rep %s fanout %-2s %-5s c%-3s  %8s req/s  p50 %s ms  p99 %s ms  err %s/%s  ev/it %s  cs/req %s  cpu %s ms/req  core %s other %s io0 run %s wait %s", n, t, $1, $2, $3, $4, $5, $7, $9, $11, $12, $13, $16, $20, $23, $30, $31, $28, $29}')"
          kill -0 "$MID_PID" 2>/dev/null || die "mid-tier exited (see $OUT/server.log)"
          fds=$(ls /proc/"$MID_PID"/fd 2>/dev/null | wc -l)
          [ "$fds" -lt $(( $(ulimit -n) * 3 / 4 )) ] || die "mid-tier holds $fds file descriptors (limit $(ulimit -n)): a socket leak? stopping before it fails every configuration"
        done
      done
    done
  done
done
rm -f "$OUT"/runs/*.warm.txt
for f in "$OUT/server.log" "$OUT/leaf.log"; do  # keep results directories small
  if [ "$(stat -c %s "$f")" -gt 1000000 ]; then
    { head -n 300 "$f"; echo "... [$(wc -l < "$f") lines, trimmed by models-wrk.sh] ..."; tail -n 300 "$f"; } > "$f.trim" && mv "$f.trim" "$f"
  fi
done

python3 "$HELPER" report "$OUT"
# per-run wrk outputs and snapshots (runs/): into raw.tar.xz with the other raw files (docs/results/README.md)
if [[ $(realpath "$OUT") == "$ROOT"/docs/results/* ]]; then
  python3 "$ROOT/bench/results-pack.py" "$OUT"
fi
log "report: $OUT/report.md"
sed -n '/^## Ratio/,$p' "$OUT/report.md" >&2
