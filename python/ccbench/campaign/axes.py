"""The values of a swept axis: numbers with a common unit (``0.25bdp``, ``10Mbit``, ``20ms``)
or plain labels, and the order they are drawn and compared in."""
from __future__ import annotations

import re
from typing import Sequence

_NUM = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z%/µ]*)\s*$")


def numeric_axis(values: Sequence) -> tuple[list[float], str] | None:
    """Numbers of an axis's values and their common unit, or None if not numeric."""
    nums, units = [], set()
    for v in values:
        if isinstance(v, bool) or v is None:
            return None
        if isinstance(v, (int, float)):
            nums.append(float(v))
            units.add("")
            continue
        m = _NUM.match(str(v))
        if not m:
            return None
        nums.append(float(m.group(1)))
        units.add(m.group(2))
    return (nums, units.pop()) if len(units) == 1 else None


def ordered(values: Sequence) -> list:
    """Distinct values in plotting order: by number for a numeric axis, else first seen."""
    vals = list(dict.fromkeys(values))
    num = numeric_axis(vals)
    if num is not None:
        vals = [v for _, v in sorted(zip(num[0], vals), key=lambda p: p[0])]
    return vals


def log_ticks(values: Sequence[float], max_ticks: int = 8) -> list[float]:
    """The values to label on a log axis: the distinct positive ``values``, thinned so that
    neighbours are at least 1/``max_ticks`` of the axis's decades apart (every swept value
    labelled overprinted on dense sweeps: 0.25, 0.3, 0.4, 0.5 bdp). The smallest and the
    largest always stay."""
    import math
    vs = sorted({float(v) for v in values if v is not None and float(v) > 0})
    if len(vs) <= 2:
        return vs
    gap = (math.log10(vs[-1]) - math.log10(vs[0])) / max(max_ticks - 1, 1)
    out = [vs[0]]
    for v in vs[1:-1]:
        if math.log10(v) - math.log10(out[-1]) >= gap * 0.999:
            out.append(v)
    if math.log10(vs[-1]) - math.log10(out[-1]) < gap * 0.999 and len(out) > 1:
        out.pop()
    return out + [vs[-1]]


__all__ = ["log_ticks", "numeric_axis", "ordered"]
