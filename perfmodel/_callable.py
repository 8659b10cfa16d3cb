"""Modules that are also their main function (``optimizer.search``, ``optimizer.allocate``,
``perfmodel.placement.place``).

Each name was its package's re-exported function before it was its module,
and code calls it (``from optimizer import search; search(...)``) as well as
reading it (``optimizer.search.SEARCH_OBJECTIVES``, ``import
optimizer.allocate as a``).  A function re-exported under its
module's name hides the module from the second kind; a module whose class
forwards calls to the function serves both, with one object per name.
(Module ``__class__`` assignment is supported by Python since 3.5.)
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable

__all__ = ["make_callable"]


class _CallableModule(types.ModuleType):
    """A module that calls its ``__main_function__`` when called."""

    def __call__(self, *args, **kwargs):
        return self.__main_function__(*args, **kwargs)


def make_callable(module_name: str, function: Callable) -> None:
    """Make the imported module ``module_name`` callable as ``function``.

    ``inspect.signature`` and ``help`` of the module then show the function's
    signature.
    """
    module = sys.modules[module_name]
    module.__class__ = _CallableModule
    module.__main_function__ = function
    module.__signature__ = inspect.signature(function)
