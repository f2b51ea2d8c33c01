"""Two runs side by side: per-flow metrics with their differences, and overlay plots.

Meant for a simulated and a kernel run of the same experiment (`--backend both`), but any two
results directories with the same flows compare (e.g. two seeds, two code versions).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from . import analysis  # noqa: E402
from .plots.coco import FIGSIZE, FONT_SIZE, _save  # noqa: E402
from .results import Results, load  # noqa: E402

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
    a = a if isinstance(a, Results) else load(a)
    b = b if isinstance(b, Results) else load(b)
    la = [f["label"] for f in a.experiment["flows"]]
    lb = [f["label"] for f in b.experiment["flows"]]
    if la != lb:
        raise ValueError(f"{a.path} and {b.path} have different flows ({len(la)} vs {len(lb)}: "
                         f"{la[:3]}… vs {lb[:3]}…); compare runs of the same experiment")
    an_a = analysis.analyze(a, "per-flow", interval)
    an_b = analysis.analyze(b, "per-flow", interval)
    tot_a = analysis.analyze(a, "total", interval).summary
    tot_b = analysis.analyze(b, "total", interval).summary
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


def _overlay(c: Comparison, path: Path, column: str, ylabel: str, title: str) -> Path:
    fig, ax = plt.subplots(figsize=FIGSIZE)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, curve in enumerate(c.table["curve"].to_list()):
        if curve.startswith("Total"):
            continue
        color = colors[i % len(colors)]
        for df, style, name in ((c.a_intervals, "-", c.name_a), (c.b_intervals, "--", c.name_b)):
            g = df.filter(pl.col("curve") == curve).drop_nulls(column).sort("t_s")
            ax.plot(g["t_s"].to_numpy(), g[column].to_numpy(), style, color=color, lw=1.2,
                    label=f"{curve} [{name}]")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title + " — solid: A, dashed: B", loc="right", fontsize=FONT_SIZE)
    return _save(fig, ax, path)


def _overlay_cwnd(c: Comparison, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=FIGSIZE)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels = {f["id"]: f["label"] for f in c.a.experiment["flows"]}
    for res, style, name in ((c.a, "-", c.name_a), (c.b, "--", c.name_b)):
        if res.flows is None:
            continue
        for (fid,), g in res.flows.sort("flow", "time_ns").group_by("flow", maintain_order=True):
            ax.plot(g["time_ns"].to_numpy() / 1e9, g["cwnd"].to_numpy(), style,
                    color=colors[int(fid) % len(colors)], lw=1, label=f"{labels[int(fid)]} [{name}]")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel("Congestion window (packets)", fontsize=FONT_SIZE)
    ax.set_title("cwnd — solid: A, dashed: B", loc="right", fontsize=FONT_SIZE)
    return _save(fig, ax, path)


def write(c: Comparison, out_dir: str | Path, fmt: str = "png") -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.txt").write_text(text(c) + "\n")
    c.table.write_csv(out / "compare.csv")
    return [out / "compare.txt", out / "compare.csv",
            _overlay(c, out / f"compare-rate.{fmt}", "rate_mbps", "Throughput (Mbit/s)",
                     "Per-interval throughput"),
            _overlay(c, out / f"compare-delay.{fmt}", "delay_ms", "One-way delay (ms)",
                     "Per-interval mean one-way delay"),
            _overlay_cwnd(c, out / f"compare-cwnd.{fmt}")]
