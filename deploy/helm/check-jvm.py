#!/usr/bin/env python3
"""Starts the JVM of this machine with each rendered doubleface container's JVM flags, as if in a
container with that memory limit (-XX:MaxRAM=LIMIT, heap pre-touch off, -version), and checks what
it computes: the heap (MaxHeapSize) is jvm.heapPercent of the limit, heap + direct memory stay
within 90% of it, and -XX:ActiveProcessorCount is the CPU limit. A flag this JVM does not know
fails the start. This JVM is not necessarily the image's (Temurin 21).

Usage: check-jvm.py JAVA FILE...; exits 1 on a failure.
"""
import math
import re
import subprocess
import sys

import yaml

UNITS = {"": 1 / 1048576, "Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1048576,
         "k": 1e3 / 1048576, "M": 1e6 / 1048576, "G": 1e9 / 1048576, "T": 1e12 / 1048576}


def mib(q):
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(q))
    return int(float(m.group(1)) * UNITS[m.group(2)])


def main():
    java, files = sys.argv[1], sys.argv[2:]
    seen, failed = {}, 0
    for f in files:
        for d in yaml.safe_load_all(open(f)):
            if not d or d["kind"] not in ("Deployment", "StatefulSet", "Job"):
                continue
            for c in d["spec"]["template"]["spec"]["containers"]:
                cmd = c.get("command") or []
                if "/app/doubleface.jar" not in cmd:
                    continue
                flags = cmd[1:cmd.index("-jar")]
                limit = mib(c["resources"]["limits"]["memory"])
                key = (tuple(flags), limit)
                if key in seen:
                    continue
                seen[key] = f"{d['kind']}/{d['metadata']['name']}"
                run = subprocess.run([java, *flags, f"-XX:MaxRAM={limit}m", "-XX:-AlwaysPreTouch",
                                      "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True)
                final = dict(re.findall(r"^\s*\S+\s+(\w+)\s+:?=\s+(\S+)", run.stdout, re.M))
                problems = []
                if run.returncode != 0:
                    problems.append("the JVM did not start: " + run.stderr.strip().splitlines()[0])
                else:
                    heap = int(final["MaxHeapSize"]) / 1048576
                    direct = int(final["MaxDirectMemorySize"]) / 1048576
                    pct = int(next(a for a in flags if a.startswith("-XX:MaxRAMPercentage=")).split("=")[1])
                    if abs(heap - limit * pct / 100) > limit * 0.02:
                        problems.append(f"heap {heap:.0f} MiB, expected {pct}% of {limit} MiB")
                    if heap + direct > limit * 0.9:
                        problems.append(f"heap {heap:.0f} + direct {direct:.0f} MiB > 90% of {limit} MiB")
                    cpu = c["resources"]["limits"].get("cpu")
                    apc = [a for a in flags if a.startswith("-XX:ActiveProcessorCount=")]
                    if cpu is not None and apc:
                        q = str(cpu)
                        want = max(1, math.ceil(float(q[:-1]) / 1000 if q.endswith("m") else float(q)))
                        if int(final["ActiveProcessorCount"]) != want:
                            problems.append(f"ActiveProcessorCount {final['ActiveProcessorCount']}, CPU limit {cpu}")
                what = f"{seen[key]} (limit {limit} MiB)"
                if problems:
                    failed += 1
                    print(f"  FAIL JVM flags of {what}: " + "; ".join(problems))
                else:
                    cpus = (f"{final['ActiveProcessorCount']} CPUs" if final.get("ActiveProcessorCount", "-1") != "-1"
                            else "CPUs from the container")
                    print(f"  JVM flags of {what}: heap {heap:.0f} MiB, direct {direct:.0f} MiB, {cpus}, {flags[0]}")
    print(f"  {len(seen) - failed} of {len(seen)} JVM flag sets start this JVM as intended")
    return 1 if failed or not seen else 0


if __name__ == "__main__":
    sys.exit(main())
