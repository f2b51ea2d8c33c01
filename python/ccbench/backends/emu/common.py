"""Names, addresses and binaries every part of the emulation backend shares."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

PREFIX = "ccb-"
RUN_RE = re.compile(r"^ccb-[0-9a-f]{6}$")
NS_RE = re.compile(r"^ccb-[0-9a-f]{6}-")
TUN_NAME = "ccbtun"
PORT_BASE = 10000
NET = "10.77"                # every address lives inside our namespaces only
BIN_ENV = "CCBENCH_EMU_BIN"  # directory holding ccbench-emu, ccbench-agent, ccbench-dgram
BIN_NAMES = {"engine": "ccbench-emu", "agent": "ccbench-agent", "dgram": "ccbench-dgram"}
REPO = Path(__file__).resolve().parents[4]
WORK_ROOT = Path(tempfile.gettempdir()) / "ccbench-emu"

ENGINE_NICE = -20           # engine: own autogroup at this nice (see crates/emu clock::prioritise)
AGENT_NICE = -10            # agents: likewise, so a busy machine does not starve the senders


class EmuError(RuntimeError):
    pass


#: Where a wheel built by `make wheel` carries the binaries (inside the package).
PACKAGE_BIN = Path(__file__).resolve().parents[2] / "bin"


def binary(name: str) -> Path | None:
    """Where the engine ("engine"), agent ("agent") or datagram ("dgram") binary is:
    $CCBENCH_EMU_BIN, then the
    repository's target/release (what `make build` produces), then target/debug, then the
    installed package's bin/ (a wheel from `make wheel`), then PATH."""
    exe = BIN_NAMES[name]
    cands = []
    if os.environ.get(BIN_ENV):
        cands.append(Path(os.environ[BIN_ENV]) / exe)
    cands += [REPO / "target" / "release" / exe, REPO / "target" / "debug" / exe,
              PACKAGE_BIN / exe]
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    w = shutil.which(exe)
    return Path(w) if w else None


def run_cmd(cmd: list[str], *, input: str | None = None, check: bool = True) -> str:
    """Run a short system command (`ip`, `tc`); its stdout, or EmuError naming it."""
    p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise EmuError(f"`{' '.join(cmd)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def host_addr(i: int) -> str:
    """Address of the i-th host (10.77.0.1, 10.77.0.2, ...)."""
    n = i + 1
    return f"{NET}.{n >> 8}.{n & 255}"


def kernel_tcp(f: dict) -> bool:
    """Whether a flow's endpoints are kernel TCP sockets of the agents: not a command scheme
    (its programs open their own), a UDP source, latency probes or a datagram scheme
    (ccbench-dgram)."""
    return (not f.get("command") and f.get("scheme") not in ("udp", "probe")
            and f.get("transport") != "dgram")


def cpu_times() -> dict[str, list[int]]:
    """/proc/stat's first eight counters (user … steal) of the machine ("cpu") and each CPU."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu"):
            f = line.split()
            out[f[0]] = [int(x) for x in f[1:9]]
    return out


def cpu_usage(a: dict, b: dict) -> dict:
    """Busy and steal fractions per CPU between two cpu_times() snapshots."""
    res = {}
    for k in b:
        if k not in a:
            continue
        d = [y - x for x, y in zip(a[k], b[k])]
        tot = max(1, sum(d))
        idle = d[3] + d[4]
        res[k] = {"busy": round(1 - idle / tot, 4), "steal": round(d[7] / tot, 4)}
    return res
