"""Test helpers: whether processes a test killed the parent of have ended (Linux /proc)."""

import time


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def any_alive_after(pids, seconds: float) -> bool:
    """Whether any of ``pids`` still runs once they all ended or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return any(alive(p) for p in pids)
