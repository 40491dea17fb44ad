{{/*
Checks of values that would render valid objects but a deployment that loses requests or does not
start. Each fails the rendering (helm template / install / upgrade) with the reason.
*/}}
{{- define "doubleface.checks" -}}
{{- $m := .Values.midtier -}}
{{- $caps := fromYaml (include "doubleface.caps" .) -}}
{{- $svc := $m.service -}}

{{- /* what the μSuite commands lack (serve hdsearch|router|setalgebra|recommend --help) */ -}}
{{- if not $caps.full -}}
{{- if .Values.tls.enabled -}}
{{- fail (printf "tls.enabled: `doubleface serve %s` has no --tls-cert/--tls-key (only serve ycsb has)" $svc) -}}
{{- end -}}
{{- if or .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled .Values.admin.listenOnPodIp -}}
{{- fail (printf "metrics.serviceMonitor / metrics.podMonitor / admin.listenOnPodIp: `doubleface serve %s` has no --admin-host: its admin listener (and /metrics) is on 127.0.0.1 only, which nothing outside the pod can scrape" $svc) -}}
{{- end -}}
{{- if and (not $m.backends) (not .Values.leaves.enabled) -}}
{{- fail (printf "midtier.backends: `doubleface serve %s` needs --leaves (give midtier.backends, or enable leaves)" $svc) -}}
{{- end -}}
{{- end -}}

{{- if and .Values.leaves.enabled (not (has .Values.leaves.command $caps.leafCommands)) -}}
{{- fail (printf "leaves.command %q cannot serve `doubleface serve %s` (expected one of %s)" .Values.leaves.command $svc (join ", " $caps.leafCommands)) -}}
{{- end -}}
{{- if .Values.leaves.enabled -}}
{{- $l := .Values.leaves -}}
{{- if and (eq $l.addressing "perPod") (ne $l.kind "StatefulSet") -}}
{{- fail "leaves.addressing perPod needs leaves.kind StatefulSet (stable pod names)" -}}
{{- end -}}
{{- if and (eq $l.addressing "perPod") (lt (int $l.replicas) 1) -}}
{{- fail "leaves.addressing perPod needs leaves.replicas >= 1" -}}
{{- end -}}
{{- if and (eq $l.command "router") (eq $l.addressing "replicas") (gt (int $l.replicas) 1) -}}
{{- fail "leaves.command router with leaves.replicas > 1 needs leaves.addressing perPod: Router leaves take writes, and a set sent to a replica group of pods reaches one of them" -}}
{{- end -}}
{{- end -}}
{{- if not (has .Values.leaves.kind (list "StatefulSet" "Deployment")) -}}
{{- fail (printf "leaves.kind %q: expected StatefulSet or Deployment" .Values.leaves.kind) -}}
{{- end -}}

{{- /* termination: the grace period must cover the preStop sleep and the drain */ -}}
{{- if not (has $m.preStopAction (list "exec" "sleepAction")) -}}
{{- fail (printf "midtier.preStopAction %q: expected exec or sleepAction" $m.preStopAction) -}}
{{- end -}}
{{- $stop := include "doubleface.stopSeconds" . | int -}}
{{- $grace := include "doubleface.midtierGrace" . | int -}}
{{- if le $grace (add $m.preStopSleepSeconds $stop) -}}
{{- fail (printf "midtier.terminationGracePeriodSeconds (%d) must be longer than midtier.preStopSleepSeconds (%d) + %s (%d s): the kubelet kills the container when the grace period ends, and requests still in flight would be lost" $grace (int $m.preStopSleepSeconds) (ternary "midtier.drainTimeoutSeconds" "the CLI's close wait" $caps.full) $stop) -}}
{{- end -}}
{{- if $caps.full -}}
{{- $deadline := include "doubleface.millis" $m.deadline | int64 -}}
{{- if lt (mul $m.drainTimeoutSeconds 1000) $deadline -}}
{{- fail (printf "midtier.drainTimeoutSeconds (%d s) is shorter than midtier.deadline (%s): a request admitted just before SIGTERM may take up to the deadline, and the drain would cut it off" (int $m.drainTimeoutSeconds) $m.deadline) -}}
{{- end -}}
{{- end -}}

{{- /* the leaves: a leaf must not stop before every mid-tier has seen it leave its DNS name */ -}}
{{- if .Values.leaves.enabled -}}
{{- $l := .Values.leaves -}}
{{- $pre := include "doubleface.leavesPreStop" . | int -}}
{{- if lt $pre (add $l.dnsRefreshSeconds $l.dnsTtlSeconds) -}}
{{- fail (printf "leaves.preStopSleepSeconds (%d) is shorter than leaves.dnsRefreshSeconds (%d) + leaves.dnsTtlSeconds (%d): a stopping leaf would close while mid-tiers still send it calls" $pre (int $l.dnsRefreshSeconds) (int $l.dnsTtlSeconds)) -}}
{{- end -}}
{{- end -}}

{{- if and .Values.tls.enabled (not .Values.tls.secretName) -}}
{{- fail "tls.enabled needs tls.secretName (a kubernetes.io/tls Secret; PKCS#8 key)" -}}
{{- end -}}
{{- if and .Values.admin.token.value (lt (len .Values.admin.token.value) 16) -}}
{{- fail "admin.token.value: the mid-tier refuses a token shorter than 16 characters" -}}
{{- end -}}
{{- if and (or .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled) (lt (int $m.adminPort) 0) -}}
{{- fail "metrics monitors scrape the admin listener's /metrics: midtier.adminPort is -1 (none)" -}}
{{- end -}}

{{- $pdb := .Values.podDisruptionBudget -}}
{{- if and $pdb.enabled (eq (kindIs "invalid" $pdb.maxUnavailable) (kindIs "invalid" $pdb.minAvailable)) -}}
{{- fail "podDisruptionBudget: set exactly one of maxUnavailable and minAvailable" -}}
{{- end -}}
{{- if .Values.autoscaling.enabled -}}
{{- if not (and $m.resources.requests $m.resources.requests.cpu) -}}
{{- fail "autoscaling.enabled: the CPU target is a share of midtier.resources.requests.cpu, which is not set" -}}
{{- end -}}
{{- if gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas) -}}
{{- fail "autoscaling.minReplicas > autoscaling.maxReplicas" -}}
{{- end -}}
{{- end -}}
{{- end -}}
