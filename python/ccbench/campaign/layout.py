"""How a campaign is laid out for plotting: which swept column goes on the x axis, which
groups get one line each, which axis gets one panel per value — shared by the static plots
(ccbench.plots.campaign) and the interactive campaign report (ccbench.report.campaign).

Axis values written with a unit (``0.25bdp``, ``10Mbit``, ``20ms``) count as numbers when
every value of the axis carries the same unit.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import polars as pl

from .aggregate import swept_columns
from .axes import numeric_axis, ordered

def hue(df: pl.DataFrame, by: Sequence[str]) -> pl.Series:
    """One text per row naming its ``by`` group ("all" without groups)."""
    if not by:
        return pl.Series("hue", ["all"] * df.height)
    return df.select(pl.concat_str([pl.col(b).cast(pl.String) for b in by], separator=" ")
                     .alias("hue"))["hue"]


@dataclass
class Layout:
    x: str  # the swept column on the x axis
    by: list[str]  # one line per group of these columns
    facet: str | None  # one panel per value of this column
    swept: list[str]  # swept columns that take more than one value
    numeric: list[str]  # those of them that are numeric


def choose(index: pl.DataFrame, root: Path | None = None, *, x: str | None = None,
           by: Sequence[str] = ("scheme",)) -> Layout:
    """x: ``x`` or the first numeric swept axis (else the first axis); lines: ``by`` unless it
    has one group, then the next axis; a facet: a further axis with at most 6 values that
    does not determine the line (a panel per value would hold a single line) and is not
    determined by x (a value derived from x, e.g. ``central.delay: X - 2 ms``: a panel per
    value would hold a single point)."""
    swept = [c for c in swept_columns(index, root) if index[c].n_unique() > 1]
    if not swept:
        raise ValueError(f"{root or 'the index'}: no axis takes more than one value; nothing "
                         "to plot against")
    numeric = [c for c in swept if numeric_axis(index[c].unique().to_list()) is not None]
    if x is None:
        x = (numeric or swept)[0]
    elif x not in index.columns:
        raise ValueError(f"--x {x!r} is not a swept column; axes: {', '.join(swept)}")
    by = [b for b in by if b != x]
    others = [c for c in swept if c != x]
    if (not by or hue(index, by).n_unique() == 1) and others:
        by, others = [others[0]], others[1:]  # lines: the next axis
    hued = index.with_columns(hue(index, by))

    def determines(c: str, what: str = "hue") -> bool:
        return hued.group_by(c).agg(pl.col(what).n_unique())[what].max() == 1

    facet = next((c for c in others if index[c].n_unique() <= 6 and c not in by
                  and not determines(c) and not determines(c, x)), None)
    return Layout(x=x, by=list(by), facet=facet, swept=swept, numeric=numeric)


def metric_by(index: pl.DataFrame, metric: str, by: Sequence[str]) -> list[str]:
    """The grouping to draw ``metric`` with: ``by`` for a per-flow metric; for a metric with
    one value per run (Jain's index over the run's flows; utilisation when every flow crosses
    one bottleneck), only the ``by`` columns that are the same on all rows of a run — grouping
    it by scheme would draw the run's one value once per scheme, identical lines hidden under
    each other."""
    if "run_key" not in index.columns or metric not in index.columns:
        return list(by)
    per_run = index.group_by("run_key").agg(pl.col(metric).drop_nulls().n_unique().alias("_n"),
                                            *[pl.col(b).n_unique() for b in by])
    if per_run["_n"].max() is None or per_run["_n"].max() > 1:
        return list(by)
    return [b for b in by if per_run[b].max() <= 1]


__all__ = ["Layout", "choose", "hue", "metric_by", "numeric_axis", "ordered"]
