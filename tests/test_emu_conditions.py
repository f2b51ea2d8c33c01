"""Network conditions on the emulation backend: the same netmodel AQMs, random loss and delay
schedules the simulator uses act on real kernel TCP."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import ccbench
from ccbench import config
from test_emu import _why_not

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def _central(res):
    return res.experiment["bottleneck_links"][0]


def test_codel_and_bernoulli_loss_act_on_kernel_tcp(tmp_path):
    """cubic through a CoDel queue with 0.5 % Bernoulli loss on the left→right central link.
    The link model is the simulator's, so the same accounting must appear: random losses
    counted as `loss_drops`, CoDel's sojourn held near its 5 ms target while a 1000-packet
    droptail queue would hold ≈ 100+ ms under cubic at 30 Mbit/s."""
    exp = config.resolve({
        "duration": 4, "seed": 3,
        "central": {"rate": "30Mbit", "delay": "10ms",
                    "queue": {"type": "codel", "limit": 1000},
                    "loss": {"left": {"bernoulli": 0.005}, "right": None}},
        "flows": [{"scheme": "cubic", "direction": "->"}],
    })
    res = ccbench.run(exp, tmp_path / "codel", backend="emu")
    assert res.meta["backend"] == "emu"
    q = res.queues.filter(pl.col("link") == _central(res))
    assert q["loss_drops"].max() > 0
    soj = q.filter(pl.col("time_ns") > 1_000_000_000)["sojourn_us"].drop_nulls().drop_nans()
    # CoDel keeps the sojourn near 5 ms; with random loss too, the queue is often empty.
    assert len(soj) > 100 and np.median(soj.to_numpy()) < 10_000
    p = res.packets
    assert p.filter(pl.col("drop_reason") == "loss").height > 0


def test_square_wave_delay_reaches_kernel_packets(tmp_path):
    """A 10 ms ↔ 40 ms square wave (period 1 s) on the central link: the one-way delay of the
    kernel's packets follows the schedule (each half-period's minimum OWD within 1 ms of
    propagation + the scheduled delay), as in the simulator."""
    exp = config.resolve({
        "duration": 4, "seed": 1,
        "central": {"rate": "30Mbit", "queue": 5,
                    "delay": {"square": {"low": "10ms", "high": "40ms", "period": "1s"}}},
        "flows": [{"scheme": "reno", "direction": "->", "left-delay": "1ms", "right-delay": "1ms"}],
    })
    res = ccbench.run(exp, tmp_path / "square", backend="emu")
    d = res.packets.filter(pl.col("arrival_ns").is_not_null()).with_columns(
        ((pl.col("arrival_ns") - pl.col("sent_ns")) / 1e6).alias("owd_ms"),
        (pl.col("sent_ns") // 500_000_000).alias("half"))
    mins = d.group_by("half").agg(pl.col("owd_ms").min()).sort("half")
    for half, owd in mins.iter_rows():
        if half == 0:
            continue  # connection start
        central = 10 if half % 2 == 0 else 40
        # 1 ms side delays on the data path; three serialisations (0.4 ms at 30 Mbit/s each,
        # side links unlimited: 0) and at most a 5-packet queue (2 ms) on top.
        assert central + 2 - 0.05 <= owd <= central + 2 + 2.5, (half, owd)
