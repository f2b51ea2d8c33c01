"""``ccbench import pcap``: packet captures → a standard results directory.

Two modes (docs/captures.md):

* **CoCo-Beholder**: a ``dumps/`` folder as its testing tool leaves it — ``metadata.json``
  (``_runtime``, ``_rate``, ``_base``/``_delta``/``_step``/``_jitter`` in µs, queues,
  ``sorted-layout``) and per flow ``<k>-<scheme>-sender.pcap`` / ``-receiver.pcap``. The
  experiment is resolved from the metadata as ``ccbench run layout.yml`` would; the sender of
  flow k is identified as CoCo-Beholder's analysis does (the lower address of the first
  packet for ``->``, the higher for ``<-``) and its data packets are those from that address.
* **generic**: capture files plus a mapping (``mapping.yaml``; ``ccbench export pcap``
  writes one beside its files) naming each flow's sender and receiver (address, optionally
  port), the file captured at the sender and at the receiver, and the experiment — a resolved
  experiment, an experiment file, or a dumbbell built from the flows' schemes.

Per flow, the data packets (payload > 0, sender → receiver) of the sender-side capture are
the rows of the packets table (``sent_ns`` = capture time); the same transmission in the
receiver-side capture (matched by ``key``: IP id, length and leading transport bytes, in
order when a key repeats) gives ``arrival_ns``, so one-way delay exists where both sides were
captured. Packets seen only at the receiver (capture drops at the sender: CoCo-Beholder's
"phantoms") are counted in the import metadata. Sequence numbers are made relative to the
SYN (or the first data packet) and unwrapped; a packet is a retransmission when it starts
below the highest byte sent before it. Time 0 is the earliest packet over all captures.

From the sender-side capture's ACKs: ``flows`` samples every sample interval — bytes
acknowledged, retransmissions, bytes in flight (packets), RTT samples (ACK time − send time
of the segment it newly acknowledges, Karn's rule) smoothed as Linux's srtt and their
minimum; what a capture cannot show (cwnd, ssthresh, CA state, pacing) is null. intervals,
delay_hist and flowstats are derived from the packets with the recorder's definitions (derive.py).
"""
from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from .errors import CaptureError
from .export import MAPPING_FILE
from .scan import int_to_ip, ip_to_int, read_capture

_COLS = ["ts_ns", "src", "dst", "sport", "dport", "proto", "seq", "ack", "flags", "payload",
         "ip_len", "key"]
SYN, ACKF = 0x02, 0x10


# ---------------------------------------------------------------------------------------------
# endpoints and captures


def _endpoint(v, what: str) -> tuple[int, int | None]:
    """'10.0.0.1' or '10.0.0.1:5201' → (address, port or None)."""
    s = str(v)
    host, _, port = s.partition(":")
    try:
        addr = ip_to_int(host)
        p = int(port) if port else None
    except ValueError:
        raise CaptureError(f"mapping: {what} {s!r} is not ADDRESS or ADDRESS:PORT "
                           "(e.g. 10.0.0.1:5201)") from None
    if p is not None and not 0 < p < 65536:
        raise CaptureError(f"mapping: {what} {s!r}: port must be 1-65535")
    return addr, p


class _Captures:
    """Each capture file read once (only the columns the import needs)."""

    def __init__(self):
        self.cache: dict[Path, pl.DataFrame] = {}
        self.counts: dict[str, dict] = {}

    def get(self, path: Path) -> pl.DataFrame:
        path = Path(path)
        if path not in self.cache:
            if not path.is_file():
                raise CaptureError(f"capture {path} does not exist")
            df, counts = read_capture(path, columns=_COLS)
            self.cache[path] = df
            self.counts[path.name] = counts
        return self.cache[path]


def _direction(df: pl.DataFrame, src: int, dst: int, sport, dport) -> pl.DataFrame:
    e = (pl.col("src") == src) & (pl.col("dst") == dst)
    if sport is not None:
        e &= pl.col("sport") == sport
    if dport is not None:
        e &= pl.col("dport") == dport
    return df.filter(e)


def _unwrap(seq: np.ndarray, base: int) -> np.ndarray:
    """32-bit sequence numbers → int64 offsets from `base`, continuous across wraps."""
    if seq.size == 0:
        return seq.astype(np.int64)
    rel = (seq.astype(np.int64) - base) % (1 << 32)
    d = np.diff(rel)
    d = (d + (1 << 31)) % (1 << 32) - (1 << 31)
    return np.concatenate([[rel[0] if rel[0] < (1 << 31) else rel[0] - (1 << 32)],
                           d]).cumsum()


# ---------------------------------------------------------------------------------------------
# one flow


def _flow(fid: int, snd: pl.DataFrame | None, rcv: pl.DataFrame | None, ends, t0: int, mss: int):
    """(packets rows, flows samples input, stats) of one flow. `ends` = (src, dst, sport, dport)."""
    src, dst, sport, dport = ends
    stats = {"flow": fid, "sender_capture": snd is not None, "receiver_capture": rcv is not None}
    if snd is None:
        raise CaptureError(f"flow {fid + 1}: no sender-side capture; the packets table is built "
                           "from the packets as they leave the sender")
    fwd = _direction(snd, src, dst, sport, dport)
    syn = fwd.filter((pl.col("flags") & SYN) != 0)
    data = fwd.filter(pl.col("payload") > 0)
    if data.height == 0:
        stats.update(packets=0, phantoms=0)
        return None, None, stats
    isn = int(syn["seq"][-1]) + 1 if syn.height else int(data["seq"][0])
    rel = _unwrap(data["seq"].to_numpy(), isn)
    pay = data["payload"].to_numpy().astype(np.int64)
    end = rel + pay
    prev_max = np.maximum.accumulate(np.concatenate([[-1 << 62], end[:-1]]))
    retrans = rel < prev_max
    occ = data.select(pl.col("key"), pl.int_range(pl.len()).over("key").alias("occ"))
    pk = pl.DataFrame({
        "flow": np.full(data.height, fid, dtype=np.uint32),
        "seq": np.maximum(rel, 0).astype(np.uint64),
        "size": data["ip_len"].to_numpy().astype(np.uint32),
        "retrans": retrans,
        "sent_ns": data["ts_ns"].to_numpy() - t0,
        "key": occ["key"], "occ": occ["occ"],
    })
    phantoms = 0
    if rcv is not None:
        got = _direction(rcv, src, dst, sport, dport).filter(pl.col("payload") > 0)
        got = got.select(pl.col("key"), pl.int_range(pl.len()).over("key").alias("occ"),
                         (pl.col("ts_ns") - t0).alias("arrival_ns"))
        pk = pk.join(got, on=["key", "occ"], how="left", maintain_order="left")
        phantoms = got.height - int(pk["arrival_ns"].is_not_null().sum())
    else:
        pk = pk.with_columns(pl.lit(None, dtype=pl.Int64).alias("arrival_ns"))
    # A packet the receiver never saw is a drop when a packet the sender sent after it did
    # arrive; after the flow's last arrival it may still have been in flight when the capture
    # stopped, and stays undelivered. Where and when it was dropped a capture cannot say:
    # drop_ns is its send time, drop_link null, drop_reason "unseen".
    if rcv is not None:
        last = pk.filter(pl.col("arrival_ns").is_not_null())["sent_ns"].max()
        unseen = pl.col("arrival_ns").is_null() & (pl.col("sent_ns") < (last if last is not None else -1))
    else:
        unseen = pl.lit(False)
    pk = pk.select(
        "flow", "seq", "size", "retrans", pl.col("sent_ns").cast(pl.Int64),
        pl.col("arrival_ns").cast(pl.Int64), pl.lit(None, dtype=pl.Int32).alias("drop_link"),
        pl.when(unseen).then(pl.col("sent_ns")).otherwise(None).cast(pl.Int64).alias("drop_ns"),
        pl.when(unseen).then(pl.lit("unseen")).otherwise(pl.lit("none")).alias("drop_reason"))
    # ACKs the sender received: cumulative ACK and RTT samples (Karn: first transmissions only)
    back = _direction(snd, dst, src, dport, sport).filter((pl.col("flags") & ACKF) != 0)
    acks = pl.DataFrame({"t": back["ts_ns"].to_numpy() - t0,
                         "ack": _unwrap(back["ack"].to_numpy(), isn) if back.height else np.zeros(0, np.int64)})
    acks = acks.with_columns(pl.col("ack").cum_max().alias("acked"))
    adv = acks.filter(pl.col("ack") > pl.col("ack").cum_max().shift(1).fill_null(-1))
    first = pl.DataFrame({"end": end, "sent": data["ts_ns"].to_numpy() - t0, "rt": retrans})
    once = first.group_by("end").agg(pl.col("sent").first(), pl.len().alias("n"), pl.col("rt").any())
    once = once.filter((pl.col("n") == 1) & ~pl.col("rt"))
    if syn.height == 1:  # the handshake's sample: SYN → SYN-ACK (acknowledges byte 0)
        once = pl.concat([once, pl.DataFrame({"end": [0], "sent": [int(syn["ts_ns"][0]) - t0],
                                              "n": [1], "rt": [False]}).cast(once.schema)])
    rtt = adv.join(once, left_on="ack", right_on="end", how="inner").select(
        "t", (pl.col("t") - pl.col("sent")).alias("rtt_ns")).filter(pl.col("rtt_ns") > 0).sort("t")
    sent_track = pl.DataFrame({"t": pk["sent_ns"], "max_end": np.maximum.accumulate(end),
                               "retrans": np.cumsum(retrans)})
    stats.update(packets=pk.height, phantoms=int(phantoms), acks=back.height,
                 rtt_samples=rtt.height, isn=isn)
    return pk, (acks, rtt, sent_track), stats


def _flow_samples(fid: int, track, t_end: int, interval: int, mss: int) -> pl.DataFrame | None:
    """The flows table of one flow, sampled every `interval` ns from its first packet."""
    acks, rtt, sent = track
    if sent.height == 0:
        return None
    t = np.arange(int(sent["t"][0]) // interval * interval, t_end + 1, interval, dtype=np.int64)
    grid = pl.DataFrame({"time_ns": t})
    # Linux's smoothing (tcp_rtt_estimator): srtt += (m - srtt)/8, mdev += (|m - srtt| - mdev)/4
    r = rtt["rtt_ns"].to_numpy().astype(np.float64) / 1e3
    srtt = np.empty_like(r)
    var = np.empty_like(r)
    s = v = 0.0
    for i, m in enumerate(r):
        if i == 0:
            s, v = m, m / 2
        else:
            v += (abs(m - s) - v) / 4
            s += (m - s) / 8
        srtt[i], var[i] = s, v
    est = pl.DataFrame({"t": rtt["t"], "srtt_us": srtt, "rttvar_us": var,
                        "min_rtt_us": np.minimum.accumulate(r) if r.size else r})
    g = grid.join_asof(sent.sort("t"), left_on="time_ns", right_on="t", strategy="backward")
    g = g.join_asof(acks.select("t", "acked").sort("t"), left_on="time_ns", right_on="t",
                    strategy="backward", suffix="_a")
    g = g.join_asof(est.sort("t"), left_on="time_ns", right_on="t", strategy="backward", suffix="_r")
    acked = g["acked"].fill_null(0).clip(lower_bound=0)
    inflight = ((g["max_end"].fill_null(0) - acked).clip(lower_bound=0) + mss - 1) // mss
    null_u32 = pl.lit(None, dtype=pl.UInt32)
    return g.select(
        pl.col("time_ns"), pl.lit(fid, dtype=pl.UInt32).alias("flow"), null_u32.alias("cwnd"),
        pl.lit(None, dtype=pl.Int64).alias("ssthresh"),
        pl.col("srtt_us").fill_null(0.0), pl.col("rttvar_us").fill_null(0.0),
        pl.col("min_rtt_us").fill_null(0.0),
        pl.Series("inflight", inflight).cast(pl.UInt32),
        (pl.Series("d", acked) // mss).cast(pl.UInt64).alias("delivered"),
        pl.Series("bytes_acked", acked).cast(pl.UInt64),
        pl.col("retrans").fill_null(0).cast(pl.UInt64),
        pl.lit(None, dtype=pl.UInt64).alias("lost"), pl.lit(None, dtype=pl.String).alias("ca_state"),
        pl.lit(None, dtype=pl.Float64).alias("pacing_rate_bps"),
        pl.lit(None, dtype=pl.Float64).alias("delivery_rate_bps"))


# ---------------------------------------------------------------------------------------------
# modes


def _coco_plan(folder: Path):
    """(experiment, [(flow id, sender file, receiver file, direction)]) of a CoCo dumps folder."""
    exp = coco_experiment(folder)
    plan = []
    for f in exp["flows"]:
        k = f["id"] + 1
        s = folder / f"{k}-{f['scheme']}-sender.pcap"
        r = folder / f"{k}-{f['scheme']}-receiver.pcap"
        if not s.is_file() and not r.is_file():
            raise CaptureError(f"{folder}: flow {k} has neither {s.name} nor {r.name}")
        plan.append((f["id"], s if s.is_file() else None, r if r.is_file() else None, f["direction"]))
    return exp, plan


#: Rows of an imported run's flows table (flows x sample intervals over the captures' span).
MAX_SAMPLE_ROWS = 20_000_000


def coco_experiment(folder: Path) -> dict:
    """The resolved experiment of a CoCo-Beholder dumps folder's metadata.json (as `ccbench
    run layout.yml` with the same central-link arguments would resolve it)."""
    from .. import config
    meta_file = folder / "metadata.json"
    try:
        meta = json.loads(meta_file.read_text())
        layout = meta["sorted-layout"]
        n = int(meta["_all-flows"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CaptureError(f"{meta_file}: not a CoCo-Beholder metadata.json ({e}); it needs "
                           "sorted-layout and _all-flows") from None
    if not isinstance(layout, list) or not all(isinstance(g, dict) for g in layout):
        raise CaptureError(f"{meta_file}: sorted-layout is not a list of flow groups")

    def num(key: str, default, kind=int):
        """A numeric field of metadata.json (absent or null: CoCo-Beholder's default)."""
        v = meta.get(key)
        if v is None:
            return default
        try:
            x = kind(v)
        except (TypeError, ValueError, OverflowError):
            x = None
        if x is None or isinstance(v, bool) or not math.isfinite(x) or x < 0:
            raise CaptureError(f"{meta_file}: {key} is not a number >= 0 (the fix: the "
                               "value run.py wrote, or remove the key for its default)")
        return x

    groups = []
    for g in layout:
        g = dict(g)
        for k in ("left-delay", "right-delay"):  # stored as int µs; layout files read bare ms
            if g.get(k) is not None:
                g[k] = f"{g[k]}us"
        g.pop("runs-first", None)
        groups.append(g)
    us = lambda k: f"{num(k, 0)}us"  # noqa: E731
    exp = config.resolve_coco(
        groups, base=us("_base"), delta=us("_delta") if num("_delta", 0) else None,
        step=us("_step"), jitter=us("_jitter") if num("_jitter", 0) else None,
        runtime=num("_runtime", 30.0, float), rate=num("_rate", 0.0, float),
        max_delay_us=num("_max-delay", 100_000_000), seed=num("_seed", 0),
        first_queue=num("_first-queue", 1000), second_queue=num("_second-queue", 1000),
        lenient=True, schemes=None, source=str(meta_file))
    if len(exp["flows"]) != n:
        raise CaptureError(f"{meta_file}: _all-flows is {n} but sorted-layout has "
                           f"{len(exp['flows'])} flows")
    return exp


def _coco_ends(caps: _Captures, s: Path | None, r: Path | None, direction: str):
    """CoCo-Beholder's sender identification: the first packet of the sender dump (else the
    receiver dump); sender = lower address for '->', higher for '<-'."""
    for p in (s, r):
        if p is None:
            continue
        df = caps.get(p)
        if df.height:
            a, b = int(df["src"][0]), int(df["dst"][0])
            lo, hi = min(a, b), max(a, b)
            return (lo, hi) if direction == "->" else (hi, lo)
    return None


def _mapped_experiment(doc: dict) -> dict:
    """A mapping's inline ``experiment:``: an experiment document (resolved here, as a file
    would be), or an already resolved one (flows with ids, links), checked before use."""
    from .. import config
    resolved = "links" in doc and isinstance(doc.get("flows"), list) and doc["flows"] and all(
        isinstance(f, dict) and "id" in f for f in doc["flows"])
    if not resolved:
        try:
            return config.resolve(doc, source="mapping: experiment", schemes=None)
        except config.ConfigErrors as e:
            raise CaptureError(f"mapping: experiment: {e}") from None
    for i, f in enumerate(doc["flows"]):
        if not isinstance(f.get("id"), int) or isinstance(f["id"], bool) or f["id"] != i:
            raise CaptureError(f"mapping: experiment.flows[{i}].id must be {i} (a resolved "
                               "experiment numbers its flows 0, 1, ...)")
        for k in ("bytes", "start_ns"):
            v = f.get(k)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise CaptureError(f"mapping: experiment.flows[{i}].{k} must be a whole "
                                   "number >= 0")
    for k in ("mss", "duration_ns", "hist_bucket_ns"):
        v = doc.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise CaptureError(f"mapping: experiment.{k} must be a whole number > 0")
    if not isinstance(doc["links"], list):
        raise CaptureError("mapping: experiment.links must be a list")
    return doc


def _generic_plan(mapping: dict, base: Path, files: list[Path]):
    from .. import config
    if not isinstance(mapping, dict) or not isinstance(mapping.get("flows"), list) or not mapping["flows"]:
        raise CaptureError("mapping: needs a non-empty flows: list (see docs/captures.md)")
    by_name = {f.name: f for f in files}

    def where(v, what):
        if v is None:
            return None
        p = Path(v)
        for c in (p, base / p, by_name.get(p.name)):
            if c is not None and Path(c).is_file():
                return Path(c)
        raise CaptureError(f"mapping: {what} {v!r} is neither a file given nor one in {base}")

    flows = mapping["flows"]
    plan = []
    for i, f in enumerate(flows):
        if not isinstance(f, dict) or "sender" not in f or "receiver" not in f:
            raise CaptureError(f"mapping: flows[{i}] needs sender and receiver (ADDRESS[:PORT])")
        s, sp = _endpoint(f["sender"], f"flows[{i}].sender")
        d, dp = _endpoint(f["receiver"], f"flows[{i}].receiver")
        plan.append((i, where(f.get("sender_capture"), f"flows[{i}].sender_capture"),
                     where(f.get("receiver_capture"), f"flows[{i}].receiver_capture"),
                     (s, d, sp, dp)))
    if isinstance(mapping.get("experiment"), dict):
        exp = _mapped_experiment(mapping["experiment"])
    elif mapping.get("experiment"):
        exp = config.load(where(mapping["experiment"], "experiment"))
    else:
        schemes = [str(f.get("scheme", "unknown")) for f in flows]
        doc = {"duration": float(mapping.get("duration", 1)),
               "central": mapping.get("central", {"rate": "1Gbit", "delay": "0ms"}),
               "flows": [{"scheme": sc, "flows": 1, "direction": f.get("direction", "->"),
                          "start": float(f.get("start", 0))} for sc, f in zip(schemes, flows)]}
        # testbed schemes are any names: no registry check (schemes=None)
        exp = config.resolve(doc, source="mapping", schemes=None)
    if len(exp["flows"]) != len(plan):
        raise CaptureError(f"mapping: {len(plan)} flows but the experiment has {len(exp['flows'])}")
    return exp, plan


# ---------------------------------------------------------------------------------------------


def import_pcap(inputs, out_dir, *, mapping=None, coco: bool | None = None,
                sample_interval: float = 0.01):
    """Import captures (a CoCo-Beholder dumps folder, a folder with mapping.yaml, or files with
    `mapping`) into the results directory `out_dir`; returns the loaded Results."""
    from ..results import load
    from ..results.writer import write_results

    inputs = [Path(p) for p in ([inputs] if isinstance(inputs, (str, Path)) else inputs)]
    caps = _Captures()
    exp, plan, mode = _import_plan(inputs, mapping, coco, caps)
    exp = dict(exp)
    if not isinstance(sample_interval, (int, float)) or not math.isfinite(sample_interval) \
            or sample_interval < 1e-6:
        raise CaptureError(f"--sample-interval {sample_interval}: must be a number of seconds "
                           ">= 0.000001 (e.g. 0.01)")
    interval_ns = int(round(sample_interval * 1e9))
    exp["sample_interval_ns"] = interval_ns
    exp["record_packets"] = True
    mss = int(exp.get("mss", 1448))
    t0, t_end = _time_span(plan, caps, interval_ns)
    got = _import_flows(plan, caps, t0, t_end, interval_ns, mss)
    exp["duration_ns"] = max(int(exp.get("duration_ns", 0)), t_end + 1) if mode == "coco-beholder" \
        else int(exp.get("duration_ns", t_end + 1))
    tables = _import_tables(exp, got)
    meta = {
        "ccbench_version": __import__("ccbench").__version__,
        "backend": "import",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": ", ".join(str(p) for p in inputs),
        "experiment": exp,
        "seed": exp.get("seed"),
        "wall_time_s": 0.0,
        "import": {"mode": mode, "t0_epoch_ns": t0, "packets": tables["packets"].height,
                   "flows": got["per_flow"], "captures": caps.counts,
                   "warnings": got["warnings"]},
    }
    return load(write_results(out_dir, tables, meta))


def _import_plan(inputs: list[Path], mapping, coco: bool | None, caps: _Captures):
    """The experiment the captures stand for and each flow's captures: (experiment,
    [(flow, sender capture, receiver capture, ends or None)], mode)."""
    for p in inputs:
        if not p.exists():
            raise CaptureError(f"{p} does not exist")
    folder = inputs[0] if len(inputs) == 1 and inputs[0].is_dir() else None
    files = [p for p in inputs if p.is_file()]
    if folder is not None:
        files = sorted(q for q in folder.iterdir() if q.suffix in (".pcap", ".pcapng"))
    if coco is None:
        coco = mapping is None and folder is not None and (folder / "metadata.json").is_file() \
            and not (folder / MAPPING_FILE).is_file()
    if coco:
        if folder is None:
            raise CaptureError("CoCo-Beholder mode reads a dumps folder: give the folder")
        exp, plan = _coco_plan(folder)
        rows = []
        for fid, s, r, direction in plan:
            ends = _coco_ends(caps, s, r, direction)
            rows.append((fid, s, r, None if ends is None else (*ends, None, None)))
        return exp, rows, "coco-beholder"
    if mapping is None and folder is not None and (folder / MAPPING_FILE).is_file():
        mapping = folder / MAPPING_FILE
    if mapping is None:
        raise CaptureError("generic mode needs --mapping FILE naming each flow's sender, "
                           "receiver and captures (docs/captures.md), or a CoCo-Beholder "
                           "dumps folder with metadata.json")
    mp = Path(mapping) if not isinstance(mapping, dict) else None
    doc = yaml.safe_load(mp.read_text()) if mp else mapping
    exp, plan = _generic_plan(doc, mp.parent if mp else (folder or Path(".")), files)
    return exp, plan, "generic"


def _time_span(plan, caps: _Captures, interval_ns: int) -> tuple[int, int]:
    """Time 0 (the earliest packet of all captures, CoCo-Beholder's base time) and the last
    packet's time after it; refuses a span that would sample too many rows."""
    used = [p for _, s, r, _ in plan for p in (s, r) if p is not None]
    firsts = [int(caps.get(p)["ts_ns"].min()) for p in used if caps.get(p).height]
    if not firsts:
        raise CaptureError("the captures hold no IPv4 packets")
    t0 = min(firsts)
    t_end = max(int(caps.get(p)["ts_ns"].max()) for p in used if caps.get(p).height) - t0
    rows = (t_end // interval_ns + 1) * len(plan)
    if rows > MAX_SAMPLE_ROWS:  # the flows table is a row per flow and interval of the span
        raise CaptureError(
            f"the captures span {t_end / 1e9:,.3f} s: sampling {len(plan)} flow(s) every "
            f"{interval_ns / 1e9:g} s would take {rows:,} rows (at most {MAX_SAMPLE_ROWS:,}); "
            "give a longer --sample-interval, or check the captures' timestamps")
    return t0, t_end


def _import_flows(plan, caps: _Captures, t0: int, t_end: int, interval_ns: int,
                  mss: int) -> dict:
    """Each flow's packets and samples from its captures: {pks, samples, per_flow (the
    metadata's per-flow counts), warnings}."""
    pks, samples, per_flow, warnings = [], [], [], []
    for fid, s, r, ends in plan:
        if ends is None:
            warnings.append(f"flow {fid + 1}: empty captures")
            per_flow.append({"flow": fid, "packets": 0})
            continue
        pk, track, st = _flow(fid, caps.get(s) if s else None, caps.get(r) if r else None,
                              ends, t0, mss)
        st.update(sender=int_to_ip(ends[0]), receiver=int_to_ip(ends[1]),
                  sender_file=s.name if s else None, receiver_file=r.name if r else None)
        per_flow.append(st)
        if pk is None:
            warnings.append(f"flow {fid + 1}: no data packets from {int_to_ip(ends[0])} in "
                            f"{s.name if s else '-'}")
            continue
        if r is None:
            warnings.append(f"flow {fid + 1}: no receiver-side capture: no arrivals or delays")
        if st["phantoms"]:
            warnings.append(f"flow {fid + 1}: {st['phantoms']} packets seen only at the receiver "
                            "(capture drops at the sender); not in the packets table")
        pks.append(pk)
        fl = _flow_samples(fid, track, t_end, interval_ns, mss)
        if fl is not None:
            samples.append(fl)
    if not pks:
        raise CaptureError("no flow has data packets in its captures")
    return {"pks": pks, "samples": samples, "per_flow": per_flow, "warnings": warnings}


def _import_tables(exp: dict, got: dict) -> dict:
    """The results tables of the imported flows (intervals, delay_hist and flowstats derived
    from the packets as the simulator's would be)."""
    from .derive import derive_tables
    samples = got["samples"]
    pk = pl.concat(got["pks"]).sort("sent_ns", "flow", maintain_order=True)
    app = {f["flow"]: 0 for f in got["per_flow"]}
    for s in samples:
        app[int(s["flow"][0])] = int(s["bytes_acked"].max() or 0)
    completed = {}
    for f in exp["flows"]:
        if f.get("bytes"):
            s = next((x for x in samples if int(x["flow"][0]) == f["id"]), None)
            hit = None if s is None else s.filter(pl.col("bytes_acked") >= f["bytes"])
            completed[f["id"]] = int(hit["time_ns"][0]) if hit is not None and hit.height else None
    intervals, delay_hist, flowstats = derive_tables(pk, exp, app, completed)
    flows = pl.concat(samples).sort("time_ns", "flow") if samples else None
    tables = {"packets": pk, "intervals": intervals, "delay_hist": delay_hist,
              "flowstats": flowstats}
    if flows is not None:
        tables["flows"] = flows
    return tables
