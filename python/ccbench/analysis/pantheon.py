"""Pantheon's summary metrics (its ``src/analysis/tunnel_graph.py``) and bottleneck-link utilisation.

Pantheon measured at its tunnel's egress; ccbench's equivalent is the arrival at the receiver
host. Per flow and over all flows: average throughput over first..last arrival, 95th-percentile
one-way delay ('nearest' estimator), loss rate by bytes. See docs/metrics.md.
"""
from __future__ import annotations

import polars as pl

from .gather import curve_map, gather_aggregate, gather_packets, resolve_mode
from .groupings import make_grouping

_I = pl.Int64


def _tput(bytes_: int, start, end) -> float:
    """Pantheon: Σ bits / (last − first), 0 if the span is empty (one arrival or none)."""
    if start is None or end is None or end <= start:
        return 0.0
    return bytes_ * 8 / ((end - start) / 1e9) / 1e6


def _link_rates(exp: dict) -> dict[int, int | None]:
    return {int(l["id"]): l.get("rate_bps") for l in exp["links"]}


def _bottleneck(exp: dict, flow: dict, rates: dict | None = None):
    """(link id, rate_bps) of the slowest rate-limited link on the flow's data path, or None
    (``rates``: :func:`_link_rates` of ``exp``, when the caller has it)."""
    rates = _link_rates(exp) if rates is None else rates
    best = None
    for lid in flow.get("path", []):
        r = rates.get(int(lid))
        if r is not None and (best is None or r < best[1]):
            best = (int(lid), int(r))
    return best


def pantheon_summary(results, *, mode: str = "auto", sums=None) -> pl.DataFrame:
    """One row per flow plus a total row ("all"), Pantheon's definitions.

    Columns: flow ("all" or the flow id as text), curve (label), avg_tput_mbps, p95_delay_ms,
    loss_pct, capacity_mbps, utilization_pct. Capacity is the rate of the slowest link on the
    flow's data path; for "all", the common bottleneck of every flow (null if the flows do not
    share one). Utilisation = 100 · average throughput / capacity (Pantheon's definition).
    ``sums``: the run's :class:`~ccbench.analysis.gather.PacketSums` (packet mode), shared with
    its other analyses.
    """
    mode = resolve_mode(results, mode)
    exp = results.experiment
    flows = sorted((f for f in exp["flows"] if not f.get("probe")), key=lambda f: f["id"])
    gather = gather_packets if mode == "packets" else gather_aggregate
    si = int(exp["sample_interval_ns"])
    rates = _link_rates(exp)
    neck = {f["id"]: _bottleneck(exp, f, rates) for f in flows}
    rows = []
    groupings = [make_grouping(flows, grouping) for grouping in ("per-flow", "total")]
    for g in groupings if sums is not None else ():
        sums.want(g)   # both groupings' ranks in one run
    for g in groupings:
        grouping = g.name
        if sums is not None and mode == "packets":
            sent, tot, _slots, quantiles = sums.curves(curve_map(g), g)
        else:
            sent, tot, _slots, quantiles = gather(results, curve_map(g), si)
        sent_d = {r["ci"]: r["bytes_sent"] for r in sent.to_dicts()}
        tot_d = {r["ci"]: r for r in tot.to_dicts()}
        for ci, c in enumerate(g.curves):
            t = tot_d.get(ci)
            n = 0 if t is None else int(t["delivered_pkts"])
            dbytes = 0 if t is None else int(t["delivered_bytes"])
            ingress = int(sent_d.get(ci, 0) or 0)
            p95 = quantiles(ci, n)[1] / 1e6 if n else None
            tput = _tput(dbytes, t and t["start_ns"], t and t["end_ns"])
            loss = (1 - dbytes / ingress) * 100 if ingress else None
            bns = [neck[i] for i in c.flows if i in neck]
            cap = bns[0][1] if bns and bns[0] is not None and all(b == bns[0] for b in bns) else None
            rows.append({
                "flow": "all" if grouping == "total" else str(c.flows[0]), "curve": c.label,
                "avg_tput_mbps": tput, "p95_delay_ms": p95, "loss_pct": loss,
                "capacity_mbps": None if cap is None else cap / 1e6,
                "utilization_pct": None if cap is None else 100 * tput / (cap / 1e6)})
    total = rows[-1]
    out = [total] + rows[:-1]
    return pl.DataFrame(out, schema={
        "flow": pl.String, "curve": pl.String, "avg_tput_mbps": pl.Float64,
        "p95_delay_ms": pl.Float64, "loss_pct": pl.Float64, "capacity_mbps": pl.Float64,
        "utilization_pct": pl.Float64})


def _fmt(v, spec: str) -> str:
    return "N/A" if v is None else spec % v


def pantheon_text(summary: pl.DataFrame) -> str:
    """Pantheon's ``<cc>_stats_runN.log`` text for a :func:`pantheon_summary` table."""
    rows = summary.to_dicts()
    total = next(r for r in rows if r["flow"] == "all")
    per = [r for r in rows if r["flow"] != "all"]
    out = [f"-- Total of {len(per)} flows:\n"]
    out.append("Average capacity: %s Mbit/s\n" % _fmt(total["capacity_mbps"], "%.2f"))
    out.append("Average throughput: %.2f Mbit/s (%s%% utilization)\n"
               % (total["avg_tput_mbps"], _fmt(total["utilization_pct"], "%.1f")))
    out.append("95th percentile per-packet one-way delay: %s ms\n" % _fmt(total["p95_delay_ms"], "%.3f"))
    out.append("Loss rate: %s%%\n" % _fmt(total["loss_pct"], "%.2f"))
    for i, r in enumerate(per, 1):
        out.append(f"-- Flow {i}:\n")
        out.append("Average throughput: %.2f Mbit/s\n" % r["avg_tput_mbps"])
        out.append("95th percentile per-packet one-way delay: %s ms\n" % _fmt(r["p95_delay_ms"], "%.3f"))
        out.append("Loss rate: %s%%\n" % _fmt(r["loss_pct"], "%.2f"))
    return "".join(out)


def link_utilization(results, links=None) -> pl.DataFrame:
    """Exact utilisation of links (default: the bottleneck/central links) from ``queues``.

    For link L, F_L = flows whose data path crosses L; the active period is
    [min first_sent_ns, max last_arrival_ns] over F_L (from flowstats). It is narrowed to the
    queue samples inside it, t_a = first sample ≥ start, t_b = last sample ≤ end (time 0 counts as
    a sample with tx_bytes = 0: the counter is cumulative from the start), and

        utilization = 8 · (tx_bytes(t_b) − tx_bytes(t_a)) / (rate_bps · (t_b − t_a)) · 100 %.

    tx_bytes counts everything the link serialised (data and, on shared links, ACKs). Null when
    the link is unlimited, no flow crosses it, or the period holds fewer than two samples.
    """
    exp = results.experiment
    if links is None:
        links = exp.get("bottleneck_links") or []
    by_id = {int(l["id"]): l for l in exp["links"]}
    fs = results.flowstats
    q = results.scan("queues")   # only the bottleneck links' rows are read
    rows = []
    for lid in links:
        lid = int(lid)
        link = by_id[lid]
        rate = link.get("rate_bps")
        users = [f["id"] for f in exp["flows"] if lid in [int(x) for x in f.get("path", [])]]
        row = {"link": lid, "name": link.get("name", str(lid)),
               "rate_mbps": None if rate is None else rate / 1e6, "flows": users,
               "t_start_s": None, "t_end_s": None, "tx_mbps": None, "utilization_pct": None}
        if users and fs is not None and q is not None:
            f = fs.filter(pl.col("flow").cast(_I).is_in([int(u) for u in users]))
            t0 = f["first_sent_ns"].min()
            t1 = f["last_arrival_ns"].max()
            s = (q.filter(pl.col("link").cast(_I) == lid)
                 .select(pl.col("time_ns").cast(_I), pl.col("tx_bytes").cast(_I))
                 .collect(engine="streaming").sort("time_ns"))
            times = [0] + s["time_ns"].to_list()
            tx = [0] + s["tx_bytes"].to_list()
            if t0 is not None and t1 is not None:
                inside = [i for i, t in enumerate(times) if t0 <= t <= t1]
                if len(inside) >= 2:
                    a, b = inside[0], inside[-1]
                    span = (times[b] - times[a]) / 1e9
                    mbps = 8 * (tx[b] - tx[a]) / span / 1e6
                    row.update(t_start_s=times[a] / 1e9, t_end_s=times[b] / 1e9, tx_mbps=mbps,
                               utilization_pct=None if rate is None else 100 * mbps / (rate / 1e6))
        rows.append(row)
    return pl.DataFrame(rows, schema={
        "link": pl.Int64, "name": pl.String, "rate_mbps": pl.Float64, "flows": pl.List(pl.Int64),
        "t_start_s": pl.Float64, "t_end_s": pl.Float64, "tx_mbps": pl.Float64,
        "utilization_pct": pl.Float64})
