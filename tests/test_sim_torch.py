"""Tests of perfmodel.sim.torch_profile: profiling a real PyTorch module on the CPU.

Needs the optional extra (``pip install 'perfmodel[torch]'``; here ``pip install
torch==2.13.0``); skipped without it, except the import-guard test.
"""


import numpy as np
import pytest

from perfmodel.errors import SpecError
from perfmodel.sim import Trace, simulate

torch = pytest.importorskip("torch", reason="the perfmodel[torch] extra is not installed")
nn = torch.nn

from perfmodel.sim.torch_profile import profile_layers, profile_module  # noqa: E402


def small_cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8 * 8 * 8, 10))


def test_profile_small_cnn_bytes_steps_and_times():
    net = small_cnn()
    x, y = torch.randn(16, 3, 8, 8), torch.randint(0, 10, (16,))
    before = [p.detach().clone() for p in net.parameters()]
    prof = profile_layers(net, x, lambda out: nn.functional.cross_entropy(out, y), steps=4,
                          warmup=2)
    assert prof.names == ("0", "1", "2", "3", "4", "5")
    assert prof.kinds == ("Conv2d", "ReLU", "Conv2d", "ReLU", "Flatten", "Linear")
    expected = [sum(p.numel() * p.element_size() for p in m.parameters()) for m in net]
    assert prof.layer_bytes.tolist() == expected
    assert prof.t_forward.shape == prof.t_backward.shape == (4, 6) and prof.t_update.shape == (4,)
    assert (prof.t_forward > 0).all() and (prof.t_backward >= 0).all() and (prof.t_update > 0).all()
    # The segments add up to the step's wall time; the forward is a sane part of it.
    total = prof.t_forward.sum(1) + prof.t_backward.sum(1) + prof.t_update
    np.testing.assert_allclose(total, prof.t_wall, rtol=1e-9)
    # (A first step can carry one-time backward set-up, hence the median.)
    fwd = prof.t_forward.sum(1)
    assert (fwd < prof.t_wall).all()
    assert 0.02 < np.median(fwd / prof.t_wall) < 0.9
    assert (prof.t_forward_inside <= prof.t_forward + 1e-12).all()
    # The default optimizer (SGD, lr = 0) times an update without changing the weights.
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))
    assert all(p.grad is None for p in net.parameters())


def test_profile_module_trace_validates_and_simulates():
    net = small_cnn()
    x = torch.randn(8, 3, 8, 8)
    trace = profile_module(net, x, steps=3, warmup=1, name="cnn")
    assert isinstance(trace, Trace) and len(trace.steps) == 3
    assert trace.batch_size == 8 and trace.name == "cnn"
    n_bytes = sum(p.numel() * p.element_size() for p in net.parameters())
    assert trace.model_bytes == n_bytes == trace.bytes("uplink")
    assert Trace.from_dict(trace.to_dict()) == trace
    names = [op.name for op in trace.steps[0].ops if op.res == "downlink"]
    assert names == ["0 pull", "2 pull", "5 pull"]
    r = simulate(trace, 2, 1.25e9, mode="sync", sharing="ps", steps=20, warmup=2)
    assert np.isfinite(r.throughput) and r.throughput > 0
    fixed = profile_module(net, x, steps=2, warmup=0, t_update=0.002, overlap=False)
    assert fixed.seconds("ps") == pytest.approx(0.002)


def test_mlp_shared_and_container_parameters():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 20)
            self.act = nn.Tanh()
            self.fc2 = nn.Linear(20, 20)
            self.scale = nn.Parameter(torch.ones(20, dtype=torch.float64))   # container's own
            self.frozen = nn.Linear(20, 20)
            self.frozen.requires_grad_(False)
            self.unused = nn.Linear(5, 5)

        def forward(self, x):
            h = self.fc2(self.act(self.fc1(x)))
            h = self.fc2(self.act(h)) * self.scale.float()     # fc2 and act called twice
            return self.frozen(h)

    net = Net()
    prof = profile_layers(net, torch.randn(4, 10), steps=2, warmup=1)
    assert prof.names == ("fc1", "act", "fc2", "frozen")
    by = dict(zip(prof.names, prof.layer_bytes))
    assert by["fc1"] == (10 * 20 + 20) * 4 + 20 * 8      # + the root's float64 `scale`
    assert by["fc2"] == (20 * 20 + 20) * 4 and by["act"] == 0 and by["frozen"] == 0
    assert any("unused" in note for note in prof.notes)
    assert any("scale" in note or "root" in note for note in prof.notes)


def test_tuple_input_and_bad_arguments():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 2), nn.Linear(4, 2)

        def forward(self, x, z):
            return self.a(x) + self.b(z)

    t = profile_module(Two(), (torch.randn(5, 3), torch.randn(5, 4)), steps=2, warmup=0)
    assert t.batch_size == 5 and t.model_bytes == (8 + 10) * 4
    with pytest.raises(SpecError, match="module"):
        profile_module("not a module", torch.randn(2, 3))
    with pytest.raises(SpecError, match="steps"):
        profile_module(nn.Linear(3, 2), torch.randn(2, 3), steps=0)
    with pytest.raises(SpecError, match="warmup"):
        profile_module(nn.Linear(3, 2), torch.randn(2, 3), warmup=-1)
    with pytest.raises(SpecError, match="loss_fn"):
        profile_module(nn.Linear(3, 2), torch.randn(2, 3), lambda out: out)   # not a scalar
    with pytest.raises(SpecError, match="optimizer"):
        profile_module(nn.Linear(3, 2), torch.randn(2, 3), optimizer="sgd")
    with pytest.raises(SpecError, match="layer_bytes"):
        profile_module(nn.ReLU(), torch.randn(2, 3, requires_grad=True), steps=1, warmup=0)
    with pytest.raises(SpecError, match="t_update"):
        profile_module(nn.Linear(3, 2), torch.randn(2, 3), steps=1, warmup=0, t_update=-1.0)
