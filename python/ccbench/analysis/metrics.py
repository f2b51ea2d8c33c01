"""The metric engine of every run: per-curve throughput, one-way delay, loss and Jain's index,
as CoCo-Beholder's ``plot.py`` defines them, except that loss counts only dropped packets
(CoCo-Beholder's sent − delivered is kept as ``coco_loss_pct``; docs/metrics.md).

Two input modes, same definitions:

* ``packets``: from the per-packet table (rows with ``arrival_ns`` not null are the delivered
  copies; every row counts in bytes sent).
* ``aggregate``: from ``intervals`` (per sample_interval bins), ``delay_hist`` and ``flowstats``,
  for runs recorded without per-packet rows. Sums and means are identical to the packet mode;
  median/p95 are histogram bucket midpoints (within half a bucket of the packet-mode values).

All sums are exact integers (bytes, packets, nanoseconds); conversion to Mbit/s and ms happens
last and in the same way in both modes, so both modes give bit-identical rates and means.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import polars as pl

from .estimators import jain_index
from .gather import MODES, curve_map, gather_aggregate, gather_packets, resolve_mode
from .groupings import Curve, Grouping, make_grouping

MIN_DURATION_NS = 5_000_000  # 5 ms: "same value as in Wireshark" (CoCo-Beholder)

#: the one loss figure: ``summary.loss_pct`` (and the campaign index's ``loss_pct``), shown as
#: "loss %" in the run summary, the reports, comparisons and campaign pages, with this definition
#: on hover; every other loss-like figure is named for what it is (:data:`LABELS`).
LOSS_LABEL = "loss %"
LOSS_DEFINITION = ("loss % = bytes dropped on the path (by a queue, an AQM or a random-loss "
                   "process; every copy, retransmissions included) / bytes sent; data still in "
                   "flight when the run stops is not loss (docs/metrics.md)")
#: the one-line form under the run summary and comparison tables
LOSS_NOTE = ("loss % = bytes dropped on the path / bytes sent (data in flight at the end is "
             "not loss; docs/metrics.md)")
#: human names of the loss-like columns other than ``loss_pct`` (docs/metrics.md, "Loss")
LABELS = {
    "coco_loss_pct": "not delivered % (CoCo-Beholder's loss)",
    "bytes_lost": "not delivered B (CoCo-Beholder's loss)",
    "bytes_dropped": "dropped B",
    "bytes_in_flight_end": "in flight at end B",
    "retrans_pkts": "retransmitted packets",
    "pantheon_loss_pct": "not delivered % (Pantheon's loss)",
    "drops": "bottleneck drops",
}
#: the hover text of those columns
DEFINITIONS = {
    "loss_pct": LOSS_DEFINITION,
    "coco_loss_pct": "100 · (bytes sent − bytes delivered) / bytes sent: drops and data still in "
                     "flight at the end (CoCo-Beholder's and Pantheon's loss)",
    "pantheon_loss_pct": "100 · (1 − delivered bytes / sent bytes): drops and data still in "
                         "flight at the end (Pantheon's loss rate)",
    "retrans_pkts": "data segments the sender sent again (fast, RTO and loss-probe "
                    "retransmissions); not a loss figure",
}
STAT_MODES = ("whole-duration", "slot-mean")


@dataclass
class CurveStats:
    """Exact integer totals of one curve (internal, but handy for tests)."""

    curve: Curve
    start_ns: int | None  # first arrival over the curve's flows
    end_ns: int | None  # last arrival
    delivered_bytes: int
    delivered_pkts: int
    delay_sum_ns: int
    bytes_sent: int
    bytes_lost: int  # sent − delivered (CoCo-Beholder's and Pantheon's "lost": includes in flight)
    median_ns: float | None  # delay at the nearest rank (packet mode) or bucket midpoint
    p95_ns: float | None
    bytes_dropped: int = 0  # dropped by a queue, an AQM or random loss on the path


@dataclass
class Analysis:
    """Result of :func:`analyze`. All tables are polars DataFrames.

    * ``per_interval``: curve, slot, t_s, bytes, packets, rate_mbps, delay_ms (null: no packet)
      — one row per *active* slot of each curve.
    * ``jain``: slot, t_s, n_curves, jain — slots where the index is defined.
    * ``summary``: curve, flows, packets, avg_tput_mbps, avg_delay_ms, mean_delay_ms,
      median_delay_ms, p95_delay_ms, loss_pct, bytes_sent, bytes_dropped, bytes_in_flight_end,
      coco_loss_pct, bytes_lost, start_s, end_s (nulls for N/A). ``loss_pct`` is the share of
      the bytes sent that were dropped (queues, AQMs, random loss); ``bytes_in_flight_end`` were
      sent but neither delivered nor dropped by the end of the run (in flight, or a duplicate
      delivery makes it negative); ``coco_loss_pct``/``bytes_lost`` are CoCo-Beholder's "loss",
      sent − delivered, which counts both (docs/metrics.md). ``avg_delay_ms`` is the "Average one-way delay" of the first stats section: the
      per-packet mean (= ``mean_delay_ms``) except in stat_mode ``slot-mean`` (mean of D_c(k)).
    * ``overall_jain``: Jain's index over the curves' average throughputs (None = N/A).
    """

    grouping: Grouping
    interval: float
    interval_ns: int
    mode: str  # "packets" | "aggregate"
    stat_mode: str
    n_slots: int
    per_interval: pl.DataFrame
    jain: pl.DataFrame
    summary: pl.DataFrame
    overall_jain: float | None
    curve_stats: list[CurveStats]
    _results: object = field(repr=False, default=None)
    _flow_curve: dict = field(repr=False, default_factory=dict)

    @property
    def experiment(self) -> dict:
        """The resolved experiment of the analysed run."""
        return self._results.experiment

    @property
    def prefix(self) -> str:
        return self.grouping.name

    @property
    def curves(self) -> tuple[Curve, ...]:
        return self.grouping.curves

    def scatter(self, curve_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Points of the per-packet delay plot for one curve: (time s, delay ms).

        Packet mode: every delivered packet (arrival time, one-way delay), flows concatenated in
        flow order. Aggregate mode: the mean delay of each sample_interval bin that has
        deliveries, placed at the bin's centre.
        """
        res = self._results
        flows = list(self.curves[curve_index].flows)
        if self.mode == "packets":
            pk = (res.scan("packets")
                  .filter(pl.col("flow").cast(pl.Int64).is_in([int(f) for f in flows])
                          & pl.col("arrival_ns").is_not_null())
                  .select(pl.col("flow"), pl.col("arrival_ns").cast(pl.Int64),
                          (pl.col("arrival_ns") - pl.col("sent_ns")).cast(pl.Int64).alias("d"))
                  .collect(engine="streaming"))
            # flows concatenated in flow-id order (curves list their flows sorted by id),
            # table order within a flow
            pk = pk.sort("flow", maintain_order=True)
            return pk["arrival_ns"].to_numpy() / 1e9, pk["d"].to_numpy() / 1e6
        si = self._results.experiment["sample_interval_ns"]
        iv = (res.intervals.lazy()
              .filter(pl.col("flow").cast(pl.Int64).is_in([int(f) for f in flows]))
              .group_by("bin")
              .agg(pl.col("delivered_pkts").cast(pl.Int64).sum().alias("p"),
                   pl.col("delay_sum_ns").cast(pl.Int64).sum().alias("d"))
              .filter(pl.col("p") > 0).sort("bin").collect())
        x = (iv["bin"].to_numpy().astype(np.float64) + 0.5) * si / 1e9
        return x, iv["d"].to_numpy() / iv["p"].to_numpy() / 1e6


def interval_ns(interval: float) -> int:
    """An aggregation interval in seconds as whole nanoseconds (ValueError if not > 0)."""
    if not interval > 0:
        raise ValueError(f"interval must be > 0 s, got {interval}")
    ns = int(round(interval * 1e9))
    if ns <= 0:
        raise ValueError(f"interval {interval} s is below 1 ns")
    return ns


class _ByCurve:
    """The rows of a table with one row per curve (``ci``), looked up by curve: one pass over
    the table, not one filter per curve (a filter each made 10,000 flows quadratic)."""

    def __init__(self, df: pl.DataFrame):
        self.rows = {r["ci"]: r for r in df.to_dicts()}

    def get(self, ci: int, col: str, default=None):
        row = self.rows.get(ci)
        return default if row is None else row[col]


def analyze(results, grouping: str = "per-flow", interval: float = 0.5,
            subset_fields: Sequence[str] | None = None, *, mode: str = "auto",
            stat_mode: str = "whole-duration", sums=None) -> Analysis:
    """CoCo-Beholder's metrics of ``results`` for one grouping at aggregation interval ``interval`` s.

    ``mode``: ``auto`` (packets if recorded, else aggregate), ``packets`` or ``aggregate``.
    ``stat_mode``: ``whole-duration`` (CoCo-Beholder's statistics, default) or ``slot-mean``
    (means over slots of R_c(k), D_c(k), J(k), the statistics of Turkovic et al.'s "Fifty Shades
    of Congestion Control" that the CoCo-Beholder thesis reproduces; docs/metrics.md).
    ``sums``: the run's :class:`~ccbench.analysis.gather.PacketSums` at this interval, shared by
    the analyses of one run (packet mode; the same numbers, one pass over the table).
    """
    if stat_mode not in STAT_MODES:
        raise ValueError(f"unknown stat_mode {stat_mode!r}; valid: {', '.join(STAT_MODES)}")
    mode = resolve_mode(results, mode)
    exp = results.experiment
    g = make_grouping(exp["flows"], grouping, subset_fields)
    from ..budget import check_interval
    check_interval(interval, exp["duration_ns"], len(g.curves) + 1)
    I_ns = interval_ns(interval)
    cmap = curve_map(g)
    if sums is not None and mode == "packets" and sums.interval_ns == I_ns:
        sent, tot, slots, quantiles = sums.curves(cmap, g)
    else:
        gather = gather_packets if mode == "packets" else gather_aggregate
        sent, tot, slots, quantiles = gather(results, cmap, I_ns)
    stats = _curve_stats(g, _ByCurve(sent), _ByCurve(tot), quantiles)

    # Slots: K = ceil(max end / I), except that a last arrival exactly on a slot boundary opens
    # slot end/I (CoCo-Beholder would index past its array there): K = floor(max end / I) + 1.
    ends = [s.end_ns for s in stats if s.end_ns is not None]
    K = (max(ends) // I_ns + 1) if ends else 0

    per_interval, rates = _per_interval(stats, slots, I_ns, K)
    jain = _jain_per_slot(rates, I_ns / 1e9)
    summ = _summary_rows(stats, per_interval, stat_mode)
    summary = pl.DataFrame(summ, schema=_SUMMARY_SCHEMA)
    if stat_mode == "slot-mean":
        overall = float(jain["jain"].mean()) if jain.height else None
    else:
        overall = jain_index([r["avg_tput_mbps"] for r in summ if r["avg_tput_mbps"] is not None])

    return Analysis(grouping=g, interval=interval, interval_ns=I_ns, mode=mode,
                    stat_mode=stat_mode, n_slots=int(K), per_interval=per_interval, jain=jain,
                    summary=summary, overall_jain=overall, curve_stats=stats, _results=results)


def _curve_stats(g: Grouping, sent: _ByCurve, tot: _ByCurve, quantiles) -> list[CurveStats]:
    """Each curve's exact totals from the gathered per-curve sums (``quantiles(ci, n)``:
    its median and p95 delay)."""
    stats: list[CurveStats] = []
    for ci, c in enumerate(g.curves):
        bytes_sent = int(sent.get(ci, "bytes_sent", 0) or 0)
        bytes_dropped = int(sent.get(ci, "bytes_dropped", 0) or 0)
        start = tot.get(ci, "start_ns")
        n = int(tot.get(ci, "delivered_pkts", 0) or 0)
        if start is None or n == 0:
            st = CurveStats(c, None, None, 0, 0, 0, bytes_sent, bytes_sent, None, None,
                            bytes_dropped)
        else:
            dbytes = int(tot.get(ci, "delivered_bytes"))
            med, p95 = quantiles(ci, n)
            st = CurveStats(c, int(start), int(tot.get(ci, "end_ns")), dbytes, n,
                            int(tot.get(ci, "delay_sum_ns")), bytes_sent,
                            bytes_sent - dbytes, med, p95, bytes_dropped)
        stats.append(st)
    return stats


_PER_INTERVAL_SCHEMA = {"curve": pl.String, "slot": pl.Int64, "t_s": pl.Float64,
                       "bytes": pl.Int64, "packets": pl.Int64, "rate_mbps": pl.Float64,
                       "delay_ms": pl.Float64}


def _per_interval(stats: list[CurveStats], slots: pl.DataFrame, I_ns: int,
                  K: int) -> tuple[pl.DataFrame, np.ndarray]:
    """Per-interval rates and delays on each curve's active slots (from its first to its last
    arrival): the per_interval table, and the rates as a curves × K array (NaN: inactive)."""
    I_s = I_ns / 1e9
    rates = np.full((len(stats), K), np.nan)
    rows = []
    by_ci = {k[0]: v for k, v in slots.partition_by("ci", as_dict=True).items()} \
        if slots.height else {}
    for ci, st in enumerate(stats):
        if st.start_ns is None:
            continue
        k0, k1 = st.start_ns // I_ns, st.end_ns // I_ns
        ks = np.arange(k0, k1 + 1, dtype=np.int64)
        sl = by_ci.get(ci, slots.clear()).sort("slot")
        b = np.zeros(ks.shape[0], dtype=np.int64)
        p = np.zeros_like(b)
        d = np.zeros_like(b)
        idx = sl["slot"].to_numpy() - k0
        b[idx] = sl["bytes"].to_numpy()
        p[idx] = sl["packets"].to_numpy()
        d[idx] = sl["delay_sum_ns"].to_numpy()
        r = b * 8 / (I_s * 1e6)
        rates[ci, k0:k1 + 1] = r
        with np.errstate(invalid="ignore", divide="ignore"):
            dm = np.where(p > 0, d / np.maximum(p, 1) / 1e6, np.nan)
        rows.append(pl.DataFrame({
            "curve": [st.curve.label] * ks.shape[0], "slot": ks, "t_s": ks * I_s,
            "bytes": b, "packets": p, "rate_mbps": r,
            "delay_ms": pl.Series(dm, nan_to_null=True)}))
    per_interval = (pl.concat(rows) if rows else pl.DataFrame(schema=_PER_INTERVAL_SCHEMA))
    return per_interval.cast(_PER_INTERVAL_SCHEMA), rates


def _jain_per_slot(rates: np.ndarray, I_s: float) -> pl.DataFrame:
    """Per-interval Jain's index over the curves active in each slot (sequential sums, as
    CoCo)."""
    K = rates.shape[1]
    n_act = np.zeros(K, dtype=np.int64)
    s1 = np.zeros(K)
    s2 = np.zeros(K)
    for ci in range(rates.shape[0]):
        act = ~np.isnan(rates[ci])
        n_act += act
        s1 += np.where(act, rates[ci], 0.0)
        s2 += np.where(act, rates[ci] ** 2, 0.0)
    ok = (n_act > 0) & (s2 != 0.0)
    ks = np.nonzero(ok)[0].astype(np.int64)
    return pl.DataFrame({"slot": ks, "t_s": ks * I_s, "n_curves": n_act[ok],
                         "jain": s1[ok] ** 2 / (n_act[ok].astype(np.float64) * s2[ok])},
                        schema={"slot": pl.Int64, "t_s": pl.Float64, "n_curves": pl.Int64,
                                "jain": pl.Float64})


_SUMMARY_SCHEMA = {
    "curve": pl.String, "flows": pl.List(pl.Int64), "packets": pl.Int64,
    "avg_tput_mbps": pl.Float64, "avg_delay_ms": pl.Float64, "mean_delay_ms": pl.Float64,
    "median_delay_ms": pl.Float64, "p95_delay_ms": pl.Float64, "loss_pct": pl.Float64,
    "bytes_sent": pl.Int64, "bytes_dropped": pl.Int64, "bytes_in_flight_end": pl.Int64,
    "coco_loss_pct": pl.Float64, "bytes_lost": pl.Int64, "start_s": pl.Float64,
    "end_s": pl.Float64}


def _summary_rows(stats: list[CurveStats], per_interval: pl.DataFrame,
                  stat_mode: str) -> list[dict]:
    """The whole-duration statistics of each curve, one row each (_SUMMARY_SCHEMA)."""
    summ = []
    for st in stats:
        avg = None
        if st.start_ns is not None and st.end_ns - st.start_ns >= MIN_DURATION_NS:
            avg = (st.delivered_bytes * 8) / (((st.end_ns - st.start_ns) / 1e9) * 1e6)
        mean = (st.delay_sum_ns / st.delivered_pkts / 1e6) if st.delivered_pkts else None
        avg_delay = mean
        if stat_mode == "slot-mean" and st.start_ns is not None:
            pi = per_interval.filter(pl.col("curve") == st.curve.label)
            avg = float(pi["rate_mbps"].mean())
            avg_delay = pi["delay_ms"].drop_nulls().mean()
        loss = (st.bytes_dropped / st.bytes_sent * 100.0) if st.bytes_sent != 0 else None
        coco_loss = (st.bytes_lost / st.bytes_sent * 100.0) if st.bytes_sent != 0 else None
        summ.append({
            "curve": st.curve.label, "flows": list(st.curve.flows), "packets": st.delivered_pkts,
            "avg_tput_mbps": avg, "avg_delay_ms": avg_delay, "mean_delay_ms": mean,
            "median_delay_ms": None if st.median_ns is None else st.median_ns / 1e6,
            "p95_delay_ms": None if st.p95_ns is None else st.p95_ns / 1e6,
            "loss_pct": loss, "bytes_sent": st.bytes_sent, "bytes_dropped": st.bytes_dropped,
            "bytes_in_flight_end": st.bytes_lost - st.bytes_dropped,
            "coco_loss_pct": coco_loss, "bytes_lost": st.bytes_lost,
            "start_s": None if st.start_ns is None else st.start_ns / 1e9,
            "end_s": None if st.end_ns is None else st.end_ns / 1e9})
    return summ
