"""pcapng captures of the emulation backend: the engine writes the packets' real bytes at
every host and both bottleneck sides; tshark reads them cleanly and agrees with the run's
records, and importing them gives the run's metrics back. Needs root and the emulator
binaries (skipped otherwise, with the reason)."""
from __future__ import annotations

import shutil
import subprocess

import polars as pl
import pytest

import ccbench
from ccbench.capture.export import host_addresses
from ccbench.capture.scan import ip_to_int, read_capture
from simhelp import assert_imported_summary, capture_blind_bytes
from test_emu import _why_not

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

EXP = """
duration: 3
seed: 1
central: {rate: 20Mbit, delay: 10ms, queue: 40}
flows:
  - {scheme: cubic, flows: 1, direction: "->", start: 0}
  - {scheme: reno, flows: 1, direction: "<-", start: 0.5}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("emucap")
    (d / "e.yaml").write_text(EXP)
    return ccbench.run(d / "e.yaml", d / "res", backend="emu", pcap=80)


def test_points_and_records_agree(run):
    cap = run.meta["capture"]
    assert sorted(p["name"] for p in cap["points"]) == ["a1", "a2", "b1", "b2", "r1-r2", "r2-r1"]
    assert "capture" not in run.meta["emu"]
    addr = host_addresses(run.experiment)
    for fl in run.experiment["flows"]:
        df, counts = read_capture(run.path / "pcap" / f"{fl['src']}.pcapng")
        assert counts["skipped"] == 0
        data = df.filter((pl.col("src") == ip_to_int(addr[fl["src"]]))
                         & (pl.col("dport") == 10000 + fl["id"]) & (pl.col("payload") > 0))
        pk = run.packets.filter(pl.col("flow") == fl["id"]).sort("sent_ns", maintain_order=True)
        assert data.height == pk.height
        assert data["ip_len"].sum() == pk["size"].sum()
        # the engine's read instants are the capture's times, up to one wall-clock offset
        off = data["ts_ns"].to_numpy() - pk["sent_ns"].to_numpy()
        assert off.max() - off.min() == 0


def test_import_gives_the_run_back(run, tmp_path):
    """The imported capture gives the run's metrics back exactly. One thing a capture cannot
    tell: a packet the receiver never saw that was sent after the flow's last delivered one
    was dropped or still in flight when the capture stopped (importer.py counts it in flight).
    Those bytes ("blind") move from bytes_dropped to bytes_in_flight_end, and nothing else."""
    imp = ccbench.import_pcap(run.path / "pcap", tmp_path / "imp")
    blind = capture_blind_bytes(run)
    for g in ("per-flow", "total"):
        assert_imported_summary(ccbench.analyze(run, g).summary, ccbench.analyze(imp, g).summary,
                                blind)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_agrees(run):
    addr = host_addresses(run.experiment)
    for p in run.meta["capture"]["points"]:
        out = subprocess.run(
            ["tshark", "-r", str(run.path / "pcap" / p["file"]), "-o", "ip.check_checksum:TRUE",
             "-o", "tcp.check_checksum:TRUE", "-Y", "_ws.malformed || ip.checksum.status == 0 || "
             # A TCP checksum whose value is 0 is written 0xffff by Linux's software checksum
             # (skb_checksum_help: CSUM_MANGLED_0, the emulator's TUNs have no offloads): the
             # same number in one's complement, which tshark marks "Bad" (RFC 1624 prefers
             # 0x0000). About one packet in 65 536; any other mismatch still fails.
             "(tcp.checksum.status == 0 && !(tcp.checksum == 0xffff && tcp.checksum_calculated == 0x0000))"
             " || _ws.expert.severity == error", "-T", "fields", "-e",
             "frame.number"], capture_output=True, text=True, check=True).stdout.split()
        assert out == [], p["file"]
    for fl in run.experiment["flows"]:
        out = subprocess.run(
            ["tshark", "-r", str(run.path / "pcap" / f"{fl['src']}.pcapng"), "-Y",
             f"ip.src=={addr[fl['src']]} && tcp.dstport=={10000 + fl['id']} && tcp.len>0",
             "-T", "fields", "-E", "separator=,", "-e", "ip.len", "-e", "tcp.analysis.retransmission",
             "-e", "tcp.analysis.spurious_retransmission", "-e", "tcp.analysis.out_of_order"],
            capture_output=True, text=True, check=True).stdout.splitlines()
        rows = [r.split(",") for r in out]
        fs = run.flowstats.filter(pl.col("flow") == fl["id"]).row(0, named=True)
        assert len(rows) == fs["sent_pkts"]
        assert sum(int(r[0]) for r in rows) == fs["sent_bytes"]
        assert sum(1 for r in rows if any(r[1:])) == fs["retrans_pkts"]
