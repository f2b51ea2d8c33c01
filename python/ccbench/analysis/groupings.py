"""Groupings ("plot types" in CoCo-Beholder): which flows are pooled into which curve, the curve
labels, the file-name prefix and the label notation shown in plot titles.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

# Named groupings: name -> subset fields (None = special).
NAMED = {
    "per-flow": None,
    "total": None,
    "per-scheme": ("scheme",),
    "per-direction": ("direction",),
    "per-scheme-direction": ("scheme", "direction"),
}
GROUPINGS = tuple(NAMED) + ("per-subset",)


@dataclass(frozen=True)
class Curve:
    """One curve: a label and the ids of the flows it pools (in flow order)."""

    label: str
    flows: tuple[int, ...]


@dataclass(frozen=True)
class Grouping:
    name: str  # the file-name prefix, e.g. "per-flow", "per-scheme-direction", "per-group"
    notation: str  # "Label notation: …" shown in plot titles
    curves: tuple[Curve, ...] = field(default_factory=tuple)


def _plural(n: int) -> str:
    return "flow" if n == 1 else "flows"


def _value_str(flow: dict, name: str) -> str:
    if name not in flow:
        known = sorted(k for k, v in flow.items() if _is_scalar(v))
        raise ValueError(f"per-subset: unknown flow field {name!r}; valid fields: {known}")
    v = flow[name]
    if not _is_scalar(v):
        raise ValueError(f"per-subset: flow field {name!r} is not a scalar ({type(v).__name__})")
    return str(v)


def _is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def make_grouping(flows: Sequence[dict], grouping: str = "per-flow",
                  subset_fields: Sequence[str] | None = None) -> Grouping:
    """Build the curves of ``grouping`` over the experiment's flows (dicts with id, label, …).

    ``grouping`` is one of GROUPINGS. ``per-subset`` needs ``subset_fields``: one curve per
    distinct tuple of those flow fields, labelled ``"<v1> <v2> : N flows"``, file prefix
    ``per-<f1>-<f2>`` (so ``per-subset`` with ``["scheme"]`` is exactly ``per-scheme``).
    Curves are ordered by their first flow id, as CoCo-Beholder orders them.
    """
    # latency probes are measurement traffic, not curves (analysis.probes has their RTTs)
    flows = sorted((f for f in flows if not f.get("probe")), key=lambda f: f["id"])
    if grouping == "per-flow":
        curves = tuple(Curve(f["label"], (f["id"],)) for f in flows)
        return Grouping("per-flow", "Label notation: Flow <flow id>: <scheme> <direction>", curves)
    if grouping == "total":
        n = len(flows)
        curves = (Curve(f"Total: {n:d} {_plural(n)}", tuple(f["id"] for f in flows)),)
        return Grouping("total", "Label notation: Total: <total flows number> flows", curves)
    if grouping in NAMED:
        if subset_fields is not None and tuple(subset_fields) != NAMED[grouping]:
            raise ValueError(f"grouping {grouping!r} takes no subset_fields")
        subset_fields = NAMED[grouping]
    elif grouping == "per-subset":
        if not subset_fields:
            raise ValueError("grouping 'per-subset' needs a non-empty list subset_fields "
                             "(flow fields such as 'scheme', 'direction', 'group')")
    else:
        raise ValueError(f"unknown grouping {grouping!r}; valid: {', '.join(GROUPINGS)}")
    fields = tuple(subset_fields)
    members: dict[str, list[int]] = {}
    for f in flows:
        key = " ".join(_value_str(f, name) for name in fields)
        members.setdefault(key, []).append(f["id"])
    ordered = sorted(members.items(), key=lambda kv: kv[1][0])
    curves = tuple(Curve(f"{key} : {len(ids):d} {_plural(len(ids))}", tuple(ids))
                   for key, ids in ordered)
    notation = "Label notation: <{}> : <flows number> flows".format("> <".join(fields))
    return Grouping("per-" + "-".join(fields), notation, curves)
