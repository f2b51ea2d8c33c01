"""benches/big_run.py, the big run of issue 31 (docs/benchmarks.md, "Big run"): the bench file
is the case the issue names, and the runner splits a real run's CPU time into stages that add
up to the child's own total."""
import sys
from pathlib import Path

import yaml

import ccbench

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

import big_run  # noqa: E402


def test_the_bench_file_is_1000_cubic_flows_at_10_gbit_for_60_s_with_packets():
    exp = ccbench.load_experiment(str(big_run.SCENARIO))
    assert exp["duration_ns"] == 60 * 10**9 and exp["record_packets"] is True
    assert len(exp["flows"]) == 1000 and {f["scheme"] for f in exp["flows"]} == {"cubic"}
    assert "10Gbit" in big_run.SCENARIO.read_text()


def test_a_run_is_split_into_stages_that_add_up(tmp_path):
    doc = yaml.safe_load(big_run.SCENARIO.read_text())
    doc.update(duration=0.5)
    doc["flows"][0]["flows"] = 3
    f = tmp_path / "small.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = big_run.measure(str(ROOT / "python"), f, tmp_path / "out")
    st = r["stages"]
    assert set(st) == set(big_run.STAGES)
    assert all(v >= 0 for k, v in st.items() if k != "other"), st
    assert st["loop"] > 0 and st["records"] > 0 and st["summary"] > 0
    assert abs(sum(st.values()) - r["cpu_s"]) < 1e-6
    assert r["packet_rows"] > 0 and r["out_bytes"] > 0 and r["peak_rss_mib"] > 50
    text = big_run.table([dict(r, label="x")], 0.5)
    assert "| x |" in text and f"{r['cpu_s'] / 0.5:.3f}" in text
