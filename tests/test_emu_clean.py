"""Safe cleanup (issue 11, class 3): `ccbench clean` removes only what killed emulation runs
left; a run whose process is alive (it holds its run lock) survives `clean` and is removed
only by `clean --run ID --force`; `doctor` lists leftovers and running runs.

Runs a real emulation beside a fake live run (a process holding a run lock, with a
namespace) and a fake killed run (a namespace and work dir whose lock nobody holds)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccbench.backends import emu
from ccbench.runlock import LOCK_NAME, RunLock, is_live

from test_emu import _why_not, _yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"))

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ccbench", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, env=ENV, timeout=timeout)


def netns_add(name):
    subprocess.run(["ip", "netns", "add", name], check=True)


def test_lock_is_dropped_when_the_owner_dies(tmp_path):
    work = tmp_path / "ccb-abcdef"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; sys.path.insert(0, sys.argv[1]);"
                               "from ccbench.runlock import RunLock; RunLock(sys.argv[2]);"
                               "print('held', flush=True); time.sleep(60)",
                               str(ROOT / "python"), str(work)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    assert is_live(work)
    with pytest.raises(RuntimeError, match="already owned"):
        RunLock(work)
    holder.kill()
    holder.wait()
    assert not is_live(work)          # SIGKILL: the kernel released the lock
    RunLock(work).release()


def test_clean_spares_live_runs_and_removes_dead_ones(tmp_path):
    dead, live = "ccb-dead0a", "ccb-a11ce0"
    emu.WORK_ROOT.mkdir(parents=True, exist_ok=True)
    holder = None
    real = None
    try:
        # a killed run: namespace + work dir with a lock file nobody holds
        netns_add(f"{dead}-h1")
        (emu.WORK_ROOT / dead).mkdir()
        (emu.WORK_ROOT / dead / LOCK_NAME).write_text("999999\n")
        # a live run: a process holding its lock, with a namespace
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]);"
             "from ccbench.runlock import RunLock; RunLock(sys.argv[2]);"
             "print('held', flush=True); time.sleep(300)",
             str(ROOT / "python"), str(emu.WORK_ROOT / live)], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        netns_add(f"{live}-h1")
        # a real emulation running meanwhile
        real = subprocess.Popen([sys.executable, "-m", "ccbench", "run",
                                 _yaml(tmp_path, "cubic", duration=12), "--backend", "emu",
                                 "-o", tmp_path / "k", "--quiet", "--no-plots"],
                                cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        real_id = None
        while time.time() < deadline and real_id is None:
            # ours: the run whose lock our subprocess holds (other emulations may be running)
            real_id = next((r for r, e in emu.runs().items()
                            if e["owner"] == real.pid and e["namespaces"]), None)
            time.sleep(0.1)
        assert real_id, "the emulation never started"

        d = cli("doctor")
        assert f"{dead} (1 namespaces, work dir)" in d.stdout, d.stdout   # others may be listed
        assert f"{live} (pid {holder.pid}" in d.stdout, d.stdout

        r = cli("clean")
        assert r.returncode == 0, r.stderr
        assert f"skipped {live}: it is running (pid {holder.pid})" in r.stdout
        if real.poll() is None:   # still running (on a loaded machine it may have ended)
            assert f"skipped {real_id}: it is running" in r.stdout, r.stdout
        assert not Path(f"/run/netns/{dead}-h1").exists()
        assert not (emu.WORK_ROOT / dead).exists()
        assert Path(f"/run/netns/{live}-h1").exists()
        removed = [ln for ln in r.stdout.splitlines() if ln.startswith("removed")]
        assert not any(real_id in ln or live in ln for ln in removed), r.stdout

        out, err = real.communicate(timeout=120)

        r = cli("clean", "--force")
        assert r.returncode == 2 and "--force needs --run ID" in r.stderr
        r = cli("clean", "--run", live, "--force")
        assert r.returncode == 0 and not Path(f"/run/netns/{live}-h1").exists()

        if real.returncode != 0 and "lead time" in err:
            pytest.skip("the machine is too loaded for the emulation itself: " + err.strip())
        assert real.returncode == 0, err      # the real run finished despite `clean`
        assert (tmp_path / "k" / "complete.json").is_file()
    finally:
        if real is not None and real.poll() is None:
            real.kill()
        if holder is not None:
            holder.kill()
            holder.wait()
        for rid in (dead, live):
            emu.clean(rid, force=True)
