"""Flow-completion-time figures (finite flows and short-flow arrivals, docs/metrics.md):
``fct-cdf`` (CDF of FCT per group), ``fct-size`` (FCT and slowdown against flow size, log
axes) and ``fct-stats.log`` (per-group summary, and goodput of every flow)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ..analysis.workloads import fct_summary, fct_table, goodput_table  # noqa: E402


def _groups(t: pl.DataFrame):
    for (g,), sub in t.group_by("group", maintain_order=True):
        label = sub["label"][0].split(": ", 1)[-1] if sub["conn"].null_count() == 0 else \
            sub["label"][0]
        yield g, label, sub


def plot_fct_cdf(results, path) -> Path:
    t = fct_table(results).drop_nulls("fct_ns")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for g, label, sub in _groups(t):
        x = np.sort(sub["fct_ns"].to_numpy() / 1e6)
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post",
                label=f"group {g}: {label} ({len(x)} flows)")
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_fct_size(results, path) -> Path:
    t = fct_table(results).drop_nulls("fct_ns")
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for g, label, sub in _groups(t):
        x = sub["size_bytes"].to_numpy()
        a1.scatter(x, sub["fct_ns"].to_numpy() / 1e6, s=6, alpha=0.6, label=f"group {g}: {label}")
        a2.scatter(x, sub["slowdown"].to_numpy(), s=6, alpha=0.6)
        order = np.argsort(x)
        a1.plot(x[order], sub["ideal_ns"].to_numpy()[order] / 1e6, lw=1, ls="--", color="gray")
    a1.set_yscale("log")
    a1.set_ylabel("FCT (ms); dashed: ideal")
    a2.set_yscale("log")
    a2.axhline(1, color="gray", lw=1, ls="--")
    a2.set_ylabel("slowdown (FCT / ideal)")
    a2.set_xscale("log")
    a2.set_xlabel("flow size (bytes)")
    for a in (a1, a2):
        a.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def write_workload_stats(results, path) -> Path:
    lines = []
    s = fct_summary(results)
    if not s.is_empty():
        lines.append("# flow completion times per group (FCT from SYN to last ACK; ideal = "
                     "2 RTT + wire bytes at the path's slowest link)")
        lines.append(f"{'group':>5}  {'flows':>6}  {'done':>6}  {'mean ms':>9}  {'median':>9}  "
                     f"{'p99':>9}  {'slowdown':>8}  {'p99 sd':>8}  label")
        for r in s.iter_rows(named=True):
            f = lambda v, w=9: f"{v:{w}.2f}" if v is not None else " " * (w - 1) + "-"  # noqa: E731
            lines.append(f"{r['group']:>5}  {r['flows']:>6}  {r['completed']:>6}  "
                         f"{f(r['fct_mean_ms'])}  {f(r['fct_median_ms'])}  {f(r['fct_p99_ms'])}  "
                         f"{f(r['slowdown_mean'], 8)}  {f(r['slowdown_p99'], 8)}  {r['label']}")
        lines.append("")
    g = goodput_table(results)
    lines.append("# goodput per flow (payload acknowledged, UDP: delivered, over the active time)")
    for r in g.iter_rows(named=True):
        app = f"  app rate {r['app_rate_bps'] / 1e6:.3f} Mbit/s, ratio {r['goodput_ratio']:.4f}" \
            if r["app_rate_bps"] else ""
        lines.append(f"{r['label']}: {r['goodput_bps'] / 1e6:.3f} Mbit/s{app}")
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)


def has_fcts(results) -> bool:
    return results.conns is not None or any(
        f.get("bytes") is not None for f in results.experiment["flows"])


__all__ = ["plot_fct_cdf", "plot_fct_size", "write_workload_stats", "has_fcts"]
