"""The streaming capture reader (crates/pcap via ``_core.PcapScanner``) as polars frames.

Columns of every frame: ``ts_ns`` (ns since the epoch), ``iface`` (pcapng interface id),
``src``, ``dst`` (IPv4 as u32), ``proto``, ``ecn``, ``ip_id``, ``ip_len`` (IP total length),
``sport``, ``dport``, ``seq``, ``ack`` (raw 32-bit), ``flags``, ``window``, ``payload``
(transport payload bytes from the length fields), ``has_ts``, ``tsval``, ``tsecr``,
``n_sack``, ``key`` (one transmission's identity across capture points: a hash of the IP id,
IP length and leading transport bytes). Frames that hold no IPv4 packet are counted and
skipped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import polars as pl

_NP = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64, "i64": np.int64, "bool": np.uint8}
#: Packets per chunk: ~100 bytes of columns each, so a chunk is ~100 MB at most.
CHUNK = 1 << 20


def _frame(cols: dict) -> pl.DataFrame:
    out = []
    for name, (dt, buf) in cols.items():
        arr = np.frombuffer(buf, dtype=_NP[dt])
        out.append(pl.Series(name, arr.astype(bool) if dt == "bool" else arr))
    return pl.DataFrame(out)


def scan_capture(path: str | Path, chunk: int = CHUNK) -> Iterator[pl.DataFrame]:
    """Frames of at most `chunk` packets, in file order; memory stays bounded by one chunk.
    A damaged capture raises ValueError naming the file and byte offset."""
    from .. import _core
    sc = _core.PcapScanner(str(path))
    while True:
        cols = sc.next_chunk(chunk)
        if cols is None:
            return
        yield _frame(cols)


def read_capture(path: str | Path, columns: list[str] | None = None,
                 filter_expr: pl.Expr | None = None) -> tuple[pl.DataFrame, dict]:
    """Every IPv4 packet of a capture (optionally only `columns` and rows matching
    `filter_expr`, applied chunk by chunk) and the reader's counts
    {frames, frame_bytes, ipv4, skipped, position}."""
    from .. import _core
    sc = _core.PcapScanner(str(path))
    parts = []
    while True:
        cols = sc.next_chunk(CHUNK)
        if cols is None:
            break
        df = _frame(cols)
        if filter_expr is not None:
            df = df.filter(filter_expr)
        if columns is not None:
            df = df.select(columns)
        parts.append(df)
    counts = dict(sc.counts())
    if not parts:
        empty = _frame({k: (dt, b"") for k, dt in _EMPTY.items()})
        return (empty.select(columns) if columns else empty), counts
    return pl.concat(parts), counts


_EMPTY = {"ts_ns": "i64", "iface": "u32", "src": "u32", "dst": "u32", "proto": "u8", "ecn": "u8",
          "ip_id": "u32", "ip_len": "u32", "sport": "u32", "dport": "u32", "seq": "u32",
          "ack": "u32", "flags": "u8", "window": "u32", "payload": "u32", "has_ts": "bool",
          "tsval": "u32", "tsecr": "u32", "n_sack": "u8", "key": "u64"}


def ip_to_int(a: str) -> int:
    p = [int(x) for x in a.split(".")]
    if len(p) != 4 or any(not 0 <= x <= 255 for x in p):
        raise ValueError(f"{a!r} is not an IPv4 address")
    return (p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]


def int_to_ip(v: int) -> str:
    return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}"
