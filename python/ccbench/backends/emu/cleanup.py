"""Finding and removing what emulation runs create: namespaces `ccb-<run>-<host>`, engine
and agent processes, work directories, registered BPF congestion controls (bpf.py). `clean()` is `ccbench clean`; a run's own teardown
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


def runs() -> dict[str, dict]:
    """Every emulation run with something on this machine: ``{run_id: {"namespaces",
    "processes", "workdir", "locked", "live", "owner"}}``. ``live``: the process that started
    the run still holds its lock (ccbench.runlock); otherwise what is left is a killed run's."""
    import re
    from ...runlock import LOCK_NAME, is_live, owner
    found: dict[str, dict] = {}

    def entry(rid: str) -> dict:
        return found.setdefault(rid, {"namespaces": [], "processes": [], "workdir": None})

    for ns in list_namespaces():
        entry(ns[:len(PREFIX) + 6])["namespaces"].append(ns)
    run_in = re.compile(r"ccb-[0-9a-f]{6}")
    for pid in our_processes():
        try:
            text = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        m = run_in.search(text)
        if m:
            entry(m.group(0))["processes"].append(pid)
    if WORK_ROOT.is_dir():
        for d in WORK_ROOT.iterdir():
            if RUN_RE.match(d.name):
                entry(d.name)["workdir"] = str(d)
    for rid, e in found.items():
        work = WORK_ROOT / rid
        # BPF congestion controls the run registered (bpf.py): kernel-wide, not in a namespace
        from .bpf import read_record
        e["bpf"] = [x["cc"] for x in read_record(work) if x.get("cc")]
        e["locked"] = (work / LOCK_NAME).exists()
        # no lock file but a work directory: started by a ccbench without run locks, so
        # whether it runs cannot be told; treated as live (clean needs --run ID --force)
        e["live"] = is_live(work) or (not e["locked"] and e["workdir"] is not None)
        e["owner"] = owner(work)
    return dict(sorted(found.items()))


def _clean_one(run_id: str, removed: dict) -> None:
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
    d = WORK_ROOT / run_id
    from .hostsys import restore
    removed.setdefault("host settings", []).extend(restore(d))
    from .bpf import read_record, unregister
    entries = read_record(d)
    if entries:
        problems = unregister(entries)
        if problems:  # keep the record: a later `clean` tries again
            removed.setdefault("problems", []).extend(problems)
            return
        removed.setdefault("bpf", []).extend(x["cc"] for x in entries if x.get("cc"))
    if d.is_dir():
        shutil.rmtree(d, ignore_errors=True)
        removed["workdirs"].append(str(d))


def clean(run_id: str | None = None, verbose: bool = False, force: bool = False) -> dict:
    """Remove the namespaces, processes and work directory of emulation runs whose owning
    process is gone (all such runs, or only ``run_id``). A live run is skipped (listed under
    "skipped") unless ``run_id`` names it and ``force`` is set. Returns what was removed."""
    from ...runlock import owner
    if force and run_id is None:
        raise ValueError("--force needs --run ID: a live run is removed only by its id")
    removed = {"processes": [], "namespaces": [], "workdirs": [], "bpf": [], "host settings": [],
               "skipped": []}
    for rid, e in runs().items():
        if run_id is not None and rid != run_id:
            continue
        if e["live"] and not force:
            removed["skipped"].append(rid)
            continue
        _clean_one(rid, removed)
    if verbose:
        for k, v in removed.items():
            if k == "problems":
                for p in v:
                    print(f"could not remove: {p}")
            elif k != "skipped":
                verb = "restored" if k == "host settings" else "removed"
                print(f"{verb} {len(v)} {k}" + (f": {' '.join(map(str, v))}" if v else ""))
        for rid in removed["skipped"]:
            pid = owner(WORK_ROOT / rid)
            why = (f"it is running (pid {pid})" if pid else "its work directory has no lock "
                   "(an older ccbench): it may be running")
            print(f"skipped {rid}: {why}; `ccbench clean --run {rid} --force` stops and "
                  "removes it")
    return removed
