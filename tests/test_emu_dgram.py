"""The datagram transport on the kernel backend (docs/datagram.md): `ccbench-dgram` processes in
the flows' namespaces send real UDP through the kernel and the shared link model, and give the
same records and metrics as the simulator's datagram endpoint running the same crate.
`--backend both` and `ccbench compare` put the two side by side. Needs root, /dev/net/tun and
`make build` (ccbench-dgram included), like tests/test_emu.py.

Measured when written (quiet 2-core VM, load ~1.5): fixed at 20 Mbit/s over 50 Mbit/s and a
20 ms RTT: 20.38 / 20.36 Mbit/s, mean one-way delay 10.26 / 10.25 ms (sim / kernel);
aimd-dgram into a 20-packet queue: 42.3 / 42.3 Mbit/s, loss 0.46 / 0.44 %; fixed at 80 Mbit/s:
38.3 / 37.9 % loss."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ccbench
import ccbench.api  # run_both: not one of the lazily re-exported names
from ccbench import expect
from ccbench.backends import emu
from test_emu import pytestmark as _emu_skip
from test_emu_bpf import rerun_when_flagged

pytestmark = [_emu_skip, pytest.mark.skipif(emu.binary("dgram") is None,
                                            reason="ccbench-dgram not built (run `make build`)")]

BODY = """duration: {duration}
seed: 1
central: {{rate: 50Mbit, delay: 10ms, queue: {queue}}}
flows:
  - {{scheme: {scheme}}}
"""


def _tput_after(res, t_s: float) -> float:
    """Mbit/s delivered from `t_s` to the end of the run: what an expectation
    `{metric: throughput, after: <t_s>s}` measures (ccbench.expect)."""
    x = res.experiment
    e = expect.parse([{"metric": "throughput", "after": f"{t_s}s", "min": 0}], x["flows"],
                     x["links"], x["duration_ns"])
    return expect.evaluate(res, e)[0].value


def _both(d: Path, scheme: str, queue="1bdp", duration=3):
    d.mkdir(parents=True, exist_ok=True)
    p = d / "exp.yaml"
    p.write_text(BODY.format(scheme=scheme, queue=queue, duration=duration))
    c = ccbench.api.run_both(p, d / "out", plots=False)
    return c, c.table.row(0, named=True)


@rerun_when_flagged
def test_fixed_rate_gives_the_same_throughput_and_delay_on_both_backends(tmp_path):
    c, row = _both(tmp_path, "{name: fixed, rate-mbps: 20}", duration=4)
    for side in ("a", "b"):
        # 20 Mbit/s of datagram bytes: 20.38 Mbit/s of 1500-byte IP packets, no loss
        assert row[f"avg_tput_mbps_{side}"] == pytest.approx(20 * 1500 / 1472, rel=0.02), side
        assert row[f"loss_pct_{side}"] == 0, side
    assert abs(row["avg_tput_mbps_diff_pct"]) < 1
    assert abs(row["mean_delay_ms_b"] - row["mean_delay_ms_a"]) < 0.3
    assert abs(row["p95_delay_ms_b"] - row["p95_delay_ms_a"]) < 0.5
    # the kernel's flows rows come from the ccbench-dgram sender, with the scheme's columns
    for r in (c.a, c.b):
        assert r.flows["cc_rate_mbps"].drop_nulls().unique().to_list() == [20.0]
        assert r.flows.height > 350
        assert r.flows["srtt_us"].median() == pytest.approx(20_300, rel=0.05)
    agent = c.b.meta["emu"]["agents"][0]
    assert agent["dgram"] == "sender" and agent["undecodable"] == 0 and agent["send_errors"] == 0
    assert (tmp_path / "out" / "compare" / "compare.txt").is_file()


@rerun_when_flagged
def test_loss_shows_on_both_backends(tmp_path):
    _, row = _both(tmp_path / "over", "{name: fixed, rate-mbps: 80}")
    for side in ("a", "b"):
        # 80 Mbit/s into 50: 3/8 of the packets are dropped at the bottleneck
        assert row[f"loss_pct_{side}"] == pytest.approx(37.5, abs=3), side
        assert row[f"avg_tput_mbps_{side}"] == pytest.approx(50, rel=0.02), side
    c, row = _both(tmp_path / "aimd", "{name: aimd-dgram, init-cwnd: 80}", queue=20, duration=4)
    for side in ("a", "b"):
        assert 0.1 < row[f"loss_pct_{side}"] < 2, side
        assert 38 < row[f"avg_tput_mbps_{side}"] < 50, side
    # The first second differs: 80 datagrams at once into a 20-packet queue, and the kernel's
    # run recovers from that first burst in one of two ways — in about one run in ten alone
    # and in both CI runs of 2026-11-30, 735 datagrams delivered in the first 0.5 s against
    # the simulator's 1160 (6.4 % less over the 4 s), in the others as the simulator (either
    # TUN packet path). After it the two agree (those CI runs: +0.8 %), which is what this
    # compares.
    after = [_tput_after(r, 1.0) for r in (c.a, c.b)]
    assert after[1] == pytest.approx(after[0], rel=0.05)
    # the sender saw the losses and cut its window
    fl = c.b.flows
    assert fl["cc_losses"].max() > 0 and fl["lost"].max() > 0
    w = fl["cc_cwnd_pkts"].to_list()
    assert any(b < 0.7 * a for a, b in zip(w, w[1:]))
    assert c.b.packets.filter(pl.col("drop_reason") == "queue").height > 0


WRAPPER = Path(__file__).resolve().parents[1] / "examples" / "wrappers" / "dgram_wrapper.py"


@rerun_when_flagged
def test_a_pantheon_wrapper_around_ccbench_dgram_is_recorded_as_the_scheme_itself(tmp_path):
    """Pantheon's wrapper convention (run_first, `receiver PORT`, `sender IP PORT`) with a UDP
    program behind it: the emulator records the datagrams it forwards, so the flow has the
    throughput, delay and loss of the same scheme run by ccbench itself."""
    body = BODY.format(duration=3, queue="1bdp", scheme="{name: fixed}")
    (tmp_path / "sim.yaml").write_text(body)
    (tmp_path / "wrap.yaml").write_text(body.replace(
        "{name: fixed}", f"{{pantheon: {{wrapper: {WRAPPER}, name: fixed}}}}"))
    sim = ccbench.run(tmp_path / "sim.yaml", tmp_path / "sim")
    wrap = ccbench.run(tmp_path / "wrap.yaml", tmp_path / "wrap", backend="emu")
    assert wrap.meta["emu"]["accurate"], wrap.meta["emu"]["inaccurate_reasons"]
    agent = wrap.meta["emu"]["agents"][0]
    assert agent["command"] == "pantheon" and agent["run_first"] == "receiver"
    a = ccbench.analyze(sim).summary.row(0, named=True)
    b = ccbench.analyze(wrap).summary.row(0, named=True)
    # fixed's default 10 Mbit/s of datagram bytes. The wrapper's processes start late by their
    # start-up (Python, exec), ~0.1-0.3 s of the 3 s, so the whole-run average only has to be
    # close; the second and third seconds must match. (They did not while the hosts shared
    # the machine's TCP hash: the monitor's sock_diag dump walked its 262 144 buckets every
    # 10 ms, ~1.5 ms on the senders' CPU, and the wrapper's sender fell 3.6-5 % short —
    # 2 455 500 against 2 547 000 bytes in a CI run of 2026-11-30; now within 0.3 %.)
    assert a["avg_tput_mbps"] == pytest.approx(10 * 1500 / 1472, rel=0.02)
    assert 0.8 * a["avg_tput_mbps"] < b["avg_tput_mbps"] <= a["avg_tput_mbps"] * 1.01
    after = [_tput_after(r, 1.0) for r in (sim, wrap)]
    assert after[1] == pytest.approx(after[0], rel=0.01)
    assert b["loss_pct"] == 0 and wrap.packets.height > 2000
    assert abs(b["mean_delay_ms"] - a["mean_delay_ms"]) < 0.3


LEDBAT_COCO = """duration: 5
seed: 1
central: {rate: 100Mbit, delay: 1ms, queue: 1000}
flows:
  - {scheme: ledbat-utp, direction: "<-", left-rate: 100Mbit, right-rate: 100Mbit,
     left-delay: 1ms, right-delay: 1ms, left-queue: 1000, right-queue: 1000}
"""


@rerun_when_flagged
def test_a_window_scheme_is_clocked_by_each_acknowledgement_on_the_kernel(tmp_path):
    """LEDBAT caps its window at the flight size plus one packet on every acknowledgement. The
    real sender once read a whole burst of acknowledgements before sending again, so the scheme
    saw the flight emptied by the burst and its window levelled at 120-180 packets on CoCo-
    Beholder's 3-ms layout while the simulator's grew to 470 (p95 one-way delay 20.8 vs 52.4 ms
    in 10 s). Clocked per acknowledgement, both grow alike (measured: 98.92 / 98.93 Mbit/s,
    p95 52.36 / 52.35 ms in 10 s)."""
    p = tmp_path / "exp.yaml"
    p.write_text(LEDBAT_COCO)
    c = ccbench.api.run_both(p, tmp_path / "out", plots=False)
    w = {side: r.flows["cc_cwnd_pkts"].drop_nulls() for side, r in (("sim", c.a), ("kernel", c.b))}
    assert w["sim"].tail(20).mean() > 250
    assert w["kernel"].tail(20).mean() == pytest.approx(w["sim"].tail(20).mean(), rel=0.1)
    row = c.table.row(0, named=True)
    assert row["p95_delay_ms_b"] == pytest.approx(row["p95_delay_ms_a"], rel=0.15)
