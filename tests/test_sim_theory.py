"""Scenario checks of the simulator against theory (DESIGN.md, testing doctrine)."""
from __future__ import annotations

import polars as pl
import pytest

from ccbench import analysis
from simhelp import delivered_rate_bps, experiment, run


@pytest.mark.parametrize("scheme", ["cubic", "reno"])
def test_one_flow_fills_the_bottleneck_with_a_bdp_queue(tmp_path, scheme):
    # BDP = 100 Mbit/s × 24 ms = 300 kB = 200 packets; the 1000-packet queue is 5 BDP.
    exp = experiment([{"scheme": scheme, "flows": 1, "direction": "->"}], duration=30,
                     queue=1000, packets=False)
    res = run(tmp_path, exp)
    rate = delivered_rate_bps(res, [0], 5, 30)
    assert rate >= 0.97 * 100e6, f"{scheme} used {rate / 1e6:.2f} Mbit/s of 100"
    assert rate <= 100e6 * 1.0001  # never more than the line rate (IP bytes)


def test_two_identical_flows_share_fairly(tmp_path):
    exp = experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}], duration=60,
                     queue=1000, packets=False)
    res = run(tmp_path, exp)
    an = analysis.analyze(res, grouping="per-flow", interval=0.5)
    assert an.overall_jain >= 0.95, an.summary
    total = delivered_rate_bps(res, [0, 1], 10, 60)
    assert total >= 0.97 * 100e6


def test_full_droptail_queue_delay(tmp_path):
    """A full 1000-packet queue at 100 Mbit/s delays a 1500-byte packet by 1000 × 120 µs =
    120 ms (CoCo-Beholder's ≈121 ms comes from netem also counting 14-byte Ethernet headers:
    1000 × 1514 B × 8 / 100 Mbit/s = 121.1 ms)."""
    # an exact analytic value; a send buffer that does not bind (with Linux's 4-MiB default the
    # application refills a full socket in bursts that queue ~1 ms on the 1-Gbit/s side link)
    exp = experiment([{"scheme": "reno", "flows": 1, "direction": "->"}], duration=20,
                     queue=1000, host={"noise": "exact"}, tcp={"wmem": [4096, 16384, 64 << 20]})
    res = run(tmp_path, exp)
    flow = res.experiment["flows"][0]
    links = res.experiment["links"]
    prop = sum(links[l]["delay_ns"] for l in flow["path"])
    # Serialisation of one 1500-byte packet on the two 1 Gbit/s side links and the central link.
    ser = 2 * 12_000 + 120_000
    p = res.packets.filter(pl.col("arrival_ns").is_not_null())
    qdelay_ms = ((p["arrival_ns"] - p["sent_ns"]).max() - prop - ser) / 1e6
    assert qdelay_ms == pytest.approx(120.0, abs=0.13), qdelay_ms
    # The queue was full when the drops happened.
    central = res.experiment["bottleneck_links"][0]
    q = res.queues.filter(pl.col("link") == central)
    assert q["packets"].max() >= 999
    assert q["drops"].max() > 0


def test_leftward_flow_uses_the_other_central_queue(tmp_path):
    exp = experiment([{"scheme": "reno", "flows": 1, "direction": "<-"}], duration=5,
                     queue={"left": 1000, "right": 30})
    res = run(tmp_path, exp)
    left, right = res.experiment["bottleneck_links"]
    q = res.queues
    assert q.filter(pl.col("link") == right)["drops"].max() > 0   # r2→r1 carries the data
    assert q.filter(pl.col("link") == left)["drops"].max() == 0   # r1→r2 carries ACKs only
    assert q.filter(pl.col("link") == right)["packets"].max() <= 30
