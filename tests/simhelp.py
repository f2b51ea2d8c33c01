"""Helpers for tests that run the simulator: build experiments from small dicts."""
from __future__ import annotations

import ccbench
from ccbench import config


def experiment(flows, *, duration=10, rate="100Mbit", delay="10ms", queue=1000, side_rate="1Gbit",
               side_delay="1ms", seed=1, packets=True, central=None, **top):
    """A dumbbell experiment: `flows` is a list of group dicts (scheme, flows, direction, ...);
    side links default to `side_rate`/`side_delay` unless a group sets them. `central` adds
    keys to the central link (jitter, loss, trace, ...; `rate: None` drops the rate)."""
    groups = []
    for g in flows:
        g = dict(g)
        g.setdefault("left-rate", side_rate)
        g.setdefault("right-rate", side_rate)
        g.setdefault("left-delay", side_delay)
        g.setdefault("right-delay", side_delay)
        groups.append(g)
    c = {"rate": rate, "delay": delay, "queue": queue, **(central or {})}
    doc = {"duration": duration, "seed": seed, "packets": packets,
           "central": {k: v for k, v in c.items() if v is not None}, "flows": groups, **top}
    return config.resolve(doc)


def write_campaign(tmp_path, doc: dict, name: str = "camp.yaml"):
    """``doc`` written as a YAML file (a campaign or an experiment) under ``tmp_path``."""
    import yaml
    f = tmp_path / name
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    return f


def delivered_rate_bps(res, flows, t0_s, t1_s):
    """IP-level delivered rate (bit/s) of ``flows`` (an id or a list of ids) over [t0, t1),
    from the per-interval aggregates."""
    import polars as pl
    ids = [flows] if isinstance(flows, int) else list(flows)
    bin_s = res.experiment["sample_interval_ns"] / 1e9
    iv = res.intervals.filter(pl.col("flow").is_in(ids)
                              & (pl.col("bin") >= round(t0_s / bin_s))
                              & (pl.col("bin") < round(t1_s / bin_s)))
    return iv["delivered_bytes"].sum() * 8 / (t1_s - t0_s)


def run(tmp_path, exp, name="run", **kw):
    return ccbench.run(exp, tmp_path / name, **kw)


def capture_blind_bytes(res) -> dict:
    """Bytes per flow a capture cannot tell as dropped: packets the receiver never saw that
    were sent after the flow's last delivered one (the importer counts them in flight)."""
    import polars as pl
    pk = res.packets
    last = pk.filter(pl.col("arrival_ns").is_not_null()).group_by("flow").agg(
        pl.col("sent_ns").max().alias("last"))
    return dict(pk.join(last, on="flow").filter(
        (pl.col("drop_reason") != "none") & (pl.col("sent_ns") >= pl.col("last"))).group_by(
        "flow").agg(pl.col("size").cast(pl.Int64).sum()).iter_rows())


def assert_imported_summary(a, b, blind: dict, exact=("avg_tput_mbps", "mean_delay_ms",
                                                       "p95_delay_ms", "bytes_sent")) -> None:
    """The summary `b` of an imported capture is the run's `a`, except that the `blind` bytes
    (capture_blind_bytes) move from bytes_dropped to bytes_in_flight_end."""
    import polars as pl
    for col in exact:
        if a[col].dtype.is_numeric():
            assert (a[col] - b[col]).abs().max() < 1e-9, col
        else:
            assert a[col].equals(b[col]), col
    n = pl.Series([sum(blind.get(f, 0) for f in fl) for fl in a["flows"]])
    assert (b["bytes_dropped"] - (a["bytes_dropped"] - n)).abs().max() == 0, n
    assert (b["bytes_in_flight_end"] - (a["bytes_in_flight_end"] + n)).abs().max() == 0, n
    assert (b["loss_pct"] - (a["bytes_dropped"] - n) / a["bytes_sent"] * 100).abs().max() < 1e-9


def pcap_folder(d, duration: float = 1.0):
    """The capture folder of a short one-flow CUBIC run made through the CLI with --pcap."""
    import subprocess
    import sys
    (d / "e.yaml").write_text(f"duration: {duration}\nseed: 1\n"
                              "central: {rate: 10Mbit, delay: 5ms}\nflows: [{scheme: cubic}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(d / "e.yaml"), "-o",
                        str(d / "res"), "--pcap", "--no-plots", "--quiet"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return d / "res" / "pcap"
