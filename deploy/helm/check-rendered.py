#!/usr/bin/env python3
"""Checks one rendering of the doubleface chart (a multi-document YAML file) for what a schema
cannot see: that the objects fit together and keep the chart's promises.

- every Service selects the pods of a workload in the file, and its target ports are container
  ports of those pods; the main Service never carries the admin port;
- a PodDisruptionBudget and a HorizontalPodAutoscaler point at a workload in the file;
- the mid-tier's Deployment rolls with maxUnavailable 0; its terminationGracePeriodSeconds is
  longer than its preStop sleep plus the --drain-timeout it is given;
- every doubleface container runs as non-root with a read-only root filesystem, /tmp mounted,
  the JVM's heap sized from the memory limit and -XX:ActiveProcessorCount equal to the CPU limit;
- a mid-tier whose backends are the chart's leaves names the leaves' headless Service (or a pod of
  their StatefulSet under it), at ports that Service has;
- ServiceMonitor and PodMonitor (custom resources: kubernetes-validate has no schema for them)
  use only the fields listed below (a hand-written subset of the monitoring.coreos.com/v1 CRDs),
  select a Service or pods of this file, scrape a port named there and read the token from a
  Secret of this file (or the existing one named in admin.token.existingSecret).

Usage: check-rendered.py FILE [EXISTING_SECRET]. Prints one line per check group; exits 1 on a
failure.
"""
import math
import re
import sys

import yaml

MONITOR_ENDPOINT_KEYS = {"port", "path", "interval", "scrapeTimeout", "scheme", "authorization", "tlsConfig"}
DURATION = re.compile(r"^[0-9]+(ms|s|m|h)$")

errors = []


def fail(msg):
    errors.append(msg)


def cpus(q):
    q = str(q)
    return max(1, math.ceil(float(q[:-1]) / 1000 if q.endswith("m") else float(q)))


def pod_spec(obj):
    if obj["kind"] in ("Deployment", "StatefulSet", "Job"):
        return obj["spec"]["template"]["spec"]
    return None


def pod_labels(obj):
    return obj["spec"]["template"]["metadata"].get("labels", {})


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_container(where, pod, c):
    cmd = c["command"]
    sc = c.get("securityContext", {})
    if not (sc.get("runAsNonRoot") and sc.get("readOnlyRootFilesystem") and sc.get("allowPrivilegeEscalation") is False):
        fail(f"{where}: not non-root with a read-only root filesystem")
    if not any(m.get("mountPath") == "/tmp" for m in c.get("volumeMounts", [])):
        fail(f"{where}: /tmp is not mounted (the root filesystem is read-only)")
    limits = c.get("resources", {}).get("limits", {})
    if "memory" not in limits:
        fail(f"{where}: no memory limit, yet the JVM is sized from it")
    if not any(a.startswith("-XX:MaxRAMPercentage=") for a in cmd):
        fail(f"{where}: the heap is not sized from the memory limit (-XX:MaxRAMPercentage)")
    apc = [a for a in cmd if a.startswith("-XX:ActiveProcessorCount=")]
    if "cpu" in limits and apc and int(apc[0].split("=")[1]) != cpus(limits["cpu"]):
        fail(f"{where}: {apc[0]} but the CPU limit is {limits['cpu']}")
    if pod.get("securityContext", {}).get("runAsNonRoot") is not True:
        fail(f"{where}: the pod does not require a non-root user")


def arg(args, name):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def main():
    path = sys.argv[1]
    existing_secret = sys.argv[2] if len(sys.argv) > 2 else ""
    objs = [d for d in yaml.safe_load_all(open(path)) if d]
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    workloads = [o for o in objs if o["kind"] in ("Deployment", "StatefulSet")]
    secrets = {o["metadata"]["name"] for o in by_kind.get("Secret", [])}
    if existing_secret:
        secrets.add(existing_secret)
    counts = {}

    def ports_of(w):
        return {p.get("name"): p["containerPort"] for c in pod_spec(w)["containers"] for p in c.get("ports", [])}

    # Services: selected pods and target ports
    services = {}
    for s in by_kind.get("Service", []):
        name = s["metadata"]["name"]
        services[name] = s
        targets = [w for w in workloads if selects(s["spec"].get("selector"), pod_labels(w))]
        if len(targets) != 1:
            fail(f"Service {name} selects {len(targets)} workloads of the file (expected 1)")
            continue
        cports = ports_of(targets[0])
        for p in s["spec"].get("ports", []):
            tp = p.get("targetPort", p["port"])
            if tp not in cports and tp not in cports.values():
                fail(f"Service {name}: targetPort {tp} is no container port of {targets[0]['metadata']['name']}")
        comp = s["metadata"]["labels"].get("app.kubernetes.io/component")
        if comp == "midtier" and any(p.get("targetPort") == "admin" or p.get("name") == "admin" for p in s["spec"]["ports"]):
            fail(f"Service {name}: the main Service carries the admin port")
        counts["services"] = counts.get("services", 0) + 1

    for kind in ("PodDisruptionBudget",):
        for o in by_kind.get(kind, []):
            if not any(selects(o["spec"]["selector"]["matchLabels"], pod_labels(w)) for w in workloads):
                fail(f"{kind} {o['metadata']['name']} selects no workload of the file")
    for o in by_kind.get("HorizontalPodAutoscaler", []):
        ref = o["spec"]["scaleTargetRef"]
        if not any(w["kind"] == ref["kind"] and w["metadata"]["name"] == ref["name"] for w in workloads):
            fail(f"HorizontalPodAutoscaler {o['metadata']['name']} scales {ref['kind']}/{ref['name']}, not in the file")

    # doubleface containers; the mid-tier's termination and rollout
    for o in objs:
        spec = pod_spec(o)
        if spec is None:
            continue
        for c in spec.get("initContainers", []) + spec["containers"]:
            if "/app/doubleface.jar" in (c.get("command") or []):
                check_container(f"{o['kind']}/{o['metadata']['name']}/{c['name']}", spec, c)
                counts["doubleface containers"] = counts.get("doubleface containers", 0) + 1
        comp = pod_labels(o).get("app.kubernetes.io/component")
        if o["kind"] == "Deployment" and comp == "midtier":
            ru = o["spec"]["strategy"].get("rollingUpdate", {})
            if ru.get("maxUnavailable") != 0:
                fail(f"Deployment {o['metadata']['name']}: maxUnavailable {ru.get('maxUnavailable')} (expected 0)")
            c = spec["containers"][0]
            grace = spec["terminationGracePeriodSeconds"]
            pre = c["lifecycle"]["preStop"]
            sleep = pre["sleep"]["seconds"] if "sleep" in pre else int(pre["exec"]["command"][1])
            drain = arg(c["args"], "--drain-timeout")
            stop = int(drain[:-1]) if drain else 10  # the μSuite commands: the CLI's close wait
            if grace <= sleep + stop:
                fail(f"Deployment {o['metadata']['name']}: grace {grace} s <= preStop {sleep} s + stop {stop} s")
            backends = arg(c["args"], "--shards") or arg(c["args"], "--leaves") or ""
            for host, port in re.findall(r"dns:///([^:,?]+):([0-9]+)", backends):
                labels = host.split(".")
                svc = services.get(labels[0])
                if svc is None and labels[1] in services:
                    # a StatefulSet pod's own name, POD.SERVICE.NS.svc…: POD must be one of its pods
                    svc = services[labels[1]]
                    sts = [w for w in workloads if w["kind"] == "StatefulSet" and w["spec"].get("serviceName") == labels[1]]
                    pods = {f"{w['metadata']['name']}-{k}" for w in sts for k in range(w["spec"]["replicas"])}
                    if labels[0] not in pods:
                        fail(f"Deployment {o['metadata']['name']}: backend dns:///{host} names no pod of a StatefulSet of Service {labels[1]}")
                if svc is None or svc["spec"].get("clusterIP") != "None":
                    fail(f"Deployment {o['metadata']['name']}: backend dns:///{host} is no headless Service of the file")
                elif int(port) not in [p["port"] for p in svc["spec"]["ports"]]:
                    fail(f"Deployment {o['metadata']['name']}: backend port {port} is not a port of Service {host}")
                else:
                    counts["leaf names"] = counts.get("leaf names", 0) + 1
            counts["midtier"] = counts.get("midtier", 0) + 1

    # Prometheus Operator monitors
    for o in by_kind.get("ServiceMonitor", []) + by_kind.get("PodMonitor", []):
        kind, name, spec = o["kind"], o["metadata"]["name"], o["spec"]
        if o["apiVersion"] != "monitoring.coreos.com/v1":
            fail(f"{kind} {name}: apiVersion {o['apiVersion']}")
        eps_key = "endpoints" if kind == "ServiceMonitor" else "podMetricsEndpoints"
        extra = set(spec) - {"selector", "namespaceSelector", eps_key}
        if extra:
            fail(f"{kind} {name}: unexpected spec fields {sorted(extra)}")
        sel = spec["selector"]["matchLabels"]
        if kind == "ServiceMonitor":
            targets = [s for s in services.values() if selects(sel, s["metadata"].get("labels", {}))]
            names = {p.get("name") for t in targets for p in t["spec"]["ports"]}
        else:
            targets = [w for w in workloads if selects(sel, pod_labels(w))]
            names = {n for t in targets for n in ports_of(t)}
        if len(targets) != 1:
            fail(f"{kind} {name} selects {len(targets)} objects of the file (expected 1)")
        for ep in spec[eps_key]:
            if set(ep) - MONITOR_ENDPOINT_KEYS:
                fail(f"{kind} {name}: unexpected endpoint fields {sorted(set(ep) - MONITOR_ENDPOINT_KEYS)}")
            if ep.get("port") not in names:
                fail(f"{kind} {name}: port {ep.get('port')} is not a port of what it selects")
            if ep.get("scheme") not in ("http", "https"):
                fail(f"{kind} {name}: scheme {ep.get('scheme')}")
            for k in ("interval", "scrapeTimeout"):
                if not DURATION.match(str(ep.get(k, ""))):
                    fail(f"{kind} {name}: {k} {ep.get(k)!r}")
            auth = ep.get("authorization", {})
            cred = auth.get("credentials", {})
            if auth.get("type") != "Bearer" or set(auth) != {"type", "credentials"} or set(cred) != {"name", "key"}:
                fail(f"{kind} {name}: authorization is not a Bearer token from a Secret key")
            elif cred["name"] not in secrets:
                fail(f"{kind} {name}: the token's Secret {cred['name']} is not in the file")
            tls = ep.get("tlsConfig")
            if tls is not None:
                if set(tls) - {"ca", "insecureSkipVerify"} or ("ca" in tls and set(tls["ca"]) != {"secret"}):
                    fail(f"{kind} {name}: unexpected tlsConfig {tls}")
                if ep["scheme"] != "https":
                    fail(f"{kind} {name}: tlsConfig with scheme {ep['scheme']}")
        counts["monitors"] = counts.get("monitors", 0) + 1

    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    if errors:
        for e in errors:
            print(f"  FAIL {path}: {e}")
        return 1
    print(f"  consistent: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
