#!/usr/bin/env bash
# A private Docker engine for the compose topologies on a machine with dockerd installed but none
# running (docs/compose.md#without-an-image-registry). Needs root.
#   docker/engine.sh start     start it (if not running) and print `export DOCKER_HOST=…`
#   docker/engine.sh stop      stop it (by its pid file) and wait for it to exit
#   docker/engine.sh status    exit 0 if it answers, print its DOCKER_HOST
#   docker/engine.sh host      print its DOCKER_HOST (unix:///…/docker.sock)
# Its own socket, pid file and exec root under DF_ENGINE_RUN (default /tmp/doubleface-docker),
# images and containers under DF_ENGINE_DATA (default /var/cache/doubleface-docker/data, kept
# across runs so built images are reused). It leaves the host's firewall and routing alone:
# no iptables rules, no IP forwarding or masquerading, no default docker0 bridge. Containers on a
# compose network reach each other and the ports the compose files publish on 127.0.0.1 (Docker's
# userland proxy), not the outside; images are built with `docker build --network host`.
set -euo pipefail

RUN_DIR=${DF_ENGINE_RUN:-/tmp/doubleface-docker}
DATA_DIR=${DF_ENGINE_DATA:-/var/cache/doubleface-docker/data}
SOCK="$RUN_DIR/docker.sock"
PID_FILE="$RUN_DIR/docker.pid"
LOG="$RUN_DIR/dockerd.log"
START_TIMEOUT=${DF_ENGINE_START_TIMEOUT:-60}

die() { echo "engine: $*" >&2; exit 1; }

answers() { DOCKER_HOST="unix://$SOCK" timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

running_pid() { # the pid of our dockerd, if its pid file names a live dockerd
  [[ -s "$PID_FILE" ]] || return 1
  local pid; pid=$(<"$PID_FILE")
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/comm" && "$(<"/proc/$pid/comm")" == dockerd ]] || return 1
  echo "$pid"
}

start() {
  if running_pid >/dev/null && answers; then
    echo "export DOCKER_HOST=unix://$SOCK"; return 0
  fi
  [[ "$(id -u)" == 0 ]] || die "needs root to start dockerd"
  command -v dockerd >/dev/null || die "dockerd not found (Debian: apt-get install docker.io)"
  command -v docker >/dev/null || die "the docker client is not found"
  mkdir -p "$RUN_DIR/exec" "$DATA_DIR"
  # setsid: the engine is not in the caller's process group, so ^C there does not kill it
  # half-way; `stop` ends it. It does not inherit the callers' lock files (fds 8, 9).
  setsid dockerd --host "unix://$SOCK" --pidfile "$PID_FILE" --exec-root "$RUN_DIR/exec" \
    --data-root "$DATA_DIR" --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    --log-level=warn >"$LOG" 2>&1 </dev/null 8>&- 9>&- &
  local pid=$! deadline=$((SECONDS + START_TIMEOUT))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -20 "$LOG" >&2; die "dockerd exited while starting (log: $LOG)"
    fi
    if ((SECONDS >= deadline)); then
      tail -20 "$LOG" >&2; kill "$pid" 2>/dev/null || true
      die "dockerd did not answer on $SOCK within ${START_TIMEOUT}s (log: $LOG)"
    fi
    sleep 0.5
  done
  echo "engine: dockerd $pid on unix://$SOCK, data in $DATA_DIR" >&2
  echo "export DOCKER_HOST=unix://$SOCK"
}

stop() {
  local pid
  pid=$(running_pid) || { echo "engine: not running" >&2; return 0; }
  kill -TERM "$pid"
  for _ in $(seq 1 60); do # dockerd stops its containers first (10 s each at most)
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "engine: dockerd $pid still running after 30 s: SIGKILL to its process group" >&2
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  # what dockerd leaves mounted under its exec root (the default network namespace)
  awk -v d="$RUN_DIR/exec/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  echo "engine: dockerd $pid stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running_pid >/dev/null && answers; then echo "export DOCKER_HOST=unix://$SOCK"; else echo "engine: not running" >&2; exit 1; fi ;;
  host) echo "unix://$SOCK" ;;
  -h | --help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0" ;;
  *) echo "usage: docker/engine.sh start|stop|status|host (--help)" >&2; exit 2 ;;
esac
