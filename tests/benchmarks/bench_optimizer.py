"""Benchmark: search time of Yan et al. 2015's optimizer against N and L (a script, not a test).

Prints, in one run:

* the search time of :func:`optimizer.dp.optimize` (the whole space of N
  machines: every useful (N_ps, N_mr, N_wr), each with its dynamic program
  over layers) for Yan et al. 2015's ImageNet-22K DNN cut to its first L
  layers, N in (20, 64, 256, 1024) and L in (2, 4, 8), on ``zoo:yan2015``
  (16 cores);
  each run in a fresh process (cold caches), the median of ``--repeats``
  runs (one when a run takes more than ``--once-above`` seconds); a run that
  passes ``--budget`` seconds is stopped, reported as such, and the larger N
  of that L are skipped;
* the empirical growth exponent k of time ~ N^k (least-squares slope of
  log time on log N over the sizes that finished), against the paper's
  O(L K N^5 log^2 N);
* the speedup of the program over the brute force of
  :mod:`optimizer.exhaustive` (``optimize(..., exhaustive=True)``, same
  answer) on the small cases where the brute force finishes (3-8 machines,
  2-3 layers, 1-2 cores);
* with ``--reference TREE`` (a checkout of the project, e.g. the main
  branch before a change), whether the same search run from that tree's
  ``optimizer`` gives the same ranking (configurations and T_epoch), for
  every (L, N) of the table: the check that a faster program still gives
  the answers it gave;
* one line to paste into docs/benchmarks.md.

``--large`` runs N in (1024, 2048, 4096) once each (budget 600 s unless
given), for the growth beyond 1,024 machines.

Usage::

    python tests/benchmarks/bench_optimizer.py [--repeats 3] [--budget 120]
                                               [--machines 20 64 256 1024] [--layers 2 4 8]
                                               [--large] [--reference TREE]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import platform
import statistics
import time

MACHINES = (20, 64, 256, 1024)
LARGE = (1024, 2048, 4096)
LAYERS = (2, 4, 8)
#: (machines, layers, cores) where the brute force finishes within about a minute.
SMALL = ((3, 2, 2), (4, 3, 1), (4, 3, 2), (6, 2, 2), (6, 3, 1), (8, 2, 2))
SAMPLES = 15_000_000


def _problem(layers: int, machines: int, cores: int | None = None):
    from perfmodel import zoo
    from perfmodel.layerwise import LayerWise
    from perfmodel.specs import DNN

    full = zoo.load("adam-imagenet22k")
    dnn = DNN(name=f"{full.name}[:{layers}]", layers=full.layers[:layers])
    cluster = zoo.cluster("yan2015").replace(machines=machines)
    if cores is not None:
        cluster = cluster.replace(cores=cores)
    return LayerWise(working_set="layer"), dnn, cluster


def _run(conn, machines: int, layers: int, cores, exhaustive: bool, tree=None) -> None:
    """Child process: one search, timed inside (imports and process start excluded); with
    ``tree``, the ``optimizer`` and ``perfmodel`` of that checkout."""
    if tree is not None:
        import sys

        sys.path.insert(0, tree)
    from optimizer import dp

    model, dnn, cluster = _problem(layers, machines, cores)
    start = time.perf_counter()
    result = dp.optimize(model, dnn, cluster, epoch_samples=SAMPLES, exhaustive=exhaustive)
    seconds = time.perf_counter() - start
    best = result.best.config
    conn.send({"seconds": seconds, "score": result.best.score,
               "triples": result.meta.get("solved", result.meta["triples"]),
               "pruned": result.meta.get("pruned", 0), "evaluated": result.n_evaluated,
               "best": f"{best.n_workers}/{best.n_replicas}/{best.n_ps}",
               "ranked": [(f"{c.config.n_workers}/{c.config.n_replicas}/{c.config.n_ps}",
                           c.score) for c in result.ranked],
               "module": dp.__file__})
    conn.close()


def timed(machines: int, layers: int, *, cores=None, exhaustive=False, budget=None, tree=None):
    """One cold search in a child process; None if it passes ``budget`` seconds (then stopped)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run, args=(child, machines, layers, cores, exhaustive, tree))
    proc.start()
    child.close()
    # the child's own clock excludes its start-up; allow a few seconds of start-up here
    got = parent.recv() if parent.poll(None if budget is None else budget + 15) else None
    if got is None:
        proc.terminate()  # our own child, by its handle
    proc.join()
    if got is not None and budget is not None and got["seconds"] > budget:
        return None
    return got


def median_run(machines: int, layers: int, repeats: int, once_above: float, budget: float,
               **kw):
    runs = []
    for _ in range(repeats):
        got = timed(machines, layers, budget=budget, **kw)
        if got is None:
            return None, runs
        runs.append(got)
        if got["seconds"] > once_above:
            break
    return statistics.median(r["seconds"] for r in runs), runs


def slope(points) -> float | None:
    """Least-squares slope of log(time) on log(N)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds; a search past it is stopped (default 120, 600 with --large)")
    parser.add_argument("--once-above", type=float, default=20.0,
                        help="run once only when a search takes longer (default 20 s)")
    parser.add_argument("--machines", type=int, nargs="+", default=list(MACHINES))
    parser.add_argument("--layers", type=int, nargs="+", default=list(LAYERS))
    parser.add_argument("--no-exhaustive", action="store_true")
    parser.add_argument("--large", action="store_true",
                        help=f"N in {LARGE}, one run each, budget 600 s unless --budget")
    parser.add_argument("--reference", metavar="TREE",
                        help="a checkout whose optimizer must give the same rankings")
    args = parser.parse_args(argv)
    if args.large:
        if args.machines == list(MACHINES):
            args.machines = list(LARGE)
        args.repeats = 1
        args.no_exhaustive = True
    if args.budget is None:
        args.budget = 600.0 if args.large else 120.0

    print(f"bench_optimizer: optimizer.dp.optimize on adam-imagenet22k (first L layers), "
          f"zoo:yan2015 (16 cores), N_sample {SAMPLES:,}")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"cold process per run, median of {args.repeats} (1 above {args.once_above:g} s); "
          f"budget {args.budget:g} s per search\n")
    print(f"{'L':>2} {'N':>5} {'median s':>10} {'runs':>5} {'triples solved/pruned':>22} "
          f"{'states priced':>14}  best W/R/PS")
    table, compared = {}, []
    for layers in args.layers:
        for machines in args.machines:
            med, runs = median_run(machines, layers, args.repeats, args.once_above, args.budget)
            if med is None:
                print(f"{layers:>2} {machines:>5} {'> ' + format(args.budget, 'g'):>10} "
                      f"{len(runs):>5}   stopped: over the {args.budget:g} s budget; larger N "
                      f"skipped for L={layers}")
                break
            r = runs[-1]
            table[(layers, machines)] = med
            print(f"{layers:>2} {machines:>5} {med:>10.3f} {len(runs):>5} "
                  f"{str(r['triples']) + '/' + str(r['pruned']):>22} {r['evaluated']:>14,}  "
                  f"{r['best']}", flush=True)
            if args.reference:
                ref = timed(machines, layers, budget=args.budget, tree=args.reference)
                same = ref is not None and [c for c, _ in ref["ranked"]] == \
                    [c for c, _ in r["ranked"]] and all(
                        math.isclose(a, b, rel_tol=1e-9)
                        for (_, a), (_, b) in zip(ref["ranked"], r["ranked"]))
                compared.append(same)
                print(f"{'':>8} reference ({ref['module'] if ref else args.reference}): "
                      + ("over the budget" if ref is None else
                         f"{ref['seconds']:.3f} s, {'same ranking' if same else 'DIFFERENT'}"
                         f" ({len(r['ranked'])} configurations), "
                         f"{ref['seconds'] / r['seconds']:.1f}x the time"), flush=True)

    print("\ngrowth over N (time ~ N^k, least squares on log-log), paper: O(L K N^5 log^2 N)")
    exponents = {}
    for layers in args.layers:
        points = [(n, table[(layers, n)]) for n in args.machines if (layers, n) in table]
        k = slope(points)
        exponents[layers] = k
        sizes = ", ".join(str(n) for n, _ in points)
        print(f"  L={layers}: k = {'n/a (fewer than two sizes)' if k is None else f'{k:.2f}'}"
              f"  (N = {sizes})")

    speedups = []
    if not args.no_exhaustive:
        print("\nspeedup over the brute force (optimizer.exhaustive, same best T_epoch):")
        print(f"  {'N':>2} {'L':>2} {'K':>2} {'dp s':>9} {'exhaustive s':>13} {'speedup':>9}")
        for machines, layers, cores in SMALL:
            fast, runs_f = median_run(machines, layers, args.repeats, args.once_above,
                                      args.budget, cores=cores)
            slow, runs_s = median_run(machines, layers, 1, 0.0, args.budget, cores=cores,
                                      exhaustive=True)
            if fast is None or slow is None:
                print(f"  {machines:>2} {layers:>2} {cores:>2}   stopped: over the budget")
                continue
            same = math.isclose(runs_f[-1]["score"], runs_s[-1]["score"], rel_tol=1e-9)
            speedups.append(slow / fast)
            print(f"  {machines:>2} {layers:>2} {cores:>2} {fast:>9.4f} {slow:>13.2f} "
                  f"{slow / fast:>8.0f}x{'' if same else '  (DIFFERENT ANSWER)'}")

    n20 = table.get((max(args.layers), 20))
    largest = max((n for (l, n) in table if l == max(args.layers)), default=None)
    k8 = exponents.get(max(args.layers))
    parts = [f"`optimizer.dp` (exact DP + matching, Yan et al. 2015 ImageNet-22K, "
             f"{max(args.layers)} layers)"]
    if n20 is not None:
        parts.append(f"20 machines in {n20:.3f} s")
    if largest is not None and largest != 20:
        parts.append(f"{largest} in {table[(max(args.layers), largest)]:.1f} s")
    stopped = [n for n in args.machines if (max(args.layers), n) not in table]
    if stopped:
        parts.append(f"{'/'.join(map(str, stopped))} over {args.budget:g} s")
    if k8 is not None:
        parts.append(f"time ~ N^{k8:.1f} (paper O(N^5 log^2 N))")
    if speedups:
        parts.append(f"{min(speedups):.0f}-{max(speedups):.0f}x faster than brute force "
                     f"on 3-8 machines, 2-3 layers")
    if compared:
        print(f"\nreference {args.reference}: {sum(compared)} of {len(compared)} rankings the same")
    print("\ndocs/benchmarks.md: " + "; ".join(parts) + ".")


if __name__ == "__main__":
    main()
