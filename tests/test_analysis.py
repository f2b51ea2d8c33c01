"""Hand-computed checks of every CoCo-Beholder / Pantheon formula (docs/metrics.md)."""
from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ccbench.analysis import (analyze, hist_percentile_bucket, jain_index, link_utilization,
                              make_grouping, nearest_rank, pantheon_summary, pantheon_text,
                              percentile_nearest, queue_timeseries, stats_text, write_stats)
from ccbench.results import load
from fixtures_results import make_experiment, make_results, packets_table, write_results

MS = 1_000_000
S = 1_000_000_000


# ---------------------------------------------------------------- estimators

@pytest.mark.parametrize("q,n,rank", [
    (50, 1, 0), (50, 2, 0),    # 0.5 -> 0 (half to even)
    (50, 4, 2),                # 1.5 -> 2
    (50, 6, 2),                # 2.5 -> 2
    (50, 8, 4),                # 3.5 -> 4
    (95, 11, 10),              # 9.5 -> 10
    (95, 31, 28),              # 28.5 -> 28
    (95, 21, 19), (95, 3, 2),  # 1.9 -> 2
    (0, 5, 0), (100, 5, 4), (99.5, 3, 2),
])
def test_nearest_rank_half_even(q, n, rank):
    assert nearest_rank(q, n) == rank


def test_percentile_nearest_matches_numpy_nearest():
    rng = np.random.default_rng(3)
    for n in list(range(1, 60)) + [999, 1000, 1001]:
        x = rng.normal(size=n)
        for q in (50, 95, 5, 99):
            assert percentile_nearest(x, q) == np.percentile(x, q, method="nearest")


def test_percentile_nearest_small():
    assert percentile_nearest([3, 1, 2, 4], 50) == 3  # sorted[round(1.5)=2]
    assert percentile_nearest([3, 1], 50) == 1        # sorted[round(0.5)=0]
    assert percentile_nearest([], 50) is None
    with pytest.raises(ValueError):
        nearest_rank(101, 3)


def test_hist_percentile():
    b, c = np.array([0, 2, 5]), np.array([2, 1, 3])  # values 0,0,2,5,5,5
    assert hist_percentile_bucket(b, c, 50) == 2      # rank round(2.5)=2
    assert hist_percentile_bucket(b, c, 95) == 5      # rank round(4.75)=5
    assert hist_percentile_bucket(b, c, 0) == 0
    assert hist_percentile_bucket(b, np.array([0, 0, 0]), 50) is None


def test_jain_index():
    assert jain_index([]) is None
    assert jain_index([0.0, 0.0]) is None
    assert jain_index([1.0, 0.0]) == 0.5
    assert jain_index([2.0, 2.0, 2.0]) == 1.0
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / (2 * 10))


# ---------------------------------------------------------------- groupings

FLOWS4 = [("cubic", "->"), ("bbr", "<-"), ("cubic", "<-"), ("bbr", "<-")]


def test_groupings_labels_and_members():
    fl = make_experiment(FLOWS4, groups=[0, 0, 1, 1])["flows"]
    g = make_grouping(fl, "per-flow")
    assert [c.label for c in g.curves] == ["Flow 1: cubic ->", "Flow 2: bbr <-",
                                           "Flow 3: cubic <-", "Flow 4: bbr <-"]
    g = make_grouping(fl, "total")
    assert g.name == "total" and [(c.label, c.flows) for c in g.curves] == [("Total: 4 flows", (0, 1, 2, 3))]
    g = make_grouping(fl, "per-scheme")
    assert [(c.label, c.flows) for c in g.curves] == [("cubic : 2 flows", (0, 2)), ("bbr : 2 flows", (1, 3))]
    g = make_grouping(fl, "per-direction")
    assert [(c.label, c.flows) for c in g.curves] == [("-> : 1 flow", (0,)), ("<- : 3 flows", (1, 2, 3))]
    g = make_grouping(fl, "per-scheme-direction")
    assert g.name == "per-scheme-direction"
    assert [(c.label, c.flows) for c in g.curves] == [
        ("cubic -> : 1 flow", (0,)), ("bbr <- : 2 flows", (1, 3)), ("cubic <- : 1 flow", (2,))]
    assert g.notation == "Label notation: <scheme> <direction> : <flows number> flows"
    g = make_grouping(fl, "per-subset", ["group"])
    assert g.name == "per-group"
    assert [(c.label, c.flows) for c in g.curves] == [("0 : 2 flows", (0, 1)), ("1 : 2 flows", (2, 3))]
    assert make_grouping(fl, "per-subset", ["scheme"]).curves == make_grouping(fl, "per-scheme").curves
    with pytest.raises(ValueError, match="unknown flow field 'colour'"):
        make_grouping(fl, "per-subset", ["colour"])
    with pytest.raises(ValueError, match="not a scalar"):
        make_grouping(fl, "per-subset", ["path"])
    with pytest.raises(ValueError, match="needs a non-empty"):
        make_grouping(fl, "per-subset")
    with pytest.raises(ValueError, match="unknown grouping"):
        make_grouping(fl, "per-colour")


# ---------------------------------------------------------------- hand example
#
# I = 0.5 s. Flow 0: 1000 B @0.2 s (10 ms), 500 B @0.7 s (20 ms), 1500 B @1.6 s (30 ms), and a
# 1000 B packet dropped. Flow 1: 1000 B @0.9 s (5 ms), 1000 B @1.1 s (15 ms), and 500 B in flight.

def hand_packets():
    return packets_table([
        (0, 1000, 190 * MS, 200 * MS),
        (0, 500, 680 * MS, 700 * MS),
        (0, 1000, 800 * MS, None, 810 * MS),
        (0, 1500, 1570 * MS, 1600 * MS),
        (1, 1000, 895 * MS, 900 * MS),
        (1, 1000, 1085 * MS, 1100 * MS),
        (1, 500, 1950 * MS, None),
    ])


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    exp = make_experiment([("cubic", "->"), ("bbr", "<-")], duration_ns=2 * S)
    d = tmp_path_factory.mktemp("hand")
    return (load(write_results(d / "pk", exp, hand_packets())),
            load(write_results(d / "agg", exp, hand_packets(), record_packets=False)))


@pytest.mark.parametrize("mode", ["packets", "aggregate"])
def test_hand_per_interval_rates_and_delays(hand, mode):
    a = analyze(hand[0], "per-flow", 0.5, mode=mode)
    assert a.mode == mode and a.n_slots == 4  # ceil(1.6 / 0.5)
    f0 = a.per_interval.filter(pl.col("curve") == "Flow 1: cubic ->")
    assert f0["slot"].to_list() == [0, 1, 2, 3]  # active slots floor(0.2/.5)..floor(1.6/.5)
    assert f0["t_s"].to_list() == [0.0, 0.5, 1.0, 1.5]
    assert f0["rate_mbps"].to_list() == pytest.approx([0.016, 0.008, 0.0, 0.024], abs=1e-15)
    assert f0["delay_ms"].to_list() == [10.0, 20.0, None, 30.0]  # empty active slot: no delay
    f1 = a.per_interval.filter(pl.col("curve") == "Flow 2: bbr <-")
    assert f1["slot"].to_list() == [1, 2]
    assert f1["rate_mbps"].to_list() == pytest.approx([0.016, 0.016], abs=1e-15)
    assert f1["delay_ms"].to_list() == [5.0, 15.0]


@pytest.mark.parametrize("mode", ["packets", "aggregate"])
def test_hand_jain_active_but_zero(hand, mode):
    a = analyze(hand[0], "per-flow", 0.5, mode=mode)
    j = a.jain
    assert j["slot"].to_list() == [0, 1, 2, 3]
    assert j["n_curves"].to_list() == [1, 2, 2, 1]
    # slot 1: (0.008+0.016)^2 / (2 (0.008^2+0.016^2)) = 0.9; slot 2: flow 1 active with rate 0
    assert j["jain"].to_list() == pytest.approx([1.0, 0.9, 0.5, 1.0], rel=1e-12)


@pytest.mark.parametrize("mode", ["packets", "aggregate"])
def test_hand_summary(hand, mode):
    a = analyze(hand[0], "per-flow", 0.5, mode=mode)
    s = {r["curve"]: r for r in a.summary.to_dicts()}
    f0, f1 = s["Flow 1: cubic ->"], s["Flow 2: bbr <-"]
    assert f0["avg_tput_mbps"] == pytest.approx(3000 * 8 / 1.4 / 1e6, rel=1e-12)
    assert f1["avg_tput_mbps"] == pytest.approx(2000 * 8 / 0.2 / 1e6, rel=1e-12)
    assert f0["mean_delay_ms"] == 20.0 and f1["mean_delay_ms"] == 10.0
    # flow 0: 1000 B dropped; flow 1: 500 B sent at 1.95 s and never delivered nor dropped
    # (in flight at the end): loss counts drops only, CoCo-Beholder's loss counts both
    assert (f0["bytes_sent"], f0["bytes_dropped"], f0["loss_pct"]) == (4000, 1000, 25.0)
    assert (f0["bytes_in_flight_end"], f0["bytes_lost"], f0["coco_loss_pct"]) == (0, 1000, 25.0)
    assert (f1["bytes_sent"], f1["bytes_dropped"], f1["loss_pct"]) == (2500, 0, 0.0)
    assert (f1["bytes_in_flight_end"], f1["bytes_lost"], f1["coco_loss_pct"]) == (500, 500, 20.0)
    assert (f0["start_s"], f0["end_s"]) == (0.2, 1.6)
    r0, r1 = 3000 * 8 / 1.4 / 1e6, 0.08
    assert a.overall_jain == pytest.approx((r0 + r1) ** 2 / (2 * (r0 ** 2 + r1 ** 2)), rel=1e-12)
    if mode == "packets":
        # sorted [10, 20, 30]: median rank round(1)=1, p95 rank round(1.9)=2
        assert (f0["median_delay_ms"], f0["p95_delay_ms"]) == (20.0, 30.0)
        # sorted [5, 15]: median rank round(0.5)=0, p95 rank round(0.95)=1
        assert (f1["median_delay_ms"], f1["p95_delay_ms"]) == (5.0, 15.0)
    else:  # bucket midpoints (10 µs buckets)
        assert (f0["median_delay_ms"], f0["p95_delay_ms"]) == (20.005, 30.005)
        assert (f1["median_delay_ms"], f1["p95_delay_ms"]) == (5.005, 15.005)


def test_hand_total_pools_flows(hand):
    a = analyze(hand[0], "total", 0.5)
    r = a.summary.row(0, named=True)
    assert r["curve"] == "Total: 2 flows"
    assert (r["bytes_sent"], r["bytes_lost"]) == (6500, 1500)
    assert (r["bytes_dropped"], r["bytes_in_flight_end"]) == (1000, 500)
    assert r["loss_pct"] == pytest.approx(100 * 1000 / 6500)
    assert (r["start_s"], r["end_s"]) == (0.2, 1.6)
    assert r["avg_tput_mbps"] == pytest.approx(5000 * 8 / 1.4 / 1e6)
    # pooled delays [5, 10, 15, 20, 30]: median rank 2 -> 15, p95 rank round(3.8)=4 -> 30
    assert (r["median_delay_ms"], r["p95_delay_ms"], r["mean_delay_ms"]) == (15.0, 30.0, 16.0)
    assert a.per_interval["rate_mbps"].to_list() == pytest.approx([0.016, 0.024, 0.016, 0.024])
    assert a.jain["jain"].to_list() == [1.0] * 4
    assert a.overall_jain == 1.0


def test_slot_mean_mode(hand):
    a = analyze(hand[0], "per-flow", 0.5, stat_mode="slot-mean")
    f0 = a.summary.row(0, named=True)
    assert f0["avg_tput_mbps"] == pytest.approx((0.016 + 0.008 + 0.0 + 0.024) / 4)
    assert f0["avg_delay_ms"] == 20.0 and f0["mean_delay_ms"] == 20.0  # (10+20+30)/3 both ways
    assert a.overall_jain == pytest.approx((1 + 0.9 + 0.5 + 1) / 4)
    assert stats_text(a).startswith("Statistics mode: slot-mean (aggregation interval 0.5s)\n\n")


HAND_STATS = """\
== Average and loss statistics ==

Average Jain's index  : 0.704878

-- Curve "Flow 1: cubic ->":
Average throughput    : 0.017143 Mbps
Average one-way delay : 20.000000 ms
Loss                  : 25.000000 %

-- Curve "Flow 2: bbr <-":
Average throughput    : 0.080000 Mbps
Average one-way delay : 10.000000 ms
Loss                  : 20.000000 %

===== Per-packet statistics =====

-- Curve "Flow 1: cubic ->":
Median per-packet one-way delay          : 20.000000 ms
Average per-packet one-way delay         : 20.000000 ms
95th percentile per-packet one-way delay : 30.000000 ms

-- Curve "Flow 2: bbr <-":
Median per-packet one-way delay          : 5.000000 ms
Average per-packet one-way delay         : 10.000000 ms
95th percentile per-packet one-way delay : 15.000000 ms

"""


def test_stats_file_golden(hand, tmp_path):
    a = analyze(hand[0], "per-flow", 0.5)
    assert stats_text(a) == HAND_STATS
    p = write_stats(a, tmp_path)
    assert p.name == "per-flow-stats.log" and p.read_text() == HAND_STATS
    # the statistics do not depend on the interval
    assert stats_text(analyze(hand[0], "per-flow", 0.1)) == HAND_STATS


def test_edge_cases_na_texts(tmp_path):
    exp = make_experiment([("a", "->"), ("b", "->"), ("c", "->"), ("d", "->")], duration_ns=2 * S)
    pk = packets_table([
        (0, 1000, 0, 10 * MS), (0, 1000, 1 * MS, 14_999_999),  # 4.999999 ms span: N/A
        (1, 1000, 0, 10 * MS), (1, 1000, 1 * MS, 15 * MS),     # exactly 5 ms: defined
        (2, 1000, 0, None, 5 * MS),                            # everything lost
        # flow 3 sends nothing
    ])
    res = load(write_results(tmp_path / "r", exp, pk))
    for mode in ("packets", "aggregate"):
        a = analyze(res, "per-flow", 0.5, mode=mode)
        s = a.summary.to_dicts()
        assert s[0]["avg_tput_mbps"] is None
        assert s[1]["avg_tput_mbps"] == pytest.approx(2000 * 8 / 0.005 / 1e6)
        assert s[2]["loss_pct"] == 100.0 and s[2]["avg_tput_mbps"] is None
        assert s[2]["coco_loss_pct"] == 100.0 and s[2]["bytes_in_flight_end"] == 0
        assert s[3]["loss_pct"] is None and s[3]["bytes_sent"] == 0
        assert a.per_interval.filter(pl.col("curve") == s[2]["curve"]).height == 0
        t = stats_text(a)
        assert ('-- Curve "Flow 1: a ->":\nAverage throughput    : '
                "N/A as the curve's duration is less than 5ms\n") in t
        assert ('-- Curve "Flow 3: c ->":\nAverage throughput    : N/A as the curve has no packets\n'
                "Average one-way delay : N/A as the curve has no packets\n"
                "Loss                  : 100.000000 %\n") in t
        assert "Loss                  : N/A as no bytes were sent by the curve's senders\n" in t
        assert ('-- Curve "Flow 4: d ->":\n'
                "Median per-packet one-way delay          : N/A as the curve has no packets\n"
                "Average per-packet one-way delay         : N/A as the curve has no packets\n"
                "95th percentile per-packet one-way delay : N/A as the curve has no packets\n") in t
        # overall Jain only over curves with an average throughput (just flow 2 here)
        assert a.overall_jain == 1.0


def test_no_average_throughput_anywhere(tmp_path):
    exp = make_experiment([("a", "->")], duration_ns=S)
    res = load(write_results(tmp_path / "r", exp, packets_table([(0, 100, 0, None, 1)])))
    a = analyze(res, "per-flow", 0.5)
    assert a.overall_jain is None and a.n_slots == 0 and a.jain.height == 0
    assert ("Average Jain's index  : N/A as none of the curves has average throughput to count "
            "the index over\n") in stats_text(a)


def test_last_arrival_on_slot_boundary(tmp_path):
    exp = make_experiment([("a", "->")], duration_ns=3 * S)
    res = load(write_results(tmp_path / "r", exp, packets_table([
        (0, 1000, 0, 100 * MS), (0, 1000, 1990 * MS, 2 * S)])))
    for mode in ("packets", "aggregate"):
        a = analyze(res, "per-flow", 0.5, mode=mode)
        # the last packet lies in slot 4 = [2.0, 2.5): K = floor(2.0/0.5) + 1 = 5
        assert a.n_slots == 5
        assert a.per_interval["rate_mbps"].to_list() == pytest.approx([0.016, 0, 0, 0, 0.016])


def test_aggregate_interval_must_be_multiple(tmp_path):
    res = make_results(tmp_path / "r", seed=2, record_packets=False)
    with pytest.raises(ValueError, match=r"\(0\.015 s\).*sample_interval \(0\.01 s\)"):
        analyze(res, "per-flow", 0.015)
    with pytest.raises(ValueError, match="no per-packet table"):
        analyze(res, "per-flow", 0.5, mode="packets")
    assert analyze(res, "per-flow", 0.02).mode == "aggregate"


# ---------------------------------------------------------------- aggregate vs packets

@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    return make_results(tmp_path_factory.mktemp("rnd") / "r",
                        flows=[("cubic", "->"), ("bbr", "<-"), ("cubic", "<-"), ("reno", "->")],
                        seed=7, starts_ns=[0, 150 * MS, 333 * MS, 1_234_567_891])


@pytest.mark.parametrize("grouping", ["per-flow", "total", "per-scheme", "per-direction",
                                      "per-scheme-direction"])
@pytest.mark.parametrize("interval", [0.5, 0.03])
def test_aggregate_agrees_with_packets(random_run, grouping, interval):
    p = analyze(random_run, grouping, interval, mode="packets")
    a = analyze(random_run, grouping, interval, mode="aggregate")
    assert p.n_slots == a.n_slots
    assert p.per_interval.equals(a.per_interval)  # rates and per-slot means exactly
    assert p.jain.equals(a.jain)
    assert p.overall_jain == a.overall_jain
    exact = ["curve", "flows", "packets", "avg_tput_mbps", "mean_delay_ms", "loss_pct",
             "coco_loss_pct", "bytes_dropped", "bytes_in_flight_end",
             "bytes_sent", "bytes_lost", "start_s", "end_s"]
    assert p.summary.select(exact).equals(a.summary.select(exact))
    w_ms = random_run.experiment["hist_bucket_ns"] / 1e6
    for col in ("median_delay_ms", "p95_delay_ms"):
        diff = (p.summary[col] - a.summary[col]).abs().max()
        assert diff <= w_ms / 2 + 1e-9
    # same bucket: the aggregate value is the midpoint of the bucket holding the packet value
    for x, y in zip(p.summary["p95_delay_ms"], a.summary["p95_delay_ms"]):
        assert math.floor(x / w_ms) == math.floor(y / w_ms)


def test_random_run_packet_mode_matches_numpy(random_run):
    pk = random_run.packets.filter(pl.col("arrival_ns").is_not_null() & (pl.col("flow") == 1))
    d = (pk["arrival_ns"] - pk["sent_ns"]).to_numpy() / 1e6  # correctly rounded ns -> ms
    s = analyze(random_run, "per-flow").summary.row(1, named=True)
    assert s["median_delay_ms"] == np.percentile(d, 50, method="nearest")
    assert s["p95_delay_ms"] == np.percentile(d, 95, method="nearest")
    assert s["mean_delay_ms"] == pytest.approx(d.mean(), rel=1e-12)


@pytest.mark.parametrize("in_memory", [True, False])
@pytest.mark.parametrize("interval", [0.5, 0.03])
def test_shared_sums_match_separate_analyses(random_run, interval, in_memory, monkeypatch):
    """analysis.cache.Computed: every grouping and the Pantheon summary from one PacketSums
    (one pass over the packets, each curve's ranks once) equal the analyses run on their own,
    to the bit; the percentiles of all planned groupings come from one ranking, in memory or
    by one select_ranks run (above PacketSums' IN_MEMORY_ROWS)."""
    from ccbench.analysis import gather
    from ccbench.analysis.cache import Computed
    from ccbench.analysis.pantheon import pantheon_summary
    runs = []
    for name in ("select_ranks", "ranks_in_memory"):
        real = getattr(gather, name)
        monkeypatch.setattr(gather, name, lambda *a, real=real, **k: runs.append(real) or real(*a, **k))
    if not in_memory:
        monkeypatch.setattr(gather, "IN_MEMORY_ROWS", 0)
    groupings = ["per-flow", "total", "per-scheme", "per-direction", "per-scheme-direction"]
    c = Computed(random_run, interval).plan(*groupings)
    shared = {g: c.analyze(g) for g in groupings}
    pan = c.pantheon()
    assert len(runs) == 1 and (runs[0].__name__ == "ranks_in_memory") == in_memory
    monkeypatch.undo()
    for g in groupings:
        own = analyze(random_run, g, interval)
        assert shared[g].summary.equals(own.summary), g
        assert shared[g].per_interval.equals(own.per_interval), g
        assert shared[g].jain.equals(own.jain) and shared[g].overall_jain == own.overall_jain
        assert shared[g].curve_stats == own.curve_stats
    assert pan.equals(pantheon_summary(random_run))


@pytest.mark.parametrize("rows", [
    [(0, 1000, 0, 10 * MS), (0, 1000, 1 * MS, 14_999_999), (1, 1000, 0, 10 * MS),
     (1, 1000, 1 * MS, 15 * MS), (2, 1000, 0, None, 5 * MS)],   # short, lost, silent flows
    [(0, 100, 0, None, 1)],                                     # nothing delivered
    [],                                                         # nothing sent
], ids=["edges", "all-lost", "empty"])
def test_shared_sums_match_on_edge_cases(tmp_path, rows):
    from ccbench.analysis.cache import Computed
    from ccbench.analysis.pantheon import pantheon_summary
    exp = make_experiment([("a", "->"), ("b", "->"), ("c", "<-"), ("d", "->")], duration_ns=2 * S)
    res = load(write_results(tmp_path / "r", exp, packets_table(rows)))
    c = Computed(res, 0.5).plan("per-flow", "per-direction", "total")
    for g in ("per-flow", "per-direction", "total", "per-scheme"):
        own = analyze(res, g, 0.5)
        assert c.analyze(g).summary.equals(own.summary) and c.analyze(g).jain.equals(own.jain)
        assert c.analyze(g).per_interval.equals(own.per_interval)
    assert c.pantheon().equals(pantheon_summary(res))


# ---------------------------------------------------------------- Pantheon, links, queues

def test_pantheon_summary_hand(hand):
    for res in hand:
        df = pantheon_summary(res)
        assert df["flow"].to_list() == ["all", "0", "1"]
        t, f0, f1 = df.to_dicts()
        assert t["avg_tput_mbps"] == pytest.approx(5000 * 8 / 1.4 / 1e6)
        assert f0["avg_tput_mbps"] == pytest.approx(3000 * 8 / 1.4 / 1e6)
        assert f1["avg_tput_mbps"] == pytest.approx(2000 * 8 / 0.2 / 1e6)
        assert (t["loss_pct"], f0["loss_pct"], f1["loss_pct"]) == pytest.approx(
            (100 * 1500 / 6500, 25.0, 20.0))
        # different directions: no common bottleneck for the total
        assert t["capacity_mbps"] is None and f0["capacity_mbps"] == 200.0
        assert f0["utilization_pct"] == pytest.approx(100 * f0["avg_tput_mbps"] / 200.0)
    p95 = pantheon_summary(hand[0])["p95_delay_ms"].to_list()
    assert p95 == [30.0, 30.0, 15.0]
    text = pantheon_text(pantheon_summary(hand[0]))
    assert text.startswith("-- Total of 2 flows:\nAverage capacity: N/A Mbit/s\n")
    assert "-- Flow 2:\nAverage throughput: 0.08 Mbit/s\n95th percentile per-packet one-way " \
           "delay: 15.000 ms\nLoss rate: 20.00%\n" in text


def test_pantheon_single_arrival_and_shared_bottleneck(tmp_path):
    exp = make_experiment([("a", "->"), ("b", "->")], duration_ns=S, rate_bps=10_000_000)
    res = load(write_results(tmp_path / "r", exp, packets_table([
        (0, 1000, 0, 10 * MS), (1, 1000, 0, 10 * MS), (1, 1000, 10 * MS, 20 * MS)])))
    t, f0, f1 = pantheon_summary(res).to_dicts()
    assert f0["avg_tput_mbps"] == 0.0  # one departure
    assert f1["avg_tput_mbps"] == pytest.approx(2000 * 8 / 0.01 / 1e6)
    assert t["capacity_mbps"] == 10.0
    assert t["utilization_pct"] == pytest.approx(100 * (3000 * 8 / 0.01 / 1e6) / 10.0)


def test_link_utilization_from_tx_bytes(random_run):
    u = link_utilization(random_run)
    assert u["link"].to_list() == [0, 1]
    exp = random_run.experiment
    fs, q = random_run.flowstats, random_run.queues
    for row in u.to_dicts():
        users = [f["id"] for f in exp["flows"] if row["link"] in f["path"]]
        assert row["flows"] == users
        f = fs.filter(pl.col("flow").is_in(users))
        t0, t1 = f["first_sent_ns"].min(), f["last_arrival_ns"].max()
        s = q.filter(pl.col("link") == row["link"]).sort("time_ns")
        s = s.filter((pl.col("time_ns") >= t0) & (pl.col("time_ns") <= t1))
        if t0 == 0:  # time 0 is a sample with tx_bytes = 0
            a_t, a_tx = 0, 0
        else:
            a_t, a_tx = s["time_ns"][0], s["tx_bytes"][0]
        b_t, b_tx = s["time_ns"][-1], s["tx_bytes"][-1]
        expected = 100 * 8 * (b_tx - a_tx) / (200e6 * (b_t - a_t) / 1e9)
        assert row["utilization_pct"] == pytest.approx(expected, rel=1e-12)
        assert (row["t_start_s"], row["t_end_s"]) == (a_t / 1e9, b_t / 1e9)


def test_queue_timeseries(random_run):
    q = queue_timeseries(random_run)
    assert set(q["link"].unique().to_list()) == {0, 1}
    assert q["name"].unique().sort().to_list() == ["r1->r2", "r2->r1"]
    assert (q["qdelay_ms"] - q["bytes"] * 8 / 200e6 * 1e3).abs().max() < 1e-12
    assert queue_timeseries(random_run, links=[0])["link"].unique().to_list() == [0]
