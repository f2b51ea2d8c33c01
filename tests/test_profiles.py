"""Linux stack generations as TCP profiles (ccbench.config.profiles): resolved values, the
keys written beside a profile win, errors, and the behaviours they switch in the simulator."""
from __future__ import annotations

import polars as pl
import pytest

import ccbench
from ccbench import config
from ccbench.config import ConfigError
from ccbench.config.profiles import PROFILES

#: the receive-side keys of today's kernel, written beside an old profile to isolate the others
_TODAYS_RCV = {"rmem": [4096, 131072, "32MiB"], "adv-win-scale": "none", "init-rwnd": "none",
               "drs": "current"}


def _exp(tcp: dict, **kw) -> dict:
    doc = {"duration": kw.pop("duration", 2), "packets": kw.pop("packets", False),
           "central": kw.pop("central", {"rate": "10Mbit", "delay": "50ms"}),
           "tcp": tcp, "flows": kw.pop("flows", [{"scheme": "cubic"}])}
    return config.resolve(doc)


@pytest.mark.parametrize("name", list(PROFILES))
def test_profile_sets_its_values(name):
    tcp = _exp({"profile": name})["tcp"]
    for k, v in PROFILES[name].items():
        assert tcp[k] == v, (name, k)
    assert tcp["profile"] == name


def test_generations_differ_where_linux_changed():
    iw = {n: _exp({"profile": n})["tcp"]["init_cwnd"] for n in PROFILES}
    assert iw["linux-2.6.36"] == 3 and iw["linux-3.7"] == 10          # IW10: 2.6.39
    rto = {n: _exp({"profile": n})["tcp"]["initial_rto_ns"] for n in PROFILES}
    assert rto["linux-2.6.36"] == 3 * 10**9 and rto["linux-3.7"] == 10**9   # RFC 6298: 3.1
    tlp = {n: _exp({"profile": n})["tcp"]["tlp"] for n in PROFILES}
    assert not tlp["linux-3.7"] and tlp["linux-3.10"]                  # TLP: 3.10
    g = {n: _exp({"profile": n})["tcp"]["rtt_granularity_ns"] for n in PROFILES}
    assert g["linux-3.12"] == 10**6 and g["current"] == 0              # µs RTT: 3.15


def test_keys_beside_the_profile_win_and_aliases():
    tcp = _exp({"profile": "linux-2.6.36", "init-cwnd": 10, "tlp": True})["tcp"]
    assert tcp["init_cwnd"] == 10 and tcp["tlp"] is True and tcp["initial_rto_ns"] == 3 * 10**9
    assert _exp({"profile": "Linux-3.10.0"})["tcp"]["tlp"] is True


def test_unknown_profile_names_the_known_ones():
    with pytest.raises(ConfigError, match="known profiles: linux-2.6.36, linux-3.7"):
        _exp({"profile": "linux-2.4"})


def test_no_profile_leaves_the_resolved_experiment_unchanged():
    tcp = _exp({})["tcp"]
    assert not {"profile", "tlp", "sack_compression"} & set(tcp)


def test_initial_window_of_the_profile_is_the_first_flight(tmp_path):
    """The first round trip carries IW segments: 3 with 2.6.36's IW, 10 with 3.7's."""
    first = {}
    for name in ("linux-2.6.36", "linux-3.7"):
        exp = _exp({"profile": name}, packets=True)
        res = ccbench.run(exp, tmp_path / name)
        p = res.packets.sort("sent_ns")
        t0 = p["sent_ns"][0]
        first[name] = p.filter(pl.col("sent_ns") < t0 + 50_000_000).height  # < RTT/2 later
    assert first == {"linux-2.6.36": 3, "linux-3.7": 10}


def test_tail_loss_probe_shortens_short_flows_under_loss(tmp_path):
    """Short flows (20 segments) on a 1 %-loss path: without TLP (3.7) a lost tail segment
    waits for the RTO; with TLP (3.10) a probe recovers it after ~2 RTTs, so fewer flows take
    an RTO-sized time (> 250 ms; the median is 67 ms) and the mean is lower (same seed and
    arrivals; measured 13 vs 9 slow flows of 292 in 60 s, means 96.3 vs 93.6 ms). Handshake
    losses (1-s initial RTO in both) are the same in both runs. Both take today's receive side
    (the profiles' own, a 10-segment SYN-ACK window, spreads the 20 segments over more round
    trips and leaves 4 slow flows in both on this seed)."""
    fct, slow = {}, {}
    for name in ("linux-3.7", "linux-3.10"):
        exp = _exp({"profile": name, **_TODAYS_RCV}, duration=60,
                   central={"rate": "20Mbit", "delay": "10ms", "loss": 0.01},
                   flows=[{"scheme": "cubic",
                           "arrivals": {"rate": 5, "size": {"fixed": "20pkt"}}}])
        res = ccbench.run(exp, tmp_path / name)
        c = res.conns.drop_nulls("completed_ns")
        f = (c["completed_ns"] - c["start_ns"]) / 1e6
        fct[name], slow[name] = f.mean(), int((f > 250).sum())
    assert slow["linux-3.10"] < slow["linux-3.7"], slow
    assert fct["linux-3.10"] < fct["linux-3.7"], fct


def test_fack_before_rack_needs_more_sacks_so_short_flows_wait_for_more_rtos(tmp_path):
    """The 3.7 profile detects losses with the FACK scoreboard (a hole is lost once more than
    3 packets beyond it are SACKed); RACK (4.4+) marks it one RTT + min_rtt/4 after a later
    packet is SACKed. Short flows (20 segments) on a 1 %-loss path without TLP: a loss among
    the last 4 segments leaves FACK too few SACKs and the flow waits for the RTO, so more flows
    take an RTO-sized time (> 250 ms) with FACK than with RACK (same seed and arrivals; early
    retransmit off, as in 2.6.36: with it, 3.5+ FACK does as well as RACK here)."""
    fct, slow = {}, {}
    for rack in (False, True):
        exp = _exp({"profile": "linux-3.7", "rack": rack, "early-retransmit": False}, duration=60,
                   central={"rate": "20Mbit", "delay": "10ms", "loss": 0.01},
                   flows=[{"scheme": "cubic",
                           "arrivals": {"rate": 5, "size": {"fixed": "20pkt"}}}])
        assert exp["tcp"]["rack"] is rack
        res = ccbench.run(exp, tmp_path / str(rack))
        c = res.conns.drop_nulls("completed_ns")
        f = (c["completed_ns"] - c["start_ns"]) / 1e6
        fct[rack], slow[rack] = f.mean(), int((f > 250).sum())
    print(fct, slow)
    assert slow[False] > slow[True], slow
    assert fct[False] > fct[True], fct


def test_rate_halving_before_3_2_recovers_slower_from_loss_bursts(tmp_path):
    """2.6.36 recovers with rate-halving: after a burst of losses it sends at most one packet
    per ACK beyond what is in flight, where PRR (3.2+) sends as many as were delivered up to
    ssthresh. On a path with 2 % loss and a shallow queue, the same seed gives Reno fewer
    packets delivered with rate-halving than with PRR (other 2.6.36 values equal; measured
    3481 vs 3518 packets in 20 s). Growth counts packets ACKed here, as today (with 2.6.36's
    one packet per ACK Reno's window stays small enough on this path that both deliver the
    same)."""
    got = {}
    for prr in (False, True):
        exp = _exp({"profile": "linux-2.6.36", "prr": prr, "count-acks": False}, duration=20,
                   central={"rate": "20Mbit", "delay": "20ms", "loss": 0.02, "queue": "0.5bdp"},
                   flows=[{"scheme": "reno"}])
        assert exp["tcp"]["prr"] is prr
        res = ccbench.run(exp, tmp_path / str(prr))
        got[prr] = res.flowstats["delivered_pkts"][0] if "delivered_pkts" in res.flowstats.columns \
            else res.flows["delivered"].max()
    print(got)
    assert got[False] < got[True], got


def test_early_retransmit_from_3_5_saves_short_flows_some_rtos(tmp_path):
    """With FACK (3.7 profile), a loss in a window of under 4 packets gets too few SACKs;
    early retransmit (3.5+) retransmits after srtt/4 instead of waiting for the RTO. Short
    flows (20 segments, 1 % loss, no TLP): fewer flows take an RTO-sized time with it."""
    slow = {}
    for er in (False, True):
        exp = _exp({"profile": "linux-3.7", "early-retransmit": er}, duration=60,
                   central={"rate": "20Mbit", "delay": "10ms", "loss": 0.01},
                   flows=[{"scheme": "cubic",
                           "arrivals": {"rate": 5, "size": {"fixed": "20pkt"}}}])
        assert exp["tcp"]["early_retransmit"] is er and exp["tcp"]["rack"] is False
        res = ccbench.run(exp, tmp_path / str(er))
        c = res.conns.drop_nulls("completed_ns")
        f = (c["completed_ns"] - c["start_ns"]) / 1e6
        slow[er] = int((f > 250).sum())
    print(slow)
    assert slow[True] < slow[False], slow


# --- receive side: tcp_rmem, tcp_adv_win_scale, the SYN-ACK's window cap, DRS before 3.13 ---


def test_receive_side_keys_of_the_profiles_and_their_overrides():
    tcp = {n: _exp({"profile": n})["tcp"] for n in PROFILES}
    assert tcp["linux-2.6.36"]["adv_win_scale"] == 2 and tcp["linux-3.7"]["adv_win_scale"] == 1
    assert tcp["linux-2.6.36"]["rmem"] == [4096, 87380, 4 << 20]
    assert tcp["linux-3.10"]["rmem"] == [4096, 87380, 6 << 20]
    assert [tcp[n]["init_rwnd"] for n in ("linux-2.6.36", "linux-3.7", "linux-3.10", "linux-3.12")] \
        == [4, 10, 10, 20]
    assert all(tcp[n]["legacy_drs"] for n in PROFILES if n != "current")
    assert not {"adv_win_scale", "init_rwnd", "legacy_drs", "rmem"} & set(tcp["current"])
    t = _exp({"profile": "linux-2.6.36", **_TODAYS_RCV})["tcp"]
    assert "adv_win_scale" not in t and "init_rwnd" not in t and t["legacy_drs"] is False
    with pytest.raises(ConfigError, match="drs"):
        _exp({"drs": "old"})
    with pytest.raises(ConfigError, match="adv-win-scale"):
        _exp({"adv-win-scale": 40})


def _first_flight(tmp_path, tcp: dict) -> int:
    res = ccbench.run(_exp(tcp, packets=True), tmp_path / str(abs(hash(str(tcp)))))
    p = res.packets.sort("sent_ns")
    return p.filter(pl.col("sent_ns") < p["sent_ns"][0] + 50_000_000).height  # < RTT/2 later


def test_synack_window_cap_bounds_the_first_flight(tmp_path):
    """With IW 40 the first flight is the SYN-ACK's window: 4 segments before 2.6.38, 10 to
    3.11, 20 from 3.12 (tcp_select_initial_window), 30 once uncapped (half of 87380 in whole
    segments) and 45 today (half of 131072)."""
    got = {n: _first_flight(tmp_path, {"profile": n, "init-cwnd": 40}) for n in PROFILES}
    assert got == {"linux-2.6.36": 4, "linux-3.7": 10, "linux-3.10": 10, "linux-3.12": 20,
                   "current": 40}
    assert _first_flight(tmp_path, {"profile": "linux-3.12", "init-cwnd": 60,
                                    "init-rwnd": "none"}) == 30
    assert _first_flight(tmp_path, {"init-cwnd": 60}) == 45


def _goodput_bps(tmp_path, tcp: dict, **kw) -> float:
    res = ccbench.run(_exp(tcp, **kw), tmp_path / str(abs(hash(str(tcp) + str(kw)))))
    fs = res.flowstats.row(0, named=True)
    return fs["app_bytes"] * 8 / ((fs["completed_ns"] or 0) - fs["start_ns"]) * 1e9 \
        if fs["completed_ns"] else fs["app_bytes"] * 8 / 20


def test_adv_win_scale_sets_the_window_of_a_buffer_that_does_not_grow(tmp_path):
    """Without autotuning the window is the rmem default's share: 3/4 of 87380 (64 KB less a
    segment) with 2.6.36's tcp_adv_win_scale 2, half (42 KB) with 3.7's 1, so on a 20 Mbit/s,
    100 ms path (250 KB BDP) the window-limited goodput differs by the same 1.5."""
    g = {n: _goodput_bps(tmp_path, {"profile": n, "moderate-rcvbuf": False, "init-cwnd": 10},
                         duration=20, central={"rate": "20Mbit", "delay": "50ms"})
         for n in ("linux-2.6.36", "linux-3.7")}
    ratio = g["linux-2.6.36"] / g["linux-3.7"]
    assert 1.4 < ratio < 1.6, g
    # each is about its window per RTT (64075 and 42230 bytes per ~100 ms)
    assert 4.5e6 < g["linux-2.6.36"] < 5.2e6 and 3.0e6 < g["linux-3.7"] < 3.5e6, g


def test_dynamic_right_sizing_before_3_13_slows_a_long_fat_transfer(tmp_path):
    """The study's single transfer (5 MiB, 200 Mbit/s, 200 ms RTT, 100-packet queues): before
    3.13 DRS lets the window follow only twice the bytes read per RTT, so the receive window
    holds slow start back; with today's receive side the same profile finishes sooner
    (measured: CUBIC 3864 vs 3070 ms on linux-3.12). Growth counts packets ACKed in both, as
    today (with 3.12's one packet per ACK slow start is slow enough that DRS keeps up)."""
    kw = dict(duration=30, central={"rate": "200Mbit", "delay": "98ms", "queue": 100},
              flows=[{"scheme": "cubic", "bytes": "5MiB", "left-rate": "1Gbit",
                      "left-delay": "1ms", "right-rate": "1Gbit", "right-delay": "1ms",
                      "left-queue": 100, "right-queue": 100}])
    p312 = {"profile": "linux-3.12", "count-acks": False}
    old = _goodput_bps(tmp_path, p312, **kw)
    new = _goodput_bps(tmp_path, {**p312, **_TODAYS_RCV}, **kw)
    assert new > 1.15 * old, (old, new)
    # only DRS: the same profile with today's DRS and the old buffer values is as fast
    drs = _goodput_bps(tmp_path, {**p312, "drs": "current"}, **kw)
    assert drs > 1.15 * old, (old, drs)


# --- CUBIC of the profile's kernel (cubic's `generation`) ---

def test_profiles_select_their_kernels_cubic_and_cc_generation_parses():
    gen = {n: _exp({"profile": n})["tcp"].get("cc_generation") for n in PROFILES}
    assert gen == {"linux-2.6.36": 20636, "linux-3.7": 30700, "linux-3.10": 31000,
                   "linux-3.12": 31200, "current": None}
    assert _exp({"cc-generation": "3.10"})["tcp"]["cc_generation"] == 31000
    assert _exp({"cc-generation": "linux-2.6.36"})["tcp"]["cc_generation"] == 20636
    assert "cc_generation" not in _exp({"profile": "linux-3.10", "cc-generation": "current"})["tcp"]
    with pytest.raises(ConfigError, match="YAML reads 3.10 as 3.1"):
        _exp({"cc-generation": 3.10})
    with pytest.raises(ConfigError, match="not a Linux release"):
        _exp({"cc-generation": "three"})


def _delivered(tmp_path, tcp: dict, scheme) -> int:
    """App bytes a 5-MiB transfer moved in 40 s on the study's path with 2 % random loss."""
    exp = _exp(tcp, duration=40, central={"rate": "200Mbit", "delay": "98ms", "queue": 100,
                                          "loss": {"left": 0.02, "right": 0}},
               flows=[{"scheme": scheme, "bytes": "5MiB"}])
    res = ccbench.run(exp, tmp_path / str(abs(hash(str(tcp) + str(scheme)))))
    return res.flowstats["app_bytes"][0]


def test_profile_runs_its_kernels_cubic(tmp_path):
    """A CUBIC flow under a profile runs that kernel's tcp_cubic.c: exactly as the same flow
    with `generation` written, and differently from today's CUBIC on the same profile (under
    2 % loss the 3.10 CUBIC counts ACKs in its TCP-friendly estimate and moves less; measured
    2.52 vs 2.74 MB in 40 s with the stack counting packets, `count-acks: false`; with the
    profile's own ACK counting the stack holds both CUBICs back and they differ by 1 %)."""
    prof = {"profile": "linux-3.10", "count-acks": False}
    today = {**prof, "cc-generation": "current"}
    got = _delivered(tmp_path, prof, "cubic")
    assert got == _delivered(tmp_path, today, {"name": "cubic", "generation": 31000})
    assert got < _delivered(tmp_path, today, "cubic")
    # other schemes take no generation: reno is the same either way
    assert _delivered(tmp_path, prof, "reno") == _delivered(tmp_path, today, "reno")


def test_cwnd_growth_counts_acks_before_3_13(tmp_path):
    """Before 3.13 slow start added one packet per ACK and before 3.19 additive increase took
    one credit per ACK, whatever the ACK covered: with delayed ACKs Reno's 5-MiB transfer on the
    study's path (200 Mbit/s, 200 ms RTT) takes longer on the same profile (measured 4.86 vs
    4.26 s on linux-3.10)."""
    kw = dict(duration=30, central={"rate": "200Mbit", "delay": "98ms", "queue": 100},
              flows=[{"scheme": "reno", "bytes": "5MiB", "left-rate": "1Gbit", "left-delay": "1ms",
                      "right-rate": "1Gbit", "right-delay": "1ms", "left-queue": 100,
                      "right-queue": 100}])
    assert _exp({"profile": "linux-3.12"})["tcp"]["count_acks"] is True
    assert "count_acks" not in _exp({"profile": "current"})["tcp"]
    per_ack = _goodput_bps(tmp_path, {"profile": "linux-3.10"}, **kw)
    per_pkt = _goodput_bps(tmp_path, {"profile": "linux-3.10", "count-acks": False}, **kw)
    assert per_pkt > 1.08 * per_ack, (per_ack, per_pkt)


def _acks_and_data(tmp_path, tcp: dict, **kw) -> tuple[int, int, int]:
    """(pure ACKs of the receiver, data segments, data segments with PSH) in b1's capture."""
    from ccbench.capture.scan import read_capture
    res = ccbench.run(_exp(tcp, **kw), tmp_path / str(abs(hash(str(tcp) + str(kw)))), pcap=80)
    pk, _ = read_capture(res.path / "pcap" / "b1.pcapng")
    pk = pk.filter(pl.col("proto") == 6)
    data = pk.filter(pl.col("payload") > 0)
    acks = pk.filter((pl.col("payload") == 0) & (pl.col("dst") == data["src"][0])
                     & ((pl.col("flags") & 0x07) == 0))
    return acks.height, data.height, int(((data["flags"] & 0x08) > 0).sum())


def test_push_ack_since_6_6_acks_each_write_of_a_paced_application(tmp_path):
    """An application writing one MSS at a time (2 Mbit/s on a 10 Mbit/s path) ends every
    write with PSH; since 6.6 (4720852ed9af) the receiver ACKs such a full-sized segment once
    read, so every segment is ACKed; before, and with `push-ack: false`, pairs share an ACK
    (or the 40-ms timer ACKs a lone one)."""
    kw = dict(duration=3, central={"rate": "10Mbit", "delay": "10ms"},
              flows=[{"scheme": "reno", "app-rate": "2Mbit"}])
    assert _exp({"profile": "linux-3.10"})["tcp"]["push_ack"] is False
    assert "push_ack" not in _exp({"profile": "current"})["tcp"]
    acks, data, psh = _acks_and_data(tmp_path, {}, **kw)
    # the chunks due during the handshake go into the socket as one write (4 segments, one PSH)
    assert data > 400 and psh == data - 3, (data, psh)
    assert acks >= data - 2, (acks, data)
    acks_off, data_off, _ = _acks_and_data(tmp_path, {"push-ack": False}, **kw)
    assert data_off == data
    assert acks_off < 0.7 * data_off, (acks_off, data_off)
    assert _acks_and_data(tmp_path, {"profile": "linux-3.10"}, **kw)[0] < 0.7 * data
