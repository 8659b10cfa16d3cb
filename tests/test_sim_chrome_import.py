"""Tests of perfmodel.sim.chrome_import: PyTorch profiler Chrome traces -> layer-level traces.

The fixture tests/data/sim/torch_profiler_small.json is hand-made in the format of
``torch.profiler.profile.export_chrome_trace`` (torch 2.13): Linear(4, 3), ReLU,
Linear(3, 2) and an MSE loss, two ProfilerStep windows.  Sums worked by hand (us):

    forward  aten::linear 40; aten::relu 10; aten::linear#1 30 + 2 (broadcast_tensors, no
             autograd node of its own, joins the previous layer); aten::mse_loss 15 + 4
             (ones_like, the seed of the backward pass)
    backward mse_loss 10; linear#1 50 (Addmm) + 3 (AccumulateGrad bias) + 5 (T) + 3
             (AccumulateGrad weight) = 61; relu 10; linear 60 (70 in step 2) + 4 + 4 + 4 = 72 (82)
    bytes    linear (3*4 + 3) * 4 = 60 B; linear#1 (2*3 + 2) * 4 = 32 B
    update   Optimizer.step 30 us (40 us), split 60:32 over the two layers
"""

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfmodel.errors import SpecError
from perfmodel.sim import simulate
from perfmodel.sim.chrome_import import load_torch_profiler

FIXTURE = Path(__file__).parent / "data" / "sim" / "torch_profiler_small.json"
US = 1e-6


@pytest.fixture()
def data():
    return json.loads(FIXTURE.read_text())


def _times(step, prefix):
    return {op.name.rsplit(" ", 1)[0]: op.amount for op in step.ops if op.id.startswith(prefix)}


def test_fixture_hand_checked_sums(data):
    t = load_torch_profiler(data)
    assert len(t.steps) == 2 and t.name == "torch_profiler_small (hand-made)"
    names = ["aten::linear", "aten::relu", "aten::linear#1", "aten::mse_loss"]
    for s, (addmm, opt) in enumerate([(60, 30), (70, 40)]):
        step = t.steps[s]
        fwd = _times(step, "fwd")
        assert list(fwd) == names
        assert [fwd[n] / US for n in names] == pytest.approx([40, 10, 32, 19])
        bwd = _times(step, "bwd")
        assert [bwd[n] / US for n in names] == pytest.approx([addmm + 12, 10, 61, 10])
        assert sum(_times(step, "upd").values()) / US == pytest.approx(opt)
        assert _times(step, "upd")["aten::linear"] / US == pytest.approx(opt * 60 / 92)
        assert {k: v for k, v in _times(step, "down").items()} == \
            {"aten::linear": 60.0, "aten::linear#1": 32.0}
    assert t.model_bytes == 92.0
    assert "AccumulateGrad" in t.source


def test_fixture_simulates_and_options(data):
    t = load_torch_profiler(data, layer_bytes=[4e6, 0, 2e6, 0], t_update=0.001, overlap=False,
                            batch_size=8, name="small")
    assert t.model_bytes == 6e6 and t.batch_size == 8 and t.name == "small"
    assert t.seconds("ps") == pytest.approx(0.001)
    r = simulate(t, 2, 1.25e9, mode="sync", sharing="ps", steps=20, warmup=2)
    assert r.throughput > 0
    one = load_torch_profiler(data, skip_steps=1)
    assert len(one.steps) == 1 and one.steps[0] == load_torch_profiler(data).steps[1]


def test_whole_file_is_one_step_without_profiler_steps(data):
    events = [e for e in data["traceEvents"] if not str(e.get("name")).startswith("ProfilerStep")
              and not (e.get("ph") == "X" and e.get("ts", 0) >= 2000)]
    t = load_torch_profiler({"traceEvents": events})
    assert len(t.steps) == 1
    # aten::randn (the input, before the step) has no autograd node: joins the first layer.
    assert _times(t.steps[0], "fwd")["aten::linear"] / US == pytest.approx(60)
    with pytest.raises(SpecError, match="skip_steps"):
        load_torch_profiler({"traceEvents": events}, skip_steps=1)


def test_no_shapes_needs_layer_bytes(data):
    for e in data["traceEvents"]:
        if isinstance(e.get("args"), dict):
            e["args"].pop("Input Dims", None)
    with pytest.raises(SpecError, match="layer_bytes.*record_shapes"):
        load_torch_profiler(data)
    assert load_torch_profiler(data, layer_bytes=[1, 0, 1, 0]).model_bytes == 2
    with pytest.raises(SpecError, match="layer_bytes"):
        load_torch_profiler(data, layer_bytes=["a", "b"])


@pytest.mark.parametrize("patch, field", [
    (lambda ev: ev.__setitem__("dur", -1), "dur"),
    (lambda ev: ev.__setitem__("dur", "3us"), "dur"),
    (lambda ev: ev.pop("ts"), "ts"),
    (lambda ev: ev.__setitem__("ts", float("nan")), "ts"),
    (lambda ev: ev.__setitem__("name", 7), "name"),
    (lambda ev: ev.__setitem__("args", [1]), "args"),
])
def test_malformed_events_name_the_index(data, patch, field):
    i = next(k for k, e in enumerate(data["traceEvents"]) if e.get("name") == "aten::relu")
    patch(data["traceEvents"][i])
    with pytest.raises(SpecError) as err:
        load_torch_profiler(data)
    assert err.value.field == f"traceEvents[{i}].{field}"


def test_malformed_containers_and_dtypes(data):
    with pytest.raises(SpecError, match="traceEvents"):
        load_torch_profiler({"events": []})
    with pytest.raises(SpecError, match=r"traceEvents\[3\]: an event must be a mapping"):
        load_torch_profiler({"traceEvents": data["traceEvents"][:3] + ["oops"]})
    bad = copy.deepcopy(data)
    i = next(k for k, e in enumerate(bad["traceEvents"])
             if e.get("name") == "torch::autograd::AccumulateGrad")
    bad["traceEvents"][i]["args"]["Input type"] = ["quaternion"]
    with pytest.raises(SpecError) as err:
        load_torch_profiler(bad)
    assert err.value.field == f"traceEvents[{i}].args.Input type"
    bad = copy.deepcopy(data)
    i = next(k for k, e in enumerate(bad["traceEvents"]) if e.get("name") == "aten::relu"
             and e["ts"] > 2000)
    bad["traceEvents"][i]["name"] = "aten::gelu"      # step 2 runs other layers
    with pytest.raises(SpecError, match="same layers"):
        load_torch_profiler(bad)


def test_real_torch_profiler_export(tmp_path):
    torch = pytest.importorskip("torch", reason="the perfmodel[torch] extra is not installed")
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = torch.randn(8, 1, 8, 8), torch.randn(8, 10)
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True, schedule=sched) as prof:
        for _ in range(6):
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            opt.step()
            prof.step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    t = load_torch_profiler(json.loads(path.read_text()), batch_size=8)
    assert len(t.steps) == 3
    fwd = [op.name for op in t.steps[0].ops if op.id.startswith("fwd")]
    assert fwd == ["aten::conv2d forward", "aten::relu forward", "aten::flatten forward",
                   "aten::linear forward", "aten::mse_loss forward"]
    down = {op.name: op.bytes for op in t.steps[0].ops if op.res == "downlink"}
    assert down == {"aten::conv2d pull": (4 * 9 + 4) * 4.0,
                    "aten::linear pull": (144 * 10 + 10) * 4.0}
    for s in range(3):
        assert t.seconds("worker", step=s) > 0 and t.seconds("ps", step=s) > 0
    assert np.isfinite(simulate(t, 2, 1.25e9, mode="sync", sharing="ps", steps=20,
                                warmup=2).throughput)


def test_modules_import_without_torch():
    """Both modules import with torch unavailable; the profiler names the extra."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "import perfmodel.sim.chrome_import, perfmodel.sim.torch_profile as tp\n"
            "try:\n    tp.profile_module(object(), None)\n"
            "except ImportError as err:\n    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "perfmodel[torch]" in out.stdout
