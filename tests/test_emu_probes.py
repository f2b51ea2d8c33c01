"""Latency probes on the kernel backend (a UDP echo pair in the agent, crates/emu/src/agent/
probe.rs) beside one CUBIC flow, and the same experiment on the simulator: the probes' RTT
rises under load on both backends, and both write the same `probes` table.

Root only (namespaces, TUN devices) and `make build`; skipped with the reason otherwise. One
3-s kernel run. It must leave no namespace or process behind.
"""
from __future__ import annotations

import polars as pl
import pytest

import ccbench
from ccbench.analysis.probes import probe_series, probe_summary

from test_emu import _ours, _why_not
from test_emu_bpf import rerun_when_flagged

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

YAML = """
duration: 3
seed: 1
central: {rate: 20Mbit, delay: 10ms, queue: 4bdp}
flows:
  - {scheme: probe, interval: 50ms, size: 64, left-delay: 1ms, right-delay: 1ms}
  - {scheme: cubic, start: 1, left-delay: 1ms, right-delay: 1ms}
"""
BASE_MS = 24.0  # 1 + 10 + 1 ms each way


def _runs(tmp):
    f = tmp / "probes.yaml"
    f.write_text(YAML)
    k = ccbench.run(f, tmp / "emu", backend="emu")
    assert _ours(k.meta["emu"]["run_id"]) == ([], []), "namespaces or processes left behind"
    s = ccbench.run(f, tmp / "sim")
    return s, k


@rerun_when_flagged
def test_rtt_rises_under_load_on_both_backends_and_agrees(tmp_path):
    runs = _runs(tmp_path)
    for res in runs:
        p = res.probes
        assert p is not None and p.columns == ["flow", "seq", "sent_ns", "rtt_ns"]
        assert p.height == 60  # every 50 ms for 3 s
        s = probe_series(res)
        before = s.filter(pl.col("t_s") < 0.9)["rtt_ms"]
        load = s.filter(pl.col("t_s") >= 2.0)["rtt_ms"]
        assert BASE_MS - 0.5 < before.median() < BASE_MS + 3, (res.meta["backend"], before.to_list())
        assert load.median() > 2 * BASE_MS, (res.meta["backend"], load.to_list())
        summ = probe_summary(res).row(0, named=True)
        assert summ["lost_pct"] is not None and summ["lost_pct"] < 10
    sim, kern = (probe_summary(r, 2.0).row(0, named=True)["median_rtt_ms"] for r in runs)
    # one RTT under load on both backends: the medians within the agreement matrix's 10 %
    assert abs(kern - sim) <= 0.1 * sim, (sim, kern)
    # the probes are measurement traffic on both: not in the load's records or curves
    for res in runs:
        assert ccbench.analyze(res, "per-flow").summary["curve"].to_list() == ["Flow 2: cubic ->"]
        fs = res.flowstats.filter(pl.col("flow") == 0)
        assert fs.height == 0 or fs["sent_pkts"].sum() == 0, (res.meta["backend"], fs)
