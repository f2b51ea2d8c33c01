"""Which kernel path sent each of a receiver's ACKs (root; the emulation backend).

    sudo python benches/ack_paths.py EXPERIMENT.yaml [-o DIR]

Runs a one-flow EXPERIMENT on the kernel backend with ``--pcap`` while the tracepoint
``net:net_dev_queue`` records, in a tracefs instance of its own, every packet under 200 bytes
the hosts queue, each with its kernel stack (a ``stacktrace`` trigger). The receiver's pure ACKs
in the trace are matched by order and IP length to those in the receiver's capture, and counted
by

* the path that sent them: the receiving application's read (``tcp_recvmsg_locked``: the ACKs
  ``tcp_cleanup_rbuf`` sends, and those ``__tcp_ack_snd_check`` left to it), the receive path
  (``tcp_v4_do_rcv``), the SACK-compression timer (``tcp_compressed_ack_kick``), the delayed-ACK
  timer;
* the segments they newly acknowledge (dup, 1, 2, more), and whether the last of those carried
  PSH.

docs/fidelity.md ("The marked cells", point 0) has what it showed. Prints one line per
(path, segments, PSH) with its count; writes DIR (results with pcap/) and DIR.trace.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl

TRACEFS = Path("/sys/kernel/tracing")
INSTANCE = TRACEFS / "instances" / "ccbench_ack_paths"
SMALL = 200  # bytes of IP length: pure ACKs and handshakes, no data segment


def _w(path: Path, text: str) -> None:
    path.write_text(text)


def trace_run(exp: Path, out: Path) -> Path:
    if not TRACEFS.joinpath("instances").is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=True)
    INSTANCE.mkdir(exist_ok=True)
    ev = INSTANCE / "events" / "net" / "net_dev_queue"
    trace = Path(str(out) + ".trace")
    try:
        _w(INSTANCE / "tracing_on", "0")
        _w(INSTANCE / "buffer_size_kb", "65536")
        _w(INSTANCE / "trace", "")
        _w(ev / "filter", f"len < {SMALL}")
        _w(ev / "trigger", f"stacktrace if len < {SMALL}")
        _w(ev / "enable", "1")
        _w(INSTANCE / "tracing_on", "1")
        subprocess.run([sys.executable, "-m", "ccbench", "run", str(exp), "--backend", "emu",
                        "-o", str(out), "--pcap", "--no-plots", "--quiet"], check=True)
        _w(INSTANCE / "tracing_on", "0")
        trace.write_text((INSTANCE / "trace").read_text())
    finally:
        _w(ev / "enable", "0")
        _w(ev / "trigger", f"!stacktrace if len < {SMALL}")
        _w(ev / "filter", "0")
        INSTANCE.rmdir()
    return trace


def trace_events(trace: Path) -> list[dict]:
    """Events with their stacks: a stack record follows its event on the same task."""
    recs: list[dict] = []
    for line in trace.read_text().splitlines():
        if "net_dev_queue:" in line or "<stack trace>" in line:
            task = line.split("[")[0].strip()
            ts = float(re.search(r"(\d+\.\d+):", line).group(1))
            if "net_dev_queue:" in line:
                ln = int(re.search(r"len=(\d+)", line).group(1))
                recs.append({"ev": True, "task": task, "ts": ts, "len": ln, "stack": None})
            else:
                recs.append({"ev": False, "task": task, "ts": ts, "stack": []})
        elif line.strip().startswith("=>") and recs and not recs[-1]["ev"]:
            recs[-1]["stack"].append(line.strip()[3:].split("+")[0])
    for i, r in enumerate(recs):
        p = recs[i - 1] if i else None
        if not r["ev"] and p and p["ev"] and p["task"] == r["task"] and r["ts"] - p["ts"] < 50e-6:
            p["stack"] = r["stack"]
    return [r for r in recs if r["ev"]]


def path_of(stack: list[str] | None) -> str:
    for f in stack or []:
        if f == "tcp_recvmsg_locked":
            return "read (tcp_recvmsg)"
        if f == "tcp_compressed_ack_kick":
            return "SACK-compression timer"
        if f in ("tcp_delack_timer_handler", "tcp_delack_timer"):
            return "delayed-ACK timer"
        if f == "tcp_v4_do_rcv":
            return "receive path"
    return "other" if stack else "no stack"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", type=Path)
    ap.add_argument("-o", "--output", type=Path, default=Path("results/ack-paths"))
    a = ap.parse_args()
    from ccbench.capture.scan import read_capture
    trace = trace_run(a.experiment, a.output)
    meta_flows = json.loads((a.output / "metadata.json").read_text())["experiment"]["flows"]
    if len(meta_flows) != 1:
        sys.exit("ack_paths: the experiment must have exactly one flow")
    rcv_host = meta_flows[0]["dst"]
    pk, _ = read_capture(a.output / "pcap" / f"{rcv_host}.pcapng")
    pk = pk.filter(pl.col("proto") == 6)
    data = pk.filter(pl.col("payload") > 0)
    server = int(data["dport"].mode()[0])
    acks = pk.filter((pl.col("payload") == 0) & (pl.col("sport") == server)
                     & ((pl.col("flags") & 0x07) == 0))  # no SYN, RST, FIN
    psh_end = {int(e): bool(f & 0x08) for e, f in
               zip(((data["seq"].cast(pl.Int64) + data["payload"]) % (1 << 32)).to_list(),
                   data["flags"].to_list())}
    ack_lens = set(acks["ip_len"].to_list())
    events = [e for e in trace_events(trace) if e["len"] in ack_lens]
    i = j = 0
    pairs = []
    ack_rows = acks.select("ip_len", "ack").rows()
    while i < len(events) and j < len(ack_rows):
        if events[i]["len"] == ack_rows[j][0]:
            pairs.append((events[i], ack_rows[j][1]))
            j += 1
        i += 1
    mss = int(data["payload"].max())
    counts: collections.Counter = collections.Counter()
    prev = None
    for ev, ack in pairs:
        adv = None if prev is None else (ack - prev) % (1 << 32)
        prev = ack
        segs = "first" if adv is None else "dup" if adv == 0 else "1" if adv == mss else \
            "2" if adv == 2 * mss else "more"
        counts[(path_of(ev["stack"]), segs, "PSH" if psh_end.get(ack) else "-")] += 1
    print(f"{len(pairs)} of {len(ack_rows)} pure ACKs of the receiver matched to the trace")
    for (p, segs, psh), n in sorted(counts.items()):
        print(f"{n:6d}  {p:24s} segments {segs:5s} {psh}")
    print(f"data segments {data.height}, with PSH {int(((data['flags'] & 0x08) > 0).sum())}")


if __name__ == "__main__":
    main()
