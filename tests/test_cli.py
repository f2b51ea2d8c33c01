"""The CLI end to end: every subcommand through a real subprocess, as a user runs it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ccbench(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "ccbench", *map(str, args)], cwd=cwd or ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    out = tmp_path_factory.mktemp("qs") / "quickstart"
    r = ccbench("run", ROOT / "examples/quickstart.yaml", "-o", out, "--png")
    assert r.returncode == 0, r.stderr
    return out, r


def test_run_writes_results_stats_plots_and_prints_a_summary(quickstart):
    out, r = quickstart
    for t in ("packets", "flows", "queues", "intervals", "delay_hist", "flowstats"):
        assert (out / f"{t}.parquet").stat().st_size > 0
    assert (out / "metadata.json").is_file()
    plots = out / "plots"
    for prefix in ("per-flow", "total", "per-scheme", "per-direction", "per-scheme-direction"):
        for kind in ("avg-rate", "avg-delay", "avg-jain", "ppt-delay"):
            assert (plots / f"{prefix}-{kind}.png").stat().st_size > 1000
        assert "== Average and loss statistics ==" in (plots / f"{prefix}-stats.log").read_text()
    for extra in ("cwnd.png", "rtt.png", "queue.png"):
        assert (plots / extra).stat().st_size > 1000
    report = (out / "report.html").read_text()
    assert "Flow 3: reno &lt;-" in report and "Bokeh" in report
    # self-contained: no file or network reference outside the page
    assert "<script src" not in report and "<link" not in report and "<img" not in report
    # The summary table names every flow and the total.
    for label in ("Flow 1: cubic ->", "Flow 2: cubic ->", "Flow 3: reno <-", "Total: 3 flows"):
        assert label in r.stdout, r.stdout


def test_stats_and_plot_subcommands(quickstart, tmp_path):
    out, _ = quickstart
    r = ccbench("stats", out, "--type", "per-scheme")
    assert r.returncode == 0, r.stderr
    assert '-- Curve "cubic' in r.stdout and "Pantheon" in r.stdout
    r = ccbench("plot", out, "--type", "total", "-i", "0.2", "-o", tmp_path / "p", "--format", "svg")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p" / "total-avg-rate.svg").is_file()


def test_schemes_lists_reno_and_cubic_with_parameters():
    r = ccbench("schemes")
    assert r.returncode == 0, r.stderr
    assert "reno" in r.stdout and "cubic" in r.stdout and "beta" in r.stdout


def test_validate_accepts_good_files_and_names_bad_fields(tmp_path):
    assert ccbench("validate", ROOT / "examples/quickstart.yaml").returncode == 0
    assert ccbench("validate", ROOT / "examples/coco/layout.yml").returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("duration: 10\ncentral: {rate: 100Mbt}\nflows:\n  - {scheme: cubci}\n")
    r = ccbench("validate", bad)
    assert r.returncode == 1
    assert "central.rate" in r.stderr and "100Mbt" in r.stderr
    assert "cubci" in r.stderr and "cubic" in r.stderr  # unknown scheme lists the known ones


def test_run_refuses_bad_input_before_running(tmp_path):
    bad = tmp_path / "late.yaml"
    bad.write_text("duration: 10\nflows:\n  - {scheme: reno, start: 12}\n")
    out = tmp_path / "out"
    r = ccbench("run", bad, "-o", out)
    assert r.returncode == 2
    assert "flows[0].start" in r.stderr
    assert not out.exists()


def test_coco_layout_runs_with_run_py_style_options(tmp_path):
    out = tmp_path / "coco"
    r = ccbench("run", ROOT / "examples/coco/layout.yml", "-o", out, "--base", "5ms", "-r", "50",
                "-t", "6", "-q", "200", "--no-plots", "--no-packets")
    assert r.returncode == 0, r.stderr
    import ccbench as cb
    res = cb.load(out)
    exp = res.experiment
    central = [exp["links"][i] for i in exp["bottleneck_links"]]
    assert all(l["rate_bps"] == 50_000_000 and l["delay_ns"] == 5_000_000 for l in central)
    assert all(l["queue"]["packets"] == 200 for l in central)
    assert exp["duration_ns"] == 6_000_000_000
    r = ccbench("run", ROOT / "examples/coco/layout.yml", "-o", out, "-q", "10", "-q1", "20")
    assert r.returncode == 2 and "-q1/-q2" in r.stderr


def test_config_errors_name_the_file_and_line_in_run_and_validate(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("duration: 5\ncentral: {rate: 10Mbit, delay: 10ms}\nflows:\n"
                 "  - {scheme: cubic}\n  - {scheme: cubik}\n")
    for cmd in ("run", "validate"):
        r = ccbench(cmd, f, cwd=tmp_path)
        assert r.returncode in (1, 2), r.stdout
        assert "bad.yaml:5: flows[1].scheme: unknown scheme \"cubik\"" in r.stderr, (cmd, r.stderr)


def test_version_and_the_coco_flags_say_what_they_do():
    r = ccbench("--version")
    assert r.returncode == 0 and r.stdout.startswith("ccbench ") and "core" in r.stdout
    h = ccbench("run", "--help").stdout
    assert "not yet supported" not in h and "--delta" in h and "random walk" in h


def test_the_summary_gives_jain_per_direction_when_flows_run_both_ways(quickstart):
    _, r = quickstart  # two CUBIC flows -> and one Reno flow <-
    line = next(x for x in r.stdout.splitlines() if x.startswith("Jain's index"))
    assert line.startswith("Jain's index per direction: -> ") and "<- 1.0000 (1 flow)" in line
    assert "over all flows" in line
