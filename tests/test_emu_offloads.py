"""The emulator's packet path with the TUNs' offloads (docs/emulation.md, "Offloads"): GSO
packets cut into the wire's segments, late runs of segments joined into one GSO write, and the
switch back to the kernels' software segmentation. Root tests are short (2 s) and skipped
with the reason where the backend cannot run."""
from __future__ import annotations

import polars as pl
import pytest

from ccbench import config
from ccbench.backends import emu
from ccbench.backends.emu import run as emu_run

from test_emu import _why_not

root = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def test_the_switch_names_its_values(monkeypatch):
    monkeypatch.delenv(emu_run.OFFLOADS_ENV, raising=False)
    assert emu_run.tun_offloads_wanted() == "on"
    for v in ("on", "no-join", "off"):
        monkeypatch.setenv(emu_run.OFFLOADS_ENV, v)
        assert emu_run.tun_offloads_wanted() == v
    monkeypatch.setenv(emu_run.OFFLOADS_ENV, "yes")
    with pytest.raises(emu.EmuError, match="CCBENCH_EMU_OFFLOADS='yes': use one of on, no-join, off"):
        emu_run.tun_offloads_wanted()


def _exp(rate: str = "300Mbit") -> dict:
    return config.resolve({
        "duration": 2, "seed": 1,
        "central": {"rate": rate, "delay": "5ms", "queue": "1bdp"},
        "flows": [{"scheme": "cubic", "flows": 1, "direction": "->"}],
        "record_packets": True,
    }, source="offloads test")


def _check_segments(tables: dict) -> None:
    """Every recorded data packet is one MTU-sized segment at most, and the first
    transmissions' sequence numbers follow each other without gaps or overlaps."""
    pk = tables["packets"]
    assert pk.height > 1000
    assert pk["size"].max() <= 1500
    first = pk.filter(~pl.col("retrans")).sort("seq")
    seq, size = first["seq"].to_list(), first["size"].to_list()
    hdr = size[0] - (seq[1] - seq[0])  # IP + TCP header bytes of a full segment
    assert all(b - a == s - hdr for a, b, s in zip(seq, seq[1:], size)), "sequence gaps"


@root
def test_gso_packets_are_cut_into_the_wire_segments(monkeypatch):
    monkeypatch.delenv(emu_run.OFFLOADS_ENV, raising=False)
    tables, meta, _ = emu.emulate(_exp())
    assert meta["tun_offloads"] == "on"
    assert all(v["tso"] is True and v["gro"] is False for v in meta["offloads"].values())
    c = meta["engine"]["counters"]
    assert c["gso_reads"] > 0 and c["gso_segments"] > 2 * c["gso_reads"], c
    assert c["refused"] == 0 and c["tun_write_errors"] == 0
    _check_segments(tables)
    fs = tables["flowstats"].row(0, named=True)
    assert fs["delivered_bytes"] > 0.25 * 300e6 / 8 * 2  # over a quarter of what 2 s carry


@root
def test_joined_runs_reach_the_receiver(monkeypatch):
    """Joining every run that is due (no lateness needed): the receiving kernel takes the GSO
    writes (if it refused them the flow would stall) and every segment keeps its record."""
    monkeypatch.delenv(emu_run.OFFLOADS_ENV, raising=False)
    tables, meta, _ = emu.emulate(_exp("1Gbit"), join_late_ns=0)
    c = meta["engine"]["counters"]
    assert c["joined_writes"] > 0 and c["joined_segments"] >= 2 * c["joined_writes"], c
    assert c["tun_write_errors"] == 0
    assert meta["tun_drops"] == 0
    _check_segments(tables)
    fs = tables["flowstats"].row(0, named=True)
    assert fs["delivered_bytes"] > 0.25 * 1e9 / 8 * 2  # a stalled flow would deliver ~0
    # every released data segment is in the records, joined or not
    assert tables["packets"].filter(pl.col("arrival_ns").is_not_null()).height == fs["delivered_pkts"]


@root
def test_offloads_off_leaves_segmentation_to_the_kernels(monkeypatch):
    monkeypatch.setenv(emu_run.OFFLOADS_ENV, "off")
    tables, meta, _ = emu.emulate(_exp())
    assert meta["tun_offloads"] == "off"
    assert all(v["tso"] is False for v in meta["offloads"].values())
    c = meta["engine"]["counters"]
    assert c["gso_reads"] == 0 and c["joined_writes"] == 0
    _check_segments(tables)
