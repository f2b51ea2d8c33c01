"""Running campaigns: resume after SIGKILL, failures, executors (in-process, pool, Dask
LocalCluster) giving identical results, version mixing, the CLI."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

import ccbench
from simhelp import write_campaign
from ccbench import cli
from ccbench.campaign import CampaignDirError, load_index, run_campaign

ROOT = Path(__file__).resolve().parents[1]

SMALL = {"duration": 1, "seed": 3,
         "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
         "flows": [{"scheme": "bbr"}, {"scheme": "cubic"}],
         "sweep": {"axes": {"central.queue": ["0.5bdp", "2bdp"]}, "repeats": 2}}


write = write_campaign  # tests/simhelp.py


def events(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "log.jsonl").read_text().splitlines()]


def test_index_rows_and_skip_on_rerun(tmp_path):
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    res = run_campaign(f, out, jobs=1, progress=False)
    assert res.ok and res.executed == 4 and res.skipped == 0
    idx = load_index(out)
    assert idx.height == 8  # 4 runs × 2 flows
    assert idx.columns[:6] == ["run_key", "point", "label", "repeat", "seed", "central.queue"]
    assert idx["scheme"].to_list()[:2] == ["bbr", "cubic"]
    assert idx.filter(pl.col("avg_tput_mbps").is_null()).height == 0
    assert idx["utilization_pct"].min() > 50
    # metrics are ccbench.analysis's, from each run's results directory
    r0 = ccbench.load(out / "runs" / idx["run_key"][0])
    an = ccbench.analyze(r0, "per-flow", interval=0.01)
    assert idx["avg_tput_mbps"][0] == an.summary["avg_tput_mbps"][0]
    assert idx["jain"][0] == an.overall_jain
    assert r0.packets is None  # no per-packet records in campaigns by default
    # rerun: nothing executes, the same index
    again = run_campaign(f, out, jobs=1, progress=False)
    assert again.executed == 0 and again.skipped == 4
    assert again.index.equals(idx)
    m = json.loads((out / "campaign.json").read_text())
    assert m["ccbench_version"] == ccbench.__version__ and "git_dirty" in m
    assert len(m["sessions"]) == 2


def test_failing_run_does_not_stop_the_others(tmp_path, monkeypatch, capsys):
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    plan = ccbench.campaign.plan(f)
    bad = plan.runs[1].seed
    real = ccbench.api.run

    def flaky(exp, *a, **kw):
        if exp["seed"] == bad:
            raise RuntimeError("injected failure")
        return real(exp, *a, **kw)

    monkeypatch.setattr(ccbench.api, "run", flaky)
    rc = cli.main(["sweep", str(f), "-o", str(out), "-j", "1", "--quiet"])
    text = capsys.readouterr().out
    assert rc == 1
    assert "3/4 runs finished" in text and "1 run failed" in text and "injected failure" in text
    assert load_index(out).height == 6
    failed = list((out / "failed").glob("*.json"))
    assert len(failed) == 1 and json.loads(failed[0].read_text())["seed"] == bad
    # the rerun retries only the failed run
    monkeypatch.setattr(ccbench.api, "run", real)
    rc = cli.main(["sweep", str(f), "-o", str(out), "-j", "1", "--quiet"])
    assert rc == 0 and "(1 run now, 3 already done)" in capsys.readouterr().out
    assert not list((out / "failed").glob("*.json"))
    assert load_index(out).height == 8


@pytest.mark.parametrize("keep", ["tables", "summary"])
def test_resume_after_sigkill_gives_the_uninterrupted_index(tmp_path, keep):
    doc = {"duration": 4, "seed": 1,
           "central": {"rate": "50Mbit", "delay": "10ms", "queue": "1bdp"},
           "flows": [{"scheme": "cubic"}, {"scheme": "bbr"}],
           "sweep": {"axes": {"central.queue": ["0.5bdp", "1bdp", "2bdp", "4bdp"],
                              "central.loss": [0, 0.001]}, "repeats": 2}}
    f = write(tmp_path, doc)
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [sys.executable, "-m", "ccbench", "sweep", str(f), "-j", "2", "--quiet",
           "--keep", keep, "-o"]
    p = subprocess.Popen(cmd + [str(killed)], env=env)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        log = killed / "log.jsonl"
        if log.is_file() and sum(e["event"] == "done" for e in events(killed)) >= 4:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(0.5)  # pool workers follow their parent (PR_SET_PDEATHSIG)
    first = events(killed)
    # finished = committed results directory (the parent may die between a worker's commit
    # and its own "done" line)
    done_before = {d.name for d in (killed / "runs").iterdir() if not d.name.startswith(".")}
    assert {e["key"] for e in first if e["event"] == "done"} <= done_before
    assert 4 <= len(done_before) < 16, "the kill must land mid-campaign"
    r = subprocess.run(cmd + [str(killed)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"({16 - len(done_before)} run now, {len(done_before)} already done)" in r.stdout
    subprocess.run(cmd + [str(whole)], env=env, check=True, capture_output=True)
    a, b = load_index(killed), load_index(whole)
    assert a.height == 32
    assert a.equals(b)
    # no run executed twice: runs finished before the kill never start again, and every
    # run is done exactly once
    later = events(killed)[len(first):]
    assert not {e["key"] for e in later if e["event"] == "start"} & done_before
    later_done = [e["key"] for e in later if e["event"] == "done"]
    assert len(later_done) == len(set(later_done)) == 16 - len(done_before)
    assert not [d for d in (killed / "runs").iterdir() if d.name.startswith(".")]
    # every finished run holds what --keep asked for, and nothing else
    for d in (killed / "runs").iterdir():
        names = {p.name for p in d.iterdir()}
        assert {"metadata.json", "complete.json"} <= names
        assert ("summary.json" in names) == (keep == "summary")
        assert any(n.endswith(".parquet") for n in names) == (keep == "tables")


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.suffix == ".parquet"}


def _meta(d: Path) -> dict:
    m = json.loads((d / "metadata.json").read_text())
    for k in ("created", "wall_time_s"):
        m.pop(k)
    return m


def test_dask_local_cluster_gives_identical_runs_to_the_pool(tmp_path):
    pytest.importorskip("dask.distributed")
    f = write(tmp_path, SMALL)
    pool, dask = tmp_path / "pool", tmp_path / "dask"
    rp = run_campaign(f, pool, jobs=2, progress=False)
    rd = run_campaign(f, dask, jobs=2, dask="local", progress=False)
    assert rp.ok and rd.ok and rd.executor.startswith("dask LocalCluster")
    keys = sorted(p.name for p in (pool / "runs").iterdir())
    assert keys == sorted(p.name for p in (dask / "runs").iterdir()) and len(keys) == 4
    for k in keys:
        a, b = _files(pool / "runs" / k), _files(dask / "runs" / k)
        assert a.keys() == b.keys() and len(a) >= 5
        assert all(a[n] == b[n] for n in a), k  # byte-identical tables
        assert _meta(pool / "runs" / k) == _meta(dask / "runs" / k)
    assert rp.index.equals(rd.index)


def test_dask_scheduler_address_and_workers_without_the_directory(tmp_path):
    """Joining a running scheduler by address; a worker that cannot see DIR sends the run's
    files back and the campaign process commits them (same tables)."""
    distributed = pytest.importorskip("dask.distributed")
    f = write(tmp_path, dict(SMALL, sweep={"repeats": 2}))
    ref = run_campaign(f, tmp_path / "ref", jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = run_campaign(f, tmp_path / "addr", dask=cluster.scheduler_address,
                           progress=False)
    assert res.ok and res.executor == f"dask {cluster.scheduler_address}"
    assert res.index.equals(ref.index)

    from ccbench.campaign.executors import execute

    class Remote:  # a worker on another machine: the probe file is not there
        name = "remote"

        def map(self, tasks):
            for t in tasks:
                yield execute(dict(t, probe=str(tmp_path / "not-here")))

    rem = run_campaign(f, tmp_path / "remote", executor=Remote(), progress=False)
    assert rem.ok and rem.index.equals(ref.index)
    for k in ref.index["run_key"].unique():
        assert _files(tmp_path / "ref" / "runs" / k) == _files(tmp_path / "remote" / "runs" / k)
    assert not list((tmp_path / "remote" / "runs").glob(".*"))
    # --keep summary on a worker without the directory: the summary comes back as a file
    rs = run_campaign(f, tmp_path / "remote-summary", executor=Remote(), progress=False,
                      keep="summary")
    assert rs.ok and rs.index.equals(ref.index)
    for d in (tmp_path / "remote-summary" / "runs").iterdir():
        assert sorted(p.name for p in d.iterdir()) == ["complete.json", "metadata.json",
                                                       "summary.json"]


def test_other_version_in_dir_is_refused(tmp_path):
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    run_campaign(f, out, jobs=1, progress=False)
    m = json.loads((out / "campaign.json").read_text())
    m["ccbench_version"] = "0.0.1"
    (out / "campaign.json").write_text(json.dumps(m))
    with pytest.raises(CampaignDirError, match="another ccbench version"):
        run_campaign(f, out, jobs=1, progress=False)
    res = run_campaign(f, out, jobs=1, progress=False, allow_mixed_versions=True)
    assert res.skipped == 4
    with pytest.raises(CampaignDirError, match="not a campaign directory"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "x").write_text("")
        run_campaign(f, tmp_path / "other", jobs=1, progress=False)


def test_dir_of_a_sweep_that_stopped_before_its_manifest_is_taken_over(tmp_path):
    # what a sweep leaves when it fails before writing campaign.json (e.g. the compiled
    # core is missing): empty runs/ and failed/, .lock and log.jsonl
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    for d in ("runs", "failed"):
        (out / d).mkdir(parents=True)
    (out / ".lock").write_text("pid 1 on h\n")
    (out / "log.jsonl").write_text("")
    res = run_campaign(f, out, jobs=1, progress=False)
    assert res.skipped == 0 and (out / "campaign.json").is_file()
    # a runs/ that holds something is not ccbench's empty skeleton: refused as before
    other = tmp_path / "other"
    (other / "runs" / "x").mkdir(parents=True)
    with pytest.raises(CampaignDirError, match="not a campaign directory"):
        run_campaign(f, other, jobs=1, progress=False)


def test_cli_dry_run_lists_points_and_reports_all_invalid_points(tmp_path, capsys):
    f = write(tmp_path, SMALL)
    assert cli.main(["sweep", str(f), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 points × 2 repeats = 4 runs" in out and "0.5bdp" in out and "2bdp" in out
    bad = dict(SMALL, sweep={"axes": {"central.queue": ["1bdp", "huge", "-1"],
                                      "flows[1].scheme": ["cubic", "cubik"]}})
    g = write(tmp_path, bad, "bad.yaml")
    assert cli.main(["sweep", str(g), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "5 of 6 points of the campaign are invalid" in err
    assert "central.queue=huge" in err and "flows[1].scheme=cubik" in err
    assert cli.main(["validate", str(f)]) == 0
    assert "a campaign: 2 points, 4 runs" in capsys.readouterr().out
    h = write(tmp_path, dict(SMALL, sweep={"axes": {"central.queue": {"from": 1}}}), "h.yaml")
    assert cli.main(["sweep", str(h), "--dry-run"]) == 2
    err = capsys.readouterr().err
    import re
    assert re.search(re.escape(str(h)) + r":\d+: sweep\.axes\.central\.queue", err)
    assert "exactly one of num" in err and "range to" in err


def test_campaign_plots_and_aggregate_cli(tmp_path, capsys):
    doc = dict(SMALL, sweep={"axes": {"central.queue": ["0.5bdp", "2bdp"],
                                      "central.loss": [0, 0.01]}, "repeats": 2})
    f = write(tmp_path, doc)
    out = tmp_path / "out"
    assert cli.main(["sweep", str(f), "-o", str(out), "-j", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["aggregate", str(out), "--metric", "avg_tput_mbps,jain", "--level", "0.9",
                     "--csv", str(tmp_path / "s.csv"), "--plot"]) == 0
    text = capsys.readouterr().out
    assert "mean ± 90 % confidence half-width (n runs)" in text and "(2)" in text
    csv = pl.read_csv(tmp_path / "s.csv")
    assert set(csv["metric"]) == {"avg_tput_mbps", "jain"} and csv["n"].max() == 2
    names = sorted(p.name for p in (out / "plots").iterdir())
    assert names == ["avg_tput_mbps-vs-central.queue.png", "box-avg_tput_mbps-vs-central.queue.png",
                     "heat-avg_tput_mbps-central.queue-central.loss-bbr.png",
                     "heat-avg_tput_mbps-central.queue-central.loss-cubic.png",
                     "jain-vs-central.queue.png"]
    assert all((out / "plots" / n).read_bytes()[:4] == b"\x89PNG" for n in names)


def test_emulation_runs_one_at_a_time_per_machine(tmp_path):
    import threading

    from ccbench.campaign.executors import InProcess, machine_lock, make_executor
    assert isinstance(make_executor(jobs=4, backend="emu"), InProcess)
    # the per-machine lock serialises emulation runs whatever the executor
    lock = str(tmp_path / "emu.lock")
    inside, overlap = [], []

    def run():
        with machine_lock(lock):
            inside.append(1)
            overlap.append(len(inside))
            time.sleep(0.05)
            inside.pop()

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert overlap == [1, 1, 1, 1]


def test_python_api_returns_the_index(tmp_path, monkeypatch):
    f = write(tmp_path, SMALL)
    idx = ccbench.sweep(f, tmp_path / "out", jobs=1)
    assert isinstance(idx, pl.DataFrame) and idx.height == 8
    st = ccbench.aggregate(tmp_path / "out", by="scheme", metrics=["avg_tput_mbps"], level=0.9)
    assert st.height == 4 and set(st["scheme"]) == {"bbr", "cubic"}
    assert ccbench.aggregate(idx, by="scheme", metrics=["avg_tput_mbps"], level=0.9).equals(st)
    real = ccbench.api.run
    monkeypatch.setattr(ccbench.api, "run", lambda e, *a, **k: (_ for _ in ()).throw(
        RuntimeError("boom")) if e["seed"] == idx["seed"][0] else real(e, *a, **k))
    with pytest.warns(RuntimeWarning, match="1 of 4 runs failed"):
        idx2 = ccbench.sweep(f, tmp_path / "out2", jobs=1)
    assert idx2.height == 6


@pytest.mark.parametrize("keep", ["tables", "summary"])
def test_a_run_whose_metrics_fail_is_not_left_finished(tmp_path, monkeypatch, keep):
    """tables: the committed directory is taken back; summary: the rows are computed before
    anything is written, so nothing is."""
    import ccbench.campaign.metrics as metrics
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    real = metrics.row_columns
    calls = []

    def flaky(res):
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("metrics broke")
        return real(res)

    monkeypatch.setattr(metrics, "row_columns", flaky)
    res = run_campaign(f, out, jobs=1, progress=False, keep=keep)
    assert len(res.failures) == 1 and "metrics broke" in res.failures[0]["error"]
    assert len([d for d in (out / "runs").iterdir()]) == 3  # the failed run's dir is gone
    assert res.index.height == 6
    monkeypatch.setattr(metrics, "row_columns", real)
    again = run_campaign(f, out, jobs=1, progress=False, keep=keep)
    assert again.ok and again.executed == 1 and again.index.height == 8
    # a results directory damaged by hand is named, not a traceback
    key = again.index["run_key"][0]
    damaged = "flowstats.parquet" if keep == "tables" else "summary.json"
    (out / "runs" / key / damaged).write_bytes(b"junk")
    (out / "metrics.parquet").unlink()
    with pytest.raises(CampaignDirError, match=f"{key} is a damaged results directory"):
        run_campaign(f, out, jobs=1, progress=False, keep=keep)


def crash_on_key(tasks):
    """A pool function whose worker dies (as on a native crash) on the run CRASH_KEY."""
    from ccbench.campaign.executors import execute
    out = []
    for t in tasks:
        if t["key"] == os.environ.get("CCBENCH_TEST_CRASH_KEY"):
            os._exit(3)
        out.append(execute(t))
    return out


def test_a_dying_worker_fails_only_its_run(tmp_path, monkeypatch):
    from ccbench.campaign.executors import LocalPool
    doc = dict(SMALL, sweep={"axes": {"central.queue": ["0.5bdp", "1bdp", "2bdp"]},
                             "repeats": 2})
    f = write(tmp_path, doc)
    plan = ccbench.campaign.plan(f)
    bad = plan.runs[3].key
    monkeypatch.setenv("CCBENCH_TEST_CRASH_KEY", bad)
    pool = LocalPool(2, fn=crash_on_key)
    try:
        res = run_campaign(f, tmp_path / "out", executor=pool, progress=False)
    finally:
        pool.close()
    assert [x["key"] for x in res.failures] == [bad]
    assert "worker process running it died" in res.failures[0]["error"]
    assert res.executed == 6 and res.index.height == 10
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == sorted(
        r.key for r in plan.runs if r.key != bad)


def test_dask_workers_of_another_version_are_refused(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    from ccbench.campaign import CampaignError
    from ccbench.campaign import executors
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        executors.DaskExecutor(cluster.scheduler_address).close()  # same version: accepted
        real = executors.worker_versions
        # this process claims another version; the worker process keeps the real one
        monkeypatch.setattr(executors, "worker_versions", lambda: {**real(), "ccbench": "9.9"})
        with pytest.raises(CampaignError, match="run another ccbench"):
            executors.DaskExecutor(cluster.scheduler_address)


def test_the_dask_dashboard_names_the_runs_of_each_task(tmp_path):
    """Tasks showed as ``execute_batch``; now as the runs they hold (the key's prefix, which
    the dashboard's task stream and progress bars display)."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster, get_task_stream
    from dask.utils import key_split
    from ccbench.campaign.executors import DaskExecutor, batch_name, dask_key
    from simhelp import experiment
    assert key_split(dask_key([{"key": "ab12", "name": "cubic-2, queue=0.5bdp r0"}])) \
        == "ccbench cubic\u20102, queue=0.5bdp r0"
    assert batch_name([{"key": "a", "name": "x r0"}, {"key": "b", "name": "x r1"},
                       {"key": "c", "name": "y r0"}]) == "ccbench x r0 … y r0 (3 runs)"
    exp = experiment([{"scheme": "reno"}], duration=0.5, packets=False)
    tasks = [{"key": f"k{i}", "name": f"point {i} r0", "experiment": exp, "backend": "sim",
              "out": None} for i in range(2)]
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cl, \
            Client(cl) as client:
        ex = DaskExecutor(client, jobs=1)
        with get_task_stream(client) as ts:
            outs = list(ex.map(tasks))
        ex.close()
    assert sorted(o["key"] for o in outs) == ["k0", "k1"] and all(o["ok"] for o in outs)
    names = {key_split(t["key"]) for t in ts.data}
    assert names & {"ccbench point 0 r0", "ccbench point 1 r0",
                    "ccbench point 0 r0 … point 1 r0 (2 runs)"}, names
    assert "execute_batch" not in names


def test_keep_summary_gives_the_same_index_and_report(tmp_path, capsys):
    """--keep summary: no per-run tables, the same index (to the bit) and a report; the
    index is rebuilt from the runs' summaries; --keep tables afterwards runs them again to
    write their tables."""
    f = write(tmp_path, SMALL)
    whole, small = tmp_path / "tables", tmp_path / "summary"
    assert cli.main(["sweep", str(f), "-o", str(whole), "-j", "1", "--quiet"]) == 0
    assert cli.main(["sweep", str(f), "-o", str(small), "-j", "1", "--quiet",
                     "--keep", "summary"]) == 0
    a, b = load_index(whole), load_index(small)
    assert a.height == 8 and a.equals(b)
    assert (small / "report.html").is_file() and (whole / "report.html").is_file()
    for d in (small / "runs").iterdir():
        assert sorted(p.name for p in d.iterdir()) == ["complete.json", "metadata.json",
                                                       "summary.json"]
        meta = json.loads((d / "metadata.json").read_text())
        assert meta["kept"] == "summary" and meta["tables"] == {}
    m = json.loads((small / "campaign.json").read_text())
    assert m["sessions"][-1]["keep"] == "summary"
    # the metrics cache is rebuilt from the summaries
    (small / "metrics.parquet").unlink()
    again = run_campaign(f, small, jobs=1, progress=False, keep="summary")
    assert again.executed == 0 and again.index.equals(a)
    # the tables asked for later: the runs run again (same key, same numbers) with tables
    tables = run_campaign(f, small, jobs=1, progress=False)
    assert tables.executed == 4 and tables.index.equals(a)
    for d in (small / "runs").iterdir():
        assert not (d / "summary.json").exists() and (d / "flowstats.parquet").is_file()
    # --plots needs the tables
    capsys.readouterr()
    assert cli.main(["sweep", str(f), "-o", str(tmp_path / "p"), "--keep", "summary",
                     "--plots", "--quiet"]) == 2
    assert "--keep tables" in capsys.readouterr().err


def test_campaign_runs_write_compact_metadata(tmp_path):
    """A campaign run's metadata.json is one line of JSON (programs read it; indenting it
    was CPython's pure-Python encoder, ~0.3 ms a run) holding what a single run's indented
    one holds; `ccbench run`'s own stays indented for people to read."""
    import ccbench.api
    f = write(tmp_path, SMALL)
    for keep in ("tables", "summary"):
        res = run_campaign(f, tmp_path / keep, jobs=1, progress=False, keep=keep)
        for d in (tmp_path / keep / "runs").iterdir():
            text = (d / "metadata.json").read_text()
            assert text.count("\n") == 1 and text.endswith("}\n")
            meta = json.loads(text)
            assert meta["experiment"]["seed"] in res.index["seed"].to_list()
            assert ("kept" in meta) == (keep == "summary")
            if keep == "tables":
                assert set(meta["tables"]) >= {"flowstats", "queues", "delay_hist"}
                kept_whole = meta
    one = ccbench.api.run(kept_whole["experiment"], tmp_path / "single", reload=False)
    text = (tmp_path / "single" / "metadata.json").read_text()
    assert text.count("\n") > 50 and json.loads(text) == one.meta
    assert set(json.loads(text)) == set(kept_whole)


CRASH_AT_MARKER = """
import os, sys
sys.path.insert(0, {python!r})
from ccbench.results import marker
from ccbench.campaign import run_campaign
real, n = marker.write_file, []

def crash(path, data):
    # the process dies (a power cut, SIGKILL) as the third run writes its last file,
    # after its metadata.json is on disk in the temporary folder
    if str(path).endswith(marker.MARKER):
        n.append(path)
        if len(n) == 3:
            os._exit(9)
    real(path, data)

marker.write_file = crash
run_campaign({camp!r}, {out!r}, jobs=1, progress=False, keep={keep!r})
"""


@pytest.mark.parametrize("keep", ["tables", "summary"])
def test_a_run_cut_short_while_its_files_are_written_is_not_finished(tmp_path, keep):
    """Each file of a run is written once into a folder nobody sees until its rename: a
    crash after metadata.json is written but before the run's last file leaves no finished
    run (no runs/<key>/metadata.json), only a temporary folder the next session removes
    before it runs the run again."""
    f = write(tmp_path, SMALL)
    out = tmp_path / "out"
    code = CRASH_AT_MARKER.format(python=str(ROOT / "python"), camp=str(f), out=str(out),
                                  keep=keep)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 9, p.stderr
    runs = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    temps = [d for d in (out / "runs").iterdir() if d.name.startswith(".")]
    assert len(runs) == 2 and all((d / "complete.json").is_file() for d in runs)
    assert len(temps) == 1 and (temps[0] / "metadata.json").is_file()
    assert not (temps[0] / "complete.json").exists()
    again = run_campaign(f, out, jobs=1, progress=False, keep=keep)
    assert again.ok and again.executed == 2 and again.skipped == 2
    assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".")]
    whole = run_campaign(f, tmp_path / "whole", jobs=1, progress=False, keep=keep)
    assert again.index.equals(whole.index)
