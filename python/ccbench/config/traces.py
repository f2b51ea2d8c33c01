"""Rate traces: readers for mahimahi and rate-series files, and the generators behind
``examples/traces/`` and the cellular presets (docs/network-conditions.md).

Pure functions on numbers; file reading is in :func:`read_mahimahi` / :func:`read_series`.
"""

from __future__ import annotations

import math
import random
from typing import Iterable

MS = 10**6
SEC = 10**9


def mahimahi_from_rates(rates_bps: Iterable[float], step_ms: int = 1,
                        opportunity_bytes: int = 1500) -> list[int]:
    """Delivery opportunities (ms timestamps) carrying ``rates_bps[i]`` during the i-th
    ``step_ms`` window, as ``mm-rate-to-events`` does: fractional opportunities are carried
    to the next millisecond, so the long-run rate is exact. Timestamps start at 1 ms."""
    out: list[int] = []
    carry = 0.0
    ms = 0
    for r in rates_bps:
        per_ms = r / 8 / 1000 / opportunity_bytes
        for _ in range(step_ms):
            ms += 1
            carry += per_ms
            n = int(carry)
            carry -= n
            out.extend([ms] * n)
    if not out or out[-1] != ms:
        out.append(ms)  # mahimahi's period is the last timestamp: end the trace on time
    return out


def constant_trace(rate_bps: float, seconds: float, opportunity_bytes: int = 1500) -> list[int]:
    return mahimahi_from_rates([rate_bps] * round(seconds * 1000), 1, opportunity_bytes)


def cellular_series(mean_bps: float, lo_bps: float, hi_bps: float, seconds: float, seed: int,
                    step_ms: int = 100, sigma: float = 0.08, pull: float = 0.1,
                    outage_p: float = 0.0) -> list[tuple[int, int]]:
    """A cellular-like rate process as ``(t_ns, rate_bps)`` steps every ``step_ms``:
    a mean-reverting random walk (AR(1)) of the log rate, ``x ← x + pull·(log mean − x) +
    N(0, sigma)``, clamped to [lo, hi]; with probability ``outage_p`` per step the rate is 0
    for that step (a fade). Seeded with Python's ``random.Random(seed)`` (reproducible across
    CPython versions for the same seed: ``gauss``/``random`` are stable)."""
    rnd = random.Random(seed)
    x = math.log(mean_bps)
    out = []
    n = max(1, math.ceil(seconds * 1000 / step_ms))
    for i in range(n):
        x += pull * (math.log(mean_bps) - x) + rnd.gauss(0.0, sigma)
        x = min(max(x, math.log(lo_bps)), math.log(hi_bps))
        rate = 0 if rnd.random() < outage_p else round(math.exp(x))
        out.append((i * step_ms * MS, rate))
    return out


#: Largest time a trace may hold: the simulator's clock is u64 nanoseconds and sums of
#: times must not overflow an i64 (about 292 years); far beyond any run.
MAX_TRACE_S = 2**62 / SEC


def _lines(path: str):
    """(line number, text) of a trace file. Not UTF-8 is a one-line ValueError; the file's
    content is never quoted in an error (a trace path may name any file on the machine)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ValueError(f"line {line}: not UTF-8 text; is it the right file?") from None
    return enumerate(text.splitlines(), 1)


def read_mahimahi(path: str) -> list[int]:
    """One non-negative integer (ms) per line; blank lines and ``#`` comments skipped.
    Raises ValueError with the line number on anything else."""
    ms = []
    for n, line in _lines(path):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        if not s.isdigit():
            raise ValueError(f"line {n} is not a whole number of milliseconds")
        v = int(s)
        if v / 1000 > MAX_TRACE_S:
            raise ValueError(f"line {n}: {v} ms is beyond any run (at most "
                             f"{MAX_TRACE_S * 1000:.3g} ms)")
        ms.append(v)
    if not ms:
        raise ValueError("the trace is empty")
    for i in range(1, len(ms)):
        if ms[i] < ms[i - 1]:
            raise ValueError(f"timestamps decrease at entry {i + 1} ({ms[i - 1]} then {ms[i]})")
    if ms[-1] <= 0:
        raise ValueError("the last timestamp must be > 0 (it is the trace's period)")
    return ms


def read_series(path: str) -> list[tuple[float, str]]:
    """``t_seconds value`` lines (value kept as text for the caller's unit parser)."""
    out = []
    for n, line in _lines(path):
        s = line.split("#", 1)[0].split()
        if not s:
            continue
        if len(s) != 2:
            raise ValueError(f"line {n}: expected 't_seconds value', found {len(s)} fields")
        try:
            t = float(s[0])
        except ValueError:
            raise ValueError(f"line {n}: the first field is not a time in seconds") from None
        if not math.isfinite(t) or t > MAX_TRACE_S:
            raise ValueError(f"line {n}: the time must be a finite number of seconds up to "
                             f"{MAX_TRACE_S:.3g}")
        if t < 0 or (out and t <= out[-1][0]):
            raise ValueError(f"line {n}: times must start at >= 0 and increase")
        out.append((t, s[1]))
    if not out:
        raise ValueError("the series is empty")
    return out
