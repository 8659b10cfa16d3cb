"""Estimate and the optimizer's results print as one short line, and as a small HTML table."""

import dataclasses
from html.parser import HTMLParser

import pytest

from optimizer.results import Candidate, DPResult, SearchResult
from perfmodel.result import Estimate
from perfmodel.specs import Config

PHASES = {"downlink": 0.1, "compute": 0.3, "uplink": 0.2}  # 600 ms, compute the longest
SAMPLES = 64  # samples per step


def _estimate(**meta) -> Estimate:
    return Estimate.from_phases(PHASES, SAMPLES, meta=meta)


def _deep(levels: int) -> dict:
    nested: dict = {}
    for i in range(levels):
        nested = {f"level{i}": nested, "pad": list(range(10))}
    return nested


class _Odd:
    """Every dunder a repr might touch raises."""

    def __repr__(self):
        raise RuntimeError("no repr")

    __str__ = __repr__

    def __eq__(self, other):
        raise RuntimeError("no eq")

    def __bool__(self):
        raise RuntimeError("no bool")

    __hash__ = object.__hash__


class _Tags(HTMLParser):
    """Checks that every opened tag is closed in order."""

    def __init__(self):
        super().__init__()
        self.stack, self.seen, self.errors = [], set(), []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        self.seen.add(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def _parse(text: str) -> _Tags:
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser


def test_repr_is_one_line_with_model_step_time_throughput_and_bottleneck():
    step = sum(PHASES.values())
    throughput = SAMPLES / step  # 106.67 samples/s
    text = repr(_estimate(model="AsyncMVA", workers=4))
    assert "\n" not in text
    assert text == (f"Estimate(AsyncMVA: {step * 1e3:.4g} ms/step, {throughput:.4g} samples/s, "
                    f"bottleneck=compute)")
    assert "106.7 samples/s" in text and "600 ms/step" in text


def test_repr_shows_the_interval_with_its_level():
    est = _estimate(model="SyncCoarse").with_interval(90.0, 120.0, level=0.9, source="residuals")
    assert repr(est).endswith(", bottleneck=compute, 90% [90, 120] samples/s)")
    # an odd level is left out, the interval is still shown
    odd = dataclasses.replace(est, meta=dict(est.meta, interval_level="ninety"))
    assert repr(odd).endswith(", bottleneck=compute, [90, 120] samples/s)")


def test_repr_units_follow_the_magnitude():
    slow = Estimate(step_time=2.5, throughput=40_000.0, bottleneck="uplink", epoch_time=30.0)
    # no model in meta: no name; >= 1 s in seconds; large rates with thousands separators
    assert repr(slow) == "Estimate(2.5 s/step, 40,000 samples/s, bottleneck=uplink, epoch=30 s)"
    quick = Estimate(step_time=0.0004, throughput=12.5)
    assert repr(quick) == "Estimate(0.4 ms/step, 12.5 samples/s)"


@pytest.mark.parametrize("meta", [
    {"model": "AsyncMVA", "big": list(range(10 ** 6))},
    {"model": "AsyncMVA", "deep": _deep(500)},
    {"model": list(range(10 ** 6))},
    {"model": _deep(500)},
    {"model": "x" * 10 ** 6},
    {"model": "line one\nline two\r\n\x00"},
    {"model": _Odd(), _Odd(): _Odd(), "interval_level": _Odd()},
    {f"key{i}": "v" * 1000 for i in range(10 ** 4)},
])
def test_repr_and_html_are_bounded_and_never_raise(meta):
    est = Estimate.from_phases(PHASES, SAMPLES, meta=meta)
    est = dataclasses.replace(est, bottleneck=_Odd() if "key0" in meta else est.bottleneck)
    text = repr(est)
    assert len(text) <= 200
    assert text.startswith("Estimate(") and text.endswith(")")
    assert len(text.splitlines()) == 1 and text.isprintable()
    assert f"{SAMPLES / sum(PHASES.values()):.4g} samples/s" in text
    page = est._repr_html_()
    assert len(page) < 20_000
    assert not _parse(page).errors


def test_repr_of_an_odd_bottleneck_and_interval_never_raises():
    est = Estimate(step_time=1.0, throughput=1.0, bottleneck=_Odd())
    object.__setattr__(est, "throughput_interval", _Odd())
    object.__setattr__(est, "meta", _Odd())
    text = repr(est)
    assert text.startswith("Estimate(1 s/step, 1 samples/s") and len(text) <= 200
    assert not _parse(est._repr_html_()).errors


def test_html_escapes_and_summarises_meta():
    long_text = "y" * 500
    est = _estimate(model="<b>Model</b>", note="<script>alert('x')</script>", text=long_text,
                    nested={str(i): i for i in range(5)}, items=[1, 2, 3], **{"<i>key": 1.5})
    est = est.with_interval(90.0, 120.0, level=0.9, source="residuals")
    page = est._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>" not in page and "&lt;b&gt;Model&lt;/b&gt;" in page
    assert "<i>" not in page and "&lt;i&gt;key" in page
    assert "dict of 5" in page and "list of 3" in page
    assert long_text not in page and "y" * 70 in page  # cut to about 80 characters
    assert f"{SAMPLES / sum(PHASES.values()):.4g} samples/s" in page
    assert "90% interval" in page and "[90, 120] samples/s" in page
    assert "compute" in page and "residuals" in page
    tags = _parse(page)
    assert not tags.errors and not tags.stack
    assert tags.seen == {"table", "caption", "tr", "th", "td"}


def test_html_lists_a_bounded_number_of_meta_entries():
    est = _estimate(model="M", **{f"k{i}": i for i in range(1000)})
    page = est._repr_html_()
    assert page.count("<tr>") < 60
    assert "more entries" in page
    assert not _parse(page).errors


def test_equality_asdict_and_to_dict_are_unchanged():
    a = _estimate(model="AsyncMVA", workers=4)
    b = _estimate(model="AsyncMVA", workers=4)
    assert a == b and a != _estimate(model="AsyncMVA", workers=5)
    step = sum(PHASES.values())
    assert a.to_dict() == {"step_time": step, "throughput": SAMPLES / step, "phases": PHASES,
                           "bottleneck": "compute",
                           "meta": {"model": "AsyncMVA", "workers": 4}}
    # (dataclasses.asdict cannot deep-copy the read-only mappings; the fields are read directly)
    fields = {f.name: getattr(a, f.name) for f in dataclasses.fields(Estimate)}
    assert fields == {"step_time": step, "throughput": SAMPLES / step, "phases": PHASES,
                      "bottleneck": "compute", "epoch_time": None,
                      "meta": {"model": "AsyncMVA", "workers": 4}, "throughput_interval": None}
    assert [f.name for f in dataclasses.fields(Estimate)] == [
        "step_time", "throughput", "phases", "bottleneck", "epoch_time", "meta",
        "throughput_interval"]


def test_optimizer_results_print_short():
    config = Config(n_replicas=4, n_ps=1)
    est = _estimate(model="SyncCoarse", layers=list(range(10 ** 6)))
    cand = Candidate(config, est, -est.throughput)
    text = repr(cand)
    assert text == f"Candidate({config!r}, {repr(est)[len('Estimate('):-1]}, score={-est.throughput:.4g})"
    result = SearchResult(best=cand, ranked=(cand,) * 1000, n_evaluated=12_345, seconds=2.5,
                          objective="throughput",
                          meta={"worst": cand, "below_floor": [{"why": "x"}] * 10 ** 5})
    text = repr(result)
    assert len(text) <= 300 and "\n" not in text
    assert text.startswith("SearchResult(objective=throughput, best=")
    assert "1000 ranked of 12345 evaluated in 2.5 s" in text
    dp = DPResult(config, 2e-4, 200.0, tuple((1, 1, 4) for _ in range(10 ** 5)), 777, True)
    text = repr(dp)
    assert text == (f"DPResult({config!r}, 0.2 ms/sample, epoch=200 s, 100000 layers, "
                    f"777 states priced, exact=True)")
    # equality is untouched
    assert cand == Candidate(config, est, -est.throughput)
    assert dp == DPResult(config, 2e-4, 200.0, dp.states, 777, True, pricer=object())
