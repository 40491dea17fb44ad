"""Discrete-event model of doubleface's integrated event loop (the DoubleFace model).

One loop, in iterations, as Netty 4.2's SingleThreadIoEventLoop runs them under DoubleFaceModel:

  wait   if nothing is ready, block until the next event becomes ready, plus a wake-up latency
         (0 for a busy-polling loop, which instead holds its core);
  select snapshot every event ready at that instant: upstream requests that arrived, shard
         replies whose round trip has ended (what becomes ready later waits for the next select);
  I/O    in ready order: a request costs parse + plan + one encode per call (the calls are only
         buffered: PipelinedLoopClient flushes once per iteration, from a tail task); a reply
         costs its decode and joins the ReplyScheduler's batch;
  tail   tail tasks in registration order, as Netty runs them: the flush task (registered by the
         iteration's first send) and the ReplyScheduler task (registered by its first reply). The
         reply task orders the batch with the policy and runs each reply's onReply (the per-reply
         work); the reply that completes its request also pays merge + response, and the response
         leaves at once (HttpFanoutHandler flushes each response as it is parked);
  flush  every call buffered this iteration leaves; its reply is ready one round trip later.

Requests never change loop, so L loops are L independent copies of this model fed with their share
of the arrivals (connection assignment). Times are in microseconds.

Policies (mirroring io.doubleface.sched): "fifo" (FifoOrder: arrival order) and "cf"
(CompletionFirstOrder: requests whose last outstanding reply is in the batch first, fewest
replies in the batch first, ties by first arrival; then the rest in arrival order) and "cfa"
(CompletionFirstOrder.arrivalOrder(): complete groups by first arrival). "tail_limit" caps the
replies one tail task processes (the rest wait for the next iteration, ahead of newer replies);
the Java scheduler has no cap (None). A capped scheduler flushes before its tail task and reads
what became readable before it orders (it must see what is ready each time it chooses); a cap of 1
makes the policy choose again after every reply, which is how the tests turn the loop into a
textbook non-preemptive priority queue.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field

INF = float("inf")


# ---------------------------------------------------------------------------------------------
# Distributions: "const:X", "exp:MEAN", "lognormal:MEAN:CV", "gamma:MEAN:CV", "uniform:A:B",
# "hyper:MEAN:CV" (two-phase balanced-means hyperexponential, CV >= 1)
# ---------------------------------------------------------------------------------------------

class Dist:
    """A non-negative random variable from a spec string; sample(rng) draws one value."""

    def __init__(self, spec: str):
        self.spec = spec
        parts = spec.split(":")
        kind = parts[0]
        try:
            args = [float(p) for p in parts[1:]]
        except ValueError:
            raise ValueError(f"distribution '{spec}': numbers expected after the kind") from None
        self.kind = kind
        if kind == "const" and len(args) == 1:
            self.mean, self.cv = args[0], 0.0
        elif kind == "exp" and len(args) == 1:
            self.mean, self.cv = args[0], 1.0
        elif kind in ("lognormal", "gamma", "hyper") and len(args) == 2:
            self.mean, self.cv = args
            if kind == "hyper" and self.cv < 1.0:
                raise ValueError(f"distribution '{spec}': a hyperexponential needs CV >= 1")
        elif kind == "uniform" and len(args) == 2:
            a, b = args
            self.mean, self.cv = (a + b) / 2, ((b - a) / math.sqrt(12)) / ((a + b) / 2) if a + b else 0.0
            self.a, self.b = a, b
        else:
            raise ValueError(f"distribution '{spec}' (expected const:X, exp:MEAN, lognormal:MEAN:CV, "
                             "gamma:MEAN:CV, hyper:MEAN:CV or uniform:A:B)")
        if self.mean < 0 or self.cv < 0:
            raise ValueError(f"distribution '{spec}': negative mean or CV")
        if kind == "lognormal" and self.mean > 0:
            s2 = math.log(1 + self.cv ** 2)
            self.mu, self.sigma = math.log(self.mean) - s2 / 2, math.sqrt(s2)
        if kind == "gamma" and self.cv > 0:
            self.shape = 1 / self.cv ** 2
            self.scale = self.mean / self.shape
        if kind == "hyper":
            c2 = self.cv ** 2
            self.p = 0.5 * (1 + math.sqrt((c2 - 1) / (c2 + 1)))  # balanced means
            self.m1, self.m2 = self.mean / (2 * self.p), self.mean / (2 * (1 - self.p))

    def second_moment(self) -> float:
        return self.mean ** 2 * (1 + self.cv ** 2)

    def sample(self, rng: random.Random) -> float:
        k = self.kind
        if k == "const" or self.mean == 0:
            return self.mean
        if k == "exp":
            return rng.expovariate(1 / self.mean)
        if k == "lognormal":
            return rng.lognormvariate(self.mu, self.sigma) if self.cv > 0 else self.mean
        if k == "gamma":
            return rng.gammavariate(self.shape, self.scale) if self.cv > 0 else self.mean
        if k == "hyper":
            return rng.expovariate(1 / self.m1) if rng.random() < self.p else rng.expovariate(1 / self.m2)
        return rng.uniform(self.a, self.b)


def parse_mix(spec: str) -> list[tuple[int, float]]:
    """Fanout mix: "4" (fixed), "5/3" (the experiment's Lfan/Sfan: half 5, half 3), or
    "K:W,K:W,..." (fanout K with weight W). Returns [(fanout, probability)]."""
    spec = spec.strip()
    if ":" in spec:
        pairs = []
        for item in spec.split(","):
            k, w = item.split(":")
            pairs.append((int(k), float(w)))
    elif "/" in spec:
        pairs = [(int(k), 1.0) for k in spec.split("/")]
    else:
        pairs = [(int(spec), 1.0)]
    total = sum(w for _, w in pairs)
    if total <= 0 or any(k < 1 or w < 0 for k, w in pairs):
        raise ValueError(f"fanout mix '{spec}': fanouts >= 1 and positive weights expected")
    return [(k, w / total) for k, w in pairs]


def mean_fanout(mix) -> float:
    return sum(k * p for k, p in mix)


# ---------------------------------------------------------------------------------------------
# The model's parameters and the workload
# ---------------------------------------------------------------------------------------------

@dataclass
class Costs:
    """CPU costs on the loop, microseconds (defaults: docs/loopsim.md, calibration)."""
    request: float = 40.0       # read + parse + plan an upstream request
    call: float = 5.0           # encode one shard call into its connection's buffer
    decode: float = 8.0         # read + decode one shard reply (I/O phase)
    respond: float = 35.0       # merge + encode + write the response (after the last onReply)
    iteration: float = 0.0      # fixed cost of one loop iteration (select, tail-task bookkeeping)
    wake: float = 0.0           # latency from "ready" to running when the loop was blocked
    poll_detect: float = 0.0    # latency from "ready" to running when the loop busy-polls


@dataclass
class Workload:
    rate_rps: float             # total offered rate, requests per second (Poisson)
    mix: list                   # [(fanout, probability)]
    rtt: Dist                   # shard round trip, flush -> reply readable, microseconds: drawn
                                # once per request and shared by its calls (they leave in one
                                # flush and the shards answer them together)
    work: Dist                  # onReply CPU per reply, microseconds
    arrivals: str = "poisson"   # or "h2:C2" (two-phase hyperexponential interarrivals)
    jitter: Dist = field(default_factory=lambda: Dist("const:0"))  # added per call: the spread


def cpu_per_request(costs: Costs, wl: Workload) -> float:
    """Mean loop CPU per request (excluding per-iteration costs), microseconds."""
    k = mean_fanout(wl.mix)
    return costs.request + costs.respond + k * (costs.call + costs.decode + wl.work.mean)


def generate(wl: Workload, n: int, seed: int):
    """n requests: (arrival_us, fanout, [rtt per call], [work per call]). Drawn once per seed so
    that every policy sees the same requests (common random numbers: paired comparisons)."""
    rng = random.Random(seed)
    lam = wl.rate_rps / 1e6
    fanouts = [k for k, _ in wl.mix]
    weights = [p for _, p in wl.mix]
    h2 = None
    if wl.arrivals.startswith("h2"):
        c2 = float(wl.arrivals.split(":")[1]) if ":" in wl.arrivals else 4.0
        h2 = Dist(f"hyper:{1 / lam}:{math.sqrt(c2)}")
    t = 0.0
    out = []
    rtt, work, jitter = wl.rtt, wl.work, wl.jitter
    for _ in range(n):
        t += h2.sample(rng) if h2 else rng.expovariate(lam)
        k = fanouts[0] if len(fanouts) == 1 else rng.choices(fanouts, weights)[0]
        common = rtt.sample(rng)
        out.append((t, k, [common + jitter.sample(rng) for _ in range(k)], [work.sample(rng) for _ in range(k)]))
    return out


def assign(requests, loops: int, how: str, seed: int):
    """Connection assignment: "random" (each request's connection on a random loop: Poisson
    thinning) or "rr" (round-robin by request)."""
    parts = [[] for _ in range(loops)]
    if how == "rr":
        for i, r in enumerate(requests):
            parts[i % loops].append(r)
    elif how == "random":
        rng = random.Random(seed ^ 0x5EED)
        for r in requests:
            parts[rng.randrange(loops)].append(r)
    else:
        raise ValueError(f"assignment '{how}' (expected random or rr)")
    return parts


# ---------------------------------------------------------------------------------------------
# Reply ordering: the Java policies, on (request index, call index, work) tuples
# ---------------------------------------------------------------------------------------------

def order_fifo(batch, outstanding):
    return list(batch)


def _order_cf(batch, outstanding, shortest: bool):
    groups = {}                       # request -> its replies, dict order = first arrival
    for r in batch:
        g = groups.get(r[0])
        if g is None:
            groups[r[0]] = [r]
        else:
            g.append(r)
    if len(groups) == len(batch) and all(outstanding[q] > 1 for q in groups):
        return list(batch)            # one reply per request, none completes: arrival order
    complete = []
    for i, (q, g) in enumerate(groups.items()):
        if len(g) >= outstanding[q]:
            complete.append(((len(g), i) if shortest else (i,), g))
    complete.sort(key=lambda c: c[0])
    out = [r for _, g in complete for r in g]
    if len(out) < len(batch):
        out.extend(r for r in batch if len(groups[r[0]]) < outstanding[r[0]])
    return out


def order_cf(batch, outstanding):
    return _order_cf(batch, outstanding, True)


def order_cfa(batch, outstanding):
    return _order_cf(batch, outstanding, False)


POLICIES = {"fifo": order_fifo, "cf": order_cf, "completion-first": order_cf,
            "cfa": order_cfa, "completion-first-arrival": order_cfa}


# ---------------------------------------------------------------------------------------------
# One loop
# ---------------------------------------------------------------------------------------------

@dataclass
class LoopStats:
    iterations: int = 0
    wakeups: int = 0            # iterations that started from a blocked (or polling) wait
    events: int = 0             # requests + replies handled in I/O phases
    tail_batches: int = 0       # iterations whose reply task ran
    tail_replies: int = 0
    busy_us: float = 0.0
    span_us: float = 0.0

    def add(self, o: "LoopStats"):
        for f in ("iterations", "wakeups", "events", "tail_batches", "tail_replies", "busy_us", "span_us"):
            setattr(self, f, getattr(self, f) + getattr(o, f))


def run_loop(requests, costs: Costs, policy: str = "fifo", polling: bool = False, tail_limit=None):
    """Simulates one loop over its requests (sorted by arrival). Returns (latencies, stats) with
    latencies[i] = response time of requests[i] in microseconds (arrival -> response written)."""
    order = POLICIES[policy]
    n = len(requests)
    arr = [r[0] for r in requests]
    outstanding = [r[1] for r in requests]
    lat = [0.0] * n
    st = LoopStats()
    c_req, c_call, c_dec, c_resp = costs.request, costs.call, costs.decode, costs.respond
    c_iter = costs.iteration
    wait_cost = costs.poll_detect if polling else costs.wake
    ready = []                  # heap of (ready time, seq, request, call)
    seq = 0
    carried = []                # replies a capped tail task left for the next iteration
    i = 0
    t = 0.0
    busy = 0.0
    push, pop = heapq.heappush, heapq.heappop
    while i < n or ready or carried:
        if not carried:
            nxt = arr[i] if i < n else INF
            if ready and ready[0][0] < nxt:
                nxt = ready[0][0]
            if nxt > t:                      # nothing ready: block (or spin) until it is
                t = nxt + wait_cost
                st.wakeups += 1
        st.iterations += 1
        t0 = t
        t += c_iter
        # select: the snapshot of what is ready now, in ready order
        events = []
        while i < n and arr[i] <= t:
            events.append((arr[i], -1, i, 0))
            i += 1
        while ready and ready[0][0] <= t:
            events.append(pop(ready))
        if len(events) > 1:
            events.sort()
        st.events += len(events)
        sends = []
        batch = carried
        carried = []
        flush_first = None if not batch else False   # a carried batch re-registered its task
        for ev in events:
            q = ev[2]
            if ev[1] < 0:                    # upstream request: parse, plan, buffer K calls
                t += c_req + c_call * requests[q][1]
                sends.append(q)
                if flush_first is None:
                    flush_first = True
            else:                            # shard reply: decode, hand to the scheduler
                t += c_dec
                batch.append((q, ev[3]))
                if flush_first is None:
                    flush_first = False

        def flush(now):
            nonlocal seq
            for q in sends:
                rtts = requests[q][2]
                for c in range(len(rtts)):
                    seq += 1
                    push(ready, (now + rtts[c], seq, q, c))

        if sends and (flush_first or tail_limit is not None):
            flush(t)
            sends = []
        if tail_limit is not None:
            # a scheduler that chooses after every reply must see what is readable when it
            # chooses: it reads again (decoding what became ready) before ordering
            while ready and ready[0][0] <= t:
                ev = pop(ready)
                t += c_dec
                batch.append((ev[2], ev[3]))
                st.events += 1
        if batch:
            st.tail_batches += 1
            todo = order(batch, outstanding) if len(batch) > 1 else batch
            if tail_limit is not None and len(todo) > tail_limit:
                carried = todo[tail_limit:]
                # the carried replies keep their arrival order for the next policy call
                pos = {id(r): k for k, r in enumerate(batch)}
                carried.sort(key=lambda r: pos[id(r)])
                todo = todo[:tail_limit]
            st.tail_replies += len(todo)
            for q, c in todo:
                t += requests[q][3][c]
                outstanding[q] -= 1
                if outstanding[q] == 0:
                    t += c_resp
                    lat[q] = t - arr[q]
        if sends and not flush_first:
            flush(t)
        busy += t - t0
    st.busy_us = busy
    st.span_us = t
    return lat, st


# ---------------------------------------------------------------------------------------------
# Many loops, summaries
# ---------------------------------------------------------------------------------------------

def percentile(sorted_values, p):
    """The p-th percentile (0..100) of sorted values, nearest rank (as HdrHistogram reports)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, math.ceil(p / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


@dataclass
class Result:
    policy: str
    latencies_us: list
    fanouts: list
    stats: LoopStats = field(default_factory=LoopStats)

    def p(self, q, fanout=None):
        v = self.latencies_us if fanout is None else [x for x, k in zip(self.latencies_us, self.fanouts) if k == fanout]
        return percentile(sorted(v), q)

    def mean(self):
        return sum(self.latencies_us) / len(self.latencies_us)

    def replies_per_batch(self):
        return self.stats.tail_replies / self.stats.tail_batches if self.stats.tail_batches else 0.0

    def events_per_wakeup(self):
        return self.stats.events / self.stats.wakeups if self.stats.wakeups else float("nan")

    def utilization(self, loops):
        return self.stats.busy_us / (self.stats.span_us or 1)


def simulate(wl: Workload, costs: Costs, policy: str, n: int, seed: int, loops: int = 1,
             assignment: str = "random", warmup: float = 0.1, polling: bool = False, tail_limit=None,
             requests=None) -> Result:
    """n requests over `loops` loops; the first `warmup` fraction (by arrival) is dropped."""
    reqs = requests if requests is not None else generate(wl, n, seed)
    cut = reqs[int(len(reqs) * warmup)][0] if warmup > 0 and reqs else -1.0
    lats, fans = [], []
    total = LoopStats()
    for part in assign(reqs, loops, assignment, seed):
        lat, st = run_loop(part, costs, policy, polling, tail_limit)
        total.add(st)
        for r, x in zip(part, lat):
            if r[0] >= cut:
                lats.append(x)
                fans.append(r[1])
    return Result(policy, lats, fans, total)


# ---------------------------------------------------------------------------------------------
# Closed forms used by the tests and the report
# ---------------------------------------------------------------------------------------------

def mm1_sojourn(lam, mu):
    """M/M/1: mean sojourn and p99 sojourn (sojourn ~ Exp(mu - lam))."""
    return 1 / (mu - lam), -math.log(0.01) / (mu - lam)


def cobham_waits(classes):
    """Non-preemptive priority M/G/1 (Cobham 1954): classes in priority order, each
    (lam, E[S], E[S^2]); returns the mean waiting time in queue of each class."""
    w0 = sum(lam * s2 / 2 for lam, _, s2 in classes)
    out, sigma = [], 0.0
    for lam, s, _ in classes:
        prev = sigma
        sigma += lam * s
        out.append(w0 / ((1 - prev) * (1 - sigma)))
    return out
