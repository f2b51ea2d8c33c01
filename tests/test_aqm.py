"""Queue disciplines end to end (crates/netmodel/src/qdisc/, config/queues.py): the resolved
queue of each `type`, and scenario tests of what each discipline is for.

Path: 100 Mbit/s bottleneck with 20 ms one-way delay, 1 Gbit/s / 1 ms side links: base RTT
2·(1 + 20 + 1) ms = 44 ms (+ serialisation), BDP ≈ 367 packets; a 1500-byte packet takes
0.12 ms on the bottleneck. The `queues` table samples every 10 ms; `sojourn_us` is the sojourn
time of the packet most recently dequeued. Steady state is taken from 5 s on. Numbers in the
comments were measured with seed 1.
"""
from __future__ import annotations

import polars as pl
import pytest

from ccbench.config import ConfigErrors
from simhelp import experiment, run

PATH = dict(rate="100Mbit", delay="20ms")
T0 = 5.0


def central_queue(exp: dict, direction: int = 0) -> dict:
    return exp["links"][exp["bottleneck_links"][direction]]["queue"]


def bottleneck(res, t0_s=T0):
    c = res.experiment["bottleneck_links"][0]
    return res.queues.filter((pl.col("link") == c) & (pl.col("time_ns") >= int(t0_s * 1e9)))


def utilisation(res, t0_s=T0, rate_bps=100e6):
    q = bottleneck(res, t0_s)
    dt = (q["time_ns"][-1] - q["time_ns"][0]) / 1e9
    return (q["tx_bytes"][-1] - q["tx_bytes"][0]) * 8 / dt / rate_bps


# ------------------------------------------------------------------------------- config

def test_types_resolve_with_linux_defaults_and_per_direction():
    e = experiment([{"scheme": "cubic"}], queue={"left": {"type": "codel", "ecn": True},
                                                "right": {"kind": "fq_codel"}})
    assert central_queue(e, 0) == {"kind": "codel", "packets": 1000, "bytes": None,
                                   "target_ns": 5_000_000, "interval_ns": 100_000_000,
                                   "ce_threshold_ns": None, "mtu": 1500, "ecn": True}
    fq = central_queue(e, 1)
    assert (fq["kind"], fq["packets"], fq["quantum"], fq["ecn"], fq["drop_batch_size"],
            fq["memory_limit"]) == ("fq_codel", 10240, 1514, True, 64, 32 << 20)
    pie = central_queue(experiment([{"scheme": "cubic"}], queue={"type": "pie"}))
    assert (pie["packets"], pie["target_ns"], pie["tupdate_ns"], pie["alpha"], pie["beta"],
            pie["max_burst_ns"], pie["ecn"], pie["dq_rate_estimator"]) == (
        1000, 15_000_000, 15_000_000, 0.125, 1.25, 150_000_000, False, False)
    fqp = central_queue(experiment([{"scheme": "cubic"}], queue={"type": "fq-pie"}))
    assert (fqp["kind"], fqp["packets"], fqp["ecn_prob"]) == ("fq_pie", 10240, 10)
    # Side links: both ends of a1<->r1 get the discipline.
    e = experiment([{"scheme": "cubic", "left-queue": {"type": "drophead", "limit": "64KB"}}])
    side = [l["queue"] for l in e["links"] if l["role"] == "left"]
    assert side == [{"kind": "drophead", "packets": None, "bytes": 64000}] * 2


def test_mahimahi_names_and_bdp_sizes():
    e = experiment([{"scheme": "cubic"}],
                   queue={"type": "pie", "args": "packets=200,qdelay_ref=20,max_burst=100"})
    q = central_queue(e)
    assert (q["packets"], q["target_ns"], q["max_burst_ns"], q["tupdate_ns"]) == (
        200, 20_000_000, 100_000_000, 15_000_000)
    q = central_queue(experiment([{"scheme": "cubic"}],
                                 queue={"type": "droptail", "packets": 100, "bytes": 150000}))
    assert (q["packets"], q["bytes"]) == (100, 150000)
    assert central_queue(experiment([{"scheme": "cubic"}], queue={"type": "infinite"})) == {
        "kind": "droptail", "packets": None, "bytes": None}
    # RED thresholds in BDP multiples resolve to packets, rounded up (BDP = 100 Mbit/s · 44 ms
    # = 550 kB = 366.7 packets of 1500 B), and the idle-decay bandwidth is the link's rate.
    q = central_queue(experiment([{"scheme": "cubic"}], **PATH,
                                 queue={"type": "red", "limit": "2bdp", "min": "0.1bdp",
                                        "max": "0.3bdp"}))
    assert (q["packets"], q["min_packets"], q["max_packets"], q["bandwidth_bps"]) == (
        734, 37, 110, 100_000_000)


@pytest.mark.parametrize("queue, path, words", [
    ({"type": "codel", "targt": "5ms"}, "central.queue.targt",
     'did you mean "target"? valid keys: type, limit, packets, bytes, target, interval'),
    ({"type": "pie", "quantum": 1514}, "central.queue.quantum", "max-burst"),
    ({"type": "cake"}, "central.queue.type", "valid types: droptail, drophead, red, codel, "
                                             "fq_codel, pie, fq_pie"),
    ({"type": "red", "min": 30, "max": "20KB"}, "central.queue.max", "different units"),
    ({"type": "red", "min": 50, "max": 40}, "central.queue.max", "must be above min"),
    ({"type": "pie", "alpha": "fast"}, "central.queue.alpha", "not a gain"),
    ({"type": "codel", "limit": 10, "packets": 10}, "central.queue.limit", "given twice"),
])
def test_queue_errors_name_path_and_valid_values(queue, path, words):
    with pytest.raises(ConfigErrors) as ei:
        experiment([{"scheme": "cubic"}], queue=queue)
    errs = ei.value.errors
    assert len(errs) == 1 and errs[0].path == path and words in str(errs[0]), str(ei.value)


# ----------------------------------------------------------------------------- scenarios

@pytest.fixture(scope="module")
def four_cubic(tmp_path_factory):
    """Four CUBIC flows for 20 s through codel, pie and a 1000-packet droptail queue."""
    tmp = tmp_path_factory.mktemp("aqm4")
    out = {}
    for name, queue in [("codel", {"type": "codel"}), ("pie", {"type": "pie"}),
                        ("droptail", 1000)]:
        e = experiment([{"scheme": "cubic", "flows": 4}], duration=20, queue=queue,
                       packets=False, **PATH)
        out[name] = run(tmp, e, name)
    return out


def test_codel_holds_the_sojourn_near_its_5ms_target(four_cubic):
    """CoDel's invariant is on the *minimum* sojourn over an interval: it starts dropping when
    the sojourn has stayed above 5 ms for 100 ms. The window minimum can overshoot by what
    arrives during the senders' reaction (one RTT, 44 ms, after a drop); four CUBIC sawtooths
    keep the median just under target. Measured on this scenario (seeded, host noise on) with
    target 4 / 5 / 6 ms: largest 100-ms window minimum 4.69 / 5.74 / 6.75 ms, median
    3.38 / 4.47 / 5.23 ms, p95 4.95 / 5.93 / 6.81 ms. The bounds sit between the 5-ms values
    and the neighbouring targets' so that a default of 4 or 6 ms fails: window minimum
    <= 6.2 ms, median in [3.9, 4.9] ms, p95 <= 6.4 ms. Droptail's median is ~105 ms."""
    q = bottleneck(four_cubic["codel"])
    soj = q["sojourn_us"].to_list()
    window_min = [min(soj[i:i + 10]) for i in range(0, len(soj) - 10, 10)]  # 100 ms windows
    assert max(window_min) <= 6_200, max(window_min)
    med = q["sojourn_us"].median()
    assert 3_900 <= med <= 4_900, med
    assert q["sojourn_us"].quantile(0.95) <= 6_400
    assert bottleneck(four_cubic["droptail"])["sojourn_us"].median() > 80_000  # measured 105
    assert q["drops"][-1] > q["drops"][0] and q["marks"][-1] == 0
    assert utilisation(four_cubic["codel"]) > 0.95


def test_pie_holds_the_queue_delay_at_its_15ms_target(four_cubic):
    """PIE's integral term drives the *average* delay to target (RFC 8033 §4): the mean
    sampled sojourn is within ±20 % of 15 ms (measured 14.7 ms) and the tail stays below
    twice the target (measured p95 19.8 ms), at full utilisation."""
    q = bottleneck(four_cubic["pie"])
    mean = q["sojourn_us"].mean()
    assert 12_000 <= mean <= 18_000, mean
    assert q["sojourn_us"].quantile(0.95) <= 30_000
    assert utilisation(four_cubic["pie"]) > 0.95


@pytest.mark.parametrize("queue", [{"type": "fq_codel"}, {"type": "fq_pie"}])
def test_flow_queueing_isolates_a_sparse_flow(tmp_path, queue):
    """A bulk CUBIC flow and a sparse one (receive window 3 KB: two packets per RTT). With
    FQ the sparse flow's packets find their own queue empty and go first (new-flow priority):
    its one-way delay stays within 1 ms of the 22 ms propagation (measured 22.2 ms with both
    fq_codel and fq_pie), while behind a 1000-packet droptail queue it carries the bulk
    flow's standing queue (measured 115.5 ms)."""
    groups = [{"scheme": "cubic"}, {"scheme": "cubic", "tcp": {"rwnd": "3KB"}, "start": 2}]
    res = {}
    for name, q in [("fq", queue), ("droptail", 1000)]:
        e = experiment(groups, duration=12, queue=q, packets=False, **PATH)
        res[name] = run(tmp_path, e, name)
    base_owd_ms = e["flows"][1]["base_rtt_ns"] / 2e6
    owd = {k: (r.flowstats["delay_sum_ns"] / r.flowstats["delivered_pkts"] / 1e6).to_list()
           for k, r in res.items()}
    assert owd["fq"][1] - base_owd_ms < 1.0, owd
    assert owd["droptail"][1] - base_owd_ms > 50.0, owd
    assert res["fq"].flowstats["delivered_pkts"][1] > 300  # the sparse flow did run
    assert res["fq"].flowstats["dropped_pkts"][1] == 0


def test_red_with_ecn_marks_ect_flows_and_drops_the_others(tmp_path):
    """RED (packet mode, min 30, max 90, max_p 0.02, ecn): the same CUBIC flow negotiating
    ECN sees CE marks and no drop; without ECN, RED drops instead and marks nothing
    (measured 67 marks / 0 drops vs 0 marks / 39 drops over 15 s)."""
    red = {"type": "red", "limit": 400, "min": 30, "max": 90, "ecn": True}
    out = {}
    for ecn in (True, False):
        e = experiment([{"scheme": "cubic", "ecn": ecn}], duration=15, queue=red,
                       packets=False, **PATH)
        r = run(tmp_path, e, f"ecn{ecn}")
        q = bottleneck(r, 0)
        out[ecn] = (q["marks"][-1], q["drops"][-1], r.flowstats["retrans_pkts"][0])
    marks, drops, retrans = out[True]
    assert marks > 10 and drops == 0 and retrans == 0, out
    marks, drops, retrans = out[False]
    assert marks == 0 and drops > 10 and retrans > 0, out


def test_drophead_drops_the_oldest_packet(tmp_path):
    """100-packet queue at 20 Mbit/s (0.6 ms per packet). Droptail drops the arriving packet,
    1 ms after it was sent (the side link; measured 1.04 ms for every drop). Drophead drops
    the packet at the head, which has waited its turn in the queue: measured 31–60 ms after
    sending (60 ms = a full queue)."""
    wait = {}
    for name, q in [("drophead", {"type": "drophead", "limit": 100}), ("droptail", 100)]:
        e = experiment([{"scheme": "cubic"}], duration=5, rate="20Mbit", delay="10ms", queue=q)
        r = run(tmp_path, e, name)
        c = e["bottleneck_links"][0]
        d = r.packets.filter(pl.col("drop_link") == c)
        wait[name] = ((d["drop_ns"] - d["sent_ns"]) / 1e6).to_list()
    assert wait["droptail"] and max(wait["droptail"]) < 1.5, wait
    assert wait["drophead"] and min(wait["drophead"]) > 20.0, wait
