"""The bottom layer of the experiment-file parsers: mappings checked key by key.

A :class:`Key` names a key with its aliases; :func:`take` checks a mapping against a list of
them (unknown keys with the closest valid one, repeats, required keys, ``null`` = absent) and
returns each value with the path it was written at, which every error message names.
:func:`get` parses one of those values with a small parser of ``units.py`` and collects its
error instead of raising.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .errors import Collector, NotSupportedError, show

MS = 10**6
SEC = 10**9

#: queue types that mean "no discipline": accepted where a discipline is not supported
NO_OP_AQM = {"droptail", "none", "fifo"}


@dataclass(frozen=True)
class Key:
    """A key of a mapping: canonical name, aliases, and whether it is required."""

    name: str
    aliases: tuple[str, ...] = ()
    required: bool = False


def canon(key: Any) -> str:
    return str(key).replace("_", "-")


def _kind(v: Any) -> str:
    return {str: "a text", list: "a list", type(None): "empty", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(v), f"a {type(v).__name__}")


def take(mapping: Any, path: tuple, keys: Sequence[Key], errs: Collector,
         reserved: Mapping[str, str] = {}, what: str = "a mapping"
         ) -> dict[str, tuple[Any, tuple]] | None:
    """Check a mapping's keys: returns canonical name -> (value, path as written).

    Unknown keys get the closest valid one suggested; reserved keys fail as
    "not yet supported" unless their value is null; missing required keys are reported.
    ``None`` values count as absent (CoCo-Beholder: absent or null = default)."""
    if not isinstance(mapping, dict):
        if not path:  # a whole file that is not a mapping: named by its kind, never quoted
            errs.error(path, f"the file's top level is {_kind(mapping)}, not {what}",
                       "expected keys: " + ", ".join(k.name for k in keys), None)
            return None
        errs.error(path, f"{show(mapping)} is not {what}",
                   "expected keys: " + ", ".join(k.name for k in keys), mapping)
        return None
    by_alias = {}
    for k in keys:
        by_alias[k.name] = k
        for a in k.aliases:
            by_alias[a] = k
    out: dict[str, tuple[Any, tuple]] = {}
    written: dict[str, str] = {}
    for raw_key, value in mapping.items():
        kpath = path + (raw_key,)
        c = canon(raw_key)
        if c in reserved:
            no_op = (c.endswith("aqm") or c == "kind") and isinstance(value, str) \
                and value.lower() in NO_OP_AQM
            if value is not None and not no_op:
                errs.add(NotSupportedError(kpath, reserved[c], value))
            continue
        if c not in by_alias:
            valid = sorted(by_alias)
            close = difflib.get_close_matches(c, valid, n=1, cutoff=0.6)
            hint = (f'did you mean "{close[0]}"? ' if close else "") + \
                "valid keys: " + ", ".join(k.name for k in keys)
            errs.error(kpath, f"unknown key {show(raw_key)}", hint, raw_key)
            continue
        k = by_alias[c]
        if k.name in written:
            errs.error(kpath, f"{show(raw_key)} repeats {show(written[k.name])}",
                       "they are the same setting; keep one", raw_key)
            continue
        written[k.name] = str(raw_key)
        if value is None:
            continue
        out[k.name] = (value, kpath)
    for k in keys:
        if k.required and k.name not in out and k.name not in written:
            errs.error(path + (k.name,), f"missing required key {show(k.name)}",
                       required_hint(k.name), None)
        elif k.required and k.name not in out:
            errs.error(path + (written[k.name],), f"{show(k.name)} must not be null",
                       required_hint(k.name), None)
    return out


def required_hint(name: str) -> str:
    return {"duration": "e.g. duration: 30 (seconds)",
            "flows": "add a list of flow groups, e.g. flows: [{scheme: cubic}]",
            "scheme": "e.g. scheme: cubic"}.get(name, "")


def get(d: dict, name: str, fn, errs: Collector, default=None, **kw):
    if name not in d:
        return default
    value, path = d[name]
    return errs.guard(fn, value, path, default=default, **kw)


__all__ = ["Key", "MS", "NO_OP_AQM", "SEC", "canon", "get", "take"]
