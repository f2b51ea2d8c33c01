"""The completeness marker of a results directory: ``complete.json``.

The table writer puts it in the temporary directory last, so a results directory that has
one holds every table its metadata lists. Later stages (the report, plots) record
themselves in it: before they start, ``in_progress`` names the stage; when they finish it
is cleared and the files they wrote are listed. The marker therefore says what a folder
holds and whether something was cut short:

    {"format": 1, "tables": ["flows", ...], "report": "report.html" | null,
     "plots": ["plots/per-flow-throughput.png", ...], "in_progress": null | "report" | "plots",
     "updated": "2026-11-24T23:50:00+00:00"}

It is also the list of files ccbench wrote: re-running into the folder replaces those and
keeps everything else (:func:`ours`).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import warnings
from pathlib import Path

MARKER = "complete.json"
FORMAT = 1
#: Names ccbench writes in a results directory besides the tables (folders written before
#: the marker existed are recognised by these).
KNOWN = ("metadata.json", MARKER, "report.html", "plots")


class IncompleteResults(FileNotFoundError):
    """A results directory lacks tables its metadata lists, or is not one at all."""


class IncompleteWarning(UserWarning):
    """A results directory whose report or plots were cut short, or that has no marker."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def read(path: str | Path) -> dict | None:
    f = Path(path) / MARKER
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_file(path: str | Path, data: bytes) -> None:
    """Create (or truncate) ``path`` and write ``data``: open, write, close — the three
    system calls a file needs. ``Path.write_bytes`` adds an fstat, an ioctl and one or two
    lseeks (the buffered file object's set-up), a third of a campaign run's file system
    calls (docs/benchmarks.md, "Campaign layer")."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write(path: str | Path, data: dict, *, atomic: bool = True) -> None:
    """Replace the marker atomically (a reader sees the old or the new one, never half);
    ``atomic=False`` writes it in place, for a folder nobody reads yet (the writer's
    temporary folder: a file and a rename fewer)."""
    path = Path(path)
    data = {**data, "format": FORMAT, "updated": _now()}
    if not atomic:
        write_file(path / MARKER, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
        return
    tmp = path / f".{MARKER}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path / MARKER)


def initial(tables) -> dict:
    return {"tables": sorted(tables), "report": None, "plots": [], "in_progress": None}


def begin(path: str | Path, stage: str) -> None:
    """Record that ``stage`` ("report" or "plots") is being written."""
    data = read(path) or initial([])
    data["in_progress"] = stage
    write(path, data)


def finish(path: str | Path, stage: str, files=()) -> None:
    """Record that ``stage`` finished, with the files (paths or names) it wrote."""
    path = Path(path)
    data = read(path) or initial([])
    rel = sorted({str(Path(f).resolve().relative_to(path.resolve())) if Path(f).is_absolute()
                  else str(f) for f in files})
    if stage == "report":
        data["report"] = rel[0] if rel else "report.html"
    else:
        data["plots"] = sorted(set(data.get("plots", [])) | set(rel))
    data["in_progress"] = None
    write(path, data)


def abandon(path: str | Path, stage: str) -> list[str]:
    """After ``stage`` was cut short: remove what it left half-written (the report's temp
    file, a report.html not recorded as finished) and clear ``in_progress``. Returns the
    names removed."""
    path = Path(path)
    removed = []
    data = read(path)
    if stage == "report":
        for name in ("report.html.tmp", "report.html"):
            f = path / name
            if f.exists() and not (name == "report.html" and data and data.get("report")):
                f.unlink()
                removed.append(name)
    if data is not None and data.get("in_progress") == stage:
        data["in_progress"] = None
        write(path, data)
    return removed


def ours(path: str | Path) -> set[str]:
    """Top-level names in ``path`` that ccbench wrote (tables, metadata, marker, report,
    plots), per its marker, or by name for folders written before markers existed."""
    path = Path(path)
    data = read(path)
    names = {"metadata.json", MARKER, "report.html", "report.html.tmp", "plots", "pcap",
             "summary.json"}
    try:   # the tables ccbench wrote are listed in its metadata
        meta = json.loads((path / "metadata.json").read_text())
        names |= {f"{t}.parquet" for t in (meta.get("tables") or {})}
    except (OSError, ValueError, AttributeError):
        pass
    if data is not None:
        names |= {f"{t}.parquet" for t in data.get("tables", [])}
    return {n for n in names if (path / n).exists() or (path / n).is_symlink()}


def foreign(path: str | Path) -> list[str]:
    """Top-level entries of ``path`` that ccbench did not write (kept on a re-run)."""
    path = Path(path)
    mine = ours(path)
    return sorted(p.name for p in path.iterdir()
                  if p.name not in mine and not p.name.startswith(f".{MARKER}.tmp-"))


def check(path: str | Path, meta: dict) -> None:
    """Refuse a folder missing a table its metadata or marker lists; warn when it has no
    marker (an older ccbench, or not finished) or a stage was cut short."""
    path = Path(path)
    data = read(path)
    listed = set((meta.get("tables") or {}).keys()) | set((data or {}).get("tables", []))
    missing = sorted(t for t in listed if not (path / f"{t}.parquet").is_file())
    if missing:
        raise IncompleteResults(
            f"{path} is incomplete: {', '.join(m + '.parquet' for m in missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; run the experiment again")
    if data is None:
        warnings.warn(f"{path} has no {MARKER} (written by an older ccbench, or copied "
                      "without it); its tables are read as they are", IncompleteWarning,
                      stacklevel=3)
    elif data.get("in_progress"):
        stage = data["in_progress"]
        warnings.warn(f"{path}: writing the {stage} was cut short; the tables are complete "
                      f"(`ccbench {'report' if stage == 'report' else 'plot'} {path}` "
                      f"writes the {stage} again)", IncompleteWarning, stacklevel=3)
