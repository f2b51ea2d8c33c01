"""Exact integer sums of a results directory per curve, the input of every metric.

A *curve map* assigns each flow to a curve of a grouping. ``gather_packets`` reads the
per-packet table, ``gather_aggregate`` the ``intervals``/``delay_hist``/``flowstats`` tables of a
run recorded without packets; both return the same four things:

* ``sent``: ci, bytes_sent, bytes_dropped (bytes of packets a queue, an AQM or a random-loss
  process on the path dropped; packets still in flight at the end are neither)
* ``tot``: ci, start_ns, end_ns (first/last arrival), delivered_bytes, delivered_pkts, delay_sum_ns
* ``slots``: ci, slot, bytes, packets, delay_sum_ns (by arrival time, slot = t // interval)
* ``quantiles(ci, n)``: (median, p95) one-way delay in ns of curve ``ci`` with ``n`` packets
  (nearest rank in packet mode, histogram bucket midpoint in aggregate mode)
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .estimators import hist_percentile_bucket, nearest_rank
from .groupings import Grouping

MODES = ("auto", "packets", "aggregate")


def resolve_mode(results, mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    if mode == "auto":
        return "packets" if results.has("packets") else "aggregate"
    if mode == "packets" and not results.has("packets"):
        raise ValueError(f"{results.path}: no per-packet table (record_packets was off); "
                         "use mode='aggregate'")
    if mode == "aggregate":
        for t in ("intervals", "delay_hist", "flowstats"):
            if getattr(results, t) is None:
                raise ValueError(f"{results.path}: aggregate mode needs the {t} table")
    return mode


def curve_map(grouping: Grouping) -> pl.DataFrame:
    flows, idx = [], []
    for i, c in enumerate(grouping.curves):
        flows.extend(c.flows)
        idx.extend([i] * len(c.flows))
    return pl.DataFrame({"flow": flows, "ci": idx}, schema={"flow": pl.Int64, "ci": pl.Int64})


def _with_ci(df: pl.LazyFrame, cmap: pl.DataFrame) -> pl.LazyFrame:
    return df.with_columns(pl.col("flow").cast(pl.Int64)).join(cmap.lazy(), on="flow", how="inner")


_I = pl.Int64


def gather_packets(results, cmap: pl.DataFrame, interval_ns: int):
    """Totals per curve and sums per (curve, slot) from the packets table, read a part at a
    time (a scan of the Parquet file on the streaming engine); the exact percentiles by a few
    more such passes (`select_ranks`), not by holding every packet's delay."""
    pk = _with_ci(results.scan("packets"), cmap).with_columns(pl.col("size").cast(_I))
    sent = pk.group_by("ci").agg(
        pl.col("size").sum().alias("bytes_sent"),
        pl.col("size").filter(pl.col("drop_ns").is_not_null()).sum().alias("bytes_dropped")
    ).collect(engine="streaming")
    arr = (pk.filter(pl.col("arrival_ns").is_not_null())
           .select("ci", pl.col("arrival_ns").cast(_I).alias("a"), "size",
                   (pl.col("arrival_ns").cast(_I) - pl.col("sent_ns").cast(_I)).alias("d")))
    tot = (arr.group_by("ci").agg(pl.col("a").min().alias("start_ns"), pl.col("a").max().alias("end_ns"),
                                  pl.col("size").sum().alias("delivered_bytes"),
                                  pl.len().cast(_I).alias("delivered_pkts"),
                                  pl.col("d").sum().alias("delay_sum_ns"),
                                  pl.col("d").min().alias("lo"), pl.col("d").max().alias("hi"))
           .collect(engine="streaming"))
    span = {int(c): (int(lo), int(hi)) for c, lo, hi in tot.select("ci", "lo", "hi").iter_rows()}
    tot = tot.drop("lo", "hi")
    slots = (arr.with_columns((pl.col("a") // interval_ns).alias("slot"))
             .group_by("ci", "slot")
             .agg(pl.col("size").sum().alias("bytes"), pl.len().cast(_I).alias("packets"),
                  pl.col("d").sum().alias("delay_sum_ns")).collect(engine="streaming"))
    found: dict = {}

    def quantiles(ci: int, n: int):
        r50, r95 = nearest_rank(50, n), nearest_rank(95, n)
        if not found:   # every curve's two ranks at once: a few passes over the table
            want = [(int(c), nearest_rank(q, int(m))) for c, m in
                    tot.select("ci", "delivered_pkts").iter_rows() if m for q in (50, 95)]
            found.update(select_ranks(arr.select("ci", "d"), want, span))
        return float(found[(ci, r50)]), float(found[(ci, r95)])

    return sent, tot, slots, quantiles


class PacketSums:
    """The per-flow sums of the packets table at one interval, read in **one** pass, from
    which `curves` gives any grouping's ``sent``/``tot``/``slots``/``quantiles`` exactly as
    `gather_packets` would (sums, minima and maxima of integers over a curve's flows), and the
    exact delay ranks of every curve asked for, each computed once however many groupings or
    summaries ask for it: `want` collects curves (flow sets), and the first rank asked for
    computes every wanted curve's median and p95 in one `select_ranks` run, the packets of a
    flow counted once per curve holding it. ``ccbench run`` analyses four groupings and the
    Pantheon summary of one run (analysis.cache.Computed): one pass instead of 18 before."""

    def __init__(self, results, interval_ns: int):
        self.interval_ns = interval_ns
        pk = results.scan("packets").select(
            pl.col("flow").cast(_I), pl.col("size").cast(_I), pl.col("drop_ns"),
            pl.col("arrival_ns").cast(_I).alias("a"),
            (pl.col("arrival_ns").cast(_I) - pl.col("sent_ns").cast(_I)).alias("d"))
        self._delays = pk.filter(pl.col("a").is_not_null()).select("flow", "d")
        # one row per (flow, slot of arrival); slot null: the flow's packets never delivered
        self.per_slot = (pk.group_by("flow", (pl.col("a") // interval_ns).alias("slot")).agg(
            pl.col("size").sum().alias("sent"),
            pl.col("size").filter(pl.col("drop_ns").is_not_null()).sum().alias("dropped"),
            pl.col("size").filter(pl.col("a").is_not_null()).sum().alias("bytes"),
            pl.col("a").count().cast(_I).alias("packets"),
            pl.col("d").sum().alias("delay_sum_ns"),
            pl.col("a").min().alias("start_ns"), pl.col("a").max().alias("end_ns"),
            pl.col("d").min().alias("lo"), pl.col("d").max().alias("hi"))
            .collect(engine="streaming"))
        self._ranks: dict = {}     # (flows, rank) -> value
        self._wanted: set = set()  # flow sets whose ranks are computed with the next ones

    def want(self, grouping) -> None:
        """Compute the ranks of `grouping`'s curves together with the next ones asked for."""
        self._wanted.update(c.flows for c in grouping.curves)

    def curves(self, cmap: pl.DataFrame, grouping):
        """``gather_packets``' four results for the curves of `grouping` (`cmap`: its
        `curve_map`)."""
        self.want(grouping)
        ps = self.per_slot.join(cmap, on="flow", how="inner")
        sent = ps.group_by("ci").agg(pl.col("sent").sum().alias("bytes_sent"),
                                     pl.col("dropped").sum().alias("bytes_dropped"))
        arr = ps.filter(pl.col("slot").is_not_null())
        tot = arr.group_by("ci").agg(pl.col("start_ns").min(), pl.col("end_ns").max(),
                                     pl.col("bytes").sum().alias("delivered_bytes"),
                                     pl.col("packets").sum().alias("delivered_pkts"),
                                     pl.col("delay_sum_ns").sum())
        slots = arr.group_by("ci", "slot").agg(pl.col("bytes").sum(), pl.col("packets").sum(),
                                               pl.col("delay_sum_ns").sum())
        flows = [c.flows for c in grouping.curves]

        def quantiles(ci: int, n: int):
            return self.ranks(flows[ci], n)

        return sent, tot, slots, quantiles

    def ranks(self, flows: tuple, n: int) -> tuple[float, float]:
        """(median, p95) one-way delay in ns of the `n` delivered packets of `flows`."""
        r50, r95 = nearest_rank(50, n), nearest_rank(95, n)
        if (flows, r95) not in self._ranks:
            self._wanted.add(flows)
            self._fetch()
        return float(self._ranks[(flows, r50)]), float(self._ranks[(flows, r95)])

    def _fetch(self) -> None:
        """Median and p95 of every wanted flow set at once (one `select_ranks` run)."""
        arr = self.per_slot.filter(pl.col("slot").is_not_null())
        by_flow = {f: (int(n), int(lo), int(hi)) for f, n, lo, hi in arr.group_by("flow").agg(
            pl.col("packets").sum(), pl.col("lo").min(), pl.col("hi").max()).iter_rows()}
        sets = sorted(s for s in self._wanted if any(f in by_flow for f in s))
        self._wanted.clear()
        key = {s: k for k, s in enumerate(sets)}
        want, span = [], {}
        for s, k in key.items():
            m = sum(by_flow[f][0] for f in s if f in by_flow)
            span[k] = (min(by_flow[f][1] for f in s if f in by_flow),
                       max(by_flow[f][2] for f in s if f in by_flow))
            want += [(k, nearest_rank(q, m)) for q in (50, 95)]
        flows = sorted({f for s in sets for f in s if f in by_flow})
        if sum(by_flow[f][0] for f in flows) <= IN_MEMORY_ROWS:
            found = ranks_in_memory(self._delays, flows, sets, want)
        else:
            members = pl.DataFrame({"flow": [f for s in sets for f in s],
                                    "ci": [key[s] for s in sets for _ in s]},
                                   schema={"flow": _I, "ci": _I})
            values = self._delays.join(members.lazy(), on="flow").select("ci", "d")
            found = select_ranks(values, want, span)
        for (k, r), v in found.items():
            self._ranks[(sets[k], r)] = v


#: Delivered packets up to which `PacketSums` reads the delays of the curves it ranks into
#: memory (16 B each, ≈ 100 MB at most with the copies) and selects the ranks there; above
#: it, `select_ranks`' bounded passes.
IN_MEMORY_ROWS = 1 << 21


def ranks_in_memory(delays: pl.LazyFrame, flows: list, sets: list, want: list) -> dict:
    """``select_ranks``' answer for `want` ((index into `sets`, rank)), from the delays of
    `flows` held in memory: each set's values concatenated and partitioned at its ranks
    (the same exact order statistics)."""
    d = delays.filter(pl.col("flow").is_in(flows)).collect(engine="streaming")
    part = {int(k[0]): g["d"].to_numpy() for k, g in d.partition_by("flow", as_dict=True).items()}
    ranks: dict = {}
    for k, r in want:
        ranks.setdefault(k, set()).add(r)
    out = {}
    for k, rs in ranks.items():
        v = np.concatenate([part[f] for f in sets[k] if f in part])
        rs = sorted(rs)
        v = np.partition(v, rs)
        out.update({(k, r): int(v[r]) for r in rs})
    return out


#: Sub-ranges a range of delays is cut into per pass of `select_ranks`: at most 1024, fewer
#: with many targets so that a pass counts at most `_GROUPS` groups (the streaming
#: group-by holds ~100 B per group: 2000 targets x 1024 held 2 GB with 50 M packets).
_FANOUT = 1024
_GROUPS = 1 << 17


def select_ranks(values: pl.LazyFrame, want: list[tuple[int, int]], span: dict | None = None) -> dict:
    """The value of 0-based rank r (in ascending order) of column ``d`` among the rows of
    curve ``ci``, for each ``(ci, r)`` in `want` — exactly what sorting each curve's values
    would give, in memory bounded by the number of targets, not of rows: each pass over
    `values` (a LazyFrame of ``ci``, ``d`` integers, on the streaming engine) counts the rows
    of each target's current range in up to `_FANOUT` sub-ranges and narrows the range to the
    one holding the rank, until it is a single value (range / 1024 per pass with few targets:
    ≤ 4 passes for delays up to 1000 s; range / 64 with 2000: ≤ 5 passes for 1 s). `span`: each curve's (min, max) if known, else one more pass."""
    if not want:
        return {}
    if span is None:
        span = (values.group_by("ci").agg(pl.col("d").min(), pl.col("d").max().alias("hi"))
                .collect(engine="streaming"))
        span = {int(c): (int(lo), int(hi)) for c, lo, hi in span.iter_rows()}
    # per target: [ci, rank, lo, width, rank within [lo, lo + width)]
    state = [[ci, r, span[ci][0], span[ci][1] - span[ci][0] + 1, r] for ci, r in set(want)]
    fanout = max(16, min(_FANOUT, _GROUPS // len(state)))
    while any(t[3] > 1 for t in state):
        live = [t for t in state if t[3] > 1]
        step = [-(-t[3] // fanout) for t in live]
        tg = pl.DataFrame({"ci": [t[0] for t in live], "_t": list(range(len(live))),
                           "_lo": [t[2] for t in live], "_w": [t[3] for t in live],
                           "_s": step},
                          schema={"ci": values.collect_schema()["ci"], "_t": pl.Int64,
                                  "_lo": pl.Int64, "_w": pl.Int64, "_s": pl.Int64})
        counts = (values.join(tg.lazy(), on="ci")
                  .filter((pl.col("d") >= pl.col("_lo")) & (pl.col("d") < pl.col("_lo") + pl.col("_w")))
                  .group_by("_t", ((pl.col("d") - pl.col("_lo")) // pl.col("_s")).alias("_b"))
                  .agg(pl.len().alias("_n"))
                  .collect(engine="streaming").sort("_t", "_b"))
        by_t: dict = {}
        for t, b, n in counts.iter_rows():
            by_t.setdefault(t, []).append((b, n))
        for k, t in enumerate(live):
            below = 0
            for b, n in by_t[k]:
                if t[4] < below + n:
                    t[2] += b * step[k]
                    t[3] = min(step[k], t[3] - b * step[k])
                    t[4] -= below
                    break
                below += n
            else:
                raise ValueError(f"curve {t[0]}: rank {t[1]} is past its {below} values")
    return {(t[0], t[1]): t[2] for t in state}


def gather_aggregate(results, cmap: pl.DataFrame, interval_ns: int):
    exp = results.experiment
    si = int(exp["sample_interval_ns"])
    if interval_ns % si != 0:
        raise ValueError(
            f"aggregate mode (no per-packet table): the analysis interval ({interval_ns / 1e9:g} s) "
            f"must be a multiple of the run's sample_interval ({si / 1e9:g} s)")
    m = interval_ns // si
    w = int(exp["hist_bucket_ns"])
    fs = _with_ci(results.flowstats.lazy(), cmap)
    sent = fs.group_by("ci").agg(pl.col("sent_bytes").cast(_I).sum().alias("bytes_sent"),
                                 pl.col("dropped_bytes").cast(_I).sum().alias("bytes_dropped")).collect()
    tot = (fs.filter(pl.col("delivered_pkts") > 0)
           .group_by("ci").agg(pl.col("first_arrival_ns").cast(_I).min().alias("start_ns"),
                               pl.col("last_arrival_ns").cast(_I).max().alias("end_ns"),
                               pl.col("delivered_bytes").cast(_I).sum(),
                               pl.col("delivered_pkts").cast(_I).sum(),
                               pl.col("delay_sum_ns").cast(_I).sum()).collect())
    slots = (_with_ci(results.intervals.lazy(), cmap)
             .filter(pl.col("delivered_pkts") > 0)
             .with_columns((pl.col("bin").cast(_I) // m).alias("slot"))
             .group_by("ci", "slot")
             .agg(pl.col("delivered_bytes").cast(_I).sum().alias("bytes"),
                  pl.col("delivered_pkts").cast(_I).sum().alias("packets"),
                  pl.col("delay_sum_ns").cast(_I).sum().alias("delay_sum_ns")).collect())
    hist = (_with_ci(results.delay_hist.lazy(), cmap)
            .group_by("ci", pl.col("bucket").cast(_I))
            .agg(pl.col("count").cast(_I).sum()).filter(pl.col("count") > 0)
            .sort("ci", "bucket").collect())

    def quantiles(ci: int, n: int):
        h = hist.filter(pl.col("ci") == ci)
        b, c = h["bucket"].to_numpy(), h["count"].to_numpy()
        if int(c.sum()) != n:
            raise ValueError(f"{results.path}: delay_hist holds {int(c.sum())} packets for curve "
                             f"{ci} but flowstats {n}; inconsistent results directory")
        return tuple((hist_percentile_bucket(b, c, q) + 0.5) * w for q in (50, 95))

    return sent, tot, slots, quantiles
