"""Atomic writing of a results directory: everything goes to a temporary sibling directory
``.NAME.tmp-<pid>-*`` that is renamed into place only when complete, so a crash never leaves
half a result. The completeness marker (marker.py) is written into it last.

Re-running into an existing results directory replaces what ccbench wrote there and keeps
everything else (a user's notes, a symlink): those entries move into the new directory.
Temporary directories left by killed writers (their pid is gone) are removed first."""
from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

import polars as pl

from .schema import check
from .spill import ROW_GROUP_ROWS
from . import marker

#: Temporaries without a pid in their name (older ccbench) are stale after this long.
_LEGACY_STALE_S = 600
#: A table smaller than this in memory is encoded into a buffer and written with one open
#: and one write (the same bytes): polars given a path resolves it — a stat and a readlink
#: per folder level — and opens the file twice, ~8 system calls a table, six tables a
#: campaign run.
SMALL_TABLE_BYTES = 16 * 2**20


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_temporaries(out_dir: str | Path) -> list[Path]:
    """Hidden ``.NAME.tmp-*``/``.NAME.old-*`` siblings of ``out_dir`` whose writer is gone."""
    out_dir = Path(out_dir)
    parent = out_dir.parent
    if not parent.is_dir():
        return []
    pid_named = re.compile(re.escape(f".{out_dir.name}.") + r"(?:tmp-(\d+)-.+|old-(\d+))$")
    legacy = re.compile(re.escape(f".{out_dir.name}.tmp-") + r".+$")
    stale = []
    prefix = f".{out_dir.name}."
    # the name first: a campaign's runs/ holds thousands of folders, and a stat of each
    # per run written made writing N runs cost N² system calls
    for p in (parent / e for e in os.listdir(parent) if e.startswith(prefix)):
        if not p.is_dir():
            continue
        m = pid_named.match(p.name)
        if m:
            if not _alive(int(m.group(1) or m.group(2))):
                stale.append(p)
        elif legacy.match(p.name):
            try:
                if time.time() - p.stat().st_mtime > _LEGACY_STALE_S:
                    stale.append(p)
            except OSError:
                pass
    return sorted(stale)


def _recover(out_dir: Path) -> None:
    """Remove temporaries of killed writers. A ``.old-`` directory of a writer killed in the
    middle of its swap may still hold the previous results (restored when ``out_dir`` is
    missing) or files a user kept there (moved back into ``out_dir``)."""
    for p in stale_temporaries(out_dir):
        if ".old-" in p.name:
            if not out_dir.exists():
                os.rename(p, out_dir)
                continue
            for name in marker.foreign(p):
                if not (out_dir / name).exists():
                    os.rename(p / name, out_dir / name)
        shutil.rmtree(p, ignore_errors=True)


def write_results(out_dir: str | Path, tables: dict[str, pl.DataFrame], meta: dict,
                  *, overwrite: bool = True, extra_dirs: dict[str, Path] | None = None,
                  files: dict[str, bytes] | None = None, recover: bool = True,
                  compact: bool = False, written: dict | None = None) -> Path:
    """Write `tables` (each checked against results/schema.py; a DataFrame or a
    `spill.SpilledTable`, written a chunk at a time) and `meta` into `out_dir`.
    `extra_dirs`: directories moved into the result under the given names (e.g. the run's
    pcapng captures as ``pcap``), `files`: files written into it (name → bytes, e.g. a
    campaign run's ``summary.json``), both inside the same atomic rename. ``recover=False``:
    the caller removes the temporaries of killed writers beside `out_dir` itself (a campaign
    does once per session: listing a runs/ folder of 10,000 runs for each run written took
    ~5 ms a run). ``compact=True``: ``metadata.json`` without indentation (the same JSON,
    one line; campaigns, whose runs' metadata is read by programs: CPython encodes indented
    JSON in pure Python, ~0.3 ms for a run's 4 kB against ~0.05 ms compact). ``written``: a
    dict that receives the text of ``metadata.json`` as written (key ``"metadata.json"``;
    api.run keeps it rather than read the file back)."""
    for name, df in tables.items():
        check(name, df)  # before anything is written
    out_dir = Path(out_dir)
    existed = _check_target(out_dir, overwrite)
    if recover:
        _recover(out_dir)
    tmp = _make_temporary(out_dir)
    try:
        meta = dict(meta)
        meta["tables"] = {}
        from ..interrupt import checkpoint   # (interrupt imports results.marker)
        for name, df in tables.items():
            # A fixed row-group size: the same bytes whether the table was in memory or
            # spilled to disk in chunks during the run (results/spill.py).
            opts = dict(compression="zstd", statistics=True, row_group_size=ROW_GROUP_ROWS)
            if isinstance(df, pl.DataFrame) and df.estimated_size() <= SMALL_TABLE_BYTES:
                buf = io.BytesIO()
                df.write_parquet(buf, **opts)
                marker.write_file(tmp / f"{name}.parquet", buf.getbuffer())
            elif isinstance(df, pl.DataFrame):
                df.write_parquet(tmp / f"{name}.parquet", **opts)
            else:
                df.lazy().sink_parquet(tmp / f"{name}.parquet", **opts)
            meta["tables"][name] = {"rows": df.height, "columns": df.columns}
            checkpoint("tables")
        for name, src in (extra_dirs or {}).items():
            shutil.move(str(src), str(tmp / name))
        # each file written once into the folder nobody sees yet (no temporary file and
        # rename per file: the folder's rename below is the one commit)
        for name, data in (files or {}).items():
            marker.write_file(tmp / name, data)
        text = json.dumps(meta, indent=None if compact else 2, sort_keys=True) + "\n"
        marker.write_file(tmp / "metadata.json", text.encode())
        if written is not None:
            written["metadata.json"] = text
        marker.write(tmp, marker.initial(tables), atomic=False)   # tmp is not visible yet
        _commit(tmp, out_dir, existed)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def _check_target(out_dir: Path, overwrite: bool) -> bool:
    """Refuse an ``out_dir`` that is not a results directory (or holds results and not
    ``overwrite``); whether it exists. One stat when it does not (a campaign's runs)."""
    try:
        st = os.stat(out_dir)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise FileExistsError(f"{out_dir} exists and is not a directory; choose another -o DIR")
    if not (out_dir / "metadata.json").is_file() and any(out_dir.iterdir()):
        raise FileExistsError(
            f"{out_dir} exists and is not a ccbench results directory; choose another -o DIR")
    if not overwrite and (out_dir / "metadata.json").is_file():
        raise FileExistsError(f"{out_dir} already holds results; pass overwrite=True")
    return True


def _make_temporary(out_dir: Path) -> Path:
    """The temporary sibling ``.NAME.tmp-<pid>-*``; the parent folders are made only when
    missing (a campaign writes thousands of runs into one runs/ folder)."""
    prefix = f".{out_dir.name}.tmp-{os.getpid()}-"
    try:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=out_dir.parent))
    except FileNotFoundError:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=out_dir.parent))


def _commit(tmp: Path, out_dir: Path, existed: bool) -> None:
    """Rename ``tmp`` into place, with Ctrl-C held back until it is done: a new ``out_dir``
    is one rename; an existing one is swapped, what a user kept in it moved across."""
    from ..interrupt import checkpoint, critical   # (interrupt imports results.marker)
    with critical():
        checkpoint("swap")
        if not existed:
            try:
                os.rename(tmp, out_dir)
                return
            except OSError as e:   # made meanwhile (not empty, or not a folder)
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                    raise
            _check_target(out_dir, True)
        elif not os.path.lexists(out_dir):   # removed meanwhile
            os.rename(tmp, out_dir)
            return
        keep = marker.foreign(out_dir)
        old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        for name in keep:
            os.rename(old / name, out_dir / name)
        shutil.rmtree(old, ignore_errors=True)
