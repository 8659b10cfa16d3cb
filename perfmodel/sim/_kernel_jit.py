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
"""

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
