"""Live per-flow rates of an emulation run, from the engine's progress lines.

The engine (crates/emu/src/engine.rs) prints ``progress t_ns=T bytes=B0,B1,...`` on stdout
every second of experiment time: T is the experiment time (ns) and Bi the bytes (IP length)
of flow i's data packets released to its receiver so far. ``FlowRates`` turns consecutive
lines into per-flow Mbit/s over the last interval for the progress display."""
from __future__ import annotations

#: Period of the engine's progress lines, ns of experiment time.
PROGRESS_NS = 1_000_000_000
#: Flows shown by name on the progress line; the rest are summed up as "+N more".
SHOWN = 8


def parse_progress(line: str) -> tuple[int, list[int]] | None:
    """(t_ns, per-flow bytes) of an engine progress line; None for any other line."""
    f = line.split()
    if len(f) != 3 or f[0] != "progress" or not f[1].startswith("t_ns=") or not f[2].startswith("bytes="):
        return None
    try:
        t = int(f[1][5:])
        b = f[2][6:]
        return t, [int(x) for x in b.split(",")] if b else []
    except ValueError:
        return None


class FlowRates:
    """Per-flow Mbit/s between the last two progress lines fed."""

    def __init__(self) -> None:
        self.prev: tuple[int, list[int]] | None = None
        self.mbps: list[float] = []

    def feed(self, t_ns: int, nbytes: list[int]) -> None:
        if self.prev is not None and t_ns > self.prev[0] and len(nbytes) == len(self.prev[1]):
            dt = (t_ns - self.prev[0]) / 1e9
            self.mbps = [max(0, b - a) * 8 / dt / 1e6 for a, b in zip(self.prev[1], nbytes)]
        self.prev = (t_ns, nbytes)

    def text(self) -> str:
        """``Mbit/s #1 9.61 #2 2.30``: flows numbered as in their labels ("Flow 1", flow id
        + 1), those beyond SHOWN folded into ``+N more``; empty before two lines were fed."""
        if not self.mbps:
            return ""
        parts = [f"#{i + 1} {r:.2f}" for i, r in enumerate(self.mbps[:SHOWN])]
        if len(self.mbps) > SHOWN:
            parts.append(f"+{len(self.mbps) - SHOWN} more")
        return "Mbit/s " + " ".join(parts)


__all__ = ["PROGRESS_NS", "FlowRates", "parse_progress"]
