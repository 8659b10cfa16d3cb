"""Kernels of the fluid transfer model: no validation, arrays in, arrays out.

Public names inside a private module: :mod:`perfmodel.collectives` validates its
arguments and calls these; :mod:`perfmodel.coarse` validates once per call and
composes them.  ``n_ps=None`` stands for one server and ``cap=None`` for no
per-flow cap, so the paper's case costs no extra array operation.  See
:mod:`perfmodel.collectives` for the model and its references.
"""

from __future__ import annotations

import numpy as np

__all__ = ["is_one", "servers", "solo_time", "shared_time", "pull_time", "push_time",
           "ring_time", "tree_time", "allreduce_time", "broadcast_time"]


def is_one(a: np.ndarray) -> bool:
    """Whether every element is 1 (one server, one GPU: the paper's case)."""
    return bool(np.all(a == 1))


def servers(n_ps: np.ndarray) -> np.ndarray | None:
    """Validated server counts for the kernels: None stands for one server."""
    return None if is_one(n_ps) else n_ps


def solo_time(m, b, n_ps, cap):
    """One worker moving its M bytes to/from ``n_ps`` servers with the links to itself."""
    t = m / b
    if cap is not None:
        t = np.maximum(t, m / cap if n_ps is None else m / (n_ps * cap))
    return t


def shared_time(m, b, k, n_ps, cap):
    """K workers moving M bytes each at once, each link shared equally (fluid)."""
    if n_ps is None:
        t = k * (m / b)
    else:  # each server link carries K*M/n_ps; a worker's own NIC still carries M
        t = np.maximum(k * (m / (n_ps * b)), m / b)
    if cap is not None:
        t = np.maximum(t, m / cap if n_ps is None else m / (n_ps * cap))
    return t


def pull_time(m, b, k, n_ps, cap, sharing):
    """K pulls at once (the same under ``"ps"`` and FCFS)."""
    # Under FCFS the last of the K pulls ends when the server link has sent
    # K*M/n_ps bytes, the same instant as under equal sharing (eqs. 7 and 8
    # have the same downlink term); `sharing` is accepted for symmetry.
    return shared_time(m, b, k, n_ps, cap)


def push_time(m, b, k, n_ps, cap, sharing):
    """K pushes: shared under ``"ps"``, the uncontended push under FCFS."""
    if sharing == "ps":
        return shared_time(m, b, k, n_ps, cap)
    return solo_time(m, b, n_ps, cap)


def ring_time(m, b, k):
    """Ring all-reduce of M bytes among K members: ``2 (K - 1) / K * M / B``."""
    return (2.0 * (k - 1.0) / k) * (m / b)


def tree_time(m, b, k):
    """Tree all-reduce: ``2 ceil(log2 K) M / B``."""
    return (2.0 * np.ceil(np.log2(k))) * (m / b)


def allreduce_time(m, b, k, algorithm):
    """Ring or tree all-reduce by ``algorithm``."""
    return ring_time(m, b, k) if algorithm == "ring" else tree_time(m, b, k)


def broadcast_time(m, bi, g):
    """Intra-machine broadcast of M bytes to G GPUs (0 with one GPU)."""
    return np.where(g > 1, m / bi, 0.0)
