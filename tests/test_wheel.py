"""`pip install` of ccbench's wheel into a fresh venv: the package (Rust core included) runs the
quickstart from outside the repository and says which version it is. The wheel's dependencies
come from this venv (a .pth file), so the test needs no network."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MATURIN = Path(sys.executable).parent / "maturin"


@pytest.mark.skipif(not MATURIN.exists(), reason="maturin is not in this venv (make setup)")
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_quickstart(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([str(MATURIN), "build", "--release", "--quiet", "-o", str(wheels)],
                   cwd=ROOT, check=True, capture_output=True, timeout=900)
    (wheel,) = wheels.glob("ccbench-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies (numpy, polars, ...) from this venv, after the new venv's own packages
    (Path(site) / "deps-from-test.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--ignore-installed",
                    str(wheel)], check=True, timeout=300, capture_output=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(py), "-c", "import ccbench, ccbench._core; print(ccbench.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(site), where.stdout  # the wheel's, not the repo's
    cli = venv / "bin" / "ccbench"
    ver = subprocess.run([str(cli), "--version"], cwd=work, env=env, capture_output=True,
                         text=True, check=True).stdout
    assert ver.startswith("ccbench 0.") and "simulator core" in ver, ver
    shutil.copy(ROOT / "examples" / "quickstart.yaml", work / "quickstart.yaml")
    r = subprocess.run([str(cli), "run", "quickstart.yaml", "-o", "out"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "out" / "report.html").is_file()
    meta = json.loads((work / "out" / "metadata.json").read_text())
    assert meta["experiment"]["flows"]


def test_the_kernel_backend_finds_its_binaries_inside_an_installed_package(monkeypatch, tmp_path):
    from ccbench.backends.emu import common
    monkeypatch.setattr(common, "REPO", tmp_path / "no-repo")
    monkeypatch.setattr(common, "PACKAGE_BIN", tmp_path / "bin")
    monkeypatch.delenv(common.BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert common.binary("engine") is None
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "ccbench-emu"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert common.binary("engine") == exe
