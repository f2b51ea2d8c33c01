"""CoCo-Beholder's statistics file ``<prefix>-stats.log`` (docs/metrics.md, "Statistics file").

Field texts, padding and N/A texts are those of CoCo-Beholder's public source (``plot.py``'s stats
writer): the per-packet section header there is ``===== Per-packet statistics =====``.
"""
from __future__ import annotations

from pathlib import Path

from .metrics import MIN_DURATION_NS, Analysis

NO_PACKETS = "N/A as the curve has no packets"


def _rate_str(row: dict) -> str:
    if row["avg_tput_mbps"] is not None:
        return "{:f} Mbps".format(row["avg_tput_mbps"])
    if row["start_s"] is None:
        return NO_PACKETS
    return "N/A as the curve's duration is less than {:g}ms".format(MIN_DURATION_NS / 1e6)


def _ms(v) -> str:
    return NO_PACKETS if v is None else "{:f} ms".format(v)


def _loss_str(v) -> str:
    return "N/A as no bytes were sent by the curve's senders" if v is None else "{:f} %".format(v)


def stats_text(analysis: Analysis) -> str:
    """The two-section statistics file of CoCo-Beholder for one grouping, as a string."""
    out = []
    if analysis.stat_mode != "whole-duration":
        # name a non-default mode in the output (whole-duration output stays byte-identical)
        out.append("Statistics mode: {} (aggregation interval {:g}s)\n\n".format(
            analysis.stat_mode, analysis.interval))
    out.append("== Average and loss statistics ==\n\n")
    if analysis.overall_jain is None:
        j = "N/A as none of the curves has average throughput to count the index over"
    else:
        j = "{:f}".format(analysis.overall_jain)
    out.append("Average Jain's index  : {}\n\n".format(j))
    rows = analysis.summary.to_dicts()
    for r in rows:
        out.append('-- Curve "{}":\n'.format(r["curve"]))
        out.append("Average throughput    : {}\n".format(_rate_str(r)))
        out.append("Average one-way delay : {}\n".format(_ms(r["avg_delay_ms"])))
        # CoCo-Beholder's file: its loss is sent − delivered (in-flight packets included)
        out.append("Loss                  : {}\n\n".format(_loss_str(r["coco_loss_pct"])))
    out.append("===== Per-packet statistics =====\n\n")
    for r in rows:
        out.append('-- Curve "{}":\n'.format(r["curve"]))
        out.append("Median per-packet one-way delay          : {}\n".format(_ms(r["median_delay_ms"])))
        out.append("Average per-packet one-way delay         : {}\n".format(_ms(r["mean_delay_ms"])))
        out.append("95th percentile per-packet one-way delay : {}\n\n".format(_ms(r["p95_delay_ms"])))
    return "".join(out)


def write_stats(analysis: Analysis, path: str | Path) -> Path:
    """Write :func:`stats_text` to ``path`` (a directory means ``<dir>/<prefix>-stats.log``)."""
    path = Path(path)
    if path.is_dir():
        path = path / f"{analysis.prefix}-stats.log"
    path.write_text(stats_text(analysis))
    return path
