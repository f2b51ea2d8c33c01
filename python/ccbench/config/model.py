"""Typed intermediate form shared by the native and the CoCo-Beholder parsers, and the
dumbbell builder that turns it into the resolved-experiment dict (docs/architecture.md).

Both front ends produce a :class:`RunSpec` and a list of :class:`GroupSpec`; :func:`build`
sorts the groups, expands flows, lays out nodes, links and paths, computes base RTTs and
resolves BDP-relative queue sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import ConfigError, ConfigErrors, format_path, show
from .queues import apply_aqm
from .units import U32_MAX, QueueLimit

SCHEMA_VERSION = 1
#: IP packet = mss + 52 bytes (20 IP + 20 TCP + 12 timestamp option).
HEADER_BYTES = 52

DEFAULT_QUEUE = QueueLimit(packets=1000, text=1000)
DEFAULT_TCP = {"rwnd_bytes": 32 * 2**20, "init_cwnd": 10, "delayed_ack": True, "sack": True,
               "min_rto_ns": 200_000_000, "initial_rto_ns": 1_000_000_000,
               "rtt_granularity_ns": 0, "delayed_ack_timeout_ns": 40_000_000}


@dataclass
class LinkSpec:
    """One bidirectional link: the same rate and delay both ways, one queue per end.

    ``queue_a`` is the end nearer the left of the dumbbell (host ``a{k}``'s end of a left side
    link, ``r1``'s end of the central link, ``r2``'s end of a right side link); ``queue_b`` the
    other end. ``*_path`` are the YAML paths, for error messages."""

    rate_bps: int | None = None
    delay_ns: int = 0
    queue_a: QueueLimit = DEFAULT_QUEUE
    queue_b: QueueLimit = DEFAULT_QUEUE
    queue_a_path: tuple = ()
    queue_b_path: tuple = ()
    #: ECN step-marking threshold of each end (``ecn-threshold``), None = no marking.
    ecn_a: QueueLimit | None = None
    ecn_b: QueueLimit | None = None
    #: Queue discipline and parameters of each end (queues.Aqm), None = droptail.
    aqm_a: Any = None
    aqm_b: Any = None
    #: Variable delay, jitter, loss, trace, promotion (conditions.py); None = none.
    cond: Any = None


@dataclass
class GroupSpec:
    index: int                      # position in the file (error paths use it)
    scheme: str
    params: dict[str, Any] = field(default_factory=dict)
    count: int = 1
    direction: str = "->"
    start_ns: int = 0
    stop_ns: int | None = None
    bytes: int | None = None
    left: LinkSpec = field(default_factory=LinkSpec)
    right: LinkSpec = field(default_factory=LinkSpec)
    name: str | None = None
    path: tuple = ()
    ecn: bool | None = None          # None: negotiated iff the scheme needs it (dctcp)
    tcp: dict[str, Any] | None = None  # the group's full endpoint settings, if it has `tcp:`
    command: dict[str, Any] | None = None  # command scheme (config/commands.py), emu only
    python: str | None = None        # Python scheme target (config/pyschemes.py), sim only
    #: Resolved workload keys copied into each flow: app_rate_bps, onoff, arrivals (workloads.py).
    workload: dict[str, Any] = field(default_factory=dict)
    #: General topology only: src/dst hosts and optional route (topology.Endpoints).
    endpoints: Any = None


@dataclass
class RunSpec:
    duration_ns: int
    seed: int = 1
    mss: int = 1448
    sample_interval_ns: int = 10_000_000
    record_packets: bool = True
    hist_bucket_ns: int = 10_000
    tcp: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_TCP))
    central: LinkSpec = field(default_factory=LinkSpec)
    bdp_rtt_ns: int | None = None   # overrides each flow's base RTT in BDP computations
    topology: Any = None            # topology.Topology: a general graph instead of the dumbbell


@dataclass
class _Link:
    id: int
    name: str
    src: str
    dst: str
    role: str
    rate_bps: int | None
    delay_ns: int
    queue: QueueLimit
    queue_path: tuple
    ecn: QueueLimit | None = None
    #: Extra resolved keys of this direction (delay schedule, jitter, loss, trace, ...).
    extra: dict = field(default_factory=dict)
    #: Queue discipline (queues.Aqm), None = droptail.
    aqm: Any = None


def _is_second(src: str, dst: str) -> bool:
    """Whether ``src->dst`` leaves the *right* end of its dumbbell link: r1->a<k>, r2->r1,
    b<k>->r2 (the first direction of each pair is the one leaving the left end)."""
    return (src == "r1" and dst.startswith("a")) or (src, dst) == ("r2", "r1") \
        or (src.startswith("b") and dst == "r2")


def sort_groups(groups: list[GroupSpec]) -> list[GroupSpec]:
    """Stable sort by start time (CoCo-Beholder §3.3: file order kept among equal starts)."""
    return sorted(groups, key=lambda g: g.start_ns)


def bdp_packets(bdp_bytes: Fraction, mss: int) -> int:
    """BDP in packets of ``mss + 52`` bytes, rounded up, at least 1."""
    return max(1, math.ceil(bdp_bytes / (mss + HEADER_BYTES)))


def build(run: RunSpec, groups: list[GroupSpec]) -> dict:
    """Lay out the dumbbell (or the general ``topology``) and return the resolved dict."""
    if run.topology is not None:
        from .topology import build_graph
        return build_graph(run, groups)
    ordered = sort_groups(groups)
    n = sum(g.count for g in ordered)
    flow_groups: list[tuple[int, GroupSpec]] = [
        (gi, g) for gi, g in enumerate(ordered) for _ in range(g.count)]

    nodes = ([{"name": f"a{k}", "kind": "host"} for k in range(1, n + 1)]
             + [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
             + [{"name": f"b{k}", "kind": "host"} for k in range(1, n + 1)])

    links: list[_Link] = []

    def add(name_src: str, name_dst: str, role: str, spec: LinkSpec, queue: QueueLimit,
            qpath: tuple, ecn: QueueLimit | None) -> int:
        extra = {}
        if spec.cond is not None:
            # The end the direction leaves: the left end is listed first (queue_a's end).
            end = "right" if _is_second(name_src, name_dst) else "left"
            pair = "-".join(sorted((name_src, name_dst)))
            extra = spec.cond.link_keys(end, pair, run.seed, run.duration_ns)
        aqm = spec.aqm_b if _is_second(name_src, name_dst) else spec.aqm_a
        links.append(_Link(len(links), f"{name_src}->{name_dst}", name_src, name_dst, role,
                           spec.rate_bps, spec.delay_ns, queue, qpath, ecn, extra, aqm=aqm))
        return len(links) - 1

    # Ids: all left side links (a_k->r1, r1->a_k per flow), the central pair, then all right
    # side links (r2->b_k, b_k->r2 per flow): a1->r1 is 0, r1->r2 is 2n, r2->b1 is 2n+2.
    left_ids = []
    for k, (_, g) in enumerate(flow_groups, start=1):
        up = add(f"a{k}", "r1", "left", g.left, g.left.queue_a, g.left.queue_a_path, g.left.ecn_a)
        down = add("r1", f"a{k}", "left", g.left, g.left.queue_b, g.left.queue_b_path, g.left.ecn_b)
        left_ids.append((up, down))
    c = run.central
    c_lr = add("r1", "r2", "central", c, c.queue_a, c.queue_a_path, c.ecn_a)
    c_rl = add("r2", "r1", "central", c, c.queue_b, c.queue_b_path, c.ecn_b)
    right_ids = []
    for k, (_, g) in enumerate(flow_groups, start=1):
        out = add("r2", f"b{k}", "right", g.right, g.right.queue_a, g.right.queue_a_path, g.right.ecn_a)
        back = add(f"b{k}", "r2", "right", g.right, g.right.queue_b, g.right.queue_b_path, g.right.ecn_b)
        right_ids.append((out, back))

    flows = []
    for i, (gi, g) in enumerate(flow_groups):
        k = i + 1
        lu, ld = left_ids[i]
        ro, rb = right_ids[i]
        rightward = [lu, c_lr, ro]   # a_k -> b_k
        leftward = [rb, c_rl, ld]    # b_k -> a_k
        if g.direction == "->":
            path, rev, src, dst = rightward, leftward, f"a{k}", f"b{k}"
        else:
            path, rev, src, dst = leftward, rightward, f"b{k}", f"a{k}"
        rtt = sum(links[j].delay_ns for j in path + rev)
        label = f"Flow {k}: {g.name}" if g.name else f"Flow {k}: {g.scheme} {g.direction}"
        flows.append({
            "id": i, "group": gi, "label": label, "scheme": g.scheme,
            "params": dict(g.params), "direction": g.direction, "src": src, "dst": dst,
            "start_ns": g.start_ns, "stop_ns": g.stop_ns, "bytes": g.bytes,
            "path": path, "rev_path": rev, "base_rtt_ns": rtt,
            "ecn": g.ecn, "tcp": dict(g.tcp) if g.tcp is not None else None,
            **({"command": dict(g.command)} if g.command else {}),
            **({"python": g.python} if g.python else {}),
            **g.workload,
        })

    queues = _resolve_queues(run, links, flows, flow_groups)

    return {
        "schema": SCHEMA_VERSION,
        "duration_ns": run.duration_ns,
        "seed": run.seed,
        "mss": run.mss,
        "sample_interval_ns": run.sample_interval_ns,
        "record_packets": run.record_packets,
        "hist_bucket_ns": run.hist_bucket_ns,
        "tcp": dict(run.tcp),
        "nodes": nodes,
        "links": [{"id": l.id, "name": l.name, "src": l.src, "dst": l.dst, "role": l.role,
                   "rate_bps": l.rate_bps, "delay_ns": l.delay_ns, "queue": queues[l.id],
                   **l.extra}
                  for l in links],
        "bottleneck_links": [c_lr, c_rl],
        "flows": flows,
    }


def _resolve_queues(run: RunSpec, links: list[_Link], flows: list[dict],
                    flow_groups: list[tuple[int, GroupSpec]]) -> list[dict]:
    """Turn every link's QueueLimit into ``{"kind": "droptail", "packets", "bytes"}``, plus
    ``ecn_threshold_packets`` / ``ecn_threshold_bytes`` when the queue marks ECN.

    BDP of a link = max over the flows whose data path or ACK path crosses it of
    (bottleneck rate of the flow's data path x the flow's base RTT, or ``bdp-rtt``)."""
    crossing: dict[int, list[int]] = {}
    for f in flows:
        for j in set(f["path"]) | set(f["rev_path"]):
            crossing.setdefault(j, []).append(f["id"])

    def flow_bdp_bytes(f: dict) -> Fraction | None:
        rates = [links[j].rate_bps for j in f["path"] if links[j].rate_bps is not None]
        if not rates:
            return None
        rtt = run.bdp_rtt_ns if run.bdp_rtt_ns is not None else f["base_rtt_ns"]
        return Fraction(min(rates) * rtt, 8 * 10**9)

    errors: list[ConfigError] = []
    reported: set[tuple] = set()
    out = []
    for link in links:
        out.append(_resolve_one(link, link.queue, run, crossing, flows, flow_bdp_bytes, errors,
                                reported))
        if link.ecn is not None:
            k = _resolve_one(link, link.ecn, run, crossing, flows, flow_bdp_bytes, errors,
                             reported)
            out[-1]["ecn_threshold_packets"] = k["packets"]
            out[-1]["ecn_threshold_bytes"] = k["bytes"]
        if link.aqm is not None:
            apply_aqm(out[-1], link.aqm, link.rate_bps,
                      lambda ql, link=link: _resolve_one(link, ql, run, crossing, flows,
                                                         flow_bdp_bytes, errors, reported),
                      errors, link.queue_path)
    if errors:
        raise ConfigErrors(errors)
    return out


def _resolve_one(link: _Link, q: QueueLimit, run: RunSpec, crossing: dict, flows: list[dict],
                 flow_bdp_bytes, errors: list[ConfigError], reported: set) -> dict:
    """One queue size of a link (its limit or its ECN threshold), BDP multiples resolved to
    packets: ``{"kind": "droptail", "packets", "bytes"}``."""
    if q.bdp is None:
        return {"kind": "droptail", "packets": q.packets, "bytes": q.bytes}
    bdps = []
    unlimited = []
    for fid in crossing.get(link.id, []):
        b = flow_bdp_bytes(flows[fid])
        if b is None:
            unlimited.append(fid)
        else:
            bdps.append(b)
    if unlimited or not bdps:
        key = (link.queue_path, tuple(unlimited))
        if key not in reported:
            reported.add(key)
            who = ", ".join(f"flow {fid + 1}" for fid in unlimited) or "no flow"
            errors.append(ConfigError(
                link.queue_path,
                f"queue size {show(q.text)} is relative to the BDP, but the BDP of link "
                f"{link.name} is infinite: {who} has no rate limit anywhere on its data "
                "path",
                "set a rate on the central or side links, or give the queue in packets or "
                "bytes", q.text))
        return {"kind": "droptail", "packets": None, "bytes": None}
    pkts = bdp_packets(q.bdp * max(bdps), run.mss)
    if pkts > U32_MAX:
        errors.append(ConfigError(link.queue_path, f"{show(q.text)} is {pkts} packets on link "
                                  f"{link.name}, too large", f"at most {U32_MAX} packets",
                                  q.text))
        pkts = U32_MAX
    return {"kind": "droptail", "packets": pkts, "bytes": None}


__all__ = ["LinkSpec", "GroupSpec", "RunSpec", "build", "bdp_packets", "HEADER_BYTES",
           "SCHEMA_VERSION", "DEFAULT_TCP", "DEFAULT_QUEUE", "format_path"]
