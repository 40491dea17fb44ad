#!/usr/bin/env bash
# The peers and the hand-written ceiling beside doubleface, on equal work (issue 18).
#
#   bench/peers.sh [--systems "vertx reactor helidon ceiling doubleface"] [--configs "doubleface type2a-1f1b"]  (also: vertx5, Vert.x 5.0)
#                  [--cells "1:small:100 5:small:100 20:small:100 5:large:100 20:large:100"]
#                  [--repeats 3] [--duration 15] [--warmup 10] [--layout pinned|unpinned] [--out DIR]
#                  [--open-fraction F [--open-from DIR] [--open-warmup S] [--trace-stages | --kernel-stages]]
#                  [--profile]
#
# Workload, identical in every system (bench/peers/, one shaded jar each): GET /?fanout=K&size=small|large
# sends K Redis GETs of one random key (s:<i>, 100 B, or l:<i>, 20,000 B; i in 0..999) to shards 0..K-1 and
# answers the K values concatenated in shard order. A cell is FANOUT:SIZE:CONNECTIONS. The system
# `doubleface` stands for one system per configuration of --configs (named doubleface/<config>); a
# configuration may carry redis:// URI options after @, e.g. doubleface@connection=native, and
# +bytes for the byte[] form of the service, +flush=POLICY for the shard connections' flush policy
# (per-iteration by default, per-write, batch:N[:MICROS]; docs/tracing.md "Knobs"), +loops=N for N I/O
# threads instead of the layout's count. `ceiling/composite` is the ceiling joining a read that ends
# inside a value with the next as a composite buffer instead of merging them (a copy).
#
# What it does: builds the peers if a jar is missing or older than its sources (./mvnw -f
# bench/peers/pom.xml; doubleface's own SNAPSHOT artifacts are installed to ~/.m2 first if absent);
# starts 20 redis-server shards (ports REDIS_BASE_PORT.., default 6400-6419, no persistence) pinned to
# CPU 1 and loads 1,000 keys of each size into each with redis-cli --pipe; checks every system's body
# byte for byte (fanout 1, 5, 20 small and 5 large, key=42) and fails loudly on a mismatch; then, for each
# repeat and cell, runs every system in rotated order: start it pinned to CPU 0 with 1 I/O thread, warm up
# (wrk -t1 -cN -dW, discarded), measure (wrk -t1 -cN -dD --latency; wrk pinned to CPU 1 with the shards),
# stop it. Writes into DIR (default docs/results/peers-<UTC date>): raw.csv (one row per run, with the
# server process's CPU time (user + system, /proc) per request over the measured window and the
# req/s of the discarded warm-up, which shows how far a fresh JVM is from its steady state, and the
# shards' CPU time per request (all 20 redis-servers together: how much work the system's shard
# traffic costs them, which on one machine comes out of the same cores)),
# environment.json (JDK, kernel, CPU, pinning, versions of every peer), report.md (per cell: median
# req/s, p50, p99 per system and its ratio to the ceiling with min-max over repeats), runs/ (logs; packed
# into raw.tar.xz by bench/results-pack.py when DIR is under docs/results).
# Open loop (--open-fraction F, e.g. 0.5): after the closed-loop runs, each cell is run again at one
# equal offered rate for every system, F x the slowest system's median capacity in that cell (from this
# run's raw.csv, or from DIR/raw.csv of an earlier run with --open-from DIR, which skips the closed-loop
# runs), with doubleface's own load generator (Poisson arrivals, latency from the intended send time, no
# coordinated omission; C1-only; pinned to CPU 1 like wrk), after a closed-loop wrk warm-up of --warmup
# seconds and the generator's own warm-up at the rate: open.csv, the generator's per-second histograms
# (runs/open-*.hlog) and an "Open loop" section of report.md (p50,
# p99, p99.9 per system and the p99's ratio to the ceiling's). A run lasts --duration, or longer when the
# rate is too low for 12,000 samples (the generator reports a p99 from 10,000 samples, a p99.9 from 100,000).
# --open-warmup S: the generator's own warm-up at the rate (default: --warmup). The generator opens its
# connections (up to 1,024) when it starts, and their state is copied at every young collection until
# it is tenured after 15 of them: a system that allocates little collects rarely and carries them
# young for longer (at fanout 1, ~23 s for Vert.x, ~54 s for doubleface, ~89 s for the ceiling). A
# warm-up longer than that keeps the generator's connection churn out of the measured window
# (docs/benchmarks.md, "Fanout 1: three more allocation cuts").
# --trace-stages (open loop only): each doubleface system runs with its admin listener on ADMIN_PORT
# (8481); stage tracing goes on for every request a second into the closed-loop warm-up (PUT
# /admin/knobs?trace-stages=all), the admin path is used every 2 s during that warm-up (its first
# requests deoptimize Netty code the data path shares: docs/tracing.md), and the figures are reset at
# the generator's first progress line of the measured window (reset-stages=true, within a second of
# the window's start), so every traced request is a measured one (the window's first second may be
# missed); its /admin/stats
# after the run goes to runs/open-*.stages.json and its stages (p50, p99, p99.9) to stages.csv, beside
# the generator's end-to-end figures. A diagnostic:
# tracing costs ~100 ns per request (docs/tracing.md) and the admin listener shares the I/O loop.
# --kernel-stages (open loop only, root): bpftrace (installed if missing) on the sock and sched
# tracepoints during each open-loop measured window, every system alike: request readable -> the
# server's read and its first write of the answer, shard reply readable -> read, answer written -> the
# generator's first read, a server thread's wake-up and preemption delays (and what preempted it on
# CPU 0): runs/open-*.kernel.txt, kernel.csv and a section of report.md. A diagnostic: the probes cost
# CPU on both cores.
# --layout unpinned: the layout a team runs instead of the pinned one above: no process pinned, every
# server with as many I/O threads (loops, verticles, carriers) as the machine has cores, wrk with as
# many threads (each with its share of the connections); the shards and the generator share the cores
# with the server. Ratios compare systems within one layout only (environment.json records it).
# --profile (closed loop; a diagnostic): async-profiler (fetched once from Maven Central into
# ~/.cache/doubleface/async-profiler, and attached with jcmd) samples each server's CPU, every system
# alike, over the measured window only: started after the warm-up, stopped when wrk ends, so the JIT
# compiling the warm-up's code is out of it. runs/<run>.collapsed (collapsed stacks) and profile.md
# (bench/profile_summary.py: per request, kernel time by system call, user time by package, the
# JIT and the collector, the hottest methods). The sampling costs CPU: the figures of profiled runs
# are not for the ratios.
# Bounded: every wrk run has a duration, every wait a timeout; every process is killed on exit.
# Environment: JAVA_HOME (or JAVA), JAVA_OPTS (extra JVM options for every system, default none),
# PORT (8480), ADMIN_PORT (8481, --trace-stages), REDIS_BASE_PORT (6400).
set -euo pipefail
# bash reads a script while it runs it: run from a copy, so that editing this file mid-run is safe
if [[ -z ${PEERS_SH_ORIGINAL:-} ]]; then
  copy=$(mktemp /tmp/peers-sh-XXXXXX)
  cp "${BASH_SOURCE[0]}" "$copy"
  PEERS_SH_ORIGINAL=$(realpath "${BASH_SOURCE[0]}") exec bash "$copy" "$@"
fi
SELF=$PEERS_SH_ORIGINAL
rm -f "${BASH_SOURCE[0]}" # the copy: bash keeps it open
cd "$(dirname "$SELF")/.."
ROOT=$PWD
SYSTEMS="vertx reactor helidon ceiling doubleface"; CONFIGS="doubleface type2a-1f1b"
CELLS="1:small:100 5:small:100 20:small:100 5:large:100 20:large:100"
REPEATS=3; DURATION=15; WARMUP=10; LAYOUT=pinned; OUT=""; OPEN_FRACTION=""; OPEN_FROM=""; OPEN_WARMUP=""; TRACE=""; KSTAGES=""; PROFILE=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --systems) SYSTEMS=$2; shift 2;;
    --configs) CONFIGS=$2; shift 2;;
    --cells) CELLS=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --duration) DURATION=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --layout) LAYOUT=$2; shift 2;;
    --open-fraction) OPEN_FRACTION=$2; shift 2;;
    --open-from) OPEN_FROM=$2; shift 2;;
    --open-warmup) OPEN_WARMUP=$2; shift 2;;
    --trace-stages) TRACE=1; shift;;
    --kernel-stages) KSTAGES=1; shift;;
    --profile) PROFILE=1; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) echo "peers.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/peers-$(date -u +%Y%m%d-%H%M)}
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
PORT=${PORT:-8480}; ADMIN_PORT=${ADMIN_PORT:-8481}; REDIS_BASE_PORT=${REDIS_BASE_PORT:-6400}; SHARDS=20; KEYS=1000; CHECK_KEY=42
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "peers.sh: error: $*"; exit 1; }
OPEN_WARMUP=${OPEN_WARMUP:-$WARMUP}
for n in "$REPEATS" "$DURATION" "$WARMUP" "$OPEN_WARMUP"; do [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || die "--repeats/--duration/--warmup/--open-warmup: '$n' (expected a positive integer)"; done
[[ -z $OPEN_FRACTION || $OPEN_FRACTION =~ ^0?\.[0-9]+$|^1(\.0*)?$ ]] || die "--open-fraction: '$OPEN_FRACTION' (expected a fraction in (0, 1])"
[[ -z $OPEN_FROM || -n $OPEN_FRACTION ]] || die "--open-from needs --open-fraction"
[[ -z $TRACE || -n $OPEN_FRACTION ]] || die "--trace-stages needs --open-fraction (it traces the open-loop runs)"
[[ -z $KSTAGES || -n $OPEN_FRACTION ]] || die "--kernel-stages needs --open-fraction (it traces the open-loop runs)"
[[ -z $KSTAGES || -z $TRACE ]] || die "--kernel-stages and --trace-stages: one at a time"
[[ -z $OPEN_FROM || -f $OPEN_FROM/raw.csv ]] || die "--open-from: $OPEN_FROM/raw.csv not found"
case $LAYOUT in
  pinned) PIN_SERVER=(taskset -c 0); PIN_LOAD=(taskset -c 1); IO_THREADS=1; WRK_THREADS=1;;
  unpinned) PIN_SERVER=(); PIN_LOAD=(); IO_THREADS=$(nproc); WRK_THREADS=$(nproc);;
  *) die "--layout: '$LAYOUT' (expected pinned or unpinned)";;
esac
for c in $CELLS; do [[ $c =~ ^[0-9]+:(small|large):[0-9]+$ ]] || die "cell '$c' (expected FANOUT:small|large:CONNECTIONS)"; done
install_pkg() { command -v "$1" >/dev/null 2>&1 && return 0; log "installing $2"
  { apt-get update -qq && apt-get install -y -qq "$2"; } >/dev/null 2>&1 || die "$1 not found and apt-get install $2 failed"; }
install_pkg wrk wrk; install_pkg redis-server redis-server; install_pkg redis-cli redis-tools
if [[ -n $KSTAGES ]]; then
  [[ $(id -u) == 0 ]] || die "--kernel-stages needs root (bpftrace)"
  install_pkg bpftrace bpftrace
  [[ -d /sys/kernel/tracing/events/sock ]] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
  [[ -d /sys/kernel/tracing/events/sock/sock_send_length ]] || die "--kernel-stages: no sock tracepoints in /sys/kernel/tracing"
fi
for t in taskset python3 curl; do command -v $t >/dev/null || die "$t not found"; done
ASYNC_PROFILER=""
if [[ -n $PROFILE ]]; then
  AP_VERSION=4.2; AP_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/doubleface/async-profiler-$AP_VERSION
  case $(uname -m) in x86_64) AP_ARCH=linux-x64;; aarch64) AP_ARCH=linux-arm64;; *) die "--profile: no async-profiler build for $(uname -m)";; esac
  ASYNC_PROFILER=$AP_DIR/$AP_ARCH/libasyncProfiler.so
  if [[ ! -f $ASYNC_PROFILER ]]; then
    log "fetching async-profiler $AP_VERSION from Maven Central into $AP_DIR"
    mkdir -p "$AP_DIR"
    curl -sSf -m 120 -o "$AP_DIR/ap.jar" "https://repo1.maven.org/maven2/tools/profiler/async-profiler/$AP_VERSION/async-profiler-$AP_VERSION.jar" \
      || die "--profile: cannot download async-profiler $AP_VERSION"
    (cd "$AP_DIR" && python3 -c "import sys, zipfile; zipfile.ZipFile('ap.jar').extract(sys.argv[1])" "$AP_ARCH/libasyncProfiler.so") \
      || die "--profile: no $AP_ARCH/libasyncProfiler.so in the async-profiler jar"
    rm -f "$AP_DIR/ap.jar"
  fi
  JCMD=$(dirname "$JAVA")/jcmd; [[ -x $JCMD ]] || JCMD=$(command -v jcmd) || die "--profile: no jcmd beside $JAVA"
fi

# --- the systems (doubleface -> one per configuration) -----------------------------------------
RUN_SYSTEMS=()
for s in $SYSTEMS; do
  case "$s" in
    vertx|vertx5|reactor|helidon|ceiling|ceiling/composite) RUN_SYSTEMS+=("$s");;
    doubleface) for c in $CONFIGS; do RUN_SYSTEMS+=("doubleface/$c"); done;;
    *) die "unknown system '$s' (expected: vertx vertx5 reactor helidon ceiling ceiling/composite doubleface)";;
  esac
done
MODULES=$(printf '%s\n' "${RUN_SYSTEMS[@]}" | cut -d/ -f1 | sort -u)

# --- build --------------------------------------------------------------------------------------
PEERS=bench/peers
if ! ls ~/.m2/repository/io/doubleface/doubleface-driver-redis/0.1.0-SNAPSHOT/*.jar >/dev/null 2>&1 && grep -qx doubleface <<<"$MODULES"; then
  log "installing doubleface's artifacts to ~/.m2"
  ./mvnw -B -q -o install -DskipTests -Dmaven.javadoc.skip -Djapicmp.skip || ./mvnw -B -q install -DskipTests -Dmaven.javadoc.skip -Djapicmp.skip
fi
stale=""
for m in $MODULES; do
  jar=$PEERS/$m/target/peer-$m.jar
  if [[ ! -f $jar ]] || [[ -n $(find "$PEERS/pom.xml" "$PEERS/$m" "$PEERS/common" -newer "$jar" -type f -not -path '*/target/*' | head -1) ]]; then stale+=" $m"; fi
done
if [[ -n $stale ]]; then
  log "building the peers (stale:$stale)"
  ./mvnw -B -q -f $PEERS/pom.xml package -DskipTests -pl "common,$(tr ' ' ',' <<<"${stale# }")" -am || die "the peers do not build"
fi
mkdir -p "$OUT/runs"
WORK=$(mktemp -d /tmp/peers-XXXXXX)
for m in $MODULES; do cp "$PEERS/$m/target/peer-$m.jar" "$WORK/"; done  # a rebuild during the run changes nothing
if [[ -n $OPEN_FRACTION ]]; then
  [[ -f cli/target/doubleface.jar ]] || ./mvnw -B -q -o package -pl cli -am -DskipTests -Dmaven.javadoc.skip -Djapicmp.skip \
    || die "cannot build cli/target/doubleface.jar (the load generator)"
  cp cli/target/doubleface.jar "$WORK/loadgen.jar"
fi

# --- processes, cleanup -----------------------------------------------------------------------
SERVER_PID=""; SHARD_PIDS=()
stop() { local pid=$1; [[ -n $pid ]] || return 0; kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$pid" 2>/dev/null || true; }
cleanup() { local rc=$?; stop "$SERVER_PID"; for p in "${SHARD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${SHARD_PIDS[@]}"; do stop "$p"; done; rm -rf "$WORK"; exit $rc; }
trap cleanup EXIT
trap 'exit 130' INT TERM
port_open() { (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; }

# --- shards -------------------------------------------------------------------------------------
LAST=$((REDIS_BASE_PORT + SHARDS - 1))
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do port_open $p && die "port $p is in use (another run's shards?): set REDIS_BASE_PORT"; done
port_open $PORT && die "port $PORT is in use: set PORT"
[[ -z $TRACE ]] || ! port_open $ADMIN_PORT || die "port $ADMIN_PORT is in use: set ADMIN_PORT"
log "starting $SHARDS redis-server shards on ports $REDIS_BASE_PORT-$LAST, ${PIN_LOAD:+pinned to CPU 1}${PIN_LOAD:-unpinned}"
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  "${PIN_LOAD[@]}" redis-server --save '' --appendonly no --port $p --bind 127.0.0.1 --daemonize no \
    > "$OUT/runs/redis-$p.log" 2>&1 &
  SHARD_PIDS+=($!)
done
python3 bench/peers_report.py dataset "$WORK/dataset.resp" $KEYS 100 20000
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  for _ in $(seq 100); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p $p ping >/dev/null 2>&1 || die "redis-server on $p does not answer (see $OUT/runs/redis-$p.log)"
done
log "loading $KEYS keys of 100 B and of 20,000 B into every shard"
LOADERS=()
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  "${PIN_LOAD[@]}" timeout 120 redis-cli -p $p --pipe < "$WORK/dataset.resp" > "$OUT/runs/load-$p.log" 2>&1 &
  LOADERS+=($!)
done
for l in "${LOADERS[@]}"; do wait "$l" || die "loading a shard failed (see $OUT/runs/load-*.log)"; done
for ((p = REDIS_BASE_PORT; p <= LAST; p++)); do
  for _ in $(seq 600); do [[ $(redis-cli -p $p dbsize 2>/dev/null) == $((2 * KEYS)) ]] && break; sleep 0.1; done
  [[ $(redis-cli -p $p dbsize) == $((2 * KEYS)) ]] || die "shard $p holds $(redis-cli -p $p dbsize) keys, expected $((2 * KEYS)) (see $OUT/runs/load-$p.log)"
done

# --- one system ---------------------------------------------------------------------------------
start() { # system log -> SERVER_PID, once "ready on PORT" is printed
  local s=$1 cfg=() m=${1%%/*} admin=""
  [[ $s == */* ]] && cfg=("${s#*/}")
  [[ -n ${3:-} && $m == doubleface ]] && admin=$ADMIN_PORT
  # shellcheck disable=SC2086
  PEER_ADMIN_PORT=$admin "${PIN_SERVER[@]}" "$JAVA" ${JAVA_OPTS:-} -jar "$WORK/peer-$m.jar" $PORT $IO_THREADS $REDIS_BASE_PORT $SHARDS "${cfg[@]}" > "$2" 2>&1 &
  SERVER_PID=$!
  local deadline=$(( $(date +%s) + 60 ))
  until grep -q "^ready on $PORT" "$2"; do
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$2" >&2; die "$s exited before it was ready (see $2)"; }
    [[ $(date +%s) -lt $deadline ]] || die "$s not ready after 60 s (see $2)"
    sleep 0.1
  done
}
check() { # system: the bodies, byte for byte, with a fixed key
  local s=$1 f=$WORK/body
  start "$s" "$OUT/runs/check-${s//\//-}.log"
  grep -m1 "^ready on" "$OUT/runs/check-${s//\//-}.log" > "$WORK/ready-${s//\//-}"
  for c in 1:small 5:small 20:small 5:large; do
    local fan=${c%%:*} size=${c##*:}
    local url="http://127.0.0.1:$PORT/?fanout=$fan&size=$size&key=$CHECK_KEY"
    local meta; meta=$(curl -sS -m 10 -o "$f" -w '%{http_code} %{content_type}' "$url") || die "$s: $url: no answer"
    [[ $meta == "200 application/octet-stream"* ]] || die "$s: $url: status and type '$meta' (expected 200 application/octet-stream)"
    python3 bench/peers_report.py check "$f" "$fan" "$size" $CHECK_KEY || die "$s: $url: WRONG BODY"
  done
  # a random key: the length is all that can be checked
  local n; n=$(curl -sS -m 10 -o /dev/null -w '%{size_download}' "http://127.0.0.1:$PORT/?fanout=3&size=small")
  [[ $n == 300 ]] || die "$s: random key, fanout 3: $n bytes (expected 300)"
  stop "$SERVER_PID"; SERVER_PID=""
  log "$s answers correctly: $(cat "$WORK/ready-${s//\//-}")"
}
cpu_ticks() { # pid: its user + system CPU time so far, in clock ticks (/proc/PID/stat fields 14 and 15)
  local f; f=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  f=${f##*) }; set -- $f; echo $(( ${12} + ${13} )); }
shard_ticks() { # the 20 redis-server shards' CPU time so far, together
  local t=0 p; for p in "${SHARD_PIDS[@]}"; do t=$(( t + $(cpu_ticks "$p") )); done; echo $t; }
run_one() { # repeat cell system
  local fan size conns; IFS=: read -r fan size conns <<<"$2"
  local tag="r$1-$fan-$size-$conns-${3//\//-}"
  start "$3" "$OUT/runs/$tag.log"
  local url="http://127.0.0.1:$PORT/?fanout=$fan&size=$size"
  local wt=$((conns < WRK_THREADS ? conns : WRK_THREADS))
  "${PIN_LOAD[@]}" wrk -t$wt -c"$conns" -d"${WARMUP}s" "$url" > "$OUT/runs/$tag.warmup.txt" 2>&1 || true
  # the profiler's options reach it through jcmd's parser, which splits at '=' unless the string is quoted
  [[ -z $PROFILE ]] || "$JCMD" "$SERVER_PID" JVMTI.agent_load "$ASYNC_PROFILER" '"start,event=cpu,interval=997us"' \
    > "$OUT/runs/$tag.profiler.txt" 2>&1 || die "--profile: cannot attach async-profiler to $3 (see $OUT/runs/$tag.profiler.txt)"
  local cpu0 shards0; cpu0=$(cpu_ticks "$SERVER_PID"); shards0=$(shard_ticks)
  "${PIN_LOAD[@]}" wrk -t$wt -c"$conns" -d"${DURATION}s" --latency "$url" > "$OUT/runs/$tag.wrk.txt" 2>&1 || true
  echo $(( $(cpu_ticks "$SERVER_PID") - cpu0 )) "$(getconf CLK_TCK)" > "$OUT/runs/$tag.cpu"
  echo $(( $(shard_ticks) - shards0 )) "$(getconf CLK_TCK)" > "$OUT/runs/$tag.shardcpu"
  [[ -z $PROFILE ]] || "$JCMD" "$SERVER_PID" JVMTI.agent_load "$ASYNC_PROFILER" "\"stop,collapsed,file=$(realpath "$OUT/runs")/$tag.collapsed\"" \
    >> "$OUT/runs/$tag.profiler.txt" 2>&1 || die "--profile: cannot stop async-profiler in $3 (see $OUT/runs/$tag.profiler.txt)"
  stop "$SERVER_PID"; SERVER_PID=""
  python3 bench/peers_report.py row "$1" "$2" "$3" "$OUT/runs/$tag.wrk.txt" "$OUT/runs/$tag.cpu" "$OUT/runs/$tag.warmup.txt" "$OUT/runs/$tag.shardcpu" >> "$OUT/raw.csv"
  log "repeat $1 cell $2 $3: $(tail -1 "$OUT/raw.csv" | cut -d, -f4-) (req/s,p50,p99,errors,server CPU µs/request,warm-up req/s,shards' CPU µs/request)"
}

admin_put() { # QUERY: PUT /admin/knobs?QUERY on the admin listener, the answer on stdout. bash's own
  # /dev/tcp, no curl: it starts no process on the machine at a window's start
  local line=""
  exec 4<>"/dev/tcp/127.0.0.1/$ADMIN_PORT" || return 1
  printf 'PUT /admin/knobs?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' "$1" >&4
  while IFS= read -r -t 5 line <&4 || [[ -n $line ]]; do printf '%s\n' "$line"; line=""; done
  exec 4<&-
}
kernel_script() { # server-pid measure-from-s measure-for-s: the bpftrace program of --kernel-stages
  # (tracepoints only: this kind of kernel has no kprobes or BTF). Per-request times on the kernel's
  # side of the server, in µs, linear buckets of 25 µs; figures cleared when the generator's measured
  # window starts (counted from the attach, so within about a second), exit at its end
  local h='lhist($us, 0, 20000, 25)'
  cat <<BT
tracepoint:tcp:tcp_probe { @lport[args->skaddr] = args->sport; @rport[args->skaddr] = args->dport; }
tracepoint:sock:sk_data_ready { if (@t[args->skaddr] == 0) { @t[args->skaddr] = nsecs; } }
tracepoint:sock:sock_recv_length /args->ret > 0/ {
  \$t = @t[args->sk];
  if (\$t != 0) {
    \$us = (nsecs - \$t) / 1000;
    if (pid == $1) {
      if (@lport[args->sk] == $PORT) {
        @admit_us = $h;
        if (@req[args->sk] == 0) { @req[args->sk] = \$t; }
      } else if (@rport[args->sk] >= $REDIS_BASE_PORT && @rport[args->sk] < $((REDIS_BASE_PORT + SHARDS))) {
        @shard_read_us = $h;
      }
    } else if (@rport[args->sk] == $PORT) {
      @client_read_us = $h;
      \$s = @sent[@lport[args->sk]];
      if (\$s != 0) { \$us = (nsecs - \$s) / 1000; @send_to_client_us = $h; delete(@sent[@lport[args->sk]]); }
    }
    delete(@t[args->sk]);
  }
}
tracepoint:sock:sock_send_length /pid == $1 && args->ret > 0 && @lport[args->sk] == $PORT/ {
  \$a = @req[args->sk];
  if (\$a != 0) {
    \$us = (nsecs - \$a) / 1000; @residence_us = $h; @first_send_bytes = hist(args->ret);
    delete(@req[args->sk]); @sent[@rport[args->sk]] = nsecs;
  } else { @more_sends = count(); }
}
tracepoint:sched:sched_switch {
  if (pid == $1) {
    @tid[args->prev_pid] = 1;
    if (args->prev_state == 0) { @preempted[args->prev_pid] = nsecs; }
  }
  \$p = @preempted[args->next_pid];
  if (\$p != 0) { \$us = (nsecs - \$p) / 1000; @preempted_us = $h; delete(@preempted[args->next_pid]); }
  \$w = @woken[args->next_pid];
  if (\$w != 0) { \$us = (nsecs - \$w) / 1000; @wakeup_us = $h; delete(@woken[args->next_pid]); }
  if (cpu == 0 && @tid[args->prev_pid] && args->prev_state == 0) { @preempted_by[args->next_comm] = count(); }
}
tracepoint:sched:sched_wakeup /@tid[args->pid]/ { @woken[args->pid] = nsecs; }
interval:s:1 {
  @secs = @secs + 1;
  if (@secs == $2) { clear(@admit_us); clear(@shard_read_us); clear(@client_read_us); clear(@send_to_client_us);
    clear(@residence_us); clear(@first_send_bytes); clear(@more_sends); clear(@preempted_us); clear(@wakeup_us);
    clear(@preempted_by); printf("measuring\\n"); }
  if (@secs == $2 + $3) { exit(); }
}
END { clear(@t); clear(@req); clear(@sent); clear(@lport); clear(@rport); clear(@tid); clear(@preempted); clear(@woken); clear(@secs); }
BT
}
open_one() { # repeat cell system rate
  local fan size conns; IFS=: read -r fan size conns <<<"$2"
  local tag="open-r$1-$fan-$size-${3//\//-}"
  # the generator reports a p99 only from 10,000 samples on (p99.9 from 100,000): run long enough for the p99
  local secs=$(( (12000 + $4 - 1) / $4 )); (( secs > DURATION )) || secs=$DURATION
  local traced=""; [[ -n $TRACE && $3 == doubleface* ]] && traced=1
  start "$3" "$OUT/runs/$tag.log" $traced
  # a fresh JVM serves less than the open-loop rate in its first seconds, and a backlog built then
  # may not drain within an open-loop warm-up: warm it up closed loop first (wrk, discarded), as
  # the closed-loop runs do, then the generator's own warm-up at the rate
  local warmer=""
  if [[ -n $traced ]]; then
    # the admin listener shares the I/O loop, and Netty's pipeline code, with the data path: its first
    # connections deoptimize that code (handler types and a connection close it never saw), a stall
    # of several ms each until the JIT stops trapping there (17-19 ms p99 in a window's first second
    # when the second admin request fell at its start; docs/tracing.md). So tracing goes on, and the
    # admin path is used a dozen times, during the closed-loop warm-up: none of that falls in the
    # generator's run
    # (the same request as the reset's below, byte for byte, but for the knob)
    ( sleep 1; admin_put trace-stages=all
      for _ in $(seq $(( WARMUP / 2 - 1 ))); do sleep 2; admin_put trace-stages=all > /dev/null; done
    ) > "$OUT/runs/$tag.trace-on.txt" 2>&1 &
    warmer=$!
  fi
  taskset -c 1 wrk -t1 -c"$conns" -d"${WARMUP}s" "http://127.0.0.1:$PORT/?fanout=$fan&size=$size" \
    > "$OUT/runs/$tag.warmup.txt" 2>&1 || true
  [[ -z $warmer ]] || wait "$warmer" || true
  local gen=(taskset -c 1 "$JAVA" -XX:TieredStopAtLevel=1 -jar "$WORK/loadgen.jar" load --target "http://127.0.0.1:$PORT"
    --url "/?fanout=$fan&size=$size" --rate "$4" --warmup "${OPEN_WARMUP}s" --duration "${secs}s" --timeout 10s
    --seed "$1" --json)
  if [[ -z $traced ]]; then
    local kpid=""
    if [[ -n $KSTAGES ]]; then
      # pinned with the generator and the shards: CPU 0 stays the server's
      kernel_script "$SERVER_PID" "$OPEN_WARMUP" "$secs" > "$OUT/runs/$tag.kernel.bt"
      taskset -c 1 bpftrace "$OUT/runs/$tag.kernel.bt" > "$OUT/runs/$tag.kernel.txt" 2>&1 &
      kpid=$!
      for _ in $(seq 300); do grep -q '^Attaching' "$OUT/runs/$tag.kernel.txt" && break; sleep 0.1; done
      grep -q '^Attaching' "$OUT/runs/$tag.kernel.txt" || die "bpftrace did not attach (see $OUT/runs/$tag.kernel.txt)"
    fi
    "${gen[@]}" --quiet --hlog "$OUT/runs/$tag.hlog" > "$OUT/runs/$tag.json" 2> "$OUT/runs/$tag.err" || true
    if [[ -n $kpid ]]; then
      timeout 30 tail --pid="$kpid" -f /dev/null || kill -INT "$kpid" 2>/dev/null || true
      wait "$kpid" || true
      python3 bench/peers_report.py kernelrows "$1" "$2" "$3" "$4" "$OUT/runs/$tag.kernel.txt" >> "$OUT/kernel.csv"
    fi
  else
    # the figures reset at the generator's first line of the measured window (within a second of the
    # window's start), so every traced request is a measured one; the stats read when it is done. The
    # reset starts no process (admin_put)
    : > "$OUT/runs/$tag.err"
    ( exec 3< <(timeout $(( OPEN_WARMUP + secs + 60 )) tail -n +1 -f "$OUT/runs/$tag.err")
      grep -q -m1 '^load .* measure ' <&3 && admin_put reset-stages=true ) > "$OUT/runs/$tag.reset.txt" 2>&1 &
    local tracer=$!
    "${gen[@]}" --hlog "$OUT/runs/$tag.hlog" > "$OUT/runs/$tag.json" 2>> "$OUT/runs/$tag.err" || true
    wait "$tracer" || true
    grep -q '"trace_stages":"all"' "$OUT/runs/$tag.trace-on.txt" && grep -q '"trace_stages":"all"' "$OUT/runs/$tag.reset.txt" \
      || die "$3: tracing not switched on and reset (see $OUT/runs/$tag.trace-on.txt and .reset.txt)"
    curl -sS -m 10 "http://127.0.0.1:$ADMIN_PORT/admin/stats" > "$OUT/runs/$tag.stages.json" || die "$3: no /admin/stats"
    python3 bench/peers_report.py stagerows "$1" "$2" "$3" "$4" "$OUT/runs/$tag.stages.json" >> "$OUT/stages.csv"
  fi
  stop "$SERVER_PID"; SERVER_PID=""
  python3 bench/peers_report.py openrow "$1" "$2" "$3" "$4" "$OUT/runs/$tag.json" >> "$OUT/open.csv"
  log "open loop, repeat $1 cell $2 $3 at $4/s: $(tail -1 "$OUT/open.csv" | cut -d, -f5-) (achieved,p50,p99,p999,errors,send_lag_p99)"
}

# --- run ----------------------------------------------------------------------------------------
for s in "${RUN_SYSTEMS[@]}"; do check "$s"; done
n=${#RUN_SYSTEMS[@]}
if [[ -z $OPEN_FROM ]]; then
  python3 bench/peers_report.py header > "$OUT/raw.csv"
  total=$(( REPEATS * $(wc -w <<<"$CELLS") * n ))
  log "$total runs of ${WARMUP}+${DURATION} s (about $(( total * (WARMUP + DURATION + 3) / 60 + 1 )) min) -> $OUT"
  turn=0
  for r in $(seq "$REPEATS"); do
    for cell in $CELLS; do
      for ((i = 0; i < n; i++)); do run_one "$r" "$cell" "${RUN_SYSTEMS[$(( (i + turn) % n ))]}"; done
      turn=$((turn + 1))
    done
  done
else
  cp "$OPEN_FROM/raw.csv" "$OUT/raw.csv"
  log "closed-loop capacities from $OPEN_FROM/raw.csv (no closed-loop runs)"
fi
if [[ -n $OPEN_FRACTION ]]; then
  python3 bench/peers_report.py openheader > "$OUT/open.csv"
  [[ -z $TRACE ]] || python3 bench/peers_report.py stageheader > "$OUT/stages.csv"
  [[ -z $KSTAGES ]] || python3 bench/peers_report.py kernelheader > "$OUT/kernel.csv"
  total=$(( REPEATS * $(wc -w <<<"$CELLS") * n ))
  log "open loop: $total runs of ${WARMUP}+${OPEN_WARMUP}+${DURATION} s (wrk warm-up, generator warm-up, window) at $OPEN_FRACTION x the slowest system's capacity per cell"
  turn=0
  for r in $(seq "$REPEATS"); do
    for cell in $CELLS; do
      rate=$(python3 bench/peers_report.py openrate "$OUT/raw.csv" "$cell" "$OPEN_FRACTION" "${RUN_SYSTEMS[*]}") \
        || die "no closed-loop capacity for cell $cell of every system in $OUT/raw.csv"
      for ((i = 0; i < n; i++)); do open_one "$r" "$cell" "${RUN_SYSTEMS[$(( (i + turn) % n ))]}" "$rate"; done
      turn=$((turn + 1))
    done
  done
fi

# --- environment and report ---------------------------------------------------------------------
python3 - "$OUT" "$WORK" "$JAVA" "$REPEATS" "$DURATION" "$WARMUP" "$CELLS" "${RUN_SYSTEMS[*]}" "${JAVA_OPTS:-}" "$OPEN_FRACTION" "$OPEN_FROM" "$OPEN_WARMUP" "$LAYOUT" "$IO_THREADS" <<'PY'
import json, os, platform, re, subprocess, sys
out, work, java, repeats, duration, warmup, cells, systems, java_opts, open_fraction, open_from, open_warmup, layout, io = sys.argv[1:15]
def run(*c):
    p = subprocess.run(c, capture_output=True, text=True); return (p.stdout or p.stderr).strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
pom = open("bench/peers/pom.xml").read()
versions = dict(re.findall(r"<([a-z0-9.-]+\.version)>([^<]+)<", pom))
ready = {f[len("ready-"):].replace("-", "/", 1) if f.startswith("ready-doubleface-") else f[len("ready-"):]:
         open(os.path.join(work, f)).read().strip() for f in os.listdir(work) if f.startswith("ready-")}
json.dump({"script": "bench/peers.sh", "git_commit": run("git", "rev-parse", "HEAD"), "dirty": bool(run("git", "status", "--porcelain")),
           "java": run(java, "-version").splitlines()[0], "java_opts": java_opts, "kernel": platform.release(),
           "cpu_model": cpu, "cpus": os.cpu_count(), "wrk": run("wrk", "-v").splitlines()[0],
           "redis_server": run("redis-server", "--version"),
           "layout": layout,
           "pinning": {"server": "cpu 0, 1 I/O thread", "redis_shards": "cpu 1", "wrk": "cpu 1 (with the shards)"}
                      if layout == "pinned" else
                      {"server": "unpinned, %s I/O threads" % io, "redis_shards": "unpinned", "wrk": "unpinned, %s threads" % io},
           "systems": systems.split(), "peer_versions_pom": versions, "peer_ready_lines": ready,
           "cells": cells.split(), "repeats": int(repeats), "duration_s": int(duration), "warmup_s": int(warmup),
           "shards": 20, "keys": 1000, "value_bytes": {"small": 100, "large": 20000},
           "open_loop": {"fraction": float(open_fraction), "capacities_from": open_from or out,
                         "generator_warmup_s": int(open_warmup),
                         "generator": "doubleface load (Poisson, latency from the intended send time; C1 only, -XX:TieredStopAtLevel=1), CPU 1"}
                        if open_fraction else None},
          open(os.path.join(out, "environment.json"), "w"), indent=2)
PY
python3 bench/peers_report.py report "$OUT"
[[ -z $PROFILE ]] || python3 bench/profile_summary.py "$OUT" || log "warning: bench/profile_summary.py failed"
if [[ $(realpath "$OUT") == "$ROOT"/docs/results/* ]]; then
  # keep docs/results light (docs/results/README.md): the logs of runs/ go into raw.tar.xz, the run into the index
  python3 bench/results-pack.py "$OUT" >&2 || log "warning: bench/results-pack.py failed; pack $OUT before committing it"
fi
log "report: $OUT/report.md"
