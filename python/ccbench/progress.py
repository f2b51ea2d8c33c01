"""Progress of a long run: a live bar on a terminal, plain periodic lines otherwise."""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


def printer(what: str = "simulating", stream: TextIO | None = None, *, delay: float = 1.0,
            every: float = 10.0, tty: bool | None = None,
            clock: Callable[[], float] = time.monotonic,
            unit: str = "simulated") -> Callable[..., None]:
    """A ``cb(now_ns, end_ns, detail="")`` that shows model time (``unit``: simulated or
    emulated), wall time, speed (model seconds per wall second), ETA and ``detail`` (e.g. the
    emulator's per-flow rates). Nothing for runs shorter than ``delay`` s; on a terminal one
    line redrawn in place, otherwise one line every ``every`` s of wall time and at the end."""
    stream = stream or sys.stderr
    if tty is None:
        tty = bool(getattr(stream, "isatty", lambda: False)())
    t0 = clock()
    state = {"shown": False, "last": -1e9, "done": False}

    def cb(now_ns: int, end_ns: int, detail: str = "") -> None:
        wall = clock() - t0
        frac = min(1.0, now_ns / end_ns) if end_ns else 1.0
        if state["done"] or (wall < delay and not state["shown"]):
            return
        if not tty and frac < 1.0 and wall - state["last"] < every:
            return
        state["shown"] = True
        state["last"] = wall
        speed = now_ns / 1e9 / wall if wall > 0 else 0.0
        eta = wall / frac - wall if frac > 0 else float("inf")
        text = (f"{now_ns / 1e9:.1f}/{end_ns / 1e9:g} s {unit}, {wall:.1f} s wall, "
                f"{speed:.2f}x real time, eta {eta:.0f} s")
        if detail:
            text += f", {detail}"
        if tty:
            fill = int(frac * 30)
            stream.write(f"\r  {what} [{'#' * fill}{'.' * (30 - fill)}] {frac * 100:5.1f}%  {text} ")
            if frac >= 1.0:
                stream.write("\n")
        else:
            stream.write(f"{what}: {frac * 100:.0f}%  {text}\n")
        if frac >= 1.0:
            state["done"] = True
        stream.flush()

    return cb


__all__ = ["printer"]
