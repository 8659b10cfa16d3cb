"""A packet-level corpus of parameter-server jobs, designed before any model is fitted to it.

The validation matrix's ns-3 runs (:mod:`perfmodel.placement.ns3_job`) share
most of our own choices: one TCP, one DNN, one server.  This corpus varies
what a network nobody here has seen may vary, so that a rule tuned on one part
can be tested on another.  The factors and their levels are fixed here, before
modelling:

==============  =====================================================================
factor          levels
==============  =====================================================================
``tcp``         NewReno, Cubic, DCTCP (with ECN marking: RED on a FIFO port, a sojourn
                threshold on a fair queue)
``queue``       FIFO, per-flow fair (the egress queue of every NIC link)
``buffer``      deep (10,000 packets: loss-free), shallow (100 packets: tail drops when
                many transfers meet)
``bandwidth``   1, 10, 25 Gbps
``n_ps``        1, 2, 3, 4 parameter servers
``dnn``         the measured per-layer PipeDream profiles of alexnet, vgg16, resnet50,
                inception_v3, resnet18 and resnext50 (model bytes, forward and backward
                times, batch); with overlap the layers are grouped into 8 blocks of
                about equal bytes, each with its own share of the compute
``jitter``      none, lognormal (cv 0.1), heavy-tailed Pareto (cv 0.3)
``mode``        sync (an update per step), async (an update per gradient)
``overlap``     off, on
``workers``     1, 2, 3, 4, 6, 8, 12, 16 in every regime
==============  =====================================================================

A server applies gradients at :data:`UPDATE_RATE` (our choice: the update of
a 100 MB model takes 20 ms), split over the servers, unless the design has an
``update_rate`` factor (bytes/s; the seventh to ninth probes').

Design
------
The full product has 10,368 regimes; :func:`design` draws
:data:`CORPUS_REGIMES` of them as a balanced random design: for each factor
the levels are repeated to the design's length and shuffled with a seeded
generator, so each level appears equally often and the factors vary
independently.  A combination drawn twice runs twice, each with its own seed
(the regime's index): a replicate.

Held-out split
--------------
Whole factor levels are held out before any rule is designed or tuned on the
corpus: every regime with Cubic TCP or the resnext50 DNN is in the ``test``
split (:data:`HELD_OUT`), the rest in ``train``.  Rules are designed and tuned
on ``train``; ``test`` is only reported.

Regenerate with ``python -m perfmodel.placement.ns3_corpus --out FILE --jobs 2``:
hours of computing, done once; it resumes, keeping the regimes already in the
file.  Every run is seeded (the regime's index), so the rows do not depend on
the order or the process that ran them.

Long-tail corpus
----------------
A run measures 8 sync steps or 16 gradients per worker after 2 of warm-up
(:data:`CORPUS_STEPS`, :data:`CORPUS_ASYNC_STEPS`): enough for the lognormal
jitter (CV 0.1), too few for the Pareto one (CV 0.3), whose mean over 8
draws is itself off by about 11% and by more than 10% for the first worker
of 4 of the 32 Pareto regimes.  :data:`LONG_CORPUS_PATH` is the same design
with the Pareto regimes measured over :data:`LONG_TAIL_STEPS` times the
steps and gradients (``--heavy-tail-steps 4``, the same seeds: the first
worker's compute factors begin as in the committed corpus); its other rows
are the committed corpus's, which the generator reproduces exactly.  The
committed corpus stays the one the split's rules were designed on; the
long-tail one tells how much of an error is the corpus's sample.

Probe
-----
The corpus's test half shares the corpus's other levels with its train
half, and its per-regime errors have been read while rules were designed.
:data:`PROBE` is a second held-out set, fixed and committed before it was
run (``--design probe``; :data:`PROBE_PATH`): 16 regimes on fair-queued
hosts with deep buffers (loss-free), with TCP controls no rule was designed
on (Vegas: delay-based; BBR: rate-based; HighSpeed, Westwood+: loss-based)
and DNNs the corpus never ran (the measured per-layer profiles of
resnet101, resnext101, densenet121 and GNMT), 1, 10 or 25 Gbps, 1-2
servers, no jitter or lognormal, sync or async, overlap off or on, at 1 to
12 workers.  Every regime is in the ``probe`` split; nothing is tuned on it.

Second probe
------------
The first probe's per-regime errors have been read too (a rule tried after
it was run, the async MVA's serialized bound, was checked on it).
:data:`PROBE2` is a third held-out set, fixed and committed before it was
run (``--design probe2``; :data:`PROBE2_PATH`), of the same kind as the
first probe with TCP controls and DNNs neither set ran (YeAH: delay and
loss; Veno, Illinois: loss-based with delay hints; H-TCP: loss-based; the
measured per-layer profiles of NASNet-A mobile, SqueezeNet 1.0, GNMT-large
(16 recurrent layers) and NASNet-A large), 1, 10 or 25 Gbps, 1-2 servers,
no jitter or lognormal, sync or async, overlap off or on, at 1 to 12
workers, its draw seeded at 2028.  Every regime is in the ``probe2`` split.

Third probe
-----------
Both probes' per-regime errors have been read (the second judged the
serialized bound, and the misses of both led to the next async rules), and
neither ran FIFO hosts or more than two servers, where the async model misses
most on the corpus.  :data:`PROBE3` is a fourth held-out set, fixed and
committed before it was run (``--design probe3``; :data:`PROBE3_PATH`): 24
regimes with TCP controls no set ran (Hybla, Scalable, BIC: loss-based; Linux
Reno: NewReno as Linux grows its window), FIFO or per-flow fair hosts with
deep buffers (loss-free), 1, 10 or 25 Gbps, 1 to 4 servers, no jitter or
lognormal, two async regimes to each sync one, overlap off or on, at 1 to 16
workers, its draw seeded at 2029.  Every DNN has been run before (the
committed profiles are exhausted): the eight of the two probes, never used to
design a rule.  Every regime is in the ``probe3`` split.

Fourth probe
------------
The third probe's errors have been read too (they led to the fork-join
reading of several servers).  :data:`PROBE4` is a fifth held-out set, fixed and
committed before it was run (``--design probe4``; :data:`PROBE4_PATH`), of
the network the first two probes ran (per-flow fair hosts, deep buffers:
loss-free) with 1 to 4 servers: 24 regimes, TCP controls and DNNs drawn
from every one the probes ran (none of the corpus's), 1, 10 or 25 Gbps, no
jitter or lognormal, two async regimes to each sync one, overlap off or on,
at 1 to 16 workers, its draw seeded at 2030.  Every regime is in the
``probe4`` split.

Fifth probe
-----------
The fourth probe's errors have been read too (its async intervals, wide
where a 2-worker run is slower than the model's, led to the next interval
rule).  :data:`PROBE5` is a sixth held-out set, fixed and committed before
that rule was designed and before it was run (``--design probe5``;
:data:`PROBE5_PATH`), of the kind of testbed the probes stand in for:
per-flow fair hosts, deep buffers (loss-free), 1 or 2 servers, TCP controls
and DNNs drawn from every one the probes ran, 1, 10 or 25 Gbps, no jitter or
lognormal, two async regimes to each sync one, overlap off or on, at 1 to 16
workers, its draw seeded at 2031.  Every regime is in the ``probe5`` split.

Sixth probe
-----------
The fifth probe's errors have been read too (its one-server async knee,
where the MVA runs too slow, led to the next rule).  :data:`PROBE6` is a
seventh held-out set, fixed and committed before that rule was designed and
before it was run (``--design probe6``; :data:`PROBE6_PATH`): the fifth
probe's factors with FIFO hosts in a third of the regimes, 1 or 2 servers,
two async regimes to each sync one, at 1 to 16 workers, its draw seeded at
2032.  Every regime is in the ``probe6`` split.

Seventh probe
-------------
The sixth probe's errors have been read too (its async runs near the knee,
faster than the MVA, and its convoys at 1 Gbps, slower).  In every set so far
the update time is the model bytes over one rate, so how long an update takes
beside a transfer (what spaces async workers at a server, or lets them travel
together) moves with the link speed alone.  :data:`PROBE7` is an eighth
held-out set, fixed and committed before the next async rule was designed and
before it was run (``--design probe7``; :data:`PROBE7_PATH`): the sixth
probe's factors with the update rate a factor of its own (1, 5 or 25 GB/s),
three async regimes to each sync one, at 1 to 16 workers, its draw seeded at
2033.  Every regime is in the ``probe7`` split.

Eighth probe
------------
The seventh probe's errors have been read too.  :data:`PROBE8` is a ninth
held-out set, fixed and committed before it was run, to judge a rule on how
runs spanning three times the workers or more calibrate the models (their
level unless their tunables earn their place): the seventh probe's factors
with as many sync regimes as async ones, at 1 to 16 workers, its draw seeded
at 2034.  Every regime is in the ``probe8`` split.

Ninth probe
-----------
The eighth probe's errors have been read too.  :data:`PROBE9` is a tenth
held-out set, fixed and committed before it was run, to judge a rule on async
runs of 1-2 workers where the server's updates stagger the workers (the update
spacing, the update time over one model's transfer time, at least a half):
the seventh probe's factors with the update rate drawn from 1, 2.5 or 5 GB/s
(spacings of 0.025 to 3.1 over the three link speeds, five of the nine pairs
at a half or more), three async regimes to each sync one, at 1 to 16 workers,
its draw seeded at 2035.  Every regime is in the ``probe9`` split.

Tenth probe
-----------
The ninth probe's errors have been read too.  :data:`PROBE10` is an eleventh
held-out set, fixed and committed before it was run, to judge the same rule
where the user also measures the run the selection suggests (three worker
counts or more): the ninth probe's factors drawn again, its draw seeded at
2036.  Every regime is in the ``probe10`` split.

Eleventh probe
--------------
The tenth probe's errors have been read too.  :data:`PROBE11` is a twelfth
held-out set, fixed and committed before it was run, to judge a fix of the
spaced simulator for jobs that overlap their transfers with the backward
pass (it ran their profile as one block, which cannot overlap): the ninth
probe's factors with every regime overlapping, its draw seeded at 2037.
Every regime is in the ``probe11`` split.

Twelfth probe
-------------
The eleventh probe's errors have been read too.  :data:`PROBE12` is a
thirteenth held-out set, fixed and committed before it was run, to judge a
rule on sync jobs whose 1-2 runs cannot tell the closed form from the
simulator (the prediction between them): the fifth probe's fair-queued
network on one or two servers, two sync regimes to each async one, its draw
seeded at 2038.  Every regime is in the ``probe12`` split.

Thirteenth probe
----------------
The twelfth probe's errors have been read too.  :data:`PROBE13` is a
fourteenth held-out set, fixed and committed before it was run, to judge how
wide the 90% intervals are beyond the calibration runs (their growth set on
every earlier set): the seventh probe's factors on one to four servers, with
as many sync regimes as async ones and the update rate drawn from 1, 2.5, 5 or
25 GB/s, its draw seeded at 2039.  Every regime is in the ``probe13`` split.

Fourteenth probe
----------------
The thirteenth probe's errors have been read too.  :data:`PROBE14` is a
fifteenth held-out set, fixed and committed before it was run, to judge
intervals that read how much the compute varies off the runs' own step
times when the user does not say: the thirteenth probe's factors with
heavy-tailed compute as a third jitter level, its draw seeded at 2040.
Every regime is in the ``probe14`` split.

Fifteenth probe
---------------
The fourteenth probe's errors have been read too.  :data:`PROBE15` is a
sixteenth held-out set, fixed and committed before it was run, to judge a
rule for sync jobs whose compute varies (the simulator, which draws each
step's slowest worker, answers their 1-2 runs): the fourteenth probe's
factors, every regime sync, its draw seeded at 2041.  Every regime is in the
``probe15`` split.

Sixteenth probe
---------------
The fifteenth probe's errors have been read too.  :data:`PROBE16` is a
seventeenth held-out set, fixed and committed before it was run, to judge a
rule for async jobs whose server's update CPU, not its link, is the
bottleneck (the update spacing ``T_S B / M``, the update time over one
model's transfer time, at least 1): the fourteenth probe's factors, every
regime async, with the update rate drawn from 0.5, 1, 1.5 or 2.5 GB/s
(spacings of 0.05 to 6.25 over the three link speeds, six of the twelve
pairs at 1 or more), its draw seeded at 2042.  Every regime is in the
``probe16`` split.

Seventeenth probe
-----------------
The sixteenth probe's errors have been read too.  :data:`PROBE17` is an
eighteenth held-out set, fixed and committed before it was run, to judge the
same rule again on fresh runs: the sixteenth probe's factors at 10 and 25
Gbps with the update rate drawn from 1, 2 or 4 GB/s (spacings of 0.31 to
3.1, three of the six pairs at 1 or more and two just below), its draw
seeded at 2043.  Every regime is in the ``probe17`` split.

Eighteenth probe
----------------
:data:`PROBE18` is a nineteenth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: async jobs on three or four
servers measured at one and two workers, where the servers' stations visited
in turn queue at links nobody else uses (``AsyncMVA(servers=
"fork-join-to-p")``).  It has the sixteenth probe's factors on 3 or 4
servers with the update rate drawn from 5 or 25 GB/s (short updates beside
a transfer: the MVA answers), its draw seeded at 2044.  Every regime is in
the ``probe18`` split.

Nineteenth probe
----------------
:data:`PROBE19` is a twentieth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: whether the 90% interval of a
model that draws each worker's compute from the declared spread (the
simulator) needs to widen for that spread beyond the runs.  It has the
fifteenth probe's factors (sync, 1-4 servers, FIFO or fair hosts) with every
regime's compute varying, lognormal or heavy-tailed, its draw seeded at
2045.  Every regime is in the ``probe19`` split.

Twentieth probe
---------------
:data:`PROBE20` is a twenty-first held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: async workers on one or two servers
that stay partly in lock-step where the servers' updates barely space them
(``select_model(partly_locked=True)``).  It has the fourteenth probe's factors
with every regime async, on 1 or 2 servers, at 1 or 10 Gbps, with the update
rate drawn from 5, 12.5, 25 or 50 GB/s (update spacings of 0.0025 to 0.25),
its draw seeded at 2046.  Every regime is in the ``probe20`` split.  It is
also run with ``--async-warmup 32`` (a long job's speed), kept beside it.

Twenty-first probe
------------------
:data:`PROBE21` is a twenty-second held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: where the user says the link is FIFO
(loss-based TCP on drop-tail host queues), an async job on 3 or 4 servers
meets the servers at once up to P workers (``select_model(fork_join_to_p=
"fifo")``).  It has the eighteenth probe's factors with FIFO hosts only, the
loss-based TCP controls only (no Vegas or BBR), and the update rate drawn from
1, 5 or 25 GB/s, its draw seeded at 2047.  Every regime is in the ``probe21``
split.  It is also run with ``--async-warmup 32`` (a long job's speed), kept
beside it.

Twenty-second probe
-------------------
:data:`PROBE22` is a twenty-third held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: on a link said FIFO, beyond P
workers an async job on 3 or 4 servers runs halfway (geometrically) between
the in-turn growth and the contention-free bound (``select_model(
fifo_toward_bound=True)``).  It has the twenty-first probe's factors with the
update rate drawn from 2.5, 10 or 50 GB/s, its draw seeded at 2048.  Every
regime is in the ``probe22`` split.  It is also run with ``--async-warmup
32``, kept beside it.

Twenty-third probe
------------------
:data:`PROBE23` is a twenty-fourth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs: on a link said FIFO, a sync job's
selection keeps fair sharing as its prior, so a FIFO-only model answers only
where the runs favour it (``select_model(fifo_prior="fair")``).  It has the
fifteenth probe's factors (sync, 1-4 servers) with FIFO hosts only and the
loss-based TCP controls only, its draw seeded at 2049.  Every regime is in the
``probe23`` split.

Twenty-fourth probe
-------------------
:data:`PROBE24` is a twenty-fifth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs at more segments per transfer (below):
whether async workers that share a link are taken to travel in convoys beyond
the saturation point (``select_model(convoys=...)``).  It has the fourteenth
probe's factors with every regime async, run at 1, 2, 4, 8 and 16 workers with
8 times the corpus's segments per transfer (``Design.segments_factor``), its
draw seeded at 2050.  Every regime is in the ``probe24`` split.

Twenty-fifth probe
------------------
:data:`PROBE25` is a twenty-sixth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs at more segments per transfer: async
workers on one or two servers whose updates barely space them stay partly in
lock-step (``select_model(partly_locked=True)``).  It has the twentieth
probe's factors (async, one or two servers, 1 or 10 Gbps, short updates), 12
regimes run at 1, 2, 4, 8 and 16 workers with 8 times the corpus's segments
per transfer, its draw seeded at 2051.  Every regime is in the ``probe25``
split.

Twenty-sixth probe
------------------
:data:`PROBE26` is a twenty-seventh held-out set, fixed and committed before it
was run, to judge one rule on fresh runs at more segments per transfer: the
MVA's drifted-apart workers and the convoys' pooled where every run is on two
or more servers (``select_model(convoys="pooled-servers")``).  It has the
fourteenth probe's factors with every regime async on 2, 3 or 4 servers, 12
regimes run at 1, 2, 4, 8 and 16 workers with 8 times the corpus's segments
per transfer, its draw seeded at 2052; the first 26 letters being taken, its
regimes are named ``A000`` on.  Every regime is in the ``probe26`` split.

Twenty-seventh probe
--------------------
:data:`PROBE27` is a twenty-eighth held-out set, fixed and committed before it
was run, to judge one rule on fresh runs at more segments per transfer: the
MVA's drifted-apart workers and the convoys' pooled as the async default
(``select_model(convoys="pooled")``).  It has the twenty-fourth probe's
factors (the fourteenth's, every regime async) drawn again, 12 regimes run
at 1, 2, 4, 8 and 16 workers with 8 times the corpus's segments per
transfer, its draw seeded at 2053, regimes ``B000`` on.  Every regime is in
the ``probe27`` split.

Twenty-eighth probe
-------------------
:data:`PROBE28` is a twenty-ninth held-out set, fixed and committed before it
was run, to judge long-job rules on fresh runs where the TCP control differs:
the twenty-seventh probe's factors with every other TCP draw DCTCP (ECN
marking; none of the probes before it ran DCTCP), 12 regimes run at 1, 2, 4,
8 and 16 workers with 8 times the corpus's segments per transfer, its draw
seeded at 2054, regimes ``C000`` on.  It is measured only as long jobs
(``--async-warmup 32``; ``long_jobs_only``), so it is not one of the
protocol's short-window sets.  Every regime is in the ``probe28`` split.

The async window
----------------
An async run measures :data:`CORPUS_ASYNC_STEPS` gradients per worker after
:data:`CORPUS_WARMUP`, its workers starting together.  On a fair 1 Gbps link
where the server's updates are short beside a transfer, 16 workers are still
splitting up then, and a job four times as long runs faster in every later
window (docs/validation.md): the committed sets measure the start.
``--async-warmup N`` lets N gradients pass before the window opens, to
measure a long job's speed instead; sync runs keep their warm-up.

Segments per transfer
---------------------
Every set divides bytes and rates by a scale (:func:`scale_for`) that keeps
fluid transfer times but leaves a whole-model transfer at most
:data:`CORPUS_SEGMENTS` segments, where a real one has thousands to hundreds
of thousands.  A transfer of a few windows passes a queue about whole, one
after another, which spaces the async workers apart; a long one is
interleaved packet by packet with the others, so equal transfers that meet
end together and the workers stay in step.  Runs of 1-2 workers mostly do
not depend on it (a small model's few-segment transfer, mostly slow start,
does); async runs beyond the knee do, slower in some regimes and faster in
others (docs/validation.md).
``--segments-factor F`` runs a set with F times the segments (at F times the
cost), ``--workers`` at some worker counts only.

The corpus at 8 times the segments
----------------------------------
:data:`CORPUS_8X` is the corpus's draw (the same regimes, seeds and split)
run at 8 times the segments per transfer and at 1, 2, 4, 8 and 16 workers,
which keeps the cost of a regime to minutes of a core.  Its committed file,
:data:`CORPUS_8X_PATH`, holds the 48 deep-buffer (loss-free) regimes
(``--design corpus-8x --buffer deep``); the shallow-buffer ones are left to
a later run of the same command without ``--buffer``, which resumes it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import multiprocessing
import os
import sys
import time as _time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import zoo
from .._process import end_with_parent
from ..errors import SimulationStalled, SpecError
from ..io import read_text
from ..pipedream import layer_table
from . import ns3_job

__all__ = ["FACTORS", "HELD_OUT", "BUFFERS", "JITTER_CV", "UPDATE_RATE", "CORPUS_WORKERS",
           "CORPUS_REGIMES", "CORPUS_SEED", "CORPUS_SCALE", "CORPUS_SEGMENTS", "scale_for",
           "CORPUS_STEPS", "CORPUS_ASYNC_STEPS",
           "CORPUS_WARMUP", "CORPUS_BATCHES", "CORPUS_BLOCKS", "CORPUS_COLUMNS", "CORPUS_PATH",
           "LONG_CORPUS_PATH", "LONG_TAIL_STEPS", "Design", "CORPUS", "CORPUS_8X",
           "CORPUS_8X_PATH", "PROBE", "PROBE2",
           "PROBE3", "PROBE4", "PROBE5", "PROBE6", "PROBE7", "PROBE8", "PROBE9",
           "PROBE10", "PROBE11", "PROBE12", "PROBE13", "PROBE14", "PROBE15", "PROBE16", "PROBE17",
           "PROBE18", "PROBE19", "PROBE20", "PROBE21", "PROBE22", "PROBE23", "PROBE24", "PROBE25",
           "PROBE26", "PROBE27", "PROBE28", "DESIGNS",
           "PROBE_PATH",
           "PROBE2_PATH", "PROBE3_PATH", "PROBE4_PATH", "PROBE5_PATH", "PROBE6_PATH",
           "PROBE7_PATH", "PROBE8_PATH", "PROBE9_PATH", "PROBE10_PATH", "PROBE11_PATH",
           "PROBE12_PATH", "PROBE13_PATH", "PROBE14_PATH", "PROBE15_PATH", "PROBE16_PATH",
           "PROBE17_PATH", "PROBE18_PATH", "PROBE19_PATH", "PROBE20_PATH", "PROBE21_PATH",
           "PROBE22_PATH", "PROBE23_PATH", "PROBE24_PATH", "PROBE25_PATH",
           "PROBE26_PATH", "PROBE27_PATH",
           "PROBE_PATHS", "COMMITTED_SETS",
           "PROTOCOL_SETS", "design",
           "split_of", "pipedream_blocks", "stop_time_for", "regime_run", "regime_rows",
           "STALLED_PREFIX", "read_stalled", "generate", "main"]

#: Every factor and its levels, fixed before modelling.
FACTORS: dict[str, tuple] = {
    "tcp": ("newreno", "cubic", "dctcp"),
    "queue": ("fifo", "fair"),
    "buffer": ("deep", "shallow"),
    "bandwidth_gbps": (1, 10, 25),
    "n_ps": (1, 2, 3, 4),
    "dnn": ("alexnet", "vgg16", "resnet50", "inception_v3", "resnet18", "resnext50"),
    "jitter": ("none", "lognormal", "pareto"),
    "mode": ("sync", "async"),
    "overlap": (False, True),
}
#: Levels held out of every rule's design and tuning: a regime with one is ``test``.
HELD_OUT: dict[str, tuple] = {"tcp": ("cubic",), "dnn": ("resnext50",)}
#: Queue capacity of each buffer level, packets, per queue discipline.
BUFFERS = {"deep": {"fifo": 10000, "fair": 10240}, "shallow": {"fifo": 100, "fair": 100}}
#: Coefficient of variation of the compute time of each jitter level.
JITTER_CV = {"none": 0.0, "lognormal": 0.1, "pareto": 0.3}
#: Bytes of gradient a server applies per second (ours): t_update = model bytes / rate.
UPDATE_RATE = 5e9
#: Worker counts of every regime.
CORPUS_WORKERS = (1, 2, 3, 4, 6, 8, 12, 16)
#: Regimes drawn, and the seed of the draw.
CORPUS_REGIMES, CORPUS_SEED = 96, 2026
#: Smallest divisor of bytes and link rates (as the validation matrix), and the most
#: segments a whole-model transfer keeps: a larger model is scaled further, to that many
#: (:func:`scale_for`), so every regime costs about the same to run.
CORPUS_SCALE, CORPUS_SEGMENTS = 100.0, 1000
#: Measured sync steps, async gradients per worker, warm-up, batches of throughput_std.
CORPUS_STEPS, CORPUS_ASYNC_STEPS, CORPUS_WARMUP, CORPUS_BATCHES = 8, 16, 2, 4
#: Blocks of a per-layer profile when computation and communication overlap.
CORPUS_BLOCKS = 8
#: Columns of the corpus CSV, in order.
CORPUS_COLUMNS = ("regime", "split", "dnn", "tcp", "queue", "buffer", "bandwidth", "n_ps",
                  "jitter", "compute_cv", "mode", "overlap", "update", "t_update", "workers",
                  "batch_size", "throughput", "throughput_std", "step_time_median", "steps",
                  "seed", "scale", "queue_drops", "ecn_marks", "wall_seconds")
#: The committed corpus.
CORPUS_PATH = Path(__file__).parent.parent / "zoo" / "validation" / "ns3_corpus.csv"
#: The long-tail corpus: the same design, its Pareto-jitter regimes measured over
#: :data:`LONG_TAIL_STEPS` times the steps and gradients (``--heavy-tail-steps``).
LONG_CORPUS_PATH = CORPUS_PATH.with_name("ns3_corpus_long.csv")
LONG_TAIL_STEPS = 4

_GBPS = 1e9 / 8


@dataclass(frozen=True)
class Design:
    """A set of regimes fixed before modelling: factors, size, seed, worker counts.

    Attributes
    ----------
    name : str
        ``"corpus"`` or a probe's (``"probe"`` to ``"probe6"``).
    factors : dict of str to tuple
        Every factor and its levels.
    held_out : dict of str to tuple
        Levels that put a regime in the ``test`` split (unless ``split`` is set).
    regimes, seed : int
        Size and seed of the balanced random draw (:func:`design`).
    workers : tuple of int
        Worker counts run in every regime.
    prefix : str
        First letter of the regime names (``c000``, ``p000``).
    split : str or None
        The split of every regime (the probe's ``"probe"``); None: ``held_out`` decides.
    summary : str
        How reports name a probe and what it holds out (empty for the corpus).
    segments_factor : float
        Times the segments per transfer of the corpus's its runs keep (:func:`scale_for`).
    long_jobs_only : bool
        Measured only as long jobs (``--async-warmup 32``, committed as
        ``ns3_<name>_async_warm32.csv``): not one of the protocol's short-window sets.
    """

    name: str
    factors: dict
    held_out: dict
    regimes: int
    seed: int
    workers: tuple
    prefix: str
    split: str | None = None
    summary: str = ""
    segments_factor: float = 1.0
    long_jobs_only: bool = False


#: The corpus every rule was designed on (its train half) and judged on (its test half).
CORPUS = Design("corpus", FACTORS, HELD_OUT, CORPUS_REGIMES, CORPUS_SEED, CORPUS_WORKERS, "c")
#: The probe: a second held-out set, fixed before it was run, that shares no TCP and no
#: DNN with the corpus (module notes).  Every regime is in the ``probe`` split.
PROBE = Design(
    "probe",
    {"tcp": ("vegas", "bbr", "highspeed", "westwood"), "queue": ("fair",),
     "buffer": ("deep",), "bandwidth_gbps": (1, 10, 25), "n_ps": (1, 2),
     "dnn": ("resnet101", "resnext101", "densenet121", "gnmt"),
     "jitter": ("none", "lognormal"), "mode": ("sync", "async"), "overlap": (False, True)},
    {}, 16, 2027, (1, 2, 3, 4, 6, 8, 12), "p", split="probe",
    summary="the probe (every regime held out: TCP controls and DNNs the corpus never ran)")
#: The second probe: a third held-out set, fixed before it was run, sharing no TCP and no
#: DNN with the corpus or the first probe (module notes).  Its split is ``probe2``.
PROBE2 = Design(
    "probe2",
    {"tcp": ("yeah", "veno", "illinois", "htcp"), "queue": ("fair",),
     "buffer": ("deep",), "bandwidth_gbps": (1, 10, 25), "n_ps": (1, 2),
     "dnn": ("nasnetamobile", "squeezenet1_0", "gnmt_large", "nasnetalarge"),
     "jitter": ("none", "lognormal"), "mode": ("sync", "async"), "overlap": (False, True)},
    {}, 16, 2028, (1, 2, 3, 4, 6, 8, 12), "q", split="probe2",
    summary="the second probe (every regime held out: TCP controls and DNNs the corpus "
            "never ran)")
#: The third probe: a fourth held-out set, fixed before it was run, with TCP controls no
#: set ran, FIFO hosts and up to four servers (module notes).  Its split is ``probe3``.
PROBE3 = Design(
    "probe3",
    {"tcp": ("hybla", "scalable", "bic", "linuxreno"), "queue": ("fifo", "fair"),
     "buffer": ("deep",), "bandwidth_gbps": (1, 10, 25), "n_ps": (1, 2, 3, 4),
     "dnn": PROBE.factors["dnn"] + PROBE2.factors["dnn"],
     "jitter": ("none", "lognormal"), "mode": ("async", "sync", "async"),
     "overlap": (False, True)},
    {}, 24, 2029, CORPUS_WORKERS, "r", split="probe3",
    summary="the third probe (every regime held out: TCP controls no set ran, FIFO hosts, "
            "up to four servers)")
#: The fourth probe: a fifth held-out set, fixed before it was run, of fair-queued hosts
#: with 1-4 servers (module notes).  Its split is ``probe4``.
PROBE4 = Design(
    "probe4",
    {"tcp": PROBE.factors["tcp"] + PROBE2.factors["tcp"] + PROBE3.factors["tcp"],
     "queue": ("fair",), "buffer": ("deep",), "bandwidth_gbps": (1, 10, 25),
     "n_ps": (1, 2, 3, 4),
     "dnn": PROBE.factors["dnn"] + PROBE2.factors["dnn"],
     "jitter": ("none", "lognormal"), "mode": ("async", "sync", "async"),
     "overlap": (False, True)},
    {}, 24, 2030, CORPUS_WORKERS, "s", split="probe4",
    summary="the fourth probe (every regime held out: the probes' fair-queued network on up "
            "to four servers)")
#: The fifth probe: a sixth held-out set, fixed before it was run, of fair-queued hosts
#: with 1-2 servers (module notes).  Its split is ``probe5``.
PROBE5 = Design(
    "probe5", dict(PROBE4.factors, n_ps=(1, 2)), {}, 24, 2031, CORPUS_WORKERS, "t",
    split="probe5", summary="the fifth probe (every regime held out: the probes' fair-queued "
                            "network on one or two servers)")
#: The sixth probe: a seventh held-out set, fixed before it was run, of the fifth probe's
#: network with FIFO hosts in a third of its regimes (module notes).  Its split is ``probe6``.
PROBE6 = Design(
    "probe6", dict(PROBE5.factors, queue=("fair", "fifo", "fair")), {}, 24, 2032,
    CORPUS_WORKERS, "u", split="probe6",
    summary="the sixth probe (every regime held out: the probes' network, fair-queued or "
            "FIFO hosts, on one or two servers)")
#: The seventh probe: an eighth held-out set, fixed before it was run, of the sixth
#: probe's network with three async regimes to each sync one (module notes).  Its split
#: is ``probe7``.
PROBE7 = Design(
    "probe7", dict(PROBE6.factors, mode=("async", "sync", "async", "async"),
                   update_rate=(1e9, 5e9, 25e9)), {}, 24, 2033,
    CORPUS_WORKERS, "v", split="probe7",
    summary="the seventh probe (every regime held out: the sixth probe's network, mostly "
            "async, with the update rate a factor)")
#: The eighth probe: a ninth held-out set, fixed before it was run, of the seventh
#: probe's network with as many sync regimes as async ones (module notes).  Its split is
#: ``probe8``.
PROBE8 = Design(
    "probe8", dict(PROBE7.factors, mode=("sync", "async")), {}, 24, 2034,
    CORPUS_WORKERS, "w", split="probe8",
    summary="the eighth probe (every regime held out: the seventh probe's network, half "
            "sync, half async)")
#: The ninth probe: a tenth held-out set, fixed before it was run, of the seventh probe's
#: network with slower updates, mostly async (module notes).  Its split is ``probe9``.
PROBE9 = Design(
    "probe9", dict(PROBE7.factors, update_rate=(1e9, 2.5e9, 5e9)), {}, 24, 2035,
    CORPUS_WORKERS, "x", split="probe9",
    summary="the ninth probe (every regime held out: the seventh probe's network, mostly "
            "async, with slower updates)")
#: The tenth probe: an eleventh held-out set, fixed before it was run, of the ninth
#: probe's factors drawn again (module notes).  Its split is ``probe10``.
PROBE10 = Design(
    "probe10", PROBE9.factors, {}, 24, 2036, CORPUS_WORKERS, "y", split="probe10",
    summary="the tenth probe (every regime held out: the ninth probe's factors drawn again)")
#: The eleventh probe: a twelfth held-out set, fixed before it was run, of the ninth
#: probe's factors with every regime overlapping (module notes).  Its split is ``probe11``.
PROBE11 = Design(
    "probe11", dict(PROBE9.factors, overlap=(True,)), {}, 24, 2037, CORPUS_WORKERS, "z",
    split="probe11",
    summary="the eleventh probe (every regime held out: the ninth probe's factors, every "
            "regime overlapping)")
#: The twelfth probe: a thirteenth held-out set, fixed before it was run, of the fifth
#: probe's network with two sync regimes to each async one (module notes).  Its split is
#: ``probe12``.
PROBE12 = Design(
    "probe12", dict(PROBE5.factors, mode=("sync", "async", "sync")), {}, 24, 2038,
    CORPUS_WORKERS, "a", split="probe12",
    summary="the twelfth probe (every regime held out: the fifth probe's fair-queued "
            "network, two sync regimes to each async one)")
#: The thirteenth probe: a fourteenth held-out set, fixed before it was run, of the
#: seventh probe's network on one to four servers, half sync, with four update rates
#: (module notes).  Its split is ``probe13``.
PROBE13 = Design(
    "probe13", dict(PROBE7.factors, mode=("sync", "async"), n_ps=(1, 2, 3, 4),
                    update_rate=(1e9, 2.5e9, 5e9, 25e9)), {}, 24, 2039,
    CORPUS_WORKERS, "b", split="probe13",
    summary="the thirteenth probe (every regime held out: the seventh probe's network on "
            "one to four servers, half sync, four update rates)")
#: The fourteenth probe: a fifteenth held-out set, fixed before it was run, of the
#: thirteenth probe's factors with heavy-tailed compute too (module notes).  Its split is
#: ``probe14``.
PROBE14 = Design(
    "probe14", dict(PROBE13.factors, jitter=("none", "lognormal", "pareto")), {}, 24, 2040,
    CORPUS_WORKERS, "d", split="probe14",
    summary="the fourteenth probe (every regime held out: the thirteenth probe's factors, "
            "a third of the regimes with heavy-tailed compute)")
#: The fifteenth probe: a sixteenth held-out set, fixed before it was run, of the
#: fourteenth probe's factors with every regime sync (module notes).  Its split is
#: ``probe15``.
PROBE15 = Design(
    "probe15", dict(PROBE14.factors, mode=("sync",)), {}, 24, 2041, CORPUS_WORKERS, "e",
    split="probe15",
    summary="the fifteenth probe (every regime held out: the fourteenth probe's factors, "
            "every regime sync)")
#: The sixteenth probe: a seventeenth held-out set, fixed before it was run, of the
#: fourteenth probe's factors with every regime async and slower updates (module notes).
#: Its split is ``probe16``.
PROBE16 = Design(
    "probe16", dict(PROBE14.factors, mode=("async",), update_rate=(0.5e9, 1e9, 1.5e9, 2.5e9)),
    {}, 24, 2042, CORPUS_WORKERS, "f", split="probe16",
    summary="the sixteenth probe (every regime held out: the fourteenth probe's factors, "
            "every regime async, with slower updates)")
#: The seventeenth probe: an eighteenth held-out set, fixed before it was run, of the
#: sixteenth probe's factors at 10 and 25 Gbps with update rates of 1, 2 or 4 GB/s (module
#: notes).  Its split is ``probe17``.
PROBE17 = Design(
    "probe17", dict(PROBE16.factors, bandwidth_gbps=(10, 25), update_rate=(1e9, 2e9, 4e9)),
    {}, 24, 2043, CORPUS_WORKERS, "g", split="probe17",
    summary="the seventeenth probe (every regime held out: the sixteenth probe's factors at "
            "10 and 25 Gbps, update rates of 1 to 4 GB/s)")
#: The eighteenth probe: a nineteenth held-out set, fixed before it was run, of the
#: sixteenth probe's factors on 3 or 4 servers with update rates of 5 or 25 GB/s (module
#: notes).  Its split is ``probe18``.
PROBE18 = Design(
    "probe18", dict(PROBE16.factors, n_ps=(3, 4), update_rate=(5e9, 25e9)),
    {}, 24, 2044, CORPUS_WORKERS, "h", split="probe18",
    summary="the eighteenth probe (every regime held out: the sixteenth probe's factors on "
            "3 or 4 servers, short updates)")
#: The nineteenth probe: a twentieth held-out set, fixed before it was run, of the
#: fifteenth probe's factors with every regime's compute varying (module notes).  Its
#: split is ``probe19``.
PROBE19 = Design(
    "probe19", dict(PROBE15.factors, jitter=("lognormal", "pareto")), {}, 24, 2045,
    CORPUS_WORKERS, "i", split="probe19",
    summary="the nineteenth probe (every regime held out: the fifteenth probe's factors, "
            "every regime's compute varying)")
#: The twentieth probe: a twenty-first held-out set, fixed before it was run, of the
#: fourteenth probe's factors, every regime async on 1 or 2 servers at 1 or 10 Gbps with
#: short updates (module notes).  Its split is ``probe20``.
PROBE20 = Design(
    "probe20", dict(PROBE14.factors, mode=("async",), n_ps=(1, 2), bandwidth_gbps=(1, 10),
                    update_rate=(5e9, 12.5e9, 25e9, 50e9)), {}, 24, 2046,
    CORPUS_WORKERS, "j", split="probe20",
    summary="the twentieth probe (every regime held out: the fourteenth probe's factors, "
            "every regime async on 1 or 2 servers with short updates)")
#: The twenty-first probe: a twenty-second held-out set, fixed before it was run, of the
#: eighteenth probe's factors with FIFO hosts and loss-based TCP only, updates of 1, 5 or
#: 25 GB/s (module notes).  Its split is ``probe21``.
PROBE21 = Design(
    "probe21", dict(PROBE18.factors, queue=("fifo",),
                    tcp=tuple(t for t in PROBE18.factors["tcp"] if t in ns3_job.LOSS_BASED_TCP),
                    update_rate=(1e9, 5e9, 25e9)),
    {}, 24, 2047, CORPUS_WORKERS, "k", split="probe21",
    summary="the twenty-first probe (every regime held out: the eighteenth probe's factors "
            "with FIFO hosts and loss-based TCP only)")
#: The twenty-second probe: a twenty-third held-out set, fixed before it was run, of the
#: twenty-first probe's factors with updates of 2.5, 10 or 50 GB/s (module notes).  Its
#: split is ``probe22``.
PROBE22 = Design(
    "probe22", dict(PROBE21.factors, update_rate=(2.5e9, 10e9, 50e9)),
    {}, 24, 2048, CORPUS_WORKERS, "l", split="probe22",
    summary="the twenty-second probe (every regime held out: the twenty-first probe's factors "
            "with other update rates)")
#: The twenty-third probe: a twenty-fourth held-out set, fixed before it was run, of the
#: fifteenth probe's factors with FIFO hosts and loss-based TCP only (module notes).  Its
#: split is ``probe23``.
PROBE23 = Design(
    "probe23", dict(PROBE15.factors, queue=("fifo",),
                    tcp=tuple(t for t in PROBE15.factors["tcp"] if t in ns3_job.LOSS_BASED_TCP)),
    {}, 24, 2049, CORPUS_WORKERS, "m", split="probe23",
    summary="the twenty-third probe (every regime held out: the fifteenth probe's factors "
            "with FIFO hosts and loss-based TCP only)")
#: The twenty-fourth probe: a twenty-fifth held-out set, fixed before it was run, of the
#: fourteenth probe's factors, every regime async, at 1, 2, 4, 8 and 16 workers with 8
#: times the segments per transfer (module notes).  Its split is ``probe24``.
PROBE24 = Design(
    "probe24", dict(PROBE14.factors, mode=("async",)), {}, 16, 2050, (1, 2, 4, 8, 16), "n",
    split="probe24", segments_factor=8.0,
    summary="the twenty-fourth probe (every regime held out: the fourteenth probe's factors, "
            "every regime async, 8 times the segments per transfer)")
#: The twenty-fifth probe: a twenty-sixth held-out set, fixed before it was run, of the
#: twentieth probe's factors (async, one or two servers, short updates), 12 regimes at 1,
#: 2, 4, 8 and 16 workers with 8 times the segments per transfer (module notes).  Its
#: split is ``probe25``.
PROBE25 = Design(
    "probe25", PROBE20.factors, {}, 12, 2051, (1, 2, 4, 8, 16), "o",
    split="probe25", segments_factor=8.0,
    summary="the twenty-fifth probe (every regime held out: the twentieth probe's factors, "
            "async on one or two servers, 8 times the segments per transfer)")
#: The twenty-sixth probe: a twenty-seventh held-out set, fixed before it was run, of the
#: fourteenth probe's factors, every regime async on 2, 3 or 4 servers, 12 regimes at 1,
#: 2, 4, 8 and 16 workers with 8 times the segments per transfer (module notes).  Its
#: split is ``probe26``.
PROBE26 = Design(
    "probe26", dict(PROBE14.factors, mode=("async",), n_ps=(2, 3, 4)), {}, 12, 2052,
    (1, 2, 4, 8, 16), "A", split="probe26", segments_factor=8.0,
    summary="the twenty-sixth probe (every regime held out: the fourteenth probe's factors, "
            "async on 2 to 4 servers, 8 times the segments per transfer)")
#: The twenty-seventh probe: a twenty-eighth held-out set, fixed before it was run, of the
#: twenty-fourth probe's factors drawn again, 12 regimes at 1, 2, 4, 8 and 16 workers with
#: 8 times the segments per transfer (module notes).  Its split is ``probe27``.
PROBE27 = Design(
    "probe27", PROBE24.factors, {}, 12, 2053, (1, 2, 4, 8, 16), "B",
    split="probe27", segments_factor=8.0,
    summary="the twenty-seventh probe (every regime held out: the twenty-fourth probe's "
            "factors drawn again, every regime async, 8 times the segments per transfer)")
#: The twenty-eighth probe: a twenty-ninth held-out set, fixed before it was run, of the
#: twenty-seventh probe's factors with half the TCP draws DCTCP, 12 regimes at 1, 2, 4, 8
#: and 16 workers with 8 times the segments per transfer, measured only as long jobs
#: (module notes).  Its split is ``probe28``.
PROBE28 = Design(
    "probe28", dict(PROBE27.factors,
                    tcp=tuple(t for other in PROBE27.factors["tcp"] for t in ("dctcp", other))),
    {}, 12, 2054, (1, 2, 4, 8, 16), "C", split="probe28", segments_factor=8.0,
    long_jobs_only=True,
    summary="the twenty-eighth probe (every regime held out: the twenty-seventh probe's "
            "factors with half the regimes on DCTCP, every regime async, 8 times the "
            "segments per transfer, measured as long jobs)")
#: The corpus measured at 8 times the segments per transfer, at 1, 2, 4, 8 and 16 workers:
#: the same draw and regimes (module notes, "The corpus at 8 times the segments").
CORPUS_8X = Design(
    "corpus-8x", FACTORS, HELD_OUT, CORPUS_REGIMES, CORPUS_SEED, (1, 2, 4, 8, 16), "c",
    segments_factor=8.0,
    summary="the ns-3 corpus at 8 times the segments per transfer, at 1, 2, 4, 8 and 16 "
            "workers (train and test side by side; the test half holds out whole factor "
            "levels)")
#: The designs by name.
DESIGNS = {d.name: d for d in (CORPUS, CORPUS_8X, PROBE, PROBE2, PROBE3, PROBE4, PROBE5, PROBE6,
                               PROBE7, PROBE8, PROBE9, PROBE10, PROBE11, PROBE12, PROBE13,
                               PROBE14, PROBE15, PROBE16, PROBE17, PROBE18, PROBE19,
                               PROBE20, PROBE21, PROBE22, PROBE23, PROBE24,
                               PROBE25, PROBE26, PROBE27, PROBE28)}
#: Each probe's committed short-window runs by its name (``ns3_<name>.csv`` beside the corpus).
PROBE_PATHS = {d.name: CORPUS_PATH.with_name(f"ns3_{d.name}.csv")
               for d in DESIGNS.values() if d.split and not d.long_jobs_only}
#: The committed probe.
PROBE_PATH = PROBE_PATHS["probe"]
#: The committed second probe.
PROBE2_PATH = PROBE_PATHS["probe2"]
#: The committed third probe.
PROBE3_PATH = PROBE_PATHS["probe3"]
#: The committed fourth probe.
PROBE4_PATH = PROBE_PATHS["probe4"]
#: The committed fifth probe.
PROBE5_PATH = PROBE_PATHS["probe5"]
#: The committed sixth probe.
PROBE6_PATH = PROBE_PATHS["probe6"]
#: The committed seventh probe.
PROBE7_PATH = PROBE_PATHS["probe7"]
#: The committed eighth probe.
PROBE8_PATH = PROBE_PATHS["probe8"]
#: The committed ninth probe.
PROBE9_PATH = PROBE_PATHS["probe9"]
#: The committed tenth probe.
PROBE10_PATH = PROBE_PATHS["probe10"]
#: The committed eleventh probe.
PROBE11_PATH = PROBE_PATHS["probe11"]
#: The committed twelfth probe.
PROBE12_PATH = PROBE_PATHS["probe12"]
#: The committed thirteenth probe.
PROBE13_PATH = PROBE_PATHS["probe13"]
#: The committed fourteenth probe.
PROBE14_PATH = PROBE_PATHS["probe14"]
#: The committed fifteenth probe.
PROBE15_PATH = PROBE_PATHS["probe15"]
#: The committed sixteenth probe.
PROBE16_PATH = PROBE_PATHS["probe16"]
#: The committed seventeenth probe.
PROBE17_PATH = PROBE_PATHS["probe17"]
#: The committed eighteenth probe.
PROBE18_PATH = PROBE_PATHS["probe18"]
#: The committed nineteenth probe.
PROBE19_PATH = PROBE_PATHS["probe19"]
#: The committed twentieth probe.
PROBE20_PATH = PROBE_PATHS["probe20"]
#: The committed twenty-first probe.
PROBE21_PATH = PROBE_PATHS["probe21"]
#: The committed twenty-second probe.
PROBE22_PATH = PROBE_PATHS["probe22"]
#: The committed twenty-third probe.
PROBE23_PATH = PROBE_PATHS["probe23"]
#: The committed twenty-fourth probe.
PROBE24_PATH = PROBE_PATHS["probe24"]
#: The committed twenty-fifth probe.
PROBE25_PATH = PROBE_PATHS["probe25"]
#: The committed twenty-sixth probe.
PROBE26_PATH = PROBE_PATHS["probe26"]
#: The committed twenty-seventh probe.
PROBE27_PATH = PROBE_PATHS["probe27"]
#: The corpus's loss-free (deep-buffer) regimes at 8 times the segments (:data:`CORPUS_8X`).
CORPUS_8X_PATH = CORPUS_PATH.with_name("ns3_corpus_8x.csv")
#: Every committed set by name: the corpus, its long-tail and 8x copies and the probes.
COMMITTED_SETS = {"corpus": CORPUS_PATH, "long-tail": LONG_CORPUS_PATH,
                  "corpus-8x": CORPUS_8X_PATH, **PROBE_PATHS}
#: What the held-out protocol reads by default, in report order: the corpus and every probe.
PROTOCOL_SETS = (CORPUS_PATH, *PROBE_PATHS.values())


def design(n: int | None = None, seed: int | None = None, *,
           spec: Design = CORPUS) -> list[dict]:
    """``n`` regimes of a balanced random design over ``spec.factors`` (module notes).

    Each regime is a dict of factor levels with its ``regime`` name (the
    design's prefix and its index) and ``split``.  ``n`` and ``seed`` default
    to the design's; the same ones give the same list.
    """
    n = spec.regimes if n is None else n
    rng = np.random.default_rng(spec.seed if seed is None else seed)
    columns = {}
    for name, levels in spec.factors.items():
        seq = [levels[i % len(levels)] for i in range(n)]
        columns[name] = [seq[i] for i in rng.permutation(n)]
    out = []
    for i in range(n):
        r = {name: columns[name][i] for name in spec.factors}
        r["regime"] = f"{spec.prefix}{i:03d}"
        r["split"] = spec.split or split_of(r, spec.held_out)
        out.append(r)
    return out


def split_of(regime: dict, held_out: dict | None = None) -> str:
    """``"test"`` when the regime has a held-out level (``held_out``, default
    :data:`HELD_OUT`), else ``"train"``."""
    held_out = HELD_OUT if held_out is None else held_out
    held = any(regime.get(name) in levels for name, levels in held_out.items())
    return "test" if held else "train"


def pipedream_blocks(dnn: str, blocks: int = CORPUS_BLOCKS) -> list[tuple[float, float, float]]:
    """(bytes, forward, backward) shares of ``blocks`` consecutive layer groups of ``dnn``.

    The layers of the measured PipeDream profile are cut where the cumulative
    parameter bytes cross ``i / blocks`` of the total (gradient buckets of about
    equal size); each group keeps its own share of the forward and backward
    time.  Empty groups are dropped.
    """
    table = layer_table(zoo.pipedream_graph(dnn))
    size = np.asarray(table.parameter_bytes, dtype=float)
    fwd = np.asarray(table.t_forward, dtype=float)
    bwd = np.asarray(table.t_backward, dtype=float)
    cum = np.cumsum(size) / size.sum()
    group = np.minimum((cum * blocks - 1e-9).astype(int), blocks - 1)
    group = np.maximum.accumulate(np.maximum(group, 0))
    out = []
    for g in range(blocks):
        mine = group == g
        if mine.any() and size[mine].sum() > 0:
            out.append((size[mine].sum(), fwd[mine].sum(), bwd[mine].sum()))
    shares = np.asarray(out)
    shares = shares / shares.sum(axis=0)
    return [tuple(float(x) for x in row) for row in shares]


def scale_for(model_bytes: float, segments_factor: float = 1.0) -> float:
    """The divisor of a job's bytes and rates: :data:`CORPUS_SCALE`, or more for a model
    whose transfer would keep more than :data:`CORPUS_SEGMENTS` segments of 1448 bytes,
    so every regime costs about the same to run; ``segments_factor`` times fewer (that
    many times the segments per transfer, and the run's cost).

    Fluid transfer times do not change with the scale; what a scale changes is
    the number of segments per transfer, which decides how TCP shares a queue:
    a transfer of a few windows passes about whole, one by one, where a long
    one is interleaved with the others packet by packet.  So a whole-model
    transfer keeps at most :data:`CORPUS_SEGMENTS` of them (a real one has
    thousands to hundreds of thousands), and async runs beyond the knee depend
    on it (module notes, "Segments per transfer").
    """
    if not segments_factor > 0:
        raise SpecError("segments_factor", f"must be > 0, got {segments_factor!r}")
    return max(CORPUS_SCALE, model_bytes / (1448.0 * CORPUS_SEGMENTS)) / segments_factor


def _update_rate(regime: dict) -> float:
    """Bytes of gradient a server applies per second in ``regime``: its ``update_rate``
    factor, or :data:`UPDATE_RATE` in a design without one."""
    return float(regime.get("update_rate", UPDATE_RATE))


def _job(regime: dict):
    profile = zoo.profile(f"{regime['dnn']}-pipedream")
    return profile, profile.model_bytes / _update_rate(regime)


def stop_time_for(profile, regime: dict, workers: int, steps: int) -> float:
    """Simulated seconds after which a run counts as stalled: 20 times the slowest
    plausible window (every step's compute at 5 standard deviations, pushes and pulls of
    all workers one after another, the updates in series) plus a minute of timeouts per
    step."""
    compute = (profile.t_forward + profile.t_backward) * (1 + 5 * JITTER_CV[regime["jitter"]])
    transfer = 2 * workers * profile.model_bytes / (regime["bandwidth_gbps"] * _GBPS)
    update = workers * profile.model_bytes / _update_rate(regime)
    return steps * (20.0 * (compute + transfer + update) + 60.0)


def regime_rows(regime: dict, *, workers=CORPUS_WORKERS, steps: int = CORPUS_STEPS,
                async_steps: int = CORPUS_ASYNC_STEPS, warmup: int = CORPUS_WARMUP,
                batches: int = CORPUS_BATCHES, stalled: list | None = None,
                stop_time: float | None = None, segments_factor: float = 1.0) -> list[dict]:
    """The CSV rows of one regime, one per worker count (see :data:`CORPUS_COLUMNS`),
    with ``segments_factor`` times the segments per transfer (:func:`scale_for`).

    A run that stalls (:func:`stop_time_for`, or ``stop_time`` when given) raises
    :class:`~perfmodel.errors.SimulationStalled`, or with a ``stalled`` list has no row
    and is appended to it as ``"regime@workers"``.
    """
    rows = []
    scale = scale_for(_job(regime)[0].model_bytes, segments_factor)
    for k in workers:
        try:
            res = regime_run(regime, k, steps=steps, async_steps=async_steps, warmup=warmup,
                             batches=batches, stop_time=stop_time, scale=scale)
        except SimulationStalled:
            if stalled is None:
                raise
            stalled.append(f"{regime['regime']}@{k}")
            continue
        rows.append(_row(regime, k, res, scale))
    return rows


def regime_run(regime: dict, workers: int, *, steps: int = CORPUS_STEPS,
               async_steps: int = CORPUS_ASYNC_STEPS, warmup: int = CORPUS_WARMUP,
               batches: int = CORPUS_BATCHES, stop_time: float | None = None,
               **engine):
    """One packet-level run of a regime at ``workers`` (the corpus's settings; ``engine``:
    options of :func:`~perfmodel.placement.ns3_job.simulate_ps_job_ns3` that replace or add
    to them, to probe one, e.g. ``scale`` or ``ce_threshold``).

    Returns
    -------
    perfmodel.placement.ns3_job.Ns3JobResult

    Raises
    ------
    perfmodel.errors.SimulationStalled
        The run reached ``stop_time`` (default :func:`stop_time_for`).
    """
    profile, t_update = _job(regime)
    mode = regime["mode"]
    n_steps = async_steps if mode == "async" else steps
    if stop_time is None:
        stop_time = stop_time_for(profile, regime, workers, warmup + n_steps)
    options = dict(
        mode=mode, overlap=bool(regime["overlap"]), queue=regime["queue"],
        update="per_step" if mode == "sync" else "per_gradient",
        compute_cv=JITTER_CV[regime["jitter"]], batch_size=profile.batch_size,
        scale=scale_for(profile.model_bytes), steps=n_steps, warmup=warmup, batches=batches,
        seed=int(regime["regime"][1:]), n_ps=regime["n_ps"], tcp=regime["tcp"],
        buffer=BUFFERS[regime["buffer"]][regime["queue"]], jitter=regime["jitter"],
        blocks=pipedream_blocks(regime["dnn"]) if regime["overlap"] else None,
        stop_time=stop_time)
    return ns3_job.simulate_ps_job_ns3(
        profile.model_bytes, regime["bandwidth_gbps"] * _GBPS, profile.t_forward,
        profile.t_backward, t_update, workers, **{**options, **engine})


def _row(regime: dict, k: int, res, scale: float) -> dict:
    profile, t_update = _job(regime)
    mode, queue = regime["mode"], regime["queue"]
    return dict(
            regime=regime["regime"], split=regime["split"], dnn=regime["dnn"],
            tcp=regime["tcp"], queue=queue, buffer=regime["buffer"],
            bandwidth=regime["bandwidth_gbps"] * _GBPS, n_ps=regime["n_ps"],
            jitter=regime["jitter"], compute_cv=JITTER_CV[regime["jitter"]], mode=mode,
            overlap=int(regime["overlap"]),
            update="per_step" if mode == "sync" else "per_gradient",
            t_update=round(t_update, 9), workers=k,
            batch_size=profile.batch_size, throughput=round(res.throughput, 6),
            throughput_std=round(res.throughput_std, 6),
            step_time_median=round(float(np.median(res.step_times)), 9),
            steps=res.meta["steps"], seed=int(regime["regime"][1:]),
            scale=round(scale, 3), queue_drops=res.meta["queue_drops"],
            ecn_marks=res.meta["ecn_marks"],
            wall_seconds=round(res.wall_seconds, 3))


def _regime_job(regime: dict, workers: tuple, heavy_tail_steps: int = 1,
                async_warmup: int = CORPUS_WARMUP,
                segments_factor: float = 1.0) -> tuple[list[dict], list[str]]:
    stalled: list[str] = []
    f = heavy_tail_steps if regime["jitter"] == "pareto" else 1
    warmup = async_warmup if regime["mode"] == "async" else CORPUS_WARMUP
    return regime_rows(regime, workers=workers, steps=f * CORPUS_STEPS,
                       async_steps=f * CORPUS_ASYNC_STEPS, warmup=warmup,
                       stalled=stalled, segments_factor=segments_factor), stalled


#: Header line listing the runs that stalled (``regime@workers``).
STALLED_PREFIX = "# stalled (no row: ns-3 reached the stop time before the window ended): "


def read_stalled(path) -> list[str]:
    """The ``regime@workers`` runs a corpus CSV lists as stalled ([] when none)."""
    path = Path(path)
    if not path.exists():
        return []
    for line in read_text(path).splitlines():
        if line.startswith(STALLED_PREFIX):
            return [s for s in line[len(STALLED_PREFIX):].split(", ") if s]
    return []


def _header(spec: Design, n: int, seed: int, done: int, total: int, command: str,
            stalled: list[str] = (), heavy_tail_steps: int = 1,
            async_warmup: int = CORPUS_WARMUP, segments_factor: float = 1.0) -> list[str]:
    state = "complete" if done == total else f"PARTIAL: {done} of {total} regimes"
    extra = [STALLED_PREFIX + ", ".join(sorted(stalled))] if stalled else []
    what = "corpus" if spec is CORPUS else f"corpus ({spec.name})"
    where = ("the factors of perfmodel.placement.ns3_corpus" if spec.factors is FACTORS
             else f"the factors of perfmodel.placement.ns3_corpus.{spec.name.upper()}")
    return [
        f"# perfmodel ns-3 {what}; {state}",
        f"# design: {n} regimes of a balanced random design over {where} "
        f"(seed {seed}); "
        + (f"every regime held out (split={spec.split})" if spec.split else
           "held out (split=test): "
           + ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in spec.held_out.items())),
        f"# engine: perfmodel.placement.ns3_job.simulate_ps_job_ns3, ns-3 "
        f"{ns3_job.ns3_version()}, star of P servers + K workers, link delay 10 us, "
        + (f"bytes and rates divided by scale (>= {CORPUS_SCALE:g}, at most "
           f"{CORPUS_SEGMENTS} segments per model transfer)" if segments_factor == 1 else
           f"bytes and rates divided by scale ({segments_factor:g} times the segments per "
           f"transfer of the corpus's: >= {CORPUS_SCALE / segments_factor:g}, at most "
           f"{segments_factor * CORPUS_SEGMENTS:g} per model transfer)")
        + ", MSS 1448 B, min RTO 1 s, "
        "128 KiB socket buffers, "
        "t_update = model bytes / "
        + ("/".join(f"{r:g}" for r in spec.factors["update_rate"])
           if "update_rate" in spec.factors else f"{UPDATE_RATE:g}")
        + " B/s split over the servers",
        f"# measured: sync {CORPUS_STEPS} steps after {CORPUS_WARMUP}, async "
        f"{CORPUS_ASYNC_STEPS} gradients per worker after {async_warmup}"
        + (f" ({heavy_tail_steps} times as many in the Pareto-jitter regimes)"
           if heavy_tail_steps > 1 else "")
        + "; throughput in samples/s summed over workers; "
        f"throughput_std over {CORPUS_BATCHES} batch means; bandwidth in bytes/s; "
        f"queue_drops and ecn_marks counted over every queue of the run",
        f"# regenerate: {command}",
    ] + extra


def read_rows(path) -> list[dict]:
    """The data rows of a corpus CSV (strings), or [] when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    lines = [ln for ln in read_text(path).splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines))


def _write(path: Path, rows: list[dict], header: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as fh:
        for line in header:
            fh.write(line + "\n")
        writer = csv.DictWriter(fh, fieldnames=CORPUS_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def _order(row: dict) -> tuple:
    return (row["regime"], int(row["workers"]))


def generate(out_path, *, n: int | None = None, seed: int | None = None, jobs: int = 1,
             only=None, command: str = "python -m perfmodel.placement.ns3_corpus --out FILE",
             log=None, heavy_tail_steps: int = 1, spec: Design = CORPUS,
             async_warmup: int = CORPUS_WARMUP, segments_factor: float | None = None,
             workers: tuple | None = None) -> int:
    """Run the regimes missing from ``out_path`` and write the corpus, sorted, after each one.

    Parameters
    ----------
    out_path : str or path
        The CSV; regimes already in it are kept and not run again.
    n, seed : int, optional
        The draw (:func:`design`); default the design's.
    jobs : int
        Processes running regimes at once.
    only : sequence of str, optional
        Run only these regime names.
    command : str
        The command recorded in the header.
    log : callable, optional
        Gets a progress line per regime.
    heavy_tail_steps : int
        The Pareto-jitter regimes measure this many times the steps (sync) and
        gradients (async): 1 for the committed corpus, :data:`LONG_TAIL_STEPS`
        for the long-tail one (module notes).
    spec : Design
        :data:`CORPUS` (default) or :data:`PROBE`.
    async_warmup : int
        Gradients per worker an async run lets pass before its window:
        :data:`CORPUS_WARMUP` for the committed sets; more to measure a long
        job, whose workers have split up since their common start (module
        notes, "The async window").
    segments_factor : float, optional
        Times the segments per transfer of the corpus (:func:`scale_for`), default
        the design's (``Design.segments_factor``: 1 for the corpus); more to see
        what the scale does (module notes, "Segments per transfer"), at that many
        times the cost.
    workers : tuple of int, optional
        The worker counts run (default the design's).

    Returns
    -------
    int
        Data rows in the file.
    """
    path = Path(out_path)
    segments_factor = spec.segments_factor if segments_factor is None else segments_factor
    n = spec.regimes if n is None else n
    seed = spec.seed if seed is None else seed
    regimes = design(n, seed, spec=spec)
    rows = read_rows(path)
    stalled = read_stalled(path)
    have = {r["regime"] for r in rows}
    todo = [r for r in regimes if r["regime"] not in have
            and (only is None or r["regime"] in only)]
    started = _time.perf_counter()

    def write() -> int:
        """Write the rows so far under their header; the regimes done."""
        done = len({r["regime"] for r in rows})
        _write(path, rows, _header(spec, n, seed, done, len(regimes), command, stalled,
                                   heavy_tail_steps, async_warmup, segments_factor))
        return done

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                                initializer=end_with_parent,
                                                initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(_regime_job, r, tuple(workers or spec.workers),
                               heavy_tail_steps, async_warmup, segments_factor): r
                   for r in todo}
        for future in concurrent.futures.as_completed(futures):
            new, stuck = future.result()
            rows.extend(new)
            stalled.extend(stuck)
            rows.sort(key=_order)
            done = write()
            if log is not None:
                log(f"{done}/{len(regimes)} {futures[future]['regime']}: "
                    f"{_time.perf_counter() - started:.0f} s elapsed")
    if not todo:
        write()
    return len(rows)


def main(argv=None) -> int:
    """``python -m perfmodel.placement.ns3_corpus --out FILE [--jobs N] [--design NAME]``."""
    p = argparse.ArgumentParser(prog="python -m perfmodel.placement.ns3_corpus",
                                description="packet-level ns-3 corpus of PS jobs (CSV)")
    p.add_argument("--out", required=True, help="CSV file to write (resumed when it exists)")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    p.add_argument("--design", choices=tuple(DESIGNS), default="corpus",
                   help="the corpus (default) or one of the probes (module notes)")
    p.add_argument("--regimes", type=int, help="regimes drawn (default: the design's)")
    p.add_argument("--only", help="comma-separated regime names to run")
    p.add_argument("--buffer", choices=tuple(FACTORS["buffer"]),
                   help="run only the design's regimes with this switch buffer")
    p.add_argument("--heavy-tail-steps", type=int, default=1,
                   help="the Pareto-jitter regimes measure this many times the steps and "
                        "gradients (default 1: the committed corpus; 4: the long-tail corpus)")
    p.add_argument("--async-warmup", type=int, default=CORPUS_WARMUP,
                   help=f"gradients per worker an async run lets pass before its window "
                        f"(default {CORPUS_WARMUP}: the committed sets)")
    p.add_argument("--segments-factor", type=float,
                   help="times the segments per transfer of the corpus (default the "
                        "design's: 1 but 8 for probe24 to probe26; the run costs as "
                        "many times more)")
    p.add_argument("--workers", help="comma-separated worker counts (default the design's)")
    a = p.parse_args(argv)
    if not ns3_job.available():
        print("error: the corpus needs ns-3: pip install 'perfmodel[ns3]'", file=sys.stderr)
        return 2
    if a.jobs < 1 or (a.regimes is not None and a.regimes < 1) or a.heavy_tail_steps < 1:
        print("error: --jobs, --regimes and --heavy-tail-steps must be >= 1", file=sys.stderr)
        return 2
    if a.async_warmup < 0:
        print(f"error: --async-warmup must be >= 0, got {a.async_warmup}", file=sys.stderr)
        return 2
    if a.segments_factor is not None and not a.segments_factor > 0:
        print(f"error: --segments-factor must be > 0, got {a.segments_factor}", file=sys.stderr)
        return 2
    try:
        workers = None if a.workers is None else tuple(int(w) for w in a.workers.split(","))
    except ValueError:
        workers = ()
    if workers is not None and not (workers and all(w >= 1 for w in workers)):
        print(f"error: --workers must be worker counts >= 1, got {a.workers!r}", file=sys.stderr)
        return 2
    command = " ".join(["python -m perfmodel.placement.ns3_corpus"]
                       + (argv if argv is not None else sys.argv[1:]))
    spec = DESIGNS[a.design]
    if spec.long_jobs_only and a.async_warmup <= CORPUS_WARMUP:
        print(f"error: --design {a.design} is measured as long jobs only: give --async-warmup "
              f"(32 as its sets), got {a.async_warmup}", file=sys.stderr)
        return 2
    only = None if a.only is None else a.only.split(",")
    if a.buffer is not None:
        only = [r["regime"] for r in design(a.regimes, spec=spec)
                if r.get("buffer") == a.buffer and (only is None or r["regime"] in only)]
    try:
        generate(a.out, n=a.regimes, jobs=a.jobs, only=only, command=command,
                 log=lambda s: print(s, flush=True), heavy_tail_steps=a.heavy_tail_steps,
                 spec=spec, async_warmup=a.async_warmup,
                 segments_factor=a.segments_factor, workers=workers)
    except SpecError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
