# Helpers shared by the bench scripts that start a leaf and a mid-tier: logging, installing a
# missing tool, stopping a process, waiting for a port. Source it: . "$ROOT/bench/lib/procs.sh"
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
# install_pkg COMMAND PACKAGE: apt-get installs PACKAGE when COMMAND is not on the PATH
install_pkg() { command -v "$1" >/dev/null 2>&1 && return 0; log "installing $2"
  (apt-get update -qq && apt-get install -y -qq "$2") >/dev/null 2>&1 || die "could not install $2"; }
# stop PID: TERM, up to 5 s, then KILL; nothing for an empty PID
stop() { local pid=$1; [ -n "$pid" ] || return 0; kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$pid" 2>/dev/null || true; }
# wait_port PORT SECONDS PID: until something listens on 127.0.0.1:PORT; dies if PID exits first or time is up
wait_port() { local deadline=$(( $(date +%s) + $2 ))
  until (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || die "process $3 exited before listening on $1"
    [ "$(date +%s)" -lt "$deadline" ] || die "nothing listens on $1 after $2 s"; sleep 0.2; done; }
# stop_on_exit FILE...: on exit (and on INT/TERM) stops $MID_PID and $LEAF_PID and removes the files
stop_on_exit() { LEAF_PID=""; MID_PID=""; CLEANUP_FILES=("$@")
  trap 'rc=$?; stop "$MID_PID"; stop "$LEAF_PID"; rm -f "${CLEANUP_FILES[@]}"; exit $rc' EXIT
  trap 'exit 130' INT TERM; }
# start_leaf STORE JAR LOG: `leaf STORE` ($SHARDS shards from $BASE_PORT, $RECORDS records) pinned to CPU 1 in the
# background; sets LEAF_PID and LAST (its last port) and returns once it listens
start_leaf() { LAST=$((BASE_PORT + SHARDS - 1))
  log "starting the $1 leaf ($SHARDS shards, ports $BASE_PORT-$LAST) on CPU 1"
  taskset -c 1 nice -n "$NICE" "$JAVA" -jar "$2" leaf "$1" --shards "$SHARDS" --base-port "$BASE_PORT" \
    --records "$RECORDS" > "$3" 2>&1 &
  LEAF_PID=$!
  wait_port "$LAST" 120 "$LEAF_PID"; }
