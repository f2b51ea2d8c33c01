"""ccbench import pcap: round trip (simulate → export → import gives the same metrics), a
CoCo-Beholder dumps folder built by a fixture in its layout, and damaged, truncated and huge
captures (clear errors, bounded memory, no crash)."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench.capture.export import CaptureError
from ccbench.capture.importer import import_pcap
from ccbench.capture.scan import read_capture
from simhelp import assert_imported_summary, capture_blind_bytes

ROOT = Path(__file__).resolve().parents[1]

# Exact host timing: a capture sees packets on the wire, while the stack's RTT samples also
# include the hosts' processing delays when host noise is on (docs/captures.md), so the
# RTT comparisons to 1 us below hold only without it.
EXP = """
duration: 3
seed: 7
host: {noise: exact}
central: {rate: 20Mbit, delay: 10ms, queue: 40}
flows:
  - {scheme: cubic, flows: 2, direction: "->", start: 0}
  - {scheme: reno, flows: 1, direction: "<-", start: 1}
"""
GROUPINGS = ("per-flow", "total", "per-scheme", "per-direction")



def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ccbench", *map(str, args)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("imp")
    (d / "exp.yaml").write_text(EXP)
    r = _cli("run", d / "exp.yaml", "-o", d / "res", "--pcap", "--no-plots", "--quiet")
    assert r.returncode == 0, r.stderr
    return ccbench.load(d / "res")


def test_round_trip_gives_the_same_metrics(sim, tmp_path):
    r = _cli("import", "pcap", sim.path / "pcap", "-o", tmp_path / "imp")
    assert r.returncode == 0, r.stderr
    imp = ccbench.load(tmp_path / "imp")
    assert imp.meta["import"]["mode"] == "generic"
    keep = ["flow", "seq", "size", "retrans", "sent_ns", "arrival_ns"]
    # packets sent in the same nanosecond by different flows have no order on the wire
    order = ["sent_ns", "flow", "seq", "retrans"]
    assert imp.packets.select(keep).sort(order).equals(sim.packets.select(keep).sort(order))
    # every metric exactly, but for drops sent after a flow's last delivered packet, which a
    # capture cannot tell from packets in flight (the importer counts them in flight)
    blind = capture_blind_bytes(sim)
    for g in GROUPINGS:
        a = ccbench.analyze(sim, g).summary
        b = ccbench.analyze(imp, g).summary
        if not blind:
            assert a.equals(b), g
        assert_imported_summary(a, b, blind, exact=[c for c in a.columns if c not in (
            "bytes_dropped", "bytes_in_flight_end", "loss_pct")])
    # the flows table: what a capture shows equals the simulator's own records
    for f in range(3):
        fa = sim.flows.filter((pl.col("flow") == f) & (pl.col("min_rtt_us") > 0))
        fb = imp.flows.filter((pl.col("flow") == f) & (pl.col("min_rtt_us") > 0))
        assert _same_min_rtt(fa["min_rtt_us"].min(), fb["min_rtt_us"].min())
        # the capture's last sample may come one interval before the run's own (t = duration)
        end_b = fb.sort("time_ns")[-1]
        end_a = fa.filter(pl.col("time_ns") == end_b["time_ns"][0])
        assert end_b["bytes_acked"][0] == end_a["bytes_acked"][0]
        assert end_b["retrans"][0] == end_a["retrans"][0]
    for cmd in (("stats", tmp_path / "imp"), ("check", tmp_path / "imp"),
                ("report", tmp_path / "imp"),
                ("compare", sim.path, tmp_path / "imp", "-o", tmp_path / "cmp")):
        r = _cli(*cmd)
        assert r.returncode == 0, (cmd, r.stderr)


def test_without_receiver_captures_no_delays(sim, tmp_path):
    import yaml
    m = yaml.safe_load((sim.path / "pcap" / "mapping.yaml").read_text())
    for f in m["flows"]:
        f.pop("receiver_capture")
    mp = tmp_path / "m.yaml"
    mp.write_text(yaml.safe_dump(m))
    imp = import_pcap(sorted((sim.path / "pcap").glob("*.pcapng")), tmp_path / "imp", mapping=mp)
    assert imp.packets.height == sim.packets.height
    assert imp.packets["arrival_ns"].null_count() == imp.packets.height
    assert any("no receiver-side capture" in w for w in imp.meta["import"]["warnings"])


# --- CoCo-Beholder ---------------------------------------------------------------------------

LAYOUT = [
    {"scheme": "cubic", "runs-first": "receiver", "flows": 2, "start": 0, "direction": "->",
     "left-rate": None, "right-rate": None, "left-delay": None, "right-delay": None,
     "left-queues": None, "right-queues": None},
    {"scheme": "reno", "runs-first": "receiver", "flows": 1, "start": 1, "direction": "<-",
     "left-rate": None, "right-rate": None, "left-delay": 2000, "right-delay": None,
     "left-queues": None, "right-queues": None},
]
COCO_META = {"_all-flows": 3, "_base": 10000, "_buffer": 2048, "_delta": 0, "_first-queue": 40,
             "_jitter": 0, "_max-delay": 100000000, "_rate": 20.0, "_runtime": 3,
             "_second-queue": 40, "_seed": 5.0, "_step": 0, "sorted-layout": LAYOUT}


def _pcapng_packets(path: Path):
    """(ts_ns, bytes) of every Enhanced Packet Block of a little-endian pcapng file."""
    b = path.read_bytes()
    o = 0
    while o < len(b):
        kind, n = struct.unpack_from("<II", b, o)
        if kind == 6:
            _, hi, lo, cap, _ = struct.unpack_from("<IIIII", b, o + 8)
            yield (hi << 32) | lo, b[o + 28:o + 28 + cap]
        o += n


def _coco_dump(src: Path, dst: Path, a: str, b: str):
    """tcpdump's view on a CoCo-Beholder host bridge: classic pcap, µs, Ethernet frames,
    only packets between hosts a and b."""
    ip = lambda s: bytes(int(x) for x in s.split("."))  # noqa: E731
    pair = {ip(a), ip(b)}
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)]
    for ts, pkt in _pcapng_packets(src):
        if {pkt[12:16], pkt[16:20]} != pair:
            continue
        frame = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + pkt
        us = ts // 1000
        out.append(struct.pack("<IIII", us // 10**6, us % 10**6, len(frame), len(frame)) + frame)
    dst.write_bytes(b"".join(out))


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    """A CoCo-Beholder dumps folder: metadata.json in its format and per-flow sender and
    receiver dumps, made from a simulated run of the same layout (whole packets)."""
    d = tmp_path_factory.mktemp("coco")
    from ccbench.capture.importer import coco_experiment
    dumps = d / "dumps"
    dumps.mkdir()
    (dumps / "metadata.json").write_text(json.dumps(COCO_META, indent=4, sort_keys=True))
    exp = coco_experiment(dumps)  # the same resolution the import makes
    res = ccbench.run(exp, d / "sim", pcap=0)
    from ccbench.capture.export import host_addresses
    addr = host_addresses(res.experiment)
    for f in res.experiment["flows"]:
        k = f["id"] + 1
        for role, host in (("sender", f["src"]), ("receiver", f["dst"])):
            _coco_dump(res.path / "pcap" / f"{host}.pcapng",
                       dumps / f"{k}-{f['scheme']}-{role}.pcap", addr[f["src"]], addr[f["dst"]])
    return res, dumps


def test_coco_dumps_import_and_analyse(coco, tmp_path):
    sim, dumps = coco
    r = _cli("import", "pcap", dumps, "-o", tmp_path / "imp")
    assert r.returncode == 0, r.stderr
    imp = ccbench.load(tmp_path / "imp")
    assert imp.meta["import"]["mode"] == "coco-beholder"
    assert [f["label"] for f in imp.experiment["flows"]] == [f["label"] for f in sim.experiment["flows"]]
    assert imp.packets.height == sim.packets.height
    assert imp.packets["arrival_ns"].null_count() == sim.packets["arrival_ns"].null_count()
    # tcpdump's µs timestamps: every time within 1 µs of the simulator's
    a = sim.packets.sort("flow", "sent_ns", maintain_order=True)
    b = imp.packets.sort("flow", "sent_ns", maintain_order=True)
    assert (a["sent_ns"] - b["sent_ns"]).abs().max() < 1000
    for g in GROUPINGS:
        x = ccbench.analyze(sim, g).summary
        y = ccbench.analyze(imp, g).summary
        for col in ("avg_tput_mbps", "mean_delay_ms", "coco_loss_pct"):
            assert (x[col] - y[col]).abs().max() < 1e-2, (g, col)
        assert x["bytes_sent"].equals(y["bytes_sent"])
        # A capture shows no drop: a packet the receiver never saw counts as dropped when a
        # later one arrived, else as in flight at the end. Only the simulator's drops after
        # the flow's last delivered packet may move from one to the other.
        assert (x["bytes_dropped"] + x["bytes_in_flight_end"]).equals(
            y["bytes_dropped"] + y["bytes_in_flight_end"]), g
        if g == "per-flow":
            for i, f in enumerate(sorted(sim.experiment["flows"], key=lambda f: f["id"])):
                p = sim.packets.filter(pl.col("flow") == f["id"])
                last = p.filter(pl.col("arrival_ns").is_not_null())["sent_ns"].max()
                late = p.filter(pl.col("drop_ns").is_not_null() & (pl.col("sent_ns") > last))
                assert x["bytes_dropped"][i] - y["bytes_dropped"][i] == late["size"].sum(), f["id"]
    for cmd in (("stats", tmp_path / "imp", "--type", "all"), ("report", tmp_path / "imp")):
        r = _cli(*cmd)
        assert r.returncode == 0, (cmd, r.stderr)


def test_coco_missing_dump_and_bad_metadata(coco, tmp_path):
    _, dumps = coco
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "metadata.json").write_text("{}")
    with pytest.raises(CaptureError, match="sorted-layout"):
        import_pcap(bad, tmp_path / "x", coco=True)
    (bad / "metadata.json").write_text(json.dumps(COCO_META))
    with pytest.raises(CaptureError, match="flow 1 has neither"):
        import_pcap(bad, tmp_path / "x")


# --- damaged captures ------------------------------------------------------------------------


def test_truncated_and_garbage_captures_are_clear_errors(sim, tmp_path):
    good = (sim.path / "pcap" / "a1.pcapng").read_bytes()
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(good[: len(good) // 2 + 3])
    with pytest.raises(ValueError, match=r"cut.pcapng: byte \d+: truncated capture"):
        read_capture(cut)
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"GET / HTTP/1.1\r\n" * 10)
    with pytest.raises(ValueError, match="neither pcap nor pcapng"):
        read_capture(junk)
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty file"):
        read_capture(empty)
    huge = tmp_path / "huge.pcap"  # a record claiming 2 GiB: refused, nothing allocated
    huge.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
                     + struct.pack("<IIII", 1, 0, 1 << 31, 1 << 31) + b"\0" * 64)
    with pytest.raises(ValueError, match="limit"):
        read_capture(huge)
    r = _cli("import", "pcap", cut, "-o", tmp_path / "imp")
    assert r.returncode == 2 and "error:" in r.stderr and "Traceback" not in r.stderr
    # random damage anywhere: an error or a shorter capture, never a crash
    import random
    rnd = random.Random(3)
    for i in range(40):
        b = bytearray(good)
        for _ in range(8):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        p = tmp_path / f"d{i}.pcapng"
        p.write_bytes(bytes(b))
        try:
            read_capture(p)
        except ValueError as e:
            assert "byte" in str(e)


def test_huge_capture_streams_in_bounded_memory(tmp_path):
    """A 2 GiB capture (sparse: one header, then empty records) is read in chunks: the
    process's peak memory grows by far less than the file."""
    p = tmp_path / "big.pcap"
    with open(p, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.truncate(24 + (2 << 30))
    code = f"""
import resource
from ccbench.capture.scan import scan_capture
from ccbench import _core
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sc = _core.PcapScanner({str(p)!r})
while sc.next_chunk(1 << 16) is not None:
    pass
c = sc.counts()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(c["frames"], c["position"], (after - before) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "python")}, timeout=600)
    assert out.returncode == 0, out.stderr
    frames, pos, grew_mb = map(int, out.stdout.split())
    assert frames == (2 << 30) // 16 and pos == 24 + (2 << 30)
    assert grew_mb < 64, f"peak memory grew by {grew_mb} MB reading a 2 GiB capture"


def _same_min_rtt(sim_us: float, wire_us: float) -> bool:
    """The stack's minimum RTT equals the one seen on the wire, or is a TSecr sample: Linux
    (tcp_ack_update_rtt) falls back to the timestamp echo when every segment an ACK covers was
    retransmitted, in whole ms ticks, so up to 1 ms below the wire RTT."""
    return abs(sim_us - wire_us) < 1.0 or (sim_us % 1000 == 0 and 0 <= wire_us - sim_us < 1000)
