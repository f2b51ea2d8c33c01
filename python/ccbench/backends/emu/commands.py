"""Command schemes (config/commands.py) on the emulation backend: real programs, or Pantheon
wrappers, started in the host namespaces as the flow's two ends, with a TCP_INFO monitor
(agent `monitor`, netlink sock_diag) beside the sender. `run.Emulation` holds one
:class:`CommandFlows` and hands it what it uses."""
from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .collect import flow_dir
from .common import AGENT_NICE, PORT_BASE, EmuError


@dataclass
class CommandFlows:
    """The command-scheme flows of one emulation: their processes in the hosts' namespaces,
    started, launched at their times and stopped. Given exactly what it uses of the emulation:
    the experiment, the hosts' addresses and namespaces, the agent binary, the run's id and work
    directory, the process list the emulation tears down, and ``preexec(ns)`` (enter a
    namespace, pin to the application CPUs)."""

    exp: dict
    addr: dict[str, str]
    ns: dict[str, str]
    agent_bin: Path
    run_id: str
    work: Path
    procs: list
    preexec: Callable[[str], Callable[[], None]]
    flows: list[dict] = field(default_factory=list)
    cmd_procs: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.flows = [dict(f) for f in self.exp["flows"] if f.get("command")]

    def _placeholders(self, f: dict, t0: int | None) -> dict:
        dur = self.exp["duration_ns"]
        start = int(f.get("start_ns") or 0)
        stop = f.get("stop_ns")
        until = stop if stop is not None else dur
        v = {"dst": self.addr[f["dst"]], "src": self.addr[f["src"]], "port": PORT_BASE + f["id"],
             "duration": -(-(until - start) // 1_000_000_000), "duration_ms": -(-(until - start) // 1_000_000),
             "start": f"{start / 1e9:g}", "stop": f"{until / 1e9:g}", "flow": f["id"],
             "cc": f["scheme"], "agent": str(self.agent_bin)}
        if t0 is not None:
            v.update({"t0_ns": t0, "start_ns": start, "end_ns": dur, "stop_ns": until})
        return {k: shlex.quote(str(x)) for k, x in v.items()}

    def _expand(self, f: dict, template: str, role: str, t0: int | None) -> str:
        ph = self._placeholders(f, t0)
        try:
            return template.format(**ph)
        except KeyError as e:
            raise EmuError(f"flow {f['id'] + 1}: the {role} command uses {{{e.args[0]}}}, which is not "
                           f"known before time 0 is fixed (receivers start first): "
                           f"use {{duration}}, {{port}}, {{dst}}, {{src}}") from None

    def _cmd_env(self) -> dict:
        env = dict(os.environ)
        env["PATH"] = f"{self.agent_bin.parent}{os.pathsep}{env.get('PATH', '')}"
        env["CCBENCH_RUN"] = self.run_id
        env["CCBENCH_AGENT"] = str(self.agent_bin)
        return env

    def _spawn(self, f: dict, role: str, host: str, argv: list[str], at: int | None = None):
        """Start one process of a command scheme in `host`'s namespace, in its own session and
        process group (killed as a whole), output to a log in the work directory. The agent's
        `launch` gives it the agents' priority (its session's autogroup at AGENT_NICE, as
        ccbench's own ends of a flow have) and, with `at`, sleeps until that CLOCK_MONOTONIC
        time before it execs the program."""
        argv = [str(self.agent_bin), "launch", "--at", str(at or 0), "--nice", str(AGENT_NICE),
                "--run", self.run_id, "--", *argv]
        log = self.work / f"flow{f['id']}-{role}.log"
        env = self._cmd_env()
        env["CCBENCH_SCHEME"] = f["command"].get("name") or f["scheme"]
        with open(log, "wb") as out:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 env=env, start_new_session=True, cwd=self.work,
                                 preexec_fn=self.preexec(self.ns[host]))
        self.procs.append(p)
        self.cmd_procs.append({"flow": f["id"], "role": role, "host": host, "proc": p, "log": log,
                               "argv": argv})
        return p

    def _listening(self, pid: int, port: int) -> bool:
        """Does the namespace of `pid` have a TCP listener or a UDP socket on `port`?"""
        for proto, state in (("tcp", "0A"), ("udp", None)):
            try:
                lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
            except OSError:
                return False
            for line in lines:
                w = line.split()
                if len(w) > 3 and int(w[1].rsplit(":", 1)[1], 16) == port and (state is None or w[3] == state):
                    return True
        return False

    def _run_first(self, f: dict) -> str:
        c = f["command"]
        try:
            p = subprocess.run([c["wrapper"], "run_first"], capture_output=True, text=True, timeout=20,
                               env=self._cmd_env(), cwd=self.work)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise EmuError(f"flow {f['id'] + 1}: `{c['wrapper']} run_first` failed: {e}") from None
        ans = p.stdout.strip().splitlines()[-1].strip() if p.stdout.strip() else ""
        if p.returncode != 0 or ans not in ("sender", "receiver"):
            raise EmuError(f"flow {f['id'] + 1}: `{c['wrapper']} run_first` must print sender or "
                           f"receiver, got {ans!r} (exit {p.returncode}) {p.stderr.strip()[-300:]}")
        return ans

    def start_servers(self) -> None:
        """Start the first side of every command-scheme flow (the receiver; for a Pantheon
        wrapper the side its `run_first` names, given the port) and wait until it listens."""
        for f in self.flows:
            c = f["command"]
            port = PORT_BASE + f["id"]
            if c["kind"] == "pantheon":
                first = self._run_first(f)
                f["_run_first"] = first
                host = f["dst"] if first == "receiver" else f["src"]
                p = self._spawn(f, first, host, [c["wrapper"], first, str(port)])
            elif c.get("receiver"):
                p = self._spawn(f, "receiver", f["dst"], ["/bin/sh", "-c", self._expand(f, c["receiver"], "receiver", None)])
            else:
                continue
            deadline = time.monotonic() + 5.0
            while not self._listening(p.pid, port):
                if p.poll() is not None:
                    raise EmuError(f"flow {f['id'] + 1}: the {c['kind']} receiver exited ({p.returncode}) "
                                   f"before listening on port {port}: {self._log_tail(self.cmd_procs[-1])}")
                if time.monotonic() > deadline:
                    self.notes.append(f"flow {f['id'] + 1}: nothing listened on port {port} within 5 s "
                                          f"of starting the receiver; started the sender anyway")
                    break
                time.sleep(0.01)

    def start_clients(self, t0: int) -> list:
        """Launch the second side of every command flow at t0 + start (agent `launch`), and a
        TCP_INFO monitor (agent `monitor`, netlink sock_diag) in the sender's namespace."""
        out = []
        dur = self.exp["duration_ns"]
        for f in self.flows:
            c = f["command"]
            port = PORT_BASE + f["id"]
            at = t0 + int(f.get("start_ns") or 0)
            if c["kind"] == "pantheon":
                if f["_run_first"] == "receiver":
                    self._spawn(f, "sender", f["src"], [c["wrapper"], "sender", self.addr[f["dst"]], str(port)], at)
                else:
                    self._spawn(f, "receiver", f["dst"], [c["wrapper"], "receiver", self.addr[f["src"]], str(port)], at)
            else:
                self._spawn(f, "sender", f["src"], ["/bin/sh", "-c", self._expand(f, c["sender"], "sender", t0)], at)
            mon = [str(self.agent_bin), "monitor", "--peer", self.addr[f["dst"]], "--port", str(port),
                   "--t0", str(t0), "--start", str(f.get("start_ns") or 0), "--end", str(dur),
                   "--interval", str(self.exp["sample_interval_ns"]),
                   "--flow", str(f["id"]), "--out", str(flow_dir(self.work, f["id"])), "--run", self.run_id,
                   "--nice", str(AGENT_NICE)]
            p = subprocess.Popen(mon, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=self.preexec(self.ns[f["src"]]))
            self.procs.append(p)
            if p.stdout.readline().strip() != "monitoring":
                raise EmuError(f"flow {f['id'] + 1}: the TCP_INFO monitor did not start: "
                               f"{p.stderr.read().strip() if p.poll() is not None else ''}")
            out.append((f, p))
        return out

    def stop(self, flow: int | None = None, grace: float = 1.0) -> None:
        """SIGTERM the process groups of the command flows (one flow, or all), SIGKILL after
        `grace` seconds."""
        mine = [c for c in self.cmd_procs if flow is None or c["flow"] == flow]
        for c in mine:
            if c["proc"].poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(c["proc"].pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for c in mine:
            with contextlib.suppress(subprocess.TimeoutExpired):
                c["proc"].wait(timeout=max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(c["proc"].pid, signal.SIGKILL)  # stragglers of the group too
            with contextlib.suppress(subprocess.TimeoutExpired):
                c["proc"].wait(timeout=2)

    @staticmethod
    def _log_tail(c: dict, n: int = 400) -> str:
        try:
            return c["log"].read_text(errors="replace")[-n:].strip()
        except OSError:
            return ""

    def summary(self) -> list[dict]:
        return [{"flow": c["flow"], "role": c["role"], "host": c["host"],
                 "argv": c["argv"][c["argv"].index("--") + 1:] if "--" in c["argv"] else c["argv"],
                 "exit": c["proc"].returncode, "output_tail": self._log_tail(c)}
                for c in self.cmd_procs]
