"""A campaign as an xarray Dataset: one dimension per swept column (and ``repeat`` and
``flow``), one variable per metric — the view SEM users know (``ccbench.campaign_dataset``;
docs/campaigns.md, "Python"). Points a filter left out are NaN."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from .aggregate import swept_columns
from .index import load_index
from .metrics import METRICS


def campaign_dataset(campaign_dir: str | Path, metrics: list[str] | None = None,
                     per_flow: bool = True):
    """The campaign's index as an ``xarray.Dataset`` with dimensions (swept columns...,
    ``repeat``, and ``flow`` unless ``per_flow`` is False, when each run's flows are averaged)
    and one variable per metric (default: every metric of the index). Needs xarray and pandas
    (``pip install xarray pandas pyarrow``)."""
    try:
        import xarray  # noqa: F401
    except ImportError as e:
        raise ImportError("campaign_dataset needs xarray (and pandas, pyarrow): "
                          "pip install xarray pandas pyarrow") from e
    root = Path(campaign_dir)
    index = load_index(root)
    axes = swept_columns(index, root)
    mets = metrics or [m for m in METRICS if m in index.columns]
    unknown = [m for m in mets if m not in index.columns]
    if unknown:
        raise ValueError(f"unknown metric {', '.join(unknown)}; the index has "
                         f"{', '.join(m for m in METRICS if m in index.columns)}")
    dims = axes + ["repeat"] + (["flow"] if per_flow else [])
    df = index.select(dims + mets)
    if not per_flow:
        df = df.group_by(dims, maintain_order=True).agg(pl.col(mets).mean())
    pdf = df.to_pandas().set_index(dims)
    ds = pdf.to_xarray()
    ds.attrs["campaign"] = str(root)
    return ds


__all__ = ["campaign_dataset"]
