"""The event loop of :mod:`perfmodel.sim._kernel` compiled with numba.

Importing this module is cheap and works without numba; :func:`load` compiles
(or loads from numba's on-disk cache) on its first call.  The source of the
plain module is executed again in this module's namespace, so that the
compiled ``run`` calls compiled helpers.  Choices, each a clear speed-up of the
ResNet-50 benchmark (``tests/benchmarks/bench_sim.py``):

* ``_nrt=False``: the loop allocates nothing, and without numba's reference
  counting every array access in branchy code stops paying atomic
  increments (numba issue #2350);
* the helpers called once per event are inlined (``inline="always"``, which
  needs calls of at most 30 arguments);
* ``cache=True``: the machine code is kept in ``__pycache__`` and reused by
  later processes (compiling takes several seconds).

:func:`cached` tells, without importing numba, whether a cache of ``run``
newer than its source is on disk (then loading it takes about a second, not
several); :func:`will_compile` tells, for the arguments of a call, whether
numba has to compile (so that the engine can say so before the wait).
"""

import inspect
import os
from pathlib import Path

from . import _kernel as _src

INF = _src.INF
_LOADED = False


def load():
    """The compiled ``run`` (numba must be installed)."""
    global _LOADED
    if not _LOADED:
        import numba

        source = Path(_src.__file__).read_text(encoding="utf-8")
        exec(compile(source, _src.__file__, "exec"), globals())
        for name in _src.HELPERS + ("run",):
            inline = "always" if name in _src.INLINE else "never"
            globals()[name] = numba.njit(cache=True, nogil=True, _nrt=False,
                                         inline=inline)(globals()[name])
        _LOADED = True
    return globals()["run"]


def cached() -> bool:
    """Whether numba's on-disk cache of ``run`` exists and is newer than the kernel's source.

    A cheap look at the cache index (``__pycache__/_kernel.run-*.nbi`` beside
    the source, or under ``NUMBA_CACHE_DIR``); numba itself decides on load.
    """
    src = Path(_src.__file__)
    where = os.environ.get("NUMBA_CACHE_DIR")
    pattern = "**/_kernel.run-*.nbi" if where else "_kernel.run-*.nbi"
    root = Path(where) if where else src.parent / "__pycache__"
    try:
        stamp = src.stat().st_mtime
        return any(p.stat().st_mtime >= stamp for p in root.glob(pattern))
    except OSError:
        return False


def will_compile(run, kwargs) -> bool:
    """Whether calling the compiled ``run`` with ``kwargs`` compiles it (no cached code)."""
    import numba

    if run.signatures:                      # compiled or loaded in this process already
        return False
    names = inspect.signature(run.py_func).parameters
    sig = tuple(numba.typeof(kwargs[n]) for n in names)
    try:
        return run._cache.load_overload(sig, run.targetctx) is None
    except Exception:                       # numba internals changed: assume the worst
        return True
