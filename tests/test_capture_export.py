"""pcapng export of simulated runs: files per capture point, headers that tshark reads as
real TCP (zero malformed, per-flow bytes and retransmissions and RTTs equal to ccbench's
records), determinism, and no change to the run itself."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench.capture.export import CaptureError, export_pcap, host_addresses
from ccbench.capture.scan import ip_to_int, read_capture

# Exact host timing: a capture sees packets on the wire, while the stack's RTT samples also
# include the hosts' processing delays when host noise is on (docs/captures.md), so the
# RTT comparisons to 1 us below hold only without it.
EXP = """
duration: 3
seed: 4
host: {noise: exact}
central: {rate: 20Mbit, delay: 10ms, queue: 40}
flows:
  - {scheme: cubic, flows: 2, direction: "->", start: 0}
  - {scheme: reno, flows: 1, direction: "<-", start: 1}
"""

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None, reason="tshark not installed (apt-get install tshark; `make py-test` tries)")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("cap")
    f = d / "exp.yaml"
    f.write_text(EXP)
    return ccbench.run(f, d / "res", pcap=80)


def test_files_per_capture_point(run):
    cap = run.meta["capture"]
    names = sorted(p["name"] for p in cap["points"])
    assert names == ["a1", "a2", "a3", "b1", "b2", "b3", "r1-r2", "r2-r1"]
    for p in cap["points"]:
        df, counts = read_capture(run.path / "pcap" / p["file"])
        assert df.height == p["packets"] > 0
        assert counts["skipped"] == 0
        assert (df["ts_ns"].diff().drop_nulls() >= 0).all(), "timestamps go back"
        assert (df["ip_len"] <= 1500).all()


def test_sender_capture_equals_records(run):
    """Data packets leaving each sender: count, IP bytes and repeated sequence numbers
    (retransmissions) equal the flowstats and packets tables."""
    addr = host_addresses(run.experiment)
    for fl in run.experiment["flows"]:
        df, _ = read_capture(run.path / "pcap" / f"{fl['src']}.pcapng")
        data = df.filter((pl.col("src") == ip_to_int(addr[fl["src"]])) & (pl.col("payload") > 0))
        fs = run.flowstats.filter(pl.col("flow") == fl["id"]).row(0, named=True)
        assert data.height == fs["sent_pkts"]
        assert data["ip_len"].sum() == fs["sent_bytes"]
        rel = (data["seq"].cast(pl.Int64) - data["seq"][0]) % (1 << 32)
        seen, rtx = -1, 0
        for s in rel.to_list():
            rtx += s < seen
            seen = max(seen, s)
        assert rtx == fs["retrans_pkts"]
        pk = run.packets.filter(pl.col("flow") == fl["id"])
        assert (data["ts_ns"].to_numpy() == pk["sent_ns"].to_numpy()).all()


def test_bottleneck_sides_show_the_queue_drops(run):
    """Flow 1's data packets that enter r1->r2 (r1's side) but never leave it (r2's side) are
    the ones the packets table drops on that link, plus at most those still in flight at the
    end; nothing leaves that did not enter."""
    a, _ = read_capture(run.path / "pcap" / "r1-r2.pcapng")
    b, _ = read_capture(run.path / "pcap" / "r2-r1.pcapng")
    link = next(lk["id"] for lk in run.experiment["links"] if lk["name"] == "r1->r2")
    src = ip_to_int(host_addresses(run.experiment)["a1"])
    into = set(a.filter((pl.col("src") == src) & (pl.col("payload") > 0))["key"].to_list())
    out = set(b.filter((pl.col("src") == src) & (pl.col("payload") > 0))["key"].to_list())
    assert out <= into
    pk = run.packets.filter(pl.col("flow") == 0)
    dropped = pk.filter(pl.col("drop_link") == link).height
    in_flight = pk.filter(pl.col("arrival_ns").is_null() & pl.col("drop_ns").is_null()).height
    assert dropped > 0
    assert dropped <= len(into - out) <= dropped + in_flight


def test_export_is_byte_identical_to_run_pcap(run, tmp_path):
    export_pcap(run.path, tmp_path / "again", snaplen=80)
    for p in run.meta["capture"]["points"]:
        assert (tmp_path / "again" / p["file"]).read_bytes() == (run.path / "pcap" / p["file"]).read_bytes()


def test_capture_does_not_change_the_run(run, tmp_path):
    plain = ccbench.run(run.experiment, tmp_path / "plain")
    for t in ("packets", "flows", "queues", "intervals", "delay_hist", "flowstats"):
        assert getattr(plain, t).equals(getattr(run, t)), t


def test_whole_packets_and_bad_snaplen(run, tmp_path):
    s = export_pcap(run.path, tmp_path / "full", snaplen=0)
    df, c = read_capture(tmp_path / "full" / "a1.pcapng")
    assert c["frame_bytes"] == df["ip_len"].sum()
    assert (tmp_path / "full" / "a1.pcapng").stat().st_size > c["frame_bytes"]
    assert s["snaplen"] == 0
    with pytest.raises(CaptureError, match="snaplen"):
        export_pcap(run.path, tmp_path / "x", snaplen=20)


def _tshark(path: Path, fields: list[str], display: str | None = None) -> list[dict]:
    cmd = [TSHARK, "-r", str(path), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
           "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
    if display:
        cmd += ["-Y", display]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split(","))) for line in out.splitlines()]


@needs_tshark
def test_tshark_reads_every_point_without_errors(run):
    for p in run.meta["capture"]["points"]:
        rows = _tshark(run.path / "pcap" / p["file"], ["frame.number"],
                       "_ws.malformed || ip.checksum.status == 0 || tcp.checksum.status == 0 "
                       "|| _ws.expert.severity == error")
        assert rows == [], f"{p['file']}: {len(rows)} malformed or bad-checksum frames"


@needs_tshark
def test_tshark_tcp_analysis_equals_ccbench(run):
    """tshark's per-flow data bytes and retransmissions (its retransmission, fast and
    spurious retransmission and out-of-order flags: at the sender every repeated sequence
    number is one of them) and its ACK RTTs against the records."""
    addr = host_addresses(run.experiment)
    fields = ["ip.src", "tcp.dstport", "tcp.srcport", "ip.len", "tcp.len",
              "tcp.analysis.retransmission", "tcp.analysis.spurious_retransmission",
              "tcp.analysis.out_of_order", "tcp.analysis.ack_rtt"]
    for fl in run.experiment["flows"]:
        rows = _tshark(run.path / "pcap" / f"{fl['src']}.pcapng", fields)
        port = str(10000 + fl["id"])
        data = [r for r in rows if r["ip.src"] == addr[fl["src"]] and r["tcp.dstport"] == port
                and r["tcp.len"] not in ("", "0")]
        rtx = sum(1 for r in data if r["tcp.analysis.retransmission"]
                  or r["tcp.analysis.spurious_retransmission"] or r["tcp.analysis.out_of_order"])
        fs = run.flowstats.filter(pl.col("flow") == fl["id"]).row(0, named=True)
        assert len(data) == fs["sent_pkts"]
        assert sum(int(r["ip.len"]) for r in data) == fs["sent_bytes"]
        assert rtx == fs["retrans_pkts"]
        rtts = [float(r["tcp.analysis.ack_rtt"]) * 1e6 for r in rows
                if r["tcp.srcport"] == port and r["tcp.analysis.ack_rtt"]]
        f = run.flows.filter((pl.col("flow") == fl["id"]) & (pl.col("min_rtt_us") > 0))
        # ccbench floors RTT samples to µs; tshark's come from the ns timestamps
        assert _same_min_rtt(f["min_rtt_us"].min(), min(rtts))
        assert len(rtts) > 100


def _same_min_rtt(sim_us: float, wire_us: float) -> bool:
    """The stack's minimum RTT equals the one seen on the wire, or is a TSecr sample: Linux
    (tcp_ack_update_rtt) falls back to the timestamp echo when every segment an ACK covers was
    retransmitted, in whole ms ticks, so up to 1 ms below the wire RTT."""
    return abs(sim_us - wire_us) < 1.0 or (sim_us % 1000 == 0 and 0 <= wire_us - sim_us < 1000)


def test_a_foreign_run_with_scheme_code_is_not_simulated_again_unasked(tmp_path):
    """A results folder is data: exporting its capture re-simulates it, which would run the
    code its schemes name; refused without run_scheme_code (--run-scheme-code)."""
    r = ccbench.run({"duration": 0.5, "central": {"rate": "10Mbit", "delay": "5ms"},
                     "flows": [{"scheme": {"python": "ccbench.schemes.vegas:Vegas"}}]},
                    tmp_path / "py", budget=False)
    with pytest.raises(CaptureError, match="run-scheme-code"):
        export_pcap(r.path, tmp_path / "x")
    assert not (tmp_path / "x").exists()
    s = export_pcap(r.path, tmp_path / "y", run_scheme_code=True)
    assert s["points"] and (tmp_path / "y").is_dir()
