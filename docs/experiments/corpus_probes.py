"""Rules tried on the corpus and not adopted (docs/validation.md, "Tried, not adopted").

Each probe replays a simplified user path on the loss-free regimes of the
committed ns-3 corpus (``perfmodel/zoo/validation/ns3_corpus.csv``): a
model's uncalibrated prediction, scaled by one factor fitted on the 1- and
2-worker runs, predicts 3-16 workers; the mean of each regime's mean relative
error is printed per split (train / test).  The probes are cruder than
``perfmodel validate matrix --only corpus`` (no tunables, no overlap
correction in ``forkjoin``) and meant to compare rules with each other.

    python docs/experiments/corpus_probes.py forkjoin   # async: servers as a fork-join
    python docs/experiments/corpus_probes.py fade       # sync: misfit fading beyond P
    python docs/experiments/corpus_probes.py offset     # sync: the gap added, not multiplied
    python docs/experiments/corpus_probes.py blend      # async: lock-step to MVA
    python docs/experiments/corpus_probes.py groups     # async: convoys beyond saturation
    python docs/experiments/corpus_probes.py convoy     # ns-3: c087 without jitter
    python docs/experiments/corpus_probes.py dip        # ns-3: c053 with and without jitter
    python docs/experiments/corpus_probes.py sharing    # ns-3: c036 under 5 TCP / queue pairs
    python docs/experiments/corpus_probes.py marking    # ns-3: DCTCP's mark threshold, c040
    python docs/experiments/corpus_probes.py duplex     # ns-3: the probe's p012 under 4 TCPs
    python docs/experiments/corpus_probes.py window v017 16   # ns-3: 4 windows, not 1
    python docs/experiments/corpus_probes.py segments k009,l021   # ns-3: packets per transfer

``convoy``, ``dip``, ``sharing``, ``marking``, ``duplex``, ``window`` and ``segments``
run ns-3 (the ``ns3`` extra, about a minute each; ``sharing`` about three, ``window`` two
to four per regime at 16 workers, ``segments`` five to fifteen per regime).
"""

import collections
import math
import sys

import numpy as np

from perfmodel import zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.fit.corpus import MIN_RTO, _measurements
from perfmodel.fit.selection import default_candidates
from perfmodel.floors import link_floor
from perfmodel.measurements import measured_cluster, measured_profile
from perfmodel.placement import ns3_corpus
from perfmodel.placement.ns3_corpus import (
    CORPUS_ASYNC_STEPS,
    CORPUS_PATH,
    CORPUS_STEPS,
    CORPUS_WARMUP,
    JITTER_CV,
    read_rows,
)
from perfmodel.placement.ns3_job import _compute_factors
from perfmodel.queueing import async_throughput, convoy_groups, saturation_workers
from perfmodel.sim.model import TraceSim
from perfmodel.specs import Cluster, Config

GOODPUT = 1448 / 1502   # TCP/IP headers of the corpus's segments


def regimes(mode: str):
    """(regime rows sorted by workers) of the loss-free regimes of ``mode``."""
    by = collections.defaultdict(list)
    for r in read_rows(CORPUS_PATH):
        by[r["regime"]].append(r)
    for _, rows in sorted(by.items()):
        rows.sort(key=lambda r: int(r["workers"]))
        if rows[0]["mode"] == mode and not any(
                int(r["queue_drops"]) > 0 for r in rows if int(r["workers"]) > 2):
            yield rows


def ratios(rows, names):
    """measured / uncalibrated prediction of each candidate at each worker count."""
    f = rows[0]
    overlap = f["overlap"] in ("1", "True", "true")
    profile = zoo.profile(f"{f['dnn']}-pipedream").replace(
        t_update=float(f["t_update"]), batch_size=int(f["batch_size"]))
    cluster = Cluster(machines=40, nic_bandwidth=float(f["bandwidth"]),
                      compute_cv=float(f["compute_cv"]), retransmit_timeout=MIN_RTO)
    models = {c.name: c.model for c in default_candidates(f["mode"], overlap=overlap,
                                                          simulate=True)}
    out = {}
    for m in _measurements(rows):
        out[m.workers] = [m.throughput / models[n].estimate(
            measured_profile(profile, m), measured_cluster(cluster, m), m.config()).throughput
            for n in names]
    return out


def scaled_error(r: dict) -> float:
    """Mean error at 3+ workers of a prediction scaled to the 1- and 2-worker runs (r: K ->
    measured / predicted)."""
    factor = np.mean([r[1], r[2]])
    return float(np.mean([abs(factor / v - 1) for k, v in r.items() if k >= 3]))


def report(errors: dict) -> None:
    for rule, by_split in errors.items():
        print(f"{rule:<28}" + "  ".join(f"{s} {np.mean(v):.1%} ({len(v)})"
                                        for s, v in sorted(by_split.items())))


def _fork_join_mva(think: float, stations, workers: int) -> float:
    """Exact single-class MVA with load-dependent stations: ``stations`` are (demand s,
    servers c), rate ``min(n, c) / s`` with n jobs present (c = 1: processor sharing)."""
    marginals = [np.r_[1.0, np.zeros(workers)] for _ in stations]
    x = 0.0
    for n in range(1, workers + 1):
        j = np.arange(1, n + 1)
        resp = [np.sum(j * s / np.minimum(j, c) * p[:n]) for (s, c), p in zip(stations, marginals)]
        x = n / (think + sum(resp))
        for (s, c), p in zip(stations, marginals):
            new = np.zeros(workers + 1)
            new[1:n + 1] = x * s / np.minimum(j, c) * p[:n]
            new[0] = max(0.0, 1.0 - new[1:].sum())
            p[:] = new
    return x


def forkjoin() -> None:
    """Async: a worker's push and pull to P servers as one fork-join over the P server
    links (each link a processor-sharing station of P servers' capacity, the update
    in parallel on the P shards), or as one station P times faster with the rest of
    the worker's own link time as a delay, against P stations visited in turn (the
    default)."""
    errors = collections.defaultdict(lambda: collections.defaultdict(list))
    for rows in regimes("async"):
        f = rows[0]
        p, link = int(f["n_ps"]), float(f["bandwidth"]) * GOODPUT
        prof = zoo.profile(f"{f['dnn']}-pipedream")
        m, z, tu = prof.model_bytes, prof.t_forward + prof.t_backward, float(f["t_update"])
        meas = {int(r["workers"]): float(r["throughput"]) / int(r["batch_size"]) for r in rows}
        nic = 2 * (m / link) * (1 - 1 / p)   # a worker's own link beyond its servers' share
        series = {"P stations in turn": {k: async_throughput(m, link, prof.t_forward,
                                                             prof.t_backward, tu, k, "ps",
                                                             n_ps=p) for k in meas},
                  "fork-join over P links": {k: _fork_join_mva(
                      z, [(m / link, p), (tu / p, 1), (m / link, p)], k) for k in meas},
                  "P links as one, NIC a delay": {k: _fork_join_mva(
                      z + nic, [(m / (p * link), 1), (tu / p, 1), (m / (p * link), 1)], k)
                      for k in meas}}
        for rule, pred in series.items():
            errors[rule][f["split"]].append(scaled_error({k: meas[k] / pred[k] for k in meas}))
    report(errors)


def fade() -> None:
    """Sync: the 1- and 2-worker misfit applied in full (default) or fading as
    ``(max(P, 2) / K) ** a`` beyond P workers, where the servers' NICs take over."""
    errors = collections.defaultdict(lambda: collections.defaultdict(list))
    for rows in regimes("sync"):
        f = rows[0]
        p = int(f["n_ps"])
        r = {k: v[0] for k, v in ratios(rows, ["sync-ps"]).items()}
        misfit = np.mean([r[1], r[2]])
        for a in (None, 0.5, 1.0, 2.0):
            errs = []
            for k, v in r.items():
                if k < 3:
                    continue
                factor = misfit if a is None else 1 - (1 - misfit) * min(1, max(p, 2) / k) ** a
                errs.append(abs(factor / v - 1))
            rule = "in full" if a is None else f"fading, a = {a}"
            errors[rule][f["split"]].append(float(np.mean(errs)))
    report(errors)


def offset() -> None:
    """Sync: the 1- and 2-worker gap as one slowdown of every step (the level, default) or
    as a fixed time added to every step (an offset: a per-step overhead that does not grow
    with the workers), for eq. 7 and the simulator with fair sharing."""
    errors = collections.defaultdict(lambda: collections.defaultdict(list))
    names = ["sync-ps", "sim-ps"]
    for rows in regimes("sync"):
        batch = int(rows[0]["batch_size"])
        meas = {int(r["workers"]): float(r["throughput"]) for r in rows}
        for name, r in zip(names, zip(*ratios(rows, names).values())):
            step = {k: k * batch * v / meas[k] for k, v in zip(sorted(meas), r)}   # predicted
            seen = {k: k * batch / meas[k] for k in meas}
            slowdown = np.mean([seen[k] / step[k] for k in (1, 2)])
            extra = np.mean([seen[k] - step[k] for k in (1, 2)])
            for rule, pred in (("level", {k: v * slowdown for k, v in step.items()}),
                               ("offset", {k: v + extra for k, v in step.items()})):
                errors[f"{name}, {rule}"][rows[0]["split"]].append(float(np.mean(
                    [abs(seen[k] / pred[k] - 1) for k in meas if k >= 3])))
    report(errors)


def blend() -> None:
    """Async: the geometric blend ``lockstep ** (1 - w) * mva ** w`` of the lock-step model
    and the MVA (w = 1: the MVA alone)."""
    errors = collections.defaultdict(lambda: collections.defaultdict(list))
    for rows in regimes("async"):
        r = ratios(rows, ["async-lockstep", "async-mva"])
        for w in (0.0, 0.5, 0.7, 1.0):
            errors[f"w = {w}"][rows[0]["split"]].append(
                scaled_error({k: v[0] ** (1 - w) * v[1] ** w for k, v in r.items()}))
    report(errors)


def _grouped(m, link, tf, tb, tu, k, p, overlap, n_star) -> float:
    """Steps/s of K workers moving as at most ``n_star`` groups (``AsyncMVA(convoys=True)``
    on the probes' path: step times of the whole group counts interpolated)."""
    step = sum(w * g / async_throughput(m * k / g, link, tf, tb, tu * k / g, g, "ps",
                                        overlap=overlap, n_ps=p)
               for g, w in convoy_groups(k, n_star))
    return k / step


def groups() -> None:
    """Async: workers beyond the saturation population N* moving as N* groups, always or
    on one or two servers only, or as N* max(1, P / 2) groups, against the MVA."""
    errors = collections.defaultdict(lambda: collections.defaultdict(list))
    for rows in regimes("async"):
        f = rows[0]
        p, link = int(f["n_ps"]), float(f["bandwidth"]) * GOODPUT
        overlap = f["overlap"] in ("1", "True", "true")
        prof = zoo.profile(f"{f['dnn']}-pipedream")
        m, tu = prof.model_bytes, float(f["t_update"])
        meas = {int(r["workers"]): float(r["throughput"]) / int(r["batch_size"]) for r in rows}
        n_star = saturation_workers(m, link, prof.t_forward, prof.t_backward, tu, p)
        rules = {"the MVA": math.inf, "N* groups": n_star,
                 "N* groups on 1-2 servers": n_star if p <= 2 else math.inf,
                 "N* max(1, P / 2) groups": n_star * max(1.0, p / 2)}
        for rule, limit in rules.items():
            pred = {k: _grouped(m, link, prof.t_forward, prof.t_backward, tu, k, p, overlap,
                                limit) for k in meas}
            errors[rule][f["split"]].append(scaled_error({k: meas[k] / pred[k] for k in meas}))
    report(errors)


def _designed(name: str):
    """A regime of the corpus design, its profile (with its update) and its cluster (line
    rate less the TCP/IP headers)."""
    regime = next(r for r in ns3_corpus.design() if r["regime"] == name)
    profile, t_update = ns3_corpus._job(regime)
    cluster = Cluster(machines=40, nic_bandwidth=f"{regime['bandwidth_gbps']}Gbps",
                      link_efficiency=GOODPUT)
    return regime, profile.replace(t_update=t_update), cluster


def dip(name: str = "c053") -> None:
    """ns-3: does sync on P servers dip at K = P workers without compute jitter, and how far
    is the regime's own compute sample from its mean (its first worker's measured steps)?"""
    regime, profile, cluster = _designed(name)
    for jitter in (regime["jitter"], "none"):
        for p in (1, regime["n_ps"]):
            for k in (1, 2, 4, 8):
                run = ns3_corpus.regime_run(dict(regime, jitter=jitter, n_ps=p), k)
                model = SyncCoarse(sharing="ps").estimate(profile, cluster,
                                                          Config(n_replicas=k, n_ps=p))
                print(f"{name}, jitter {jitter}, {p} servers, {k} workers: ns-3 at "
                      f"{run.throughput / model.throughput:.3f} of the physical model")
    factors = _compute_factors(JITTER_CV[regime["jitter"]], 1, 40, int(name[1:]),
                               regime["jitter"])[0]
    window = factors[CORPUS_WARMUP:CORPUS_WARMUP + CORPUS_STEPS]
    print(f"{name}: the first worker's compute factor over its measured steps, mean "
          f"{window.mean():.3f} (the distribution's: 1)")


def sharing(name: str = "c036") -> None:
    """ns-3: one async job, its TCP and host queue changed, nothing else: how close do the
    workers come to the contention-free bound (K times one worker alone, or what the
    servers' links carry)?  Then the physical simulator with PS and with FCFS links, the
    two sharings it models, over the same window."""
    regime, profile, cluster = _designed(name)

    def links(k):   # samples/s the servers' links carry, headers included (link_floor)
        config = Config(n_replicas=k, n_ps=regime["n_ps"], mode="async")
        return k * profile.batch_size / link_floor(profile, cluster, config,
                                                   model_bytes=profile.model_bytes / GOODPUT)

    for tcp, queue in (("newreno", "fifo"), ("cubic", "fifo"), ("newreno", "fair"),
                       ("dctcp", "fifo"), ("dctcp", "fair")):
        variant = dict(regime, tcp=tcp, queue=queue)
        one = ns3_corpus.regime_run(variant, 1).throughput
        share = [ns3_corpus.regime_run(variant, k).throughput / min(k * one, links(k))
                 for k in (4, 8, 16)]
        print(f"{name}, {tcp} on {queue} hosts: one worker {one:.1f} samples/s; 4, 8, 16 "
              f"workers at {', '.join(f'{v:.2f}' for v in share)} of the contention-free "
              f"bound")
    # the physical simulator (line rate less headers, the regime's compute spread, one
    # update CPU per server) over the corpus's window: 16 gradients after 2, 8 replications
    jittered = cluster.replace(compute_cv=JITTER_CV[regime["jitter"]])
    for sharing_rule in ("ps", "fcfs"):
        sim = TraceSim(sharing=sharing_rule, overlap=bool(regime["overlap"]), server_cpu="fcfs",
                       steps=CORPUS_WARMUP + CORPUS_ASYNC_STEPS, warmup=CORPUS_WARMUP,
                       replications=8)
        one, *more = (sim.estimate(profile, jittered, Config(n_replicas=k, n_ps=regime["n_ps"],
                                                             mode="async")).throughput
                      for k in (1, 4, 8, 16))
        share = [x / min(k * one, links(k)) for k, x in zip((4, 8, 16), more)]
        print(f"{name}, the simulator with {sharing_rule.upper()} links: one worker {one:.1f} "
              f"samples/s; 4, 8, 16 workers at {', '.join(f'{v:.2f}' for v in share)} of the "
              f"contention-free bound")


def convoy(name: str = "c087") -> None:
    """ns-3 on a fair-queued 1 Gbps link with constant compute: do async workers that
    start together stay together (processor sharing keeps equal transfers' gaps)?"""
    regime = dict(next(r for r in ns3_corpus.design() if r["regime"] == name), jitter="none")
    for workers in (2, 4, 8):
        run = ns3_corpus.regime_run(regime, workers, async_steps=30, warmup=0, batches=1)
        spread = run.ends.max(axis=0) - run.ends.min(axis=0)
        print(f"{name}, {workers} workers, no jitter: {run.throughput:.1f} samples/s; spread "
              f"of the n-th gradient (s), n = 1..10: {np.round(spread[:10], 2).tolist()}")


def marking(name: str = "c040") -> None:
    """ns-3: DCTCP on fair-queued 1 Gbps hosts runs far below the link's rate.  At the
    corpus's scaled rate one packet takes longer to send than the 1 ms sojourn that marks
    it, so nearly every queued packet is marked; with the threshold above one packet's
    time the same runs go at the link's rate."""
    regime = next(r for r in ns3_corpus.design() if r["regime"] == name)
    profile, _ = ns3_corpus._job(regime)
    packet = 1502 * 8 * ns3_corpus.scale_for(profile.model_bytes) / (
        regime["bandwidth_gbps"] * 1e9)
    print(f"{name}: one packet takes {1e3 * packet:.2f} ms at the scaled rate")
    for threshold in (1e-3, 5e-3, 20e-3):
        speeds = [ns3_corpus.regime_run(regime, k, ce_threshold=threshold).throughput
                  for k in (1, 2)]
        print(f"{name}, marked beyond {1e3 * threshold:.0f} ms: 1 and 2 workers at "
              f"{speeds[0]:.1f} and {speeds[1]:.1f} samples/s")


def duplex(name: str = "p012") -> None:
    """ns-3: the probe's BBR regime stops at 2 workers.  The same job under other TCP
    controls, then under BBR with 4 and 16 times more packets per transfer (a smaller
    scale): how much of what the servers' links carry both ways does it reach?"""
    regime = next(r for r in ns3_corpus.design(spec=ns3_corpus.PROBE) if r["regime"] == name)
    profile, _ = ns3_corpus._job(regime)
    cluster = Cluster(machines=40, nic_bandwidth=f"{regime['bandwidth_gbps']}Gbps",
                      link_efficiency=GOODPUT)

    def share(run, k):   # of what the busiest link carries both ways, headers included
        config = Config(n_replicas=k, n_ps=regime["n_ps"], mode="async")
        floor = link_floor(profile, cluster, config, model_bytes=profile.model_bytes / GOODPUT)
        return run.throughput * floor / (k * profile.batch_size)

    for tcp in ("bbr", "westwood", "vegas", "newreno"):
        shares = [share(ns3_corpus.regime_run(dict(regime, tcp=tcp), k), k)
                  for k in (1, 4, 8)]
        print(f"{name} under {tcp}: 1, 4, 8 workers at "
              f"{', '.join(f'{v:.2f}' for v in shares)} of what the busiest link carries both ways")
    scale = ns3_corpus.scale_for(profile.model_bytes)
    for smaller in (4, 16):
        run = ns3_corpus.regime_run(regime, 4, scale=scale / smaller)
        print(f"{name} under bbr, {smaller} times the packets: 4 workers at "
              f"{share(run, 4):.2f} of what the busiest link carries both ways")


def window(names: str = "v017", workers: str = "16") -> None:
    """ns-3: async regimes of any committed set measured four times as long (64 gradients
    per worker after the corpus's 2): the speed over each 16-gradient window, the first
    being the one the corpus measures.  Workers that start together on a fair link stay
    in phase (``convoy``); does the corpus's window see them still in phase where a long
    job would not?"""
    designs = [r for spec in ns3_corpus.DESIGNS.values() for r in ns3_corpus.design(spec=spec)]
    for name in names.split(","):
        regime = next(r for r in designs if r["regime"] == name)
        batch = ns3_corpus._job(regime)[0].batch_size
        for k in (int(w) for w in workers.split(",")):
            ends = ns3_corpus.regime_run(regime, k, async_steps=4 * CORPUS_ASYNC_STEPS).ends
            starts = range(CORPUS_WARMUP, CORPUS_WARMUP + 4 * CORPUS_ASYNC_STEPS,
                           CORPUS_ASYNC_STEPS)
            speeds = [k * CORPUS_ASYNC_STEPS * batch / np.mean(
                ends[:, a + CORPUS_ASYNC_STEPS - 1] - ends[:, a - 1]) for a in starts]
            print(f"{name}, {k} workers: samples/s over gradients "
                  + ", ".join(f"{a + 1}-{a + CORPUS_ASYNC_STEPS}: {v:.2f}"
                              for a, v in zip(starts, speeds)))


def segments(names: str = "k009,l021", factors: str = "0.25,1,4") -> None:
    """ns-3: the corpus divides bytes and rates by a scale that leaves a whole-model
    transfer at most :data:`~perfmodel.placement.ns3_corpus.CORPUS_SEGMENTS` segments (a
    real one has 3,500 to 770,000).  Fluid times do not depend on it; does how the
    async workers of a FIFO link spread apart?  Each regime at 1, 2 and 2P workers with
    ``factors`` times the corpus's segments per transfer: the speed, and 2P workers'
    over 2P times one worker's."""
    designs = [r for spec in ns3_corpus.DESIGNS.values() for r in ns3_corpus.design(spec=spec)]
    for name in names.split(","):
        regime = next(r for r in designs if r["regime"] == name)
        profile, _ = ns3_corpus._job(regime)
        scale = ns3_corpus.scale_for(profile.model_bytes)
        k = 2 * int(regime["n_ps"])
        for factor in (float(f) for f in factors.split(",")):
            speeds = [ns3_corpus.regime_run(regime, w, scale=scale / factor).throughput
                      for w in (1, 2, k)]
            print(f"{name} ({regime['queue']} {regime['tcp']}, {regime['bandwidth_gbps']:g} "
                  f"Gbps, P={regime['n_ps']}), {profile.model_bytes / (scale / factor) / 1448:.0f}"
                  f" segments a transfer: 1, 2, {k} workers at "
                  + ", ".join(f"{v:.2f}" for v in speeds)
                  + f" samples/s; {k} over {k} x one: {speeds[2] / (k * speeds[0]):.3f}")


if __name__ == "__main__":
    {"segments": segments, "forkjoin": forkjoin, "fade": fade, "offset": offset,
     "blend": blend, "groups": groups, "convoy": convoy, "dip": dip, "sharing": sharing, "marking": marking,
     "duplex": duplex, "window": window}[sys.argv[1]](*sys.argv[2:])
