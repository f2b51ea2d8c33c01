"""Host-wide settings an emulation run raises for its duration, and puts back.

``net.core.netdev_max_backlog`` (not per network namespace: init_net's) bounds each CPU's
queue of received packets waiting for the stack. Every packet the engine writes into a TUN
device enters that queue (tun_get_user -> netif_rx), and at 2 Gbit/s one flow's bursts
overflow Linux's default of 1000: measured, one CUBIC flow at 2 Gbit/s with 64-MiB buffers
lost 482 packets in the TUN devices (outside the model; the run was flagged) with 1000 and
none in two runs with 10000 (docs/emulation.md). A run raises it to BACKLOG when lower,
writes what it found to ``host.json`` in its work directory first, and restores it at
teardown — unless something else changed it meanwhile (another run's restore, the admin);
``ccbench clean`` restores it from a killed run's record.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .netns import read_sysctl, write_sysctl

BACKLOG_KEY = "net.core.netdev_max_backlog"
BACKLOG = 10000
RECORD = "host.json"


def read(key: str) -> int | None:
    try:
        return int(read_sysctl(key).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def raise_backlog(work: Path) -> dict | None:
    """Raise netdev_max_backlog to BACKLOG if lower: {"key", "was", "set"} (recorded in
    ``work/host.json`` before the write), or None when nothing was changed."""
    was = read(BACKLOG_KEY)
    if was is None or was >= BACKLOG:
        return None
    change = {"key": BACKLOG_KEY, "was": was, "set": BACKLOG}
    (work / RECORD).write_text(json.dumps([change]))
    write_sysctl(BACKLOG_KEY, str(BACKLOG))
    return change


def restore(work: Path) -> list[str]:
    """Put back what ``work/host.json`` records, where the value is still the one set; the
    record is removed. Returns what was restored (for `ccbench clean`'s report)."""
    rec = work / RECORD
    try:
        if rec.stat().st_uid != os.geteuid():
            return []   # not written by this user (the work root is under /tmp): ignored
        changes = json.loads(rec.read_text())
    except (OSError, ValueError):
        return []
    done = []
    for c in changes if isinstance(changes, list) else []:
        key, was, val = c.get("key"), c.get("was"), c.get("set")
        # only what raise_backlog writes: the key, our value, and a lower one found before
        if (key != BACKLOG_KEY or val != BACKLOG or not isinstance(was, int)
                or isinstance(was, bool) or not 0 < was < BACKLOG):
            continue    # a record ccbench did not write: never write a foreign value
        if read(key) == val:
            write_sysctl(key, str(was))
            done.append(f"{key}={was}")
    rec.unlink(missing_ok=True)
    return done


__all__ = ["raise_backlog", "restore", "BACKLOG", "BACKLOG_KEY"]
