"""Aggregation across repeats: n, mean, median, standard deviation, min/max and a Student-t
confidence interval of the mean, per sweep point and chosen columns.

Rows of the index are flows. Within one run, the flows that fall in the same group (e.g. the
two cubic flows of a run when grouping by scheme) are first combined (``within``: mean or
sum), so that the statistics are over runs — n is the number of repeats with a value — and
the interval is the usual one for independent repeats:

    mean ± t_{(1+level)/2, n-1} · s / √n,   s the sample standard deviation (ddof 1).

With n < 2 the interval is null. The t quantile is computed here (regularised incomplete beta
function by its continued fraction, then bisection), so scipy is not needed.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

from .index import load_index
from .metrics import METRICS, SCHEMA

BASE_COLUMNS = {"run_key", "point", "label", "repeat", "seed", "backend", "ccbench_version",
                *SCHEMA}
BY_CHOICES = ("scheme", "direction", "group", "flow", "flow_label")


# ------------------------------------------------------------------------- Student t

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
          + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (bisection to 1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability {p} must be in (0, 1)")
    if df <= 0:
        raise ValueError(f"degrees of freedom {df} must be > 0")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


# ------------------------------------------------------------------------- aggregation

def swept_columns(index: pl.DataFrame, root: Path | None = None) -> list[str]:
    """The sweep's parameter columns: from DIR/campaign.json if there, else every column
    that is not an index base column."""
    if root is not None and (root / "campaign.json").is_file():
        cols = json.loads((root / "campaign.json").read_text()).get("plan", {}).get("columns")
        if cols is not None:
            return [c for c in cols if c in index.columns]
    return [c for c in index.columns if c not in BASE_COLUMNS]


def aggregate(index, *, by=("scheme",), metrics=None, level: float = 0.95,
              within: str = "mean") -> pl.DataFrame:
    """Statistics across repeats per sweep point and ``by`` columns.

    ``index``: a campaign directory, an index.parquet file or the index DataFrame. ``by``:
    extra grouping columns (scheme, direction, group, flow, flow_label; () for the whole
    run). ``metrics``: metric columns (default: all of them). ``level``: confidence level of
    the interval (e.g. 0.9). ``within``: how the flows of one group in one run are combined
    (``mean`` or ``sum``).

    Returns one row per (point, by..., metric): the point's label and swept columns, ``by``,
    ``metric, n, mean, median, std, min, max, ci_low, ci_high, ci_half, level``.
    """
    root = None
    if not isinstance(index, pl.DataFrame):
        root = Path(index) if Path(index).is_dir() else None
        index = load_index(index)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level {level} must be between 0 and 1 (e.g. 0.9)")
    if within not in ("mean", "sum"):
        raise ValueError(f"within={within!r}: use 'mean' or 'sum'")
    by = [by] if isinstance(by, str) else list(by or ())
    for b in by:
        if b not in index.columns:
            raise ValueError(f"cannot group by {b!r}: not a column of the index; use "
                             + ", ".join(BY_CHOICES) + " or a swept column")
    metrics = list(metrics or METRICS)
    for m in metrics:
        if m not in index.columns:
            raise ValueError(f"unknown metric {m!r}; metrics: " + ", ".join(METRICS))
    swept = swept_columns(index, root)
    keys = ["point", "label"] + [c for c in swept if c not in by] + by
    combine = pl.mean if within == "mean" else pl.sum
    per_run = index.group_by(["run_key"] + keys, maintain_order=True).agg(
        [combine(m).alias(m) if within == "mean" else
         pl.when(pl.col(m).is_not_null().any()).then(pl.col(m).sum()).alias(m)
         for m in metrics])
    long = per_run.unpivot(index=["run_key"] + keys, on=metrics, variable_name="metric",
                           value_name="value")
    stats = (long.group_by(keys + ["metric"], maintain_order=True)
             .agg(pl.col("value").count().alias("n"), pl.col("value").mean().alias("mean"),
                  pl.col("value").median().alias("median"),
                  pl.col("value").std(ddof=1).alias("std"),
                  pl.col("value").min().alias("min"), pl.col("value").max().alias("max")))
    tq = {n: t_quantile((1 + level) / 2, n - 1) for n in set(stats["n"].to_list()) if n >= 2}
    half = [None if n < 2 or s is None else tq[n] * s / math.sqrt(n)
            for n, s in zip(stats["n"].to_list(), stats["std"].to_list())]
    stats = stats.with_columns(pl.Series("ci_half", half, dtype=pl.Float64))
    stats = stats.with_columns((pl.col("mean") - pl.col("ci_half")).alias("ci_low"),
                               (pl.col("mean") + pl.col("ci_half")).alias("ci_high"),
                               pl.lit(level).alias("level"))
    order = {m: i for i, m in enumerate(metrics)}
    stats = stats.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64)
                               .alias("_m"))
    stats = stats.sort(["_m", "point"] + by, maintain_order=True).drop("_m")
    return stats.select(keys + ["metric", "n", "mean", "median", "std", "min", "max",
                                "ci_low", "ci_high", "ci_half", "level"])


def _fmt(v) -> str:
    if v is None:
        return "-"
    a = abs(v)
    return f"{v:.4g}" if a and (a < 1e-3 or a >= 1e5) else f"{v:.3f}".rstrip("0").rstrip(".")


def stats_text(stats: pl.DataFrame, *, max_rows: int = 400) -> str:
    """The aggregate as a plain table: one line per point and group, one column per metric
    with ``mean ± CI half-width (n)``."""
    if stats.is_empty():
        return "no finished runs to aggregate"
    level = stats["level"][0]
    keys = [c for c in stats.columns if c not in ("metric", "n", "mean", "median", "std",
                                                  "min", "max", "ci_low", "ci_high",
                                                  "ci_half", "level", "point")]
    metrics = list(dict.fromkeys(stats["metric"].to_list()))
    cell = {}
    for r in stats.iter_rows(named=True):
        k = tuple(r[c] for c in keys)
        txt = _fmt(r["mean"]) + ("" if r["ci_half"] is None else f" ± {_fmt(r['ci_half'])}") \
            + f" ({r['n']})"
        cell.setdefault(k, {})[r["metric"]] = txt
    head = [c for c in keys if c != "label"] or ["label"]
    rows = [[_fmt(v) if isinstance(v, float) else str(v) for v, c in zip(k, keys) if c in head]
            + [m.get(x, "-") for x in metrics] for k, m in cell.items()]
    cols = head + metrics
    w = [max([len(c)] + [len(r[i]) for r in rows[:max_rows]]) for i, c in enumerate(cols)]
    out = [f"mean ± {level * 100:g} % confidence half-width (n runs)",
           "  ".join(c.ljust(x) for c, x in zip(cols, w)).rstrip()]
    out += ["  ".join(v.ljust(x) for v, x in zip(r, w)).rstrip() for r in rows[:max_rows]]
    if len(rows) > max_rows:
        out.append(f"… {len(rows) - max_rows} more rows (use --csv)")
    return "\n".join(out)
