"""From the parsers' typed form to the resolved-experiment dict: the dumbbell layout, or the
general one when the experiment has a ``topology:`` (both write the dict through resolved.py)."""

from __future__ import annotations

from .dumbbell import build_dumbbell
from .model import GroupSpec, RunSpec
from .topology import build_graph


def build(run: RunSpec, groups: list[GroupSpec]) -> dict:
    """Lay out the dumbbell (or the general ``topology``) and return the resolved dict."""
    if run.topology is not None:
        return build_graph(run, groups)
    return build_dumbbell(run, groups)


__all__ = ["build"]
