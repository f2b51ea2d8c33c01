"""Per-run liveness locks for emulation runs.

An emulation run creates its work directory ``<WORK_ROOT>/ccb-xxxxxx`` and, before any
namespace or process exists, takes an exclusive ``flock`` on ``owner.lock`` inside it and
keeps the descriptor open until its teardown ends. The kernel drops the lock when the
owning process exits, however it exits (SIGKILL included), and the descriptor is not
inherited by the engine or agents, so a lingering agent cannot keep a dead run "alive".

:func:`is_live` asks the question ``ccbench clean`` and ``ccbench doctor`` need: is the
process that owns this run still running? It tries the same lock without blocking.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "owner.lock"


class RunLock:
    """The held lock of one run (``release()`` or process exit drops it)."""

    def __init__(self, work: str | Path):
        self.path = Path(work) / LOCK_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RuntimeError(f"{self.path.parent.name} is already owned by a running process")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def is_live(work: str | Path) -> bool:
    """Whether a process holds the lock of the run whose work directory is ``work``. A run
    without a lock file (its work directory gone, or made by a ccbench without locks) is
    not live: nothing can show that it is."""
    path = Path(work) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def owner(work: str | Path) -> int | None:
    """The pid written in the run's lock file (informational)."""
    try:
        return int((Path(work) / LOCK_NAME).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
