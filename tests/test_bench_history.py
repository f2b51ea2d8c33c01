"""benches/history.py, the regression guard of `make bench`: one JSON line per run with the
commit and the headline figures (docs/benchmarks.md, "Bench history")."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

import flows_scaling  # noqa: E402
import history  # noqa: E402


def fake_measure(binaries, flows, modes, duration, rounds):
    # µs/pkt grows with the flows; noise costs 1.5x
    return [{"build": "ccsim", "flows": n, "noise": m, "loop_cpu_s": 0.1 * n ** 0.5 * (1.5 if m == "kernel" else 1),
             "us_per_pkt": 0.2 * n ** 0.5 * (1.5 if m == "kernel" else 1), "events": 10 * n,
             "bottleneck_packets": 1000, "wall_s": 1.0, "events_per_pkt": 2.0}
            for n in flows for m in modes]


def test_a_run_appends_one_record_with_the_headline_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(flows_scaling, "measure", fake_measure)
    monkeypatch.setattr(history, "quickstart", lambda runs: {"runs": runs, "wall_s": 0.9, "cpu_s": 1.0})
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"results": {"c": {
        "ccbench": {"ok": True, "run_s": 0.5},
        "ns-3 system": {"ok": True, "run_s": 40.0},
        "ns-3 optimized": {"ok": False}}}}))
    ccsim = tmp_path / "ccsim"
    ccsim.write_text("")
    hist = tmp_path / "h" / "bench.jsonl"
    args = ["--flows", "1,100", "--rounds", "1", "--ccsim", str(ccsim), "--results", str(results),
            "--history", str(hist)]
    assert history.main(args) == 0
    assert history.main(args) == 0
    lines = hist.read_text().splitlines()
    assert len(lines) == 2
    rec = json.loads(lines[-1])
    assert len(rec["commit"]) == 12 and isinstance(rec["dirty"], bool)
    assert rec["loop_vs_ns3"] == {"c": {"ns-3 system": 80.0}}
    assert rec["us_per_pkt"]["exact"] == {"1": 0.2, "100": 2.0}
    assert rec["flows_growth"] == {"exact": 10.0, "kernel": 10.0}
    assert rec["noise_over_exact"] == {"1": 1.5, "100": 1.5}
    assert rec["quickstart"] == {"runs": 5, "wall_s": 0.9, "cpu_s": 1.0}


def test_the_quickstart_figure_is_a_real_run():
    q = history.quickstart(1)
    assert q["runs"] == 1 and 0 < q["cpu_s"] < 60 and 0 < q["wall_s"] < 60
    assert history.quickstart(0) is None


def test_stale_ns3_results_are_left_out(tmp_path):
    import os
    import time
    res = tmp_path / "results.json"
    res.write_text(json.dumps({"results": {"c": {"ccbench": {"ok": True, "run_s": 0.5},
                                                 "ns-3 system": {"ok": True, "run_s": 40.0}}}}))
    assert history.ns3_ratios(res, 6.0) == {"c": {"ns-3 system": 80.0}}   # fresh: used
    seven_h_ago = time.time() - 7 * 3600
    os.utime(res, (seven_h_ago, seven_h_ago))
    assert history.ns3_ratios(res, 6.0) is None                           # 7 h old: left out
    assert history.ns3_ratios(tmp_path / "missing.json", 6.0) is None


def test_the_scaling_table_reads_growth_and_noise_ratio():
    text = flows_scaling.table(fake_measure({}, [1, 100], ["exact", "kernel"], 1, 1))
    assert "| ccsim | kernel | 100 | 1.500 | 1000 | 2.00 | 3.000 | 10.00 | 1.50 |" in text
