"""Undo of spurious reductions, F-RTO and TCP Small Queues, end to end from the YAML keys
(`tcp: {undo, frto, tsq, limit-output-bytes}`) through the simulator (sender/undo.rs,
sender/output.rs `tsq_check`, the engine's host-link accounting). The hand-built ACK sequences
are in crates/sim/src/tcp/sender/undo_tests.rs."""
from __future__ import annotations

import polars as pl
import pytest

import ccbench
from ccbench import config
from ccbench.backends.emu.tcpset import host_sysctls, kernel_switches
from ccbench.config import ConfigError


def _run(tmp_path, name: str, tcp: dict, *, central: dict, flow: dict | None = None,
         duration: float = 20, host: dict | None = None):
    doc = {"duration": duration, "seed": 1, "packets": False, "central": central,
           "flows": [{"scheme": "cubic", "tcp": tcp, **(flow or {})}], **({"host": host} if host else {})}
    return ccbench.run(config.resolve(doc), tmp_path / name)


#: one-way delay 10 ms, every 2.5 s 500 ms for 2.5 s: each step up stalls the ACK clock for
#: longer than the RTO, and the data in flight then arrives: a spurious timeout
SPIKE = {"rate": "20Mbit", "queue": 200,
         "delay": {"square": {"low": "10ms", "high": "500ms", "period": "5s"}}}
#: Exact timing for the spike runs: with host noise, whether the reordering at a step *down*
#: of the delay sets off a fast recovery is down to the seed (with F-RTO, seeds 1-5 deliver
#: 26.1-27.8 MB, without it 26.3-26.8), which hides the undo's gain in delivered bytes (the
#: retransmissions stay apart with noise: 84-146 without F-RTO, 26-41 with it).
EXACT = {"noise": "exact"}


def _spurious(tmp_path, frto: str) -> tuple[int, int, float]:
    """(retransmitted packets, flow samples in Loss, delivered MB) of the spike run."""
    res = _run(tmp_path, frto, {"frto": frto}, central=SPIKE, host=EXACT)
    fs = pl.read_parquet(res.path / "flowstats.parquet").row(0, named=True)
    fl = pl.read_parquet(res.path / "flows.parquet")
    return fs["retrans_pkts"], fl.filter(pl.col("ca_state") == "loss").height, fs["delivered_bytes"] / 1e6


def test_frto_undoes_spurious_timeouts_that_conventional_recovery_pays_for(tmp_path):
    """The same delay spikes with the three F-RTO generations: without F-RTO every timeout
    marks the whole window lost and slow-starts from one segment, retransmitting what was
    only delayed; RFC 5682 (3.10+) detects the spurious timeouts and undoes them; the pre-3.10
    F-RTO keeps the window until its verdict and never enters Loss here."""
    off = _spurious(tmp_path, "off")
    new = _spurious(tmp_path, "rfc5682")
    old = _spurious(tmp_path, "pre-3.10")
    assert off[0] > 2 * new[0], (off, new)           # retransmissions
    assert off[1] > 3 * new[1], (off, new)           # samples in Loss
    assert new[2] > off[2] and old[2] > off[2], (off, new, old)
    assert old[1] == 0 and old[0] < new[0], (old, new)


def test_undo_false_keeps_every_spurious_reduction(tmp_path):
    """`undo: false` (ablation): F-RTO still sends new data instead of retransmitting what was
    only delayed, but its verdict no longer restores the window: the flow stays in Loss,
    slow-starting from one segment, several times as long, and moves less."""
    base = _spurious(tmp_path, "rfc5682")
    res = _run(tmp_path, "noundo", {"undo": False}, central=SPIKE, host=EXACT)
    fs = pl.read_parquet(res.path / "flowstats.parquet").row(0, named=True)
    loss = pl.read_parquet(res.path / "flows.parquet").filter(pl.col("ca_state") == "loss").height
    assert loss > 3 * base[1], (loss, base)
    assert fs["delivered_bytes"] / 1e6 < base[2] - 0.3, (fs["delivered_bytes"], base)


#: the sender's own 10 Mbit/s link, 30 packets deep, is the bottleneck
HOST_BOTTLENECK = dict(central={"rate": "100Mbit", "delay": "20ms", "queue": 1000},
                       flow={"left-rate": "10Mbit", "left-delay": "1ms", "left-queue": 30},
                       duration=10)


def _host(tmp_path, tsq: str):
    res = _run(tmp_path, f"tsq-{tsq}", {"tsq": tsq}, **HOST_BOTTLENECK)
    fs = pl.read_parquet(res.path / "flowstats.parquet").row(0, named=True)
    q = pl.read_parquet(res.path / "queues.parquet").filter(pl.col("link") == 0)
    srtt = pl.read_parquet(res.path / "flows.parquet")["srtt_us"].mean() / 1e3
    return fs, q["drops"].max(), q["packets"].mean(), srtt


def test_tsq_keeps_a_bottlenecked_host_link_short(tmp_path):
    """Today's TSQ holds what exceeds two skbs (or 1 ms at the pacing rate) in the socket:
    the host's 30-packet queue never overflows and the RTT the sender sees drops by the
    queue's 20-odd packets; the link stays as busy (same goodput). 3.6's fixed 128 KiB is
    about 56 packets of truesize, more than the queue holds: there it changes nothing."""
    off, off_drops, off_q, off_rtt = _host(tmp_path, "off")
    cur, cur_drops, cur_q, cur_rtt = _host(tmp_path, "current")
    v36, v36_drops, _, _ = _host(tmp_path, "3.6")
    assert off_drops > 0 and off_q > 15, (off_drops, off_q)
    assert cur_drops == 0 and cur_q < 3, (cur_drops, cur_q)
    assert cur_rtt < off_rtt - 15, (cur_rtt, off_rtt)
    assert abs(cur["delivered_bytes"] - off["delivered_bytes"]) < 0.01 * off["delivered_bytes"]
    assert v36_drops == off_drops


def test_profiles_and_keys_resolve():
    def tcp(t):
        return config.resolve({"duration": 1, "central": {"rate": "10Mbit", "delay": "10ms"},
                               "tcp": t, "flows": [{"scheme": "reno"}]})["tcp"]
    assert tcp({"profile": "linux-2.6.36"})["frto"] == "pre-3.10"
    assert tcp({"profile": "linux-3.7"})["frto"] == "pre-3.10"
    assert "frto" not in tcp({"profile": "linux-3.10"})           # the simulator's default
    assert tcp({"profile": "linux-3.7", "frto": "off"})["frto"] == "off"
    assert tcp({"tsq": "3.12"})["limit_output_bytes"] == 131072
    assert tcp({"tsq": "current", "limit-output-bytes": "1MiB"})["limit_output_bytes"] == 1 << 20
    assert "tsq" not in tcp({"profile": "linux-3.10"})             # see docs/simulator.md


@pytest.mark.parametrize("key,value,fix", [("frto", "rfc9999", "frto: rfc5682"),
                                           ("tsq", "3.8", "tsq: current"),
                                           ("undo", "maybe", "")])
def test_bad_values_name_the_field_and_the_fix(key, value, fix):
    with pytest.raises(ConfigError) as e:
        config.resolve({"duration": 1, "central": {"rate": "10Mbit", "delay": "10ms"},
                        "tcp": {key: value}, "flows": [{"scheme": "reno"}]})
    msg = str(e.value)
    assert key in msg and fix in msg, msg


def test_emulator_sets_tcp_frto():
    assert host_sysctls({"tcp": {"frto": "off"}})["net.ipv4.tcp_frto"] == "0"
    assert host_sysctls({"tcp": {}})["net.ipv4.tcp_frto"] == "2"
    assert host_sysctls({"tcp": {"frto": "pre-3.10"}})["net.ipv4.tcp_frto"] == "2"


def test_emulator_records_what_the_kernel_cannot_apply():
    sw = kernel_switches({"tcp": {"frto": "pre-3.10", "undo": False, "tsq": "current"}})
    assert sw["frto"] == {"requested": "pre-3.10", "kernel": "rfc5682", "applied": False}
    assert sw["undo"]["applied"] is False and sw["tsq"]["applied"] is False
    sw = kernel_switches({"tcp": {"frto": "off"}})
    # the kernel always defers small sends (TSO deferral); the simulator does only with
    # tcp: {tso-defer: true}: recorded as the one difference of a default experiment
    assert sw["tso_defer"] == {"requested": False, "kernel": True, "applied": False}
    assert all(v["applied"] for k, v in sw.items() if k != "tso_defer"), sw
    assert kernel_switches({"tcp": {"tso_defer": True}})["tso_defer"]["applied"]
    assert sw["frto"]["kernel"] == "off"
