"""Linux host behaviours in the experiment file: fq pacing for any scheme, per-direction
central rates and framing overhead (docs/experiment-file.md); the emulation backend's
pacing flag is checked in its agent argv."""
from __future__ import annotations

import polars as pl
import pytest

import ccbench
from ccbench import config


def _doc(pacing=None, duration=3):
    tcp = {} if pacing is None else {"tcp": {"pacing": pacing}}
    return {"duration": duration, "seed": 1, "host": {"noise": "exact"}, **tcp,
            "central": {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp"},
            "flows": [{"scheme": "cubic"}]}


def _burst_share(res) -> float:
    """Share of data packets that left the sender within 5 us of the previous one."""
    t = res.packets["sent_ns"].sort().diff().drop_nulls()
    return float((t < 5_000).mean())


def test_fq_pacing_spreads_a_cubic_sender_in_the_simulator(tmp_path):
    assert "pacing_default" not in config.resolve(_doc())["tcp"]
    assert config.resolve(_doc("fq"))["tcp"]["pacing_default"] is True
    assert config.resolve(_doc("none"))["tcp"]["pacing_default"] is False
    unpaced = ccbench.run(config.resolve(_doc()), tmp_path / "u")
    paced = ccbench.run(config.resolve(_doc("fq")), tmp_path / "p")
    # Unpaced CUBIC sends its slow-start and ACK-clocked bursts back to back (the same
    # nanosecond: the side links are unlimited); paced, only the first 10 segments are.
    assert _burst_share(unpaced) > 0.3
    assert _burst_share(paced) < 0.01
    # Pacing at 120 % of cwnd/srtt still fills the link.
    assert paced.flowstats["delivered_bytes"][0] > 0.9 * unpaced.flowstats["delivered_bytes"][0]
    with pytest.raises(config.ConfigError, match="pacing"):
        config.resolve(_doc("yes"))


def test_central_rate_per_direction_and_overhead_reach_both_directions(tmp_path):
    doc = {"duration": 4, "seed": 1, "host": {"noise": "exact"},
           "central": {"rate": {"left": "10Mbit", "right": "2Mbit"}, "overhead": 38,
                       "delay": "10ms", "queue": "2bdp"},
           "flows": [{"scheme": "cubic"}, {"scheme": "cubic", "direction": "<-"}]}
    exp = config.resolve(doc)
    central = {l["name"]: l for l in exp["links"] if l["role"] == "central"}
    assert central["r1->r2"]["rate_bps"] == 10_000_000
    assert central["r2->r1"]["rate_bps"] == 2_000_000
    assert central["r1->r2"]["overhead_bytes"] == 38 == central["r2->r1"]["overhead_bytes"]
    assert "overhead_bytes" not in exp["links"][0]  # side links: no framing by default
    # One flow each way (alone: an ACK stream sharing the slow direction with data would
    # slow the fast flow, the classic asymmetric-link effect, not what is checked here).
    # 1500-byte packets take 1538 bytes of wire time: IP throughput <= rate * 1500/1538.
    for direction, rate in (("->", 10e6), ("<-", 2e6)):
        one = config.resolve({**doc, "flows": [{"scheme": "cubic", "direction": direction}]})
        res = ccbench.run(one, tmp_path / direction.replace("<", "l").replace(">", "r"))
        bits = res.flowstats["delivered_bytes"][0] * 8 / 4
        assert 0.85 * rate * 1500 / 1538 < bits <= rate * 1500 / 1538 * 1.001, (direction, bits)
        # Back-to-back arrivals are one wire time apart: 1538 bytes at the direction's rate.
        gaps = res.packets["arrival_ns"].drop_nulls().sort().diff().drop_nulls()
        assert gaps.filter(gaps > 0).mode()[0] == round(1538 * 8 * 1e9 / rate)
    for bad, msg in (({"left": "fast"}, "rate"), ({"up": "1Mbit"}, "valid keys: left, right")):
        with pytest.raises(config.ConfigError, match=msg):
            config.resolve({**doc, "central": {"rate": bad}})
    with pytest.raises(config.ConfigError, match="overhead"):
        config.resolve({**doc, "central": {"overhead": -1}})


def test_fq_pacing_becomes_the_agents_pacing_flag(tmp_path):
    """Without root: the emulation backend asks the agent for SO_MAX_PACING_RATE exactly when
    the flow's (or the experiment's) tcp has pacing: fq."""
    from pathlib import Path

    from ccbench.backends.emu.agents import sender_argv

    def argv(doc):
        exp = config.resolve(doc)
        return sender_argv(Path("agent"), exp, exp["flows"][0], "10.0.0.2", 0, "r", tmp_path)
    assert "--pacing" not in argv(_doc())
    assert "--pacing" not in argv(_doc("none"))
    a = argv(_doc("fq"))
    assert a[a.index("--pacing") + 1] == "fq"
    per_group = {**_doc(), "flows": [{"scheme": "cubic", "tcp": {"pacing": "fq"}}]}
    assert "--pacing" in argv(per_group)


def test_min_rtt_takes_the_millisecond_timestamp_sample_of_a_retransmission(tmp_path):
    """An ACK that acknowledges only retransmitted (or earlier SACKed) data has no µs RTT
    sample (Karn), so Linux's tcp_ack_update_rtt takes the TCP-timestamp echo, in whole ms
    (tcp_rtt_tsopt_us), and min_rtt with it: on a path of 20.1-20.2 ms min_rtt falls to exactly
    20,000 µs in the first recovery. The kernel backend (Linux 6.18) shows the same, at the
    same moment (docs/fidelity.md, "min_rtt in a recovery")."""
    doc = {"duration": 1, "seed": 1, "central": {"rate": "100Mbit", "delay": "10ms",
                                                  "queue": "0.5bdp"},
           "flows": [{"scheme": "reno"}]}
    res = ccbench.run(doc, tmp_path / "r")
    f = res.flows.sort("time_ns")
    path = (res.packets["arrival_ns"] - res.packets["sent_ns"]).min()  # one-way, data
    assert 20_100_000 < 2 * path
    # the handshake's sample (small segments: 20.08 ms here) is the lowest a µs sample gets;
    # min_rtt falls below it only by the millisecond timestamp sample
    handshake = f["min_rtt_us"].drop_nulls()[0]
    assert 20_000 < handshake < 20_100
    first = f.filter(pl.col("min_rtt_us") < handshake)
    assert first.height and first["min_rtt_us"][0] == 20_000.0
    assert first["ca_state"][0] == "recovery"


def _bursts(res, t0=2e9, t1=5e9):
    """(median burst size, median gap between bursts in ms) of flow 0's data sends in
    [t0, t1): a burst is packets sent less than 20 us after the previous one."""
    import numpy as np
    t = res.packets.filter(pl.col("flow") == 0)["sent_ns"].sort().to_numpy()
    t = t[(t >= t0) & (t < t1)]
    new = np.concatenate([[True], np.diff(t) > 20_000])
    sizes = np.diff(np.concatenate([np.flatnonzero(new), [len(t)]]))
    return float(np.median(sizes)), float(np.median(np.diff(t[new]))) / 1e6


def test_tso_deferral_releases_an_ack_clocked_sender_in_millisecond_bursts(tmp_path):
    """Linux's tcp_tso_should_defer holds a small send for the next ACK while something left
    in the last millisecond: Reno at 100 Mbit/s x 20 ms on the kernel backend (6.18) sends
    bursts of 9 packets (median) 1.077 ms apart, where ACKs come every ~0.24 ms
    (docs/fidelity.md, "Burst release"). `tcp: {tso-defer: true}` does the same; without it
    every ACK sends its two packets."""
    doc = {"duration": 5, "seed": 1, "central": {"rate": "100Mbit", "delay": "10ms",
                                                  "queue": "0.5bdp"},
           "flows": [{"scheme": "reno"}]}
    size, gap = _bursts(ccbench.run(doc, tmp_path / "off"))
    assert size == 2 and gap < 0.4, (size, gap)
    size, gap = _bursts(ccbench.run({**doc, "tcp": {"tso-defer": True}}, tmp_path / "on"))
    assert 7 <= size <= 11 and 0.9 < gap < 1.3, (size, gap)
