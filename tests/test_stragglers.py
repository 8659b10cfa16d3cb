"""Ring all-reduce with stragglers: eq. 11 plus the expected maximum of K compute times."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel import Config, zoo
from perfmodel.coarse import AllReduceCoarse, allreduce_step_time
from perfmodel.errors import Infeasible, SpecError
from perfmodel.stragglers import AllReduceStragglers, straggler_allreduce_step_time

JOB = zoo.profile("resnet50-pipedream")
NET = zoo.cluster("aws-p3.2xlarge")


def test_two_workers_by_hand():
    # E[max of 2 normals] = mu + sigma / sqrt(pi); the ring moves 2 (K-1)/K M / B
    mu, sigma, m, b = 0.3, 0.03, 100e6, 1.25e9
    expected = mu + sigma / math.sqrt(math.pi) + 2 * (2 - 1) / 2 * m / b
    got = straggler_allreduce_step_time(m, b, 0.1, 0.2, 2, sigma=sigma)
    assert got == pytest.approx(expected, rel=1e-12)


def test_without_spread_it_is_eq_11():
    k = np.arange(1, 65)
    assert np.allclose(straggler_allreduce_step_time(97.49e6, 1.25e9, 0.05, 0.1, k),
                       allreduce_step_time(97.49e6, 1.25e9, 0.05, 0.1, k), rtol=1e-12)
    for n in (1, 4, 16):
        config = Config(n_replicas=n, n_ps=0)
        calm = AllReduceStragglers(sigma=0.0).estimate(JOB, NET, config)
        coarse = AllReduceCoarse().estimate(JOB, NET, config)
        assert calm.step_time == pytest.approx(coarse.step_time, rel=1e-12)
        assert calm.phases["straggler"] == 0.0


def test_one_worker_waits_for_nobody():
    est = AllReduceStragglers(cv=0.3).estimate(JOB, NET, Config(n_replicas=1, n_ps=0))
    assert est.phases["straggler"] == pytest.approx(0.0, abs=1e-12)


def test_estimate_agrees_with_the_formula_and_reads_the_cluster_spread():
    net = NET.replace(compute_cv=0.1)
    est = AllReduceStragglers().estimate(JOB, net, Config(n_replicas=8, n_ps=0))
    sigma = 0.1 * (JOB.t_forward + JOB.t_backward)
    formula = straggler_allreduce_step_time(JOB.model_bytes, net.nic_bandwidth, JOB.t_forward,
                                            JOB.t_backward, 8, sigma)
    assert est.step_time == pytest.approx(formula, rel=1e-12)
    assert est.meta["sigma"] == pytest.approx(sigma)
    assert sum(est.phases.values()) == pytest.approx(est.step_time, rel=1e-12)
    assert est.throughput == pytest.approx(8 * JOB.batch_size / est.step_time)


@given(k=st.integers(1, 512), cv=st.floats(0.0, 0.5), extra=st.floats(0.0, 0.5))
def test_stragglers_only_slow_a_step_and_more_spread_slows_it_more(k, cv, extra):
    config = Config(n_replicas=k, n_ps=0)
    base = AllReduceCoarse().estimate(JOB, NET, config).step_time
    a = AllReduceStragglers(cv=cv).estimate(JOB, NET, config).step_time
    b = AllReduceStragglers(cv=cv + extra).estimate(JOB, NET, config).step_time
    assert base <= a * (1 + 1e-12) and a <= b * (1 + 1e-12)
    # physical floors: the compute of one worker and the ring's bytes over the link
    assert a >= JOB.t_forward + JOB.t_backward
    assert a >= 2 * (k - 1) / k * JOB.model_bytes / NET.nic_bandwidth


@given(k=st.integers(2, 64))
def test_more_workers_wait_longer_for_the_slowest(k):
    delays = [AllReduceStragglers(cv=0.1).estimate(JOB, NET, Config(n_replicas=n, n_ps=0))
              .phases["straggler"] for n in (k, k + 1)]
    assert delays[0] < delays[1]


def test_bad_options_and_configurations():
    with pytest.raises(SpecError, match="sigma"):
        AllReduceStragglers(sigma=-1.0)
    with pytest.raises(SpecError, match="cv"):
        AllReduceStragglers(cv="high")
    with pytest.raises(Infeasible, match="data-parallel"):
        AllReduceStragglers().estimate(JOB, NET, Config(n_workers=2, n_replicas=2, n_ps=0))
    with pytest.raises(SpecError, match="sigma"):
        straggler_allreduce_step_time(1e6, 1e9, 0.1, 0.1, 4, sigma=float("nan"))
