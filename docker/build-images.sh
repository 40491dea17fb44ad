#!/usr/bin/env bash
# Builds the images of the compose topologies from Debian packages and the project's CLI jar, for a
# machine that reaches no image registry (docs/compose.md#without-an-image-registry):
#
#   doubleface-local/base:trixie        debootstrap --variant=minbase of Debian, imported (once)
#   doubleface-local/jre:trixie         + openjdk-21-jre-headless
#   doubleface-local/doubleface:dev     docker/Dockerfile --target prebuilt on that JRE, with the jar
#   doubleface-local/redis:trixie       + redis-server and redis-cli (stand-in for redis:7.4)
#   doubleface-local/prometheus:trixie  + prometheus (stand-in for prom/prometheus)
#
# Usage: docker/build-images.sh [--jar FILE] [--rebuild] [--print-env] [IMAGE ...]
#   IMAGE        base, jre, doubleface, redis, prometheus (default: all); the images one is built
#                on are built first when missing
#   --jar FILE   the CLI jar (default: $DOUBLEFACE_JAR, else cli/target/doubleface.jar, built by
#                ./mvnw -B verify or ./mvnw -pl cli -am -DskipTests package)
#   --rebuild    build the named images (all if none is named) again even if up to date: fresh
#                Debian packages
#   --print-env  print the compose variables naming these images on stdout, for
#                eval "$(docker/build-images.sh --print-env redis doubleface)"
#
# An image is built only when missing or when its inputs changed: each carries, in the label
# io.doubleface.local.inputs, a hash of its Dockerfile and build context, its build arguments, the
# id of the image it is built on and (doubleface) the jar; replaced images are removed. The images
# live in the engine's data root (docker/engine.sh: /var/cache/doubleface-docker/data).
# Needs a Docker engine (DOCKER_HOST; `eval "$(docker/engine.sh start)"` starts a private one) and,
# for the base, root and debootstrap (installed with apt-get when missing).
# Environment: DEBIAN_SUITE (trixie), DEBIAN_MIRROR (the Debian mirror the host's apt uses, else
# debootstrap's default), DEBIAN_SECURITY_MIRROR (likewise, else the mirror's …/debian-security),
# JRE_PACKAGE (openjdk-21-jre-headless), LOCAL_IMAGE_PREFIX (doubleface-local).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=${DEBIAN_SUITE:-trixie}
JRE_PACKAGE=${JRE_PACKAGE:-openjdk-21-jre-headless}
PREFIX=${LOCAL_IMAGE_PREFIX:-doubleface-local}
LABEL=io.doubleface.local.inputs
BUILD_TIMEOUT=${DF_BUILD_TIMEOUT:-1200} # seconds, per image

die() { echo "build-images: $*" >&2; exit 1; }
say() { echo "build-images: $*" >&2; }

usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"; }

jar=${DOUBLEFACE_JAR:-}
rebuild=0
print_env=0
wanted=()
while (($#)); do
  case "$1" in
    --jar) [[ $# -ge 2 ]] || die "--jar needs a file"; jar=$2; shift 2 ;;
    --jar=*) jar=${1#--jar=}; shift ;;
    --rebuild) rebuild=1; shift ;;
    --print-env) print_env=1; shift ;;
    -h | --help) usage; exit 0 ;;
    base | jre | doubleface | redis | prometheus) wanted+=("$1"); shift ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
((${#wanted[@]})) || wanted=(base jre doubleface redis prometheus)
jar=${jar:-$REPO/cli/target/doubleface.jar}

tag() { # the local tag of an image
  case "$1" in
    doubleface) echo "$PREFIX/doubleface:dev" ;;
    *) echo "$PREFIX/$1:$SUITE" ;;
  esac
}

# The host's apt mirror whose URI ends in /$1 (debian or debian-security), from one-line and
# deb822 sources; empty if none.
host_mirror() {
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v want="$1" '
      /^[ \t]*#/ { next }
      { for (i = 1; i <= NF; i++) if ($i ~ /^https?:\/\//) { u = $i; sub(/\/$/, "", u); n = split(u, p, "/"); if (p[n] == want) { print u; exit } } }' ||
    true # some of the files may not exist
}
MIRROR=${DEBIAN_MIRROR:-$(host_mirror debian)} # empty: debootstrap's default
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-$(host_mirror debian-security)}

timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
  || die "no Docker engine answers (DOCKER_HOST=${DOCKER_HOST:-default}); start one, e.g. eval \"\$(docker/engine.sh start)\""

work=$(mktemp -d "${TMPDIR:-/var/tmp}/doubleface-build.XXXXXX") # on disk: the base's root file system
cleanup() {
  # a debootstrap that failed may have left /proc or /sys mounted in the root file system
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# one build at a time on this machine (CI and a developer may share the engine)
exec 9>"${TMPDIR:-/tmp}/doubleface-build-images.lock"
flock -w "$BUILD_TIMEOUT" 9 || die "another docker/build-images.sh held the lock for ${BUILD_TIMEOUT}s"

image_label() { docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$1" 2>/dev/null || true; }
image_id() { docker image inspect -f '{{.Id}}' "$1"; }

# run "$@" with its output in a log, shown (its end) only when it fails
logged() {
  local name=$1; shift
  local log="$work/$name.log"
  if ! timeout "$BUILD_TIMEOUT" "$@" >"$log" 2>&1; then
    tail -40 "$log" >&2
    die "$name failed (above: the end of its output)"
  fi
}

# What the Debian root file system gets after debootstrap; its text is part of the base's hash.
configure_rootfs() { # ROOT
  local root=$1 mirror security
  # the mirror debootstrap used, and its security archive beside it
  mirror=$(awk '$1 == "deb" { print $2; exit }' "$root/etc/apt/sources.list")
  [[ -n "$mirror" ]] || die "debootstrap wrote no mirror into /etc/apt/sources.list"
  security=${SECURITY_MIRROR:-${mirror%/}-security}
  rm -f "$root/etc/apt/sources.list" "$root/etc/resolv.conf" "$root/etc/hostname"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90doubleface-local"
  # no service is started by a package's installation in an image build (as in Debian's official images)
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
}

build_base() {
  local t inputs root="$work/rootfs" started=$SECONDS
  t=$(tag base)
  inputs=$(printf 'suite=%s mirror=%s security=%s\n%s\n' "$SUITE" "$MIRROR" "$SECURITY_MIRROR" \
             "$(declare -f configure_rootfs)" | sha256sum | cut -c1-64)
  if ! rebuilding base && [[ "$(image_label "$t")" == "$inputs" ]]; then
    say "$t up to date"; return
  fi
  [[ "$(id -u)" == 0 ]] || die "building $t needs root (debootstrap)"
  if ! command -v debootstrap >/dev/null; then
    command -v apt-get >/dev/null || die "debootstrap not found and no apt-get to install it"
    say "installing debootstrap"
    logged apt-get-debootstrap bash -c 'apt-get update -qq && apt-get install -y -qq debootstrap'
  fi
  [[ -e "/usr/share/debootstrap/scripts/$SUITE" ]] || die "this debootstrap does not know '$SUITE'"
  say "$t: debootstrap --variant=minbase $SUITE from ${MIRROR:-the default mirror of debootstrap}"
  logged debootstrap debootstrap --variant=minbase "$SUITE" "$root" ${MIRROR:+"$MIRROR"}
  configure_rootfs "$root"
  if ! tar --numeric-owner -C "$root" -c . |
       timeout "$BUILD_TIMEOUT" docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' \
         --change "LABEL $LABEL=$inputs io.doubleface.local=1" - "$t" >"$work/import.log" 2>&1; then
    cat "$work/import.log" >&2; die "docker import of the root file system failed"
  fi
  rm -rf "$root"
  say "$t built in $((SECONDS - started)) s"
}

# build_derived NAME DOCKERFILE CONTEXT PARENT [docker build arguments…]
build_derived() {
  local name=$1 dockerfile=$2 context=$3 parent=$4; shift 4
  local t parent_tag parent_id inputs started=$SECONDS
  t=$(tag "$name")
  parent_tag=$(tag "$parent")
  parent_id=$(image_id "$parent_tag")
  inputs=$( { printf '%s\n' "parent=$parent_id" "$@"; cat "$dockerfile";
              (cd "$context" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum); } |
            sha256sum | cut -c1-64)
  if ! rebuilding "$name" && [[ "$(image_label "$t")" == "$inputs" ]]; then
    say "$t up to date"; return
  fi
  say "$t: building on $parent_tag"
  local fresh=() # --rebuild: no layer from the build cache either (fresh Debian packages)
  if rebuilding "$name"; then fresh=(--no-cache); fi
  logged "build-$name" docker build --network host --pull=false "${fresh[@]}" -f "$dockerfile" "$@" \
    --label "$LABEL=$inputs" --label io.doubleface.local=1 -t "$t" "$context"
  say "$t built in $((SECONDS - started)) s"
}

check() { # check NAME EXPECTED-OUTPUT COMMAND…: the image runs, without a network
  local name=$1 want=$2; shift 2
  local out
  out=$(timeout 60 docker run --rm --network none "$(tag "$name")" "$@" 2>&1) \
    || { echo "$out" >&2; die "$(tag "$name"): '$*' failed"; }
  grep -q -- "$want" <<<"$out" || { echo "$out" >&2; die "$(tag "$name"): '$*' did not print '$want'"; }
}

declare -A done_=()
rebuilding() { # --rebuild and NAME was asked for by name
  ((rebuild)) || return 1
  local w; for w in "${wanted[@]}"; do [[ "$w" == "$1" ]] && return 0; done; return 1
}

ensure() {
  [[ -z "${done_[$1]:-}" ]] || return 0
  done_[$1]=1
  case "$1" in
    base) build_base ;;
    jre)
      ensure base
      build_derived jre "$REPO/docker/debian/jre/Dockerfile" "$REPO/docker/debian/jre" base \
        --build-arg "BASE=$(tag base)" --build-arg "JRE_PACKAGE=$JRE_PACKAGE"
      check jre 'version "2' java -version ;;
    doubleface)
      ensure jre
      [[ -f "$jar" ]] || die "no CLI jar at $jar: build it first (./mvnw -B verify, or ./mvnw -B -q -pl cli -am -DskipTests package) or pass --jar FILE"
      mkdir -p "$work/jar-context"
      cp "$jar" "$work/jar-context/doubleface.jar"
      build_derived doubleface "$REPO/docker/Dockerfile" "$work/jar-context" jre \
        --target prebuilt --build-arg "RUNTIME_BASE=$(tag jre)" --build-arg JAR=doubleface.jar
      check doubleface 'Usage: doubleface' --help ;;
    redis)
      ensure base
      build_derived redis "$REPO/docker/debian/redis/Dockerfile" "$REPO/docker/debian/redis" base \
        --build-arg "BASE=$(tag base)"
      check redis 'Redis server' redis-server --version
      check redis 'redis-cli' redis-cli --version ;;
    prometheus)
      ensure base
      build_derived prometheus "$REPO/docker/debian/prometheus/Dockerfile" "$REPO/docker/debian/prometheus" base \
        --build-arg "BASE=$(tag base)"
      check prometheus 'prometheus, version' --version ;;
  esac
}

for w in "${wanted[@]}"; do ensure "$w"; done
# images that a rebuild replaced (now untagged) and their layers
docker image prune -f --filter label=io.doubleface.local=1 >/dev/null

if ((print_env)); then
  for w in "${wanted[@]}"; do
    case "$w" in
      doubleface) echo "export DOUBLEFACE_IMAGE=$(tag doubleface)" ;;
      redis) echo "export REDIS_IMAGE=$(tag redis)" ;;
      prometheus) echo "export PROMETHEUS_IMAGE=$(tag prometheus)" ;;
    esac
  done
fi
