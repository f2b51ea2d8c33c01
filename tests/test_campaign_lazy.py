"""Large campaigns are planned lazily: counted and sampled before anything runs, resolved as
they run. The same campaign planned eagerly and lazily runs the same runs into the same index;
a point only the run reaches fails alone; a 10^6-run campaign validates without resolving it."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from simhelp import write_campaign
from ccbench import cli
from ccbench.campaign import PlanErrors, load_index, parse_campaign, plan as make_plan
from ccbench.campaign import run_campaign

# ccbench.campaign.plan is also the name of a function there: the module by its full name
planning = importlib.import_module("ccbench.campaign.plan")

GRID = {"duration": 5, "seed": 3,
        "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
        "flows": [{"scheme": "cubic"}],
        "sweep": {"axes": {"duration": [5, 3, 1.5], "central.delay": ["10ms", "200ms", "800ms"]},
                  "repeats": 2}}


write = write_campaign  # tests/simhelp.py


def lazily(monkeypatch) -> None:
    monkeypatch.setattr(planning, "EAGER_RUNS", 1)


def test_a_lazy_plan_runs_what_the_eager_plan_runs(tmp_path, monkeypatch):
    doc = {**GRID, "sweep": {**GRID["sweep"], "axes": {"central.queue": ["0.5bdp", "2bdp"],
                                                       "central.delay": ["5ms", "20ms"]}}}
    eager = make_plan(parse_campaign(doc))
    assert not eager.lazy and eager.n_runs == 8
    ie = run_campaign(parse_campaign(doc), tmp_path / "eager", jobs=1, progress=False).index
    lazily(monkeypatch)
    lazy = make_plan(parse_campaign(doc))
    assert lazy.lazy and lazy.runs is None and lazy.n_points == 4 and lazy.n_runs == 8
    # every axis value occurs in the checked sample, which is resolved runs
    assert {r.point.values["central.delay"] for r in lazy.sample} == {"5ms", "20ms"}
    assert {r.point.values["central.queue"] for r in lazy.sample} == {"0.5bdp", "2bdp"}
    assert [r.key for r in lazy.iter_runs()] == [r.key for r in eager.runs]
    res = run_campaign(parse_campaign(doc), tmp_path / "lazy", jobs=2, progress=False)
    assert res.ok and res.executed == 8
    il = res.index
    assert il.drop("run_key").equals(ie.drop("run_key")) or il.equals(ie)
    assert il["run_key"].to_list() == ie["run_key"].to_list()
    # resumed: nothing runs again
    again = run_campaign(parse_campaign(doc), tmp_path / "lazy", jobs=1, progress=False)
    assert again.executed == 0 and again.skipped == 8
    assert again.index.equals(il)


def test_a_point_the_sample_did_not_reach_fails_alone_when_it_runs(tmp_path, monkeypatch):
    lazily(monkeypatch)
    p = make_plan(parse_campaign(GRID))
    # the sample covers each value once: (5,10ms) (5,200ms) (5,800ms) (3,10ms) (1.5,10ms);
    # (1.5 s, 800 ms) has a base RTT of 1.6 s, longer than the run: invalid, but unseen
    assert p.lazy and len({r.point.index for r in p.sample}) == 5
    bad = [r for r in p.iter_runs() if r.error is not None]
    assert [(r.point.values["duration"], r.point.values["central.delay"]) for r in bad] == \
        [(1.5, "800ms")] * 2
    assert "not shorter than the time the flow runs" in bad[0].error
    res = run_campaign(parse_campaign(GRID), tmp_path / "out", jobs=1, progress=False)
    assert res.executed == 16 and len(res.failures) == 2
    assert {f["label"] for f in res.failures} == {"duration=1.5, central.delay=800ms"}
    failed = sorted((tmp_path / "out" / "failed").glob("*.json"))
    assert len(failed) == 2 and "base RTT" in json.loads(failed[0].read_text())["error"]
    assert load_index(tmp_path / "out")["point"].n_unique() == 8


def test_a_lazy_plans_sample_problems_are_reported_before_anything_runs(tmp_path,
                                                                          monkeypatch):
    lazily(monkeypatch)
    doc = {**GRID, "sweep": {**GRID["sweep"], "axes": {"duration": [5, 1.5],
                                                       "central.delay": ["10ms", "800ms"]}}}
    # sample: (5,10ms) (5,800ms) (1.5,10ms): all valid; (1.5,800ms) is not sampled
    assert make_plan(parse_campaign(doc)).lazy
    doc["sweep"]["axes"]["central.delay"] = ["800ms", "10ms"]  # now (1.5, 800ms) is sampled
    with pytest.raises(PlanErrors) as e:
        make_plan(parse_campaign(doc))
    assert "of the 3 points checked" in str(e.value) and "base RTT" in str(e.value)


def test_a_million_runs_validate_in_seconds_without_resolving_them(tmp_path, capsys):
    doc = {"duration": 30, "central": {"rate": "10Mbit", "delay": "5ms", "queue": "1bdp"},
           "flows": [{"scheme": "cubic"}],
           "sweep": {"axes": {"central.rate": {"from": 1, "to": 1000, "num": 1000,
                                               "unit": "Mbit"},
                              "central.delay": {"from": 1, "to": 100, "num": 100,
                                                "unit": "ms"}},
                     "repeats": 10}}
    f = write(tmp_path, doc)
    # peak memory of the validating process alone: measured by a small parent process whose
    # only child it is (a child forked from this test process would start from pytest's
    # resident size); ru_maxrss is KiB on Linux
    cmd = [sys.executable, "-m", "ccbench", "validate", str(f)]
    parent = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
              "sys.exit(r.returncode)")
    proc = subprocess.run([sys.executable, "-c", parent, *cmd], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "100000 points, 1000000 runs" in proc.stdout and "planned lazily" in proc.stdout
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    assert peak_kib < 400_000, peak_kib  # eagerly this was about 9 GB
    assert cli.main(["sweep", str(f), "--dry-run", "--max-points", "3"]) == 0
    out = capsys.readouterr().out
    assert "… 99997 more points" in out and "the sampled points are valid" in out


def test_warnings_that_differ_only_in_numbers_are_given_once(tmp_path, capsys):
    doc = {**GRID, "sweep": {"axes": {"central.delay": ["700ms", "800ms", "900ms"]}}}
    with pytest.warns(Warning) as rec:
        make_plan(parse_campaign(doc))
    texts = [str(w.message) for w in rec if "four base RTTs" in str(w.message)]
    assert len(texts) == 1 and "and at 2 more points with other numbers" in texts[0]


def test_the_gym_refuses_to_draw_from_a_lazily_planned_campaign(monkeypatch):
    gym = pytest.importorskip("gymnasium")  # noqa: F841
    from ccbench.gym.env import CcEnv
    lazily(monkeypatch)
    with pytest.raises(ValueError, match="draw from fewer points"):
        CcEnv(experiment={**GRID, "sweep": {"axes": {"central.delay": ["10ms", "20ms"]}}})


def test_the_pool_reads_ahead_only_a_bounded_number_of_tasks():
    from ccbench.campaign.executors import Batcher
    pulled = []

    def tasks():
        for i in range(100_000):
            pulled.append(i)
            yield {"key": str(i)}
    b = Batcher(tasks(), workers=2, target_s=1.0)
    first = b.next()
    assert len(first) == 1 and len(pulled) <= Batcher.LOOKAHEAD + 1
    b.learn([{"wall_s": 1e-4}] * 4)
    batch = b.next()
    assert 1 < len(batch) <= Batcher.LOOKAHEAD and len(pulled) <= 2 * Batcher.LOOKAHEAD + 1
    n = len(first) + len(batch)
    while chunk := b.next():
        n += len(chunk)
    assert n == 100_000 and not b.waiting()
