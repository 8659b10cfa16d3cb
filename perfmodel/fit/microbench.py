"""The micro-benchmarks of Yan et al. 2015, measured on the machine they run on.

Yan et al. 2015 (Sec. 4.1-4.2) price every segment of a layer with a handful
of hardware constants, each "obtained through profiling a micro benchmark that
emulates feed-forward evaluation ... (i.e., canonical computation)" (their
Fig. 5)::

    for i in segment:                 # N neurons
        y_i = sum_j w_ij * a_j        # |S_i| multiply-adds, C_muladd each
        a_i = f(y_i)                  # C_act

This module runs that canonical computation written with numpy, for one
sample (a matrix-vector product ``y = W @ a`` then ``f(y)``, the paper's
per-sample model), and returns:

* ``C_muladd`` (eqs. 5, 7, 8) with the weights in the last-level cache, and
  ``C_muladd_mem`` with a working set several times the cache (weights
  streamed from memory): time of ``W @ a`` over ``rows * cols``;
* ``C_act`` (eq. 5): the activation ``f`` per element;
* ``C_err`` (eq. 7): the error function per element, ``f'(y) * e`` (the
  derivative written from the activation, times the incoming error);
* ``C_interf(H)`` (eq. 9): the same canonical code run by ``H`` concurrent
  processes on different cores, median per-process time over the
  one-process time (each process timed alone, median over processes), so
  ``C_interf(1) == 1`` by construction;
* the last-level cache size and where it was read from.

How the measurements are run
----------------------------
Every timing runs in a ``multiprocessing`` *spawn* subprocess started with
``OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = ... = 1`` in its
environment, so that the BLAS library loads with one thread (environment
variables only act before numpy is imported, hence a fresh process; this needs
no extra dependency such as threadpoolctl).  The parent sets the variables in
its own ``os.environ`` only while it starts the processes and then restores
them.  The same processes serve the interference measurement: ``H`` of them
run the canonical code at once, each on one BLAS thread and, where the
platform allows, pinned to its own CPU (``pin=True``).  The weight matrices
live in shared memory (:mod:`multiprocessing.shared_memory`) so that the
``H`` processes share one copy of the weights, as the threads of
Yan et al. 2015, Sec. 4.2.1 do; each process has its own input vector (its
own sample).

Because spawn re-imports the caller's ``__main__`` module, a script calling
:func:`calibrate` must do so under ``if __name__ == "__main__":``.

Each constant is the median of ``repeats`` timed samples; each sample times
enough back-to-back calls to last at least ``plan.target_seconds`` (the count
is chosen from one probe call).  The spread of the samples is reported in
:class:`Spread`.  Timing is noisy by nature; the sizes, matrices and inputs are
deterministic functions of ``seed`` and the cache size.

This module opens no files itself: the sysfs cache description is read through
:func:`perfmodel.io.read_text`.

References
----------
Yan, Ruwase, He, Chilimbi. Performance Modeling and Scalability Optimization of
Distributed Deep Learning Systems. KDD, 2015.  Sec. 4.1.1 eq. 5 and Fig. 5
(C_muladd, C_act), Sec. 4.1.2 eq. 7 (C_err), Sec. 4.1.3 eq. 8 (weight updates
priced with C_muladd), Sec. 4.2.1 eq. 9 (C_interf).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import numbers
import os
import platform
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as _v
from ..errors import CalibrationError, SpecError
from ..io import read_text
from ..specs import Cluster

__all__ = [
    "ACTIVATIONS", "BLAS_THREAD_VARIABLES", "DEFAULT_CACHE_BYTES", "DTYPE",
    "CacheInfo", "BenchmarkPlan", "Spread", "HardwareCalibration",
    "detect_cache", "parse_cache_size", "make_plan", "weights",
    "matvec", "activate", "error_term", "canonical_forward",
    "calibrate", "calibrated_cluster",
]

#: Activation functions the canonical code can use (Yan et al. 2015, Fig. 5's ``f``).
ACTIVATIONS = ("sigmoid", "tanh", "relu")

#: Environment variables set to 1 in the benchmark processes (one BLAS thread).
BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                         "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

#: Cache size assumed when none can be read (8 MiB, a common last-level size).
DEFAULT_CACHE_BYTES = 8 * 2**20

#: Element type of weights and activations: FP32, as ``Cluster.weight_bytes`` = 4.
DTYPE = np.float32

_MiB = 2**20
_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
_SHM_PREFIX = "perfmodel_cal_"
_WORKER_TIMEOUT = 300.0  # seconds a benchmark process may take to answer


# ------------------------------------------------------------------ cache size

@dataclass(frozen=True)
class CacheInfo:
    """The last-level cache size and where it was found.

    Attributes
    ----------
    bytes : int, B
        Size of the largest data (or unified) cache level.
    source : str
        ``"sysfs ..."``, ``"sysconf ..."``, ``"lscpu"``, ``"sysctl ..."``,
        ``"argument"`` or ``"default ..."``.
    level : int or None
        Cache level (3 for an L3), when known.
    """

    bytes: int
    source: str
    level: int | None = None


def parse_cache_size(text: str) -> int:
    """Bytes in a cache size as sysfs writes it (``"32768K"``, ``"1M"``, ``"512"``).

    Parameters
    ----------
    text : str
        A number with an optional binary suffix K, M or G.

    Returns
    -------
    int, B

    Raises
    ------
    ValueError
        If ``text`` is not such a size.

    Examples
    --------
    >>> parse_cache_size("32768K")
    33554432
    >>> parse_cache_size(" 1M\\n")
    1048576
    """
    text = text.strip().upper().removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    digits = text[:-1] if scale != 1 else text
    if not digits.isdigit():
        raise ValueError(f"not a cache size: {text!r}")
    return int(digits) * scale


def _cache_from_sysfs(root: Path = _SYSFS_CACHE) -> CacheInfo | None:
    """Largest data/unified cache listed under ``root/index*`` (Linux sysfs)."""
    best = None
    for index in sorted(root.glob("index*")):
        try:
            level = int(read_text(index / "level"))
            kind = read_text(index / "type").strip()
            size = parse_cache_size(read_text(index / "size"))
        except (SpecError, ValueError):
            continue
        if kind == "Instruction" or size <= 0:
            continue
        if best is None or (level, size) > (best.level, best.bytes):
            best = CacheInfo(size, f"sysfs {index} (L{level} {kind})", level)
    return best


def _cache_from_sysconf() -> CacheInfo | None:
    """``os.sysconf("SC_LEVEL{4,3,2}_CACHE_SIZE")`` (glibc), largest level first."""
    for level in (4, 3, 2):
        name = f"SC_LEVEL{level}_CACHE_SIZE"
        if name not in getattr(os, "sysconf_names", {}):
            continue
        try:
            size = os.sysconf(name)
        except (OSError, ValueError):
            continue
        if size > 0:
            return CacheInfo(int(size), f"sysconf {name}", level)
    return None


def _run_quietly(args: list[str]) -> str | None:
    """Standard output of a short command, or None if it is missing or fails."""
    if shutil.which(args[0]) is None:
        return None
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def _cache_from_lscpu() -> CacheInfo | None:
    """``lscpu --caches=NAME,ONE-SIZE,LEVEL --bytes``: the highest level's size."""
    out = _run_quietly(["lscpu", "--caches=NAME,ONE-SIZE,LEVEL", "--bytes"])
    best = None
    for line in (out or "").splitlines()[1:]:
        parts = line.split()
        if len(parts) != 3 or parts[0].endswith("i") or not parts[1].isdigit():
            continue
        level, size = int(parts[2]), int(parts[1])
        if best is None or (level, size) > (best.level, best.bytes):
            best = CacheInfo(size, "lscpu", level)
    return best


def _cache_from_sysctl() -> CacheInfo | None:
    """``sysctl -n hw.l3cachesize`` / ``hw.l2cachesize`` (macOS, BSD)."""
    for level in (3, 2):
        out = (_run_quietly(["sysctl", "-n", f"hw.l{level}cachesize"]) or "").strip()
        if out.isdigit() and int(out) > 0:
            return CacheInfo(int(out), f"sysctl hw.l{level}cachesize", level)
    return None


def detect_cache() -> CacheInfo:
    """The last-level cache of this machine, and where the number came from.

    Tries, in order: Linux sysfs
    (``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}``, the
    largest data or unified level), ``os.sysconf`` (glibc's
    ``SC_LEVEL3_CACHE_SIZE`` ...), ``lscpu``, ``sysctl`` (macOS); falls back to
    :data:`DEFAULT_CACHE_BYTES` (8 MiB) with ``source`` saying so.

    Returns
    -------
    CacheInfo
    """
    for probe in (_cache_from_sysfs, _cache_from_sysconf, _cache_from_lscpu, _cache_from_sysctl):
        found = probe()
        if found is not None:
            return found
    return CacheInfo(DEFAULT_CACHE_BYTES, "default (no cache size readable on this machine)")


# ------------------------------------------------------------------ the plan

@dataclass(frozen=True)
class BenchmarkPlan:
    """What the benchmarks compute: sizes and counts, independent of timing.

    A segment of ``rows`` neurons each with ``cols`` inputs (Yan et al. 2015's
    N_neuron(l, p) and |S_i|) is an FP32 ``rows x cols`` weight matrix.

    Attributes
    ----------
    cache_shape : tuple of int
        Segment whose working set fits comfortably in the cache (1/8 of it).
    mem_shape : tuple of int
        Segment whose weights are several times the cache (streamed from memory).
    act_length : int
        Elements of the vectors timed for C_act and C_err.
    repeats : int
        Timed samples per measurement.
    threads : int
        Largest H of C_interf(H).
    seed : int
        Seed of the weights and inputs.
    activation : str
        One of :data:`ACTIVATIONS`.
    target_seconds : float, s
        Shortest duration of one timed sample.
    """

    cache_shape: tuple[int, int]
    mem_shape: tuple[int, int]
    act_length: int
    repeats: int
    threads: int
    seed: int
    activation: str
    target_seconds: float

    @property
    def cache_working_set(self) -> int:
        """Bytes of W, a and y of the in-cache segment."""
        return _working_set(self.cache_shape)

    @property
    def mem_working_set(self) -> int:
        """Bytes of W, a and y of the out-of-cache segment."""
        return _working_set(self.mem_shape)


def _working_set(shape: tuple[int, int]) -> int:
    rows, cols = shape
    return (rows * cols + rows + cols) * np.dtype(DTYPE).itemsize


def _square(n_bytes: float, multiple: int = 16) -> tuple[int, int]:
    """The largest square FP32 matrix of at most ``n_bytes``, side a multiple of 16."""
    side = int(math.isqrt(int(n_bytes // np.dtype(DTYPE).itemsize)))
    side = max(multiple, side - side % multiple)
    return side, side


def _check_int(name: str, value, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SpecError(name, f"expected an integer, got {type(value).__name__} {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise SpecError(name, f"must be {bound}, got {value!r}")
    return int(value)


def _check_cache_bytes(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            math.isfinite(value) and value >= 4096):
        raise SpecError("cache_bytes", f"must be a number of bytes >= 4096, got {value!r}")
    return int(value)


def make_plan(cache_bytes: float, *, quick: bool = False, repeats: int | None = None,
              threads: int = 1, seed: int = 0, activation: str = "sigmoid") -> BenchmarkPlan:
    """Choose the benchmark sizes from the cache size (deterministic).

    The in-cache segment uses 1/8 of the cache.  The out-of-cache segment
    uses 4 times the cache (2 times with ``quick``), at least 64 MiB and at
    most 512 MiB (256 MiB with ``quick``).

    Parameters
    ----------
    cache_bytes : float, B
        Last-level cache size (see :func:`detect_cache`).
    quick : bool
        Fewer, shorter samples and a smaller out-of-cache matrix (for tests).
    repeats : int, optional
        Timed samples per measurement, at least 3 (default 31, or 5 with ``quick``).
    threads : int
        Largest H of C_interf(H), at least 1.
    seed : int
        Seed of weights and inputs, at least 0.
    activation : {"sigmoid", "tanh", "relu"}
        The canonical code's ``f``.

    Returns
    -------
    BenchmarkPlan

    Raises
    ------
    SpecError
        Naming the bad argument.

    Examples
    --------
    >>> make_plan(32 * 2**20, quick=True).cache_shape
    (1024, 1024)
    """
    cache = _check_cache_bytes(cache_bytes)
    quick = _v.boolean("quick", quick)
    repeats = (5 if quick else 31) if repeats is None else _check_int("repeats", repeats, 3)
    factor, cap = (2, 256 * _MiB) if quick else (4, 512 * _MiB)
    return BenchmarkPlan(cache_shape=_square(cache / 8),
                mem_shape=_square(min(max(factor * cache, 64 * _MiB), cap)),
                act_length=2**16, repeats=repeats,
                threads=_check_int("threads", threads, 1), seed=_check_int("seed", seed, 0),
                activation=_v.choice("activation", activation, ACTIVATIONS),
                target_seconds=0.002 if quick else 0.01)


def weights(shape: tuple[int, int], seed: int, stream: int = 0,
            out: np.ndarray | None = None) -> np.ndarray:
    """Seeded FP32 weights uniform in [-0.5, 0.5): the same seed gives the same matrix.

    Parameters
    ----------
    shape : tuple of int
        ``(rows, cols)``.
    seed, stream : int
        The generator is ``np.random.default_rng([seed, stream])``.
    out : numpy.ndarray, optional
        FP32 array of ``shape`` to fill (e.g. a view of shared memory).

    Returns
    -------
    numpy.ndarray
    """
    rng = np.random.default_rng([seed, stream])
    if out is None:
        out = np.empty(shape, dtype=DTYPE)
    rng.random(out=out, dtype=DTYPE)
    out -= 0.5
    return out


# ------------------------------------------------------------------ canonical code

def matvec(w: np.ndarray, a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y = W @ a``: the multiply-add loop of Yan et al. 2015, Fig. 5 (C_muladd each)."""
    return np.matmul(w, a, out=y)


def activate(y: np.ndarray, out: np.ndarray, kind: str = "sigmoid") -> np.ndarray:
    """``out = f(y)`` elementwise, without temporaries (C_act per element, Yan et al. 2015, eq. 5).

    Examples
    --------
    >>> y = np.array([0.0, 2.0], dtype=np.float32)
    >>> activate(y, np.empty_like(y), "relu").tolist()
    [0.0, 2.0]
    """
    if kind == "sigmoid":
        np.negative(y, out=out)
        np.exp(out, out=out)
        out += 1
        return np.reciprocal(out, out=out)
    if kind == "tanh":
        return np.tanh(y, out=out)
    return np.maximum(y, 0, out=out)


def error_term(a: np.ndarray, e: np.ndarray, out: np.ndarray, kind: str = "sigmoid") -> np.ndarray:
    """``out = f'(y) * e`` from ``a = f(y)`` (C_err per element, Yan et al. 2015, eq. 7).

    The derivative is written from the activation as back-propagation does:
    ``a (1 - a)`` for the sigmoid, ``1 - a**2`` for tanh, ``sign(a)`` (0 or 1)
    for ReLU.
    """
    if kind == "sigmoid":
        np.subtract(1, a, out=out)
        out *= a
    elif kind == "tanh":
        np.multiply(a, a, out=out)
        np.subtract(1, out, out=out)
    else:
        np.sign(a, out=out)
    out *= e
    return out


def canonical_forward(w: np.ndarray, a: np.ndarray, y: np.ndarray,
                      kind: str = "sigmoid") -> np.ndarray:
    """Yan et al. 2015, Fig. 5 for one sample: ``y = W @ a`` then ``y = f(y)`` in place."""
    return activate(matvec(w, a, y), y, kind)


# ------------------------------------------------------------------ statistics

@dataclass(frozen=True)
class Spread:
    """Median and spread of repeated timings of one measurement.

    Attributes
    ----------
    name : str
    unit : str
        ``"s/muladd"``, ``"s/element"``, ``"s/call"`` or ``"ratio"``.
    median, minimum, maximum : float
    iqr_rel : float
        Interquartile range over the median (dimensionless, >= 0).
    std_rel : float
        Standard deviation over the mean (dimensionless, >= 0).
    n : int
        Number of samples.
    """

    name: str
    unit: str
    median: float
    minimum: float
    maximum: float
    iqr_rel: float
    std_rel: float
    n: int

    @classmethod
    def of(cls, name: str, unit: str, samples) -> Spread:
        """The spread of ``samples`` (a non-empty sequence of positive floats)."""
        x = np.asarray(samples, dtype=float)
        q25, med, q75 = np.percentile(x, [25, 50, 75])
        return cls(name, unit, float(med), float(x.min()), float(x.max()),
                   float((q75 - q25) / med), float(x.std() / x.mean()), int(x.size))


# ------------------------------------------------------------------ benchmark processes

def _time_samples(fn, repeats: int, target: float, inner: int | None = None):
    """Per-call seconds of ``fn``: ``repeats`` samples of ``inner`` back-to-back calls."""
    fn()  # warm up (page faults, code paths, caches)
    if inner is None:
        start = time.perf_counter()
        fn()
        probe = time.perf_counter() - start
        inner = max(1, min(100_000, math.ceil(target / max(probe, 1e-9))))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return samples, inner


def _kernel(cmd: dict, arrays: dict, seed: int, index: int):
    """The zero-argument function a command times, with its inputs prepared."""
    rng = np.random.default_rng([seed, 1000 + index])
    kind = cmd["activation"]
    if cmd["kernel"] in ("matvec", "forward"):
        w = arrays[cmd["matrix"]]
        a = rng.random(w.shape[1], dtype=DTYPE) - DTYPE(0.5)
        y = np.empty(w.shape[0], dtype=DTYPE)
        if cmd["kernel"] == "matvec":
            return lambda: matvec(w, a, y)
        return lambda: canonical_forward(w, a, y, kind)
    y = (rng.random(cmd["length"], dtype=DTYPE) - DTYPE(0.5)) * DTYPE(8)
    out = np.empty_like(y)
    if cmd["kernel"] == "act":
        return lambda: activate(y, out, kind)
    a, e = activate(y, np.empty_like(y), kind), rng.random(y.size, dtype=DTYPE) - DTYPE(0.5)
    return lambda: error_term(a, e, out, kind)


def _worker_hello(cpu: int | None) -> dict:
    """What a benchmark process reports when it is ready (to check one BLAS thread)."""
    tasks = Path("/proc/self/task")
    return {"pid": os.getpid(), "cpu": cpu,
            "os_threads": len(os.listdir(tasks)) if tasks.is_dir() else None,
            "blas_env": {k: os.environ.get(k) for k in BLAS_THREAD_VARIABLES}}


def _pin(cpu: int | None) -> int | None:
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


def _worker_main(conn, segments: dict, cpu: int | None, seed: int, index: int) -> None:
    """Body of one benchmark process: attach the shared weights, answer commands."""
    cpu = _pin(cpu)
    shms = {key: shared_memory.SharedMemory(name=name) for key, (name, _) in segments.items()}
    arrays = {key: np.ndarray(shape, dtype=DTYPE, buffer=shms[key].buf)
              for key, (_, shape) in segments.items()}
    try:
        conn.send(("ok", _worker_hello(cpu)))
        while (cmd := conn.recv()) is not None:
            try:
                fn = _kernel(cmd, arrays, seed, index)
                conn.send(("ok", _time_samples(fn, cmd["repeats"], cmd["target"], cmd["inner"])))
            except Exception as err:  # report to the parent instead of hanging it
                conn.send(("error", f"{type(err).__name__}: {err}"))
    finally:
        arrays.clear()
        for shm in shms.values():
            shm.close()


@contextlib.contextmanager
def _single_thread_environment():
    """``os.environ`` with every BLAS thread variable at 1, restored on exit."""
    saved = {k: os.environ.get(k) for k in BLAS_THREAD_VARIABLES}
    os.environ.update({k: "1" for k in BLAS_THREAD_VARIABLES})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


class _Bench:
    """``n`` spawn processes (one BLAS thread each) sharing the plan's weight matrices."""

    def __init__(self, plan: BenchmarkPlan, n: int, pin: bool):
        self.plan, self.n, self.pin = plan, n, pin
        self.shms: dict[str, shared_memory.SharedMemory] = {}
        self.procs: list = []
        self.conns: list = []
        self.hello: list[dict] = []

    def __enter__(self) -> _Bench:
        try:
            self._share(0, "cache", self.plan.cache_shape)
            self._share(1, "mem", self.plan.mem_shape)
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _share(self, stream: int, key: str, shape: tuple[int, int]) -> None:
        name = f"{_SHM_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
        shm = shared_memory.SharedMemory(name=name, create=True, size=_working_set(shape))
        self.shms[key] = shm
        view = np.ndarray(shape, dtype=DTYPE, buffer=shm.buf)
        weights(shape, self.plan.seed, stream, out=view)
        del view  # no exported buffer may outlive close()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        segments = {key: (shm.name, getattr(self.plan, f"{key}_shape"))
                    for key, shm in self.shms.items()}
        cpus = _usable_cpus()
        with _single_thread_environment():
            for i in range(self.n):
                parent, child = ctx.Pipe()
                cpu = cpus[i % len(cpus)] if self.pin else None
                proc = ctx.Process(target=_worker_main, daemon=True,
                                   args=(child, segments, cpu, self.plan.seed, i))
                proc.start()
                child.close()
                self.procs.append(proc)
                self.conns.append(parent)
        self.hello = [self._receive(i) for i in range(self.n)]

    def _receive(self, i: int):
        conn, proc = self.conns[i], self.procs[i]
        deadline = time.monotonic() + _WORKER_TIMEOUT
        while not conn.poll(0.2):
            if not proc.is_alive() or time.monotonic() > deadline:
                raise CalibrationError(f"benchmark process {i} died or hung "
                                       f"(exit code {proc.exitcode})")
        try:
            status, payload = conn.recv()
        except EOFError:
            raise CalibrationError(f"benchmark process {i} closed its pipe") from None
        if status != "ok":
            raise CalibrationError(f"benchmark process {i} failed: {payload}")
        return payload

    def run(self, count: int, cmd: dict) -> list:
        """Send ``cmd`` to processes 0..count-1 at once; their (samples, inner) answers."""
        for conn in self.conns[:count]:
            conn.send(cmd)
        return [self._receive(i) for i in range(count)]

    def run_one(self, i: int, cmd: dict):
        """Send ``cmd`` to process ``i`` alone; its (samples, inner) answer."""
        self.conns[i].send(cmd)
        return self._receive(i)

    def __exit__(self, *exc) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(None)
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        for conn in self.conns:
            conn.close()
        for shm in self.shms.values():
            shm.close()
            with contextlib.suppress(FileNotFoundError):
                shm.unlink()


# ------------------------------------------------------------------ measurements

def _command(plan: BenchmarkPlan, kernel: str, matrix: str | None = None, inner: int | None = None) -> dict:
    return {"kernel": kernel, "matrix": matrix, "length": plan.act_length, "inner": inner,
            "repeats": plan.repeats, "target": plan.target_seconds,
            "activation": plan.activation}


def _single(bench: _Bench, plan: BenchmarkPlan, name: str, kernel: str, matrix: str | None,
            per: int, unit: str) -> Spread:
    """One process times ``kernel``; the spread of per-unit seconds."""
    samples, _ = bench.run_one(0, _command(plan, kernel, matrix))
    return Spread.of(name, unit, np.asarray(samples) / per)


def _alone(bench: _Bench, plan: BenchmarkPlan, matrix: str) -> tuple[list[float], float, int]:
    """Each process in turn runs the canonical code alone: pooled samples, baseline, count.

    The baseline is the median over processes of each one's median, so that one
    core slower or busier than the others does not bias every C_interf(H).
    """
    pooled, medians, inner = [], [], None
    for i in range(plan.threads):
        samples, inner = bench.run_one(i, _command(plan, "forward", matrix, inner))
        pooled += samples
        medians.append(float(np.median(samples)))
    return pooled, float(np.median(medians)), inner


def _interference(bench: _Bench, plan: BenchmarkPlan, matrix: str) -> tuple[tuple, list[Spread]]:
    """Yan et al. 2015, eq. 9: C_interf(H) for H = 1..threads of the canonical forward code.

    The one-process time is measured with each process running alone (its
    spread is returned as ``forward_<matrix>``); for H >= 2, processes 0..H-1 run
    the same number of calls at once, and C_interf(H) is the median over them of
    each one's median time, over the one-process time.  C_interf(1) = 1.
    """
    alone, base, inner = _alone(bench, plan, matrix)
    ratios, spreads = [1.0], [Spread.of(f"forward_{matrix}", "s/call", alone)]
    for h in range(2, plan.threads + 1):
        answers = bench.run(h, _command(plan, "forward", matrix, inner))
        per_process = [float(np.median(s)) for s, _ in answers]
        ratios.append(float(np.median(per_process)) / base)
        pooled = np.concatenate([s for s, _ in answers]) / base
        spreads.append(Spread.of(f"interference_{matrix}[{h}]", "ratio", pooled))
    return tuple(ratios), spreads


def _eq5_ratio(forward: Spread, shape: tuple[int, int], c_muladd: float, c_act: float) -> float:
    """Measured canonical forward time over Yan et al. 2015, eq. 5's C_muladd W + C_act N."""
    rows, cols = shape
    return forward.median / (c_muladd * rows * cols + c_act * rows)


# ------------------------------------------------------------------ the result

@dataclass(frozen=True)
class HardwareCalibration:
    """Yan et al. 2015 hardware constants measured on this machine (SI units).

    Attributes
    ----------
    c_muladd : float, s
        One multiply-add, weights in cache (eqs. 5, 7, 8).
    c_muladd_mem : float, s
        One multiply-add, weights streamed from memory.
    c_act : float, s
        One activation ``f`` (eq. 5).
    c_err : float, s
        One error-function evaluation ``f'(y) e`` (eq. 7).
    cache_bytes : int, B
        Last-level cache size.
    cache_source : str
        Where ``cache_bytes`` came from (see :func:`detect_cache`).
    interference : tuple of float
        C_interf(H), H = 1..threads (eq. 9), of the out-of-cache canonical
        code: H processes competing for memory bandwidth, the effect Yan et al. 2015
        Sec. 4.2.1 names.  First entry exactly 1.0.  This is the table
        :meth:`to_cluster_fields` returns.
    interference_cache : tuple of float
        The same with the in-cache segment (compute-bound end), for reference.
    cores : int
        ``os.cpu_count()``.
    eq5_ratio, eq5_ratio_mem : float
        Measured time of the whole canonical forward code (Fig. 5) over
        eq. 5's prediction ``C_muladd W + C_act N`` (in / out of cache);
        near 1 when the constants compose as the model assumes.
    spreads : dict of str to Spread
        Every measurement's median and spread, by name.
    plan : BenchmarkPlan
        Sizes and counts used.
    machine : dict
        Platform, cores, usable CPUs, numpy and BLAS, what the benchmark
        processes reported (pid, CPU, OS threads, BLAS variables).
    seconds : float, s
        Wall time of :func:`calibrate`.
    """

    c_muladd: float
    c_muladd_mem: float
    c_act: float
    c_err: float
    cache_bytes: int
    cache_source: str
    interference: tuple[float, ...]
    interference_cache: tuple[float, ...]
    cores: int
    eq5_ratio: float
    eq5_ratio_mem: float
    spreads: dict[str, Spread]
    plan: BenchmarkPlan
    machine: dict[str, Any]
    seconds: float

    def to_cluster_fields(self) -> dict[str, Any]:
        """The measured values under :class:`~perfmodel.specs.Cluster` field names.

        Returns
        -------
        dict
            ``c_muladd``, ``c_muladd_mem``, ``c_act``, ``c_err``, ``cache_bytes``,
            ``interference`` (tuple, first entry 1.0) and ``cores``.
        """
        return {"c_muladd": self.c_muladd, "c_muladd_mem": self.c_muladd_mem,
                "c_act": self.c_act, "c_err": self.c_err,
                "cache_bytes": float(self.cache_bytes),
                "interference": tuple(self.interference), "cores": self.cores}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of everything measured (SI units)."""
        out = dataclasses.asdict(self)
        out["interference"] = list(self.interference)
        out["interference_cache"] = list(self.interference_cache)
        return out

    def summary(self) -> str:
        """A few lines for people: the constants with their relative IQR."""
        def line(label, key, value, unit):
            spread = self.spreads[key]
            return f"{label:<14}{value:.4g} {unit}  (IQR {100 * spread.iqr_rel:.1f}%, n={spread.n})"
        interf = ", ".join(f"{x:.3f}" for x in self.interference)
        interf_c = ", ".join(f"{x:.3f}" for x in self.interference_cache)
        return "\n".join([
            line("C_muladd", "c_muladd", self.c_muladd, "s"),
            line("C_muladd_mem", "c_muladd_mem", self.c_muladd_mem, "s"),
            line("C_act", "c_act", self.c_act, f"s ({self.plan.activation})"),
            line("C_err", "c_err", self.c_err, "s"),
            f"C_interf(H)   {interf}  (memory-bound; in cache: {interf_c})",
            f"cache         {self.cache_bytes} B from {self.cache_source}",
            f"eq. 5 check   {self.eq5_ratio:.3f} in cache, {self.eq5_ratio_mem:.3f} in memory",
            f"cores         {self.cores}; wall time {self.seconds:.2f} s",
        ])


def _machine(cores: int, hello: list[dict], plan: BenchmarkPlan) -> dict[str, Any]:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # numpy < 1.26 or an unusual build
        blas = "unknown"
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor(), "python": sys.version.split()[0],
            "numpy": np.__version__, "blas": blas, "cores": cores,
            "usable_cpus": _usable_cpus(), "dtype": np.dtype(DTYPE).name,
            "cache_working_set": plan.cache_working_set,
            "mem_working_set": plan.mem_working_set, "workers": hello}


def _resolve_cache(cache_bytes) -> CacheInfo:
    if cache_bytes is None:
        return detect_cache()
    return CacheInfo(_check_cache_bytes(cache_bytes), "argument")


def calibrate(*, quick: bool = False, max_threads: int | None = None, seed: int = 0,
              repeats: int | None = None, activation: str = "sigmoid", pin: bool = True,
              cache_bytes: float | None = None) -> HardwareCalibration:
    """Measure Yan et al. 2015's hardware constants on this machine.

    Runs the canonical feed-forward code of Yan et al. 2015, Fig. 5 (``y = W @ a``,
    ``f(y)``, FP32, one sample) in ``max_threads`` spawn subprocesses with one
    BLAS thread each (see the module notes), and times:

    * ``W @ a`` with ``W`` in cache and out of cache -> C_muladd, C_muladd_mem
      (per multiply-add; eqs. 5, 7, 8);
    * ``f`` and ``f'(y) e`` over a vector -> C_act (eq. 5), C_err (eq. 7);
    * the whole canonical code in H = 1..max_threads processes at once ->
      C_interf(H) (eq. 9), and the eq. 5 composition check.

    Parameters
    ----------
    quick : bool
        Fewer, shorter samples (5 of >= 2 ms instead of 31 of >= 10 ms) and
        a smaller out-of-cache matrix: faster, noisier.
    max_threads : int, optional
        Largest H of C_interf(H), in [1, os.cpu_count()]; default: the CPUs
        this process may run on.
    seed : int
        Seed of the weights and inputs (>= 0).
    repeats : int, optional
        Timed samples per measurement (>= 3; default 31, or 5 with ``quick``).
    activation : {"sigmoid", "tanh", "relu"}
        The activation ``f`` of C_act and C_err.
    pin : bool
        Pin benchmark process i to the i-th usable CPU (different cores, as
        eq. 9 asks) where the platform allows.
    cache_bytes : float, optional, B
        Use this last-level cache size instead of detecting it.

    Returns
    -------
    HardwareCalibration

    Raises
    ------
    SpecError
        For a bad argument, naming it (e.g. ``max_threads`` < 1).
    CalibrationError
        If a benchmark process dies or hangs.

    References
    ----------
    Yan et al. 2015, Sec. 4.1 eqs. 5, 7, 8 and Fig. 5; Sec. 4.2.1 eq. 9.
    """
    start = time.perf_counter()
    cores = os.cpu_count() or 1
    if max_threads is None:
        max_threads = min(len(_usable_cpus()), cores)
    threads = _check_int("max_threads", max_threads, 1, cores)
    _v.boolean("pin", pin)
    cache = _resolve_cache(cache_bytes)
    plan = make_plan(cache.bytes, quick=quick, repeats=repeats, threads=threads, seed=seed,
                     activation=activation)
    with _Bench(plan, threads, pin) as bench:
        spreads = _measure(bench, plan)
        hello = bench.hello
    return _assemble(spreads, plan, cache, cores, hello, time.perf_counter() - start)


def _measure(bench: _Bench, plan: BenchmarkPlan) -> dict[str, Any]:
    """Every measurement, in a fixed order, keyed by name."""
    rows, cols = plan.cache_shape
    mem_rows, mem_cols = plan.mem_shape
    out = {
        "c_muladd": _single(bench, plan, "c_muladd", "matvec", "cache", rows * cols, "s/muladd"),
        "c_muladd_mem": _single(bench, plan, "c_muladd_mem", "matvec", "mem",
                                mem_rows * mem_cols, "s/muladd"),
        "c_act": _single(bench, plan, "c_act", "act", None, plan.act_length, "s/element"),
        "c_err": _single(bench, plan, "c_err", "err", None, plan.act_length, "s/element"),
    }
    out["interference_cache"] = _interference(bench, plan, "cache")
    out["interference"] = _interference(bench, plan, "mem")
    return out


def _assemble(found: dict, plan: BenchmarkPlan, cache: CacheInfo, cores: int, hello: list,
              seconds: float) -> HardwareCalibration:
    interf, interf_spreads = found.pop("interference")
    interf_c, interf_c_spreads = found.pop("interference_cache")
    spreads = dict(found)
    spreads.update({s.name: s for s in interf_c_spreads + interf_spreads})
    c = {name: spreads[name].median for name in ("c_muladd", "c_muladd_mem", "c_act", "c_err")}
    return HardwareCalibration(
        **c, cache_bytes=cache.bytes, cache_source=cache.source,
        interference=interf, interference_cache=interf_c, cores=cores,
        eq5_ratio=_eq5_ratio(spreads["forward_cache"], plan.cache_shape,
                             c["c_muladd"], c["c_act"]),
        eq5_ratio_mem=_eq5_ratio(spreads["forward_mem"], plan.mem_shape,
                                 c["c_muladd_mem"], c["c_act"]),
        spreads=spreads, plan=plan, machine=_machine(cores, hello, plan), seconds=seconds)


def calibrated_cluster(base: Cluster, calibration: HardwareCalibration) -> Cluster:
    """``base`` with Yan et al. 2015's hardware constants replaced by the measured ones.

    Parameters
    ----------
    base : Cluster
        The cluster to update (network, machines ... are kept).
    calibration : HardwareCalibration
        From :func:`calibrate`.

    Returns
    -------
    Cluster
        ``base.replace(**calibration.to_cluster_fields())`` with a note of the
        measurement appended to ``source``.

    Raises
    ------
    SpecError
        If ``base`` is not a Cluster or ``calibration`` not a HardwareCalibration.
    """
    if not isinstance(base, Cluster):
        raise SpecError("base", f"expected a Cluster, got {type(base).__name__}")
    if not isinstance(calibration, HardwareCalibration):
        raise SpecError("calibration", f"expected a HardwareCalibration, got {type(calibration).__name__}")
    note = (f"Yan et al. 2015 constants measured by perfmodel.calibrate on "
            f"{calibration.machine.get('platform', 'this machine')}")
    source = f"{base.source}; {note}" if base.source else note
    return base.replace(**calibration.to_cluster_fields(), source=source)
