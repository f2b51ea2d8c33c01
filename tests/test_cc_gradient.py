"""Scenario tests of the delay-gradient schemes and Copa (crates/sim/src/cc/{cdg,hldg,copa}.rs;
FreeBSD cc_cdg.c; Al-Saadi's HLDG thesis, Swinburne 2019, read as docs/hldg.md; Arun & Balakrishnan
NSDI 2018).

Dumbbell with 1 Gbit/s / 1 ms side links. Queue sizes are in packets. Sampled queue lengths are
the left→right central queue every sample interval; rates are IP-level delivered bytes."""
from __future__ import annotations

import polars as pl

from simhelp import experiment, run


def delivered_mbps(res, flow, t0_s, t1_s):
    bin_s = res.experiment["sample_interval_ns"] / 1e9
    iv = res.intervals.filter((pl.col("flow") == flow)
                              & (pl.col("bin") >= round(t0_s / bin_s))
                              & (pl.col("bin") < round(t1_s / bin_s)))
    return iv["delivered_bytes"].sum() * 8 / (t1_s - t0_s) / 1e6


def queue_packets(res, t0_s, t1_s=None):
    central = res.experiment["bottleneck_links"][0]
    q = res.queues.filter((pl.col("link") == central) & (pl.col("time_ns") >= int(t0_s * 1e9)))
    if t1_s is not None:
        q = q.filter(pl.col("time_ns") < int(t1_s * 1e9))
    return q["packets"]


def cc_series(res, flow, name, t0_s, t1_s):
    f = res.flows.filter((pl.col("flow") == flow) & (pl.col("time_ns") >= int(t0_s * 1e9))
                         & (pl.col("time_ns") < int(t1_s * 1e9)))
    return f[f"cc_{name}"]


def test_cdg_alone_keeps_the_queue_short_and_uses_the_link(tmp_path):
    """One CDG flow, 10 Mbit/s, base RTT ≈ 24 ms (BDP ≈ 20 packets), 200-packet buffer.

    CDG backs off on a positive delay gradient long before the buffer fills: measured mean
    queue 4.2 packets (p95 12) of 200, 9.08 Mbit/s over 5–30 s. Bounds: mean < 10 packets (5 %
    of the buffer, 12 ms of queueing), never half the buffer, ≥ 85 % of the link (its 0.7
    back-offs and +1 packet/RTT regrowth leave some capacity unused, as Al-Saadi's thesis, Ch. 4,
    reports)."""
    exp = experiment([{"scheme": "cdg", "flows": 1, "direction": "->"}], duration=30,
                     rate="10Mbit", delay="10ms", queue=200, packets=False)
    res = run(tmp_path, exp)
    q = queue_packets(res, 5)
    assert q.mean() < 10, f"mean queue {q.mean():.1f} packets"
    assert q.max() < 100, f"max queue {q.max()}"
    assert res.flowstats is not None
    rate = delivered_mbps(res, 0, 5, 30)
    assert rate >= 8.5, f"CDG used {rate:.2f} of 10 Mbit/s"
    # It did back off on delay (not on loss): delay back-offs counted, no drops needed.
    assert cc_series(res, 0, "delay_backoffs", 29, 30).max() >= 20


def test_cdg_loses_to_cubic_in_a_deep_buffer(tmp_path):
    """CDG first, CUBIC from 5 s; 10 Mbit/s, 400-packet buffer (≈ 20 BDP). CUBIC fills the
    buffer; CDG's delay back-offs (and 5 ineffectual ones before it holds off) leave it a sliver:
    measured 0.17 vs 9.83 Mbit/s over 10–40 s (Al-Saadi's thesis, Ch. 4: CDG collapses with large
    buffers). Bound: CDG < 15 % of the link while CUBIC takes > 80 %."""
    exp = experiment([{"scheme": "cdg", "flows": 1, "direction": "->"},
                      {"scheme": "cubic", "flows": 1, "direction": "->", "start": "5s"}],
                     duration=40, rate="10Mbit", delay="10ms", queue=400, packets=False)
    res = run(tmp_path, exp)
    cdg, cubic = delivered_mbps(res, 0, 10, 40), delivered_mbps(res, 1, 10, 40)
    assert cdg < 1.5 and cubic > 8.0, f"cdg {cdg:.2f}, cubic {cubic:.2f} Mbit/s"


def test_hldg_switches_to_loss_mode_against_cubic_and_back_after_it_stops(tmp_path):
    """Like the thesis's mode-switching runs (§5.3.2, Fig 5.27): 12 Mbit/s, base RTT ≈ 14 ms,
    250-packet buffer (≈ 250 ms), Q_th = 50 ms, m = 4; HLDG alone, CUBIC from 5 s to 35 s.

    Expected (thesis §5.3.2, Fig 5.27; docs/hldg.md M10): the detection ring saturates within m cycles of CUBIC's
    queue, LOSS mode 1 s later; PROBE episodes at losses ≥ 5 s apart; once CUBIC has gone the
    queue drains and HLDG is in DELAY mode. Measured: LOSS from ≈ 7 s, mode samples over 10–30 s
    are LOSS (1) or PROBE (2) only, HLDG 5.3 vs CUBIC 6.7 Mbit/s over 10–35 s (CDG in the same
    setting gets < 1 Mbit/s), the queue back to a few packets by 50 s and ≥ 90 % of the link.
    Once CUBIC has gone HLDG stays in LOSS mode (its RTT_base kept, D35) until its own CUBIC
    growth meets a loss and the PROBE that follows sees a low queue: DELAY from 44.0–45.3 s over
    seeds 1–5, in every sample after 47 s (before D35 the RTT_base window re-learned CUBIC's
    queue as the base and HLDG left LOSS mode before CUBIC stopped)."""
    exp = experiment([{"scheme": "hldg", "flows": 1, "direction": "->", "params": {"q_th_ms": 50}},
                      {"scheme": "cubic", "flows": 1, "direction": "->", "start": "5s",
                       "stop": "35s"}],
                     duration=60, rate="12Mbit", delay="5ms", queue=250, packets=False)
    res = run(tmp_path, exp)
    mode_before = cc_series(res, 0, "mode", 1, 5)
    assert (mode_before == 0).all(), "DELAY mode while alone"
    mode_comp = cc_series(res, 0, "mode", 10, 30)
    assert (mode_comp != 0).all(), "LOSS/PROBE throughout the competition"
    assert (mode_comp == 1).mean() > 0.7, f"LOSS fraction {(mode_comp == 1).mean():.2f}"
    hldg = delivered_mbps(res, 0, 10, 35)
    assert hldg > 3.0, f"HLDG got {hldg:.2f} of 12 Mbit/s against CUBIC"
    assert (cc_series(res, 0, "mode", 35, 47) == 2).any(), "back through a PROBE"
    mode_after = cc_series(res, 0, "mode", 47, 60)
    assert (mode_after == 0).all(), "back in DELAY mode after CUBIC stopped"
    # How fast the standing queue drains depends on HLDG's state at the instant CUBIC leaves
    # (LOSS mode with a large window, or DELAY with a small one), which is chaotic: over
    # seeds 1–5 the mean queue over 40–60 s was 25.8, 2.4, 14.9, 6.4, 2.8 packets, while over
    # 50–60 s it was 2.3–2.5 for every seed. A gradient-based DELAY mode sees no gradient in a
    # standing queue, so it drains it by its probabilistic back-offs over several seconds; the
    # robust property is that the queue is back to a few packets within 15 s.
    assert queue_packets(res, 50).mean() < 10
    assert delivered_mbps(res, 0, 40, 60) >= 0.9 * 12


FREEBSD_TCP = {"rtt-granularity": "1ms", "delayed-ack-timeout": "100ms", "init-cwnd": 10}


def test_hldg_alone_uses_a_2ms_path_with_h_ertt_samples(tmp_path):
    """The thesis's H5 point: one HLDG flow, 10 Mbit/s, 2 ms path, 1000-packet buffer, FreeBSD
    endpoint (1-ms RTT ticks). Path RTT ≈ 3.25 ms (2 ms + one 1.2-ms serialisation): floored to
    3 ms the BDP estimate is 2.5 packets and the λ·BDP back-off lands on 2 (28 % of the time,
    utilisation 0.871); as h_ertt reports it (+1 tick, docs/hldg.md D31) RTT_ebase is 4 ms, the
    back-off lands on 3 packets and utilisation is 0.951 (5 seeds: 0.950–0.952), queueing a few
    ms (thesis: low milliseconds at full utilisation)."""
    exp = experiment([{"scheme": "hldg", "flows": 1, "direction": "->", "tcp": FREEBSD_TCP,
                       "left-delay": "0ms", "right-delay": "0ms"}],
                     duration=60, rate="10Mbit", delay="1ms", queue=1000, packets=False)
    res = run(tmp_path, exp)
    assert cc_series(res, 0, "rtt_ebase_ms", 20, 60).median() == 4.0
    util = delivered_mbps(res, 0, 20, 60) / 10
    assert util > 0.93, f"utilisation {util:.3f}"
    assert queue_packets(res, 20, 60).mean() < 5


def test_hldg_probe_after_a_loss_burst_repairs_it_before_draining(tmp_path):
    """HLDG against CUBIC at 4 Mbit/s, 240 ms, 8 BDP (a 640-packet, 1.9-s buffer; the E4/H11
    grid): LOSS mode's plain slow start overshoots CUBIC's full queue and the loss that ends it
    starts a PROBE. Two faults kept HLDG in that loss recovery at cwnd 2 for the rest of the run
    (seed 1: Recovery in 96 % of 20-110 s, share 0.03): the 2-MSS PROBE window was the
    recovery's ssthresh (docs/hldg.md D32), and HLDG's slow-start ACK-train cap ran inside the
    recovery, where PRR holds cwnd below ssthresh, and set ssthresh to the ACK rate of the
    repair (D33). Fixed (seeds 1-5): Recovery 20-31 % of the time, share 0.07-0.25."""
    exp = experiment([{"scheme": "hldg", "flows": 1, "direction": "->", "tcp": FREEBSD_TCP},
                      {"scheme": "cubic", "flows": 1, "direction": "->", "start": "10s", "stop": "110s"}],
                     duration=110, rate="4Mbit", delay="120ms", queue=640, packets=False,
                     side_delay="0ms")
    res = run(tmp_path, exp)
    f = res.flows.filter((pl.col("flow") == 0) & (pl.col("time_ns") >= 20e9))
    assert (f["ca_state"] == "recovery").mean() < 0.5
    hldg, cubic = delivered_mbps(res, 0, 20, 110), delivered_mbps(res, 1, 20, 110)
    assert hldg / (hldg + cubic) > 0.05


def test_copa_alone_keeps_a_small_standing_queue(tmp_path):
    """One Copa flow (default δ = 0.5), 20 Mbit/s, base RTT ≈ 44.6 ms (BDP ≈ 74 packets),
    500-packet buffer. Copa's equilibrium is 1/δ = 2 packets queued per flow, with oscillation
    of a few packets per RTT around it (velocity up to doubling) and a nearly empty queue every
    few RTTs. Measured over 5–20 s: mean 7.8 packets (4.7 ms at 1.67 packets/ms), p95 22, max
    27; 19.8 Mbit/s. Bounds: mean ≤ 12 packets (≈ 7 ms), p95 ≤ 30 packets (18 ms), max ≤ 10 %
    of the buffer; ≥ 95 % of the link.
    Default mode 78.5 % of samples, not the paper's ~100 %: with the Linux receiver's delayed
    ACKs no RTT sample sees a truly empty queue (each ACK releases a pair that queues behind
    itself, the first of a pair is held at the receiver), so a trough is sometimes missed and
    competitive mode's growing 1/δ then sustains itself (copa.rs doc comment). The paper's
    claim is tested with ACK-every-packet below; ≥ 70 % here documents the delayed-ACK case."""
    exp = experiment([{"scheme": "copa", "flows": 1, "direction": "->"}], duration=20,
                     rate="20Mbit", delay="20ms", queue=500, packets=False)
    res = run(tmp_path, exp)
    q = queue_packets(res, 5)
    assert q.mean() <= 12, f"mean queue {q.mean():.1f} packets"
    assert q.quantile(0.95) <= 30, f"p95 queue {q.quantile(0.95)}"
    assert q.max() <= 50
    rate = delivered_mbps(res, 0, 5, 20)
    assert rate >= 0.95 * 20, f"Copa used {rate:.2f} of 20 Mbit/s"
    mode = cc_series(res, 0, "mode", 5, 20)
    assert (mode == 1).mean() >= 0.7, f"default-mode fraction {(mode == 1).mean():.2f}"
    delta = cc_series(res, 0, "delta", 5, 20)
    assert (delta <= 0.5).all()


def test_copa_alone_stays_in_default_mode_with_per_packet_acks(tmp_path):
    """The paper's claim (Copa alone is essentially always in default mode) under the
    reference's ACK pattern: genericCC ACKs every packet, so the receiver's delayed ACK is
    off. Measured 100 % default mode over 5–20 s, δ = 0.5 throughout."""
    exp = experiment([{"scheme": "copa", "flows": 1, "direction": "->",
                       "tcp": {"delayed-ack": False}}], duration=20,
                     rate="20Mbit", delay="20ms", queue=500, packets=False)
    res = run(tmp_path, exp)
    mode = cc_series(res, 0, "mode", 5, 20)
    assert (mode == 1).mean() >= 0.95, f"default-mode fraction {(mode == 1).mean():.2f}"
    assert (cc_series(res, 0, "delta", 5, 20) == 0.5).mean() >= 0.95
    assert delivered_mbps(res, 0, 5, 20) >= 0.95 * 20


def test_copa_goes_competitive_against_cubic(tmp_path):
    """Copa first, CUBIC from 5 s in a 500-packet buffer: the queue never empties, so Copa must
    leave default mode (competitive: δ < 0.5 through AIMD on 1/δ) and keep a real share instead
    of yielding like a delay-based scheme."""
    exp = experiment([{"scheme": "copa", "flows": 1, "direction": "->"},
                      {"scheme": "cubic", "flows": 1, "direction": "->", "start": "5s"}],
                     duration=30, rate="20Mbit", delay="20ms", queue=500, packets=False)
    res = run(tmp_path, exp)
    mode = cc_series(res, 0, "mode", 10, 30)
    assert (mode == 2).mean() > 0.5, f"competitive fraction {(mode == 2).mean():.2f}"
    assert cc_series(res, 0, "delta", 10, 30).min() < 0.2
    copa = delivered_mbps(res, 0, 10, 30)
    assert copa > 2.0, f"Copa got {copa:.2f} of 20 Mbit/s against CUBIC"
