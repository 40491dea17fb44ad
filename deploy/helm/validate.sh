#!/usr/bin/env bash
# Validates the Helm chart deploy/helm/doubleface statically (no cluster is needed or used):
#   1. helm lint --strict of the chart with every values set (the default, examples/*.yaml and the
#      variants below), which also checks the values against values.schema.json;
#   2. helm template of each, then kubernetes-validate --strict of every object against the
#      Kubernetes 1.34 and 1.37 API schemas (the oldest and newest it carries). ServiceMonitor and
#      PodMonitor are custom resources it has no schema for (it only warns): check-rendered.py
#      checks their fields instead; any other kind without a schema fails;
#   3. check-rendered.py: the objects fit together (selectors, ports, the grace period against the
#      preStop sleep and the drain, non-root, JVM sizing, leaves' names, monitors' port and Secret);
#   4. CliArgsCheck.java: every rendered doubleface container's arguments parsed by the CLI's own
#      command line (needs cli/target/doubleface.jar, or DOUBLEFACE_JAR; skipped without it unless CI);
#   5. check-jvm.py: every rendered JVM flag set started (-version) with this machine's java as in a
#      container of that memory limit: the heap, direct memory and CPU count it computes;
#   6. negative checks: values that must fail the rendering (a grace period not longer than the
#      drain, a drain shorter than the deadline, …) do, with the expected reason.
# Installs its tools once into DOUBLEFACE_TOOLS (default /var/cache/doubleface-tools): helm
# (go install, from the Go module proxy) and a venv with kubernetes-validate (PyPI).
# Exits non-zero on any failure; the last line counts the checks.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
chart="$here/doubleface"
tools="${DOUBLEFACE_TOOLS:-/var/cache/doubleface-tools}"
helm_version=v3.22.0
kv_version=1.37.0
k8s_versions=(1.34.0 1.37.0)
start=$SECONDS

# ---- tools, installed once ----------------------------------------------------------------------
mkdir -p "$tools"
exec 9>"$tools/.lock"
flock 9 # one installer at a time (CI and a developer may run this together)
helm="$tools/bin/helm"
if [[ ! -x "$helm" || "$(cat "$tools/bin/helm.version" 2>/dev/null)" != "$helm_version" ]]; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  [[ -x "$go" ]] || { echo "validate: helm is missing and there is no Go toolchain to build it (go install)" >&2; exit 1; }
  echo "validate: building helm $helm_version with $go (a few minutes, once; cached in $tools/bin)"
  rm -rf "$tools/bin.tmp"
  # low priority, one compile at a time: the machine may be measuring something else
  GOBIN="$tools/bin.tmp" GOMAXPROCS="${HELM_BUILD_PROCS:-1}" GOFLAGS="-p=${HELM_BUILD_PROCS:-1}" \
    nice -n 19 "$go" install "helm.sh/helm/v3/cmd/helm@$helm_version"
  mkdir -p "$tools/bin"
  mv "$tools/bin.tmp/helm" "$helm"
  echo "$helm_version" > "$tools/bin/helm.version"
  rm -rf "$tools/bin.tmp"
fi
venv="$tools/venv"
if [[ ! -f "$venv/.kubernetes-validate-$kv_version" ]]; then
  echo "validate: installing kubernetes-validate $kv_version into $venv (once)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==$kv_version"
  touch "$venv/.kubernetes-validate-$kv_version"
fi
flock -u 9
py="$venv/bin/python"
echo "validate: helm $helm_version ($helm), kubernetes-validate $kv_version ($venv), Kubernetes schemas ${k8s_versions[*]}"

jar="${DOUBLEFACE_JAR:-$root/cli/target/doubleface.jar}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }

# ---- the values sets ----------------------------------------------------------------------------
# name|helm arguments|the existing Secret it names (for the monitor check)
variants=("default||")
for f in "$chart"/examples/*.yaml; do
  variants+=("$(basename "$f" .yaml)|-f $f|")
done
variants+=(
  "monitors-tls-grpc|--set metrics.serviceMonitor.enabled=true --set metrics.podMonitor.enabled=true --set tls.enabled=true --set tls.secretName=doubleface-tls --set metrics.caSecret.name=doubleface-ca --set networkPolicy.enabled=true --set networkPolicy.adminFromNamespaces={monitoring} --set midtier.grpcPort=8081 --set admin.token.existingSecret=my-admin-token|my-admin-token"
  "setalgebra-leaves-deployment|--set midtier.service=setalgebra --set leaves.enabled=true --set leaves.command=setalgebra --set leaves.count=4 --set leaves.basePort=7801 --set leaves.kind=Deployment --set midtier.preStopAction=sleepAction --set jvm.gc=zgc --set midtier.probes.liveness.type=tcp --set autoscaling.enabled=true --set loadJob.enabled=true --set loadJob.helmTest=true|"
  "hdsearch-static|--set midtier.service=hdsearch --set midtier.backends=grpc://hdsearch-leaves:7601-7604 --set podDisruptionBudget.maxUnavailable=null --set podDisruptionBudget.minAvailable=1 --set midtier.resources.limits.cpu=1500m --set midtier.resources.requests.cpu=1500m|"
  "recommend-static|--set midtier.service=recommend --set midtier.backends=grpc://recommend-0:7901\,recommend-1:7901 --set jvm.activeProcessorCount= --set midtier.adminPort=-1|"
  "ycsb-token-value|--set admin.token.value=0123456789abcdef0123 --set midtier.terminationGracePeriodSeconds=60 --set midtier.ioThreads=2 --set serviceAccount.create=false|"
)

: > "$work/args.txt"
for v in "${variants[@]}"; do
  IFS='|' read -r name args secret <<< "$v"
  out="$work/$name.yaml"
  echo "values: $name ${args:+($args)}"
  # shellcheck disable=SC2086 # the arguments are split on purpose
  if "$helm" lint --strict "$chart" $args > "$work/lint.log" 2>&1; then
    ok; echo "  helm lint --strict: ok"
  else
    bad "helm lint $name:"; sed 's/^/    /' "$work/lint.log"
  fi
  # shellcheck disable=SC2086
  if ! "$helm" template x "$chart" --namespace shop $args > "$out" 2> "$work/template.log"; then
    bad "helm template $name:"; sed 's/^/    /' "$work/template.log"; continue
  fi
  ok
  kinds=$("$py" -c 'import sys, yaml; print(" ".join(sorted(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$out")
  echo "  helm template: $kinds"
  for k in "${k8s_versions[@]}"; do
    "$venv/bin/kubernetes-validate" --strict -k "$k" --quiet "$out" > "$work/kv.log" 2>&1 && rc=0 || rc=$?
    # a kind without a schema is only a warning to kubernetes-validate: only the monitors may be one
    unknown=$(grep '^WARN' "$work/kv.log" | grep -v -E 'for kind (ServiceMonitor|PodMonitor) with api version monitoring.coreos.com/v1' || true)
    if [[ $rc -eq 0 && -z "$unknown" ]]; then
      ok; echo "  kubernetes-validate --strict $k: ok$(grep -q '^WARN' "$work/kv.log" && echo ' (ServiceMonitor/PodMonitor: no schema there, checked below)')"
    else
      bad "kubernetes-validate $k $name:"; sed 's/^/    /' "$work/kv.log"
    fi
  done
  if "$py" "$here/check-rendered.py" "$out" "$secret"; then ok; else bad "check-rendered $name"; fi
  "$py" - "$out" "$name" >> "$work/args.txt" <<'EOF'
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] in ("Deployment", "StatefulSet", "Job"):
        for c in d["spec"]["template"]["spec"]["containers"]:
            if "/app/doubleface.jar" in (c.get("command") or []):
                print("%s %s/%s\t%s" % (sys.argv[2], d["kind"], d["metadata"]["name"], json.dumps(c["args"])))
EOF
done

# ---- the rendered arguments, parsed by the CLI itself --------------------------------------------
if [[ -f "$jar" ]]; then
  echo "CLI arguments ($jar):"
  if "$java" -cp "$jar" "$here/CliArgsCheck.java" "$work/args.txt" > "$work/cli.log" 2>&1; then
    ok; sed 's/^/  /' "$work/cli.log" | tail -1
  else
    bad "CLI arguments:"; sed 's/^/    /' "$work/cli.log"
  fi
elif [[ "${CI:-}" == true ]]; then
  bad "no $jar to check the rendered arguments with (build it first: ./mvnw -B -pl cli -am package)"
else
  echo "CLI arguments: skipped, no $jar (set DOUBLEFACE_JAR or build the CLI)"
fi

# ---- the JVM flags, started with this machine's JVM as in a container of that memory limit ------
if command -v "$java" > /dev/null 2>&1; then
  echo "JVM flags ($("$java" -version 2>&1 | head -1)):"
  if "$py" "$here/check-jvm.py" "$(command -v "$java")" "$work"/*.yaml > "$work/jvm.log" 2>&1; then
    ok; cat "$work/jvm.log"
  else
    bad "JVM flags:"; sed 's/^/    /' "$work/jvm.log"
  fi
elif [[ "${CI:-}" == true ]]; then
  bad "no java to check the JVM flags with (set JAVA_HOME)"
else
  echo "JVM flags: skipped, no java (set JAVA_HOME)"
fi

# ---- values that must fail the rendering ----------------------------------------------------------
echo "must fail:"
negatives=(
  "grace not longer than preStop + drain|--set midtier.terminationGracePeriodSeconds=15|must be longer than midtier.preStopSleepSeconds"
  "grace not longer than preStop + close wait (uSuite)|--set midtier.service=hdsearch --set midtier.backends=grpc://l:7601 --set midtier.terminationGracePeriodSeconds=15|must be longer than midtier.preStopSleepSeconds"
  "drain shorter than the deadline|--set midtier.deadline=20s|is shorter than midtier.deadline"
  "a duration the CLI does not take|--set midtier.deadline=1h|pattern"
  "a monitor of a uSuite service|--set midtier.service=router --set midtier.backends=grpc://l:7701 --set metrics.serviceMonitor.enabled=true|has no --admin-host"
  "TLS for a uSuite service|--set midtier.service=hdsearch --set midtier.backends=grpc://l:7601 --set tls.enabled=true --set tls.secretName=t|has no --tls-cert"
  "a uSuite service without leaves|--set midtier.service=setalgebra|needs --leaves"
  "leaves that stop before the mid-tiers re-resolve|--set leaves.enabled=true --set leaves.preStopSleepSeconds=3|is shorter than leaves.dnsRefreshSeconds"
  "Router leaves as replica groups of pods|--set midtier.service=router --set leaves.enabled=true --set leaves.command=router --set leaves.replicas=2|needs leaves.addressing perPod"
  "per-pod leaf names without a StatefulSet|--set leaves.enabled=true --set leaves.addressing=perPod --set leaves.kind=Deployment|needs leaves.kind StatefulSet"
  "leaves of the wrong command|--set leaves.enabled=true --set leaves.command=hdsearch|cannot serve"
  "no memory limit|--set midtier.resources.limits.memory=null|resources.limits.memory is required"
  "heap + direct memory over 90%|--set jvm.heapPercent=80|> 90"
  "a token shorter than 16 characters|--set admin.token.value=short|shorter than 16 characters"
  "a misspelt value|--set midtier.drainTimeout=3|additional properties 'drainTimeout' not allowed"
  "the load generator against TLS listeners|--set tls.enabled=true --set tls.secretName=t --set loadJob.enabled=true|has no TLS"
)
for n in "${negatives[@]}"; do
  IFS='|' read -r what args expect <<< "$n"
  # shellcheck disable=SC2086
  if "$helm" template x "$chart" $args > /dev/null 2> "$work/neg.log"; then
    bad "rendered, but must fail: $what ($args)"
  elif grep -q -F -- "$expect" "$work/neg.log"; then
    ok; echo "  fails as it must: $what"
  else
    bad "failed for another reason: $what ($args):"; sed 's/^/    /' "$work/neg.log"
  fi
done

echo "validate.sh: ${#variants[@]} values sets, ${#negatives[@]} values that must fail, $((SECONDS - start)) s"
echo "validate.sh: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
