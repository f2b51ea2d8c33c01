"""Periodic controllers (``ccbench.cc.Controller``) driving kernel TCP flows on the emulation
backend (docs/python-schemes.md, "On the kernel").

The sender agent reports each interval's ``TCP_INFO`` counters on its stdout and applies the
commands it reads on stdin (crates/emu/src/agent/control.rs). This module turns a report
into the ``(sk, st)`` a controller's ``on_interval`` takes — the same field names as in the
simulator; fields the kernel does not expose are NaN — and the returned command into socket
options: ``pacing_rate`` → the sender's ``SO_MAX_PACING_RATE``; ``cwnd`` → the receiver's
``TCP_WINDOW_CLAMP`` (cwnd × MSS bytes), which bounds the window it advertises and so the
sender's data in flight (Linux has no socket option for the sender's own cwnd).
"""
from __future__ import annotations

import json
import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ...cc import runtime
from .common import EmuError

NAN = float("nan")


class ControllerError(EmuError):
    """An exception raised in a controller's hook (message: flow, time, hook, traceback)."""


class KernelSock:
    """Read-only view of the kernel socket at the end of an interval (``sk`` on the kernel).

    Fields (the simulator's names, from ``TCP_INFO``): ``now_ns mss cwnd ssthresh srtt_us
    min_rtt_us delivered delivered_ce packets_out sacked_out lost_out retrans_out
    total_retrans pacing_rate`` (bit/s, NaN: not paced) ``ca_state snd_wnd app_limited`` and
    ``packets_in_flight``, ``in_slow_start``."""

    __slots__ = ("_d",)

    def __init__(self, report: dict) -> None:
        object.__setattr__(self, "_d", report)

    def __getattr__(self, name: str) -> Any:
        d = object.__getattribute__(self, "_d")
        if name == "now_ns":
            return d["t_ns"]
        if name == "ssthresh":
            return 0x7FFFFFFF if d.get("ssthresh") is None else d["ssthresh"]
        if name == "pacing_rate":
            return NAN if d.get("pacing_rate_Bps") is None else d["pacing_rate_Bps"] * 8
        if name == "min_rtt_us":
            return NAN if d.get("min_rtt_us") is None else d["min_rtt_us"]
        if name == "packets_out":
            return d["unacked"]
        if name == "sacked_out":
            return d["sacked"]
        if name == "packets_in_flight":
            return max(0, d["unacked"] + d["retrans_out"] - d["sacked"] - d["lost_out"])
        if name == "in_slow_start":
            return d["cwnd"] < (0x7FFFFFFF if d.get("ssthresh") is None else d["ssthresh"])
        if name == "ca_state":
            from ...cc import CA_STATES
            s = d["ca_state"]
            return CA_STATES[s] if s < len(CA_STATES) else str(s)
        if name in ("mss", "cwnd", "srtt_us", "delivered", "delivered_ce", "lost_out",
                    "retrans_out", "total_retrans", "snd_wnd", "app_limited"):
            return d[name]
        raise AttributeError(f"{name!r} is not available on the kernel (docs/python-schemes.md, "
                             "\"On the kernel\")")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("sk is read-only in on_interval: return a command instead")


@dataclass
class KernelIntervalStats:
    """``st`` on the kernel: the simulator's ``IntervalStats`` fields from two ``TCP_INFO``
    reports. ``lost`` is the retransmissions sent in the interval (``tcpi_total_retrans``:
    the kernel counts no cumulative losses); the RTT fields come from the smoothed RTT polled
    every millisecond (``rtt_samples`` = polls), not from per-ACK samples."""

    start_ns: int
    end_ns: int
    duration_s: float
    acks: int
    delivered: int
    delivered_bytes: int
    lost: int
    sent_bytes: int
    retrans: int
    delivered_ce: int
    rtt_samples: int
    rtt_min_us: float
    rtt_max_us: float
    rtt_mean_us: float
    rtt_first_us: float
    rtt_last_us: float
    rtt_gradient: float
    throughput_bps: float
    send_rate_bps: float
    delivery_rate_bps: float
    app_limited: bool
    cwnd: int
    inflight: int
    srtt_us: float
    min_rtt_us: float
    pacing_rate_bps: float

    @classmethod
    def between(cls, a: dict, b: dict) -> "KernelIntervalStats":
        def f(k: str) -> float:
            v = b.get(k)
            return NAN if v is None else float(v)
        dur = max(1e-9, (b["t_ns"] - a["t_ns"]) / 1e9)
        d_bytes = b["bytes_acked"] - a["bytes_acked"]
        retrans_bytes = b["bytes_retrans"] - a["bytes_retrans"]
        sent = b["bytes_sent"] - a["bytes_sent"]
        retrans = b["total_retrans"] - a["total_retrans"]
        sk = KernelSock(b)
        return cls(
            start_ns=a["t_ns"], end_ns=b["t_ns"], duration_s=dur,
            acks=b["segs_in"] - a["segs_in"], delivered=b["delivered"] - a["delivered"],
            delivered_bytes=d_bytes, lost=retrans, sent_bytes=sent - retrans_bytes,
            retrans=retrans, delivered_ce=b["delivered_ce"] - a["delivered_ce"],
            rtt_samples=int(b.get("rtt_polls") or 0), rtt_min_us=f("rtt_min_us"),
            rtt_max_us=f("rtt_max_us"), rtt_mean_us=f("rtt_mean_us"),
            rtt_first_us=f("rtt_first_us"), rtt_last_us=f("rtt_last_us"),
            rtt_gradient=f("rtt_gradient"), throughput_bps=d_bytes * 8 / dur,
            send_rate_bps=sent * 8 / dur, delivery_rate_bps=b["delivery_rate_Bps"] * 8,
            app_limited=bool(b["app_limited"]), cwnd=b["cwnd"], inflight=sk.packets_in_flight,
            srtt_us=float(b["srtt_us"]), min_rtt_us=sk.min_rtt_us, pacing_rate_bps=sk.pacing_rate)


def agent_interval_args(target: str, params: dict) -> list[str]:
    """The sender agent's ``--control-interval NS`` / ``--control-rtt K×1000`` for a
    controller target (its ``interval`` attribute; an instance is made to read it)."""
    obj = runtime.load(target)(**params)
    kind, value = runtime.kind_of(obj)
    if kind == "rtt":
        return ["--control-rtt", str(max(1, round(value * 1000)))]
    return ["--control-interval", str(int(value))]


def is_controller(target: str, params: dict) -> bool:
    obj = runtime.load(target)
    if isinstance(obj, type):
        return callable(getattr(obj, "on_interval", None))
    return callable(getattr(obj(**params), "on_interval", None))


@dataclass
class _Flow:
    flow: dict
    obj: Any
    sender: Any            # Popen of the sender agent (stdin: commands)
    receiver: Any          # Popen of the receiver agent (stdin: window clamps)
    prev: dict | None = None
    pending: bytes = b""
    tail: list[str] = field(default_factory=list)   # lines that are not reports (summary)
    intervals: int = 0
    commands: int = 0
    errors: list[str] = field(default_factory=list)
    latency_us: list[float] = field(default_factory=list)
    last: dict = field(default_factory=dict)


class Controllers:
    """The controller flows of one emulation run: objects, agent pipes, the command loop."""

    def __init__(self, exp: dict) -> None:
        self.exp = exp
        self.seed = int(exp.get("seed", 0))
        self.flows: dict[int, _Flow] = {}
        self.by_fd: dict[int, _Flow] = {}

    def add(self, f: dict, sender, receiver) -> None:
        obj = runtime.instance(f["python"], dict(f.get("params") or {}), seed=self.seed,
                               flow=int(f["id"]), conn=0)
        st = _Flow(f, obj, sender, receiver)
        self.flows[int(f["id"])] = st
        self.by_fd[sender.stdout.fileno()] = st

    def fds(self) -> list[int]:
        return list(self.by_fd)

    def feed(self, fd: int, chunk: bytes) -> None:
        """Bytes read from a sender's stdout during the run."""
        self.feed_flow(self.by_fd[fd], chunk)

    def finish(self, fid: int, rest: str) -> str:
        """The rest of a sender's stdout after the run; returns the lines that are not
        reports (the agent's summary)."""
        st = self.flows[fid]
        self.feed_flow(st, rest.encode() + b"\n")
        return "\n".join(st.tail)

    def feed_flow(self, st: "_Flow", chunk: bytes) -> None:
        """Run the hooks for each complete report in the bytes a sender wrote."""
        *lines, st.pending = (st.pending + chunk).split(b"\n")
        for raw in lines:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                rep = json.loads(line)
            except ValueError:
                st.tail.append(line)
                continue
            ev = rep.get("ev") if isinstance(rep, dict) else None
            if ev == "connected":
                st.prev = rep
                self._call(st, "init", rep, lambda: st.obj.init(KernelSock(rep))
                           if callable(getattr(st.obj, "init", None)) else None)
            elif ev == "interval" and st.prev is not None:
                stats = KernelIntervalStats.between(st.prev, rep)
                st.prev = rep
                st.intervals += 1
                self._call(st, "on_interval", rep,
                           lambda: st.obj.on_interval(KernelSock(rep), stats))
            elif ev == "control_error":
                st.errors.append(str(rep.get("error")))
            else:
                st.tail.append(line)

    def _call(self, st: _Flow, hook: str, rep: dict, fn) -> None:
        t0 = time.perf_counter()
        try:
            cmd = fn()
        except Exception as e:  # user code: stop the run with its traceback
            tb = traceback.format_exc()
            raise ControllerError(
                f"flow {st.flow['id'] + 1} ({st.flow.get('label', '')}) at t={rep['t_ns'] / 1e9:.6f} s, "
                f"in {type(st.obj).__name__}.{hook}:\n{tb.rstrip()}") from e
        if cmd is None:
            return
        if not isinstance(cmd, dict) or set(cmd) - {"cwnd", "pacing_rate"}:
            raise ControllerError(
                f"flow {st.flow['id'] + 1}: {type(st.obj).__name__}.{hook} returned {cmd!r}; return "
                "None or a dict with \"cwnd\" (packets) and/or \"pacing_rate\" (bit/s)")
        self._send(st, cmd, rep)
        st.latency_us.append((time.perf_counter() - t0) * 1e6)

    def _send(self, st: _Flow, cmd: dict, rep: dict) -> None:
        rate = cmd.get("pacing_rate")
        if "pacing_rate" in cmd and rate != st.last.get("pacing_rate"):
            if rate is not None and not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
                raise ControllerError(f"flow {st.flow['id'] + 1}: pacing_rate {rate!r} is not a "
                                      "positive number of bit/s (or None)")
            _write(st.sender, {"pacing_rate": rate})
            st.last["pacing_rate"] = rate
        cwnd = cmd.get("cwnd")
        if "cwnd" in cmd and cwnd != st.last.get("cwnd"):
            if cwnd is not None and not (isinstance(cwnd, (int, float)) and cwnd >= 1):
                raise ControllerError(f"flow {st.flow['id'] + 1}: cwnd {cwnd!r} is not a number of "
                                      "packets ≥ 1 (or None)")
            clamp = 0 if cwnd is None else int(cwnd * int(rep.get("mss") or 1448))
            _write(st.receiver, {"window_clamp": clamp})
            st.last["cwnd"] = cwnd
        st.commands += 1

    def summary(self) -> dict:
        """Per flow: intervals reported, commands sent, the hook + pipe latency (µs, median
        and max) and any socket-option errors the agents reported."""
        out = {}
        for fid, st in self.flows.items():
            lat = sorted(st.latency_us)
            out[str(fid)] = {
                "controller": type(st.obj).__name__, "intervals": st.intervals,
                "commands": st.commands,
                "latency_us_median": round(lat[len(lat) // 2], 1) if lat else None,
                "latency_us_max": round(lat[-1], 1) if lat else None,
                **({"errors": st.errors[:10]} if st.errors else {}),
            }
        return out


def _write(proc, cmd: dict) -> None:
    if proc is None or proc.stdin is None:
        return
    try:
        proc.stdin.write(json.dumps(cmd) + "\n")
        proc.stdin.flush()
    except (OSError, ValueError):
        pass  # the agent has ended or its stdin is closed (end of the run)


__all__ = ["Controllers", "ControllerError", "KernelSock", "KernelIntervalStats",
           "agent_interval_args", "is_controller"]
