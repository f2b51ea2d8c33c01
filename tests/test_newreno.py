"""Classic NewReno (RFC 6582) = Linux's non-SACK recovery path (`tcp_is_reno`), used when SACK is
off (`tcp: {sack: false}`) and by the `newreno` scheme for its flows.

Scenario: 100 Mbit/s, base RTT 24 ms (BDP 200 packets), a 20-packet buffer. Slow start overshoots
it and loses a few dozen packets in one window; NewReno repairs one hole per round trip (each
partial ACK marks and retransmits the next hole) without waiting for an RTO, so the first
recovery lasts ≈ (holes) × RTT. Before the non-SACK path existed, `sack: false` left the sender
to recover by RTO only (≥ 200 ms each, with backoff).
"""
from __future__ import annotations

import polars as pl

from simhelp import experiment, run

DURATION = 6


def _run(tmp_path, name, flows, **top):
    # Exact timing: the test counts the losses of one slow-start overshoot burst.
    top.setdefault("host", {"noise": "exact"})
    # A fixed receive window: the test isolates the sender's recovery logic from the
    # receiver's window (docs/simulator.md, "Many holes in a small receive buffer").
    # A large send buffer from the start likewise (tcp_wmem default = max: the buffer never
    # shrinks). With Linux's default tcp_wmem the autotuned buffer (2 × the slow-start cwnd ×
    # 2304 B) fills during this 40-RTT repair, because it counts every byte above snd_una; new
    # data and the dupACKs it would draw stop, and a segment lost during the repair is found
    # only by an RTO at 1.32 s. That is the kernel's accounting, not the recovery logic this
    # test is about.
    top["tcp"] = {"rwnd": "32MiB", "wmem": [4096, "64MiB", "64MiB"], **top.get("tcp", {})}
    exp = experiment(flows, duration=DURATION, rate="100Mbit", delay="10ms", queue=20,
                     packets=True, **{"sample-interval": "1ms"}, **top)
    return run(tmp_path, exp, name=name)


def _recovery_spans(flows: pl.DataFrame) -> list[tuple[int, int]]:
    """(start, end) ns of each run of consecutive 'recovery' samples."""
    spans, start, prev = [], None, None
    for t, st in zip(flows["time_ns"], flows["ca_state"]):
        if st == "recovery" and start is None:
            start = t
        elif st != "recovery" and start is not None:
            spans.append((start, prev))
            start = None
        prev = t
    if start is not None:
        spans.append((start, prev))
    return spans


def test_newreno_repairs_a_burst_of_losses_one_per_rtt_without_rto(tmp_path):
    res = _run(tmp_path, "newreno", [{"scheme": "newreno"}])
    assert res.experiment["flows"][0]["scheme"] == "newreno"
    pk = res.packets
    drops = pk.filter(pl.col("drop_ns").is_not_null())
    first = drops["drop_ns"].min()
    burst = drops.filter(pl.col("drop_ns") < first + 30_000_000).height  # within one RTT
    fl = res.flows
    spans = _recovery_spans(fl)
    s0 = spans[0]
    per_hole_ms = (s0[1] - s0[0]) / burst / 1e6
    retrans = res.flowstats["retrans_pkts"].sum()
    print(f"burst {burst} losses, first recovery {(s0[1] - s0[0]) / 1e6:.0f} ms = "
          f"{per_hole_ms:.1f} ms/hole, drops {drops.height}, retrans {retrans}, "
          f"states {fl['ca_state'].value_counts().to_dicts()}")
    assert burst >= 20                      # many losses in one window
    assert "loss" not in set(fl["ca_state"])  # never an RTO
    assert retrans == drops.height          # one retransmission per loss, none spurious
    # RFC 6582: one hole per partial ACK, i.e. per RTT (24 ms + up to 2.4 ms of queue).
    assert 22 <= per_hole_ms <= 30
    # After the burst the flow runs Reno's sawtooth in a 0.1-BDP buffer: cwnd between
    # (200 + 20)/2 and 220 packets, i.e. about 80 % utilisation; RTO-driven recovery would not
    # get near this.
    q = res.queues.filter((pl.col("link") == res.experiment["bottleneck_links"][0])
                          & (pl.col("time_ns") >= 3_000_000_000))
    util = (q["tx_bytes"].max() - q["tx_bytes"].min()) * 8 / 100e6 / \
        ((q["time_ns"].max() - q["time_ns"].min()) / 1e9)
    print(f"utilisation 3-6 s: {util:.3f}")
    assert util > 0.7


def test_reno_with_sack_off_is_newreno(tmp_path):
    a = _run(tmp_path, "newreno", [{"scheme": "newreno"}])
    b = _run(tmp_path, "reno-nosack", [{"scheme": "reno"}], tcp={"sack": False})
    c = _run(tmp_path, "reno-group-nosack", [{"scheme": "reno", "tcp": {"sack": False}}])
    cols = ["sent_pkts", "delivered_pkts", "dropped_pkts", "retrans_pkts", "app_bytes"]
    assert a.flowstats.select(cols).equals(b.flowstats.select(cols))
    assert a.flowstats.select(cols).equals(c.flowstats.select(cols))
    assert a.flows["cwnd"].equals(b.flows["cwnd"])


def test_sack_recovers_the_same_burst_in_a_few_rtts(tmp_path):
    # Contrast: with SACK (RACK) the holes of the burst are repaired together.
    nr = _recovery_spans(_run(tmp_path, "newreno", [{"scheme": "newreno"}]).flows)[0]
    sk = _recovery_spans(_run(tmp_path, "reno", [{"scheme": "reno"}]).flows)[0]
    print(f"first recovery: newreno {(nr[1] - nr[0]) / 1e6:.0f} ms, "
          f"reno+SACK {(sk[1] - sk[0]) / 1e6:.0f} ms")
    assert (sk[1] - sk[0]) * 5 < nr[1] - nr[0]
