#!/usr/bin/env python3
"""Where a thread's heap allocation goes, from a JFR recording's jdk.ObjectAllocationSample events:
estimated bytes per allocation site (the top frames) and per class, and bytes per request.

  python3 bench/jfr-alloc.py RECORDING.jfr [--thread io-0] [--rate REQ_PER_S] [--frames 4] [--jfr TOOL]

Recordings as docs/benchmarks.md took them: JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/jfr/%p.jfr,
settings=profile,delay=45s,duration=12s" bash bench/peers.sh --systems doubleface ... (45 s: inside the
generator's measured window of a 30-s warm-up). The first sample of each thread after the recording
starts carries everything that thread allocated before it (gigabytes, one sample): it is left out,
and said so. --rate (the run's achieved rate) adds bytes per request; --thread (a substring of the
thread's name, default: every thread) picks the I/O loop.
"""
import argparse, collections, json, os, subprocess, sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('recording')
    ap.add_argument('--thread', default='', help='only threads whose name contains this')
    ap.add_argument('--rate', type=float, default=0, help='achieved requests per second, for bytes per request')
    ap.add_argument('--frames', type=int, default=4, help='frames per site (default 4)')
    ap.add_argument('--top', type=int, default=30, help='sites and classes listed (default 30)')
    ap.add_argument('--jfr', default=os.path.join(os.environ.get('JAVA_HOME', '/usr'), 'bin', 'jfr'))
    a = ap.parse_args()
    if not os.path.isfile(a.recording) or os.path.getsize(a.recording) == 0:
        sys.exit(f'jfr-alloc: {a.recording}: no recording (empty or missing: did the JVM live past the delay?)')
    out = subprocess.run([a.jfr, 'print', '--json', '--events', 'jdk.ObjectAllocationSample', '--stack-depth',
                          str(max(a.frames, 1)), a.recording], capture_output=True, text=True, check=True).stdout
    events = json.loads(out)['recording']['events']
    seen, first_left = set(), 0
    sites, classes, threads = collections.Counter(), collections.Counter(), set()
    total, samples = 0, 0
    for e in events:
        v = e['values']
        name = (v.get('eventThread') or {}).get('javaName') or '?'
        if a.thread not in name:
            continue
        if name not in seen:  # carries the thread's allocation before the recording began
            seen.add(name)
            first_left += 1
            continue
        w = v['weight']
        total += w
        samples += 1
        threads.add(name)
        classes[v['objectClass']['name'].replace('/', '.')] += w
        frames = (v.get('stackTrace') or {}).get('frames') or []
        sites[' < '.join(f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
                         for f in frames[:a.frames]) or '(no stack)'] += w
    if not samples:
        sys.exit(f"jfr-alloc: no allocation samples{' on a thread matching ' + repr(a.thread) if a.thread else ''}")
    print(f"jdk.ObjectAllocationSample on {', '.join(sorted(threads))}: {samples} samples, "
          f"{total / 1e6:,.0f} MB estimated ({first_left} first sample(s) per thread left out: they carry what the "
          f"thread allocated before the recording began)")
    if a.rate > 0:
        span = recording_seconds(a)
        if span:
            print(f"over {span:.1f} s at {a.rate:,.0f} req/s: {total / span / a.rate:,.0f} B per request")
    print()
    print(f'share of the estimated bytes, by allocation site (top {a.frames} frames):')
    for s, w in sites.most_common(a.top):
        print(f'{w / total * 100:5.1f}%  {s}')
    print()
    print('by class:')
    for c, w in classes.most_common(a.top):
        print(f'{w / total * 100:5.1f}%  {c}')


def recording_seconds(a):
    """The recording's duration, from `jfr summary` (its 'Duration: N s' line)."""
    txt = subprocess.run([a.jfr, 'summary', a.recording], capture_output=True, text=True, check=True).stdout
    for line in txt.splitlines():
        line = line.strip()
        if line.startswith('Duration:'):
            val = line.split(':', 1)[1].strip().split()
            try:
                return float(val[0])
            except (ValueError, IndexError):
                return None
    return None


if __name__ == '__main__':
    main()
