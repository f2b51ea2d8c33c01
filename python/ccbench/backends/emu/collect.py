"""Collection: the engine's tables (packets, queues and the summary tables intervals,
delay_hist, flowstats — recorded in Rust through netmodel::records, as the simulator records
them), the agents' flows, conns and probes tables, and the engine's metadata."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ...results.schema import CC_PREFIX, SCHEMAS, empty, read_columns


def flow_dir(work: Path, flow: int) -> Path:
    """Where the agent of `flow` writes its flows table."""
    return work / f"flow{flow}"


def conns_dir(work: Path, flow: int) -> Path:
    """Where the arrivals agent of template `flow` writes its group's conns table."""
    return work / f"conns{flow}"


def probe_dir(work: Path, flow: int) -> Path:
    """Where the probe agent of `flow` writes its probes table."""
    return work / f"probes{flow}"


def probes_table(exp: dict, work: Path) -> pl.DataFrame | None:
    """The probe agents' tables as one `probes` table; None without probe flows."""
    flows = [f for f in exp["flows"] if f.get("probe")]
    if not flows:
        return None
    parts = [df for f in flows
             if (df := read_columns(probe_dir(work, f["id"]), "probes")) is not None and df.height]
    return pl.concat(parts).sort(["flow", "seq"]) if parts else empty("probes")


def flows_table(exp: dict, work: Path) -> pl.DataFrame:
    """The agents' TCP_INFO samples, one table: core columns, then the cc_* columns sorted."""
    parts = [df for f in exp["flows"]
             if (df := read_columns(flow_dir(work, f["id"]), "flows")) is not None and df.height]
    if not parts:
        return empty("flows")
    df = pl.concat(parts, how="diagonal")
    order = list(SCHEMAS["flows"]) + sorted(c for c in df.columns if c.startswith(CC_PREFIX))
    return df.select(order).sort(["time_ns", "flow"])


def conns_table(exp: dict, work: Path) -> pl.DataFrame | None:
    """The simulator's `conns` table from the arrivals agents' tables: one row per connection,
    numbered after the resolved flows in arrival order over all groups (as the simulator);
    None without arrivals."""
    groups = [f for f in exp["flows"] if f.get("arrivals")]
    if not groups:
        return None
    parts = [df for f in groups
             if (df := read_columns(conns_dir(work, f["id"]), "conns")) is not None and df.height]
    if not parts:
        return empty("conns")
    # `conn` is each arrival's index within its group until numbered here
    df = pl.concat(parts).sort(["start_ns", "flow", "conn"])
    return df.with_columns((pl.int_range(pl.len()) + len(exp["flows"])).cast(pl.UInt32).alias("conn"))


def collect(exp: dict, work: Path, agents: list[dict]):
    """Turn the engine's and the agents' tables into the results tables and metadata."""
    d = work / "engine"
    st = json.loads((d / "stats.json").read_text())
    tables = {"flows": flows_table(exp, work)}
    for name in ("queues", "intervals", "delay_hist", "flowstats"):
        tables[name] = read_columns(d, name)
    fs = tables["flowstats"]
    # Finite flows whose last ACK the engine did not see: the agent's own observation
    # (SIOCOUTQ = 0) of completion.
    seen = {a.get("flow"): a.get("completed_ns") for a in agents}
    fallback = {f["id"]: seen.get(f["id"]) for f in exp["flows"]
                if f.get("bytes") and st["flows"][f["id"]].get("completed_ns") is None
                and seen.get(f["id"]) is not None}
    if fallback:
        fs = fs.with_columns(pl.col("flow").replace_strict(fallback, default=None, return_dtype=pl.Int64)
                             .fill_null(pl.col("completed_ns")).alias("completed_ns"))
    conns = conns_table(exp, work)
    if conns is not None:
        tables["conns"] = conns
        # app_bytes of an arrivals group: bytes acknowledged over its connections, as the
        # simulator counts them (from the senders' TCP_INFO)
        acked = dict(conns.group_by("flow").agg(pl.col("acked_bytes").sum()).iter_rows())
        fs = fs.with_columns(pl.col("flow").replace_strict(acked, default=None, return_dtype=pl.UInt64)
                             .fill_null(pl.col("app_bytes")).alias("app_bytes"))
    tables["flowstats"] = fs
    probes = probes_table(exp, work)
    if probes is not None:
        tables["probes"] = probes
    if exp.get("record_packets", True):
        tables["packets"] = read_columns(d, "packets")
        tables["emu_release"] = read_columns(d, "emu_release")
    meta = {
        "engine": {k: v for k, v in st.items() if k not in ("flows", "release_error_ns")},
        "release_error_ns": st["release_error_ns"],
        "engine_cpu_frac": st["engine_cpu_frac"],
        "engine_busy_frac": st.get("engine_busy_frac"),
        "engine_flows": st["flows"],
        **({"capture": st["capture"]} if st.get("capture") else {}),
    }
    return tables, meta
