"""Unit parsing: rates, times, sizes and queue limits.

All parsers take the raw YAML value and its path and either return a resolved integer in the
resolved-experiment units (bit/s, ns, bytes, packets) or raise :class:`ConfigError`.
Numbers are handled as :class:`decimal.Decimal`, so ``12.5Mbps`` is exactly 12 500 000 bit/s
and ``1.1ms`` exactly 1 100 000 ns.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Sequence

from .errors import ConfigError, show

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

_NUM_UNIT = re.compile(
    r"^\s*([+-]?(?:\d+(?:_\d+)*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµμ/]*)\s*$")

RATE_HINT = "use e.g. 100Mbit, 1Gbit, 12.5Mbps or a bare number of Mbit/s"
UNLIMITED_WORDS = {"unlimited", "inf", "infinite", "infinity"}


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def split_unit(value: Any) -> tuple[Decimal, str] | None:
    """Split a YAML scalar into (number, unit). ``None`` if it is not of that shape."""
    if is_number(value):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value), ""
    if not isinstance(value, str):
        return None
    m = _NUM_UNIT.match(value)
    if not m:
        return None
    try:
        return Decimal(m.group(1).replace("_", "")), m.group(2)
    except InvalidOperation:  # pragma: no cover - the regex only admits valid numbers
        return None


def _round(d: Decimal | Fraction) -> int:
    if isinstance(d, Fraction):
        return math.floor(d + Fraction(1, 2))
    return int(d.to_integral_value(rounding=ROUND_HALF_UP))


def _wrong_type(path, value, what, hint) -> ConfigError:
    return ConfigError(path, f"{show(value)} is not {what}", hint, value)


# --------------------------------------------------------------------------------------- rates

_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
                "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
_RATE_BASE = {"bit", "bits", "bps", "bit/s", "b/s"}


def parse_rate(value: Any, path: Sequence[Any], *, bare_unit: int = 10**6) -> int | None:
    """Rate in bit/s; ``None`` = unlimited (``unlimited`` or 0).

    ``100Mbit``, ``1Gbit``, ``12.5Mbps``, ``10kbit``, ``1e9bit``, ``100mbit/s``; binary
    prefixes ``Kibit``/``Mibit``/``Gibit``; a bare number is Mbit/s (1 Mbit = 10^6 bit).
    Byte rates (``MB/s``, ``MBps``) are refused: they are a classic factor-8 trap.
    """
    if isinstance(value, str) and value.strip().lower() in UNLIMITED_WORDS:
        return None
    parts = split_unit(value)
    if parts is None:
        raise _wrong_type(path, value, "a rate", RATE_HINT)
    num, unit = parts
    if unit == "":
        factor = bare_unit
    else:
        if re.fullmatch(r"[kKmMgGtT]?i?B(ps|/s)", unit):
            raise ConfigError(path, f"{show(value)} is a rate in bytes per second",
                              "write rates in bits, e.g. 100Mbit (= 12.5MB/s)", value)
        low = unit.lower()
        factor = None
        for base in _RATE_BASE:
            if low.endswith(base) and low[: -len(base)] in _RATE_PREFIX:
                factor = _RATE_PREFIX[low[: -len(base)]]
                break
        if factor is None:
            raise _wrong_type(path, value, "a rate", RATE_HINT)
    if num < 0:
        raise ConfigError(path, f"negative rate {show(value)}",
                          "a rate must be >= 0 (0 or 'unlimited' = no rate limit)", value)
    bps = _round(num * factor)
    if num == 0:
        return None
    if bps < 1:
        raise ConfigError(path, f"rate {show(value)} is below 1 bit/s", RATE_HINT, value)
    if bps > U64_MAX:
        raise ConfigError(path, f"rate {show(value)} is too large", RATE_HINT, value)
    return bps


# --------------------------------------------------------------------------------------- times

_TIME_UNITS_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6,
                  "s": 10**9, "sec": 10**9, "min": 60 * 10**9}
_BARE_NAMES = {10**6: "ms", 10**9: "seconds", 10**3: "µs"}


def time_hint(bare_ns: int) -> str:
    return (f"use e.g. 10ms, 500us, 1.5s or a bare number of {_BARE_NAMES.get(bare_ns, 'ns')} "
            "(units: ns, us, ms, s, min)")


def parse_time(value: Any, path: Sequence[Any], *, bare_ns: int = 10**6,
               what: str = "a time", allow_negative: bool = False) -> int:
    """Time in ns. Units ns, us (µs), ms, s, min; a bare number is in ``bare_ns`` units
    (ms for delays, seconds for ``duration``/``start``/``stop``). Rounded to the nearest ns."""
    parts = split_unit(value)
    if parts is None:
        raise _wrong_type(path, value, what, time_hint(bare_ns))
    num, unit = parts
    if unit == "":
        factor = bare_ns
    elif unit.lower() in _TIME_UNITS_NS:
        factor = _TIME_UNITS_NS[unit.lower()]
    elif unit in _TIME_UNITS_NS:
        factor = _TIME_UNITS_NS[unit]
    else:
        raise _wrong_type(path, value, what, time_hint(bare_ns))
    if num < 0 and not allow_negative:
        raise ConfigError(path, f"negative {what.removeprefix('a ').removeprefix('an ')} "
                          f"{show(value)}", "it must be >= 0", value)
    ns = _round(num * factor)
    if abs(ns) > 2**63 - 1:
        raise ConfigError(path, f"{show(value)} is too large", time_hint(bare_ns), value)
    return ns


def coco_time_us(value: Any, path: Sequence[Any], max_delay_us: int | None) -> int:
    """CoCo-Beholder time string, exactly as its ``layout.py``/``run.py``: ``str()``, strip,
    suffix ``us`` -> µs, ``ms`` -> ms, ``s`` -> s, otherwise milliseconds; the float value is
    truncated to integer µs (``int(float(x) * unit)``). No ``ns``. Negative or above
    ``max_delay_us`` -> error."""
    hint = "use N, Nus, Nms or Ns (a bare number is milliseconds)"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _wrong_type(path, value, "a time string", hint)
    text = str(value).strip()
    if text.endswith("us"):
        num, unit = text[:-2], 1
    elif text.endswith("ms"):
        num, unit = text[:-2], 1000
    elif text.endswith("s"):
        num, unit = text[:-1], 1000 * 1000
    else:
        num, unit = text, 1000
    try:
        us = int(float(num) * unit)
    except (ValueError, OverflowError):
        raise _wrong_type(path, value, "a time string", hint) from None
    if us < 0:
        raise ConfigError(path, f"negative time {show(value)}", "it must be >= 0", value)
    if max_delay_us is not None and us > max_delay_us:
        raise ConfigError(path, f"{show(value)} = {us}us exceeds the maximum delay "
                          f"{max_delay_us}us", "lower it or raise --max-delay", value)
    return us


# ------------------------------------------------------------------------------------- sizes

_BYTE_UNIT = re.compile(r"^([kKmMgGtT]?)(i?)B$")
_BYTE_WORDS = {"byte": 1, "bytes": 1}
_PKT_WORDS = {"p", "pkt", "pkts", "packet", "packets"}


def _byte_factor(unit: str) -> int | None:
    if unit.lower() in _BYTE_WORDS:
        return 1
    m = _BYTE_UNIT.match(unit)
    if not m:
        return None
    prefix, binary = m.group(1).lower(), m.group(2)
    if prefix == "" and binary:
        return None
    return _RATE_PREFIX[prefix + binary]


@dataclass(frozen=True)
class QueueLimit:
    """A queue limit before BDP resolution: exactly one of packets/bytes/bdp, or none of
    them for an unlimited queue."""

    packets: int | None = None
    bytes: int | None = None
    bdp: Fraction | None = None
    text: Any = None  # as written, for error messages

    @property
    def unlimited(self) -> bool:
        return self.packets is None and self.bytes is None and self.bdp is None


QUEUE_HINT = ("use packets (1000, 1000pkt), bytes (1.5MB, 64KB, 64KiB, 1500B), "
              "a multiple of the BDP (1.5bdp) or 'unlimited'")


def parse_queue(value: Any, path: Sequence[Any]) -> QueueLimit:
    """Queue limit: packets (bare integer, ``1000pkt``, ``1000p``), bytes (``1.5MB``, ``64KB``,
    ``64KiB``, ``1500B``; decimal prefixes are powers of 10, ``Ki/Mi/Gi`` powers of 2),
    BDP multiples (``1.5bdp``) or ``unlimited``."""
    if isinstance(value, str) and value.strip().lower() in UNLIMITED_WORDS:
        return QueueLimit(text=value)
    if isinstance(value, float):
        raise ConfigError(path, f"{show(value)} is not a whole number of packets",
                          "queue sizes in packets are integers; " + QUEUE_HINT, value)
    parts = split_unit(value)
    if parts is None:
        raise _wrong_type(path, value, "a queue size", QUEUE_HINT)
    num, unit = parts
    if num < 0:
        raise ConfigError(path, f"negative queue size {show(value)}", "it must be >= 0", value)
    low = unit.lower()
    if unit == "" or low in _PKT_WORDS:
        if num != num.to_integral_value():
            raise ConfigError(path, f"{show(value)} is not a whole number of packets",
                              QUEUE_HINT, value)
        if num > U32_MAX:
            raise ConfigError(path, f"queue size {show(value)} is too large",
                              f"at most {U32_MAX} packets", value)
        return QueueLimit(packets=int(num), text=value)
    if low in ("bdp", "xbdp"):
        if num <= 0:
            raise ConfigError(path, f"queue size {show(value)} must be > 0 BDP", QUEUE_HINT,
                              value)
        return QueueLimit(bdp=Fraction(num), text=value)
    factor = _byte_factor(unit)
    if factor is None:
        raise _wrong_type(path, value, "a queue size", QUEUE_HINT)
    nbytes = _round(num * factor)
    if nbytes > U64_MAX:
        raise ConfigError(path, f"queue size {show(value)} is too large", QUEUE_HINT, value)
    return QueueLimit(bytes=nbytes, text=value)


SIZE_HINT = "use bytes (10MB, 64KiB, 1500B, or a bare number of bytes) or packets (100pkt)"


def parse_payload_size(value: Any, path: Sequence[Any], mss: int, *, what: str = "a size",
                       positive: bool = True) -> int:
    """A payload size in bytes: bare number = bytes, decimal/binary byte units, or
    ``Npkt`` = N full segments of ``mss`` bytes."""
    parts = split_unit(value)
    if parts is None:
        raise _wrong_type(path, value, what, SIZE_HINT)
    num, unit = parts
    if unit == "":
        factor = 1
    elif unit.lower() in _PKT_WORDS:
        factor = mss
    else:
        factor = _byte_factor(unit)
        if factor is None:
            raise _wrong_type(path, value, what, SIZE_HINT)
    n = _round(num * factor)
    if n < 0 or (positive and n <= 0):
        raise ConfigError(path, f"{show(value)} must be > 0" if positive
                          else f"negative size {show(value)}", SIZE_HINT, value)
    if n > U64_MAX:
        raise ConfigError(path, f"{show(value)} is too large", SIZE_HINT, value)
    return n


# ---------------------------------------------------------------------------------- scalars

def parse_int(value: Any, path: Sequence[Any], *, what: str = "an integer",
              minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(path, f"{show(value)} is not {what}",
                          "write a whole number" + (f" >= {minimum}" if minimum is not None
                                                     else ""), value)
    if minimum is not None and value < minimum:
        raise ConfigError(path, f"{value} is too small", f"it must be >= {minimum}", value)
    if maximum is not None and value > maximum:
        raise ConfigError(path, f"{value} is too large", f"it must be <= {maximum}", value)
    return value


def parse_bool(value: Any, path: Sequence[Any]) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(path, f"{show(value)} is not a boolean", "write true or false", value)
