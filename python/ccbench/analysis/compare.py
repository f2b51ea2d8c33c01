"""Two runs side by side: per-flow and total metrics of each, and their relative differences.

Meant for a simulated and a kernel run of the same experiment (`--backend both`), but any two
results directories with the same flows compare (e.g. two seeds, two code versions). The
overlay figures are in ``ccbench.plots.compare``, the interactive page in
``ccbench.report.comparison``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..results import Results, load
from .metrics import analyze

METRICS = (("avg_tput_mbps", "tput Mbit/s"), ("mean_delay_ms", "mean OWD ms"),
           ("p95_delay_ms", "p95 OWD ms"), ("loss_pct", "loss %"))


@dataclass
class Comparison:
    a: Results
    b: Results
    name_a: str
    name_b: str
    table: pl.DataFrame          # curve, <metric>_a, <metric>_b, <metric>_diff_pct
    jain: tuple[float | None, float | None]
    a_intervals: pl.DataFrame
    b_intervals: pl.DataFrame


def _name(res: Results) -> str:
    return f"{res.meta.get('backend', '?')}:{res.path.name}"


def compare(a: Results | str | Path, b: Results | str | Path, interval: float = 0.5) -> Comparison:
    """Per-flow and total metrics of two runs with the same flows (A and B, results or
    directories) at aggregation interval ``interval`` s; Δ % = (B − A) / |A|."""
    a = a if isinstance(a, Results) else load(a)
    b = b if isinstance(b, Results) else load(b)
    la = [f["label"] for f in a.experiment["flows"]]
    lb = [f["label"] for f in b.experiment["flows"]]
    if la != lb:
        raise ValueError(f"{a.path} and {b.path} have different flows ({len(la)} vs {len(lb)}: "
                         f"{la[:3]}… vs {lb[:3]}…); compare runs of the same experiment")
    an_a = analyze(a, "per-flow", interval)
    an_b = analyze(b, "per-flow", interval)
    tot_a = analyze(a, "total", interval).summary
    tot_b = analyze(b, "total", interval).summary
    sa = pl.concat([an_a.summary, tot_a], how="diagonal_relaxed")
    sb = pl.concat([an_b.summary, tot_b], how="diagonal_relaxed")
    cols = [m for m, _ in METRICS]
    t = sa.select("curve", *cols).join(sb.select("curve", *cols), on="curve", suffix="_b",
                                       maintain_order="left")
    t = t.rename({c: f"{c}_a" for c in cols})
    for c in cols:
        t = t.with_columns(
            pl.when(pl.col(f"{c}_a").abs() > 0)
            .then((pl.col(f"{c}_b") - pl.col(f"{c}_a")) / pl.col(f"{c}_a").abs() * 100)
            .otherwise(None).alias(f"{c}_diff_pct"))
    return Comparison(a, b, _name(a), _name(b), t, (an_a.overall_jain, an_b.overall_jain),
                      an_a.per_interval, an_b.per_interval)


def text(c: Comparison) -> str:
    """The comparison table as aligned text (``compare.txt``)."""
    def f(v, spec=".2f"):
        return "N/A" if v is None else format(v, spec)

    w = max(len("curve"), *(len(x) for x in c.table["curve"].to_list()))
    head = f"{'curve':<{w}}"
    for _, h in METRICS:
        head += f"  {h + ' A':>14} {h + ' B':>14} {'Δ%':>7}"
    lines = [f"A = {c.name_a} ({c.a.path})", f"B = {c.name_b} ({c.b.path})", head, "-" * len(head)]
    for r in c.table.iter_rows(named=True):
        line = f"{r['curve']:<{w}}"
        for m, _ in METRICS:
            line += f"  {f(r[m + '_a']):>14} {f(r[m + '_b']):>14} {f(r[m + '_diff_pct'], '+.1f'):>7}"
        lines.append(line)
    ja, jb = c.jain
    lines.append(f"Jain's index over flows: A {f(ja, '.4f')}  B {f(jb, '.4f')}")
    return "\n".join(lines)


def write_table(c: Comparison, out_dir: str | Path) -> list[Path]:
    """Write ``compare.txt`` (:func:`text`) and ``compare.csv`` (the table) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.txt").write_text(text(c) + "\n")
    c.table.write_csv(out / "compare.csv")
    return [out / "compare.txt", out / "compare.csv"]


__all__ = ["METRICS", "Comparison", "compare", "text", "write_table"]
