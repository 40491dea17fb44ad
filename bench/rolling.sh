#!/usr/bin/env bash
# Rolling restarts of several mid-tier replicas behind HAProxy, under open-loop load, with every answer
# checked: does a client lose a request? (docs/reliability.md, "Rolling restarts behind a balancer")
#
#   bench/rolling.sh [--jar JAR] [--replicas 2|3] [--rate R] [--before S] [--after S] [--slot S] [--settle S]
#                    [--warmup S] [--kill-down S] [--scenarios rolling,kill,kill-noretry] [--config NAME] [--slow SPEC]
#                    [--serve-args "ARGS"] [--drain-timeout D] [--check ready|health]
#                    [--retry-on "KEYWORDS"] [--slowstart D] [--client-timeout D] [--url TEMPLATE] [--keys N] [--base-port P]
#                    [--out DIR] [--keep-log] [--quick]
#
# Per scenario, on 127.0.0.1 only, from nothing: a KV leaf of 20 shards (`leaf kv`), --replicas mid-tiers
# (`serve ycsb --shards kv://… --config NAME --io-threads 1 --drain-timeout D`, each its own port and admin
# port), HAProxy 2.6 in front (roundrobin; health check GET /ready on each replica's admin port, or GET
# /health on its service port with --check health; `retries 3`, `option redispatch 1`, `retry-on
# conn-failure empty-response response-timeout` for GET/HEAD only; keep-alive to the replicas, `http-reuse
# safe`), then the project's open-loop generator (`load`, Poisson arrivals at --rate) through HAProxy:
# --warmup s of warm-up load, then the measured run: --before s, the action, --after s.
#   rolling       each replica in turn: SIGTERM, wait for its exit (it drains), start a new one on the same
#                 ports, wait until its /ready answers 200 and HAProxy has it UP, --settle s, next.
#   kill          replica m1 gets SIGKILL; --kill-down s later a new one is started, as above.
#   kill-noretry  the same with `retry-on conn-failure` (HAProxy's default): what the in-flight requests
#                 of a killed replica cost without layer-7 retries.
# Every answer is checked: HAProxy waits for each response body and logs its SHA-1, which is compared
# with the answer of a reference mid-tier (its own embedded shards, not behind HAProxy) for that key.
# Results per scenario: summary.json, seconds.csv (answers per second per replica), notable.log (every
# answer that was not a 200 with the right body on the first try), cpu.csv (each second: the machine's CPU
# used by this script's processes and by everything else), events.txt, runs/ (process logs, timeline.csv:
# 100-ms samples of HAProxy's view and each /ready, closes.txt: tcpdump's FINs and RSTs); report.md over
# all scenarios.
#
# Options (defaults in brackets):
#   --jar JAR           the CLI jar [$DOUBLEFACE_JAR, else cli/target/doubleface.jar]; never built here
#   --replicas N        mid-tier replicas, 2 or 3 [3]
#   --rate R            offered req/s [1000]; --url TEMPLATE ['/query?fanout=5&size=small&key={key}'], --keys N [1000]
#   --warmup S          warm-up load through HAProxy before the measured run, rising in 4 steps from a tenth of
#                       --rate (its answers are checked too; its latency is not measured) [10]
#   --before S, --after S   measured seconds before the first signal and after the last replica is back [12, 12]
#                       (p99 is given for a phase of 10,000 requests or more)
#   --slot S            time budget per replica (the load runs before + slots + after) [10]
#   --settle S          pause after a replica is UP before the next signal [3]
#   --kill-down S       how long the killed replica stays down [10]
#   --config NAME       threading configuration of the mid-tiers [doubleface]; --serve-args "ARGS" more options
#   --slow SPEC|off     the leaf's --slow SHARD:FRACTION:DELAY [0:1:50ms: shard 0 answers 50 ms late, so the quarter
#                       of the fanout-5 requests that read it are in flight 50 ms: every replica has some in
#                       flight when it gets its signal (about rate / replicas x 12.5 ms of them)]
#   --drain-timeout D   the mid-tiers' --drain-timeout [10s]
#   --check ready|health   HAProxy's health check: admin GET /ready or service GET /health [ready]
#   --retry-on "K …"    HAProxy retry-on for the rolling and kill scenarios [conn-failure empty-response response-timeout]
#   --slowstart D       HAProxy slowstart of a replica that comes back (0 = off) [0]
#   --client-timeout D  HAProxy's timeout client, http-request and http-keep-alive (the generator's side) [300s]
#   --base-port P       ports: shards P+1..P+20, replica i service P+50+i and admin P+60+i, HAProxy P+80,
#                       its stats P+81, the reference mid-tier P+90 [18600]
#   --out DIR           [docs/results/rolling-<UTC date>; with --quick a temporary directory]
#   --keep-log          keep HAProxy's full per-answer log (large) instead of notable.log only
#   --quick             CI size: 2 replicas, 400 req/s, warm-up 3 s, before/after 3 s, scenarios rolling;
#                       about 45 s. Exits 1 if the generator counted an error, or HAProxy's log has a failed
#                       answer after the warm-up or a wrong answer anywhere.
# Environment: DOUBLEFACE_LOAD_LOCK=FILE takes that lock (flock, exclusive) around each scenario (every
# process of the scenario runs while it is held: about 1 min each); unset, no lock. Do not also run the
# script under `flock FILE` on the same file: it would wait for itself. JAVA_HOME (a JDK >= 21).
# Needs haproxy (apt-get install haproxy), python3, curl, ss; tcpdump if present (records every FIN and RST). Exit: 0 done (see the report), 1 a failure
# of the run itself or (--quick) a failed or wrong answer, 2 usage.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JAR=${DOUBLEFACE_JAR:-$ROOT/cli/target/doubleface.jar}
REPLICAS=3; RATE=1000; WARMUP=10; BEFORE=12; AFTER=12; SLOT=10; SETTLE=3; KILL_DOWN=10
SCENARIOS=rolling,kill,kill-noretry; CONFIG=doubleface; SERVE_ARGS=""; DRAIN=10s; CHECK=ready
RETRY_ON="conn-failure empty-response response-timeout"; SLOWSTART=0; CLIENT_TIMEOUT=300s; SLOW=0:1:50ms; URL='/query?fanout=5&size=small&key={key}'
KEYS=1000; BASE=18600; OUT=""; KEEP_LOG=""; QUICK=""; ARGS="$*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --jar) JAR=$2; shift 2;; --replicas) REPLICAS=$2; shift 2;; --rate) RATE=$2; shift 2;;
    --warmup) WARMUP=$2; shift 2;; --before) BEFORE=$2; shift 2;; --after) AFTER=$2; shift 2;;
    --slot) SLOT=$2; shift 2;; --settle) SETTLE=$2; shift 2;; --kill-down) KILL_DOWN=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;; --config) CONFIG=$2; shift 2;; --serve-args) SERVE_ARGS=$2; shift 2;;
    --drain-timeout) DRAIN=$2; shift 2;; --check) CHECK=$2; shift 2;; --retry-on) RETRY_ON=$2; shift 2;;
    --slowstart) SLOWSTART=$2; shift 2;; --client-timeout) CLIENT_TIMEOUT=$2; shift 2;; --slow) SLOW=$2; shift 2;; --url) URL=$2; shift 2;; --keys) KEYS=$2; shift 2;;
    --base-port) BASE=$2; shift 2;; --out) OUT=$2; shift 2;; --keep-log) KEEP_LOG=--keep-log; shift;;
    --quick) QUICK=1; REPLICAS=2; RATE=400; WARMUP=3; BEFORE=3; AFTER=3; SLOT=8; SETTLE=1; SCENARIOS=rolling; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
    *) echo "rolling.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
usage() { echo "rolling.sh: $*" >&2; exit 2; }
[[ $REPLICAS =~ ^[23]$ ]] || usage "--replicas must be 2 or 3"
[[ $CHECK == ready || $CHECK == health ]] || usage "--check must be ready or health"
for n in RATE WARMUP BEFORE AFTER SLOT SETTLE KILL_DOWN KEYS BASE; do [[ ${!n} =~ ^[0-9]+$ ]] || usage "--${n,,} must be a whole number"; done
[[ $URL == *"{key}"* ]] || usage "--url must contain {key}"
IFS=, read -ra SCEN <<< "$SCENARIOS"
for s in "${SCEN[@]}"; do [[ $s =~ ^(rolling|kill|kill-noretry)$ ]] || usage "unknown scenario $s"; done
[[ -f $JAR ]] || usage "no jar at $JAR (build it: ./mvnw -B -DskipTests install, or pass --jar)"
JAR=$(realpath "$JAR")
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ -x $JAVA ]] || JAVA=$(command -v java) || usage "no java (set JAVA_HOME)"
for t in haproxy python3 curl ss timeout flock; do command -v $t >/dev/null || { echo "rolling.sh: $t not found (apt-get install haproxy python3 curl iproute2 coreutils util-linux)" >&2; exit 1; }; done
if [[ -z $OUT ]]; then
  if [[ -n $QUICK ]]; then OUT=$(mktemp -d /tmp/rolling-quick.XXXXXX); else OUT=$ROOT/docs/results/rolling-$(date -u +%Y%m%d); fi
fi
mkdir -p "$OUT"; OUT=$(realpath "$OUT")
# the launcher's JVM flags (./doubleface), and C1 only for the generator as the launcher gives it
JVM=(-Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC --sun-misc-unsafe-memory-access=allow)
SHARD_FIRST=$((BASE + 1)); SHARD_LAST=$((BASE + 20)); HA=$((BASE + 80)); STATS=$((BASE + 81)); REF=$((BASE + 90))
svc() { echo $((BASE + 50 + $1)); }
adm() { echo $((BASE + 60 + $1)); }

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "rolling.sh: error: $*"; exit 1; }
now() { date +%s%3N; }
seconds() { # a duration (500ms, 10s, 2m) in whole seconds, rounded up
  case $1 in *ms) echo $(( (${1%ms} + 999) / 1000 ));; *s) echo "${1%s}";; *m) echo $(( ${1%m} * 60 ));; *) echo "$1";; esac
}

# --- processes: each started under `timeout` (a bound even if this script is killed), stopped on exit
declare -A WRAP=()   # name -> pid of the timeout wrapper
declare -A JPID=()   # name -> pid of the process itself (replicas: from their ready file)
BOUND=900            # seconds any process of a scenario may live
start() { # name logfile command...
  local name=$1 logf=$2; shift 2
  timeout -k 5 "$BOUND" "$@" > "$logf" 2>&1 9>&- &
  WRAP[$name]=$!
  JPID[$name]=""
}
alive() { kill -0 "${WRAP[$1]}" 2>/dev/null; }
stop() { # name [signal]: signal the process (not its wrapper), wait up to 15 s, then SIGKILL
  local name=$1 sig=${2:-TERM} w=${WRAP[$1]:-} p=${JPID[$1]:-}
  [[ -n $w ]] || return 0
  [[ -n $p ]] || p=$(pgrep -P "$w" | head -1)
  if [[ -n $p ]]; then kill -s "$sig" "$p" 2>/dev/null || true; else kill -s "$sig" "$w" 2>/dev/null || true; fi
  for _ in $(seq 150); do alive "$name" || break; sleep 0.1; done
  if alive "$name"; then
    log "$name did not stop within 15 s: SIGKILL"
    [[ -n $p ]] && kill -KILL "$p" 2>/dev/null || true
    kill -KILL "$w" 2>/dev/null || true
  fi
  wait "$w" 2>/dev/null || true
  unset "WRAP[$name]"
}
stop_all() {
  local n
  for n in load warm sampler; do [[ -n ${WRAP[$n]:-} ]] && stop "$n"; done
  for n in "${!WRAP[@]}"; do stop "$n"; done
}
cleanup() { stop_all; lock_release; }
trap cleanup EXIT
trap 'exit 130' INT TERM

LOCKED=""
lock_take() {
  [[ -n ${DOUBLEFACE_LOAD_LOCK:-} ]] || return 0
  exec 9>>"$DOUBLEFACE_LOAD_LOCK"
  log "waiting for the load lock $DOUBLEFACE_LOAD_LOCK"
  flock -w 1800 9 || die "the load lock $DOUBLEFACE_LOAD_LOCK was held for 30 min"
  LOCKED=1
}
lock_release() { if [[ -n $LOCKED ]]; then flock -u 9; exec 9>&-; LOCKED=""; fi; }

port_free() { [[ -z $(ss -Hltn "sport = :$1") ]]; }
check_ports() {
  local p bad=()
  for p in $(seq "$SHARD_FIRST" "$SHARD_LAST") "$HA" "$STATS" "$REF" $(for i in $(seq "$REPLICAS"); do svc "$i"; adm "$i"; done); do
    port_free "$p" || bad+=("$p")
  done
  [[ ${#bad[@]} == 0 ]] || die "ports in use on this machine: ${bad[*]} (choose another --base-port)"
}
wait_for() { # seconds command...: poll every 100 ms
  local secs=$1 i; shift
  for ((i = 0; i < secs * 10; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}
ready_200() { [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$(adm "$1")/ready") == 200 ]]; }
ha_status() { curl -s --max-time 1 "http://127.0.0.1:$STATS/stats;csv" | awk -F, -v s="m$1" '$1 == "mid" && $2 == s { print $18 }'; }
ha_up() { [[ $(ha_status "$1") == UP ]]; }
event() { echo "$(now) $*" >> "$SDIR/events.txt"; }
cpu_mark() { # tag: the CPU this script's processes used so far (`times`, in this shell: they are its children) and the machine's
  times > "$SDIR/runs/cpu-$1.txt"
  head -1 /proc/stat >> "$SDIR/runs/cpu-$1.txt"
  echo "$(now)" >> "$SDIR/runs/cpu-$1.txt"
}

start_replica() { # i: a mid-tier on its ports; returns when its /ready answers 200
  local i=$1 n=m$1 gen=$2 rf
  port_free "$(svc "$i")" || die "port $(svc "$i") of $n still in use"
  port_free "$(adm "$i")" || die "admin port $(adm "$i") of $n still in use"
  rf=$SDIR/runs/$n-$gen.ready.json
  # shellcheck disable=SC2086 # SERVE_ARGS is a list of options
  start "$n" "$SDIR/runs/$n-$gen.log" "$JAVA" "${JVM[@]}" -jar "$JAR" serve ycsb --shards "kv://127.0.0.1:$SHARD_FIRST-$SHARD_LAST" \
    --port "$(svc "$i")" --admin-port "$(adm "$i")" --io-threads 1 --config "$CONFIG" --drain-timeout "$DRAIN" \
    --ready-file "$rf" $SERVE_ARGS
  event started "$n" "generation $gen"
  wait_for 60 test -s "$rf" || die "$n did not start within 60 s: $(tail -5 "$SDIR/runs/$n-$gen.log")"
  JPID[$n]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$rf")
  wait_for 30 ready_200 "$i" || die "$n: /ready not 200 within 30 s"
  event ready "$n"
}

haproxy_config() { # retry-on keywords
  local i chk
  if [[ $CHECK == ready ]]; then chk="option httpchk GET /ready"; else chk="option httpchk GET /health"; fi
  cat <<EOF
# written by bench/rolling.sh
global
    log stdout format raw local0 info
    nbthread 1
    maxconn 4096
    tune.bufsize $BUFSIZE
defaults
    mode http
    log global
    timeout connect 1s
    # longer than a scenario: HAProxy never closes a generator's connection (its own idle-close race
    # with a client is not what is measured here; see docs/reliability.md)
    timeout client $CLIENT_TIMEOUT
    timeout http-request $CLIENT_TIMEOUT
    timeout http-keep-alive $CLIENT_TIMEOUT
    timeout server 3s
    timeout queue 3s
    timeout check 2s
    retries 3
    option redispatch 1
    retry-on $1
    http-reuse safe
frontend fe
    bind 127.0.0.1:$HA
    # one line per answer: accept time of the connection (epoch ms), Th Ti (ms: the request began at
    # accept + Th + Ti), client, replica, retries (+ = redispatched), status, bytes, Tw Tc Tr Ta (ms),
    # termination state, method, URI, SHA-1 of the body as sent to the client
    log-format "%Ts%ms %Th %Ti %ci:%cp %s %rc %ST %B %Tw %Tc %Tr %Ta %tsc %HM %HU %[var(txn.bh)]"
    default_backend mid
backend mid
    balance roundrobin
    $chk
    http-check expect status 200
    # layer-7 retries (anything past conn-failure) only for requests that may be sent twice
    http-request disable-l7-retry unless METH_GET || METH_HEAD
    http-response wait-for-body time 2s
    http-response set-var(txn.bh) res.body,sha1,hex
    default-server inter 200ms fastinter 100ms downinter 200ms fall 2 rise 2$( [[ $SLOWSTART != 0 ]] && echo " slowstart $SLOWSTART")
EOF
  for i in $(seq "$REPLICAS"); do
    if [[ $CHECK == ready ]]; then echo "    server m$i 127.0.0.1:$(svc "$i") check port $(adm "$i")"
    else echo "    server m$i 127.0.0.1:$(svc "$i") check"; fi
  done
  cat <<EOF
listen stats
    bind 127.0.0.1:$STATS
    no log
    stats enable
    stats uri /stats
EOF
}

# --- the reference answers (a mid-tier over its own embedded shards, not behind HAProxy)
REFS=$OUT/refs.json
make_refs() {
  [[ -s $REFS ]] && return 0
  port_free "$REF" || die "port $REF in use"
  start ref "$OUT/reference.log" "$JAVA" "${JVM[@]}" -jar "$JAR" serve ycsb --port "$REF" --admin-port -1 --embedded-shards 20 \
    --config "$CONFIG"
  wait_for 60 grep -qs "listening on" "$OUT/reference.log" || die "reference mid-tier did not start: $(tail -5 "$OUT/reference.log")"
  python3 "$ROOT/bench/rolling.py" refs --target "http://127.0.0.1:$REF" --url "$URL" --keys "$KEYS" --out "$REFS" >&2
  stop ref
}

scenario() { # name
  local name=$1 retry=$RETRY_ON measured i seed desc
  [[ $name == kill-noretry ]] && retry="conn-failure"
  SDIR=$OUT/$name; GEN=()
  rm -rf "$SDIR"; mkdir -p "$SDIR/runs"
  lock_take
  check_ports
  make_refs
  cp "$REFS" "$SDIR/refs.json"
  cpu_mark start
  BUFSIZE=$(python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["max_length"]; b=16384
while b < 2 * n + 4096: b *= 2
print(b)' "$REFS")
  log "$name: a KV leaf of 20 shards, $REPLICAS replicas ($CONFIG), HAProxy (check $CHECK, retry-on $retry)"
  local slow=(); [[ $SLOW == off ]] || slow=(--slow "$SLOW")
  start leaf "$SDIR/runs/leaf.log" "$JAVA" "${JVM[@]}" -jar "$JAR" leaf kv --shards 20 --base-port "$SHARD_FIRST" "${slow[@]}"
  wait_for 60 grep -qs "listening on" "$SDIR/runs/leaf.log" || die "leaf did not start: $(tail -5 "$SDIR/runs/leaf.log")"
  for i in $(seq "$REPLICAS"); do start_replica "$i" 1; done
  haproxy_config "$retry" > "$SDIR/haproxy.cfg"
  haproxy -c -q -f "$SDIR/haproxy.cfg" || die "haproxy refused $SDIR/haproxy.cfg"
  if command -v tcpdump > /dev/null; then # who closes which connection, when: every FIN and RST on HAProxy's port and the replicas'
    start tcpdump "$SDIR/runs/closes.txt" sh -c "exec tcpdump -i lo -n -tt -l -Z root 'tcp and (tcp[tcpflags] & (tcp-fin|tcp-rst) != 0) and (port $HA or portrange $(svc 1)-$(svc "$REPLICAS"))' 2> '$SDIR/runs/tcpdump.log'"
    wait_for 10 grep -qs "listening on" "$SDIR/runs/tcpdump.log" || die "tcpdump did not start: $(cat "$SDIR/runs/tcpdump.log")"
  else
    log "no tcpdump: the connection closes are not recorded (apt-get install tcpdump)"
  fi
  start haproxy "$SDIR/haproxy.log" haproxy -db -f "$SDIR/haproxy.cfg"
  for i in $(seq "$REPLICAS"); do wait_for 20 ha_up "$i" || die "HAProxy does not see m$i UP: $(ha_status "$i")"; done
  start sampler "$SDIR/runs/sampler.log" python3 "$ROOT/bench/rolling.py" sample --stats "http://127.0.0.1:$STATS/stats" \
    --admins "$(for i in $(seq "$REPLICAS"); do adm "$i"; done | paste -sd,)" --out "$SDIR/runs/timeline.csv" \
    --stop "$SDIR/runs/stop-sampler" --max-seconds $((BOUND - 60))
  if [[ $WARMUP -gt 0 ]]; then
    local q=$(( WARMUP >= 4 ? WARMUP / 4 : 1 ))
    local steps="steps:$(( RATE / 10 > 0 ? RATE / 10 : 1 ))@${q}s,$(( RATE / 4 > 0 ? RATE / 4 : 1 ))@${q}s,$(( RATE / 2 > 0 ? RATE / 2 : 1 ))@${q}s,$RATE@$(( WARMUP - 3 * q > 0 ? WARMUP - 3 * q : 1 ))s"
    log "$name: warm-up through HAProxy, $steps (req/s@duration)"
    start warm "$SDIR/runs/warmup.log" "$JAVA" "${JVM[@]}" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$HA" \
      --schedule "$steps" --url "$URL" --keys "$KEYS" --warmup 0s --timeout 5s --json --quiet
    wait "${WRAP[warm]}" || die "the warm-up load failed: $(tail -5 "$SDIR/runs/warmup.log")"
    unset "WRAP[warm]"
    tail -1 "$SDIR/runs/warmup.log" > "$SDIR/warmup.json"
  fi
  if [[ $name == rolling ]]; then measured=$((BEFORE + REPLICAS * SLOT + AFTER)); else measured=$((BEFORE + KILL_DOWN + SLOT + AFTER)); fi
  seed=$(now)
  case $name in
    rolling) desc="Each of the $REPLICAS replicas in turn gets SIGTERM (it drains: --drain-timeout $DRAIN), the script waits for its exit, starts a new one on the same ports, waits until its /ready answers 200 and HAProxy has it UP, waits ${SETTLE} s, and goes on with the next.";;
    kill) desc="Replica m1 gets SIGKILL (no drain: what it had in flight dies with it); ${KILL_DOWN} s later a new one is started on its ports, as in the rolling restart.";;
    kill-noretry) desc="As kill, with HAProxy's default \`retry-on conn-failure\`: a request already sent to the killed replica is not retried.";;
  esac
  SC_NAME=$name SC_DESC=$desc SC_RETRY=$retry SC_MEASURED=$measured SC_SEED=$seed REPLICAS=$REPLICAS RATE=$RATE URL=$URL \
    KEYS=$KEYS CONFIG=$CONFIG SERVE_ARGS=$SERVE_ARGS DRAIN=$DRAIN CHECK=$CHECK SLOWSTART=$SLOWSTART WARMUP=$WARMUP \
    BEFORE=$BEFORE AFTER=$AFTER SLOT=$SLOT SETTLE=$SETTLE KILL_DOWN=$KILL_DOWN CLIENT_TIMEOUT=$CLIENT_TIMEOUT HA=$HA SLOW=$SLOW \
    REPLICA_PORTS=$(for i in $(seq "$REPLICAS"); do svc "$i"; done | paste -sd,) python3 - "$SDIR/scenario.json" <<'PY'
import json, os, sys
e = os.environ
n = lambda k: int(e[k])
json.dump({"name": e["SC_NAME"], "description": e["SC_DESC"], "replicas": n("REPLICAS"), "rate": n("RATE"), "url": e["URL"],
           "keys": n("KEYS"), "config": e["CONFIG"], "serve_args": e["SERVE_ARGS"], "drain_timeout": e["DRAIN"],
           "check": e["CHECK"], "retry_on": e["SC_RETRY"], "slowstart": e["SLOWSTART"], "warmup_s": n("WARMUP"),
           "before_s": n("BEFORE"), "after_s": n("AFTER"), "slot_s": n("SLOT"), "settle_s": n("SETTLE"),
           "kill_down_s": n("KILL_DOWN"), "measured_s": n("SC_MEASURED"), "seed": n("SC_SEED"),
           "client_timeout": e["CLIENT_TIMEOUT"], "slow_shard": e["SLOW"],
           "ports": {"haproxy": n("HA"), "replicas": [int(p) for p in e["REPLICA_PORTS"].split(",")]}}, open(sys.argv[1], "w"), indent=2)
PY
  log "$name: measured run, ${measured}s at $RATE/s (generator warm-up 3 s first)"
  start load "$SDIR/runs/load.log" "$JAVA" "${JVM[@]}" -XX:TieredStopAtLevel=1 -jar "$JAR" load --target "http://127.0.0.1:$HA" \
    --rate "$RATE" --url "$URL" --keys "$KEYS" --warmup 3s --duration "${measured}s" --timeout 5s --seed "$seed" \
    --hlog "$SDIR/load.hlog" --measure-file "$SDIR/runs/measuring" --json
  wait_for 30 test -e "$SDIR/runs/measuring" || die "the generator did not start measuring: $(tail -5 "$SDIR/runs/load.log")"
  event measuring - "generator window ${measured}s"
  sleep "$BEFORE"
  event action - "$name"
  if [[ $name == rolling ]]; then
    for i in $(seq "$REPLICAS"); do restart "$i" TERM 0; [[ $i == "$REPLICAS" ]] || sleep "$SETTLE"; done
  else
    restart 1 KILL "$KILL_DOWN"
  fi
  event all-up - ""
  wait "${WRAP[load]}" || die "the load generator failed: $(tail -5 "$SDIR/runs/load.log")"
  unset "WRAP[load]"
  event load-done - ""
  grep '^{' "$SDIR/runs/load.log" | tail -1 > "$SDIR/load.json" || die "no JSON from the load generator"
  touch "$SDIR/runs/stop-sampler"; stop sampler
  stop haproxy
  [[ -n ${WRAP[tcpdump]:-} ]] && { sleep 0.5; stop tcpdump; }
  for i in $(seq "$REPLICAS"); do stop "m$i"; done
  stop leaf
  cpu_mark end
  lock_release
  cp "$SDIR/haproxy.cfg" "$SDIR/runs/haproxy.cfg"
  python3 "$ROOT/bench/rolling.py" analyse "$SDIR" $KEEP_LOG >&2
}

GEN=()
restart() { # i signal down-seconds: signal replica i, wait for its exit, start a new one, wait until HAProxy has it UP
  local i=$1 sig=$2 down=$3 n=m$1 w rc=0 g
  g=$(( ${GEN[$i]:-1} + 1 )); GEN[$i]=$g
  log "$n: SIG$sig"
  w=${WRAP[$n]}
  event "sig${sig,,}" "$n" "pid ${JPID[$n]}"
  kill -s "$sig" "${JPID[$n]}"
  local bound=$(( $(seconds "$DRAIN") + 10 ))
  for ((k = 0; k < bound * 20; k++)); do kill -0 "$w" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$w" 2>/dev/null; then
    event exited "$n" "still running ${bound}s after SIG$sig: SIGKILL"
    kill -KILL "${JPID[$n]}" 2>/dev/null || true
  fi
  wait "$w" 2> /dev/null || rc=$?  # (bash would report a SIGKILLed job as "Killed")
  event exited "$n" "exit status $rc"
  unset "WRAP[$n]"
  sleep "$down"
  start_replica "$i" "$g"
  wait_for 30 ha_up "$i" || die "HAProxy does not see $n UP 30 s after its /ready: $(ha_status "$i")"
  event up "$n"
  log "$n: back (generation $g), UP in HAProxy"
}

cat > "$OUT/environment.json.tmp" <<EOF
{"command": "bench/rolling.sh $ARGS", "jar": "$JAR", "jar_sha256": "$(sha256sum "$JAR" | cut -c1-64)",
 "jar_modified_utc": "$(date -u -r "$JAR" +%FT%TZ)", "git_commit": "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')",
 "haproxy": "$(haproxy -v | head -1 | awk '{print $3}')", "java": "$("$JAVA" -version 2>&1 | head -1 | tr -d '"')",
 "kernel": "$(uname -r)", "cpus": $(nproc), "started_utc": "$(date -u +%FT%TZ)", "load_lock": "${DOUBLEFACE_LOAD_LOCK:-}",
 "pinning": "none (every process on any core of the machine)"}
EOF
mv "$OUT/environment.json.tmp" "$OUT/environment.json"
for s in "${SCEN[@]}"; do scenario "$s"; done
python3 "$ROOT/bench/rolling.py" report "$OUT" > /dev/null
rm -f "$OUT"/*/runs/measuring "$OUT"/*/runs/stop-sampler
log "report: $OUT/report.md"
if [[ -n $QUICK ]]; then
  python3 - "$OUT" <<'PY'
import glob, json, sys
bad = []
for f in glob.glob(sys.argv[1] + "/*/summary.json"):
    s = json.load(open(f))
    g, h = s["generator"], s["haproxy"]
    if g["errors"] or h["failed_or_wrong_after_warmup"] or h["wrong"] or not h["answers"]:
        bad.append(f"{s['scenario']['name']}: generator errors {g['errors']}, HAProxy: {h['failed_or_wrong_after_warmup']} failed "
                   f"after the warm-up, {h['wrong']} wrong, {h['answers']} answers (see {f})")
    else:
        print(f"rolling --quick {s['scenario']['name']}: {g['requests']} requests measured, {h['answers']} answers checked, "
              f"0 failed, 0 wrong ({h['failed']} failed in the warm-up on cold replicas)")
if bad:
    print("rolling --quick: FAILED: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
fi
