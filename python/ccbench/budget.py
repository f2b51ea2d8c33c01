"""Resource budgets, checked before any work starts.

:func:`estimate` derives from a resolved experiment how many data packets, events and
result rows a run will make and how much memory that takes; :func:`check` refuses (raises
:class:`BudgetError`) when the memory estimate exceeds a budget derived from the machine's
available memory, or the event count would take longer than a day. :func:`check_interval`
does the same for an analysis interval (``ccbench stats -i``).

The estimate is an upper-bound style model, not a measurement: every link carries at most
its rate; a TCP flow sends at most its path's slowest link, its application rate or one
receive window per base RTT; a UDP flow sends at its configured rate whatever the links do
(the packets are still created and then dropped). The memory coefficients are peak RSS
per row of a whole ``ccbench run`` (Rust columns, their copy into Python, the polars frame
and the Parquet write), measured on the quickstart with 0.1 ms samples and 300 s runs
(docs/robustness.md, "Budgets").
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

#: Bytes of peak RSS per row, measured (see the module docstring), of a run that holds its
#: records whole until it ends (the emulator).
BYTES_PER_PACKET = 160
BYTES_PER_FLOW_SAMPLE = 400
BYTES_PER_QUEUE_SAMPLE = 150
BYTES_PER_INTERVAL_ROW = 150
#: A simulator run streams packets, flow and queue samples to disk in chunks
#: (ccbench.results.spill) and its summary reads them back a part at a time: what it holds
#: of them is a few chunks whatever the run's length (STREAMED_RECORDS_BYTES, or what the
#: records would cost held whole if that is less). Per packet,
#: 1000 CUBIC flows x 10 Gbit/s x 60 s measured 1.2 B (1.13 GB peak with 50.1 M packet
#: records, 1.08 GB without; docs/robustness.md, "Records streamed to disk").
BYTES_PER_PACKET_STREAMED = 8
STREAMED_RECORDS_BYTES = 400 * 2**20
#: Disk a streamed run fills per row: its chunks (uncompressed Arrow IPC) until the run ends,
#: and beside them the Parquet table (zstd; a third of that at most, measured 0.15-0.3).
DISK_PER_PACKET = 46 * 4 // 3
DISK_PER_FLOW_SAMPLE = 180 * 4 // 3
DISK_PER_QUEUE_SAMPLE = 70 * 4 // 3
#: Fraction of the free disk space beside the results folder a run may plan to fill.
DISK_FRACTION = 0.9
#: The core numbers packet records with 32-bit indices (u32::MAX marks "no record").
MAX_PACKET_RECORDS = 2**32 - 2
BYTES_PER_CONN = 2_000          # connection state in the simulator + its conns row
BYTES_PER_FLOW = 64 * 1024      # sender/receiver state, per-flow vectors, labels
BYTES_PER_DELAY_STEP = 200      # one [t, delay] step of a delay schedule, Rust + JSON + Python
BYTES_PER_HIST_BUCKET = 8       # the one-way-delay histogram is a dense vector per flow
BASELINE_BYTES = 250 * 2**20    # the interpreter, polars, numpy and the extension
#: Events per second of the simulator on this kind of machine (quickstart: 4.7 M/s;
#: 2 M/s with dense sampling); the wall-time estimate uses the lower value.
EVENTS_PER_S = 2e6
#: Runs estimated to take longer than this are refused (override: --no-budget).
MAX_WALL_S = 24 * 3600.0
#: Fraction of the available memory a run may plan to use.
MEMORY_FRACTION = 0.8
#: Peak bytes per analysis bin (series x interval); stats -i on the quickstart measured 67-83.
BYTES_PER_ANALYSIS_BIN = 120  # measured 67-83 B on the quickstart (stats -i 1e-4, 2e-5)


class BudgetError(ValueError):
    """The run (or analysis) would exceed its memory or time budget."""


@dataclass
class Estimate:
    packets: float = 0.0            # data-packet transmissions (packets table rows)
    events: float = 0.0
    toggles: float = 0.0            # on/off switches of on-off sources
    flow_samples: float = 0.0
    queue_samples: float = 0.0
    interval_rows: float = 0.0
    conns: float = 0.0
    delay_steps: float = 0.0
    hist_buckets: float = 0.0
    flows: int = 0
    memory_bytes: float = 0.0
    #: disk the spilled records and the tables written from them fill (streamed runs)
    disk_bytes: float = 0.0
    wall_s: float = 0.0
    #: (what, bytes) of the biggest contributors, largest first
    parts: list = field(default_factory=list)

    def describe(self) -> str:
        main = ", ".join(f"{what} {_size(b)}" for what, b in self.parts[:3] if b > 0)
        return (f"estimated peak memory {_size(self.memory_bytes)} ({main}); "
                f"{_count(self.packets)} data packets, {_count(self.events)} events "
                f"(~{_duration(self.wall_s)} of simulation)")


def _count(x: float) -> str:
    if x >= 1e12:
        return f"{x:.3g}"
    for unit, div in ((" G", 1e9), (" M", 1e6), (" k", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.0f}"


def _size(b: float) -> str:
    for unit, div in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if b >= div:
            return f"{b / div:.3g} {unit}"
    return f"{b / 1024:.0f} KiB"


def _duration(s: float) -> str:
    if s >= 86400 * 365:
        return f"{s / (86400 * 365):.3g} years"
    if s >= 86400:
        return f"{s / 86400:.3g} days"
    if s >= 3600:
        return f"{s / 3600:.3g} h"
    if s >= 60:
        return f"{s / 60:.3g} min"
    return f"{s:.2g} s"


def available_memory() -> int:
    """MemAvailable of /proc/meminfo (bytes); the physical memory elsewhere. (Read with
    one open, read and close: a campaign checks it for every run.)"""
    try:
        fd = os.open("/proc/meminfo", os.O_RDONLY | os.O_CLOEXEC)
        try:
            text = os.read(fd, 1 << 16)
        finally:
            os.close(fd)
        for line in text.decode("ascii", "replace").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def default_budget() -> int:
    """Memory a run may plan to use: MEMORY_FRACTION of the available memory."""
    return int(available_memory() * MEMORY_FRACTION)


def _active_s(flow: dict, duration_s: float) -> float:
    start = flow.get("start_ns") or 0
    stop = flow.get("stop_ns")
    end = duration_s * 1e9 if stop is None else min(stop, duration_s * 1e9)
    return max(end - start, 0) / 1e9


def _flow_cap_bps(flow: dict, links: dict, exp: dict, pkt: int) -> float:
    """The most a flow can send alone, bit/s."""
    rates = [links[i].get("rate_bps") for i in flow.get("path", []) if i in links]
    cap = float(min([r for r in rates if r], default=math.inf))
    app = flow.get("app_rate_bps")
    if flow.get("scheme") == "udp":
        # a CBR source creates its datagrams whatever the links can carry
        return float(app) if app else cap
    if flow.get("probe"):  # one probe per interval (and its echo)
        return 8.0 * flow["probe"]["size"] / (flow["probe"]["interval_ns"] / 1e9)
    if app:
        cap = min(cap, float(app))
    tcp = flow.get("tcp") or exp.get("tcp") or {}
    rwnd = tcp.get("rwnd_bytes")
    rtt = flow.get("base_rtt_ns") or 0
    if not rwnd:
        # autotuned: at most half of rmem[2] is window (scaling ratio 50 %)
        rwnd = (tcp.get("rmem") or [0, 0, 32 << 20])[2] // 2
    if rwnd and rtt > 0:
        cap = min(cap, rwnd * 8 / (rtt / 1e9))
    if rtt > 0:
        # the send buffer: at most tcp_wmem[2] of truesize, plus one 64 KB skb, unACKed
        wmax = (tcp.get("wmem") or [0, 0, 4 << 20])[2]
        cap = min(cap, (wmax + 65160) * 8 / (rtt / 1e9))
    if not math.isfinite(cap):
        # nothing limits it: the simulator still sends at most a packet per nanosecond
        cap = pkt * 8 * 1e9
    return cap


def estimate(exp: dict, *, packets: bool | None = None, streamed: bool = True) -> Estimate:
    """The resources a run of the resolved experiment ``exp`` needs (see the module doc).
    ``streamed``: the run spills packets, flow and queue samples to disk as it goes (the
    simulator); False: it holds them whole until the end (the emulator)."""
    est = Estimate()
    duration_s = exp.get("duration_ns", 0) / 1e9
    pkt = int(exp.get("mss", 1448)) + 52
    sample_s = max(exp.get("sample_interval_ns") or 10_000_000, 1) / 1e9
    links = {ln["id"]: ln for ln in exp.get("links", [])}
    flows = exp.get("flows", [])
    est.flows = len(flows)
    record = exp.get("record_packets", True) if packets is None else packets

    sent, elastic, hops = _flow_bits(est, exp, flows, links, pkt, duration_s)
    _share_links(sent, elastic, flows, links, duration_s)
    bits = sum(sent)
    est.packets = bits / (pkt * 8)
    samples = duration_s / sample_s + 1     # at 0 and every interval up to the end
    est.flow_samples = samples * len(flows)
    est.queue_samples = samples * len(links)
    est.interval_rows = samples * len(flows)
    _delay_steps(est, links, duration_s)
    _hist_buckets(est, exp, flows, links, pkt)
    est.events = (est.packets * (hops / 2 + 1) * 1.5 + samples * (1 + len(flows))
                  + est.conns * 12 + est.delay_steps + est.toggles)
    _memory(est, record=record, streamed=streamed, n_flows=len(flows))
    est.wall_s = est.events / EVENTS_PER_S
    return est


def _flow_bits(est: Estimate, exp: dict, flows: list, links: dict, pkt: int,
               duration_s: float) -> tuple[list[float], list[bool], float]:
    """The bits each flow can send, whether it is elastic (TCP: slowed by the links) or not
    (UDP), and the longest round trip in links; counts ``est``'s connections and on/off
    toggles."""
    sent: list[float] = []       # bits each flow can send
    elastic: list[bool] = []     # TCP (slowed by the links) or UDP (is not)
    hops = 0.0
    for f in flows:
        active = _active_s(f, duration_s)
        cap = _flow_cap_bps(f, links, exp, pkt)
        arr = f.get("arrivals")
        if arr:
            est.conns += float(arr.get("rate_per_s") or 0) * active
        oo = f.get("onoff")
        if oo and (oo.get("on_ns") or 0) + (oo.get("off_ns") or 0) > 0:
            # each on and each off period is a timer event of its own, sent or not
            est.toggles += 2 * active * 1e9 / (oo["on_ns"] + oo["off_ns"])
        bits = cap * active
        if f.get("bytes") and not arr:
            bits = min(bits, float(f["bytes"]) * 8)
        sent.append(bits)
        elastic.append(f.get("scheme") not in ("udp", "probe"))
        hops = max(hops, len(f.get("path", [])) + len(f.get("rev_path", [])))
    return sent, elastic, hops


def _share_links(sent: list[float], elastic: list[bool], flows: list, links: dict,
                 duration_s: float) -> None:
    """Scale ``sent`` down where the flows crossing a link would exceed it."""
    # each link carries at most rate x duration: scale the elastic flows crossing a
    # saturated link down, slowest link first (a rough max-min share)
    crossing: dict[int, list[int]] = {}
    for k, f in enumerate(flows):
        for i in f.get("path", []):
            crossing.setdefault(i, []).append(k)
    for i in sorted((i for i in crossing if links.get(i, {}).get("rate_bps")),
                    key=lambda i: links[i]["rate_bps"]):
        room = float(links[i]["rate_bps"]) * duration_s
        fixed = sum(sent[k] for k in crossing[i] if not elastic[k])
        flex = sum(sent[k] for k in crossing[i] if elastic[k])
        if flex > 0 and fixed + flex > room:
            scale = max(room - fixed, 0.0) / flex
            for k in crossing[i]:
                if elastic[k]:
                    sent[k] *= scale


def _delay_steps(est: Estimate, links: dict, duration_s: float) -> None:
    """The delay schedules' steps over the run."""
    for ln in links.values():
        sched = ln.get("delay_schedule") or {}
        kind = sched.get("kind")
        if kind == "walk" and sched.get("delta_ns"):
            est.delay_steps += duration_s * 1e9 / sched["delta_ns"]
        elif kind == "square" and sched.get("period_ns"):
            est.delay_steps += 2 * duration_s * 1e9 / sched["period_ns"]
        elif kind == "sine" and sched.get("period_ns"):
            est.delay_steps += 64 * duration_s * 1e9 / sched["period_ns"]
        elif kind == "series":
            est.delay_steps += len(sched.get("points", []))


def _hist_buckets(est: Estimate, exp: dict, flows: list, links: dict, pkt: int) -> None:
    # the one-way-delay histogram: a dense vector per flow up to the largest delay seen;
    # bound the delay by the base RTT plus a full queue at the slowest link on the path
    bucket = max(exp.get("hist_bucket_ns") or 10_000, 1)
    for f in flows:
        worst = f.get("base_rtt_ns") or 0
        for i in f.get("path", []):
            ln = links.get(i) or {}
            q = ln.get("queue") or {}
            if ln.get("rate_bps") and q.get("packets"):
                worst += q["packets"] * pkt * 8 / ln["rate_bps"] * 1e9
        est.hist_buckets += worst / bucket


def _memory(est: Estimate, *, record: bool, streamed: bool, n_flows: int) -> None:
    """The memory held (``parts``, largest first, and their sum over the baseline) and, for a
    streamed run, the disk written."""
    held = [("per-packet records" if record else "packets in flight",
             est.packets * BYTES_PER_PACKET if record else 0.0),
            ("flow samples", est.flow_samples * BYTES_PER_FLOW_SAMPLE),
            ("queue samples", est.queue_samples * BYTES_PER_QUEUE_SAMPLE)]
    if streamed:
        # a few chunks at most; a run whose records fit in them holds no more than them
        held = [("per-packet records" if record else "packets in flight",
                 est.packets * BYTES_PER_PACKET_STREAMED if record else 0.0),
                ("records in chunks", min(STREAMED_RECORDS_BYTES, sum(b for _, b in held)))]
    parts = held + [
        ("interval aggregates", est.interval_rows * BYTES_PER_INTERVAL_ROW),
        ("short-flow connections", est.conns * BYTES_PER_CONN),
        ("delay-schedule steps", est.delay_steps * BYTES_PER_DELAY_STEP),
        ("delay histograms", est.hist_buckets * BYTES_PER_HIST_BUCKET),
        ("flow state", n_flows * BYTES_PER_FLOW),
    ]
    if streamed:
        est.disk_bytes = (est.packets * DISK_PER_PACKET * record
                          + est.flow_samples * DISK_PER_FLOW_SAMPLE
                          + est.queue_samples * DISK_PER_QUEUE_SAMPLE)
    est.parts = sorted(parts, key=lambda p: -p[1])
    est.memory_bytes = BASELINE_BYTES + sum(b for _, b in parts)


def _hint() -> str:
    return ("shorten the run, sample less often, use fewer flows or lower rates, or turn "
            "per-packet records off (--no-packets); to run anyway: --memory-budget SIZE "
            "or --no-budget")


def check(exp: dict, *, memory_budget: int | str | None = None, packets: bool | None = None,
          enabled: bool = True, streamed: bool = True, disk_dir=None) -> Estimate:
    """Refuse (BudgetError) a run whose estimate exceeds the memory budget
    (``memory_budget`` bytes or a size such as "16G"; default :func:`default_budget`),
    MAX_WALL_S, or (a streamed run, its results folder's parent `disk_dir` given) the free
    disk space there (free_disk); or that would make more packet records than the core can
    number."""
    est = estimate(exp, packets=packets, streamed=streamed)
    if not enabled:
        return est
    if isinstance(memory_budget, str):
        memory_budget = parse_memory(memory_budget)
    budget = default_budget() if memory_budget is None else int(memory_budget)
    if est.memory_bytes > budget:
        src = "" if memory_budget is not None else \
            f" ({MEMORY_FRACTION:.0%} of the {_size(available_memory())} available)"
        raise BudgetError(f"this run would need more memory than its budget of "
                          f"{_size(budget)}{src}: {est.describe()}; {_hint()}")
    if est.wall_s > MAX_WALL_S:
        raise BudgetError(f"this run would take longer than {_duration(MAX_WALL_S)}: "
                          f"{est.describe()}; {_hint()}")
    record = exp.get("record_packets", True) if packets is None else packets
    if record and est.packets > MAX_PACKET_RECORDS:
        raise BudgetError(f"this run would make about {_count(est.packets)} per-packet records, "
                          f"more than the {_count(MAX_PACKET_RECORDS)} the simulator can number; "
                          "turn per-packet records off (--no-packets), shorten the run or "
                          "lower the rates")
    if disk_dir is not None and est.disk_bytes:
        where, free = free_disk(disk_dir)
        if est.disk_bytes > free * DISK_FRACTION:
            raise BudgetError(
                f"this run's records would fill ~{_size(est.disk_bytes)} of disk while it runs "
                f"(chunks and tables), more than {DISK_FRACTION:.0%} of the {_size(free)} free "
                f"in {where}: {est.describe()}; write the results elsewhere (-o DIR) or "
                f"{_hint()}")
    return est


def free_disk(folder) -> tuple[Path, int]:
    """The free disk space for a run's records in ``folder`` (made later if missing: its
    nearest existing parent is read), and the folder read. One statfs per run: it costs a
    few microseconds (docs/benchmarks.md, "The run's folder in system calls")."""
    import shutil
    key = os.path.abspath(folder)
    where = next((p for p in (Path(key), *Path(key).parents) if p.exists()), Path("/"))
    return where, shutil.disk_usage(where).free


def parse_memory(text: str) -> int:
    """``--memory-budget`` values: bytes, or a number with K/M/G/T (powers of 1024, an
    optional ``iB``/``B``): ``16G``, ``512MiB``, ``2.5GB``."""
    import re
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?)(i?[bB])?\s*", str(text))
    if not m:
        raise BudgetError(f"--memory-budget: {text!r} is not a size; e.g. 16G or 512MiB")
    mult = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def check_interval(interval_s, duration_ns: int, n_series: int, *,
                   memory_budget: int | None = None, what: str = "-i/--interval") -> None:
    """Refuse an analysis interval that is not a positive finite number, or whose grid
    (``n_series`` series x duration / interval bins) would not fit the memory budget."""
    try:
        iv = float(interval_s)
    except (TypeError, ValueError):
        raise BudgetError(f"{what}: {interval_s!r} is not a number of seconds") from None
    if not math.isfinite(iv) or iv <= 0:
        raise BudgetError(f"{what}: the interval must be a positive number of seconds, "
                          f"not {interval_s!r}; e.g. 0.5")
    bins = duration_ns / 1e9 / iv * max(n_series, 1)
    need = bins * BYTES_PER_ANALYSIS_BIN
    budget = default_budget() if memory_budget is None else int(memory_budget)
    if need > budget:
        largest = duration_ns / 1e9 * max(n_series, 1) * BYTES_PER_ANALYSIS_BIN / budget
        raise BudgetError(
            f"{what}: an interval of {iv:g} s cuts the {duration_ns / 1e9:g} s run into "
            f"{_count(bins)} bins over {n_series} series, ~{_size(need)} of memory "
            f"(budget {_size(budget)}); use an interval of at least {largest:.2g} s")
