"""Ctrl-C and SIGTERM in the CLI: one clean stop, and a message that says what was left.

:func:`install` makes SIGTERM behave like Ctrl-C (so cleanup code runs) and turns the first
signal into :class:`Interrupted` while ignoring any further one, so a second Ctrl-C during
the cleanup cannot stack tracebacks. The command reports its progress with :func:`stage`;
:func:`finish` cleans up after the stage that was cut short and returns the message.
"""
from __future__ import annotations

import os
import signal
from contextlib import contextmanager
import sys
import time
from pathlib import Path

from .results import marker

_state: dict = {"stage": None, "out": None, "existed": False, "t0": 0.0, "pending": None}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _handler(signum, frame):
    # later signals are ignored: the cleanup that follows must run to its end
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


def install() -> None:
    """Route SIGINT and SIGTERM through :func:`_handler` (main thread only)."""
    try:
        signal.signal(signal.SIGINT, _handler)
        signal.signal(signal.SIGTERM, _handler)
    except ValueError:
        pass


def ignore() -> None:
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(s, signal.SIG_IGN)
        except ValueError:
            pass


@contextmanager
def critical():
    """Hold SIGINT/SIGTERM back for the duration (the swap of a results directory): a
    signal that arrives meanwhile is acted on, as its handler would, when the block ends.
    (Masking the signals is not enough: the kernel then delivers them to another thread.)"""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    _state["pending"] = pending
    sigs = (signal.SIGINT, signal.SIGTERM)
    prev = {s: signal.getsignal(s) for s in sigs}
    for s in sigs:
        if prev[s] != signal.SIG_IGN:
            signal.signal(s, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        _state["pending"] = None
        for s in sigs:
            signal.signal(s, prev[s])
        if pending:
            signum = pending[0]
            h = prev[signum]
            if callable(h):
                h(signum, None)
            elif h == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


def checkpoint(name: str) -> None:
    """A point where the tests of interruption stop the process: with
    ``CCBENCH_PAUSE_AT=name`` in the environment, print ``paused at NAME`` to stderr and
    sleep (up to 60 s) so that a test can send a signal in exactly this state. Otherwise
    nothing."""
    if os.environ.get("CCBENCH_PAUSE_AT") == name:
        print(f"paused at {name}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and not _state.get("pending"):
            time.sleep(0.05)


def stage(name: str, out: str | Path | None = None) -> None:
    """Record what the command is doing: "load", "simulate" (running and writing the
    tables), "report", "plots", "done"."""
    _state["stage"] = name
    _state["t0"] = time.time()
    if out is not None:
        out = Path(out)
        if _state["out"] != out:
            _state["existed"] = (out / "metadata.json").is_file()
        _state["out"] = out


def reset() -> None:
    _state.update(stage=None, out=None, existed=False, t0=0.0)


def finish() -> str:
    """Clean up after the interrupted stage; the message saying exactly what is on disk."""
    st, out = _state["stage"], _state["out"]
    prev = (f"; the previous results in {out} are unchanged" if _state["existed"] else "")
    if st in (None, "load"):
        return "interrupted; nothing was written"
    if st == "simulate":
        m = out / marker.MARKER
        if m.is_file() and m.stat().st_mtime >= _state["t0"]:
            return (f"interrupted after the tables were written: {out} holds the complete "
                    f"tables and metadata, no report.html; `ccbench report {out}` writes it")
        return (f"interrupted while running the experiment or writing its tables; nothing "
                f"was written (temporary files removed){prev}")
    if st == "report":
        removed = marker.abandon(out, "report")
        gone = " (the partial report was removed)" if removed else ""
        return (f"interrupted while writing the report: {out} holds the complete tables and "
                f"metadata, no report.html{gone}; `ccbench report {out}` writes it")
    if st == "plots":
        data = marker.read(out) or {}
        n = len(list((out / "plots").glob("*"))) if (out / "plots").is_dir() else 0
        rep = "the report " if data.get("report") else ""
        return (f"interrupted while writing the PNG plots: {out} holds the complete tables, "
                f"{rep}and {n} files in plots/, marked incomplete in {marker.MARKER} "
                f"(`ccbench plot {out}` redoes them)")
    if st == "done":
        return f"interrupted after the run finished: {out} is complete"
    return f"interrupted during {st}"
