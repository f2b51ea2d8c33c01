"""A flow group's own `tcp:` on the kernel backend (docs/emulation.md, "Flow groups with their
own tcp"): its settings reach the namespaces, routes and sockets of its own hosts, as the
simulator applies them to its flows. Before, the kernel ran every group with the top-level
settings (a group with init-cwnd: 3 sent a first flight of 10). Needs root, /dev/net/tun and
`make build`, like tests/test_emu.py."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ccbench
from test_emu import pytestmark  # noqa: F401  (the same skip: root, /dev/net/tun, the binaries)
from test_emu_bpf import rerun_when_flagged


# two CUBIC groups on a 100 Mbit/s dumbbell with a 50 ms RTT; the second with its own tcp
BODY = """duration: {duration}
seed: 1
central: {{rate: 100Mbit, delay: 25ms, queue: 1bdp}}
flows:
  - {{scheme: cubic}}
  - {{scheme: cubic, tcp: {tcp}}}
"""


def _run(d: Path, backend: str, tcp: str, duration: float = 2):
    p = d / f"{backend}.yaml"
    p.write_text(BODY.format(tcp=tcp, duration=duration))
    return ccbench.run(p, d / backend, backend=backend)


def _first_flights(res) -> list[int]:
    """Data packets each flow sent within 20 ms of its first (less than half the RTT)."""
    out = []
    for fid in (0, 1):
        p = res.packets.filter(pl.col("flow") == fid).sort("sent_ns")
        out.append(p.filter(pl.col("sent_ns") < p["sent_ns"][0] + 20_000_000).height)
    return out


@rerun_when_flagged
def test_a_groups_initial_window_is_its_first_flight_on_both_backends(tmp_path):
    for backend in ("sim", "emu"):
        res = _run(tmp_path, backend, "{init-cwnd: 3}")
        assert _first_flights(res) == [10, 3], backend
    emu = res.meta["emu"]
    assert emu["route_options"] == "initcwnd 10 rto_min 200ms"
    assert emu["routes_by_host"] == {"a2": ["to b2: initcwnd 3 rto_min 200ms"]}


@rerun_when_flagged
def test_a_groups_receive_buffer_sysctl_limits_only_its_flow_on_the_kernel(tmp_path):
    """tcp_rmem is a sysctl of the receiver's namespace: a 256 KiB max holds the second
    group's window to at most 256 KiB (181 segments) on a path whose BDP is 432 segments,
    while the first group's flow, with the top level's 64 MiB, grows past it."""
    res = _run(tmp_path, "emu", "{rmem: [4096, 131072, 256KiB]}", duration=3)
    assert res.meta["emu"]["sysctls_by_host"] == {"b2": {"net.ipv4.tcp_rmem": "4096 131072 262144"}}
    top = res.flows.group_by("flow").agg(pl.col("inflight").max()).sort("flow")["inflight"].to_list()
    assert top[1] <= 256 * 1024 // 1448 < 2 * 256 * 1024 // 1448 < top[0], top
