"""The campaign index's metric rows: the direct route (`run_rows` on a run without per-packet
records: plain numbers from the columns) gives the rows of the reference route
(`analysis_rows`: analysis.analyze, link_utilization, fct_table, probes) on runs that
exercise every column — loss, a flow that delivers nothing, finite flows, short-flow
arrivals, latency probes, a parking lot with three bottlenecks — both on the tables as
computed and as read back from disk, to the bit."""
from __future__ import annotations

import pytest

import ccbench
import ccbench.api
from ccbench import config
from ccbench.campaign.metrics import SCHEMA, analysis_rows, run_rows
from simhelp import experiment

SCENARIOS = {
    "dumbbell with loss": lambda: experiment(
        [{"scheme": "cubic"}, {"scheme": "bbr", "start": 0.3}], duration=2, rate="20Mbit",
        queue="0.5bdp", packets=False, central={"loss": 0.01}),
    "finite flows and arrivals": lambda: experiment(
        [{"scheme": "cubic", "flows": 2, "bytes": "200KB", "start": 0.2},
         {"scheme": "reno", "arrivals": {"rate": "20/s", "size": "30KB"}},
         {"scheme": "bbr"}], duration=2, rate="10Mbit", packets=False),
    "probes and a flow that never delivers": lambda: experiment(
        [{"scheme": "probe", "interval": "20ms", "size": 64}, {"scheme": "cubic"},
         {"scheme": "vegas", "start": 1.965}], duration=2, rate="10Mbit", packets=False),
    "parking lot, three bottlenecks": lambda: _parking_lot(),
}


def _parking_lot():
    import yaml
    from pathlib import Path
    f = Path(__file__).resolve().parents[1] / "examples" / "parking-lot.yaml"
    doc = dict(yaml.safe_load(f.read_text()), duration=2, packets=False)
    return config.resolve(doc, source=str(f))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_direct_rows_equal_the_analysis_rows(tmp_path, name):
    exp = SCENARIOS[name]()
    computed = ccbench.api.run(exp, tmp_path / "run", reload=False)
    loaded = ccbench.load(tmp_path / "run")
    want = analysis_rows(loaded)
    assert want.height >= 2
    # and from the encoded columns of a run kept as its summary (columns read one by one)
    kept = {}

    def summarize(r):
        kept["rows"] = run_rows(r)
        return {}

    ccbench.api.run(exp, tmp_path / "kept", keep="summary", summarize=summarize)
    for got in (run_rows(computed), run_rows(loaded), kept["rows"]):
        assert got.schema == want.schema == SCHEMA
        # the same numbers to the bit (not within a tolerance)
        assert got.equals(want), [c for c in SCHEMA if not got[c].equals(want[c])]
    # the columns these runs exercise (a test that compared nulls with nulls proves little)
    non_null = {c for c in SCHEMA if want[c].null_count() < want.height}
    assert {"avg_tput_mbps", "p95_delay_ms", "loss_pct", "jain", "utilization_pct"} <= non_null
    if name.startswith("finite"):
        assert {"fct_mean_ms", "fct_completed"} <= non_null
    if name.startswith("probes"):
        assert "probe_p99_rtt_ms" in non_null
        assert want["avg_tput_mbps"].null_count() == 1  # the flow that starts at the end


def test_runs_with_packets_take_the_analysis_route(tmp_path):
    exp = experiment([{"scheme": "cubic"}, {"scheme": "bbr"}], duration=1, rate="10Mbit",
                     packets=True)
    res = ccbench.api.run(exp, tmp_path / "run", reload=False)
    assert run_rows(res).equals(analysis_rows(res))   # exact percentiles from the packets


@pytest.mark.parametrize("packets", [False, True])
def test_rows_of_a_run_kept_as_its_summary(tmp_path, packets):
    """api.run(keep="summary", summarize=): the rows come from the tables as computed —
    encoded columns decoded on use, tables spilled in chunks read from the chunks — and equal
    those of the same run written whole; nothing but the metadata and summary is written."""
    exp = experiment([{"scheme": "cubic"}, {"scheme": "bbr"}], duration=1, rate="10Mbit",
                     packets=packets)
    whole = run_rows(ccbench.api.run(exp, tmp_path / "whole", reload=False))
    got = {}

    def summarize(res):
        got["rows"] = run_rows(res)
        return {"n": got["rows"].height}

    res = ccbench.api.run(exp, tmp_path / "summary", keep="summary", summarize=summarize,
                          spill_rows=500)
    assert got["rows"].equals(whole)
    assert sorted(p.name for p in (tmp_path / "summary").iterdir()) == [
        "complete.json", "metadata.json", "summary.json"]
    assert res.packets is None and res.flowstats is not None   # spilled: gone; in memory: kept
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with pytest.raises(ValueError, match="keep must be one of"):
        ccbench.api.run(exp, tmp_path / "x", keep="nothing")
