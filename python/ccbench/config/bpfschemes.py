"""BPF schemes: a kernel congestion control written in BPF, registered for the run through
struct_ops (docs/bpf-schemes.md)::

    scheme: {bpf: vegas}                    # shipped: python/ccbench/schemes/bpf/*.c
    scheme: {bpf: my_cc.c}                  # a file next to the experiment (or a .o)
    scheme: {bpf: build/my_cc.o, name: mycc}
    scheme: {bpf: my_cc.c, record: [rounds, est.bw]}   # globals -> cc_rounds, cc_est_bw

The emulation backend registers them in the kernel; the simulator compiles the same C source
natively and runs it (ccbench.backends.bpfsim; a .o runs on the kernel only). The resolved flow carries ``"bpf": {"path": ..., "cc": ...}`` with ``cc`` the
congestion-control name the program registers (its ``.name``), and ``"scheme"`` = ``name:`` or
that name.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..cc import sources
from .conditions import BASE_DIR
from .errors import Collector, show
from .schemes import SCHEMES_DIR

#: The congestion controls the kernel backend's Linux offers itself; every other algorithm runs
#: there as a shipped BPF program (docs/bpf-schemes.md).
KERNEL_CCS = ("reno", "cubic", "bbr")

#: The BPF congestion controls shipped with ccbench.
SHIPPED_DIR = SCHEMES_DIR / "bpf"
EXAMPLE = "e.g. scheme: {bpf: vegas} (a shipped one) or scheme: {bpf: my_cc.c}"
_NAME = re.compile(r'\.name\s*=\s*"([A-Za-z0-9_\-]{1,15})"')
#: A recorded variable: a global of the program, or a field of a global struct (dotted).
RECORD_VAR = re.compile(r"[A-Za-z_]\w{0,63}(\.[A-Za-z_]\w{0,63}){0,3}")
RECORD_MAX = 16
RECORD_HINT = ("a list of the program's global variables (or fields of a global struct, "
               "dotted), e.g. record: [rounds, est.bw]; each becomes the column cc_<name>")


def column_of(var: str) -> str:
    """The flows-table column a recorded variable fills: ``est.bw`` -> ``cc_est_bw``."""
    return "cc_" + var.replace(".", "_")


def _parse_record(v: Any, where: tuple, errs: Collector) -> list[str]:
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list) or not items:
        errs.error(where, f"{show(v)} is not a list of variables", RECORD_HINT, v)
        return []
    out: list[str] = []
    for i, x in enumerate(items):
        if not (isinstance(x, str) and RECORD_VAR.fullmatch(x.strip())):
            errs.error(where + (i,), f"{show(x)} is not a C variable name", RECORD_HINT, x)
        elif x.strip() in out:
            errs.error(where + (i,), f"{show(x)} is recorded twice", "name each variable once", x)
        else:
            out.append(x.strip())
    if len(out) > RECORD_MAX:
        errs.error(where, f"{len(out)} variables recorded; at most {RECORD_MAX}",
                   "record fewer (put what belongs together in one struct and record its fields)", v)
        return []
    return out


def shipped() -> list[str]:
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.c"))


def is_bpf_scheme(value: Any) -> bool:
    return isinstance(value, dict) and "bpf" in value


def _find(value: str) -> str | None:
    if "/" not in value and not value.endswith((".c", ".o")) and (SHIPPED_DIR / f"{value}.c").is_file():
        return str(SHIPPED_DIR / f"{value}.c")
    p = os.path.expanduser(value)
    base = BASE_DIR.get()
    for c in (p, os.path.join(base, p) if base and not os.path.isabs(p) else None):
        if c and os.path.exists(c):
            return os.path.abspath(c)
    return None


def cc_name_of_source(path: str) -> str | None:
    """The ``.name = "..."`` a C source gives its tcp_congestion_ops (None: not found)."""
    try:
        names = _NAME.findall(Path(path).read_text(errors="replace"))
    except OSError:
        return None
    return names[0] if len(names) == 1 else None


def parse_bpf_scheme(value: dict, spath: tuple, errs: Collector) -> tuple[str | None, dict | None]:
    """-> (scheme name, {"path", "cc", "sha256"[, "record"]})."""
    path: str | None = None
    name: str | None = None
    record: list[str] = []
    for k, v in value.items():
        key = str(k)
        if key == "bpf":
            if not isinstance(v, str) or not v.strip():
                errs.error(spath + (k,), f"{show(v)} is not a BPF program", EXAMPLE, v)
                continue
            found = _find(v.strip())
            if found is None:
                errs.error(spath + (k,), f"no BPF program {show(v)}: not a shipped one "
                           f"({', '.join(shipped())}) and no such file", EXAMPLE, v)
            elif not os.path.isfile(found):
                errs.error(spath + (k,), f"{show(v)} is not a file", EXAMPLE, v)
            elif not found.endswith((".c", ".o")):
                errs.error(spath + (k,), f"{show(v)} is neither C source (.c) nor a BPF object (.o)",
                           EXAMPLE, v)
            else:
                path = found
        elif key == "name":
            if isinstance(v, str) and v.strip():
                name = v.strip()
            else:
                errs.error(spath + (k,), f"{show(v)} is not a scheme name", "write a short text", v)
        elif key == "record":
            record = _parse_record(v, spath + (k,), errs)
        else:
            errs.error(spath + (k,), f"unknown key {show(k)} in a BPF scheme",
                       "a BPF scheme has `bpf:` and optionally `name:` and `record:`", v)
    if path is None:
        return name, None
    cc = cc_name_of_source(path) if path.endswith(".c") else None
    if path.endswith(".c") and cc is None:
        errs.error(spath + ("bpf",), f"{os.path.basename(path)} does not define exactly one "
                   "struct tcp_congestion_ops with .name = \"...\" (at most 15 characters)",
                   "see python/ccbench/schemes/bpf/vegas.c for the form", value.get("bpf"))
        return name, None
    # a .o's name is read from the kernel once it is registered; sha256: the program's files
    # (and compiler), so that editing them changes the run's key (cc/sources.py)
    spec = {"path": path, "cc": cc, "sha256": sources.c_digest(path, [str(SHIPPED_DIR)])}
    if record:
        spec["record"] = record
    return name or cc or Path(path).stem, spec


__all__ = ["is_bpf_scheme", "parse_bpf_scheme", "shipped", "SHIPPED_DIR", "cc_name_of_source", "RECORD_VAR",
           "column_of"]
