"""Command lines of the flow agents (`ccbench-agent`, crates/emu/src/agent): one receiver per
flow in the destination's namespace, and one sender — bulk/finite TCP, app-rate and on/off
TCP, UDP CBR, Poisson short-flow arrivals, or latency probes (a UDP echo pair) — in the
source's (docs/emulation.md, "Workloads"); for a datagram scheme both ends are `ccbench-dgram`
(crates/emu/src/dgram_io.rs, docs/datagram.md)."""
from __future__ import annotations

import json
from pathlib import Path

from ...config.tcpkeys import effective
from .collect import conns_dir, flow_dir, probe_dir
from .tcpset import socket_args
from .common import AGENT_NICE, PORT_BASE, EmuError, binary


def dgram_binary() -> Path:
    """The ccbench-dgram binary (preflight checked it exists)."""
    p = binary("dgram")
    if p is None:
        raise EmuError("ccbench-dgram not found: run `make build`")
    return p


def _dgram_scheme_args(exp: dict, f: dict) -> list[str]:
    return ["--scheme", f["scheme"], "--params", json.dumps(f.get("params") or {}),
            "--seed", str(int(exp.get("seed", 0))), "--flow", str(f["id"])]


def receiver_argv(agent: Path, exp: dict, f: dict, t0: int, run_id: str) -> list[str]:
    if f.get("transport") == "dgram":
        return [str(dgram_binary()), "receiver", "--port", str(PORT_BASE + f["id"]),
                *_dgram_scheme_args(exp, f), "--t0", str(t0), "--end", str(exp["duration_ns"]),
                "--run", run_id, "--nice", str(AGENT_NICE)]
    role = {"udp": "udp-server", "probe": "probe-server"}.get(f["scheme"], "server")
    return ([str(agent), role,
             "--port", str(PORT_BASE + f["id"]), "--t0", str(t0),
             "--end", str(exp["duration_ns"]), "--run", run_id, "--nice", str(AGENT_NICE)]
            + (["--multi", "1"] if f.get("arrivals") else [])
            + (["--control", "1"] if f.get("python") else [])  # a controller's window clamps
            # a BPF scheme is the receiving socket's CC too (DCTCP's ECE rules run there)
            + (["--cc", f["bpf"]["cc"]] if f.get("bpf") else []))


def kernel_cc(f: dict) -> str:
    """The kernel congestion control of a flow: its scheme; under a Python controller the
    scheme's ``kernel:`` (default cubic); a BPF scheme's registered name."""
    if f.get("bpf"):
        return f["bpf"]["cc"]
    return (f.get("kernel_cc") or "cubic") if f.get("python") else f["scheme"]


def notsent_lowat(exp: dict, f: dict) -> int:
    """Unsent bytes a backlogged on/off sender may keep in its socket: ~1 ms of the path's
    slowest rate, at least 16 KB, at most 4 MB (the kernel cannot withdraw what it holds at
    the end of an on period)."""
    rates = [exp["links"][j]["rate_bps"] for j in f["path"] if exp["links"][j].get("rate_bps")]
    return min(4 << 20, max(16 << 10, (min(rates) // 8000) if rates else 0))


def sender_argv(agent: Path, exp: dict, f: dict, dst_addr: str, t0: int, run_id: str,
                work: Path) -> list[str]:
    dur = exp["duration_ns"]
    common = ["--dst", dst_addr, "--port", str(PORT_BASE + f["id"]), "--t0", str(t0),
              "--start", str(f.get("start_ns") or 0), "--end", str(dur)]
    tail = ["--run", run_id, "--nice", str(AGENT_NICE)]
    if f.get("stop_ns") is not None:
        tail += ["--stop", str(f["stop_ns"])]
    if f.get("transport") == "dgram":
        # the datagram transport: the scheme's flows rows (cc_* columns) like a TCP agent's
        return [str(dgram_binary()), "sender", *common, *_dgram_scheme_args(exp, f),
                "--size", str(min(1500, int(exp.get("mss", 1448)) + 52)),
                "--interval", str(exp["sample_interval_ns"]),
                "--out", str(flow_dir(work, f["id"])), *tail]
    if f["scheme"] == "udp":
        # constant bit rate of IP bytes, datagrams of mss + 52 IP bytes (1500), as the
        # simulator's UDP sources; no TCP_INFO samples (no flows rows, as in the simulator)
        return [str(agent), "udp-client", *common, "--rate", str(int(f["app_rate_bps"])),
                "--size", str(min(1500, int(exp.get("mss", 1448)) + 52)), *tail]
    if f.get("probe"):
        # latency probes: a UDP echo pair; the client writes the probes table (probe.rs)
        return [str(agent), "probe-client", *common,
                "--interval", str(int(f["probe"]["interval_ns"])),
                "--size", str(int(f["probe"]["size"])), "--flow", str(f["id"]),
                "--out", str(probe_dir(work, f["id"])), *tail]
    if f.get("arrivals"):
        # Poisson short flows: one connection per arrival, the simulator's generator
        # (same seed stream, so the same arrival times and sizes); conns CSV per group
        return [str(agent), "arrivals-client", *common, "--cc", kernel_cc(f),
                "--arrivals", json.dumps(f["arrivals"]), "--seed", str(int(exp.get("seed", 0))),
                "--flow", str(f["id"]), "--out", str(conns_dir(work, f["id"])), *tail]
    args = [str(agent), "client", *common, "--cc", kernel_cc(f),
            "--interval", str(exp["sample_interval_ns"]),
            "--flow", str(f["id"]), "--out", str(flow_dir(work, f["id"])), *tail]
    if f.get("bytes"):
        args += ["--bytes", str(f["bytes"])]
    if f.get("python"):  # a periodic controller (control.py): reports out, commands in
        from .control import agent_interval_args
        args += agent_interval_args(f["python"], dict(f.get("params") or {}))
    args += socket_args(effective(exp, f))  # e.g. tcp: {pacing: fq}: TCP's internal pacing
    if f.get("app_rate_bps"):
        args += ["--app-rate", str(int(f["app_rate_bps"])), "--mss", str(int(exp.get("mss", 1448)))]
    if f.get("onoff"):
        args += ["--on", str(int(f["onoff"]["on_ns"])), "--off", str(int(f["onoff"]["off_ns"]))]
        if not f.get("app_rate_bps"):
            args += ["--notsent-lowat", str(notsent_lowat(exp, f))]
    return args
