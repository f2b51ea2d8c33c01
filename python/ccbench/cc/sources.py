"""The content of the files a scheme loads, as one digest a run's key covers.

A run's key hashes its resolved experiment (campaign/plan.py ``run_key``). A Python or BPF
scheme is named there by its path, so editing the file used to leave every finished run of it
"already done" with the old algorithm's numbers. The resolved flow therefore also carries
``source_sha256``: SHA-256 over the content of

* a Python scheme's module and every module of the user's own tree it imports (found
  statically, as ``runtime`` finds the module: nothing is imported or run); the standard
  library, installed packages and ccbench itself are left out — they change with the
  installation, which the run's metadata records;
* a BPF program's C file, the local headers it includes (``#include "…"``, recursively, next to
  the file or among the shipped ones) and the C compiler's version line; or the object file.

Files are hashed, and a module's imports parsed, once per (path, size, mtime) in a process.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
from functools import lru_cache
from pathlib import Path

_DIGESTS: dict[tuple, str] = {}
_IMPORTS: dict[tuple, list[str]] = {}
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_CCBENCH = os.path.realpath(Path(__file__).resolve().parents[1])


def file_digest(path: str) -> str:
    """SHA-256 of a file's bytes (cached while its size and mtime stay)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        with open(path, "rb") as fh:
            _DIGESTS[key] = hashlib.sha256(fh.read()).hexdigest()
    return _DIGESTS[key]


def combined(files: list[str], extra: str = "") -> str:
    """One digest over files (by base name and content, in a fixed order) and ``extra``."""
    h = hashlib.sha256(extra.encode())
    for f in sorted(set(files), key=lambda p: (os.path.basename(p), p)):
        h.update(f"\0{os.path.basename(f)}\0{file_digest(f)}".encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def _foreign_roots() -> tuple[str, ...]:
    """Where modules that are not the user's live: the standard library, installed packages
    and ccbench's own tree."""
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
             if k in paths}
    return tuple(sorted(roots | {_CCBENCH}))


def _is_users(path: str) -> bool:
    real = os.path.realpath(path)
    return not any(real == r or real.startswith(r + os.sep) for r in _foreign_roots())


def _module_file(name: str, search: list[str] | None) -> str | None:
    """The .py file of module ``name`` (dotted) on ``search`` (default sys.path), found as
    runtime finds a scheme's module: nothing imported; None when it is not a source file."""
    from .runtime import module_spec
    spec = module_spec(name, search)
    origin = getattr(spec, "origin", None)
    return origin if origin and origin.endswith(".py") and os.path.isfile(origin) else None


def _imports(path: str) -> list[str]:
    """Files of the user's modules that ``path`` imports (absolute imports on sys.path or next
    to the file; relative imports within its package), parsed once per (path, size, mtime):
    an experiment of many flows of one scheme walks its import tree once."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _IMPORTS:
        _IMPORTS[key] = _parse_imports(path)
    return list(_IMPORTS[key])


def _parse_imports(path: str) -> list[str]:
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    here = os.path.dirname(path)
    out = []
    for node in ast.walk(tree):
        names: list[tuple[str, list[str] | None]] = []
        if isinstance(node, ast.Import):
            names = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = Path(here)
                for _ in range(node.level - 1):
                    base = base.parent
                mod = node.module or ""
                cands = [mod] if mod else []
                cands += [f"{mod}.{a.name}" if mod else a.name for a in node.names]
                names = [(c, [str(base)]) for c in cands if c]
            elif node.module:
                names = [(node.module, None)]
                names += [(f"{node.module}.{a.name}", None) for a in node.names]
        for name, search in names:
            f = _module_file(name, search) or _module_file(name, [here])
            if f and _is_users(f):
                out.append(f)
    return out


def python_digest(module_file: str) -> str:
    """The digest of a Python scheme: its module file and the user's modules it imports."""
    return combined(python_files(module_file))


def c_digest(path: str, include_dirs: list[str]) -> str:
    """The digest of a BPF program: an object file, or a C file with its local headers and
    the compiler's version."""
    if not path.endswith(".c"):
        return combined([path])
    return combined(c_files(path, include_dirs), extra=compiler_version())


def _closure(start: str, deps) -> list[str]:
    """``start`` and every file ``deps(file)`` reaches from it, recursively (real paths)."""
    seen, todo = set(), [os.path.realpath(start)]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += [os.path.realpath(g) for g in deps(f)]
    return sorted(seen)


def python_files(module_file: str) -> list[str]:
    """``module_file`` and, recursively, the user's modules it imports."""
    return _closure(module_file, _imports)


def _includes(f: str, include_dirs: list[str]) -> list[str]:
    """The local headers C file ``f`` includes (``#include "…"``), found next to it or in
    ``include_dirs``."""
    try:
        text = Path(f).read_text(errors="replace")
    except OSError:
        return []
    out = []
    for inc in _INCLUDE.findall(text):
        for d in [os.path.dirname(f)] + list(include_dirs):
            cand = os.path.join(d, inc)
            if os.path.isfile(cand):
                out.append(cand)
                break
    return out


def c_files(path: str, include_dirs: list[str]) -> list[str]:
    """A C file and the local headers it includes, recursively (looked up next to the
    including file, then in ``include_dirs``)."""
    return _closure(path, lambda f: _includes(f, include_dirs))


@lru_cache(maxsize=1)
def compiler_version() -> str:
    """The first line of ``clang --version`` (what builds a BPF program), or "" without it."""
    exe = shutil.which("clang")
    if exe is None:
        return ""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (out.stdout.splitlines() or [""])[0].strip()


__all__ = ["c_digest", "c_files", "combined", "compiler_version", "file_digest", "python_digest",
           "python_files"]
