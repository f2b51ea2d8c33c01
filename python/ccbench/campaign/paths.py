"""Paths into a raw experiment document: ``central.queue``, ``flows[0].scheme``,
``flows[*].start``, ``central.loss.bernoulli``.

Keys match the document's keys as the config layer does (``_`` and ``-`` are the same);
setting a path creates missing intermediate mappings; list indices must exist; ``[*]``
addresses every item of a list.
"""
from __future__ import annotations

import copy
import re
from typing import Any

from ..config.errors import show

_SEG = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)((?:\[(?:\d+|\*)\])*)$")
_IDX = re.compile(r"\[(\d+|\*)\]")

Part = "str | int"  # a key, a list index, or "*" (every item)


class PathError(ValueError):
    """A path that cannot be parsed or applied; the message names it and says why."""


def parse_path(text: str) -> tuple:
    """``flows[0].scheme`` → ("flows", 0, "scheme"); ``flows[*]`` → ("flows", "*")."""
    if not isinstance(text, str) or not text.strip():
        raise PathError(f"{show(text)} is not a key path (e.g. central.queue, flows[0].scheme)")
    parts: list = []
    for seg in text.strip().split("."):
        m = _SEG.match(seg)
        if not m:
            raise PathError(f"{show(text)} is not a key path: bad segment {show(seg)} "
                            "(write keys separated by dots, list items as [N] or [*])")
        parts.append(m.group(1))
        for idx in _IDX.findall(m.group(2)):
            parts.append("*" if idx == "*" else int(idx))
    return tuple(parts)


def canon(key: Any) -> str:
    return str(key).replace("_", "-")


def _find_key(d: dict, key: str):
    """The document's own spelling of ``key`` (``left_delay`` finds ``left-delay``)."""
    if key in d:
        return key
    c = canon(key)
    for k in d:
        if canon(k) == c:
            return k
    return None


def _where(parts: tuple, i: int) -> str:
    out = ""
    for p in parts[:i]:
        out += f"[{p}]" if isinstance(p, int) or p == "*" else (f".{p}" if out else str(p))
    return out or "<top>"


def set_path(doc: Any, parts: tuple, value: Any) -> None:
    """Set ``parts`` in ``doc`` (in place) to a deep copy of ``value``."""
    _set(doc, parts, 0, value)


def _set(node: Any, parts: tuple, i: int, value: Any) -> None:
    p = parts[i]
    last = i == len(parts) - 1
    if isinstance(p, str) and p != "*":
        if not isinstance(node, dict):
            raise PathError(f"{_where(parts, i)} is {show(node)}, not a mapping, so it has no "
                            f"key {show(p)}")
        k = _find_key(node, p)
        if last:
            node[p if k is None else k] = copy.deepcopy(value)
            return
        if k is None or node[k] is None:
            k = p if k is None else k
            node[k] = [] if isinstance(parts[i + 1], int) else {}
        _set(node[k], parts, i + 1, value)
        return
    if not isinstance(node, list):
        raise PathError(f"{_where(parts, i)} is {show(node)}, not a list, so it has no item "
                        f"[{p}]")
    idx = range(len(node)) if p == "*" else [p]
    for j in idx:
        if j >= len(node):
            raise PathError(f"{_where(parts, i)} has {len(node)} items, so "
                            f"{_where(parts, i + 1)} does not exist")
        if last:
            node[j] = copy.deepcopy(value)
        else:
            if node[j] is None:
                node[j] = {}
            _set(node[j], parts, i + 1, value)


def get_path(doc: Any, parts: tuple) -> Any:
    """The value at ``parts``; KeyError (with the path) when absent. ``[*]`` is refused."""
    node = doc
    for i, p in enumerate(parts):
        if p == "*":
            raise PathError(f"{_where(parts, i + 1)}: [*] cannot be read, name one item")
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                raise KeyError(_where(parts, i + 1))
            node = node[p]
        else:
            k = _find_key(node, p) if isinstance(node, dict) else None
            if k is None:
                raise KeyError(_where(parts, i + 1))
            node = node[k]
    return node


def format_parts(parts: tuple) -> str:
    return _where(parts, len(parts))
