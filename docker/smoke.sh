#!/usr/bin/env bash
# Starts one compose topology for real, on images built locally from Debian packages and the
# project's jar (no image registry needed), checks it, and takes it down (docs/compose.md#smoke):
#
#   docker/smoke.sh kv|redis|grpc [--jar FILE] [--observe|--no-observe] [--out DIR] [--wait SECONDS]
#
#  1. a Docker engine: the one DOCKER_HOST (or the default socket) names, else a private one that it
#     starts (docker/engine.sh, needs root) and stops at the end, also on failure
#  2. the images: docker/build-images.sh (built when missing or when the jar changed)
#  3. `up -d` of docker/compose.TOPOLOGY.yml under the project dfsmoke-TOPOLOGY, with the local
#     images, a fresh admin token and free loopback ports; waits (--wait, default 180 s) until every
#     service is running (healthy where it has a healthcheck; the Redis loader exited 0) and the
#     mid-tier answers; otherwise names the services that are not, with the end of their logs
#  4. replies: 72 queries (fanout 1-4, every size, first, last and random keys) answered
#     byte-identically to a reference mid-tier started here (serve ycsb, embedded KV leaf); over
#     gRPC too for the gRPC topology (doubleface call), plus a 3 s gRPC load with no error
#  5. an experiment over the running mid-tier: experiment fanout --midtier, fanout 4, configurations
#     doubleface and type2a-1f1b (switched through the admin listener), 2 s each; every answer
#     counted: any error (connection, timeout, 4xx/5xx, closed) or unanswered request fails
#  6. with --observe (default for redis): Prometheus (the observe profile, Grafana left out) up,
#     its /api/v1/targets shows the mid-tier scraped with no error and a query sees the
#     experiment's requests
#  7. `down -v`; exit 0 only if every step passed
#
# --jar FILE  the CLI jar (default: $DOUBLEFACE_JAR, else cli/target/doubleface.jar)
# --out DIR   keep the experiment's results directory under DIR (default: removed)
# Needs: a JDK/JRE >= 21 (JAVA_HOME, else Temurin 25 if installed, else java on PATH) for the
# reference mid-tier and the experiment; python3 with PyYAML; curl; docker-compose 1.29 or
# Compose v2 (COMPOSE="docker compose" picks one).
# The MongoDB topology is not started: no reachable package has a mongod (docs/compose.md).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DOCKER_DIR="$REPO/docker"
CHECK=(python3 "$DOCKER_DIR/smoke_check.py")
started=$SECONDS

die() { echo "smoke: $*" >&2; exit 1; }
say() { echo "smoke: [$((SECONDS - started)) s] $*"; }
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"; }

topology=
jar=${DOUBLEFACE_JAR:-}
observe=
out_dir=
wait_s=180
while (($#)); do
  case "$1" in
    --jar) [[ $# -ge 2 ]] || die "--jar needs a file"; jar=$2; shift 2 ;;
    --jar=*) jar=${1#--jar=}; shift ;;
    --observe) observe=1; shift ;;
    --no-observe) observe=0; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a directory"; out_dir=$2; shift 2 ;;
    --out=*) out_dir=${1#--out=}; shift ;;
    --wait) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "--wait needs seconds"; wait_s=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    kv | redis | grpc) [[ -z "$topology" ]] || die "one topology at a time"; topology=$1; shift ;;
    mongo) die "mongo: no package reachable here provides a mongod, so compose.mongo.yml is validated statically only (docs/compose.md)" ;;
    *) usage >&2; echo >&2; die "unknown argument '$1'" ;;
  esac
done
[[ -n "$topology" ]] || { usage >&2; exit 2; }
[[ -n "$observe" ]] || { [[ "$topology" == redis ]] && observe=1 || observe=0; }
jar=${jar:-$REPO/cli/target/doubleface.jar}
[[ -f "$jar" ]] || die "no CLI jar at $jar: build it first (./mvnw -B verify, or ./mvnw -B -q -pl cli -am -DskipTests package) or pass --jar FILE"
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")

java_major() { "$1" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1; }
java=
for j in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/temurin-25-jdk-amd64/bin/java "$(command -v java || true)"; do
  [[ -x "$j" ]] || continue
  major=$(java_major "$j")
  if [[ -n "$major" ]] && ((major >= 21)); then java=$j; break; fi
done
[[ -n "$java" ]] || die "needs Java 21 or newer for the reference mid-tier and the experiment (set JAVA_HOME)"
for tool in python3 curl docker; do command -v "$tool" >/dev/null || die "needs $tool"; done
if [[ -n "${COMPOSE:-}" ]]; then
  read -r -a compose_cmd <<<"$COMPOSE"
elif docker compose version >/dev/null 2>&1; then
  compose_cmd=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose_cmd=(docker-compose)
else
  die "needs docker-compose 1.29 (Debian: apt-get install docker-compose) or Compose v2 (docker compose)"
fi

# one smoke at a time on this machine: the engine one of them starts is stopped when it ends
exec 8>"${TMPDIR:-/tmp}/doubleface-smoke.lock"
flock -w 600 8 || die "another docker/smoke.sh held the lock for 600 s"

project=dfsmoke-$topology
file="$DOCKER_DIR/compose.$topology.yml"
work=$(mktemp -d "${TMPDIR:-/tmp}/doubleface-smoke.XXXXXX")
engine_started=0
topology_up=0
ref_pid=
compose() { timeout 300 "${compose_cmd[@]}" -f "$file" -p "$project" "$@"; }

cleanup() {
  local rc=$?
  set +e
  if [[ -n "$ref_pid" ]]; then kill "$ref_pid" 2>/dev/null; wait "$ref_pid" 2>/dev/null; fi
  if ((topology_up)); then
    if ((rc != 0)); then
      echo "smoke: containers at the failure:" >&2
      docker ps -a --filter "label=com.docker.compose.project=$project" \
        --format 'table {{.Label "com.docker.compose.service"}}\t{{.Status}}' | sed 's/^/    /' >&2
    fi
    compose --profile observe down -v --remove-orphans >"$work/down.log" 2>&1 \
      || { cat "$work/down.log" >&2; echo "smoke: '${compose_cmd[*]} down' failed" >&2; rc=1; }
  fi
  if ((engine_started)); then bash "$DOCKER_DIR/engine.sh" stop; fi
  rm -rf "$work"
  if ((rc == 0)); then say "$topology: passed"; else echo "smoke: $topology: FAILED (exit $rc) after $((SECONDS - started)) s" >&2; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. the engine
if [[ -n "${DOCKER_HOST:-}" ]]; then
  timeout 20 docker version >/dev/null 2>&1 || die "DOCKER_HOST=$DOCKER_HOST does not answer"
elif ! timeout 20 docker version >/dev/null 2>&1; then
  DOCKER_HOST=$(bash "$DOCKER_DIR/engine.sh" host)
  export DOCKER_HOST
  if ! bash "$DOCKER_DIR/engine.sh" status >/dev/null 2>&1; then
    engine_started=1 # before it starts: a half-started engine is stopped too
    eval "$(bash "$DOCKER_DIR/engine.sh" start)"
  fi
fi
say "engine: ${DOCKER_HOST:-default socket} (dockerd $(docker version --format '{{.Server.Version}}'))$( ((engine_started)) && echo ', started for this run')"

# 2. the images
images=(doubleface)
[[ "$topology" == redis ]] && images+=(redis)
((observe)) && images+=(prometheus)
eval "$(bash "$DOCKER_DIR/build-images.sh" --jar "$jar" --print-env "${images[@]}")"
say "images: ${DOUBLEFACE_IMAGE} ${REDIS_IMAGE:-} ${PROMETHEUS_IMAGE:-}"

# 3. up, on free loopback ports, with a fresh admin token
mapfile -t ports < <("${CHECK[@]}" free-ports 4)
export DOUBLEFACE_HTTP_PORT=${ports[0]} DOUBLEFACE_GRPC_PORT=${ports[1]} DOUBLEFACE_ADMIN_PORT=${ports[2]} PROMETHEUS_PORT=${ports[3]}
DOUBLEFACE_ADMIN_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export DOUBLEFACE_ADMIN_TOKEN
token_file="$work/admin-token"
(umask 077 && printf %s "$DOUBLEFACE_ADMIN_TOKEN" >"$token_file")
midtier=http://127.0.0.1:$DOUBLEFACE_HTTP_PORT
admin=http://127.0.0.1:$DOUBLEFACE_ADMIN_PORT

compose --profile observe down -v --remove-orphans >/dev/null 2>&1 || true # a run that was killed
mapfile -t services < <(compose config | "${CHECK[@]}" default-services)
((${#services[@]})) || die "no service in $file"
((observe)) && services+=(prometheus)
topology_up=1
say "up: $(basename "$file") as $project: ${services[*]} (mid-tier on $midtier, admin $admin)"
# prometheus is named explicitly: the observe profile's grafana has no local image
up_ok=1
compose --profile observe up -d --no-build "${services[@]}" >"$work/up.log" 2>&1 || up_ok=0

# every expected service: "ok", "wait" or "failed", with its state
service_state() {
  local svc=$1 id status health code
  id=$(docker ps -aq --filter "label=com.docker.compose.project=$project" \
         --filter "label=com.docker.compose.service=$svc" | head -1)
  [[ -n "$id" ]] || { echo "wait no container"; return; }
  read -r status health code < <(docker inspect -f \
    '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}-{{end}} {{.State.ExitCode}}' "$id")
  case "$status/$health" in
    running/- | running/healthy) echo "ok $status${health/#-/}" ;;
    running/starting | created/* | restarting/*) echo "wait $status $health" ;;
    exited/*) if [[ "$code" == 0 && "$svc" == loader ]]; then echo "ok exited 0"; else echo "failed exited with $code"; fi ;;
    *) echo "failed $status $health" ;;
  esac
}

midtier_answers() {
  [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$midtier/query?fanout=1&size=small&key=0")" == 200 ]]
}

diagnose() { # MESSAGE: names the services that are not ready, with the end of their logs; fails
  local svc verdict detail bad=()
  for svc in "${services[@]}"; do
    read -r verdict detail < <(service_state "$svc")
    if [[ "$verdict" != ok ]]; then
      bad+=("$svc")
    elif [[ "$svc" == midtier ]] && ! midtier_answers; then
      bad+=("$svc"); detail="$detail, but $midtier/query does not answer 200"
    else
      continue
    fi
    echo "smoke: service $svc is not ready: $detail; the end of its log:" >&2
    compose --profile observe logs --no-color --tail 60 "$svc" 2>&1 | sed 's/^/    /' >&2
  done
  echo "$1" >&2
  die "not ready: ${bad[*]:-none (see above)}"
}

if ((!up_ok)); then
  cat "$work/up.log" >&2
  diagnose "smoke: '${compose_cmd[*]} up' failed (above)"
fi

deadline=$((SECONDS + wait_s))
while :; do
  pending=()
  for svc in "${services[@]}"; do
    read -r verdict detail < <(service_state "$svc")
    case "$verdict" in
      ok) ;;
      wait) pending+=("$svc ($detail)") ;;
      *) diagnose "smoke: service $svc $detail" ;;
    esac
  done
  if ((${#pending[@]} == 0)) && midtier_answers; then
    break
  fi
  ((${#pending[@]})) || pending=("midtier (no answer from $midtier/query yet)")
  ((SECONDS < deadline)) || diagnose "smoke: not ready within ${wait_s} s: ${pending[*]}"
  sleep 1
done
say "ready: ${services[*]}"

# 4. replies against a reference mid-tier on this machine (embedded KV leaf, same records)
"$java" -jar "$jar" serve ycsb --port 0 --admin-port -1 --embedded-shards 4 --records 1000 \
  --ready-file "$work/reference.json" >"$work/reference.log" 2>&1 &
ref_pid=$!
for _ in $(seq 1 300); do
  [[ -s "$work/reference.json" ]] && break
  kill -0 "$ref_pid" 2>/dev/null || { cat "$work/reference.log" >&2; die "the reference mid-tier exited"; }
  sleep 0.1
done
[[ -s "$work/reference.json" ]] || { cat "$work/reference.log" >&2; die "the reference mid-tier did not start in 30 s"; }
ref_port=$("${CHECK[@]}" ready-port "$work/reference.json")
timeout 120 "${CHECK[@]}" replies "$ref_port" "$DOUBLEFACE_HTTP_PORT" "$RANDOM"

if [[ "$topology" == grpc ]]; then
  grpc=grpc://127.0.0.1:$DOUBLEFACE_GRPC_PORT
  for q in "4 large 997" "3 medium 0"; do
    read -r fanout size key <<<"$q"
    timeout 60 "$java" -jar "$jar" call "$grpc" --fanout "$fanout" --size "$size" --key "$key" >"$work/grpc.body" 2>"$work/grpc.err" \
      || { cat "$work/grpc.err" >&2; die "doubleface call $grpc failed"; }
    curl -sf "http://127.0.0.1:$ref_port/query?fanout=$fanout&size=$size&key=$key" >"$work/ref.body"
    cmp -s "$work/grpc.body" "$work/ref.body" || die "gRPC reply to fanout=$fanout size=$size key=$key differs from the reference's"
  done
  say "gRPC upstream $grpc: 2 replies byte-identical to the reference's"
  timeout 60 "$java" -jar "$jar" load --target "$grpc" --url '/query?fanout=4&size=small&key={key}' \
    --users 4 --warmup 1s --duration 3s --json --quiet >"$work/grpc-load.json" \
    || die "doubleface load $grpc failed"
  "${CHECK[@]}" load "$work/grpc-load.json"
fi
kill "$ref_pid"; wait "$ref_pid" 2>/dev/null || true; ref_pid=

# 5. an experiment over the running mid-tier
say "experiment fanout --midtier $midtier: fanout 4, doubleface and type2a-1f1b, 2 s each"
exp_out=${out_dir:-$work/results}
mkdir -p "$exp_out"
timeout 240 "$java" -jar "$jar" experiment fanout --quick --midtier "$midtier" --admin "$admin" \
  --admin-token-file "$token_file" --out "$exp_out" --fanouts 4 --sizes small \
  --configs doubleface,type2a-1f1b --repeats 1 --global-warmup 1s --warmup 1s --duration 2s \
  >"$work/experiment.log" 2>&1 || { cat "$work/experiment.log" >&2; die "the experiment failed"; }
summary=$(find "$exp_out" -path '*/fanout-quick-*/summary.json' | sort | tail -1)
[[ -n "$summary" ]] || { cat "$work/experiment.log" >&2; die "the experiment wrote no summary.json"; }
"${CHECK[@]}" experiment "$summary"
[[ -z "$out_dir" ]] || say "experiment results: $(dirname "$summary")"

# 6. Prometheus scraping the mid-tier
if ((observe)); then
  "${CHECK[@]}" prometheus "$PROMETHEUS_PORT" doubleface "$summary"
fi

# 7. down (in cleanup), then "passed"
