"""Benchmark: exact MVA of Li et al. 2022's Async-SGD network at scale (a script, not a test).

Prints, in one run:

0. one configuration at a time: microseconds per call of
   :func:`perfmodel.queueing.async_throughput` with plain numbers (the one-class
   fast path; default ``discipline="hybrid"``, so one FCFS and, past rho_T, one
   PS solve) against :func:`perfmodel.queueing.async_solve` (the general path
   every scalar call took before) and a plain-Python reference loop, for K = 1,
   10, 100 -- aim: under 50 us for K <= 100; :func:`perfmodel.queueing.mva` of
   one class against the bare loop; :func:`perfmodel.queueing.mva_schweitzer`
   on distinct workers against a short numpy version of the same iteration.
   Timed in short windows (about ``--calls / K`` calls) and the median over
   many (``--scalar-repeats``), so that time slices given to other processes
   on a shared machine land in few windows;
1. homogeneous workers, K = 1,000: exact class-aggregated MVA (1,001 population
   vectors), timed for the network solve alone (:func:`perfmodel.queueing.mva`,
   the scalar one-class loop), for the general level-vectorized recursion
   forced on the same network, and for the whole hybrid model
   (:func:`perfmodel.queueing.async_solve`: FCFS and PS solves, eq. 5)
   -- aim: under 50 ms;
2. 16 workers of 16 distinct types: exact aggregated MVA (2^16 = 65,536
   population vectors) and the whole hybrid model -- aim: under 2 s;
3. the ratio against the paper's {0,1}^K recursion
   (:func:`perfmodel.queueing.mva_binary`) for the cases where it finishes
   (K up to ``--max-binary``), after checking both give the same throughput;
4. for reference, the approximations (Linearizer, Schweitzer-Bard) on many
   distinct workers, with their error where the exact answer is known.

Each time is the median of ``--repeats`` runs.

Usage::

    python tests/benchmarks/bench_mva.py [--repeats 7] [--max-binary 16] [--calls 200]
                                         [--scalar-repeats 101]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

from perfmodel import queueing as q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

# The running example: 100 MB model on 10 Gbps links (M/B = 80 ms), 5 ms update.
M, B, TS = 100e6, 1.25e9, 0.005
LINK = M / B


def network(delays: np.ndarray):
    """Service matrix and disciplines of the FCFS network of Fig. 5 for these workers."""
    service = np.tile([LINK, TS, LINK], (len(delays), 1))
    return service, ["fcfs", "ps", "fcfs"]


def plain_mva(z: float, s_link: float, s_server: float, k: int, fcfs: bool) -> tuple:
    """Exact one-class MVA of the Fig. 5 network (eqs. 1-2, residual S/2), bare floats."""
    g_link = g_server = x = r_link = 0.0
    for n in range(1, k + 1):
        r_link = s_link + (g_link if fcfs else s_link * g_link)
        r_server = s_server + s_server * g_server
        x = n / (z + 2 * r_link + r_server)
        g_link = x * (s_link * r_link - 0.5 * s_link * s_link) if fcfs else x * r_link
        g_server = x * r_server
    return x, r_link


def plain_async_throughput(m, b, tf, tb, ts, k, rho_t=0.6) -> float:
    """Eq. 5 on :func:`plain_mva`: the FCFS solution unless its link utilization > rho_T."""
    s_link = m / b
    x, _ = plain_mva(tf + tb, s_link, ts, k, True)
    if x * s_link > rho_t:
        x, _ = plain_mva(tf + tb, s_link, ts, k, False)
    return x


def short_schweitzer(z, s, n, fcfs, gamma=0.5, tol=1e-12):
    """Schweitzer-Bard in a few numpy lines (one copy of each station), no checks."""
    f_in, f_out = np.where(fcfs, 1.0, s), np.where(fcfs, s, 1.0)
    corr = gamma * np.where(fcfs, s * s, 0.0)
    x, r = n / (z + s.sum(axis=1)), s
    while True:
        c = x[:, None] * (f_out * r - corr)
        r = s + f_in * (c.sum(axis=0) - c / n[:, None])
        x_new = n / (z + r.sum(axis=1))
        if np.max(np.abs(x_new - x) / x_new) < 1e-12:
            return x_new
        x = x_new


def scalar_section(r: int, total_calls: int) -> bool:
    """Section 0; True when async_throughput stays under 50 us a call for K <= 100."""
    rng = np.random.default_rng(1)
    ok = True
    print(f"one configuration at a time (microseconds a call, median of {r} windows of "
          f"{total_calls} // K calls):")
    print(f"  {'call':<40} {'fast':>9} {'general':>9} {'plain':>9} {'general/fast':>13} "
          f"{'fast/plain':>11}")
    for k in (1, 10, 100):
        calls = max(2, total_calls // k)
        bws = (rng.uniform(1, 100, calls) * 1e9 / 8).tolist()   # 1-100 Gbps
        fast = [q.async_throughput(M, b, 0.1, 0.2, TS, k) for b in bws]
        general = [q.async_solve(M, b, 0.1, 0.2, TS, k).throughput for b in bws]
        plain = [plain_async_throughput(M, b, 0.1, 0.2, TS, k) for b in bws]
        assert fast == general, "fast path differs from async_solve"
        assert np.allclose(fast, plain, rtol=1e-12, atol=0)
        t_fast, _ = median_seconds(
            lambda k=k, bws=bws: [q.async_throughput(M, b, 0.1, 0.2, TS, k) for b in bws], r)
        t_gen, _ = median_seconds(
            lambda k=k, bws=bws: [q.async_solve(M, b, 0.1, 0.2, TS, k).throughput for b in bws],
            r)
        t_plain, _ = median_seconds(
            lambda k=k, bws=bws: [plain_async_throughput(M, b, 0.1, 0.2, TS, k) for b in bws], r)
        us = [1e6 * t / calls for t in (t_fast, t_gen, t_plain)]
        ok = ok and us[0] < 50
        label = f"async_throughput(K={k}), hybrid"
        print(f"  {label:<40} {us[0]:9.2f} {us[1]:9.2f} {us[2]:9.2f} {us[1] / us[0]:12.1f}x "
              f"{us[0] / us[2]:10.2f}x")
    print(f"  async_throughput, K <= 100: aim < 50 us a call: {'ok' if ok else 'MISSED'}")
    disc = ["fcfs", "ps", "fcfs"]
    fcfs = np.array([True, False, True])
    for k in (10, 100):
        svc = np.array([[LINK, TS, LINK]])
        res = q.mva([0.3], svc, [k], disc)
        assert abs(res.total_throughput / plain_mva(0.3, LINK, TS, k, True)[0] - 1) < 1e-12
        t_fast, _ = median_seconds(lambda k=k, svc=svc: q.mva([0.3], svc, [k], disc), r)
        t_plain, _ = median_seconds(lambda k=k: plain_mva(0.3, LINK, TS, k, True), r)
        label = f"mva, one class of K={k} (MVAResult)"
        print(f"  {label:<40} {1e6 * t_fast:9.2f} {'':>9} {1e6 * t_plain:9.2f} {'':>13} "
              f"{t_fast / t_plain:10.2f}x")
    for kk in (16, 128, 1000):
        delays = rng.uniform(0.06, 0.9, kk)
        svc = np.tile([LINK, TS, LINK], (kk, 1))
        ones = np.ones(kk)
        res = q.mva_schweitzer(delays, svc, None, disc)
        assert np.allclose(res.throughput, short_schweitzer(delays, svc, ones, fcfs),
                           rtol=1e-12, atol=0)
        t_fast, _ = median_seconds(lambda d=delays, s=svc: q.mva_schweitzer(d, s, None, disc),
                                   r)
        t_short, _ = median_seconds(lambda d=delays, s=svc, o=ones:
                                    short_schweitzer(d, s, o, fcfs), r)
        label = f"mva_schweitzer, {kk} distinct workers"
        print(f"  {label:<40} {1e6 * t_fast:9.1f} {'':>9} {1e6 * t_short:9.1f} {'':>13} "
              f"{t_fast / t_short:10.2f}x   ({res.states} iterations; plain = short numpy)")
    print()
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-binary", type=int, default=16,
                        help="largest K for the {0,1}^K recursion (2^K states, memory ~ K 2^K)")
    parser.add_argument("--calls", type=int, default=200,
                        help="section 0: a window times calls // K calls (default 200)")
    parser.add_argument("--scalar-repeats", type=int, default=101,
                        help="section 0: timed windows (median; default 101)")
    args = parser.parse_args(argv)
    r = args.repeats
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()} {platform.system()}; median of {r} runs")
    print()
    scalar_ok = scalar_section(args.scalar_repeats, args.calls)

    # 1. homogeneous K = 1000
    k = 1000
    service, disc = network(np.array([0.3]))
    t_mva, res = median_seconds(lambda: q.mva([0.3], service, [k], disc), r)
    z, s, n, fcfs, cp, gamma = q._check_network([0.3], service, [k], disc, None,
                                                "deterministic")
    t_vec, (x_vec, _) = median_seconds(lambda: q._exact_levels(z, s, n, fcfs, cp, gamma), r)
    assert abs(x_vec.sum() / res.total_throughput - 1) < 1e-12
    t_solve, sol = median_seconds(lambda: q.async_solve(M, B, 0.1, 0.2, TS, k), r)
    print(f"homogeneous K = {k} ({res.states} population vectors):")
    print(f"  exact MVA, one-class loop        {1e3 * t_mva:9.3f} ms   X = "
          f"{res.total_throughput:.4f} steps/s")
    print(f"  exact MVA, level-vectorized      {1e3 * t_vec:9.3f} ms")
    print(f"  async_solve (hybrid, eq. 5)      {1e3 * t_solve:9.3f} ms   "
          f"aim < 50 ms: {'ok' if t_solve < 0.05 else 'MISSED'}")
    print()

    # 2. 16 workers of 16 types
    rng = np.random.default_rng(0)
    tf16 = rng.uniform(0.02, 0.3, 16)
    delays16 = 3 * tf16
    service16, _ = network(delays16)
    t16, res16 = median_seconds(lambda: q.mva(delays16, service16, None, disc), r)
    t16s, sol16 = median_seconds(lambda: q.async_solve(M, B, tf16, 2 * tf16, TS, 16), r)
    print(f"16 workers of 16 types ({res16.states} population vectors):")
    print(f"  exact MVA (FCFS network)         {1e3 * t16:9.3f} ms")
    print(f"  async_solve (hybrid, eq. 5)      {1e3 * t16s:9.3f} ms   "
          f"aim < 2 s: {'ok' if t16s < 2 else 'MISSED'}")
    print()

    # 3. ratio against the {0,1}^K recursion
    print("{0,1}^K recursion (paper) vs class-aggregated (ours), FCFS network, exact:")
    print(f"  {'K':>3} {'types':>5} {'states 2^K':>11} {'states ours':>12} "
          f"{'binary ms':>11} {'ours ms':>9} {'ratio':>9}")
    for kk in (4, 8, 12, args.max_binary):
        for kind in ("homogeneous", "distinct"):
            delays = np.full(kk, 0.3) if kind == "homogeneous" else rng.uniform(0.06, 0.9, kk)
            svc, _ = network(delays)
            types, inverse, pops = np.unique(delays, return_inverse=True, return_counts=True)
            reps = max(1, r if kk <= 12 else 3)
            tb, rb = median_seconds(lambda d=delays, s=svc: q.mva_binary(d, s, disc), reps)
            ta, ra = median_seconds(
                lambda t=types, s=svc, p=pops: q.mva(t, s[:len(t)], p, disc), reps)
            assert abs(rb.total_throughput / ra.total_throughput - 1) < 1e-11
            print(f"  {kk:>3} {len(types):>5} {2 ** kk:>11,} {ra.states:>12,} "
                  f"{1e3 * tb:>11.3f} {1e3 * ta:>9.3f} {tb / ta:>8.1f}x")
    print()

    # 4. approximations
    print("approximate MVA on distinct workers (FCFS network):")
    for kk in (16, 128, 1000):
        delays = rng.uniform(0.06, 0.9, kk)
        svc, _ = network(delays)
        exact = q.mva(delays, svc, None, disc).total_throughput if kk <= 16 else None
        for name, fn in (("linearizer", q.mva_linearizer), ("schweitzer", q.mva_schweitzer)):
            if name == "linearizer" and kk > q.MAX_LINEARIZER_TYPES:
                continue
            t, res_a = median_seconds(lambda f=fn, d=delays, s=svc: f(d, s, None, disc), 3)
            err = "" if exact is None else \
                f"   error {100 * (res_a.total_throughput / exact - 1):+.3f} %"
            print(f"  K = {kk:>4} {name:<11} {1e3 * t:9.3f} ms{err}")
    print()
    print(f"docs/benchmarks.md: exact MVA, K = 1,000 identical workers: {1e3 * t_solve:.1f} ms for the "
          f"hybrid model ({1e3 * t_mva:.2f} ms per solve); 16 workers of 16 types: "
          f"{1e3 * t16s:.0f} ms (65,536 states); {{0,1}}^16 recursion: see table.")
    if not scalar_ok:
        print("scalar async_throughput above target (< 50 us a call for K <= 100)",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
