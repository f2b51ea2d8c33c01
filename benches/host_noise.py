"""Measure the kernel hosts' timing noise on the emulation backend (docs/fidelity.md).

Runs one bulk flow through the emulator (real kernel TCP in namespaces, unlimited side links,
so nothing queues between a host and the engine) and reads three distributions from the
per-packet records of that run:

* receiver turnaround: the engine writes a data packet into the receiver's TUN
  (`packets.arrival_ns`) -> the engine reads the ACK it causes from the same TUN. The read time
  of an ACK is its release time minus the fixed path time (propagation + serialisation of the
  ACK on the reverse path, which carries only ACKs and does not queue);
* sender turnaround: the engine writes an ACK into the sender's TUN (`emu_release.actual_ns`)
  -> it reads the first data packet sent after it (`packets.sent_ns`);
* engine release error: `emu_release.actual_ns - intended_ns` (the emulated routers' own
  forwarding noise).

Each turnaround holds the stack's receive processing (interrupt, softirq, TCP), its transmit
path (qdisc, TUN) and the engine's read latency. Only turnarounds below `--cap` count (longer
gaps are delayed-ACK timers or cwnd/TSQ waits, not processing).

    sudo .venv/bin/python benches/host_noise.py [--scheme cubic] [--rate 100Mbit] [--duration 10]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

QS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
ACK_BYTES = 52


def measure(res_dir: Path, cap_ns: int) -> dict:
    import polars as pl
    meta = json.loads((res_dir / "metadata.json").read_text())
    exp = meta["experiment"]
    flow = exp["flows"][0]
    links = {l["id"]: l for l in exp["links"]}
    fixed = sum(links[i]["delay_ns"] + (ACK_BYTES * 8 * 10**9 // links[i]["rate_bps"]
                                        if links[i]["rate_bps"] else 0)
                for i in flow["rev_path"])
    rel = pl.read_parquet(res_dir / "emu_release.parquet")
    pk = pl.read_parquet(res_dir / "packets.parquet").filter(pl.col("arrival_ns").is_not_null())
    acks = rel.filter(~pl.col("data"))
    err = rel.select((pl.col("actual_ns") - pl.col("intended_ns")).alias("d"))
    writes = pk.select(pl.col("arrival_ns").alias("t")).sort("t")
    reads = acks.select((pl.col("intended_ns") - fixed).alias("t")).sort("t")
    rx = reads.join_asof(writes.with_columns(pl.col("t").alias("w")), on="t", strategy="backward")
    rx = rx.select((pl.col("t") - pl.col("w")).alias("d")).drop_nulls()
    ack_w = acks.select(pl.col("actual_ns").alias("t")).sort("t").with_columns(
        pl.col("t").shift(-1).alias("next_ack"))
    sends = pk.select(pl.col("sent_ns").alias("t")).sort("t")
    # The first data read after an ACK write, if it comes before the next ACK (ACKs that
    # release nothing -- window full, recovery -- measure the window, not the stack).
    tx = ack_w.join_asof(sends.with_columns(pl.col("t").alias("s")), on="t", strategy="forward")
    tx = tx.filter(pl.col("s") < pl.col("next_ack")).select(
        (pl.col("s") - pl.col("t")).alias("d")).drop_nulls()

    def summary(df):
        d = df.filter((pl.col("d") >= 0) & (pl.col("d") < cap_ns))["d"]
        return {"n": len(d), "of": len(df) if df is not tx else len(ack_w),
                "q_ns": [int(d.quantile(q, "nearest")) for q in QS]}
    return {"receiver_turnaround": summary(rx), "sender_turnaround": summary(tx),
            "release_error": summary(err), "quantiles": QS,
            "kernel": meta.get("host", {}).get("kernel")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheme", default="cubic")
    ap.add_argument("--rate", default="100Mbit")
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--cap", type=float, default=1e-3, help="longest turnaround counted, s")
    ap.add_argument("--results", help="analyse this emu results directory instead of running")
    ap.add_argument("--json", help="write the distributions here")
    args = ap.parse_args(argv)
    if args.results:
        out = measure(Path(args.results), int(args.cap * 1e9))
    else:
        import ccbench
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "noise.yaml"
            f.write_text(f"duration: {args.duration}\nseed: 1\n"
                         f"central: {{rate: {args.rate}, delay: 10ms, queue: 1bdp}}\n"
                         f"flows:\n  - {{scheme: {args.scheme}}}\n")
            ccbench.run(f, Path(tmp) / "out", backend="emu")
            out = measure(Path(tmp) / "out", int(args.cap * 1e9))
    for k in ("receiver_turnaround", "sender_turnaround", "release_error"):
        v = out[k]
        print(f"{k:20s} n={v['n']}/{v['of']}  " + "  ".join(
            f"p{int(q * 100)}={x / 1000:.1f}" for q, x in zip(QS, v["q_ns"])) + "  (µs)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
