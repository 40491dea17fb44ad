{{/* Names and labels. */}}
{{- define "doubleface.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "doubleface.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The name of a component's objects: FULLNAME-SUFFIX (52 characters at most, room for pod suffixes). */}}
{{- define "doubleface.componentName" -}}
{{- printf "%s-%s" (include "doubleface.fullname" .root | trunc 40 | trimSuffix "-") .suffix | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "doubleface.leavesName" -}}
{{- include "doubleface.componentName" (dict "root" . "suffix" "leaves") -}}
{{- end -}}

{{/* Selector labels of a component: (dict "root" $ "component" "midtier"). */}}
{{- define "doubleface.selectorLabels" -}}
app.kubernetes.io/name: {{ include "doubleface.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "doubleface.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "doubleface.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: doubleface
{{- end -}}

{{- define "doubleface.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "doubleface.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "doubleface.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
What each `doubleface serve` service can do, as the CLI has it (java -jar doubleface.jar serve
SERVICE --help): which option names its backends, whether it has GET /health, a drain
(--drain-timeout), --admin-host and the admin token, TLS; the leaf commands it reads from; a
sample query for the load generator. Returns YAML: fromYaml (include "doubleface.caps" .).
*/}}
{{- define "doubleface.caps" -}}
{{- $s := .Values.midtier.service -}}
{{- if eq $s "ycsb" -}}
backendsFlag: --shards
full: true
leafCommands: [kv, grpc]
url: /query?fanout=4&size=small&key={key}
{{- else if has $s (list "hdsearch" "router" "setalgebra" "recommend") -}}
backendsFlag: --leaves
full: false
leafCommands: [{{ $s }}]
url: {{ get (dict "hdsearch" "/hdsearch?query={key}&k=5" "router" "/router/get?key=key:{key}" "setalgebra" "/setalgebra?query={key}&limit=10" "recommend" "/recommend?query={key}") $s }}
{{- else -}}
{{- fail (printf "midtier.service %q: expected ycsb, hdsearch, router, setalgebra or recommend (doubleface serve --help)" $s) -}}
{{- end -}}
{{- end -}}

{{/* A memory quantity (1Gi, 1536Mi, 2G, 1073741824) in whole MiB, rounded down. */}}
{{- define "doubleface.mebibytes" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- div (int64 .) 1048576 -}}
{{- else -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $unit := trimPrefix $num $q -}}
{{- $factors := dict "" 0.00000095367431640625 "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 "k" 0.00095367431640625 "M" 0.95367431640625 "G" 953.67431640625 "T" 953674.31640625 -}}
{{- if or (not $num) (not (hasKey $factors $unit)) -}}
{{- fail (printf "memory quantity %q: expected a number with Ki, Mi, Gi, Ti, k, M, G, T or no suffix" $q) -}}
{{- end -}}
{{- mulf (float64 $num) (get $factors $unit) | floor | int64 -}}
{{- end -}}
{{- end -}}

{{/* A CPU quantity (2, 1500m, 0.5) in whole CPUs, rounded up, at least 1. */}}
{{- define "doubleface.cpus" -}}
{{- $q := toString . -}}
{{- $n := 0.0 -}}
{{- if hasSuffix "m" $q -}}
{{- $n = divf (float64 (trimSuffix "m" $q)) 1000.0 -}}
{{- else -}}
{{- $n = float64 $q -}}
{{- end -}}
{{- max 1 (ceil $n | int64) -}}
{{- end -}}

{{/* A CLI duration (250ms, 1s, 2m: a whole number and ms, s or m) in milliseconds. */}}
{{- define "doubleface.millis" -}}
{{- $d := toString . -}}
{{- if not (regexMatch "^[0-9]{1,9}(ms|s|m)$" $d) -}}
{{- fail (printf "duration %q: expected a whole number and ms, s or m, e.g. 250ms, 1s, 2m (as the CLI takes it)" $d) -}}
{{- end -}}
{{- $n := regexFind "^[0-9]+" $d | int64 -}}
{{- if hasSuffix "ms" $d }}{{ $n }}{{ else if hasSuffix "s" $d }}{{ mul $n 1000 }}{{ else }}{{ mul $n 60000 }}{{ end -}}
{{- end -}}

{{/*
The container's command: java, the JVM flags sized from the container's limits, the jar.
(dict "root" $ "jvm" COMPONENT_JVM "resources" COMPONENT_RESOURCES "what" "midtier")
*/}}
{{- define "doubleface.javaCommand" -}}
{{- $jvm := merge (deepCopy (default dict .jvm)) (deepCopy .root.Values.jvm) -}}
{{- $limits := default dict .resources.limits -}}
{{- $requests := default dict .resources.requests -}}
{{- if not $limits.memory -}}
{{- fail (printf "%s.resources.limits.memory is required: the JVM's heap and direct memory are sized from it" .what) -}}
{{- end -}}
{{- $heap := int64 $jvm.heapPercent -}}
{{- $direct := int64 $jvm.directMemoryPercent -}}
{{- if gt (add $heap $direct) 90 -}}
{{- fail (printf "%s: jvm.heapPercent (%d) + jvm.directMemoryPercent (%d) > 90: metaspace, code cache, thread stacks and the GC need the rest of the memory limit" .what $heap $direct) -}}
{{- end -}}
{{- $mib := include "doubleface.mebibytes" $limits.memory | int64 -}}
{{- $gcs := dict "parallel" "-XX:+UseParallelGC" "g1" "-XX:+UseG1GC" "zgc" "-XX:+UseZGC" "serial" "-XX:+UseSerialGC" -}}
{{- if not (hasKey $gcs (toString $jvm.gc)) -}}
{{- fail (printf "%s: jvm.gc %q: expected parallel, g1, zgc or serial" .what (toString $jvm.gc)) -}}
{{- end -}}
- java
- {{ get $gcs (toString $jvm.gc) }}
- -XX:InitialRAMPercentage={{ $heap }}
- -XX:MaxRAMPercentage={{ $heap }}
- -XX:MaxDirectMemorySize={{ div (mul $mib $direct) 100 }}m
{{- $apc := toString $jvm.activeProcessorCount }}
{{- if eq $apc "auto" }}
{{- $cpu := default $requests.cpu $limits.cpu }}
{{- if $cpu }}
- -XX:ActiveProcessorCount={{ include "doubleface.cpus" $cpu }}
{{- end }}
{{- else if $apc }}
- -XX:ActiveProcessorCount={{ $apc }}
{{- end }}
{{- if $jvm.alwaysPreTouch }}
- -XX:+AlwaysPreTouch
{{- end }}
- -XX:+ExitOnOutOfMemoryError
- -XX:ErrorFile=/tmp/hs_err_pid%p.log
- -Djava.io.tmpdir=/tmp
- --enable-native-access=ALL-UNNAMED
{{- range $jvm.extraFlags }}
- {{ . | quote }}
{{- end }}
- -jar
- /app/doubleface.jar
{{- end -}}

{{/* Pod-level security context of every doubleface pod. */}}
{{- define "doubleface.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container-level security context (restricted Pod Security Standard). */}}
{{- define "doubleface.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "doubleface.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end -}}

{{- define "doubleface.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The preStop hook: sleep N seconds. (dict "action" exec|sleepAction "seconds" N) */}}
{{- define "doubleface.preStop" -}}
preStop:
{{- if eq .action "sleepAction" }}
  sleep:
    seconds: {{ .seconds }}
{{- else }}
  exec:
    command: ["sleep", "{{ .seconds }}"]
{{- end }}
{{- end -}}

{{/* The leaves' headless Service as a fully qualified name. */}}
{{- define "doubleface.leavesHost" -}}
{{- printf "%s.%s.svc.%s" (include "doubleface.leavesName" .) .Release.Namespace .Values.clusterDomain -}}
{{- end -}}

{{/* The leaves' DNS names (YAML list): the headless Service, or (addressing perPod) each pod's name. */}}
{{- define "doubleface.leafHosts" -}}
{{- $svc := include "doubleface.leavesHost" . -}}
{{- if eq .Values.leaves.addressing "perPod" -}}
{{- range $k := until (int .Values.leaves.replicas) }}
- {{ printf "%s-%d.%s" (include "doubleface.leavesName" $) $k $svc }}
{{- end }}
{{- else }}
- {{ $svc }}
{{- end -}}
{{- end -}}

{{/* The leaf command's option naming how many shards or leaves a pod runs. */}}
{{- define "doubleface.leafCountFlag" -}}
{{- if has .Values.leaves.command (list "kv" "grpc") }}--shards{{ else }}--leaves{{ end -}}
{{- end -}}

{{/*
The backends URI the mid-tier is given: midtier.backends, else the leaves' shard list
(shard i = dns:///LEAVES:basePort+i, every ready leaf pod), else empty (ycsb: embedded leaf).
*/}}
{{- define "doubleface.backends" -}}
{{- if .Values.midtier.backends -}}
{{- .Values.midtier.backends -}}
{{- else if .Values.leaves.enabled -}}
{{- $scheme := ternary "kv" "grpc" (eq .Values.leaves.command "kv") -}}
{{- $hosts := fromYamlArray (include "doubleface.leafHosts" .) -}}
{{- $elements := list -}}
{{- range $i := until (int .Values.leaves.count) -}}
{{- $elements = append $elements (printf "dns:///%s:%d" (index $hosts (mod $i (len $hosts))) (add $.Values.leaves.basePort $i)) -}}
{{- end -}}
{{- printf "%s://%s?dns-refresh=%ds" $scheme (join "," $elements) (int .Values.leaves.dnsRefreshSeconds) -}}
{{- end -}}
{{- end -}}

{{/* Whether the admin listener must listen on the pod IP (a monitor scrapes it). */}}
{{- define "doubleface.adminOnPodIp" -}}
{{- if and (ge (int .Values.midtier.adminPort) 0) (or .Values.admin.listenOnPodIp .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled) }}true{{ end -}}
{{- end -}}

{{- define "doubleface.tokenSecretName" -}}
{{- default (include "doubleface.componentName" (dict "root" . "suffix" "admin-token")) .Values.admin.token.existingSecret -}}
{{- end -}}

{{/* preStop sleep + drain (ycsb) or the CLI's close wait (μSuite: 10 s) + margin, unless set. */}}
{{- define "doubleface.midtierGrace" -}}
{{- $m := .Values.midtier -}}
{{- if $m.terminationGracePeriodSeconds -}}
{{- $m.terminationGracePeriodSeconds -}}
{{- else -}}
{{- add $m.preStopSleepSeconds (include "doubleface.stopSeconds" .) $m.terminationMarginSeconds -}}
{{- end -}}
{{- end -}}

{{/* How long the mid-tier process may take after SIGTERM: the drain (ycsb), or the CLI's close wait. */}}
{{- define "doubleface.stopSeconds" -}}
{{- $caps := fromYaml (include "doubleface.caps" .) -}}
{{- if $caps.full }}{{ .Values.midtier.drainTimeoutSeconds }}{{ else }}10{{ end -}}
{{- end -}}

{{- define "doubleface.leavesPreStop" -}}
{{- $l := .Values.leaves -}}
{{- if kindIs "invalid" $l.preStopSleepSeconds -}}
{{- add $l.dnsRefreshSeconds $l.dnsTtlSeconds 2 -}}
{{- else -}}
{{- $l.preStopSleepSeconds -}}
{{- end -}}
{{- end -}}

{{/* A scrape endpoint's scheme, TLS and token (ServiceMonitor endpoints[], PodMonitor podMetricsEndpoints[]). */}}
{{- define "doubleface.scrapeEndpoint" -}}
port: admin
path: /metrics
interval: {{ .monitor.interval }}
scrapeTimeout: {{ .monitor.scrapeTimeout }}
scheme: {{ ternary "https" "http" .root.Values.tls.enabled }}
authorization:
  type: Bearer
  credentials:
    name: {{ include "doubleface.tokenSecretName" .root }}
    key: {{ .root.Values.admin.token.key }}
{{- if .root.Values.tls.enabled }}
tlsConfig:
{{- if .root.Values.metrics.caSecret.name }}
  ca:
    secret:
      name: {{ .root.Values.metrics.caSecret.name }}
      key: {{ .root.Values.metrics.caSecret.key }}
{{- else }}
  insecureSkipVerify: {{ .root.Values.metrics.insecureSkipVerify }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
A pod's nodeSelector, tolerations and affinity; without an affinity of its own, a preferred
anti-affinity on the hostname to the pods of `avoid` (a component; default: its own).
(dict "root" $ "component" "midtier" "values" .Values.midtier ["avoid" "midtier"])
*/}}
{{- define "doubleface.scheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .values.affinity }}
  {{- toYaml .values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "doubleface.selectorLabels" (dict "root" .root "component" (default .component .avoid)) | nindent 14 }}
{{- end }}
{{- end -}}

{{/*
The pod spec of a one-shot doubleface command (load-data, load).
(dict "root" $ "component" "load" "values" .Values.loadJob "args" LIST ["avoid" "midtier"] ["initContainers" YAML])
*/}}
{{- define "doubleface.jobPodSpec" -}}
restartPolicy: Never
{{- with .initContainers }}
initContainers:
  {{- . | nindent 2 }}
{{- end }}
serviceAccountName: {{ include "doubleface.serviceAccountName" .root }}
automountServiceAccountToken: false
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "doubleface.podSecurityContext" .root | nindent 2 }}
containers:
  - name: {{ .component }}
    image: {{ include "doubleface.image" .root }}
    imagePullPolicy: {{ .root.Values.image.pullPolicy }}
    workingDir: /tmp
    command:
      {{- include "doubleface.javaCommand" (dict "root" .root "jvm" .values.jvm "resources" .values.resources "what" .component) | nindent 6 }}
    args:
      {{- range .args }}
      - {{ . | quote }}
      {{- end }}
    resources:
      {{- toYaml .values.resources | nindent 6 }}
    securityContext:
      {{- include "doubleface.containerSecurityContext" .root | nindent 6 }}
    volumeMounts:
      {{- include "doubleface.tmpMount" .root | nindent 6 }}
volumes:
  {{- include "doubleface.tmpVolume" .root | nindent 2 }}
{{- if .avoid }}
{{ include "doubleface.scheduling" . | trim }}
{{- else }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
An init container that waits, in a shell of the image, until `until` succeeds.
(dict "root" $ "name" "wait-for-leaves" "what" "NAME" "until" "getent hosts NAME")
*/}}
{{- define "doubleface.waitContainer" -}}
- name: {{ .name }}
  image: {{ include "doubleface.image" .root }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  command:
    - bash
    - -c
    - until {{ .until }}; do echo "waiting for {{ .what }}"; sleep 2; done
  securityContext:
    {{- include "doubleface.containerSecurityContext" .root | nindent 4 }}
  resources:
    requests: {cpu: 100m, memory: 32Mi}
    limits: {cpu: 100m, memory: 32Mi}
{{- end -}}
