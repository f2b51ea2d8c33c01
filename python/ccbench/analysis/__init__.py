"""Metrics of a results directory: CoCo-Beholder's per-curve metrics and statistics file,
Pantheon's summary, link utilisation and queue time series. Definitions: docs/metrics.md.
"""
from .metrics import MODES, STAT_MODES, Analysis, CurveStats, analyze
from .estimators import hist_percentile_bucket, jain_index, nearest_rank, percentile_nearest
from .groupings import GROUPINGS, Curve, Grouping, make_grouping
from .pantheon import link_utilization, pantheon_summary, pantheon_text
from .queues import queue_timeseries
from .stats import stats_text, write_stats

__all__ = [
    "Analysis", "Curve", "CurveStats", "GROUPINGS", "Grouping", "MODES", "STAT_MODES", "analyze",
    "hist_percentile_bucket", "jain_index", "link_utilization", "make_grouping", "nearest_rank",
    "pantheon_summary", "pantheon_text", "percentile_nearest", "queue_timeseries", "stats_text",
    "write_stats",
]
