"""Workloads end to end: short-flow arrivals against M/G/1-PS, on/off sources, app-limited
streams, UDP CBR, per-group receive windows, and their config errors."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ccbench import config
from ccbench.analysis.workloads import fct_summary, fct_table, goodput_table
from ccbench.config import ConfigError
from ccbench.config.errors import format_path
from simhelp import experiment, run

MSS = 1448


def test_short_flow_fcts_match_mg1_ps_at_low_load(tmp_path):
    """Poisson arrivals of exponential sizes (mean 50 KB) at ρ = 0.2 of a 10 Mbit/s link,
    base RTT 10 ms (BDP 12.5 KB < IW), 300 s: ~1450 flows. M/G/1 processor sharing gives
    E[T | x] = x / (C(1−ρ)) for the transmission; TCP adds the handshake and the last data
    round trip (2·RTT, subtracted) and slow-start rounds, a fixed cost per flow that matters
    for small flows only. We compare, for the large flows (≥ 100 KB on the wire, ≥ 8 BDP; ~225
    of them), mean(FCT − 2·RTT) with mean(x_wire)/(C(1−ρ)): PS within 10 % (measured +8 %;
    the same ratio alone on the link, ρ = 0.01, is 1.19: TCP's own start-up, which sharing
    hides). Over all flows the slow-start rounds of the small flows add more: within +30 %
    (measured +25 %)."""
    C, rho, mean = 10e6, 0.2, 50_000
    wire_mean = mean * (1 + 52 / MSS)
    lam = rho * C / (8 * wire_mean)
    exp = experiment([{"scheme": "cubic", "arrivals": {"rate": lam, "size": {"exponential": "50KB"}}}],
                     duration=300, rate="10Mbit", delay="3ms", queue=100, packets=False)
    res = run(tmp_path, exp)
    t = fct_table(res)
    assert t.height > 1300 and t["fct_ns"].null_count() <= 2
    t = t.drop_nulls("fct_ns")
    rtt = exp["flows"][0]["base_rtt_ns"]
    assert rtt == 10_000_000
    x = t["size_bytes"].to_numpy()
    wire = x + np.ceil(x / MSS) * 52
    fct = t["fct_ns"].to_numpy()
    ps = wire * 8e9 / (C * (1 - rho))
    big = wire >= 100_000
    assert big.sum() > 150
    ratio_big = (fct - 2 * rtt)[big].mean() / ps[big].mean()
    assert 0.9 < ratio_big < 1.1, ratio_big
    ratio_all = (fct - 2 * rtt).mean() / ps.mean()
    assert 1.0 < ratio_all < 1.3, ratio_all
    # Offered load as configured: the measured size mean and arrival rate.
    assert abs(x.mean() / mean - 1) < 0.08
    s = fct_summary(res)
    assert s.height == 1 and s["completed"][0] == t.height
    assert s["slowdown_mean"][0] > 1


def test_arrivals_with_pareto_and_cdf_sizes(tmp_path):
    cdf = tmp_path / "sizes.cdf"
    cdf.write_text("# bytes cumulative-probability\n1000 0\n1000 0.5\n3000 1\n")
    exp = config.resolve({
        "duration": 5, "central": {"rate": "20Mbit", "delay": "5ms"},
        "flows": [{"scheme": "reno", "arrivals": {"rate": "50/s", "size": {"cdf": str(cdf)}}},
                  {"scheme": "cubic", "arrivals": {"rate": 10, "size": {"pareto": {"mean": "30KB", "shape": 1.5}}}}]})
    assert exp["flows"][0]["arrivals"]["size"] == {"kind": "cdf", "points": [[1000.0, 0.0], [1000.0, 0.5], [3000.0, 1.0]]}
    res = run(tmp_path, exp)
    t = fct_table(res)
    g0 = t.filter(pl.col("group") == 0)["size_bytes"]
    assert 200 < g0.len() < 300 and g0.min() >= 1000 and g0.max() <= 3000
    g1 = t.filter(pl.col("group") == 1)["size_bytes"]
    assert g1.min() >= 10_000   # Pareto minimum x_m = mean·(α−1)/α
    # every short flow's packets are recorded under its group's template flow
    fs = res.flowstats.sort("flow")
    assert fs["app_bytes"][0] == res.conns.filter(pl.col("flow") == 0)["acked_bytes"].sum()


def test_onoff_source_sends_at_capacity_when_on_and_nothing_when_off(tmp_path):
    """on 1 s / off 2 s, 20 Mbit/s, 10 s: over the on periods the flow delivers ≥ 85 % of the
    capacity (each on period restarts from IW after idle: a few RTTs of slow start, measured
    ≈ 93 %); from 300 ms into an off period nothing is delivered."""
    exp = experiment([{"scheme": "cubic", "onoff": {"on": "1s", "off": "2s"}}],
                     duration=10, rate="20Mbit", delay="5ms", queue="1bdp", packets=False)
    assert exp["flows"][0]["onoff"] == {"on_ns": 10**9, "off_ns": 2 * 10**9}
    res = run(tmp_path, exp)
    iv = res.intervals.with_columns(t_ms=(pl.col("bin") * 10) % 3000)
    on = iv.filter(pl.col("t_ms") < 1000)["delivered_bytes"].sum()
    on_rate = on * 8 / 4.0    # 4 on periods: [0,1) [3,4) [6,7) [9,10)
    assert on_rate > 0.85 * 20e6, on_rate
    late_off = iv.filter(pl.col("t_ms") >= 1300)["delivered_bytes"].sum()
    assert late_off == 0


def test_app_limited_flow_goodput_equals_its_rate(tmp_path):
    exp = experiment([{"scheme": "cubic", "app-rate": "5Mbit"}, {"scheme": "udp", "rate": "10Mbit", "start": 5}],
                     duration=20, rate="100Mbit", delay="10ms", packets=False)
    res = run(tmp_path, exp)
    g = goodput_table(res)
    r = g.filter(pl.col("flow") == 0)
    # Writes of the last RTT are still in flight at the end: ≥ 99.5 %.
    assert 0.995 < r["goodput_ratio"][0] <= 1.0, r
    u = g.filter(pl.col("flow") == 1)
    assert abs(u["active_s"][0] - 15) < 1e-9


@pytest.mark.parametrize("rate,capacity", [(10e6, 20e6), (30e6, 20e6)])
def test_udp_cbr_delivers_below_capacity_and_loses_the_excess_above(tmp_path, rate, capacity):
    """The CBR rate counts IP bytes (1500-byte datagrams). Below capacity: no loss, delivered
    = sent. Above: the bottleneck delivers its capacity and drops the rest, so the loss
    fraction → (rate − C)/rate = 1/3 (less the 1-BDP queue filled first: measured 0.330)."""
    exp = experiment([{"scheme": "udp", "rate": f"{rate / 1e6:g}Mbit"}], duration=10,
                     rate=f"{capacity / 1e6:g}Mbit", delay="5ms", queue="1bdp", packets=False)
    res = run(tmp_path, exp)
    fs = res.flowstats.row(0, named=True)
    assert abs(fs["sent_bytes"] * 8 / 10 / rate - 1) < 1e-3
    if rate < capacity:
        assert fs["dropped_pkts"] == 0
        assert abs(fs["delivered_bytes"] * 8 / 10 / rate - 1) < 0.002
    else:
        loss = fs["dropped_bytes"] / fs["sent_bytes"]
        assert abs(loss - (rate - capacity) / rate) < 0.01, loss
        assert abs(fs["delivered_bytes"] * 8 / 10 / capacity - 1) < 0.01
    # no flow samples for a non-TCP source; its packets are in the tables like any flow
    assert res.flows is None or res.flows.filter(pl.col("flow") == 0).height == 0


def test_per_group_rwnd_caps_throughput_at_rwnd_over_rtt(tmp_path):
    """Android-style receive-buffer limit: rwnd 64 KB on a 100 Mbit/s path with a 104 ms RTT
    (BDP 1.3 MB) caps the flow at 44 full segments per RTT = 63 712 B / 104 ms ≈ 4.9 Mbit/s
    (the window never fills the queue, so the RTT stays at its base). The same flow without
    the group's rwnd fills the link."""
    groups = [{"scheme": "cubic", "rwnd": "64KB"}]
    exp = experiment(groups, duration=20, rate="100Mbit", delay="50ms", packets=False)
    assert exp["flows"][0]["tcp"]["rwnd_bytes"] == 64_000
    g = goodput_table(run(tmp_path, exp))
    rtt = exp["flows"][0]["base_rtt_ns"] / 1e9
    cap = (64_000 // MSS) * MSS * 8 / rtt
    # slow start to the cap takes ~6 RTTs (0.6 s of 20 s)
    assert 0.95 * cap < g["goodput_bps"][0] <= cap, (g["goodput_bps"][0], cap)
    free = experiment([{"scheme": "cubic"}], duration=20, rate="100Mbit", delay="50ms",
                      packets=False)
    assert free["flows"][0]["tcp"] is None
    g2 = goodput_table(run(tmp_path, free, name="free"))
    assert g2["goodput_bps"][0] > 10 * g["goodput_bps"][0]


def test_small_send_buffer_caps_paced_throughput_near_its_payload_over_rtt(tmp_path):
    """Linux's send buffer: tcp_wmem max 256 KiB on a 100 Mbit/s path with a 104 ms RTT (BDP
    1.3 MB). A paced sender's socket holds at most 256 KiB of skb truesize written and not
    ACKed (plus the 64 KB skb it may start just below the limit), and each skb of 2 segments
    (tcp_tso_autosize at this pacing rate) costs an 832-byte head: the payload share is
    2896/3728. The application is woken once a third of the buffer is free, so the unACKed
    payload stays between 2/3 of the buffer's payload share and buffer + one skb; throughput is
    that over the RTT (no queue forms). An unpaced sender's writes go past the buffer by what
    its window lets out at once (tcp_sendmsg_locked fills the write queue's tail without the
    memory check while tcp_push_one sends it), so CUBIC gets more, still short of the link.
    Without the limit the same flow fills the link (test above)."""
    w = 256 << 10
    exp = experiment([{"scheme": "bbr", "tcp": {"wmem": [4096, 16384, w]}}], duration=20,
                     rate="100Mbit", delay="50ms", packets=False)
    g = goodput_table(run(tmp_path, exp, name="bbr"))
    rtt = exp["flows"][0]["base_rtt_ns"] / 1e9
    lo = 2 * w / 3 * 2896 / 3728 * 8 / rtt
    hi = (w + 45 * MSS) * 8 / rtt
    assert lo < g["goodput_bps"][0] < hi, (lo, g["goodput_bps"][0], hi)
    exp = experiment([{"scheme": "cubic", "tcp": {"wmem": [4096, 16384, w]}}], duration=20,
                     rate="100Mbit", delay="50ms", packets=False)
    g = goodput_table(run(tmp_path, exp))
    assert 1.5 * hi < g["goodput_bps"][0] < 0.8 * 100e6, (hi, g["goodput_bps"][0])


@pytest.mark.parametrize("group,path,msg", [
    ({"scheme": "udp"}, ("flows", 0, "rate"), "needs its rate"),
    ({"scheme": "udp", "rate": "1Mbit", "bytes": "1MB"}, ("flows", 0, "bytes"), "no byte count"),
    ({"scheme": "cubic", "onoff": {"on": "1s"}}, ("flows", 0, "onoff", "off"), "missing required key"),
    ({"scheme": "cubic", "arrivals": {"rate": "5/fortnight", "size": 1000}}, ("flows", 0, "arrivals", "rate"), "unknown time unit"),
    ({"scheme": "cubic", "arrivals": {"rate": 5, "size": {"pareto": {"mean": "10KB", "shape": 1}}}},
     ("flows", 0, "arrivals", "size", "pareto", "shape"), "must be a number > 1"),
    ({"scheme": "cubic", "arrivals": {"rate": 5, "size": 1000}, "bytes": 5000}, ("flows", 0, "bytes"), "does not apply"),
    ({"scheme": "cubic", "arrivals": {"rate": 5, "size": {"cdf": [[1, 0.2], [2, 0.1]]}}},
     ("flows", 0, "arrivals", "size", "cdf"), "decreases"),
    ({"scheme": "cubic", "rwnd": "64KB", "tcp": {"rwnd": "1MB"}}, ("flows", 0, "rwnd"), "also set in tcp"),
])
def test_workload_errors_name_the_path(group, path, msg):
    with pytest.raises(ConfigError) as ei:
        config.resolve({"duration": 5, "flows": [group]})
    errs = getattr(ei.value, "errors", [ei.value])
    assert any(e.path == format_path(path) and msg in str(e) for e in errs), [str(e) for e in errs]


def test_yaml_onoff_keys_and_fct_plots(tmp_path):
    """YAML 1.1 reads bare on/off as booleans; the parser takes them back. A run with short
    flows gets the FCT figures and the workload stats file."""
    exp = config.resolve("duration: 3\ncentral: {rate: 10Mbit, delay: 5ms}\nflows:\n"
                         "  - {scheme: cubic, onoff: {on: 0.5s, off: 1s}}\n"
                         "  - {scheme: cubic, arrivals: {rate: 20/s, size: 20KB}}\n")
    assert exp["flows"][0]["onoff"] == {"on_ns": 5 * 10**8, "off_ns": 10**9}
    from ccbench.plots import plot_all
    paths = plot_all(run(tmp_path, exp), tmp_path / "plots", groupings=["total"])
    names = {p.name for p in paths}
    assert {"fct-cdf.png", "fct-size.png", "workload-stats.log"} <= names
    assert "slowdown" in (tmp_path / "plots" / "workload-stats.log").read_text()


@pytest.mark.parametrize("ssai", [True, False])
def test_slow_start_after_idle_restarts_or_keeps_cwnd_over_off_periods(tmp_path, ssai):
    """on 1 s / off 2 s (longer than the RTO): with `slow-start-after-idle` (Linux default)
    the next on period restarts from the initial window; with it off cwnd is kept, as
    `net.ipv4.tcp_slow_start_after_idle = 0` does (the mobile-broadband study's setting)."""
    doc = {"duration": 5, "packets": False,
           "central": {"rate": "20Mbit", "delay": "5ms", "queue": "1bdp"},
           "tcp": {"slow-start-after-idle": ssai},
           "flows": [{"scheme": "cubic", "onoff": {"on": "1s", "off": "2s"}}]}
    exp = config.resolve(doc)
    assert exp["tcp"]["slow_start_after_idle"] is ssai
    res = run(tmp_path, exp)
    f = res.flows.filter(pl.col("flow") == 0)
    before = f.filter(pl.col("time_ns") == 990_000_000)["cwnd"][0]
    resumed = f.filter((pl.col("time_ns") > 3_000_000_000) & (pl.col("inflight") > 0))["cwnd"][0]
    assert before > 20
    if ssai:
        assert resumed <= 10, (before, resumed)
    else:
        assert resumed >= before * 0.5, (before, resumed)


def test_slow_start_after_idle_is_absent_unless_written():
    exp = config.resolve({"duration": 1, "flows": [{"scheme": "cubic"}]})
    assert "slow_start_after_idle" not in exp["tcp"]
    with pytest.raises(ConfigError, match="slow-start-after-idle"):
        config.resolve({"duration": 1, "tcp": {"slow-start-after-idle": "maybe"},
                        "flows": [{"scheme": "cubic"}]})
