"""BPF congestion control on the simulator (docs/bpf-schemes.md, "In the simulator"): a
scheme's C source is compiled natively — ``clang -O2 -shared -fPIC`` (or gcc) against
ccbench's simulator ``vmlinux.h`` and stand-ins for libbpf's headers
(``schemes/bpf/sim/``), linked with the simulator's runtime (the tcp_cong.c kfuncs, socket
storage, clock) — and the Rust core loads the shared object (crates/sim/src/cc/native).

Objects are cached under ``~/.cache/ccbench/bpf-sim/<sha256>/``, the hash covering the
source, the headers it may include (its own directory's and the shipped ones), the simulator's
headers and runtime, the compiler's version and the flags; they are built at run time, never
while a configuration is checked.
"""
from __future__ import annotations

import copy
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..config.bpfschemes import SHIPPED_DIR

#: ccbench's simulator vmlinux.h, the bpf/*.h stand-ins and the runtime.
SIM_DIR = SHIPPED_DIR / "sim"
RUNTIME = SIM_DIR / "ccbench_sim_runtime.c"
FLAGS = ("-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
         "-Werror=implicit-function-declaration", "-Wl,-z,defs")
_OPS = re.compile(r'SEC\(\s*"\.struct_ops(?:\.link)?"\s*\)\s*struct\s+tcp_congestion_ops\s+'
                  r'([A-Za-z_]\w*)')


class BpfSimError(RuntimeError):
    """A BPF scheme cannot be built for the simulator."""


def compiler() -> str | None:
    """The C compiler to use: $CCBENCH_SIM_CC, else clang (as the kernel build), else gcc/cc."""
    env = os.environ.get("CCBENCH_SIM_CC")
    if env:
        return env
    for c in ("clang", "gcc", "cc"):
        if shutil.which(c):
            return c
    return None


def ops_variable(source: str) -> str | None:
    """The variable name of the one ``SEC(".struct_ops") struct tcp_congestion_ops`` in
    ``source`` (None: none or several)."""
    names = _OPS.findall(source)
    return names[0] if len(names) == 1 else None


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ccbench" / "bpf-sim"


def _compiler_version(cc: str) -> str:
    try:
        r = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BpfSimError(f"cannot run the C compiler {cc!r}: {e}") from e
    return r.stdout.strip()


def _inputs(src: Path) -> list[Path]:
    """The files whose text decides the object: the source, the headers next to it and the
    shipped ones, and the simulator's headers and runtime."""
    files = {src}
    for d in (src.parent, SHIPPED_DIR):
        files.update(d.glob("*.h"))
    files.update(p for p in SIM_DIR.rglob("*") if p.is_file() and p.suffix in (".h", ".c"))
    return sorted(files)


def build(path: str | Path, where: str = "scheme.bpf") -> Path:
    """The simulator build of the C source ``path`` (built now, or from the cache). ``where``
    names the YAML field for error messages."""
    src = Path(path)
    if src.suffix != ".c":
        raise BpfSimError(f"{where}: {src.name} is a BPF object; the simulator compiles C source. "
                          f"Fix: give the .c file it was built from (scheme: {{bpf: {src.stem}.c}}), "
                          "or run it with --backend emu")
    text = src.read_text(errors="replace")
    ops = ops_variable(text)
    if ops is None:
        raise BpfSimError(f"{where}: {src.name} does not define exactly one "
                          'SEC(".struct_ops") struct tcp_congestion_ops. Fix: see '
                          "python/ccbench/schemes/bpf/vegas.c for the form")
    cc = compiler()
    if cc is None:
        raise BpfSimError(f"{where}: no C compiler (clang, gcc or cc) to build {src.name} for the "
                          "simulator. Fix: install clang (make bpf) or set CCBENCH_SIM_CC")
    h = hashlib.sha256()
    for part in (_compiler_version(cc), " ".join(FLAGS), ops):
        h.update(part.encode() + b"\0")
    for f in _inputs(src):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    out_dir = cache_root() / h.hexdigest()
    so = out_dir / f"{src.stem}.so"
    if so.is_file():
        return so
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{src.stem}.{os.getpid()}.so"
    cmd = [cc, *FLAGS, "-I", str(SIM_DIR), "-I", str(SHIPPED_DIR), "-I", str(src.parent),
           f"-DCCBENCH_SIM_OPS={ops}", "-o", str(tmp), str(src), str(RUNTIME)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        lines = r.stderr.strip().splitlines()
        raise BpfSimError(f"{where}: {src} does not compile for the simulator (a helper or kernel "
                          "field the simulator does not provide is named below; docs/bpf-schemes.md "
                          "lists what it has):\n  " + "\n  ".join(lines[:30]))
    os.replace(tmp, so)
    return so


def prepare(experiment: dict) -> dict:
    """``experiment`` with each BPF flow's simulator build (``bpf.sim_object``) added; the
    experiment itself is left as it is (its run key does not change)."""
    if not any(f.get("bpf") for f in experiment.get("flows", [])):
        return experiment
    exp = copy.copy(experiment)
    exp["flows"] = []
    built: dict[str, str] = {}
    for f in experiment["flows"]:
        if f.get("bpf"):
            path = f["bpf"]["path"]
            if path not in built:
                where = f"flows[{f.get('group', f['id'])}].scheme.bpf ({f.get('label', '')})"
                built[path] = str(build(path, where))
            f = {**f, "bpf": {**f["bpf"], "sim_object": built[path]}}
        exp["flows"].append(f)
    return exp


__all__ = ["BpfSimError", "build", "prepare", "ops_variable", "compiler", "SIM_DIR"]
