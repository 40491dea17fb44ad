"""Checks of the loop model against closed forms and hand-computed cases (stdlib only).

Statistical checks use R independent replications with fixed seeds: the estimate is the mean over
replications, its standard error the replications' standard deviation / sqrt(R), and the check
is |estimate - exact| <= 4 standard errors (a false failure has probability < 1e-4 if the model is
right, and the seeds are fixed, so the outcome is reproducible). Each check also requires the
standard error to be small against the exact value, so a noisy estimate cannot pass by accident.
"""

import math
import os
import statistics
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import loopsim as ls  # noqa: E402

ZERO = ls.Costs(request=0, call=0, decode=0, respond=0)
Z_RTT = ls.Dist("const:0")


def replicate(fn, reps, base_seed):
    vals = [fn(base_seed + r) for r in range(reps)]
    return statistics.fmean(vals), statistics.stdev(vals) / math.sqrt(reps)


class ClosedForms(unittest.TestCase):

    def assert_close(self, est, se, exact, max_rel_se):
        self.assertLess(se, max_rel_se * exact, f"standard error {se:.2f} too large for {exact:.2f}")
        self.assertLessEqual(abs(est - exact), 4 * se,
                             f"estimate {est:.2f} vs exact {exact:.2f} (4 SE = {4 * se:.2f})")

    def test_mm1_mean_and_p99(self):
        # one loop, fanout 1, no overheads, exponential onReply work: an M/M/1 FCFS queue
        mean_s, lam_rel = 100.0, 0.5
        lam, mu = lam_rel / mean_s, 1 / mean_s
        wl = ls.Workload(lam * 1e6, [(1, 1.0)], Z_RTT, ls.Dist(f"exp:{mean_s}"))
        exact_mean, exact_p99 = ls.mm1_sojourn(lam, mu)
        res = {}
        for seed in range(8):
            r = ls.simulate(wl, ZERO, "fifo", 20000, 100 + seed)
            res[seed] = (r.mean(), r.p(99))
        m = [v[0] for v in res.values()]
        p = [v[1] for v in res.values()]
        self.assert_close(statistics.fmean(m), statistics.stdev(m) / math.sqrt(8), exact_mean, 0.03)
        self.assert_close(statistics.fmean(p), statistics.stdev(p) / math.sqrt(8), exact_p99, 0.03)

    def test_mm1_two_loops_random_assignment(self):
        # random connection assignment thins the Poisson stream: two independent M/M/1 at lam/2
        mean_s = 100.0
        lam = 1.2 / mean_s  # total; 0.6 per loop
        wl = ls.Workload(lam * 1e6, [(1, 1.0)], Z_RTT, ls.Dist(f"exp:{mean_s}"))
        exact_mean, _ = ls.mm1_sojourn(lam / 2, 1 / mean_s)
        est, se = replicate(lambda s: ls.simulate(wl, ZERO, "fifo", 20000, s, loops=2).mean(), 8, 300)
        self.assert_close(est, se, exact_mean, 0.03)

    def _two_class(self, policy):
        # class H: fanout 1, one Exp(100) reply; class L: fanout 2, two Exp(50) replies that arrive
        # together (S_L ~ Erlang-2, E = 100, E[S^2] = 6 * 50^2). With a tail cap of 1 the policy
        # chooses again after every reply; completion-first then serves complete one-reply groups
        # (H) before two-reply groups (L), and an L already begun has one reply left, level with an
        # H and ahead of it by arrival: non-preemptive priority, H over L.
        lam_each = 0.003  # per microsecond per class; rho = 0.6
        wl = ls.Workload(2 * lam_each * 1e6, [(1, 0.5), (2, 0.5)], Z_RTT, ls.Dist("exp:50"))
        # class H's reply work must be Exp(100): give fanout-1 requests one reply of twice the mean
        h = (lam_each, 100.0, 2 * 100.0 ** 2)
        low = (lam_each, 100.0, 6 * 50.0 ** 2)
        waits = {1: [], 2: []}
        for r in range(8):
            reqs = ls.generate(wl, 30000, 500 + r)
            reqs = [(a, k, rt, [w * 2 for w in wk] if k == 1 else wk) for a, k, rt, wk in reqs]
            res = ls.simulate(wl, ZERO, policy, len(reqs), 0, tail_limit=1, requests=reqs)
            for k in (1, 2):
                v = [x for x, f in zip(res.latencies_us, res.fanouts) if f == k]
                waits[k].append(statistics.fmean(v) - 100.0)  # sojourn - mean service
        return waits, h, low

    def test_two_class_priority_cobham(self):
        waits, h, low = self._two_class("cf")
        exact = ls.cobham_waits([h, low])
        for k, ex in zip((1, 2), exact):
            w = waits[k]
            self.assert_close(statistics.fmean(w), statistics.stdev(w) / math.sqrt(len(w)), ex, 0.05)

    def test_two_class_fifo_is_pollaczek_khinchine(self):
        waits, h, low = self._two_class("fifo")
        rho = h[0] * h[1] + low[0] * low[1]
        exact = (h[0] * h[2] + low[0] * low[2]) / 2 / (1 - rho)
        for k in (1, 2):
            w = waits[k]
            self.assert_close(statistics.fmean(w), statistics.stdev(w) / math.sqrt(len(w)), exact, 0.05)


class Deterministic(unittest.TestCase):

    COSTS = ls.Costs(request=40, call=5, decode=8, respond=35)
    REQ = [(1000.0, 3, [100.0, 300.0, 200.0], [10.0, 20.0, 30.0])]

    def test_one_request_exact_latency(self):
        # t=1000 read: 40 + 3*5 -> 1055, flush; replies ready 1155, 1355, 1255
        # 1155: decode 8, onReply 10 -> 1173; 1255: 8 + 30 -> 1293; 1355: 8 + 20 + respond 35 -> 1418
        lat, st = ls.run_loop(self.REQ, self.COSTS, "fifo")
        self.assertAlmostEqual(lat[0], 418.0)
        self.assertEqual((st.iterations, st.tail_batches, st.tail_replies), (4, 3, 3))

    def test_one_request_with_wakeup_latency(self):
        # a blocked loop starts 7 us after each event: the first wake-up delays every reply, the
        # last reply's wake-up delays the response, the middle one is absorbed
        costs = ls.Costs(request=40, call=5, decode=8, respond=35, wake=7)
        lat, _ = ls.run_loop(self.REQ, costs, "fifo")
        self.assertAlmostEqual(lat[0], 432.0)
        lat, _ = ls.run_loop(self.REQ, costs, "fifo", polling=True)
        self.assertAlmostEqual(lat[0], 418.0)

    def test_cf_equals_fifo_when_batches_hold_one_reply(self):
        # requests 10 ms apart, replies 1 ms apart: every tail batch holds one reply
        reqs = [(10000.0 * (i + 1), 1 + i % 4, [1000.0 * (c + 1) for c in range(1 + i % 4)],
                 [50.0] * (1 + i % 4)) for i in range(40)]
        a, sa = ls.run_loop(reqs, self.COSTS, "fifo")
        b, sb = ls.run_loop(reqs, self.COSTS, "cf")
        self.assertEqual(sa.tail_replies, sa.tail_batches)
        self.assertEqual(a, b)

    def test_cf_reorders_a_shared_batch(self):
        # two requests read together; A (fanout 3) replies first, B (fanout 1) in the same batch
        reqs = [(0.0, 3, [100.0, 100.0, 100.0], [100.0] * 3), (0.0, 1, [101.0], [100.0])]
        costs = ls.Costs(request=0, call=0, decode=0, respond=0)
        fifo, _ = ls.run_loop(reqs, costs, "fifo")
        cf, _ = ls.run_loop(reqs, costs, "cf")
        # reads at 0 (both), replies at 100-101: the loop's next select is at 100 (A's three)
        # then B's at 101 after A's batch: order is forced by readiness, no change
        self.assertEqual(fifo, cf)
        reqs = [(0.0, 3, [100.0, 100.0, 100.0], [100.0] * 3), (0.0, 1, [100.0], [100.0])]
        fifo, _ = ls.run_loop(reqs, costs, "fifo")
        cf, _ = ls.run_loop(reqs, costs, "cf")
        # all four ready at 100: fifo A A A B -> A 400, B 500; cf B A A A -> B 200, A 500
        self.assertEqual(fifo, [400.0, 500.0])
        self.assertEqual(cf, [500.0, 200.0])


class Ordering(unittest.TestCase):
    """The orders of io.doubleface.sched.CompletionFirstOrder's own examples."""

    def test_javadoc_example(self):
        a, b, c = 0, 1, 2
        batch = [(a, 0), (b, 0), (c, 0), (a, 1), (c, 1)]
        outstanding = {a: 2, b: 3, c: 2}
        self.assertEqual(ls.order_cf(batch, outstanding), [(a, 0), (a, 1), (c, 0), (c, 1), (b, 0)])
        self.assertEqual(ls.order_fifo(batch, outstanding), batch)

    def test_shortest_first_vs_arrival(self):
        a, c, d = 0, 2, 3
        batch = [(a, 0), (d, 0), (a, 1), (c, 0)]
        outstanding = {a: 2, c: 1, d: 2}
        self.assertEqual(ls.order_cf(batch, outstanding), [(c, 0), (a, 0), (a, 1), (d, 0)])
        self.assertEqual(ls.order_cfa(batch, outstanding), [(a, 0), (a, 1), (c, 0), (d, 0)])


class Parsing(unittest.TestCase):

    def test_mix_and_dist(self):
        self.assertEqual(ls.parse_mix("5/3"), [(5, 0.5), (3, 0.5)])
        self.assertEqual(ls.parse_mix("4"), [(4, 1.0)])
        self.assertAlmostEqual(ls.mean_fanout(ls.parse_mix("1:3,9:1")), 3.0)
        for spec in ("lognormal:200:1", "gamma:50:0.5", "hyper:100:2", "exp:10"):
            d = ls.Dist(spec)
            import random
            rng = random.Random(1)
            xs = [d.sample(rng) for _ in range(40000)]
            self.assertAlmostEqual(statistics.fmean(xs) / d.mean, 1.0, delta=0.05, msg=spec)
        with self.assertRaises(ValueError):
            ls.Dist("weibull:1")


if __name__ == "__main__":
    unittest.main()
