"""The endpoint settings (`tcp:`) on the kernel: the `kernel` column of ccbench.config.tcpkeys,
applied per host.

Each flow runs with the settings the simulator gives it (its group's `tcp`, merged over the top
level, else the top level's: tcpkeys.effective). A sysctl is written in the namespace of the
flow's sender, receiver or both (every `net.ipv4` one is per namespace), a route option on the
sender's route to the receiver or the receiver's route back (a `/32` route to that peer when it
differs from the host's route to the whole network), a socket option by the sender's agent.
Settings the kernel cannot switch are recorded ({requested, kernel, applied}). Two flows that
need different values of one setting in the same place (a namespace, a route) cannot both have
them: :func:`plan` reports them as problems, and the experiment is refused (doctor.preflight).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...config.tcpkeys import BOTH, RECEIVER, SENDER, TABLE, Fixed, Route, Socket, Sysctl, \
    TcpKey, effective, value

#: Sysctls of every host that are no tcp key: IPv6 off, no cached metrics between flows.
HOST_SYSCTLS = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1",
                "net.ipv4.tcp_no_metrics_save": "1"}


def applications(kind: type) -> list[tuple[TcpKey, Any]]:
    """(key, application) of every key the kernel applies as ``kind`` (Sysctl, Route, …)."""
    return [(k, a) for k in TABLE for a in k.kernel if isinstance(a, kind)]


def sysctls_of(tcp: dict) -> dict[str, str]:
    """Every host sysctl for endpoint settings ``tcp`` (a resolved ``tcp`` mapping)."""
    out = dict(HOST_SYSCTLS)
    for k, a in applications(Sysctl):
        out[a.name] = a.text(value(tcp, k), tcp)
    return out


def route_options_of(tcp: dict) -> str:
    """The `ip route` options for endpoint settings ``tcp``, both ends' (initial window, initial
    receive window when given, minimum RTO in whole ms, `quickack 1` without delayed ACKs)."""
    opts = [a.text(value(tcp, k), tcp) for k, a in applications(Route)]
    return " ".join(o for o in opts if o)


def switches_of(tcp: dict) -> dict[str, dict]:
    """The settings this kernel cannot switch, each as {requested, kernel, applied}."""
    out = {}
    for k, a in applications(Fixed):
        requested = value(tcp, k)
        kernel = a.value(requested, tcp)
        out[k.field] = {"requested": requested, "kernel": kernel, "applied": requested == kernel}
    return out


def socket_args(tcp: dict) -> list[str]:
    """The sender agent's arguments for the socket options of ``tcp``."""
    return [x for k, a in applications(Socket) for x in a.argv(value(tcp, k))]


def host_sysctls(exp: dict) -> dict[str, str]:
    """The sysctls of the experiment's top-level ``tcp`` (every host's without groups of
    their own)."""
    return sysctls_of(exp.get("tcp") or {})


def route_options(exp: dict) -> str:
    """The route options of the experiment's top-level ``tcp``: the hosts' route to the
    whole emulated network."""
    return route_options_of(exp.get("tcp") or {})


def kernel_switches(exp: dict) -> dict[str, dict]:
    """:func:`switches_of` the experiment's top-level ``tcp`` (the run's `emu` metadata)."""
    return switches_of(exp.get("tcp") or {})


@dataclass
class HostPlan:
    """What each host gets: all its sysctls; extra routes (peer host, options) besides the
    route to the network with :func:`route_options`; the conflicts that forbid the run."""

    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    routes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _tcp_flows(exp: dict) -> list[dict]:
    """The flows whose endpoints are kernel TCP sockets of the agents (agents.kernel_tcp)."""
    from .common import kernel_tcp
    return [f for f in exp.get("flows", []) if kernel_tcp(f)]


def _hosts(exp: dict) -> list[str]:
    if exp.get("nodes"):
        return [n["name"] for n in exp["nodes"] if n.get("kind", "host") == "host"]
    return list(dict.fromkeys(h for f in exp.get("flows", []) for h in (f["src"], f["dst"])))


def _acts(side: str, f: dict, host: str, peer: str | None = None) -> bool:
    """Whether a setting of ``side`` for flow ``f`` lives at ``host`` (on its route to
    ``peer``, when given)."""
    if f["src"] == host and (peer is None or f["dst"] == peer) and side in (SENDER, BOTH):
        return True
    return f["dst"] == host and (peer is None or f["src"] == peer) and side in (RECEIVER, BOTH)


def _choose(exp: dict, k: TcpKey, text, asking: list[dict], where: str, problems: list[str]):
    """The one value the flows ``asking`` need (``text(value, tcp)`` of each one's settings),
    the top level's when none asks; a conflict is added to ``problems``."""
    by_value: dict[Any, list[dict]] = {}
    for f in asking:
        tcp = effective(exp, f)
        by_value.setdefault(text(value(tcp, k), tcp), []).append(f)
    if len(by_value) > 1:
        problems.append(_conflict(exp, k, by_value, where))
    if by_value:
        return next(iter(by_value))
    top = exp.get("tcp") or {}
    return text(value(top, k), top)


def _conflict(exp: dict, k: TcpKey, by_value: dict[Any, list[dict]], where: str) -> str:
    uses = [o.name for o in TABLE for a in k.kernel if isinstance(a, Sysctl) and o.field in a.uses]
    named = f"tcp.{k.name}" + "".join(f" (with tcp.{u})" for u in uses)
    asks = "; ".join(f"flow {fs[0]['id'] + 1} ({fs[0].get('label', '')}) needs {v if v is not None else 'none'}"
                     for v, fs in by_value.items())
    return (f"{named}: the flow groups' own tcp settings disagree on {where}, which the kernel "
            f"holds once for all their connections ({asks}). Fix: give these groups hosts of "
            f"their own (src/dst), or the same tcp.{k.name}")


def plan(exp: dict) -> HostPlan:
    """Each host's sysctls and extra routes for the flows it sends and receives."""
    out = HostPlan()
    flows = _tcp_flows(exp)
    base = route_options(exp)
    for h in _hosts(exp):
        out.sysctls[h] = dict(HOST_SYSCTLS)
        for k, a in applications(Sysctl):
            asking = [f for f in flows if _acts(a.side, f, h)]
            out.sysctls[h][a.name] = _choose(exp, k, a.text, asking,
                                             f"{a.name} in host {h}'s namespace", out.problems)
        peers = dict.fromkeys(f["dst"] if f["src"] == h else f["src"] for f in flows
                              if h in (f["src"], f["dst"]))
        for p in peers:
            opts = []
            for k, a in applications(Route):
                asking = [f for f in flows if _acts(a.side, f, h, p)]
                opts.append(_choose(exp, k, a.text, asking,
                                    f"the route option {a.option} of host {h}'s route to {p}",
                                    out.problems))
            text = " ".join(o for o in opts if o)
            if text != base:
                out.routes.setdefault(h, []).append((p, text))
    out.problems = list(dict.fromkeys(out.problems))
    return out


def group_switches(exp: dict) -> dict[str, dict]:
    """Per flow group with its own ``tcp``: the unswitchable settings whose request differs
    from the top level's (those are recorded in :func:`kernel_switches`)."""
    top = kernel_switches(exp)
    out: dict[str, dict] = {}
    for f in exp.get("flows", []):
        if f.get("tcp") and str(f["group"]) not in out:
            sw = switches_of(f["tcp"])
            out[str(f["group"])] = {n: s for n, s in sw.items() if s != top[n]}
    return {g: sw for g, sw in out.items() if sw}


def metadata(exp: dict, hp: HostPlan) -> dict:
    """The run's `emu` record of the endpoint settings: the top level's sysctls, route options
    and switches as before, and what differs per host and per group."""
    top = host_sysctls(exp)
    by_host = {h: {n: v for n, v in s.items() if top.get(n) != v} for h, s in hp.sysctls.items()}
    by_host = {h: s for h, s in by_host.items() if s}
    gs = group_switches(exp)
    return {"sysctls": top, "route_options": route_options(exp), **kernel_switches(exp),
            **({"sysctls_by_host": by_host} if by_host else {}),
            **({"routes_by_host": {h: [f"to {p}: {o}" for p, o in r] for h, r in hp.routes.items()}}
               if hp.routes else {}),
            **({"group_switches": gs} if gs else {})}


__all__ = ["HOST_SYSCTLS", "HostPlan", "applications", "group_switches", "host_sysctls",
           "kernel_switches", "metadata", "plan", "route_options", "route_options_of",
           "socket_args", "switches_of", "sysctls_of"]
