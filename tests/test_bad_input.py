"""Bad input never gives a traceback: the command line's one rule under hostile input.

Every case is a command line a user (or a fuzzer) could type, with bad values,
bad files, bad paths, huge sizes or nonsense.  The rule for each: exit code 2
(1 for a configuration the model calls infeasible), exactly one line on
stderr starting ``perfmodel: error:`` or ``perfmodel: infeasible:``, never an
"internal error" (the boundary's catch-all for bugs), no NaN or infinity in
the output, and an answer within 10 seconds.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from perfmodel.cli import main

LIMIT_S = 10


# ------------------------------------------------------------------ bad files
def _bad_files(root: Path) -> dict[str, Path]:
    """Files a user could point any file flag at, each wrong in its own way."""
    def put(name: str, content) -> Path:
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]\n" for i in range(8))
    files = {
        "missing": root / "does_not_exist.json",
        "directory": root,
        "empty": put("empty.json", ""),
        "binary": put("binary.json", bytes(range(256)) * 8),
        "nul": put("nul.yaml", "machines: 8\x00\n"),
        "latin1": put("latin1.yaml", "name: caf\xe9\n".encode("latin-1")),
        "invalid_json": put("invalid.json", "{machines: 8,"),
        "invalid_yaml": put("invalid.yaml", "a: [1, 2\nb: }"),
        "alias_bomb": put("bomb.yaml", bomb),
        "alias_in_field": put("alias.yaml", "name: &n x\nsource: *n\n"),
        "deep_json": put("deep.json", "[" * 50_000 + "]" * 50_000),
        "deep_yaml": put("deep.yaml", "a:\n" + "".join("  " * i + "- \n" for i in range(1, 200))),
        "dup_json": put("dup.json", '{"machines": 8, "machines": 9, "nic_bandwidth": "10Gbps"}'),
        "dup_yaml": put("dup.yaml", "machines: 8\nmachines: 9\nnic_bandwidth: 10Gbps\n"),
        "list": put("list.json", "[1, 2, 3]"),
        "string": put("string.json", '"hello"'),
        "number": put("number.yaml", "42\n"),
        "null": put("null.yaml", "null\n"),
        "huge_int": put("huge_int.json", '{"machines": ' + "9" * 5000 + ', "nic_bandwidth": "10Gbps"}'),
        "huge_float": put("huge_float.json", '{"machines": 8, "nic_bandwidth": 1e400}'),
        "nan": put("nan.json", '{"machines": 8, "nic_bandwidth": NaN}'),
        "neg": put("neg.yaml", "machines: -8\nnic_bandwidth: -10Gbps\n"),
        "wrong_types": put("types.yaml", "machines: [8]\nnic_bandwidth: {a: 1}\n"),
        "bad_unit": put("unit.yaml", "machines: 8\nnic_bandwidth: 10 furlongs\n"),
        "unknown_field": put("unknown.yaml", "machines: 8\nnic_bandwidth: 10Gbps\nwarp: 9\n"),
        "int_keys": put("int_keys.yaml", "1: 2\n3: [4]\n"),
        "mixed_keys": put("mixed_keys.yaml", "1: 2\nname: x\n[1, 2]: 3\n"),
        "long_value": put("long.yaml", "machines: 8\nnic_bandwidth: " + "9" * 200_000 + "x\n"),
        "csv_units": put("units.csv", "workers,n_ps,bandwidth,throughput\n1,1,10Gbps,250 img/s\n"),
        "csv_nul": put("nul.csv", "workers,n_ps,bandwidth,throughput\n1,1,10Gbps,2\x0050\n"),
        "csv_nan": put("nan.csv", "workers,n_ps,bandwidth,throughput\n1,1,10Gbps,nan\n2,1,10Gbps,inf\n"),
        "csv_header": put("header.csv", "a,b,c\n1,2,3\n"),
        "csv_huge": put("huge.csv", "workers,n_ps,bandwidth,throughput\n1000000000,1,10Gbps,250\n"),
        # (a valid sweep table for `plot sweep`: skipped there)
        "csv_number_lines": put("numbers.csv", "\n".join(str(i) for i in range(50)) + "\n"),
        "trace_int_keys": put("trace_int.json", '{"1": 2, "3": [4]}'),
        "trace_server": put("trace_server.json",
                            '{"layers": [{"name": "a", "forward": 0.1, "backward": 0.1, '
                            '"bytes": 100, "server": 16000000000}]}'),
    }
    files["fifo"] = root / "fifo"   # opening it would block forever
    os.mkfifo(files["fifo"])
    return files


FILE_KINDS = ["missing", "directory", "empty", "binary", "nul", "latin1", "invalid_json",
              "invalid_yaml", "alias_bomb", "alias_in_field", "deep_json", "deep_yaml", "dup_json",
              "dup_yaml", "list", "string", "number", "null", "huge_int", "huge_float", "nan",
              "neg", "wrong_types", "bad_unit", "unknown_field", "int_keys", "mixed_keys",
              "long_value", "csv_units", "csv_nul", "csv_nan", "csv_header", "csv_huge",
              "csv_number_lines", "trace_int_keys", "trace_server", "fifo"]

#: Commands with a file flag: {name} is replaced by the bad file's path.
FILE_COMMANDS = {
    "cluster": ["predict", "--workers", "1-2", "--cluster", "{}"],
    "profile": ["predict", "--workers", "1-2", "--profile", "{}"],
    "dnn": ["predict", "--model", "layerwise", "--dnn", "{}"],
    "measurements": ["predict", "--measurements", "{}", "--workers", "1-4"],
    "calibrate": ["calibrate", "fit", "--measurements", "{}"],
    "trace": ["simulate", "--trace", "{}", "--workers", "1-2", "--steps", "20", "--warmup", "2"],
    "sweep_table": ["plot", "sweep", "--table", "{}", "-o", "{out}/x.png"],
    "optimize_dnn": ["optimize", "--dnn", "{}"],
}

# The files that suit a command are skipped where the file is valid for it.
_VALID_FOR = {"csv_huge": ("sweep_table",)}


# ------------------------------------------------------------------ bad values
UNIT_VALUES = ["10", "abc", "10 furlongs", "-10Gbps", "nanGbps", "infGbps", "1e99999999999Gbps",
               "1e-300bps", "1e400B", "0x10", ",", "10Gbps10", "1e308s", "10s", "5ms", "1e30GB",
               "9" * 5000 + "Gbps", "\x00", "10 Gbps Gbps"]
UNIT_FLAGS = {
    "--bandwidth": ["predict", "--workers", "1-2"],
    "--t-forward": ["predict", "--workers", "1-2"],
    "--t-backward": ["predict", "--workers", "1-2"],
    "--t-update": ["predict", "--workers", "1-2"],
    "--model-bytes": ["predict", "--workers", "1-2"],
    "--per-flow-cap": ["predict", "--workers", "1-2"],
}
SIM_UNIT_FLAGS = {"--bandwidth": ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "5",
                                  "--warmup", "1"],
                  "--window": ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "5",
                               "--warmup", "1"]}

RANGE_VALUES = ["0", "-1", "1-1000000000", "1-1000000", "5-1", "1-16:0", "1-16:-1", "a", "1,,2",
                "99999999999999999999999", "1e3", "1-", "-", ":", "1-2:99999999999999999999"]
RANGE_FLAGS = {
    "--workers": ["predict"],
    "--ps": ["predict", "--workers", "1-2"],
}
NUMBER_VALUES = ["nan", "inf", "-inf", "-1", "1e308", "abc", "99999999999999999999999"]
NUMBER_FLAGS = {  # float options of the models
    "--sharing-weight": ["predict", "--workers", "1-2"],
    "--link-efficiency": ["predict", "--workers", "1-2"],
    "--rho-threshold": ["predict", "--model", "async", "--workers", "1-2"],
    "--cv": ["predict", "--model", "gst", "--workers", "1-2"],
    "--sigma": ["predict", "--model", "gst", "--workers", "1-2"],
    "--level": ["predict", "--model", "gst", "--workers", "1-2"],
    "--jitter": ["predict", "--model", "sim", "--workers", "1-2"],
    "--mw-position": ["predict", "--model", "layerwise"],
    "--min-efficiency": ["optimize", "--model", "sync", "--machines", "4"],
}
INT_VALUES = ["0", "-1", "1000000000", "99999999999999999999"]
INT_FLAGS = {
    "--machines": ["optimize"],
    "--top": ["optimize"],
    "--batch-size": ["predict", "--workers", "1-2"],
    "--epoch-samples": ["predict", "--workers", "1-2"],
    "--threads": ["predict", "--model", "layerwise"],
    "--replications": ["predict", "--model", "sim", "--workers", "1"],
    "--max-workers-per-replica": ["optimize"],
    "--steps": ["simulate", "--trace", "zoo:resnet50", "--workers", "1"],
    "--warmup": ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "5"],
    "--servers": ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "5"],
    "--iterations": ["place", "--jobs", "1", "--workers", "1"],
    "--jobs": ["place", "--workers", "1", "--iterations", "2"],
    "--train-size": ["validate", "dl2"],
}

NAMED_CASES = [
    # zoo names and paths
    ["predict", "--cluster", "zoo:"], ["predict", "--cluster", "zoo:/etc/passwd"],
    ["predict", "--cluster", "zoo:../clusters/yan2015"], ["predict", "--cluster", "zoo:nope"],
    ["predict", "--profile", "zoo:nope"], ["predict", "--model", "layerwise", "--dnn", "zoo:nope"],
    ["simulate", "--trace", "zoo:nope"], ["simulate", "--trace", "zoo:"],
    ["simulate", "--trace", "zoo:/etc/passwd"], ["zoo", "show", "nope"], ["zoo", "show"],
    ["zoo", "show", "../clusters/yan2015"],
    # empty strings
    ["predict", "--cluster", ""], ["predict", "--dnn", ""], ["predict", "--bandwidth", ""],
    ["predict", "--model", "layerwise", "--config", ""], ["predict", "--profile", " "],
    ["optimize", "--rank", ""],
    # configurations
    ["optimize", "--rank", "100/100/100"], ["optimize", "--rank", "40/1/0"],
    ["optimize", "--rank", "a/b/c"], ["optimize", "--rank", "1/1"],
    ["optimize", "--rank", "0/0/0"], ["optimize", "--rank", "-1/4/4"],
    ["optimize", "--rank", "99999999999999999999/1/1"],
    ["predict", "--model", "layerwise", "--config", "100/100/100"],
    ["predict", "--model", "layerwise", "--config", "40/1/0"],
    ["predict", "--model", "layerwise", "--config", "4/4"],
    ["optimize", "--machines", "100000"], ["optimize", "--model", "sync", "--machines", "100000"],
    ["predict", "--model", "sim", "--workers", "100000"],
    ["predict", "--model", "sim", "--workers", "1-100000"],
    # topologies
    ["place", "--topology", "racks:100000x100000"], ["place", "--topology", "fattree:1001"],
    ["place", "--topology", "star:0"], ["place", "--topology", "bogus"],
    ["place", "--topology", "racks:0x0"], ["place", "--topology", "racks:2x2@10"],
    ["place", "--topology", "racks:2x2@10furlongs"], ["place", "--jobs", "100", "--workers", "100"],
    ["place", "--worker-compute", "lognormal:a,b"], ["place", "--worker-compute", "pareto:0.3,-3"],
    ["place", "--worker-compute", "warp:1"], ["place", "--model-bytes", "10"],
    # validate and calibrate
    ["validate", "matrix", "--train-workers", "0"], ["validate", "matrix", "--train-workers", "99"],
    ["validate", "matrix", "--train-workers", "a"], ["validate", "dl2", "--dnn", "nope"],
    ["validate", "matrix", "--ns3", "{missing}"], ["validate", "matrix", "--corpus", "{directory}"],
    ["calibrate", "fit"], ["calibrate", "fit", "--measurements", "{good_csv}", "--grid", "x"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--grid", "link_efficiency=1:0:0.1"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--grid", "link_efficiency=0:1:0"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--grid",
     "link_efficiency=0:1:0.0000001"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--cv", "0"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--cv", "-3"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--params", ""],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--save", "{directory}"],
    ["calibrate", "fit", "--measurements", "{good_csv}", "--save", "{out}/no/such/dir/c.json"],
    # output paths
    ["sweep", "--workers", "1-2", "--out", "{directory}"],
    ["sweep", "--workers", "1-2", "--out", "{out}/no/such/dir/s.csv"],
    ["sweep", "--workers", "1-2", "--out", "{out}/s.txt"],
    ["sweep", "--workers", "1-2", "--out", "{other_grid}"],
    ["sweep", "--workers", "1-2", "--out", "{binary_csv}"],
    ["sweep", "--workers", "1-2", "--out", "{numbers_csv}"],
    ["sweep", "--workers", "1-2", "--out", "{nan_table}"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "5", "--warmup", "1",
     "--chrome-trace", "{directory}"],
    ["zoo", "schema", "--out", "{good_csv}"],
    ["zoo", "schema", "--out", "{good_csv}/x"],
    # model options beyond their ranges
    ["predict", "--model", "gst", "--cv", "1e308", "--workers", "1-2"],
    ["predict", "--model", "gst", "--sigma", "1e308", "--workers", "1-2"],
    ["predict", "--model", "sim", "--jitter", "1e308", "--workers", "1"],
    ["predict", "--cluster", "{huge_timeout}", "--model", "async", "--workers", "1-2"],
    ["predict", "--batch-size", "99999999999999999999", "--workers", "1-2"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--bandwidth", "1bps", "--steps", "5"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--parsing", "1,2,3"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--parsing", "nan,1"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--parsing", "-1,-1"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--parsing", "1e308,1e308"],
    ["simulate", "--trace", "zoo:resnet50", "--workers", "1", "--steps", "1000000000"],
    # unknown flags and choices (argparse): one line too
    ["predict", "--warp"], ["predict", "--model", "warp"], ["frobnicate"], [],
    ["predict", "--workers"], ["plot"], ["plot", "sweep"],
]


def _cases():
    cases = []
    for kind in FILE_KINDS:
        for command, argv in FILE_COMMANDS.items():
            if kind in _VALID_FOR and command in _VALID_FOR[kind]:
                continue
            cases.append(pytest.param(argv, kind, id=f"file-{command}-{kind}"))
    for flag, base in UNIT_FLAGS.items():
        for i, value in enumerate(UNIT_VALUES):
            if value in ("10s", "5ms") and flag in ("--t-forward", "--t-backward", "--t-update"):
                continue  # valid times
            cases.append(pytest.param(base + [flag, value], None, id=f"unit{flag}-{i}"))
    for flag, base in SIM_UNIT_FLAGS.items():
        for i, value in enumerate(UNIT_VALUES):
            cases.append(pytest.param(base + [flag, value], None, id=f"sim{flag}-{i}"))
    for flag, base in RANGE_FLAGS.items():
        for i, value in enumerate(RANGE_VALUES):
            if flag == "--ps" and value == "0":
                continue  # 0 servers is all-reduce for the sync model: valid
            cases.append(pytest.param(base + [flag, value], None, id=f"range{flag}-{i}"))
    for flag, base in NUMBER_FLAGS.items():
        for i, value in enumerate(NUMBER_VALUES):
            cases.append(pytest.param(base + [flag, value], None, id=f"number{flag}-{i}"))
    valid = {("--epoch-samples", "1000000000"), ("--warmup", "0")}
    for flag, base in INT_FLAGS.items():
        for i, value in enumerate(INT_VALUES):
            if (flag, value) in valid:
                continue
            cases.append(pytest.param(base + [flag, value], None, id=f"int{flag}-{i}"))
    for i, argv in enumerate(NAMED_CASES):
        cases.append(pytest.param(argv, None, id=f"case-{i}-{'-'.join(argv)[:40]}"))
    return cases


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    files = _bad_files(root)
    files["good_csv"] = root / "good.csv"
    files["good_csv"].write_text("workers,n_ps,bandwidth,throughput\n1,1,10Gbps,250\n"
                                 "2,1,10Gbps,420\n4,1,10Gbps,600\n", encoding="utf-8")
    files["out"] = root
    files["other_grid"] = root / "other.csv"
    files["other_grid"].write_text("model,workers,n_ps,throughput\nasync,9,9,1.0\n",
                                   encoding="utf-8")
    files["binary_csv"] = root / "binary.csv"
    files["binary_csv"].write_bytes(bytes(range(256)))
    files["numbers_csv"] = root / "numbers_table.csv"
    files["numbers_csv"].write_text("1\n2\n3\n", encoding="utf-8")
    files["nan_table"] = root / "nan_table.csv"   # a real sweep table, one value made NaN
    assert main(["sweep", "--workers", "1-2", "--out", str(files["nan_table"])]) == 0
    head, first, *rest = files["nan_table"].read_text(encoding="utf-8").splitlines()
    column = head.split(",").index("throughput")
    cells = first.split(",")
    cells[column] = "nan"
    files["nan_table"].write_text("\n".join([head, ",".join(cells), *rest]) + "\n",
                                  encoding="utf-8")
    files["huge_timeout"] = root / "timeout.yaml"
    files["huge_timeout"].write_text("machines: 8\nnic_bandwidth: 10Gbps\nretransmit_timeout: "
                                     "1e308s\ntimeout_probability: 0.5\n", encoding="utf-8")
    return files


def _fill(argv, kind, files) -> list[str]:
    out = []
    for a in argv:
        if a == "{}":
            a = str(files[kind])
        else:
            a = re.sub(r"\{(\w+)\}", lambda m: str(files[m.group(1)]), a)
        out.append(a)
    return out


class _Slow(BaseException):
    """Not an Exception, so that the command's catch-all does not turn it into a line."""


def _alarm(signum, frame):
    raise _Slow


@pytest.mark.parametrize("argv, kind", _cases())
def test_bad_input_exits_with_one_line(argv, kind, bad_files, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative outputs land in the test's folder
    argv = _fill(argv, kind, bad_files)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(LIMIT_S)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    except _Slow:
        pytest.fail(f"took over {LIMIT_S} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    out, err = capsys.readouterr()
    assert code in (1, 2), (code, out[-300:], err[-300:])
    lines = err.splitlines()
    assert len(lines) == 1, err[-2000:]
    assert lines[0].startswith(("perfmodel: error:", "perfmodel: infeasible:")), lines[0]
    assert "internal error" not in err and "Traceback" not in err
    assert len(lines[0]) <= 500
    assert not re.search(r"\b(nan|inf)\b", out, flags=re.I), out[-500:]
