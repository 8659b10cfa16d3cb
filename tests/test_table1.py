"""Yan et al. 2015's Table 1 (ranking of 8 + 8 configurations) and Figs. 8-9 (scalability shapes).

What the model reaches, and why (zoo ``adam-mnist``, ``adam-imagenet22k``, ``yan2015``)
--------------------------------------------------------------------------------
Spearman correlation of the predicted against the measured ranking of Table 1
(the configurations as given, each at its default plan):

=============================================  ========  ==============  ========  ============
model options                                  MNIST     best (paper     I-22K     best (paper
                                                         2/9/2)                    4/4/4)
=============================================  ========  ==============  ========  ============
default ``LayerWise()`` (docs/models.md)       0.86      4/4/4           0.89      4/4/4
``PRINTED_READING`` (see below)                0.52      4/4/4           0.27      4/3/6 = 4/3/4
=============================================  ========  ==============  ========  ============

With the model-parallelism limit of footnote 7 (4 workers per replica, a
field of the zoo DNNs), ``perfmodel optimize`` answers 4/4/4 for ImageNet-22K
and 4/4/4 for MNIST (the paper: 2/9/2); see "MNIST 4/4/4" below.

* **PRINTED_READING** = ``LayerWise(read_bandwidth="thread", mw_position=0.5)``,
  the defaults before docs/models.md's revision.  ``mw_position=0.5`` and
  ``C_nbw(H) = C_nbw / H`` in eqs. 10-11
  make the weight read term M_w N_sample / N_read 17-720 times the whole
  compute (ImageNet-22K 4/4/4: 0.28 s of reads against 9 ms of compute per
  sample): a 711 MB read at 1/16 of a 10 GbE NIC, half-way to the worst case
  of eq. 10, which grows with N_mr.  The ranking is then the ranking of
  ``1/min(N_ps, N_wr) + N_mr``: fewer replicas win (data parallelism even
  *slows down*: 1 -> 4 replicas = 0.36x for MNIST, 0.41x for ImageNet-22K),
  the opposite of Table 1 for MNIST's single-worker rows, and 2/9/2 comes
  last for ImageNet-22K.  No plausible DNN shape changes this: the order is
  that of M_w alone unless the weights are tiny next to the compute.
* **Default** = ``LayerWise(read_bandwidth="machine", mw_position=0)``:
  the worker fetches the weights once over its whole NIC (its 16 threads share
  them in memory, Sec. 4.2.1) and reads are at the best case of eq. 11, the
  case the paper itself invokes to explain Table 1 ("a single-worker replica
  does not effectively leverage the extra parameter server bandwidth (as
  shown in Eq. 11)").  Then the paper's own explanations come out: 2/9/2 beats
  1/18/2, and the single-worker rows rank 1/19/1 > 1/18/2 > 1/16/4 > 1/12/8.
  What stays off:

  - **Ties (ImageNet-22K, both option sets).**  Eqs. 10-11 see N_ps only
    through min(N_ps, N_wr): 4/3/6 = 4/3/4 and 2/6/6 = 2/6/4 exactly, so even
    a perfect model scores at most 0.988.  The paper resolves them, so its
    implementation had some N_ps dependence it does not print.
  - **ImageNet-22K 2/9/2 ranks 2nd (measured 3rd), 4/4/2 3rd (measured 2nd),
    2/8/4 4th (measured 6th).**  With M_w at eq. 11, 4/4/2 and 2/9/2 read
    alike (min(N_ps, N_wr) = 2), so 4/4/2 wins only if 4 workers compute more
    than 9/4 = 2.25 times faster than 2 (super-linear model parallelism 2 -> 4
    of 12 %).  The cache model gives 0.5 %: the fully connected weights (174 M
    parameters, 696 MB) are still 189 MB per worker at 4 workers (with the
    replicated conv kernels), far above the 40 MB of L3, so "partitioned
    weights fit in L3" (Sec. 6.2.1) does not happen; the convolutions (93 %
    of the connections) keep their kernels in cache at any partitioning
    (stripes replicate them).  Narrower fully connected layers would fit
    sooner but weigh less in the compute and in the reads (fc 1024-1024:
    Spearman 0.84); with a 20 MB cache (one socket's L3) the 0.5 % turns
    into -0.2 % and the Spearman into 0.80.
  - **MNIST 4/4/4 ranks 1st (measured 4th).**  Reads are 40-85 % of MNIST's
    time here (681 K parameters, 2.7 MB per read every 70 samples against 2 ms
    of compute per sample and thread), and 4/4/4 reads with 4 lanes where
    2/9/2 and 2/6/8 read with 2: per sample it saves 7.8 us of reads (41 %)
    and loses only 6.3 us of compute against 2/9/2 and 0.8 us against 2/6/8,
    because 4 workers still compute 1.43 times faster than 2.  The paper's
    ranking needs 4/4/4's compute to lose more than its reads gain, i.e.
    MNIST's 2 -> 4 worker step to be much worse than the model's.  Making
    MNIST lighter in weights does not help: Table 1 needs MNIST's reads to
    matter -- 2/9/2 beats 1/19/1 and 2/6/8 beats 1/19/1 only through eq.
    11's extra lanes -- so a conv-heavy MNIST with 182 K
    parameters (conv2 64 maps, fc 128-128) scores 0.33 (1-worker replicas
    win).  That is also why Fig. 8's "parameter-server scaling gives MNIST no
    speedup" cannot hold together with Table 1 under eqs. 10-11: the same
    reads that order Table 1 make 1 -> 4 servers 1.8x faster at 4/4/x.

Figs. 8-9 with the defaults (degrees 1, 2, 4 of one mode, 4 of the others):

======================  =======================  ============================
speedup at 1, 2, 4      MNIST                    ImageNet-22K
======================  =======================  ============================
model parallelism       1.55, 2.38 (paper: 2,    2.01, 4.03 (super-linear,
                        then sub-linear)         barely: cache blend + reads)
data parallelism        1.75, 2.80               1.90, 3.45 (near-linear)
parameter servers       1.43, 1.82 (paper: 1)    1.31, 1.55 (helps, diminishing)
======================  =======================  ============================

The shapes that hold are asserted below.  Those that do not are strict
xfails, so a change that fixes them shows up: MNIST parameter servers give no
speedup (see above), MNIST model parallelism is linear 1 -> 2 (eq. 6's
messages, 50 us each at 1/16 of the NIC per thread, add 48 % to the compute
at 2 workers), and MNIST's best configuration is 2/9/2.

References
----------
Yan, Ruwase, He, Chilimbi. Performance Modeling and Scalability Optimization of
Distributed Deep Learning Systems. KDD, 2015.  Sec. 6.2.1 (Figs. 8-9),
Sec. 6.2.2 (Table 1), eqs. 10-11 and T_epoch (Sec. 4.2.3).
"""

import pytest
from scipy.stats import spearmanr

from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.layerwise import LayerWise
from perfmodel.specs import Config

#: Table 1, in measured order (rank 1 first), W/R/PS.
MNIST_MEASURED = ("2/9/2", "2/8/4", "2/6/8", "4/4/4", "1/19/1", "1/18/2", "1/16/4", "1/12/8")
I22K_MEASURED = ("4/4/4", "4/4/2", "2/9/2", "4/3/6", "4/3/4", "2/8/4", "2/6/6", "2/6/4")
#: N_sample: MNIST's 60,000 training images; ImageNet-22K's "over 15 million".
SAMPLES = {"adam-mnist": 60_000, "adam-imagenet22k": 15_000_000}

#: The defaults: weights read once per worker over its whole NIC, at the best case of eq. 11.
DEFAULT = LayerWise()
#: eqs. 10-11 with C_nbw(H) = C_nbw / H, half-way between them (the defaults until revised).
PRINTED_READING = LayerWise(read_bandwidth="thread", mw_position=0.5)


@pytest.fixture(scope="module")
def cluster():
    return zoo.cluster("yan2015")


@pytest.fixture(scope="module")
def dnns():
    return {name: zoo.load(name) for name in SAMPLES}


def _config(text: str, samples: int) -> Config:
    w, r, s = map(int, text.split("/"))
    return Config(n_workers=w, n_replicas=r, n_ps=s, epoch_samples=samples)


def epoch_times(model, dnn, cluster, configs) -> dict:
    """T_epoch (s) of each W/R/PS configuration."""
    return {c: model.estimate(dnn, cluster, _config(c, SAMPLES[dnn.name])).epoch_time
            for c in configs}


def ranking(model, dnn, cluster, measured):
    """(Spearman rho, predicted order, report text) of Table 1 for one benchmark."""
    times = epoch_times(model, dnn, cluster, measured)
    rho = float(spearmanr(range(len(measured)), [times[c] for c in measured]).statistic)
    predicted = sorted(measured, key=lambda c: times[c])
    lines = [f"{dnn.name}: Spearman {rho:.3f}",
             f"  measured  order: {' > '.join(measured)}",
             f"  predicted order: {' > '.join(predicted)}"]
    lines += [f"  {c:7s} measured rank {i + 1}, predicted rank {predicted.index(c) + 1}, "
              f"T_epoch {times[c]:12.5g} s" for i, c in enumerate(measured)]
    text = "\n".join(lines)
    print("\n" + text)
    return rho, predicted, text


def speedups(model, dnn, cluster, mode: str) -> list:
    """Fig. 8-9 speedup at degree 1, 2, 4 of ``mode`` (W, R or PS), 4 for the other two."""
    times = []
    for d in (1, 2, 4):
        w, r, s = {"W": (d, 4, 4), "R": (4, d, 4), "PS": (4, 4, d)}[mode]
        cfg = Config(n_workers=w, n_replicas=r, n_ps=s, epoch_samples=1000)
        times.append(model.estimate(dnn, cluster, cfg).epoch_time)
    out = [times[0] / t for t in times]
    print(f"\n{dnn.name} {mode} speedups at 1, 2, 4: " + ", ".join(f"{s:.2f}" for s in out))
    return out


# ------------------------------------------------------------------ Table 1
def test_table1_printed_reading(cluster, dnns):
    """Per-thread reads half-way to eq. 10: reads dominate; 0.52 (MNIST) and 0.27 (ImageNet-22K)."""
    rho_m, _, text_m = ranking(PRINTED_READING, dnns["adam-mnist"], cluster, MNIST_MEASURED)
    rho_i, _, text_i = ranking(PRINTED_READING, dnns["adam-imagenet22k"], cluster,
                               I22K_MEASURED)
    assert rho_m >= 0.45, text_m
    assert rho_i >= 0.20, text_i


def test_table1_default_model(cluster, dnns):
    """Whole-NIC reads at eq. 11's best case: 0.86 (MNIST), 0.89 and the best config (I-22K)."""
    rho_m, pred_m, text_m = ranking(DEFAULT, dnns["adam-mnist"], cluster, MNIST_MEASURED)
    rho_i, pred_i, text_i = ranking(DEFAULT, dnns["adam-imagenet22k"], cluster,
                                    I22K_MEASURED)
    assert rho_m >= 0.80, text_m
    assert rho_i >= 0.85, text_i
    assert pred_i[0] == "4/4/4", text_i
    # MNIST: 2/9/2 is the best configuration that does not use 4 workers.
    assert [c for c in pred_m if c != "4/4/4"][0] == "2/9/2", text_m


def test_table1_paper_explanations_hold(cluster, dnns):
    """Sec. 6.2.2: 2/9/2 beats 1/18/2 (eq. 11's lanes); single-worker rows lose with more PS."""
    times = epoch_times(DEFAULT, dnns["adam-mnist"], cluster, MNIST_MEASURED)
    assert times["2/9/2"] < times["1/18/2"]
    singles = ["1/19/1", "1/18/2", "1/16/4", "1/12/8"]
    assert [times[c] for c in singles] == sorted(times[c] for c in singles)


def test_table1_servers_beyond_workers_tie(cluster, dnns):
    """Eqs. 10-11 see N_ps only via min(N_ps, N_wr): 4/3/6 = 4/3/4 and 2/6/6 = 2/6/4."""
    for model in (DEFAULT, PRINTED_READING):
        times = epoch_times(model, dnns["adam-imagenet22k"], cluster, I22K_MEASURED)
        assert times["4/3/6"] == pytest.approx(times["4/3/4"], rel=1e-12)
        assert times["2/6/6"] == pytest.approx(times["2/6/4"], rel=1e-12)


@pytest.mark.xfail(strict=True, reason="MNIST 4/4/4 ranks first: see the module docstring")
def test_table1_mnist_best_is_2_9_2(cluster, dnns):
    _, pred, text = ranking(DEFAULT, dnns["adam-mnist"], cluster, MNIST_MEASURED)
    assert pred[0] == "2/9/2", text


# ------------------------------------------------------------------ Figs. 8-9
def test_fig9_imagenet_data_parallelism_near_linear(cluster, dnns):
    s = speedups(DEFAULT, dnns["adam-imagenet22k"], cluster, "R")
    assert s[1] >= 1.8 and s[2] >= 3.2, s


def test_data_parallelism_scales_while_reads_are_small(cluster, dnns):
    """Observation (2): the smaller the read share, the closer to linear (MNIST reads more)."""
    s_i = speedups(DEFAULT, dnns["adam-imagenet22k"], cluster, "R")
    s_m = speedups(DEFAULT, dnns["adam-mnist"], cluster, "R")
    assert s_m[0] < s_m[1] < s_m[2] < s_i[2], (s_m, s_i)


def test_fig9_imagenet_parameter_servers_help_with_diminishing_returns(cluster, dnns):
    s = speedups(DEFAULT, dnns["adam-imagenet22k"], cluster, "PS")
    assert s[1] >= 1.25 and s[2] >= 1.45, s
    assert s[2] / s[1] < s[1], s  # the second doubling gains less than the first


def test_fig9_imagenet_model_parallelism_super_linear(cluster, dnns):
    s = speedups(DEFAULT, dnns["adam-imagenet22k"], cluster, "W")
    assert s[1] > 2.0 and s[2] > 4.0, s


def test_fig8_mnist_model_parallelism_sub_linear_2_to_4(cluster, dnns):
    """Observation (1): model parallelism helps ImageNet-22K more than MNIST."""
    s_m = speedups(DEFAULT, dnns["adam-mnist"], cluster, "W")
    s_i = speedups(DEFAULT, dnns["adam-imagenet22k"], cluster, "W")
    assert s_m[1] > 1.0 and s_m[1] < s_m[2] and s_m[2] / s_m[1] < 2.0, s_m
    assert s_m[2] < s_i[2], (s_m, s_i)


@pytest.mark.xfail(strict=True, reason="MNIST reads are 40-85 % of its time: more servers help")
def test_fig8_mnist_parameter_servers_give_no_speedup(cluster, dnns):
    s = speedups(DEFAULT, dnns["adam-mnist"], cluster, "PS")
    assert s[2] < 1.1, s


@pytest.mark.xfail(strict=True, reason="eq. 6's messages add 48 % to MNIST's compute at 2 workers")
def test_fig8_mnist_model_parallelism_linear_1_to_2(cluster, dnns):
    s = speedups(DEFAULT, dnns["adam-mnist"], cluster, "W")
    assert s[1] >= 1.9, s


# ------------------------------------------------------------------ the options used here
def test_read_options_by_hand(cluster, dnns):
    dnn = dnns["adam-mnist"]
    cfg = _config("2/9/2", 60_000)
    reads = {bw: LayerWise(read_bandwidth=bw, mw_position=0.5).estimate(dnn, cluster, cfg).meta
             for bw in ("thread", "machine")}
    # Whole NIC: the byte term is H = 16 times shorter; the latency term keeps C_ncost(H).
    lat = len(dnn.layers) * cluster.latency
    for key in ("M_w_min", "M_w_max"):
        assert reads["machine"][key] - lat == pytest.approx(
            (reads["thread"][key] - lat) / cluster.cores, rel=1e-12)
    printed = LayerWise().estimate(dnn, cluster, cfg).phases["weights"]
    per_replica = LayerWise(read_term="per_replica").estimate(dnn, cluster, cfg).phases["weights"]
    assert per_replica == pytest.approx(printed / 9, rel=1e-12)
    layer = LayerWise(working_set="layer").estimate(dnn, cluster, cfg)
    assert layer.epoch_time > 0 and layer.meta["working_set"] == "layer"


@pytest.mark.parametrize("field", ["read_bandwidth", "read_term", "working_set"])
def test_read_options_validate(field):
    with pytest.raises(SpecError, match=field):
        LayerWise(**{field: "sometimes"})
