"""The ``perfmodel`` command: parse arguments, run the command, print its result.

No math lives here.  Exit codes: 0 ok, 1 infeasible, 2 bad input (one line on
stderr naming the file or flag and the field, never a traceback).

Start-up stays light: this module builds the parser from constants only, and
each command's module (``perfmodel._cli.<command>``, which imports what the
command needs) is imported when that command runs, so ``perfmodel --help`` or
``perfmodel zoo list`` never import the optimizer, scipy's special functions
or matplotlib.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from importlib import import_module

from . import registry
from ._cli.flags import (
    DEFAULTS,
    PROFILE_FLAGS,
    CliError,
    check_int_limits,
    package_version,
    parse_int_range,
)
from .errors import Infeasible, SpecError

__all__ = ["main", "build_parser", "parse_int_range", "DEFAULTS", "CliError"]


def _add_selection_flags(p) -> None:
    """--simulate and --link: what `--measurements` selects among, and the regime."""
    p.add_argument("--simulate", action="store_true",
                   help="with --measurements: the trace-driven simulator among the candidates "
                        "(as the validation matrix; up to about 1.5 s more)")
    p.add_argument("--link", choices=("fair", "fifo"),
                   help="with --measurements: how the server's link queue shares bandwidth, "
                        "when known (rules out the models of the other sharing; fifo: "
                        "loss-based TCP on drop-tail host queues, where an async job on 3+ "
                        "servers then meets them at once up to as many workers, while a "
                        "sync job still takes fair sharing as the prior; fair: "
                        "per-flow fair queues, or DCTCP, Vegas or BBR)")
    p.add_argument("--calibration", choices=("auto", "level", "tunables"),
                   help="with --measurements on a loss-free link: fit the fair sync models' "
                        "level (one slowdown of every step), their link efficiency and "
                        "update growth (tunables), or (auto, the default) the level when "
                        "the runs' worker counts span less than a factor 3, e.g. 1 and 2, "
                        "and on a wider span the tunables only where their leave-one-out "
                        "error beats the level's by 2 points")
    p.add_argument("--cpu-capacity", type=float, metavar="CORES",
                   help="with --measurements carrying server_cpu and worker_cpu: cores a "
                        "server or worker may use; caps the chosen model at the runs' CPU "
                        "ceiling (without it the readings are unused)")
    p.add_argument("--server-cpu", choices=("fcfs", "own"),
                   help="with --measurements: how a parameter server applies updates: one at "
                        "a time (fcfs, the default: no answer beyond servers x batch / "
                        "t_update samples/s for async), or each worker's on its own core "
                        "(own: no such cap)")
    p.add_argument("--long-job", action="store_true",
                   help="with --measurements of an async job: answer a long job's speed, "
                        "where the convoys of the workers' common start have dissolved, "
                        "instead of a short window's after it (the selection's horizon)")


# ---------------------------------------------------------------- parser
def _add_job_flags(p: argparse.ArgumentParser, *, with_format: tuple[str, ...],
                   model: str = "sync") -> None:
    """The flags of a job (workload, cluster, model options), in help groups per model."""
    workload = p.add_argument_group("workload and cluster")
    sync = p.add_argument_group("network and sync models (sync, allreduce, sim)")
    layerwise = p.add_argument_group("layer-wise model (Yan et al. 2015)")
    async_ = p.add_argument_group("async queueing models (async, lin; Li et al. 2022)")
    gst = p.add_argument_group("straggler model (gst; Zhang et al. 2023)")
    sim = p.add_argument_group("simulator (sim) and intervals")
    output = p.add_argument_group("output")
    workload.add_argument("--model", choices=registry.model_names(cli=True), default=model,
                          help="performance model (default: %(default)s)")
    workload.add_argument("--dnn", help=f"layerwise: DNN FILE or zoo:NAME (default {DEFAULTS['dnn']})")
    workload.add_argument("--profile", default=DEFAULTS["profile"],
                          help="coarse profile: FILE (JSON/YAML) or zoo:NAME (default: %(default)s)")
    workload.add_argument("--cluster", help=f"cluster: FILE or zoo:NAME (default: "
                                            f"{DEFAULTS['cluster']}, {DEFAULTS['layerwise_cluster']} "
                                            "for --model layerwise)")
    for name, unit in PROFILE_FLAGS.items():
        workload.add_argument("--" + name.replace("_", "-"), metavar=unit,
                              help=f"override the profile's {name} (a unit is required, e.g. "
                                   "100MB or 40ms)")
    workload.add_argument("--batch-size", type=int, help="override the profile's batch size")
    sync.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"),
                      help="link sharing of the sync model (default hybrid, Li et al. 2022 eq. 9)")
    sync.add_argument("--sharing-weight", type=float, help="weight of PS against FCFS (default 0.5)")
    sync.add_argument("--overlap", action="store_true", help="overlap communication and compute (eq. 10)")
    sync.add_argument("--algorithm", choices=("ring", "tree"), help="all-reduce algorithm")
    sync.add_argument("--link-efficiency", type=float, help="goodput over line rate (default 1)")
    sync.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    workload.add_argument("--epoch-samples", type=int,
                          help="samples per epoch (default: the zoo DNN's data set, else ImageNet-1k's "
                               f"{DEFAULTS['epoch_samples']:,})")
    layerwise.add_argument("--mw-position", type=float,
                           help="layerwise: M_w between eq. 11 (0, default) and eq. 10 (1)")
    layerwise.add_argument("--read-bandwidth", choices=("machine", "thread"),
                           help="layerwise: weights read over the whole NIC once per worker (machine, "
                                "default) or at 1/H of it per thread (thread, eqs. 10-11 as printed)")
    layerwise.add_argument("--cache-model", choices=("blend", "step"), help="layerwise: cache model")
    layerwise.add_argument("--threads", type=int, help="layerwise: threads per worker (default: cores)")
    layerwise.add_argument("--working-set", choices=("worker", "layer"),
                           help="layerwise: what must fit in cache (default: worker for predict, "
                                "layer for optimize, which keeps the dynamic program exact)")
    async_.add_argument("--discipline", choices=("ps", "fcfs", "hybrid"),
                        help="async/lin: link discipline of the MVA (default hybrid, Li et al. 2022 eq. 5)")
    async_.add_argument("--rho-threshold", type=float,
                        help="async/lin: rho_T of eq. 5 (default: the cluster's rho_threshold, else 0.6)")
    async_.add_argument("--residual", choices=("deterministic", "exponential"),
                        help="async/lin: FCFS residual of eq. 2 (default deterministic, as printed)")
    async_.add_argument("--convoys", nargs="?", const=True, default=None, choices=("spacing",),
                        help="async: workers beyond the saturation population N* move as N* groups, "
                             "as async workers sharing a link fairly from a common start do; "
                             "'--convoys spacing': on 2+ servers, as many as the server's updates "
                             "do not spread apart (ours)")
    async_.add_argument("--serialized-bound", action="store_true", default=None,
                        help="async: no worker's cycle longer than with every other worker's "
                             "transfers and updates served first, the longest work-conserving "
                             "links that drop nothing can make it (ours; off by default)")
    async_.add_argument("--servers", choices=("in-turn", "fork-join", "fork-join-to-p"),
                        help="async: a worker meets its --ps servers' stations in turn (default, "
                             "Li et al. 2022's network), all at once as one fork-join (ours), "
                             "or all at once up to P workers and in turn beyond (ours)")
    gst.add_argument("--sigma", type=float,
                     help="gst: standard deviation of a worker's step time in seconds (default 0)")
    gst.add_argument("--cv", type=float, help="gst: coefficient of variation of a worker's step time")
    gst.add_argument("--units", choices=("printed", "sound"),
                     help="gst: eqs. 11/15/16 as printed or dimensionally sound")
    gst.add_argument("--server-link", choices=("shared", "dedicated"),
                     help="gst: the N/K workers of a server share its link (shared, default) or "
                          "every message runs at line rate (dedicated, eq. 10 as printed)")
    gst.add_argument("--interval", choices=("iteration",),
                     help="gst: throughput_low/high from the single-iteration time percentiles")
    sim.add_argument("--replications", type=int,
                     help="sim: independent runs; their mean, with a Student-t interval (default 1)")
    sim.add_argument("--jitter", type=float,
                     help="sim: CV of compute times (default: the cluster's compute_cv)")
    sim.add_argument("--level", type=float, help="gst/sim: interval level (default 0.9)")
    output.add_argument("--format", choices=with_format, default="table",
                        help="table (default), or a machine format: " + ", ".join(
                            f for f in with_format if f != "table"))


def _add_place_flags(p: argparse.ArgumentParser) -> None:
    """The scenario flags of `perfmodel place` (and `perfmodel plot cdf`)."""
    p.add_argument("--topology", default="paper",
                   help="paper (8 racks x 8 hosts, 10 Gbps), racks:RxH[@BW], fattree:K, star:N")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--workers", type=int, default=7, help="workers per job (plus one PS)")
    p.add_argument("--strategy", default="all",
                   choices=("all", "colocated", "random", "strided", "clustered", "optimized"))
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model-bytes", default="97.49MB", help="model size (default ResNet-50's)")
    p.add_argument("--worker-compute", help="e.g. lognormal:0.4,0.2 or pareto:0.3,3 (seconds)")
    p.add_argument("--server-compute", help="same forms as --worker-compute")
    p.add_argument("--engine", choices=("flow", "ns3"), default="flow",
                   help="flow-level max-min (default) or packet-level ns-3 (extra perfmodel[ns3])")


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (argparse prints the whole usage first)."""

    def error(self, message):
        _say("error", f"{message} (see `{self.prog} --help`)")
        self.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``perfmodel`` command."""
    parser = _Parser(
        prog="perfmodel", description="Predict and optimize distributed deep-learning training speed.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    z = sub.add_parser("zoo", help="built-in DNNs, profiles and clusters")
    z.add_argument("action", choices=("list", "show", "schema"))
    z.add_argument("name", nargs="?", help="name for `show`")
    z.add_argument("--out", help="folder for `schema` (default: print)")
    z.add_argument("--format", choices=("table", "json"), default="table")

    p = sub.add_parser("predict", help="predict step time and throughput over a grid")
    _add_job_flags(p, with_format=("table", "json", "csv"))
    p.add_argument("--config", help="layerwise: W/R/PS, or several: 4/4/4,2/9/2 (default 4/4/4)")
    p.add_argument("--workers", default="1-16",
                   help="data-parallel workers, each a whole model replica (Config.n_replicas "
                        "in the API): 1-16, 1-16:2 or 1,2,4 (default 1-16)")
    p.add_argument("--bandwidth", help="NIC bandwidth(s), e.g. 10Gbps or 1Gbps,10Gbps "
                                       "(default: the cluster's)")
    p.add_argument("--ps", help="parameter servers: 1, 1-4 or 1,2 (default 1)")
    p.add_argument("--measurements", metavar="CSV",
                   help="measured runs of this job (the `calibrate fit` CSV): calibrate every "
                        "model of the runs' mode on them, answer with the one chosen by "
                        "leave-one-out error and regime, with 90%% intervals (--model is then "
                        "not used)")
    p.add_argument("--trace", metavar="FILE|zoo:NAME",
                   help="with --measurements: the job's per-layer trace (trace file, or a "
                        "zoo PipeDream profile such as zoo:resnet50); the simulator runs it "
                        "layer by layer (with --simulate) instead of equal blocks")
    p.add_argument("--lossy", action="store_true",
                   help="with --measurements: the link drops packets, so every model first fits "
                        "the chance that a message stalls for one retransmission timeout (the "
                        "cluster's retransmit_timeout, default 200 ms; the async MVA keeps its "
                        "level instead), and beyond the runs a sync interval reaches down to one "
                        "timeout a step (TCP incast); a step_time_median or step_time_std column "
                        "in the CSV holds the stall chance near what the step times imply")
    _add_selection_flags(p)

    sw = sub.add_parser("sweep", help="evaluate a grid of configurations on a process pool or "
                                      "a Dask cluster into a resumable CSV/JSONL/Parquet table")
    _add_job_flags(sw, with_format=("csv", "jsonl", "parquet"))
    sw.set_defaults(format=None)  # default: from the suffix of --out
    sw.add_argument("--workers", default="1-16",
                    help="data-parallel workers (Config.n_replicas in the API): 1-64, 1-64:2 "
                         "or 1,2,4 (default 1-16)")
    sw.add_argument("--ps", help="parameter servers: 1-4 or 1,2 (default 1; 0 for allreduce)")
    sw.add_argument("--bandwidth", help="NIC bandwidths, e.g. 1Gbps,10Gbps,25Gbps "
                                        "(default: the cluster's)")
    sw.add_argument("--batch", help="batch sizes per worker: 32,64,128 or 32-256:32 "
                                    "(default: the profile's)")
    sw.add_argument("--out", required=True,
                    help="table FILE (.csv, .jsonl or .parquet); finished points in it are "
                         "not computed again")
    sw.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786 "
                                        "(extra perfmodel[dask]; default: a local process pool)")
    sw.add_argument("--jobs", type=int, help="processes of the local pool (default: CPU count, "
                                             "only when the grid would take over 2 s in one "
                                             "process; 1: no pool)")
    sw.add_argument("--chunk-size", type=int, default=250, help="points per task (default 250)")

    o = sub.add_parser("optimize", help="find the best configuration (default: Yan et al. 2015's "
                                        "ImageNet-22K DNN on its 20-machine cluster)")
    _add_job_flags(o, with_format=("table", "json"), model="layerwise")
    o.add_argument("--machines", type=int, help="machine budget (default: the cluster's)")
    o.add_argument("--objective", choices=("throughput", "time", "cost"), default="throughput")
    o.add_argument("--top", type=int, default=5, help="ranked configurations to show")
    o.add_argument("--rank", help="layerwise: rank these W/R/PS configurations, e.g. Yan et al. 2015 "
                                   "Table 1: 4/4/4,4/4/2,2/9/2")
    o.add_argument("--spread", action="store_true",
                   help="layerwise: best and worst over every configuration (Yan et al. 2015 Fig. 15)")
    o.add_argument("--min-efficiency", type=float,
                   help="coarse models: keep configurations whose scaling efficiency "
                        "(throughput / workers / one worker's) is at least this")
    o.add_argument("--max-workers-per-replica", type=int, metavar="N",
                   help="layerwise: largest model parallelism to consider (default: the DNN's "
                        "limit, 4 for the Adam DNNs of Yan et al. 2015; none for others)")
    o.add_argument("--exhaustive", action="store_true",
                   help="brute force instead of the dynamic program (small instances only; "
                        "the coarse search always is exhaustive)")

    pl = sub.add_parser("place", help="iteration latency of jobs placed in a datacenter (Jain et al.)")
    _add_place_flags(pl)
    pl.add_argument("--plot", help="save the latency CDFs to this PNG or SVG (extra perfmodel[plot])")
    pl.add_argument("--format", choices=("table", "json"), default="table")

    sm = sub.add_parser("simulate", help="trace-driven simulation (Li et al. 2020 Algorithm 3.1, "
                                         "Li et al. 2022 Algorithm 1)")
    sm.add_argument("--trace",
                    help="trace FILE (JSON/YAML) or zoo:NAME (a PipeDream layer profile, e.g. "
                         "zoo:resnet50); required, here or as workload.trace of --job")
    sm.add_argument("--workers", default="1-8",
                    help="data-parallel workers (the simulate() argument `workers`): 1-10, "
                         "1-16:2 or 1,2,4 (default 1-8)")
    sm.add_argument("--bandwidth", default="10Gbps")
    sm.add_argument("--mode", choices=("async", "sync", "allreduce"), default="sync")
    sm.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"), default="hybrid")
    sm.add_argument("--steps", type=int, default=1000,
                    help="steps per worker, warm-up included (default 1000, as Li et al. 2020)")
    sm.add_argument("--warmup", type=int,
                    help="steps left out (default: 5%% of --steps, so 50 of the default 1000, "
                         "as Li et al. 2020)")
    sm.add_argument("--seed", type=int, default=0)
    sm.add_argument("--overlap", action=argparse.BooleanOptionalAction, default=None,
                    help="zoo traces: push a layer's gradient while earlier layers still "
                         "compute (default off, as `predict --model sim`); a trace file keeps "
                         "its own dependencies")
    sm.add_argument("--servers", type=int,
                    help="spread a one-server trace over N parameter servers as TensorFlow does "
                         "(Li et al. 2020, Sec. 5)")
    sm.add_argument("--window", help="HTTP/2 flow-control window, e.g. 64KiB (Li et al. 2020, "
                                     "Sec. 3.2.2; default: no flow control)")
    sm.add_argument("--parsing", metavar="S_PER_BYTE,S_PER_TENSOR",
                    help="parsing overhead of every received tensor, e.g. 1e-10,50e-6 "
                         "(Li et al. 2020, Sec. 3.2.1; default none)")
    sm.add_argument("--order", choices=("in_order", "reverse", "random", "critical_path"),
                    help="order of a worker's parameter pulls (Li et al. 2020, Sec. 3.3; "
                         "default: as profiled)")
    sm.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    sm.add_argument("--chrome-trace", help="write a Chrome trace (chrome://tracing) of 20 steps")
    sm.add_argument("--format", choices=("table", "json"), default="table")

    v = sub.add_parser("validate", help="every model against real measurements")
    v.add_argument("dataset", choices=("dl2", "matrix"),
                   help="dl2: MXNet PS training speeds (Optimus/DL2); matrix: every model before "
                        "and after calibration on DL2 and the ns-3 runs, and the selected model")
    v.add_argument("--dnn", action="append", help="only this DNN (repeatable)")
    v.add_argument("--train-size", type=int, default=2,
                   help="dl2, and matrix's DL2 part: fit on the N smallest server counts x N "
                        "smallest worker counts (default 2)")
    v.add_argument("--only", action="append", choices=("dl2", "ns3", "corpus"),
                   help="matrix: only this dataset (repeatable; corpus: the held-out "
                        "protocol on the ns-3 corpus, train and test side by side)")
    v.add_argument("--corpus", help="matrix --only corpus: one committed packet-level set by "
                                    "name (corpus; long-tail; corpus-8x: its loss-free regimes "
                                    "at 8 times the segments per transfer, 1-16 workers; "
                                    "probe, probe2: 16 regimes each "
                                    "with TCPs and DNNs the corpus never ran; probe3: 24 "
                                    "regimes with new TCPs, FIFO hosts and up to four "
                                    "servers; probe4: 24 fair-queued regimes on up to four "
                                    "servers; probe5: 24 on one or two; probe6: 24 on one "
                                    "or two, a third on FIFO hosts; probe7: the same, mostly "
                                    "async, with the update rate a factor; probe8: the same, "
                                    "half sync; probe9: the seventh's with slower updates; "
                                    "probe10: the ninth's drawn again; probe11: the ninth's, "
                                    "every regime overlapping; probe12: the fifth's network, "
                                    "mostly sync; probe13: the seventh's on up to four "
                                    "servers, half sync; probe14: the thirteenth's with "
                                    "heavy-tailed compute too; probe15: the fourteenth's, "
                                    "all sync; probe16: the fourteenth's, all async, slower "
                                    "updates; probe17: the sixteenth's at 10 and 25 Gbps; "
                                    "probe18: the sixteenth's on 3 or 4 servers; probe19: "
                                    "the fifteenth's, every regime's compute varying; "
                                    "probe20: the fourteenth's, all async on 1 or 2 "
                                    "servers, short updates; probe21: the eighteenth's "
                                    "with FIFO hosts and loss-based TCP; probe22: the "
                                    "twenty-first's with other update rates; probe23: the "
                                    "fifteenth's with FIFO hosts and loss-based TCP; "
                                    "probe24: the fourteenth's, all async, 8 times the "
                                    "segments per transfer; probe25: the twentieth's at 8 "
                                    "times the segments; probe26: the fourteenth's, all "
                                    "async on 2-4 servers, 8 times the segments; probe27: "
                                    "the twenty-fourth's drawn again) or a "
                                    "corpus CSV (default: the corpus and the twenty-seven "
                                    "probes)")
    v.add_argument("--split", action="append",
                   choices=("train", "test", "probe", "probe2", "probe3", "probe4", "probe5",
                            "probe6", "probe7", "probe8", "probe9", "probe10", "probe11",
                            "probe12", "probe13", "probe14", "probe15", "probe16",
                            "probe17", "probe18", "probe19", "probe20", "probe21",
                            "probe22", "probe23", "probe24", "probe25",
                            "probe26", "probe27", "probe28"),
                   help="matrix --only corpus: only this split (repeatable; probe28 is "
                        "measured as long jobs only: with --corpus FILE)")
    v.add_argument("--layers", action="store_true",
                   help="matrix --only corpus: give the selection each job's per-layer profile "
                        "(with the regime's overlap) instead of its coarse profile")
    v.add_argument("--jobs", type=int,
                   help="matrix --only corpus: evaluate the regimes in this many processes "
                        "(default 1; a --layers replay of every set is over an hour of one "
                        "core)")
    v.add_argument("--link-known", action="store_true",
                   help="matrix --only corpus: the user says how the hosts' queues and TCP "
                        "share a link (FIFO where loss-based TCP fills drop-tail queues, "
                        "else fair; the selection's link_sharing)")
    v.add_argument("--long-job", action="store_true",
                   help="matrix --only corpus: the selection answers a long job's speed "
                        "(its horizon; for the sets measured as long jobs)")
    v.add_argument("--cv-unknown", action="store_true",
                   help="matrix --only corpus: the user does not say how much the compute "
                        "varies (the models and their intervals take it as steady)")
    v.add_argument("--suggested-run", action="store_true",
                   help="matrix --only corpus: also measure the run each selection suggests "
                        "(where the models the 1-2 worker runs cannot tell apart part most) and "
                        "select again, predicting the other worker counts")
    v.add_argument("--ns3", help="matrix: the ns-3 runs CSV (default: the committed "
                                 "perfmodel/zoo/validation/ns3_matrix.csv)")
    v.add_argument("--train-workers", default="1,2",
                   help="matrix: worker counts of the ns-3 calibration runs (at most 2; "
                        "default 1,2)")
    v.add_argument("--dl2-extra", action="append", choices=("most-servers", "most-workers"),
                   help="matrix: calibrate DL2 on this run too, beside the 2 servers x 2 workers "
                        "(most-servers: the most servers at the fewest workers; most-workers: the "
                        "most workers at the fewest servers; repeatable)")
    v.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                   help="markdown: the matrix of docs/validation.md (matrix only)")

    c = sub.add_parser("calibrate", help="measure Yan et al. 2015's hardware constants on this machine "
                                         "(`calibrate`), or fit a model's tunables to measured "
                                         "throughputs (`calibrate fit`)")
    c.add_argument("action", nargs="?", choices=("machine", "fit"), default="machine")
    c.add_argument("--model", choices=registry.model_names(cli=True),
                   help="fit: the model (default: sync for sync measurements, async for async "
                        "ones, and async when --grid names a model option)")
    c.add_argument("--profile", default=DEFAULTS["profile"], help="fit: coarse profile FILE or zoo:NAME")
    c.add_argument("--cluster", help=f"fit: cluster FILE or zoo:NAME (default {DEFAULTS['cluster']})")
    c.add_argument("--measurements", help="fit: CSV of workers,n_ps,bandwidth,throughput")
    c.add_argument("--trace", metavar="FILE|zoo:NAME",
                   help="fit: the job's per-layer trace (trace file or zoo:NAME); --model sim "
                        "then runs it layer by layer")
    c.add_argument("--grid", action="append",
                   help="fit: KEY=START:STOP:STEP or KEY=A,B,C (repeatable), e.g. "
                        "rho_threshold=0.1:1.0:0.1")
    c.add_argument("--cv", default="loo", help="fit: loo, none, or K folds")
    c.add_argument("--params", help="fit: cluster fields to calibrate, comma-separated (default: "
                                    "link_efficiency,sharing_weight,update_growth,compute_cv; "
                                    "add timeout_probability on a lossy link; "
                                    "those without effect on the model are skipped)")
    c.add_argument("--save", help="fit: write the calibrated cluster file here (JSON or YAML)")
    c.add_argument("--search", choices=("auto", "joint", "coordinate"), default="auto",
                   help="fit: joint grid, one parameter at a time, or auto (coordinate for "
                        "--model sim, joint otherwise)")
    c.add_argument("--objective", choices=("mean_relative", "rms_relative", "max_relative"),
                   default="mean_relative")
    c.add_argument("--base", default=DEFAULTS["layerwise_cluster"],
                   help="cluster whose network and machine count are kept (default: %(default)s)")
    c.add_argument("--out", help="write the calibrated cluster file here (JSON or YAML)")
    c.add_argument("--quick", action="store_true", help="a few seconds instead of about one")
    c.add_argument("--threads", type=int, help="measure C_interf(H) up to this H (default: cores)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--format", choices=("table", "json"), default="table")

    pt = sub.add_parser("plot", help="draw a figure to PNG or SVG (extra perfmodel[plot])")
    kinds = pt.add_subparsers(dest="kind", required=True, metavar="KIND")
    drawn = {"scalability": "throughput over workers per model, saturation points marked",
             "phases": "stacked phase breakdown of the step time over workers (one model)",
             "gantt": "Gantt chart of a few simulated steps of a trace",
             "cdf": "iteration-latency CDFs of the placement strategies (Jain et al. Figs. 8-10)",
             "search-space": "epoch time over the configuration space (Yan et al. 2015 Fig. 15)",
             "sweep": "a `perfmodel sweep` table: one line per combination of its other axes"}
    kp = {name: kinds.add_parser(name, help=text, description=text, conflict_handler="resolve")
          for name, text in drawn.items()}
    for name in ("scalability", "phases", "search-space"):
        _add_job_flags(kp[name], with_format=("table",),
                       model="layerwise" if name == "search-space" else "sync")
        kp[name].add_argument("--format", default="table", help=argparse.SUPPRESS)
    kp["search-space"].add_argument("--max-workers-per-replica", type=int, metavar="N",
                                    help="largest model parallelism (default: the DNN's limit)")
    for name in ("scalability", "phases"):
        kp[name].add_argument("--workers", default="1-16" if name == "scalability" else "1,2,4,8,16",
                              help="workers: 1-16, 1-16:2 or 1,2,4 (default: %(default)s)")
        kp[name].add_argument("--bandwidth", help="NIC bandwidth, e.g. 10Gbps (default: the cluster's)")
    kp["scalability"].add_argument("--model", default="sync,allreduce,async",
                                   help="models, one curve each: e.g. sync,async,allreduce,gst "
                                        "(default: %(default)s)")
    kp["scalability"].add_argument("--threshold", type=float, default=0.1,
                                   help="saturation: the last K whose workers add more than this "
                                        "times one worker's throughput (default: %(default)s)")
    kp["scalability"].add_argument("--measurements", metavar="CSV",
                                   help="measured runs (the `calibrate fit` CSV): plot the model "
                                        "`predict --measurements` selects, its 90%% leave-one-out "
                                        "band and the measured points (--model is then not used)")
    kp["scalability"].add_argument("--lossy", action="store_true",
                                   help="with --measurements: a lossy link (as for predict)")
    _add_selection_flags(kp["scalability"])
    kp["search-space"].add_argument("--machines", type=int,
                                    help="machine budget (default: the cluster's)")
    g = kp["gantt"]
    g.add_argument("--trace", required=True, help="trace FILE or zoo:NAME, as for `perfmodel simulate`")
    g.add_argument("--workers", type=int, default=4, help="workers (default: %(default)s)")
    g.add_argument("--steps", type=int, default=3, help="steps per worker (default: %(default)s)")
    g.add_argument("--bandwidth", default="10Gbps")
    g.add_argument("--mode", choices=("async", "sync", "allreduce"), default="sync")
    g.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"), default="hybrid")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    _add_place_flags(kp["cdf"])
    kp["sweep"].add_argument("--table", required=True, help="table of `perfmodel sweep --out` "
                                                            "(CSV, JSON lines or Parquet)")
    kp["sweep"].add_argument("--x", default="workers", help="axis column (default: %(default)s)")
    kp["sweep"].add_argument("--y", choices=("throughput", "step_time", "epoch_time"),
                             default="throughput")
    for k in kp.values():
        k.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    for command in (p, sw, o, sm):
        command.add_argument("--job", metavar="FILE",
                             help="job file (YAML/JSON) with workload, cluster and execution "
                                  "sections; flags on the command line win (see docs/usage.md)")
    parser.commands = sub.choices  # each command's parser, for the job files' flags
    return parser


def _lazy(command: str):
    """The command's ``run(args)``, its module imported on the first call."""
    def run(args) -> str:
        return import_module(f"perfmodel._cli.{command}").run(args)
    return run


_COMMANDS = {name: _lazy(name) for name in ("zoo", "predict", "optimize", "calibrate", "place",
                                            "validate", "simulate", "sweep", "plot")}


#: Longest error line printed (a message quoting a huge value stays one short line).
MAX_MESSAGE = 400


def _say(kind: str, message) -> None:
    """One line on stderr: ``perfmodel: <kind>: <message>``, newlines folded, length capped."""
    text = " ".join(str(message).split())
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE - 3] + "..."
    print(f"perfmodel: {kind}: {text}", file=sys.stderr)


def _terminated(signum, frame):
    """SIGTERM ends the command like Ctrl-C: finished work kept, pools shut down."""
    raise KeyboardInterrupt


def _run(args, parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Run one parsed command; every failure becomes one line and an exit code."""
    try:
        if getattr(args, "job", None):  # imported like a command: only when used
            command, job = parser.commands[args.command], import_module("perfmodel._cli.job")
            job.apply_job(args, command, job.explicit_dests(command, argv))
        for name, value in vars(args).items():
            if isinstance(value, str) and not value.strip():
                raise CliError(f"--{name.replace('_', '-')}: empty value")
        check_int_limits(args)
        out = _COMMANDS[args.command](args)
    except (CliError, SpecError) as err:
        _say("error", err)
        return 2
    except Infeasible as err:
        _say("infeasible", err)
        return 1
    except KeyboardInterrupt:  # finished sweep chunks are kept; the same command resumes
        print("perfmodel: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        _say("error", f"{where}{err.strerror or err}")
        return 2
    except MemoryError:
        _say("error", "out of memory: ask for fewer workers, steps or configurations")
        return 2
    except RecursionError:
        _say("error", "input nested too deeply to follow")
        return 2
    except Exception as err:  # a bug: still one line, with what to report
        _say("internal error", f"{type(err).__name__}: {err} (please report this with the "
                               "command; PERFMODEL_TRACEBACK=1 shows the traceback)")
        if os.environ.get("PERFMODEL_TRACEBACK"):
            raise
        return 2
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `perfmodel ... | head`: the reader left
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 infeasible, 2 bad input, 130 interrupted)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)  # exits 2 with one line on bad flags
    previous = signal.getsignal(signal.SIGTERM)
    with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
        signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(args, parser, argv)
    finally:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)
