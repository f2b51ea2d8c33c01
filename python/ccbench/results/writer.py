"""Atomic writing of a results directory: everything goes to a temporary sibling directory
that is renamed into place only when complete, so a crash never leaves half a result."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl

from .schema import check


def write_results(out_dir: str | Path, tables: dict[str, pl.DataFrame], meta: dict,
                  *, overwrite: bool = True, extra_dirs: dict[str, Path] | None = None) -> Path:
    """Write `tables` (each checked against results/schema.py) and `meta` into `out_dir`.
    `extra_dirs`: directories moved into the result under the given names (e.g. the run's
    pcapng captures as ``pcap``), inside the same atomic rename."""
    for name, df in tables.items():
        check(name, df)  # before anything is written
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    if out_dir.exists():
        if not (out_dir / "metadata.json").is_file():
            raise FileExistsError(
                f"{out_dir} exists and is not a ccbench results directory; choose another -o DIR")
        if not overwrite:
            raise FileExistsError(f"{out_dir} already holds results; pass overwrite=True")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        meta = dict(meta)
        meta["tables"] = {}
        for name, df in tables.items():
            df.write_parquet(tmp / f"{name}.parquet", compression="zstd", statistics=True)
            meta["tables"][name] = {"rows": df.height, "columns": df.columns}
        for name, src in (extra_dirs or {}).items():
            shutil.move(str(src), str(tmp / name))
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
            os.rename(out_dir, old)
            os.rename(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir
