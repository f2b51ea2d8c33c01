"""Synthetic results directories for tests (analysis, plots, and anyone else's).

Everything is derived from ONE per-packet table, so the aggregate tables (intervals, delay_hist,
flowstats) are exactly consistent with it — as the simulator's writers must be:

    exp = make_experiment([("cubic", "->"), ("bbr", "<-")])
    pk = random_packets(exp, seed=1)                # or packets_table([...]) by hand
    path = write_results(tmp_path / "run", exp, pk)  # record_packets=False: no packets.parquet
    res = ccbench.results.load(path)

Schema: docs/architecture.md, "Results directory".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import polars as pl

MSS = 1448
PKT = MSS + 52  # IP bytes of a full data packet

PACKETS_SCHEMA = {"flow": pl.UInt32, "seq": pl.UInt64, "size": pl.UInt32, "retrans": pl.Boolean,
                  "sent_ns": pl.Int64, "arrival_ns": pl.Int64, "drop_link": pl.Int32,
                  "drop_ns": pl.Int64}


def make_experiment(flows: Sequence[tuple[str, str]] = (("cubic", "->"), ("bbr", "<-")), *,
                    duration_ns: int = 2_000_000_000, sample_interval_ns: int = 10_000_000,
                    hist_bucket_ns: int = 10_000, rate_bps: int | None = 200_000_000,
                    record_packets: bool = True, starts_ns: Sequence[int] | None = None,
                    groups: Sequence[int] | None = None) -> dict:
    """A resolved dumbbell experiment. ``flows``: (scheme, direction) per flow.

    Links: 0 = r1->r2 and 1 = r2->r1 (central, ``rate_bps``), then per flow i a left pair
    (2+4i: a->r1, 3+4i: r1->a) and a right pair (4+4i: r2->b, 5+4i: b->r2) at 1 Gbit/s.
    """
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links = [
        {"id": 0, "name": "r1->r2", "src": "r1", "dst": "r2", "role": "central",
         "rate_bps": rate_bps, "delay_ns": 10_000_000, "queue": {"kind": "droptail", "packets": 100, "bytes": None}},
        {"id": 1, "name": "r2->r1", "src": "r2", "dst": "r1", "role": "central",
         "rate_bps": rate_bps, "delay_ns": 10_000_000, "queue": {"kind": "droptail", "packets": 100, "bytes": None}},
    ]
    out = []
    for i, (scheme, direction) in enumerate(flows):
        a, b = f"a{i + 1}", f"b{i + 1}"
        nodes += [{"name": a, "kind": "host"}, {"name": b, "kind": "host"}]
        base = 2 + 4 * i
        for k, (s, d, role) in enumerate([(a, "r1", "left"), ("r1", a, "left"),
                                          ("r2", b, "right"), (b, "r2", "right")]):
            links.append({"id": base + k, "name": f"{s}->{d}", "src": s, "dst": d, "role": role,
                          "rate_bps": 1_000_000_000, "delay_ns": 1_000_000,
                          "queue": {"kind": "droptail", "packets": 1000, "bytes": None}})
        fwd, rev = [base, 0, base + 2], [base + 3, 1, base + 1]
        if direction == "->":
            src, dst, path, rev_path = a, b, fwd, rev
        else:
            src, dst, path, rev_path = b, a, rev, fwd
        out.append({"id": i, "group": groups[i] if groups else i,
                    "label": f"Flow {i + 1}: {scheme} {direction}", "scheme": scheme,
                    "params": {}, "direction": direction, "src": src, "dst": dst,
                    "start_ns": starts_ns[i] if starts_ns else 0, "stop_ns": None, "bytes": None,
                    "path": path, "rev_path": rev_path, "base_rtt_ns": 24_000_000})
    return {"schema": 1, "duration_ns": duration_ns, "seed": 1, "mss": MSS,
            "sample_interval_ns": sample_interval_ns, "record_packets": record_packets,
            "hist_bucket_ns": hist_bucket_ns,
            "tcp": {"rwnd_bytes": 33554432, "init_cwnd": 10, "delayed_ack": True, "sack": True,
                    "min_rto_ns": 200000000, "initial_rto_ns": 1000000000},
            "nodes": nodes, "links": links, "bottleneck_links": [0, 1], "flows": out}


def packets_table(rows: Iterable[tuple]) -> pl.DataFrame:
    """Packets from tuples ``(flow, size, sent_ns, arrival_ns | None)`` (drops: arrival None and
    a fifth element drop_ns). seq is assigned per flow, retrans False."""
    rows = list(rows)
    seqs: dict[int, int] = {}
    cols = {k: [] for k in PACKETS_SCHEMA}
    for r in rows:
        flow, size, sent, arr = r[:4]
        drop_ns = r[4] if len(r) > 4 else None
        cols["flow"].append(flow)
        cols["seq"].append(seqs.get(flow, 0))
        seqs[flow] = seqs.get(flow, 0) + size
        cols["size"].append(size)
        cols["retrans"].append(False)
        cols["sent_ns"].append(sent)
        cols["arrival_ns"].append(arr)
        cols["drop_link"].append(0 if drop_ns is not None else None)
        cols["drop_ns"].append(drop_ns)
    return pl.DataFrame(cols, schema=PACKETS_SCHEMA)


def random_packets(exp: dict, seed: int = 1, *, mean_gap_ns: int = 200_000,
                   loss: float = 0.02, inflight_tail_ns: int = 30_000_000) -> pl.DataFrame:
    """Random but plausible transmissions for every flow of ``exp`` until its duration.

    Per flow: exponential send gaps, full-size packets with some small ones, one-way delay =
    base + random queueing, independent losses (dropped at link 0 or 1), retransmission flags,
    and the packets sent in the last ``inflight_tail_ns`` still in flight (no arrival, no drop).
    """
    rng = np.random.default_rng(seed)
    dur = int(exp["duration_ns"])
    frames = []
    for f in exp["flows"]:
        start = int(f["start_ns"])
        n = max(1, int((dur - start) / mean_gap_ns))
        sent = start + np.cumsum(rng.exponential(mean_gap_ns, n)).astype(np.int64)
        sent = sent[sent < dur]
        n = sent.shape[0]
        size = np.where(rng.random(n) < 0.9, PKT, rng.integers(53, PKT, n)).astype(np.int64)
        delay = (12_000_000 + rng.gamma(2.0, 3_000_000, n)).astype(np.int64)
        arrival = sent + delay
        lost = rng.random(n) < loss
        gone = (arrival >= dur) | (sent >= dur - inflight_tail_ns)
        central = f["path"][1]
        drop_ns = np.where(lost & ~gone, sent + delay // 2, -1)
        arr = np.where(lost | gone, -1, arrival)
        frames.append(pl.DataFrame({
            "flow": np.full(n, f["id"]), "seq": np.cumsum(size) - size, "size": size,
            "retrans": rng.random(n) < 0.03, "sent_ns": sent,
            "arrival_ns": pl.Series(arr).replace(-1, None),
            "drop_link": pl.Series(np.where(drop_ns >= 0, central, -1)).replace(-1, None),
            "drop_ns": pl.Series(drop_ns).replace(-1, None)}))
    return pl.concat(frames).cast(PACKETS_SCHEMA)


def derive_tables(exp: dict, pk: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """intervals, delay_hist, flowstats, flows, queues consistent with the packets ``pk``."""
    si = int(exp["sample_interval_ns"])
    w = int(exp["hist_bucket_ns"])
    dur = int(exp["duration_ns"])
    p = pk.with_columns(pl.col("size").cast(pl.Int64), pl.col("flow").cast(pl.Int64),
                        (pl.col("arrival_ns") - pl.col("sent_ns")).alias("d"))
    sent = p.group_by("flow", (pl.col("sent_ns") // si).alias("bin")).agg(
        pl.col("size").sum().alias("sent_bytes"), pl.len().cast(pl.Int64).alias("sent_pkts"))
    dlv = p.filter(pl.col("arrival_ns").is_not_null()).group_by(
        "flow", (pl.col("arrival_ns") // si).alias("bin")).agg(
        pl.col("size").sum().alias("delivered_bytes"), pl.len().cast(pl.Int64).alias("delivered_pkts"),
        pl.col("d").sum().alias("delay_sum_ns"))
    drp = p.filter(pl.col("drop_ns").is_not_null()).group_by(
        "flow", (pl.col("drop_ns") // si).alias("bin")).agg(
        pl.col("size").sum().alias("dropped_bytes"), pl.len().cast(pl.Int64).alias("dropped_pkts"))
    iv = (sent.join(dlv, on=["flow", "bin"], how="full", coalesce=True)
          .join(drp, on=["flow", "bin"], how="full", coalesce=True).fill_null(0)
          .select("bin", "flow", "sent_bytes", "sent_pkts", "delivered_bytes", "delivered_pkts",
                  "delay_sum_ns", "dropped_bytes", "dropped_pkts").sort("bin", "flow")
          .cast({"bin": pl.Int64, "flow": pl.UInt32, **{c: pl.UInt64 for c in (
              "sent_bytes", "sent_pkts", "delivered_bytes", "delivered_pkts", "delay_sum_ns",
              "dropped_bytes", "dropped_pkts")}}))
    hist = (p.filter(pl.col("arrival_ns").is_not_null())
            .group_by("flow", (pl.col("d") // w).alias("bucket")).agg(pl.len().alias("count"))
            .sort("flow", "bucket").cast({"flow": pl.UInt32, "bucket": pl.UInt32, "count": pl.UInt64}))
    rows = []
    for f in exp["flows"]:
        q = p.filter(pl.col("flow") == f["id"])
        a = q.filter(pl.col("arrival_ns").is_not_null())
        dr = q.filter(pl.col("drop_ns").is_not_null())
        rows.append({
            "flow": f["id"], "sent_bytes": int(q["size"].sum()), "sent_pkts": q.height,
            "delivered_bytes": int(a["size"].sum()), "delivered_pkts": a.height,
            "dropped_bytes": int(dr["size"].sum()), "dropped_pkts": dr.height,
            "retrans_pkts": int(q["retrans"].sum()),
            "first_sent_ns": q["sent_ns"].min(), "last_sent_ns": q["sent_ns"].max(),
            "first_arrival_ns": a["arrival_ns"].min(), "last_arrival_ns": a["arrival_ns"].max(),
            "delay_sum_ns": int(a["d"].sum()), "app_bytes": int(a["size"].sum()) - 52 * a.height,
            "start_ns": int(f["start_ns"]), "completed_ns": None})
    u64 = pl.UInt64
    fs = pl.DataFrame(rows, schema={
        "flow": pl.UInt32, "sent_bytes": u64, "sent_pkts": u64, "delivered_bytes": u64,
        "delivered_pkts": u64, "dropped_bytes": u64, "dropped_pkts": u64, "retrans_pkts": u64,
        "first_sent_ns": pl.Int64, "last_sent_ns": pl.Int64, "first_arrival_ns": pl.Int64,
        "last_arrival_ns": pl.Int64, "delay_sum_ns": u64, "app_bytes": u64, "start_ns": pl.Int64,
        "completed_ns": pl.Int64})
    times = np.arange(si, dur + 1, si, dtype=np.int64)
    fl = []
    for f in exp["flows"]:
        k = np.arange(times.shape[0])
        fl.append(pl.DataFrame({
            "time_ns": times, "flow": np.full(k.shape[0], f["id"]),
            "cwnd": 10 + (k * (f["id"] + 1)) % 50, "ssthresh": pl.Series([None] * k.shape[0], dtype=pl.UInt32),
            "srtt_us": 24000.0 + 100.0 * (k % 30), "rttvar_us": np.full(k.shape[0], 500.0),
            "min_rtt_us": np.full(k.shape[0], 24000.0), "inflight": 10 + k % 40,
            "delivered": k * 10, "bytes_acked": k * 10 * MSS, "retrans": k // 10, "lost": k // 10,
            "ca_state": ["open"] * k.shape[0], "pacing_rate_bps": np.full(k.shape[0], 1e8),
            "delivery_rate_bps": np.full(k.shape[0], 5e7)}))
    flows = pl.concat(fl).cast({"flow": pl.UInt32, "cwnd": pl.UInt32, "inflight": pl.UInt32,
                                "delivered": u64, "bytes_acked": u64, "retrans": u64, "lost": u64})
    # Queues: the central links; tx_bytes(t) = bytes of delivered packets crossing the link whose
    # arrival is <= t (a deterministic stand-in for the serialiser's counter).
    ql = []
    for lid in exp["bottleneck_links"]:
        users = [f["id"] for f in exp["flows"] if lid in f["path"]]
        arr = p.filter(pl.col("flow").is_in(users) & pl.col("arrival_ns").is_not_null()).sort("arrival_ns")
        at = arr["arrival_ns"].to_numpy()
        cum = np.concatenate([[0], np.cumsum(arr["size"].to_numpy())])
        tx = cum[np.searchsorted(at, times, side="right")]
        k = np.arange(times.shape[0])
        ql.append(pl.DataFrame({
            "time_ns": times, "link": np.full(k.shape[0], lid), "packets": (k * 7) % 60,
            "bytes": ((k * 7) % 60) * PKT, "drops": k // 20, "dropped_bytes": (k // 20) * PKT,
            "tx_bytes": tx}))
    queues = pl.concat(ql).cast({"link": pl.UInt32, "packets": pl.UInt32, "bytes": u64,
                                 "drops": u64, "dropped_bytes": u64, "tx_bytes": u64})
    return {"intervals": iv, "delay_hist": hist, "flowstats": fs, "flows": flows, "queues": queues}


def write_results(path: str | Path, exp: dict, pk: pl.DataFrame, *,
                  record_packets: bool | None = None) -> Path:
    """Write a complete results directory derived from ``pk``; returns its path.

    ``record_packets`` (default: the experiment's flag) decides whether packets.parquet is kept.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if record_packets is None:
        record_packets = bool(exp.get("record_packets", True))
    exp = dict(exp, record_packets=record_packets)
    pk = pk.cast(PACKETS_SCHEMA)
    tables = derive_tables(exp, pk)
    if record_packets:
        tables["packets"] = pk
    for name, df in tables.items():
        df.write_parquet(path / f"{name}.parquet")
    meta = {"ccbench_version": "test", "backend": "sim", "created": "1970-01-01T00:00:00Z",
            "experiment": exp, "seed": exp.get("seed", 1), "wall_time_s": 0.0,
            "sim": {"events": 0, "packets": pk.height},
            "tables": {n: {"rows": df.height} for n, df in tables.items()}}
    (path / "metadata.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
    from ccbench.results import marker
    marker.write(path, marker.initial(tables))   # a complete folder, as the writer leaves it
    return path


def make_results(path: str | Path, flows=(("cubic", "->"), ("bbr", "<-"), ("cubic", "<-")), *,
                 seed: int = 1, record_packets: bool = True, **exp_kw):
    """Shortcut: experiment + random packets + written dir, loaded as ``Results``."""
    from ccbench.results import load

    exp = make_experiment(flows, **exp_kw)
    return load(write_results(path, exp, random_packets(exp, seed), record_packets=record_packets))
