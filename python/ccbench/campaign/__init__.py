"""Campaigns: sweeps, repeats, resume and aggregation (docs/campaigns.md).

    import ccbench
    index = ccbench.sweep("examples/campaigns/bbr-vs-cubic-queue.yaml", "results/q")
    stats = ccbench.aggregate("results/q", by="scheme", level=0.9)

The pieces, each a function with plain data on both sides:

    load_campaign(path) -> Campaign            spec.py: the file's sweep, checked
    expand(campaign) -> Plan                   plan.py: points and runs, resolved (lazily when large)
    run_campaign(campaign, dir) -> CampaignResult   runner.py over executors.py and store.py
    load_index(dir) -> DataFrame               index.py: a row per run × flow
    aggregate(dir | index) -> DataFrame        aggregate.py: n, mean, median, std, CI
    plot(dir) -> [Path]                         ccbench.plots.campaign: the campaign figures
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from .aggregate import aggregate, stats_text, t_quantile
from .dataset import campaign_dataset
from .index import load_index
from .plan import Plan, PlanErrors, derive_seed, expand, run_key
from .runner import CampaignResult, run_campaign
from .spec import Campaign, is_campaign, load_campaign, parse_campaign
from .store import CampaignDirError, CampaignError


def is_campaign_file(path: str | Path) -> bool:
    """Is ``path`` a YAML file holding a campaign (a sweep, repeats or a base experiment)?"""
    path = Path(path)
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    from ..config.yamlsrc import read_yaml
    from ..config.errors import ConfigErrors
    try:
        return is_campaign(read_yaml(path).data)   # shape-guarded (alias bombs, depth)
    except ConfigErrors:
        return False


def is_campaign_dir(path: str | Path) -> bool:
    """Is ``path`` a campaign directory (written by ``ccbench sweep``)?"""
    return (Path(path) / "campaign.json").is_file()


def check(campaign_dir: str | Path, expect: str | Path | None = None, *,
          index: pl.DataFrame | None = None) -> list:
    """Verdicts of a campaign directory's expectations (docs/expectations.md, "Campaigns"):
    those recorded by its last sweep, or ``expect``'s (a campaign file, or a YAML file with an
    ``expect:`` list or a bare list). Each verdict has ``.passed`` and ``.line()``."""
    from .verdicts import check_dir
    return check_dir(campaign_dir, expect, index=index)


def report(campaign_dir: str | Path, *, level: float = 0.95, x: str | None = None,
           verdicts=None) -> Path:
    """Write the campaign's self-contained interactive page, DIR/report.html."""
    from ..report.campaign import write_campaign_report
    return write_campaign_report(campaign_dir, level=level, x=x, verdicts=verdicts)


def plot(campaign_dir: str | Path, out_dir: str | Path | None = None, *, x: str | None = None,
         by=("scheme",), metrics=None, level: float = 0.95, fmt: str = "png") -> list[Path]:
    """The campaign figures (``ccbench aggregate --plot``): each metric's mean ± CI against an
    axis, box plots across repeats, heat maps; default metrics: throughput, p95 delay, loss,
    Jain's index, utilisation. See ``ccbench.plots.campaign.plot_campaign``."""
    from ..plots.campaign import DEFAULT_METRICS, plot_campaign
    return plot_campaign(campaign_dir, out_dir, x=x, by=by, level=level, fmt=fmt,
                         metrics=metrics or DEFAULT_METRICS)


def plan(campaign: str | Path | Campaign, *, backend: str = "sim",
         packets: bool = False) -> Plan:
    """The expanded, validated plan of a campaign file (what ``--dry-run`` prints)."""
    if not isinstance(campaign, Campaign):
        campaign = load_campaign(campaign)
    return expand(campaign, backend=backend, packets=packets)


def sweep(campaign: str | Path | Campaign, out_dir: str | Path | None = None, *,
          jobs: int | None = None, dask: str | None = None, backend: str = "sim",
          packets: bool = False, plots: bool = False, allow_mixed_versions: bool = False,
          progress=False, keep: str = "tables") -> pl.DataFrame:
    """Run a campaign (skipping runs already finished in ``out_dir``) and return its index:
    a polars DataFrame with a row per run × flow. Failed runs are missing from it; they are
    listed in ``out_dir/failed/`` and a warning names how many failed.

    ``jobs``: local worker processes (default: every core; 1 = in this process).
    ``dask``: ``"local"`` (a LocalCluster of ``jobs`` workers), a scheduler address, or a
    dask cluster or ``Client`` object (e.g. a dask-jobqueue ``SLURMCluster``). ``packets``: keep
    per-packet records. ``plots``: plot each run. ``keep``: ``"tables"`` keeps each run's
    tables (to re-plot a run), ``"summary"`` only what the index and report need."""
    res = run_campaign(campaign, out_dir, jobs=jobs, dask=dask, backend=backend,
                       packets=packets, plots=plots, allow_mixed_versions=allow_mixed_versions,
                       progress=progress, keep=keep)
    if res.failures:
        import warnings
        warnings.warn(f"{len(res.failures)} of {res.plan.n_runs} runs failed; see "
                      f"{res.out_dir / 'failed'}", RuntimeWarning, stacklevel=2)
    return res.index


__all__ = ["campaign_dataset", "check", "is_campaign_dir", "report", "Campaign", "CampaignDirError", "CampaignError", "CampaignResult", "Plan", "PlanErrors", "aggregate",
           "derive_seed", "expand", "is_campaign", "is_campaign_file", "load_campaign",
           "load_index", "parse_campaign", "plan", "plot", "run_campaign", "run_key", "stats_text", "sweep", "t_quantile"]
