"""Capture reading speed: ccbench's streaming Rust reader against a per-packet Python loop
doing CoCo-Beholder's analysis work, on the same generated capture, in one run.

    .venv/bin/python benches/pcap.py                  # 2 GiB capture, baseline on 256 MiB of it
    .venv/bin/python benches/pcap.py --gib 4 --baseline-mib 512 --keep

Measured:
* ``ccbench-pcap stats`` — one process, one thread: read, decode every frame to its
  IPv4/TCP fields, per-5-tuple packet and byte counts (the reader ``ccbench import pcap`` uses);
* ``_core.PcapScanner`` — the same reader filling chunks of per-packet columns for Python
  (what ``ccbench import pcap`` consumes), including the numpy/polars conversion;
* the baseline: the per-packet work of CoCo-Beholder's analysis (``dump_analyzer.py``: a
  pcap reader loop, Ethernet → IPv4 source, a SHA-1 digest of IP id + IP payload into a
  dict), written here in plain Python with ``struct`` and ``hashlib`` (no dpkt; dpkt's own
  parsing is slower still). CoCo-Beholder's thesis reports ~4 min for a 12 GB dump (~50 MB/s)
  with dpkt under Python 2; the baseline is measured on the first ``--baseline-mib`` of the
  same file.

Peak memory (max RSS) of each reader process is reported: it must not grow with the file.
Prints a markdown table and writes benches/out/pcap.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANCHOR_MB_S = 50.0  # CoCo-Beholder: a 12 GB dump analysed in ~4 min (its thesis)


def helper() -> Path:
    b = ROOT / "target" / "release" / "ccbench-pcap"
    if not b.is_file():
        subprocess.run(["cargo", "build", "--release", "-p", "ccbench-pcap"], cwd=ROOT, check=True)
    return b


def timed(cmd: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s (user + system), max RSS MB of the child, stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, r1.ru_maxrss / 1024, out.stdout


SCANNER = """
import sys, time, resource
import numpy as np
from ccbench.capture.scan import scan_capture
t0, c0 = time.perf_counter(), time.process_time()
n = 0
for df in scan_capture(sys.argv[1], chunk=1 << 18):
    n += df.height
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(n, wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def baseline(path: Path, limit: int) -> tuple[float, float, int, int]:
    """CoCo-Beholder's per-packet analysis work over the first `limit` bytes (classic pcap,
    Ethernet): (wall s, CPU s, bytes read, packets)."""
    deps: dict[str, int] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    with open(path, "rb") as f:
        hdr = f.read(24)
        assert struct.unpack("<I", hdr[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D)
        read = 24
        while read < limit:
            rec = f.read(16)
            if len(rec) < 16:
                break
            sec, frac, incl, _ = struct.unpack("<IIII", rec)
            frame = f.read(incl)
            read += 16 + incl
            ts = sec + frac * 1e-9
            ip = frame[14:]
            # a CoCo-Beholder dump holds one flow: every packet from its sender is digested.
            # Here the data packets of every flow (the generator's senders have the lower
            # address of their pair) play that part.
            if ip[12:16] < ip[16:20]:
                ihl = (ip[0] & 15) * 4
                ip_id = struct.unpack(">H", ip[4:6])[0]
                digest = hashlib.sha1(str(ip_id).encode() + ip[ihl:]).hexdigest()
                if digest in deps:
                    del deps[digest]
                else:
                    deps[digest] = ts
            n += 1
    return time.perf_counter() - t0, time.process_time() - c0, read, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=2.0, help="capture size (default 2 GiB)")
    ap.add_argument("--baseline-mib", type=int, default=256,
                    help="bytes of it the Python baseline reads (default 256 MiB)")
    ap.add_argument("--dir", default=None, help="where to write the capture (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the generated capture")
    a = ap.parse_args()
    b = helper()
    work = Path(a.dir or tempfile.mkdtemp(prefix="ccbench-pcap-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    cap = work / "bench.pcap"
    size = int(a.gib * (1 << 30))
    t0 = time.perf_counter()
    subprocess.run([str(b), "generate", str(cap), "--bytes", str(size), "--format", "pcap",
                    "--link", "ethernet", "--flows", "8"], check=True, capture_output=True)
    gen_s = time.perf_counter() - t0
    fsize = cap.stat().st_size
    # warm the page cache once, so every reader sees the same (cached) file
    with open(cap, "rb") as f:
        while f.read(1 << 24):
            pass
    rows = {}
    wall, cpu, rss, out = timed([str(b), "stats", str(cap)])
    doc = json.loads(out)
    st = doc["files"][0]
    rss = doc["max_rss_kb"] / 1024 if doc["max_rss_kb"] is not None else rss
    rows["ccbench-pcap stats (Rust, 1 thread)"] = {"s": wall, "cpu_s": cpu, "rss_mb": rss,
                                                   "bytes": fsize, "packets": st["frames"]}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-c", SCANNER, str(cap)], capture_output=True,
                         text=True, check=True, env=env).stdout.split()
    n, wall, cpu, rss = int(out[0]), float(out[1]), float(out[2]), float(out[3])
    rows["_core.PcapScanner → polars chunks"] = {"s": wall, "cpu_s": cpu, "rss_mb": rss,
                                                 "bytes": fsize, "packets": n}
    bs, bc, bread, bn = baseline(cap, a.baseline_mib << 20)
    rows["Python loop (CoCo-Beholder's per-packet work)"] = {
        "s": bs, "cpu_s": bc, "rss_mb": None, "packets": bn, "bytes": bread}
    for r in rows.values():
        r["mb_s_wall"] = r["bytes"] / 1e6 / r["s"]
        r["mb_s_cpu"] = r["bytes"] / 1e6 / max(r["cpu_s"], 1e-9)
    base = rows["Python loop (CoCo-Beholder's per-packet work)"]["mb_s_cpu"]
    print(f"capture: {fsize / 2**30:.2f} GiB classic pcap, Ethernet, {st['frames']:,} packets "
          f"(generated in {gen_s:.1f} s); machine: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print()
    print("MB/s per CPU second (user + system: one core's speed, whatever else runs on the "
          "machine) and per wall second")
    print()
    print("| reader | MB read | CPU s | wall s | MB/s (CPU) | MB/s (wall) | × Python loop (CPU) "
          "| × 50 MB/s anchor (CPU) | max RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k, r in rows.items():
        rs = "" if r["rss_mb"] is None else f"{r['rss_mb']:.0f}"
        print(f"| {k} | {r['bytes'] / 1e6:.0f} | {r['cpu_s']:.2f} | {r['s']:.2f} | "
              f"{r['mb_s_cpu']:.0f} | {r['mb_s_wall']:.0f} | {r['mb_s_cpu'] / base:.1f} | "
              f"{r['mb_s_cpu'] / ANCHOR_MB_S:.1f} | {rs} |")
    out_dir = ROOT / "benches" / "out"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "pcap.json").write_text(json.dumps({
        "file_bytes": fsize, "packets": st["frames"], "rows": rows, "anchor_mb_s": ANCHOR_MB_S,
        "load": os.getloadavg(), "cpus": os.cpu_count(), "command": " ".join(sys.argv)}, indent=2))
    if not a.keep:
        cap.unlink()
        if not a.dir:
            work.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
