"""Worker-pool start-up shared by every layer that starts processes.

A pool's workers must not outlive the process that started them: a killed
parent runs no clean-up, and its workers would otherwise go on computing or
wait on their queue for ever.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["end_with_parent"]

#: Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def end_with_parent(parent: int) -> None:
    """Pool worker start-up (``initializer=end_with_parent, initargs=(os.getpid(),)``):
    end when the process ``parent`` dies, even by SIGKILL.

    Linux delivers the worker SIGTERM then (``prctl(PR_SET_PDEATHSIG)``).
    Elsewhere nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
        return
    if os.getppid() != parent:   # the parent died before the request took effect
        os._exit(1)
