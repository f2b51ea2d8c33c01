"""The resolved-experiment dict, written in one place for every layout.

A layout (dumbbell.py, topology.py) places nodes and directed links and routes each flow; it
hands :func:`experiment` the nodes, the :class:`DirectedLink` list, the bottleneck link ids and
the flows made by :func:`flow_entry`. :func:`experiment` resolves every queue (BDP multiples to
packets, ECN thresholds, AQM parameters) and returns the dict the backends receive
(docs/architecture.md, "Resolved experiment").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..cc import runtime, sources
from .errors import ConfigError, ConfigErrors, show
from .model import SCHEMA_VERSION, GroupSpec, RunSpec, bdp_packets
from .queues import apply_aqm
from .units import U32_MAX, QueueLimit


@dataclass
class DirectedLink:
    """One direction of a link as a layout places it (``id`` is its index in the list)."""

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


def sort_groups(groups: list[GroupSpec]) -> list[GroupSpec]:
    """Stable sort by start time: file order kept among equal starts, as CoCo-Beholder orders
    its flow groups. A group's index in this order is its ``group`` in the resolved flows."""
    return sorted(groups, key=lambda g: g.start_ns)


def flow_groups(groups: list[GroupSpec]) -> list[tuple[int, GroupSpec]]:
    """(group index, group) per flow: :func:`sort_groups`, each repeated ``count`` times."""
    return [(gi, g) for gi, g in enumerate(sort_groups(groups)) for _ in range(g.count)]


def _source_identity(target: str) -> dict:
    """``{"source_sha256": …}`` of a Python scheme's files (cc/sources.py), so that editing them
    changes the run's key; nothing for an object given through the Python API."""
    f = runtime.source_file(target)
    return {} if f is None else {"source_sha256": sources.python_digest(f)}


def flow_entry(i: int, gi: int, g: GroupSpec, where: str, direction: str, src: str, dst: str,
               path: list[int], rev: list[int], links: list[DirectedLink],
               route: list[str] | None = None) -> dict:
    """The resolved flow ``i`` of group ``gi``; ``where`` ends its default label ("cubic ->",
    "cubic h1->h2"); ``route``: the nodes crossed (general topologies only)."""
    rtt = sum(links[j].delay_ns for j in path + rev)
    label = f"Flow {i + 1}: {g.name}" if g.name else f"Flow {i + 1}: {g.scheme} {where}"
    return {
        "id": i, "group": gi, "label": label, "scheme": g.scheme,
        "params": dict(g.params), "direction": direction, "src": src, "dst": dst,
        "start_ns": g.start_ns, "stop_ns": g.stop_ns, "bytes": g.bytes,
        "path": path, "rev_path": rev, "base_rtt_ns": rtt,
        **({"route": route} if route is not None else {}),
        "ecn": g.ecn, "tcp": dict(g.tcp) if g.tcp is not None else None,
        **({"command": dict(g.command)} if g.command else {}),
        **({"python": g.python, **_source_identity(g.python)} if g.python else {}),
        **({"kernel_cc": g.kernel_cc} if g.kernel_cc else {}),
        **({"bpf": dict(g.bpf)} if g.bpf else {}),
        **({"transport": g.transport} if g.transport != "tcp" else {}),
        **({"source_sha256": g.file_sha256} if g.file_sha256 else {}),
        **g.workload,
    }


def experiment(run: RunSpec, nodes: list[dict], links: list[DirectedLink],
               bottleneck_links: list[int], flows: list[dict]) -> dict:
    """The resolved-experiment dict; raises ConfigErrors for queues that cannot be sized."""
    queues = _resolve_queues(run, links, flows)
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
        "bottleneck_links": bottleneck_links,
        "flows": flows,
        "host_noise": run.host_noise,
    }


def _resolve_queues(run: RunSpec, links: list[DirectedLink], flows: list[dict]) -> list[dict]:
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


def _resolve_one(link: DirectedLink, q: QueueLimit, run: RunSpec, crossing: dict, flows: list[dict],
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


__all__ = ["DirectedLink", "experiment", "flow_entry", "flow_groups", "sort_groups"]
