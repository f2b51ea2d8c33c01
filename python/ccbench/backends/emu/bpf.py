"""BPF congestion control on the emulation backend (docs/bpf-schemes.md): build a scheme's C
source against this kernel's BTF, register its ``tcp_congestion_ops`` through struct_ops for
the run, unregister it at teardown — and after a SIGKILL, from ``ccbench clean``.

A struct_ops map in a plain ``.struct_ops`` section stays registered after ``bpftool``
exits (the kernel's TCP congestion-control list holds it), so every registration is written
to the run's work directory (``bpf.json``) *before* it is made: whoever cleans up a dead run
finds what to unregister there.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from ...config.bpfschemes import SHIPPED_DIR
from .common import EmuError

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
BTF = Path("/sys/kernel/btf/vmlinux")
RECORD = "bpf.json"
INSTALL = "make bpf (installs clang, libbpf-dev and bpftool through apt)"


def missing() -> str | None:
    """Why BPF schemes cannot be built and registered here (None: they can)."""
    if shutil.which("clang") is None:
        return f"clang is not installed. Fix: {INSTALL}"
    if shutil.which("bpftool") is None:
        return f"bpftool is not installed. Fix: {INSTALL}"
    if not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        return f"libbpf headers (/usr/include/bpf) are missing. Fix: {INSTALL}"
    if not BTF.is_file():
        return "the kernel exposes no BTF (/sys/kernel/btf/vmlinux): it needs CONFIG_DEBUG_INFO_BTF"
    return None


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ccbench" / "bpf" / os.uname().release


def vmlinux_h() -> Path:
    """This kernel's types as C (``bpftool btf dump ... format c``), cached per release."""
    d = cache_dir()
    h = d / "vmlinux.h"
    if h.is_file() and h.stat().st_size > 0:
        return h
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".vmlinux.h.{os.getpid()}"
    with open(tmp, "w") as out:
        r = subprocess.run(["bpftool", "btf", "dump", "file", str(BTF), "format", "c"],
                           stdout=out, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise EmuError(f"bpftool btf dump failed: {r.stderr.strip()[-500:]}")
    os.replace(tmp, h)
    return h


def build(src: Path, out_dir: Path) -> Path:
    """Compile a scheme's C source to a BPF object in ``out_dir`` (a .o is used as is)."""
    src = Path(src)
    if src.suffix == ".o":
        return src
    why = missing()
    if why:
        raise EmuError(f"cannot build the BPF scheme {src}: {why}")
    inc = vmlinux_h().parent
    out_dir.mkdir(parents=True, exist_ok=True)
    obj = out_dir / (src.stem + ".o")
    cmd = ["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", "-I", str(inc),
           "-I", str(SHIPPED_DIR), "-I", str(src.parent), "-c", str(src), "-o", str(obj)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise EmuError(f"the BPF scheme {src} does not compile:\n  " + "\n  ".join(lines[:30]))
    return obj


def available() -> set[str]:
    try:
        return set(AVAILABLE.read_text().split())
    except OSError:
        return set()


def parse_bpftool_json(stdout: str):
    """bpftool's -j output as Python data (None: not JSON). ``struct_ops register`` also prints
    a plain "Registered ..." line, and bpftool 7.1's ``struct_ops dump id N`` writes its objects
    comma-separated without the enclosing list."""
    text = "\n".join(ln for ln in stdout.splitlines()
                     if not ln.startswith(("Registered", "Unregistered"))).strip().rstrip(",")
    for candidate in (text, f"[{text}]"):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _bpftool_json(*args: str):
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    return parse_bpftool_json(r.stdout) if r.returncode == 0 else None


def registered() -> dict[int, str]:
    """Registered struct_ops maps of kind tcp_congestion_ops: {id: map name}."""
    out = _bpftool_json("struct_ops", "show") or []
    return {int(m["id"]): m.get("name", "") for m in out
            if isinstance(m, dict) and m.get("kernel_struct_ops") == "tcp_congestion_ops"}


def cc_name(map_id: int) -> str | None:
    """The congestion-control name (``.name``) of a registered struct_ops map."""
    d = _bpftool_json("struct_ops", "dump", "id", str(map_id)) or []
    for item in d if isinstance(d, list) else [d]:
        for k, v in item.items() if isinstance(item, dict) else ():
            if k.startswith("bpf_struct_ops_") and isinstance(v, dict):
                name = (v.get("data") or {}).get("name")
                if name:
                    return name
    return None


def _write_record(work: Path, entries: list[dict]) -> None:
    tmp = work / (RECORD + ".tmp")
    tmp.write_text(json.dumps(entries))
    os.replace(tmp, work / RECORD)


def read_record(work: Path) -> list[dict]:
    try:
        data = json.loads((work / RECORD).read_text())
    except (OSError, ValueError):
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def register(obj: Path, expected_cc: str | None, work: Path, entries: list[dict]) -> dict:
    """Register the struct_ops maps of ``obj``; returns {"ids", "cc", "obj"} (also appended
    to ``entries`` and to the run's ``bpf.json``, first as pending, before registering)."""
    have = available()
    if expected_cc and expected_cc in have:
        raise EmuError(
            f"congestion control {expected_cc!r} is already registered in this kernel: by a "
            f"running ccbench run (wait for it to end), left over by a killed one (`sudo ccbench "
            f"clean` removes it) or by another program (`bpftool struct_ops show`)")
    entry = {"obj": str(obj), "cc": expected_cc, "ids": [], "pending": True}
    entries.append(entry)
    _write_record(work, entries)
    before = registered()
    r = subprocess.run(["bpftool", "struct_ops", "register", str(obj)], capture_output=True, text=True)
    after = registered()
    new = sorted(set(after) - set(before))
    mine = []
    for i in new:
        name = cc_name(i)
        if name and name not in have and (expected_cc is None or name == expected_cc):
            mine.append((i, name, after[i]))
    entry.update({"ids": [i for i, _, _ in mine], "maps": [m for _, _, m in mine],
                  "pending": False})
    if mine:
        entry["cc"] = mine[0][1]
    _write_record(work, entries)
    if r.returncode != 0 or not mine:
        detail = (r.stderr or r.stdout).strip().splitlines()
        raise EmuError(f"registering the BPF scheme {obj} failed (bpftool struct_ops register): "
                       + " | ".join(detail[-8:]))
    return entry


def global_maps(entry: dict) -> list[int]:
    """The ids of a registered scheme's global-data maps (``.bss``, ``.data``, ``.rodata``):
    the maps sharing its struct_ops maps' BTF."""
    maps = _bpftool_json("map", "show") or []
    btf = {int(m["id"]): m.get("btf_id") for m in maps if isinstance(m, dict) and "id" in m}
    want = {btf.get(i) for i in entry.get("ids") or []} - {None}
    return [int(m["id"]) for m in maps
            if isinstance(m, dict) and m.get("btf_id") in want
            and str(m.get("name", "")).endswith((".bss", ".data", ".rodata"))]


def flatten(value, prefix: str = "") -> dict[str, float]:
    """bpftool's BTF-formatted values by dotted name (a struct's fields as ``s.f``); numbers
    only."""
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(value, list):
        for item in value:
            out.update(flatten(item, prefix))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix.rstrip(".")] = float(value)
    return out


def read_globals(map_ids: list[int]) -> dict[str, float]:
    """The current values of the global variables in ``map_ids``, by (dotted) name."""
    out: dict[str, float] = {}
    for i in map_ids:
        for item in _bpftool_json("map", "dump", "id", str(i)) or []:
            sections = ((item.get("formatted") or {}).get("value") or {}) if isinstance(item, dict) else {}
            for fields in sections.values():
                out.update(flatten(fields))
    return out


def repair_counts(entry: dict) -> dict[str, int]:
    """The CCBENCH_REPAIR counters (ccbench_tcp_ca.h) of a registered scheme: how often the
    program found a loss response the kernel did not run and repaired it: its ``ccbench_*``
    globals (global_maps, read_globals); {} when not found (a program of the user's own that
    does not use the guard)."""
    return {k[len("ccbench_"):]: int(v) for k, v in read_globals(global_maps(entry)).items()
            if k.startswith("ccbench_")}


def unregister(entries: list[dict], timeout: float = 2.0) -> list[str]:
    """Unregister what ``entries`` registered (by id, checking the id still holds the same
    congestion control: ids are reused), then wait until the names leave the kernel's list
    (sockets that used them drain first). Returns problems (empty: all gone)."""
    problems = []
    names = set()
    for e in entries:
        cc = e.get("cc")
        ids = list(e.get("ids") or [])
        if not ids and cc:  # killed between registering and recording the id: find it by name
            ids = [i for i in registered() if cc_name(i) == cc]
        for i in ids:
            if cc and cc_name(i) != cc:
                continue  # gone already; the id may now be someone else's
            r = subprocess.run(["bpftool", "struct_ops", "unregister", "id", str(i)],
                               capture_output=True, text=True)
            if r.returncode != 0 and i in registered():
                problems.append(f"bpftool struct_ops unregister id {i} ({cc}): "
                                f"{(r.stderr or r.stdout).strip()[-200:]}")
        if cc:
            names.add(cc)
    deadline = time.monotonic() + timeout
    while names & available() and time.monotonic() < deadline:
        time.sleep(0.02)
    for n in sorted(names & available()):
        problems.append(f"congestion control {n!r} is still registered {timeout:.0f} s after "
                        "unregistering (sockets still using it?)")
    return problems


__all__ = ["missing", "build", "register", "unregister", "repair_counts", "read_record", "registered",
           "cc_name", "available", "vmlinux_h", "RECORD"]
