"""Honest results folders (issue 11, class 2): a run interrupted at any stage leaves either
nothing (and the previous results untouched) or a folder whose complete.json says what is
complete; the message says exactly that; a second Ctrl-C prints no second traceback; a
writer killed with SIGKILL leaves a temporary the next run removes; re-running never
deletes files ccbench did not write; readers refuse or warn on incomplete folders."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

EXPERIMENT = """\
duration: 2
flows:
  - {scheme: cubic, flows: 2}
  - {scheme: reno, direction: "<-", start: 0.5}
"""


@pytest.fixture
def exp_file(tmp_path):
    f = tmp_path / "exp.yaml"
    f.write_text(EXPERIMENT)
    return f


def start(*args, pause=None, **env_vars):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **env_vars)
    if pause:
        env["CCBENCH_PAUSE_AT"] = pause
    return subprocess.Popen([sys.executable, "-m", "ccbench", *map(str, args)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_paused(p, name, timeout=120):
    """Read stderr until the process says it paused at `name`."""
    t0 = time.time()
    seen = []
    while time.time() - t0 < timeout:
        line = p.stderr.readline()
        if not line:
            break
        seen.append(line)
        if line.strip() == f"paused at {name}":
            return
    p.kill()
    raise AssertionError(f"never paused at {name}: {''.join(seen)}")


def interrupt_at(args, name, sig=signal.SIGINT, twice=False):
    p = start(*args, pause=name)
    wait_paused(p, name)
    p.send_signal(sig)
    if twice:
        time.sleep(0.05)
        p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    return p.returncode, err


def hidden(parent: Path):
    return sorted(q.name for q in parent.iterdir() if q.name.startswith("."))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("stage", ["simulate", "tables"])
def test_before_the_tables_are_in_place_nothing_is_left(tmp_path, exp_file, stage, sig):
    out = tmp_path / "out"
    rc, err = interrupt_at(["run", exp_file, "-o", out, "--quiet"], stage, sig)
    assert rc == (130 if sig == signal.SIGINT else 143), err
    assert "nothing was written" in err and "Traceback" not in err
    assert not out.exists() and hidden(tmp_path) == []


def test_previous_results_survive_an_interrupted_rerun(tmp_path, exp_file):
    out = tmp_path / "out"
    p = start("run", exp_file, "-o", out, "--quiet", "--no-plots")
    assert p.wait(timeout=120) == 0
    before = (out / "metadata.json").read_text()
    rc, err = interrupt_at(["run", exp_file, "-o", out, "--quiet", "--seed", "7"], "tables")
    assert rc == 130 and "previous results in" in err and "unchanged" in err
    assert (out / "metadata.json").read_text() == before
    assert hidden(tmp_path) == []


def test_signal_during_the_swap_is_held_until_the_folder_is_whole(tmp_path, exp_file):
    out = tmp_path / "out"
    rc, err = interrupt_at(["run", exp_file, "-o", out, "--quiet"], "swap")
    assert rc == 130
    assert "interrupted after the tables were written" in err, err
    marker = json.loads((out / "complete.json").read_text())
    assert marker["in_progress"] is None and marker["report"] is None
    assert not (out / "report.html").exists() and hidden(tmp_path) == []


@pytest.mark.parametrize("twice", [False, True])
def test_interrupted_report_is_removed_and_said(tmp_path, exp_file, twice):
    out = tmp_path / "out"
    rc, err = interrupt_at(["run", exp_file, "-o", out, "--quiet"], "report", twice=twice)
    assert rc == 130
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted while writing the report"), err
    assert f"{out} holds the complete tables and metadata, no report.html" in err
    assert "(the partial report was removed)" in err
    assert not (out / "report.html").exists() and not (out / "report.html.tmp").exists()
    marker = json.loads((out / "complete.json").read_text())
    assert marker["in_progress"] is None and marker["report"] is None
    # the folder is usable: stats reads it without a warning, report completes it
    r = subprocess.run([sys.executable, "-m", "ccbench", "report", out], cwd=ROOT,
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert r.returncode == 0 and "warning" not in r.stderr
    assert json.loads((out / "complete.json").read_text())["report"] == "report.html"


def test_interrupted_plots_are_marked_and_readers_warn(tmp_path, exp_file):
    out = tmp_path / "out"
    rc, err = interrupt_at(["run", exp_file, "-o", out, "--quiet", "--png"], "plots")
    assert rc == 130 and "Traceback" not in err
    assert "interrupted while writing the PNG plots" in err and "marked incomplete" in err
    marker = json.loads((out / "complete.json").read_text())
    assert marker["in_progress"] == "plots" and marker["report"] == "report.html"
    r = subprocess.run([sys.executable, "-m", "ccbench", "stats", out], cwd=ROOT,
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert r.returncode == 0
    assert "warning:" in r.stderr and "writing the plots was cut short" in r.stderr


def test_sigkill_during_the_table_write_is_cleaned_by_the_next_run(tmp_path, exp_file):
    out = tmp_path / "out"
    # small chunks, so that the run spills (a run that spills nothing makes no spill folder)
    p = start("run", exp_file, "-o", out, "--quiet", "--no-plots", pause="tables",
              CCBENCH_SPILL_ROWS="1000")
    wait_paused(p, "tables")
    p.kill()
    p.wait()
    left = hidden(tmp_path)
    # what SIGKILL leaves: the folder being written and the run's spilled chunks
    assert len(left) == 2 and all(q.startswith(".out.tmp-") for q in left), left
    assert sum("-spill-" in q for q in left) == 1
    q = start("run", exp_file, "-o", out, "--quiet", "--no-plots")
    assert q.wait(timeout=120) == 0
    assert hidden(tmp_path) == [] and (out / "complete.json").is_file()


def test_rerun_keeps_files_ccbench_did_not_write(tmp_path, exp_file):
    out = tmp_path / "out"
    for i in range(2):
        p = start("run", exp_file, "-o", out, "--quiet", "--no-plots")
        assert p.wait(timeout=120) == 0
        if i == 0:
            (out / "notes.txt").write_text("my notes")
            (out / "analysis").mkdir()
            (out / "analysis" / "fig.py").write_text("x = 1")
    assert (out / "notes.txt").read_text() == "my notes"
    assert (out / "analysis" / "fig.py").read_text() == "x = 1"


def test_readers_refuse_a_folder_missing_a_table(tmp_path, exp_file):
    out = tmp_path / "out"
    p = start("run", exp_file, "-o", out, "--quiet", "--no-plots")
    assert p.wait(timeout=120) == 0
    (out / "flows.parquet").unlink()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for cmd in (["stats", out], ["report", out], ["check", out], ["compare", out, out]):
        r = subprocess.run([sys.executable, "-m", "ccbench", *map(str, cmd)], cwd=ROOT,
                           capture_output=True, text=True, env=env)
        assert r.returncode == 2, (cmd, r.stderr)
        assert "is incomplete: flows.parquet is missing" in r.stderr
        assert "Traceback" not in r.stderr


def test_folder_without_marker_is_read_with_a_warning(tmp_path, exp_file):
    import warnings
    import ccbench
    from ccbench.results.marker import IncompleteWarning
    res = ccbench.run(ccbench.load_experiment(exp_file), tmp_path / "r")
    (res.path / "complete.json").unlink()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ccbench.load(res.path)
    assert any(issubclass(x.category, IncompleteWarning) for x in w)


@pytest.mark.parametrize("meanwhile", ["empty folder", "a user's file", "a file"])
def test_a_results_folder_made_while_the_run_was_written(tmp_path, exp_file, monkeypatch,
                                                         meanwhile):
    """The writer looks at the results folder once, before it writes (a campaign's runs:
    one stat); one made by someone else before the rename is not overwritten blindly: an
    empty folder is replaced, anything else refused as at the start, nothing half left."""
    import ccbench
    from ccbench.results import marker
    out = tmp_path / "new" / "out"     # its parent is made too
    real = marker.write

    def meddle(path, data, **kw):
        real(path, data, **kw)
        if meanwhile == "a file":
            out.write_text("x")
        else:
            out.mkdir()
            if meanwhile == "a user's file":
                (out / "notes.txt").write_text("mine")

    monkeypatch.setattr(marker, "write", meddle)
    exp = ccbench.load_experiment(exp_file)
    if meanwhile == "empty folder":
        ccbench.run(exp, out, reload=False)
        assert (out / "complete.json").is_file() and (out / "metadata.json").is_file()
    else:
        with pytest.raises(FileExistsError, match="choose another -o DIR"):
            ccbench.run(exp, out, reload=False)
        assert not (out / "metadata.json").exists()
        assert meanwhile == "a file" or (out / "notes.txt").read_text() == "mine"
    assert hidden(out.parent) == []
