"""Finding and removing what emulation runs create: namespaces `ccb-<run>-<host>`, engine
and agent processes, work directories. `clean()` is `ccbench clean`; a run's own teardown
uses the same pieces (run.py)."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .common import BIN_NAMES, NS_RE, PREFIX, RUN_RE, WORK_ROOT, run_cmd


def _proc_cmdlines():
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            yield int(d.name), (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue


def kill_pids(pids) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def ns_pids(ns: str) -> list[int]:
    out = run_cmd(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in out.split() if x.isdigit()]


def delete_namespace(ns: str) -> None:
    """`ip netns del`, retried while the kernel still holds the namespace busy."""
    for _ in range(20):
        p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True)
        if p.returncode == 0 or not Path("/run/netns", ns).exists():
            break
        time.sleep(0.05)


def list_namespaces(run_id: str | None = None) -> list[str]:
    d = Path("/run/netns")
    if not d.is_dir():
        return []
    names = sorted(p.name for p in d.iterdir() if NS_RE.match(p.name))
    if run_id:
        names = [n for n in names if n.startswith(run_id + "-")]
    return names


def our_processes(run_id: str | None = None) -> list[int]:
    """Engine and agent processes of ccbench runs (by binary name and run-id argument)."""
    me = os.getpid()
    pids = []
    for pid, argv in _proc_cmdlines():
        if pid == me or not argv or not argv[0]:
            continue
        exe = os.path.basename(argv[0].decode(errors="replace"))
        if exe not in BIN_NAMES.values():
            continue
        text = b" ".join(argv).decode(errors="replace")
        if run_id is None and PREFIX in text or run_id is not None and run_id in text:
            pids.append(pid)
    return pids


def clean(run_id: str | None = None, verbose: bool = False) -> dict:
    """Remove the namespaces, processes and work directories of ccbench emulation runs (all
    runs, or one `run_id`). Returns what was removed."""
    removed = {"processes": [], "namespaces": [], "workdirs": []}
    for ns in list_namespaces(run_id):
        pids = ns_pids(ns)
        kill_pids(pids)
        removed["processes"] += pids
    pids = our_processes(run_id)
    kill_pids(pids)
    removed["processes"] += pids
    for ns in list_namespaces(run_id):
        delete_namespace(ns)
        removed["namespaces"].append(ns)
    if WORK_ROOT.is_dir():
        for d in WORK_ROOT.iterdir():
            if RUN_RE.match(d.name) and (run_id is None or d.name == run_id):
                shutil.rmtree(d, ignore_errors=True)
                removed["workdirs"].append(str(d))
    if verbose:
        for k, v in removed.items():
            print(f"removed {len(v)} {k}" + (f": {' '.join(map(str, v))}" if v else ""))
    return removed
