"""Chrome trace export of a simulation (Perfetto, chrome://tracing).

:func:`chrome_trace` turns a :class:`~perfmodel.sim.engine.SimResult` made with
``record=True`` into the Chrome Trace Event format (JSON object form): one
process per worker, one thread (track) per resource of that worker
(``downlink``, ``worker``, ``uplink``, ``ps``, per server when there are
several), one complete event ("ph": "X") per op, in microseconds.  Writing
the file is the caller's job (``json.dump``; :mod:`perfmodel.io` owns files).

References
----------
Trace Event Format (Google, "Trace Event Format" document): complete events
``ph = "X"`` with ``ts``/``dur`` in microseconds, metadata events
``process_name`` / ``thread_name``.  Li et al. 2022, Fig. 7 and
Li et al. 2020, Fig. 8 draw the same kind of per-worker, per-resource
timelines.
"""

from __future__ import annotations

import numpy as np

from ..errors import SpecError
from .trace import RESOURCES

__all__ = ["chrome_trace"]


def chrome_trace(result, *, max_events: int = 2_000_000) -> dict:
    """The simulated steps of ``result`` as a Chrome trace (a JSON-ready dict).

    Parameters
    ----------
    result : SimResult
        From :func:`~perfmodel.sim.simulate` with ``record=True`` (for a
        ``"hybrid"`` result, the PS run is exported).
    max_events : int
        Refuse larger exports (a viewer chokes on them): simulate fewer steps.

    Returns
    -------
    dict
        ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``;
        op events carry ``args`` with the step number, the profiled step and
        the op id.

    Raises
    ------
    SpecError
        ``result`` was simulated without ``record=True``, or is too large.

    Examples
    --------
    >>> from perfmodel.sim import Trace, simulate
    >>> t = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    >>> doc = chrome_trace(simulate(t, 2, 1.25e9, mode="sync", steps=2, warmup=0, record=True))
    >>> ops = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    >>> len(ops), ops[0]["name"], ops[0]["dur"]       # 2 workers x 2 steps x 5 ops
    (20, 'layer0 pull', 160000.0)
    """
    ops = getattr(result, "ops", None)
    if ops is None:
        raise SpecError("result", "has no recorded ops: simulate with record=True")
    n = len(ops["op"])
    if n > max_events:
        raise SpecError("result", f"{n} ops is more than max_events={max_events}; simulate "
                                  "fewer steps or workers")
    servers = int(result.meta.get("servers", 1))

    def track(res: int, server: int) -> tuple:
        name = RESOURCES[res]
        tid = res * servers + server
        if servers > 1 and name != "worker":
            name = f"{name} (server {server})"
        return tid, name

    events = []
    workers = sorted(set(ops["worker"].tolist()))
    used = sorted(set(zip(ops["worker"].tolist(), ops["res"].tolist(), ops["server"].tolist())))
    for w in workers:
        events.append({"ph": "M", "name": "process_name", "pid": w, "tid": 0,
                       "args": {"name": f"worker {w}"}})
    for w, res, server in used:
        tid, name = track(res, server)
        events.append({"ph": "M", "name": "thread_name", "pid": w, "tid": tid,
                       "args": {"name": name}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": w, "tid": tid,
                       "args": {"sort_index": tid}})
    start = np.asarray(ops["start"]) * 1e6
    dur = (np.asarray(ops["end"]) - np.asarray(ops["start"])) * 1e6
    labels = result.labels
    for i in range(n):
        step, op_id, name = labels[int(ops["op"][i])]
        tid, _ = track(int(ops["res"][i]), int(ops["server"][i]))
        events.append({"ph": "X", "name": name or str(op_id), "cat": RESOURCES[int(ops["res"][i])],
                       "pid": int(ops["worker"][i]), "tid": tid, "ts": float(start[i]),
                       "dur": float(dur[i]),
                       "args": {"step": int(ops["step"][i]), "profiled_step": int(step),
                                "op": op_id}})
    meta = {k: v for k, v in result.meta.items()}
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"generator": "perfmodel.sim", **{k: str(v) for k, v in meta.items()}}}
