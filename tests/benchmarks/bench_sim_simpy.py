"""Benchmark: the trace-driven simulator against a plain SimPy model of the same workload.

A script, not a test; SimPy is a benchmark dependency only (``pip install
simpy``, or the ``bench`` extra).  The workload is a coarse trace, one op of
each kind per step: the worker pulls the parameters (downlink, ``SIZE``
bytes), computes (``T_C``), pushes its gradient (uplink, ``SIZE`` bytes) and the
server applies it (``T_S``), each op after the one before; K workers share the
server's two links.  Every combination of async/sync and PS/FCFS sharing.

The SimPy model is written the usual way (a process per worker, ``timeout``
for computations, ``simpy.Resource`` for an FCFS link, events for the
barrier), with one refinement that keeps it fair at large K: a PS link is the
same virtual-clock processor-sharing queue the kernel uses (a heap of finish
tags, one pending wake-up), so its cost per event grows as log K too, not as
K.  It takes the simulator's own seeded jitter factors
(:func:`perfmodel.sim.engine.draws`), so both give the same throughput; the
script prints their relative difference: FCFS and sync runs agree to
rounding; in long async PS runs the trajectories drift apart (the dynamics
amplify any difference of rounding, here ``dt / n`` against the kernel's
``dt * (1 / n)``), and the throughputs differ by up to a few percent, within
the run-to-run spread of the sampled jitter.

Then, per K in 16, 256, 1,024, 4,096 and case, the median CPU time (``time.process_time``)
of each engine and of SimPy, the ratios (SimPy time over engine time: above 1
the engine is faster), and the cost per event (one event = one op
completion), to show how it grows with K.  For PS the script also times the
textbook SimPy link, which updates every active transfer at every change
(O(K) per event), up to ``--plain`` workers.

Usage::

    python tests/benchmarks/bench_sim_simpy.py [--events 80000] [--repeats 3]
                                               [--workers 16 256 1024 4096]
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

from perfmodel.sim import Op, Step, Trace, numba_available, simulate
from perfmodel.sim.engine import draws

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

try:
    import simpy
except ImportError:                 # pragma: no cover - a benchmark dependency only
    simpy = None

SIZE = 1e8          # bytes pulled and pushed per step
B = 1.25e9          # link bandwidth, bytes/s: SIZE / B = 0.08 s
T_C = 0.3           # compute, s
T_S = 0.01          # update on the server, s
CASES = (("async", "ps"), ("async", "fcfs"), ("sync", "ps"), ("sync", "fcfs"))


def coarse_trace() -> Trace:
    return Trace((Step((Op("pull", "downlink", bytes=SIZE),
                        Op("compute", "worker", seconds=T_C, deps=("pull",)),
                        Op("push", "uplink", bytes=SIZE, deps=("compute",)),
                        Op("update", "ps", seconds=T_S, deps=("push",)))),))


# ---------------------------------------------------------------------- the SimPy model

class PSLink:
    """A link shared equally by its active transfers (processor sharing), in SimPy.

    A virtual clock V goes up at the rate each transfer gets (1/n of the link);
    a transfer of work c joining at V ends when V reaches ``V + c``; one
    pending timeout wakes the link at the earliest such tag (a newer one makes
    older ones stale).
    """

    def __init__(self, env):
        self.env = env
        self.v = 0.0
        self.t = 0.0
        self.heap: list = []
        self.seq = 0
        self.gen = 0

    def _advance(self):
        now = self.env.now
        if self.heap:
            self.v += (now - self.t) / len(self.heap)
        self.t = now

    def transfer(self, work):
        """An event that succeeds when ``work`` seconds of the full link have been sent."""
        self._advance()
        if not self.heap:
            self.v = 0.0
        done = self.env.event()
        self.seq += 1
        heapq.heappush(self.heap, (self.v + work, self.seq, done))
        self._wake()
        return done

    def _wake(self):
        self.gen += 1
        if self.heap:
            delay = (self.heap[0][0] - self.v) * len(self.heap)
            timeout = self.env.timeout(delay if delay > 0.0 else 0.0)
            timeout.callbacks.append(self._make_fire(self.gen))

    def _make_fire(self, gen):
        def fire(_event):
            if gen == self.gen:
                tag, _, done = heapq.heappop(self.heap)
                self.v = tag
                self.t = self.env.now
                done.succeed()
                self._wake()
        return fire


class PlainPSLink:
    """The textbook processor-sharing link: every change updates every transfer, O(K).

    At each arrival and departure each active transfer's remaining work goes
    down by the elapsed time over n, and one timeout is set for the smallest.
    """

    def __init__(self, env):
        self.env = env
        self.t = 0.0
        self.active: dict = {}      # done event -> [remaining work, start sequence]
        self.seq = 0
        self.gen = 0

    def _advance(self):
        now = self.env.now
        n = len(self.active)
        if n:
            dt = (now - self.t) / n
            for entry in self.active.values():
                entry[0] -= dt
        self.t = now

    def transfer(self, work):
        self._advance()
        done = self.env.event()
        self.seq += 1
        self.active[done] = [work, self.seq]
        self._wake()
        return done

    def _wake(self):
        self.gen += 1
        if self.active:
            first = min(self.active.items(), key=lambda kv: (kv[1][0], kv[1][1]))
            delay = first[1][0] * len(self.active)
            timeout = self.env.timeout(delay if delay > 0.0 else 0.0)
            timeout.callbacks.append(self._make_fire(self.gen, first[0]))

    def _make_fire(self, gen, done):
        def fire(_event):
            if gen == self.gen:
                self._advance()
                del self.active[done]
                done.succeed()
                self._wake()
        return fire


def simpy_model(K, steps, mode, sharing, factors, plain=False):
    """Run the SimPy model; return each worker's step end times, shape (K, steps)."""
    env = simpy.Environment()
    work = SIZE / B
    if sharing == "ps":
        link = PlainPSLink if plain else PSLink
        down, up = link(env), link(env)
    else:
        down, up = simpy.Resource(env, 1), simpy.Resource(env, 1)
    ends = np.zeros((K, steps))
    barrier = {"n": 0, "go": [env.event() for _ in range(K)]}

    def send(link):
        if sharing == "ps":
            yield link.transfer(work)
        else:
            with link.request() as req:
                yield req
                yield env.timeout(work)

    def worker(w):
        for k in range(steps):
            f = factors[w, k]
            yield from send(down)
            yield env.timeout(T_C * f)
            yield from send(up)
            yield env.timeout(T_S * f)
            ends[w, k] = env.now
            if mode == "sync":
                go = barrier["go"][w]
                barrier["n"] += 1
                if barrier["n"] == K:          # the last one releases all, in worker order
                    barrier["n"] = 0
                    gos = barrier["go"]
                    barrier["go"] = [env.event() for _ in range(K)]
                    for g in gos:
                        g.succeed()
                yield go

    for w in range(K):
        env.process(worker(w))
    env.run()
    return ends


def throughput(ends, mode, warm):
    """Steps/s as :class:`perfmodel.sim.SimResult` defines it."""
    K, N = ends.shape
    n = N - warm
    if mode == "async":
        t0 = ends[:, warm - 1] if warm else np.zeros(K)
        return float((n / (ends[:, -1] - t0)).sum())
    barrier = ends.max(axis=0)
    t0 = barrier[warm - 1] if warm else 0.0
    return float(K * n / (barrier[-1] - t0))


# ---------------------------------------------------------------------- timing

def cpu_median(fn, repeats: int):
    """Median CPU seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    return median_seconds(fn, repeats, clock=time.process_time)


def run_case(trace, K, steps, mode, sharing, engines, args, per_event) -> float:
    """Time one case with every engine and SimPy, print a row; the throughput difference."""
    warm = 1
    _, factors, _, _ = draws([trace], [K], steps, 0, mode, None)
    t_simpy, ends = cpu_median(lambda: simpy_model(K, steps, mode, sharing, factors),
                               args.repeats)
    tp_simpy = throughput(ends, mode, warm)
    times = {}
    res = None
    for e in engines:
        times[e], res = cpu_median(lambda e=e: simulate(trace, K, B, mode, sharing, steps=steps,
                                                        warmup=warm, seed=0, engine=e),
                                   args.repeats)
    rel = abs(res.throughput - tp_simpy) / tp_simpy
    ev = res.events
    for e, t in list(times.items()) + [("simpy", t_simpy)]:
        per_event[e].setdefault(K, []).append(t / ev)
    nb = times.get("numba", math.nan)
    row = (f"{K:5d} {mode + '/' + sharing:<11} {steps:5d} {ev:7d} {rel:13.2e} "
           f"{t_simpy:8.3f} {times['python']:8.3f} {nb:8.3f} "
           f"{t_simpy / times['python']:8.2f} {t_simpy / nb:8.1f}")
    if args.plain and sharing == "ps" and K <= args.plain:
        t_plain, ends = cpu_median(lambda: simpy_model(K, steps, mode, sharing, factors,
                                                       plain=True), args.repeats)
        rel_plain = abs(throughput(ends, mode, warm) - res.throughput) / res.throughput
        row += (f"  {t_plain:8.3f} {t_plain / times['python']:6.2f} {t_plain / nb:7.1f}"
                f" {rel_plain:9.2e}")
    print(row)
    return rel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=80_000,
                    help="op completions per run (steps = events / 4 K, at least 4)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[16, 256, 1024, 4096])
    ap.add_argument("--plain", type=int, default=1024, metavar="K",
                    help="also time the textbook O(K) SimPy PS link up to this K (0: never)")
    args = ap.parse_args(argv)
    if simpy is None:
        print("bench_sim_simpy: SimPy is not installed (pip install simpy)")
        return 1
    trace = coarse_trace()
    fast = numba_available()
    print(f"perfmodel.sim vs SimPy {simpy.__version__}: coarse trace (pull {SIZE / B:.2f} s, "
          f"compute {T_C} s, push {SIZE / B:.2f} s, update {T_S} s), ~{args.events:,} op "
          f"completions per run, CPU-time medians of {args.repeats}; Python "
          f"{platform.python_version()}, numba {'yes' if fast else 'no'}")
    engines = ["python"] + (["numba"] if fast else [])
    if fast:
        simulate(trace, 2, B, steps=2, warmup=0, engine="numba")   # compile or load the cache
    print(f"{'K':>5} {'case':<11} {'steps':>5} {'events':>7} {'tput rel.diff':>13} "
          f"{'simpy s':>8} {'python s':>8} {'numba s':>8} {'simpy/py':>8} {'simpy/nb':>8}"
          f"{'  plain-PS simpy s, /py, /nb, tput rel.diff' if args.plain else ''}")
    per_event: dict = {e: {} for e in engines + ["simpy"]}
    worst = 0.0
    for K in args.workers:
        steps = max(4, args.events // (4 * K))
        for mode, sharing in CASES:
            worst = max(worst, run_case(trace, K, steps, mode, sharing, engines, args,
                                        per_event))
    print(f"throughput: simulator vs SimPy, largest relative difference {worst:.2e}")
    print("cost per event, us (median over the four cases), and its growth from the smallest "
          "K (next to log2 K / log2 K0):")
    k0 = args.workers[0]
    for e, by_k in per_event.items():
        base = statistics.median(by_k[k0])
        cells = []
        for K in args.workers:
            c = statistics.median(by_k[K])
            cells.append(f"K={K}: {c * 1e6:6.3f} (x{c / base:4.2f}; log x"
                         f"{math.log2(K) / math.log2(k0):4.2f})")
        print(f"  {e:<6} " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
