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


__all__ = ["numeric_axis", "ordered"]
