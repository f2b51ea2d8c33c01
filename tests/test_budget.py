"""Budgets before work (issue 11, class 1): bounded YAML documents, run estimates refused
over the memory/time budget with the estimate in the message, analysis intervals."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ccbench
from ccbench import budget, config

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, cwd=None, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "ccbench", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, env=env, timeout=timeout)


BOMB = "\n".join(
    [f"{c}: &{c} [{', '.join(['x'] * 9)}]" if i == 0 else
     f"{c}: &{c} [{', '.join(['*' + prev] * 9)}]"
     for i, (c, prev) in enumerate(zip("abcdefghi", " abcdefgh"))] + ["duration: 10"]) + "\n"


def test_alias_bomb_is_refused_before_it_expands(tmp_path):
    f = tmp_path / "bomb.yaml"
    f.write_text(BOMB)   # 9^9 = 387 M values once expanded (8 GB before the guard)
    t0 = time.perf_counter()
    with pytest.raises(config.ConfigErrors, match="expands to more than 2,000,000 values"):
        config.load(f)
    assert time.perf_counter() - t0 < 5
    r = cli("validate", f, timeout=60)
    assert r.returncode == 1 and "alias bomb" in r.stderr and "Traceback" not in r.stderr
    r = cli("run", f, "-o", tmp_path / "out", timeout=60)
    assert r.returncode == 2 and "alias" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_aliases_within_bounds_still_work():
    src = config.yamlsrc.parse_yaml("a: &l [1, 2]\nb: [*l, *l]\n")
    assert src.data == {"a": [1, 2], "b": [[1, 2], [1, 2]]}


@pytest.mark.parametrize("text", ["x: " + "[" * 5000 + "]" * 5000,
                                  "".join(" " * i + "k:\n" for i in range(3000)) + "  v\n",
                                  "x: " + "{a: " * 2000 + "1" + "}" * 2000])
def test_deep_nesting_is_a_config_error_not_recursion(tmp_path, text):
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    with pytest.raises(config.ConfigErrors, match="nests deeper than 64 levels"):
        config.load(f)
    r = cli("validate", f)
    assert r.returncode == 1 and "RecursionError" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_self_referencing_alias(tmp_path):
    f = tmp_path / "rec.yaml"
    f.write_text("a: &a [1, *a]\n")
    with pytest.raises(config.ConfigErrors, match="refers to a value that contains it"):
        config.load(f)


def test_unreadable_files_get_one_line_errors(tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"duration: 10\n# caf\xe9\n")
    r = cli("validate", bad)
    assert r.returncode == 1 and "is not UTF-8 text (byte 0xe9 on line 2)" in r.stderr
    assert "codec" not in r.stderr
    r = cli("run", tmp_path)                      # a directory
    assert r.returncode == 2 and "is a directory, not a file" in r.stderr
    r = cli("validate", tmp_path)
    assert r.returncode == 2 and "is a directory" in r.stderr
    r = cli("validate", "/dev/null")
    assert r.returncode == 1 and "not a regular file" in r.stderr


# The cases of issue 11 that exhausted memory: each is refused before anything runs, with
# the estimate and what dominates it.
HUGE = {
    "ten-year duration": ({"duration": 315360000}, "per-packet records"),
    # flow and queue samples go to disk as the run goes (docs/robustness.md); the per-flow
    # interval aggregates the core keeps until the end are what 1 ns samples exhaust
    "1 ns samples": ({"sample-interval": "1ns"}, "interval aggregates"),
    # 100000 flows as in the issue take ~20-80 s just to resolve; 20000 for 60 s show the same
    "20000 flows": ({"duration": 60, "flows": [{"scheme": "cubic", "flows": 20000}]},
                    "interval aggregates"),
    "Poisson 1e9/s": ({"flows": [{"scheme": "cubic", "arrivals": {
        "rate": "1000000000/s", "size": {"fixed": "10KB"}}}]}, "short-flow connections"),
    "1 ns random walk": ({"central": {"rate": "100Mbit", "delay": {"walk": {
        "base": "30ms", "delta": "1ns", "step": "1ms", "max": "60ms"}}}},
        "delay-schedule steps"),
    "UDP 1 Tbit/s": ({"flows": [{"scheme": "udp", "rate": "1Tbit"}]}, "per-packet records"),
}


@pytest.mark.parametrize("case", sorted(HUGE))
def test_huge_runs_are_refused_with_the_estimate(tmp_path, case):
    extra, dominant = HUGE[case]
    doc = {"duration": 30, "flows": [{"scheme": "cubic"}], **extra}
    exp = config.resolve(doc)
    t0 = time.perf_counter()
    with pytest.raises(budget.BudgetError) as ei:
        ccbench.run(exp, tmp_path / "out", memory_budget=16 * 2**30)
    msg = str(ei.value)
    assert time.perf_counter() - t0 < 5
    assert "budget of 16 GiB" in msg and "estimated peak memory" in msg
    assert msg.split("(", 1)[1].startswith(dominant), msg
    assert "--no-budget" in msg
    assert not (tmp_path / "out").exists()


def test_estimate_tracks_the_rows_a_run_makes(tmp_path):
    """Row estimates of the quickstart against the tables the run writes: the packet model
    (links carry at most their rate; flows share) and the sample counts are the basis of
    the memory estimate, so they must stay close."""
    exp = ccbench.load_experiment(ROOT / "examples" / "quickstart.yaml")
    est = budget.estimate(exp)
    res = ccbench.run(exp, tmp_path / "q")
    rows = {k: v["rows"] for k, v in res.meta["tables"].items()}
    assert 1.0 <= est.packets / rows["packets"] <= 1.2          # 417 k vs 393 k
    assert 1.0 <= est.flow_samples / rows["flows"] <= 1.3       # 9000 vs 8002 (reno 20 s)
    assert 1.0 <= est.queue_samples / rows["queues"] <= 1.1
    assert est.memory_bytes < 1 * 2**30


def test_per_packet_memory_covers_the_records_held_at_once(tmp_path):
    """The memory estimate's per-packet cost must cover what is held per packet at once: for
    a run that holds its records whole (the emulator), two copies of each packet record (the
    columns and the packets table made from them). An estimate below that lets a run the
    machine cannot hold pass. A streamed simulator run holds a few chunks of them whatever
    its length (docs/robustness.md, "Records streamed to disk")."""
    exp = config.resolve({"duration": 2, "central": {"rate": "50Mbit", "delay": "5ms"},
                          "flows": [{"scheme": "cubic"}]})
    res = ccbench.run(exp, tmp_path / "p")
    per_row = res.packets.estimated_size() / res.packets.height
    assert budget.BYTES_PER_PACKET >= 2 * per_row, (budget.BYTES_PER_PACKET, per_row)
    held = budget.estimate(exp, streamed=False)
    assert held.memory_bytes >= 2 * res.packets.estimated_size()
    streamed = budget.estimate(exp)
    assert streamed.memory_bytes > budget.BASELINE_BYTES + res.packets.height * budget.BYTES_PER_PACKET_STREAMED
    assert 0 < budget.BYTES_PER_PACKET_STREAMED < budget.BYTES_PER_PACKET / 10
    # past the chunks, flow and queue samples make a streamed run's estimate grow no more
    # (what still grows: the interval aggregates the core keeps)
    def growth(streamed, packets):
        a, b = ({**exp, "duration_ns": k * exp["duration_ns"]} for k in (10**4, 2 * 10**4))
        return (budget.estimate(b, packets=packets, streamed=streamed).memory_bytes
                - budget.estimate(a, packets=packets, streamed=streamed).memory_bytes)
    assert 0 < growth(True, False) < growth(False, False) / 5
    assert 0 < growth(True, True) < growth(False, True) / 5


def test_budget_flags(tmp_path):
    qs = ROOT / "examples" / "quickstart.yaml"
    r = cli("run", qs, "-o", tmp_path / "a", "--memory-budget", "100M", "--no-plots")
    assert r.returncode == 2 and "budget of 100 MiB" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "a").exists()
    r = cli("run", qs, "-o", tmp_path / "a", "--memory-budget", "100M", "--no-budget",
            "--no-plots", "--quiet")
    assert r.returncode == 0, r.stderr
    r = cli("run", qs, "-o", tmp_path / "b", "--memory-budget", "lots")
    assert r.returncode == 2 and "is not a size" in r.stderr
    assert budget.parse_memory("2.5G") == int(2.5 * 2**30)
    assert budget.parse_memory("512MiB") == 512 * 2**20


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from simhelp import experiment
    exp = experiment([{"scheme": "cubic"}], duration=3)
    return ccbench.run(exp, tmp_path_factory.mktemp("r") / "run")


@pytest.mark.parametrize("iv,msg", [("1e-9", "use an interval of at least"),
                                    ("0", "must be a positive number"),
                                    ("-1", "must be a positive number"),
                                    ("nan", "must be a positive number")])
def test_stats_interval_is_bounded(small_run, iv, msg):
    t0 = time.perf_counter()
    r = cli("stats", small_run.path, "-i", iv)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr
    assert time.perf_counter() - t0 < 30
    with pytest.raises(budget.BudgetError):
        ccbench.analyze(small_run, interval=float(iv))


def test_a_streamed_run_is_refused_when_its_records_would_fill_the_disk(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple
    exp = ccbench.load_experiment(ROOT / "examples" / "quickstart.yaml")
    est = budget.estimate(exp)
    assert est.disk_bytes > 30 * 2**20   # 417 k packets, 9000 flow and 54 k queue samples
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(2**40, 2**40 - est.disk_bytes // 2,
                                                              int(est.disk_bytes // 2)))
    with pytest.raises(budget.BudgetError, match="would fill .* of disk while it runs"):
        ccbench.run(exp, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())
    # the emulator holds its records in memory: no disk estimate
    assert budget.estimate(exp, streamed=False).disk_bytes == 0


def test_more_packet_records_than_the_core_can_number_are_refused(tmp_path):
    exp = config.resolve({"duration": 60, "flows": [{"scheme": "udp", "rate": "1Tbit"}]})
    with pytest.raises(budget.BudgetError, match="more than the 4.29 G the simulator can number"):
        ccbench.run(exp, tmp_path / "out", memory_budget=2**50)
    ccbench.run({**exp, "duration_ns": 10**6}, tmp_path / "ok", packets=True)


def test_free_disk_is_read_beside_the_results_folder_for_every_run(tmp_path, monkeypatch):
    """Each run's check reads the free space (statfs) of its results folder's nearest
    existing parent and refuses a run whose records would not fit; without the budget,
    nothing is read."""
    import shutil
    from collections import namedtuple
    usage = namedtuple("usage", "total used free")
    exp = ccbench.load_experiment(ROOT / "examples" / "quickstart.yaml")
    need = budget.estimate(exp).disk_bytes
    free = {"now": int(need / budget.DISK_FRACTION * 2.5)}
    reads = []

    def disk_usage(p):
        reads.append(str(p))
        return usage(2**50, 2**50 - free["now"], free["now"])

    monkeypatch.setattr(shutil, "disk_usage", disk_usage)
    runs = tmp_path / "runs"          # not made yet: its nearest existing parent is read
    budget.check(exp, disk_dir=runs)
    budget.check(exp, disk_dir=runs)
    assert reads == [str(tmp_path)] * 2
    free["now"] = int(need / budget.DISK_FRACTION * 0.5)
    with pytest.raises(budget.BudgetError, match=f"free in {tmp_path}"):
        budget.check(exp, disk_dir=runs)
    budget.check(exp, disk_dir=runs, enabled=False)
    assert len(reads) == 3
