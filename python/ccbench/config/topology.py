"""General topologies (docs/experiment-file.md, "Topologies").

```yaml
topology:
  nodes: [h1, h2, r1, r2]            # optional: defaults to the links' ends in order
  links:
    - {from: h1, to: r1, rate: 1Gbit, delay: 1ms}
    - {name: bn, from: r1, to: r2, rate: 10Mbit, delay: 10ms, queue: 1bdp}
flows:
  - {scheme: cubic, src: h1, dst: h2}              # route: shortest path by hop count
  - {scheme: bbr, src: h1, dst: h2, route: [h1, r1, r2, h2]}
```

Each link is declared once and carries traffic both ways with the same rate and delay; each
end has its own queue (as the dumbbell's links). Routes default to the shortest path by hop
count; among equally short paths the one whose node sequence comes first in declaration order
(nodes list, else first appearance in links) wins, so the choice is deterministic. ACKs take
the data route reversed. The resolved form is the same general one the dumbbell builds
(nodes, directed links ``a->b`` with ids ``2i`` / ``2i+1`` for the i-th declared link, per-flow
``path``/``rev_path``); ``bottleneck_links`` are, per flow, the slowest links of its data path.
"""

from __future__ import annotations

import re

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .conditions import Conditions
from .errors import ConfigError, ConfigErrors, Collector, format_path, show
from .keys import Key, take
from .links import channel_keys, parse_conditions, parse_duplex, parse_link_delay, parse_queue_spec
from .model import GroupSpec, LinkSpec, RunSpec
from .resolved import DirectedLink, experiment, flow_entry, flow_groups, sort_groups
from .units import parse_rate

TOPO_HINT = "e.g. topology: {links: [{from: h1, to: r1, rate: 100Mbit, delay: 5ms}, ...]}"
LINK_KEYS = ("name", "from", "to", "rate", "delay", "queue", "queues", "jitter", "loss",
             "trace", "promotion", "duplex")
DUMBBELL_GROUP_KEYS = ("direction",) + tuple(
    f"{side}-{k}" for side in ("left", "right")
    for k in ("rate", "delay", "queue", "ecn", "aqm", "jitter", "loss", "trace", "promotion",
              "duplex"))


@dataclass
class TopoLink:
    name: str
    a: str
    b: str
    spec: LinkSpec
    path: tuple


@dataclass
class Topology:
    nodes: list[str]
    kinds: dict[str, str]
    links: list[TopoLink]
    path: tuple


@dataclass
class Endpoints:
    """A group's src/dst/route as written, and the dumbbell-only keys it used (with paths)."""
    src: tuple | None = None          # (value, path)
    dst: tuple | None = None
    route: tuple | None = None
    dumbbell_keys: list[tuple] = field(default_factory=list)


#: Node names become file names (a capture's ``<node>.pcapng``, ``<u>-<v>.pcapng``): letters,
#: digits, ``_``, ``-`` and ``.``, starting with a letter or digit, at most 63 characters.
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


def _node_name(v: Any, path: tuple) -> str:
    if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
        name = str(v).strip()
        if NODE_NAME.fullmatch(name):
            return name
        raise ConfigError(path, f"{show(v)} is not a node name: node names become file names "
                          "(captures)", "letters, digits, '_', '-' and '.', starting with a "
                          "letter or digit, at most 63 characters, e.g. r1", v)
    raise ConfigError(path, f"{show(v)} is not a node name", "write a name, e.g. r1", v)


def parse_topology(value: Any, path: tuple, errs: Collector) -> Topology | None:
    t = take(value, path, [Key("nodes"), Key("links", required=True)], errs,
             what="a topology (nodes and links)")
    if t is None:
        return None
    declared = "nodes" in t
    got = _parse_nodes(t["nodes"], errs) if declared else ([], {})
    if got is None:
        return None
    nodes, kinds = got
    lv, lpath = t["links"]
    if not isinstance(lv, list) or not lv:
        errs.error(lpath, f"{show(lv)} is not a list of links", TOPO_HINT, lv)
        return None
    links: list[TopoLink] = []
    seen: dict[frozenset, tuple] = {}
    names: dict[str, tuple] = {}
    for i, item in enumerate(lv):
        link = _parse_link(item, lpath + (i,), nodes, declared, seen, names, errs)
        if link is not None:
            links.append(link)
    return Topology(nodes, kinds, links, path)


def _parse_nodes(node_item: tuple, errs: Collector) -> tuple[list[str], dict[str, str]] | None:
    """``nodes:``: the names in order and the kinds given; None when it is no list."""
    nodes: list[str] = []
    kinds: dict[str, str] = {}
    nv, npath = node_item
    if not isinstance(nv, list) or not nv:
        errs.error(npath, f"{show(nv)} is not a list of nodes", "e.g. nodes: [h1, r1, h2]",
                   nv)
        return None
    for i, n in enumerate(nv):
        kind = None
        if isinstance(n, dict):
            d = take(n, npath + (i,), [Key("name", required=True), Key("kind")], errs)
            if d is None or "name" not in d:
                continue
            name = errs.guard(_node_name, *d["name"])
            if "kind" in d:
                kv, kpath = d["kind"]
                if kv not in ("host", "router"):
                    errs.error(kpath, f"{show(kv)} is not a node kind", "host or router", kv)
                kind = kv
        else:
            name = errs.guard(_node_name, n, npath + (i,))
        if name is None:
            continue
        if name in nodes:
            errs.error(npath + (i,), f"node {show(name)} is declared twice",
                       "node names must be unique", n)
            continue
        nodes.append(name)
        if kind:
            kinds[name] = kind
    return nodes, kinds


def _parse_link(item: Any, ipath: tuple, nodes: list[str], declared: bool,
                seen: dict[frozenset, tuple], names: dict[str, tuple],
                errs: Collector) -> TopoLink | None:
    """One entry of ``links:`` (None: reported to ``errs``). Without declared nodes, the
    nodes a link names are added to ``nodes``; ``seen`` and ``names``: the node pairs and
    link names so far."""
    c = take(item, ipath, [Key(k) for k in LINK_KEYS if k != "queues"] , errs,
             what="a link {from, to, rate, delay, queue}")
    if c is None:
        return None
    ends = []
    for k in ("from", "to"):
        if k not in c:
            errs.error(ipath + (k,), f"missing required key {show(k)}",
                       "a link joins two nodes: {from: r1, to: r2, ...}", None)
            continue
        n = errs.guard(_node_name, *c[k])
        if n is None:
            continue
        if n not in nodes:
            if declared:
                errs.error(c[k][1], f"unknown node {show(n)}",
                           f"nodes: {', '.join(nodes)}; add it to topology.nodes", c[k][0])
                continue
            nodes.append(n)
        ends.append(n)
    if len(ends) != 2:
        return None
    a, b = ends
    if a == b:
        errs.error(ipath, f"link from {a} to itself", "a link joins two different nodes",
                   item)
        return None
    pair = frozenset(ends)
    if pair in seen:
        errs.error(ipath, f"a link between {a} and {b} is already declared at "
                   f"{format_path(seen[pair])}",
                   "a link carries both directions (each end has its own queue): declare "
                   "it once", item)
        return None
    seen[pair] = ipath
    name = f"{a}-{b}"
    if "name" in c:
        name = str(c["name"][0])
        if name in names:
            errs.error(c["name"][1], f"link name {show(name)} is already used at "
                       f"{format_path(names[name])}", "link names must be unique",
                       name)
        names[name] = ipath
    qpath = ipath + ("queue",)
    spec = LinkSpec(cond=Conditions(), queue_a_path=qpath, queue_b_path=qpath)
    if "rate" in c:
        spec.rate_bps = errs.guard(parse_rate, *c["rate"])
    if "delay" in c:
        spec.delay_ns = errs.guard(parse_link_delay, *c["delay"], cond=spec.cond, default=0)
    parse_conditions(c, "", spec, errs)
    parse_duplex(c, "duplex", spec, errs)
    if "queue" in c:
        ql, ecn, aqm = parse_queue_spec(*c["queue"], errs)
        spec.queue_a = spec.queue_b = ql
        spec.ecn_a = spec.ecn_b = ecn
        spec.aqm_a = spec.aqm_b = aqm
    return TopoLink(name, a, b, spec, ipath)


def parse_group_endpoints(g: dict, spec: GroupSpec, errs: Collector) -> None:
    e = Endpoints(src=g.get("src"), dst=g.get("dst"), route=g.get("route"))
    e.dumbbell_keys = [(k, g[k][1]) for k in DUMBBELL_GROUP_KEYS if k in g]
    spec.endpoints = e


def check_dumbbell_groups(groups: list[GroupSpec], errs: Collector) -> None:
    """Without a topology, src/dst/route have nothing to name."""
    for g in groups:
        e = g.endpoints
        for key in ("src", "dst", "route"):
            if e is not None and getattr(e, key) is not None:
                errs.error(getattr(e, key)[1], f"{key} names a node of a topology, and this "
                           "experiment has none (it is a dumbbell)",
                           "add topology: {links: [...]}, or remove " + key +
                           " (dumbbell flows use direction: -> or <-)", getattr(e, key)[0])


def _shortest(adj: dict[str, list[tuple[str, int]]], order: dict[str, int], src: str,
              dst: str) -> list[str] | None:
    """Fewest hops; ties: the node sequence first in declaration order (greedy walk down a
    BFS distance field from dst picks the lowest-ranked next node with distance − 1)."""
    dist = {dst: 0}
    q = deque([dst])
    while q:
        u = q.popleft()
        for v, _ in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                q.append(v)
    if src not in dist:
        return None
    route = [src]
    while route[-1] != dst:
        u = route[-1]
        route.append(min((v for v, _ in adj[u] if dist.get(v) == dist[u] - 1), key=order.get))
    return route


def _component(adj, src: str) -> list[str]:
    seen = {src}
    q = deque([src])
    while q:
        for v, _ in adj[q.popleft()]:
            if v not in seen:
                seen.add(v)
                q.append(v)
    return sorted(seen)


def build_graph(run: RunSpec, groups: list[GroupSpec]) -> dict:
    topo: Topology = run.topology
    errors: list[ConfigError] = []
    order = {n: i for i, n in enumerate(topo.nodes)}
    links, adj = _directed_links(run, topo)
    link_id = {(l.src, l.dst): l.id for l in links}

    ordered = sort_groups(groups)
    routes: dict[int, tuple[str, str, list[str]]] = {}
    for gi, g in enumerate(ordered):
        got = _group_route(g, topo, order, adj, link_id, errors)
        if got is not None:
            routes[gi] = got
    if errors:
        raise ConfigErrors(errors)

    hosts = set()
    flows = []
    for i, (gi, g) in enumerate(flow_groups(groups)):
        src, dst, route = routes[gi]
        hosts.update((src, dst))
        path = [link_id[(u, v)] for u, v in zip(route, route[1:])]
        rev = [link_id[(v, u)] for u, v in reversed(list(zip(route, route[1:])))]
        flows.append(flow_entry(i, gi, g, f"{src}->{dst}", "->", src, dst, path, rev, links,
                                route=route))
    bottlenecks: set[int] = set()
    for f in flows:
        rates = [links[j].rate_bps for j in f["path"] if links[j].rate_bps is not None]
        if rates:
            bottlenecks.update(j for j in f["path"] if links[j].rate_bps == min(rates))
    nodes = [{"name": n, "kind": topo.kinds.get(n, "host" if n in hosts else "router")}
             for n in topo.nodes]
    return experiment(run, nodes, links, sorted(bottlenecks), flows)


def _directed_links(run: RunSpec, topo: Topology):
    """Both directions of every topology link, in declaration order (ids = positions), and
    each node's outgoing (neighbour, link id) list."""
    links: list[DirectedLink] = []
    adj: dict[str, list[tuple[str, int]]] = {n: [] for n in topo.nodes}
    for tl in topo.links:
        s = tl.spec
        for src, dst, queue, ecn, aqm, end in ((tl.a, tl.b, s.queue_a, s.ecn_a, s.aqm_a, "left"),
                                               (tl.b, tl.a, s.queue_b, s.ecn_b, s.aqm_b, "right")):
            extra = s.cond.link_keys(end, "-".join(sorted((tl.a, tl.b))), run.seed,
                                     run.duration_ns) if s.cond is not None else {}
            extra = {**extra, **channel_keys(s, tl.a, tl.b)}
            links.append(DirectedLink(len(links), f"{src}->{dst}", src, dst, "link", s.rate_bps,
                                      s.delay_ns, queue, tl.path + ("queue",), ecn, extra,
                                      aqm=aqm))
            adj[src].append((dst, len(links) - 1))
    return links, adj


def _group_route(g: GroupSpec, topo: Topology, order: dict[str, int], adj, link_id: dict,
                 errors: list[ConfigError]) -> tuple[str, str, list[str]] | None:
    """A group's (src, dst, route): its route as given and checked, or the shortest; None
    when it has a problem (appended to ``errors``)."""
    e: Endpoints = g.endpoints or Endpoints()
    for key, kpath in e.dumbbell_keys:
        errors.append(ConfigError(kpath, f"{key} is a dumbbell setting; this experiment "
                                  "has a topology", "set rates, delays and queues on "
                                  "topology.links; a flow goes from src to dst", None))
    route = None
    if e.route is not None:
        rv, rpath = e.route
        if not isinstance(rv, list) or len(rv) < 2:
            errors.append(ConfigError(rpath, f"{show(rv)} is not a route",
                                      "list the nodes from src to dst: [h1, r1, r2, h2]",
                                      rv))
            return None
        route = [str(x) for x in rv]
    src = str(e.src[0]) if e.src is not None else (route[0] if route else None)
    dst = str(e.dst[0]) if e.dst is not None else (route[-1] if route else None)
    bad = False
    for key, name, got in (("src", src, e.src), ("dst", dst, e.dst)):
        kpath = got[1] if got else g.path + (key,)
        if name is None:
            errors.append(ConfigError(kpath, f"missing required key {show(key)}",
                                      f"name a host of the topology: {key}: "
                                      f"{topo.nodes[0]} (nodes: {', '.join(topo.nodes)})",
                                      None))
            bad = True
        elif name not in order:
            errors.append(ConfigError(kpath, f"unknown node {show(name)}",
                                      f"nodes: {', '.join(topo.nodes)}", name))
            bad = True
    if bad:
        return None
    if src == dst:
        errors.append(ConfigError(e.dst[1] if e.dst else g.path, f"src and dst are both "
                                  f"{src}", "a flow goes between two different nodes", dst))
        return None
    if route is not None:
        rpath = e.route[1]
        if route[0] != src or route[-1] != dst:
            errors.append(ConfigError(rpath, f"route {show(e.route[0])} does not go from "
                                      f"{src} to {dst}", f"start it at {src} and end it "
                                      f"at {dst}", e.route[0]))
            return None
        for i, (u, v) in enumerate(zip(route, route[1:])):
            if (u, v) not in link_id:
                near = ", ".join(w for w, _ in adj.get(u, [])) or "none"
                errors.append(ConfigError(rpath + (i + 1,), f"no link between {u} and {v}",
                                          f"{u} links to: {near}", v))
                bad = True
                break
        if bad:
            return None
    else:
        route = _shortest(adj, order, src, dst)
        if route is None:
            errors.append(ConfigError(
                g.path, f"no route from {src} to {dst}",
                f"{src} reaches only {', '.join(_component(adj, src))}: add a link in "
                "topology.links", None))
            return None
    return src, dst, route


__all__ = ["parse_topology", "parse_group_endpoints", "check_dumbbell_groups", "build_graph"]
