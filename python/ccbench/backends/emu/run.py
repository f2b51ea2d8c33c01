"""One emulation run: host namespaces and their TUNs, the engine, the agents, the clock of
the run, collection and teardown (docs/emulation.md)."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from . import agents as _agents
from .accuracy import accuracy
from .cleanup import delete_namespace, kill_pids, ns_pids, our_processes
from .collect import collect
from .commands import CommandFlows
from .control import Controllers
from .doctor import preflight
from .live import PROGRESS_NS, FlowRates, parse_progress
from .common import ENGINE_NICE, NET, PORT_BASE, PREFIX, TUN_NAME, WORK_ROOT, EmuError, \
    binary, cpu_times, cpu_usage, host_addr, run_cmd
from .netns import add_namespaces, in_netns, open_tun, set_offloads, setns, write_sysctl
from . import hostsys, tcpset


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so the same teardown runs as for Ctrl-C."""


def _progress_cb(progress):
    """True: the live display of ccbench.progress (a redrawn line on a terminal, a line every
    10 s otherwise) with the per-flow rates; a callable ``cb(now_ns, end_ns)``: called as is;
    anything else: no progress."""
    if progress is True:
        from ...progress import printer
        return printer("emulating", unit="emulated")
    if callable(progress):
        return lambda now, end, detail="": progress(now, end)
    return None


OFFLOADS_ENV = "CCBENCH_EMU_OFFLOADS"
OFFLOADS_MODES = ("on", "no-join", "off")


def tun_offloads_wanted() -> str:
    """The TUNs' packet path (docs/emulation.md, "Offloads"): ``on`` (checksum and segmentation
    offloads, late runs of segments joined), ``no-join`` (offloads, every segment written
    alone) or ``off``; ``CCBENCH_EMU_OFFLOADS`` chooses, a diagnostic switch for comparing them."""
    v = os.environ.get(OFFLOADS_ENV, "on")
    if v not in OFFLOADS_MODES:
        raise EmuError(f"{OFFLOADS_ENV}={v!r}: use one of {', '.join(OFFLOADS_MODES)}")
    return v


class Emulation:
    """Set-up, run and teardown of one experiment on the emulation backend."""

    def __init__(self, experiment: dict, *, engine_bin: Path, agent_bin: Path,
                 spin_ns: int = 50_000, progress=False, capture: dict | None = None,
                 join_late_ns: int | None = None):
        self.exp = experiment
        self.capture = capture  # {dir, snaplen}: the engine writes pcapng (docs/captures.md)
        self.engine_bin = engine_bin
        self.agent_bin = agent_bin
        self.spin_ns = spin_ns
        self.join_late_ns = join_late_ns  # None: the engine's default (5 µs)
        self.progress = _progress_cb(progress)
        self.rates = FlowRates()
        self.run_id = PREFIX + secrets.token_hex(3)
        self.work = WORK_ROOT / self.run_id
        self.hosts = [n["name"] for n in experiment["nodes"] if n.get("kind", "host") == "host"]
        self.addr = {h: host_addr(i) for i, h in enumerate(self.hosts)}
        self.ns = {h: f"{self.run_id}-{h}" for h in self.hosts}
        self.created_ns: list[str] = []
        self.tun_fds: dict[str, int] = {}
        self.procs: list[subprocess.Popen] = []
        self.engine: subprocess.Popen | None = None
        cpus = sorted(os.sched_getaffinity(0))
        self.engine_cpu = cpus[-1] if len(cpus) >= 2 else None
        self.app_cpus = cpus[:-1] if len(cpus) >= 2 else cpus
        self.offloads: dict = {}
        self.tun_offloads = tun_offloads_wanted()
        self.tcp_plan = tcpset.HostPlan()
        self.agent_flows = [f for f in experiment["flows"] if not f.get("command")]
        # the command-scheme flows: a part with its own processes (commands.py)
        self.commands = CommandFlows(experiment, self.addr, self.ns, agent_bin, self.run_id,
                                     self.work, self.procs, self._preexec)
        self.controllers = Controllers(experiment)
        self.bpf_entries: list[dict] = []  # BPF congestion controls registered (bpf.py)
        self.host_changes: list[dict] = []  # host-wide settings raised for the run (hostsys.py)
        self.tcp_ehash: int | None = None  # buckets of each host's own TCP hash (netns.py)

    # -- set-up --------------------------------------------------------------------------------
    def setup_hosts(self) -> None:
        # the host's receive backlog for what the engine writes into the TUNs (hostsys.py)
        self.host_changes = [c for c in [hostsys.raise_backlog(self.work)] if c]
        # each host's sysctls and routes for the flows it sends and receives (tcpset.py)
        self.tcp_plan = tcpset.plan(self.exp)
        if self.tcp_plan.problems:
            raise EmuError("; ".join(self.tcp_plan.problems))
        route = tcpset.route_options(self.exp)
        rps_mask = format(sum(1 << c for c in self.app_cpus), "x") if self.engine_cpu is not None else None
        # the maker's name cannot be a host's (node names start with a letter or digit)
        self.tcp_ehash = add_namespaces([self.ns[h] for h in self.hosts], f"{self.run_id}-_mk",
                                        self.created_ns)
        for h in self.hosts:
            ns = self.ns[h]
            with in_netns(ns):
                for k, v in self.tcp_plan.sysctls[h].items():
                    write_sysctl(k, v)
                self.tun_fds[h] = open_tun(TUN_NAME, self.tun_offloads != "off")
                self.offloads[h] = set_offloads(TUN_NAME, self.tun_offloads != "off")
            a = self.addr[h]
            run_cmd(["ip", "-n", ns, "-batch", "-"], input="\n".join([
                "link set lo up",
                f"link set {TUN_NAME} mtu 1500 txqueuelen 10000 up",
                f"addr add {a}/32 dev {TUN_NAME}",
                f"route add {NET}.0.0/16 dev {TUN_NAME} src {a} {route}",
                # a peer whose flows need other route options than the network's
                *(f"route add {self.addr[p]}/32 dev {TUN_NAME} src {a} {opts}"
                  for p, opts in self.tcp_plan.routes.get(h, [])),
            ]) + "\n")
            if rps_mask:
                # RPS: the receive work of packets the engine writes runs on the application CPUs
                run_cmd(["ip", "netns", "exec", ns, "sh", "-c",
                         f"echo {rps_mask} > /sys/class/net/{TUN_NAME}/queues/rx-0/rps_cpus"])

    def _preexec(self, ns: str):
        path = f"/run/netns/{ns}"
        cpus = set(self.app_cpus)

        def fn():
            fd = os.open(path, os.O_RDONLY)
            setns(fd)
            os.close(fd)
            os.sched_setaffinity(0, cpus)
        return fn

    def start_engine(self) -> None:
        hosts = [{"name": h, "fd": self.tun_fds[h], "addr": self.addr[h]} for h in self.hosts]
        rt = {"run_id": self.run_id, "experiment": self.exp, "hosts": hosts, "port_base": PORT_BASE,
              "engine_cpu": self.engine_cpu, "spin_ns": self.spin_ns,
              "engine_nice": ENGINE_NICE, "record_release": True, "out_dir": str(self.work / "engine"),
              "tun_vnet": self.tun_offloads != "off", "tun_join": self.tun_offloads == "on",
              **({"join_late_ns": self.join_late_ns} if self.join_late_ns is not None else {}),
              "progress_ns": PROGRESS_NS if self.progress else 0,
              **({"capture": {"dir": self.capture["dir"], "snaplen": self.capture["snaplen"]}}
                 if self.capture else {})}
        rt_path = self.work / "runtime.json"
        rt_path.write_text(json.dumps(rt))
        self.engine = subprocess.Popen([str(self.engine_bin), str(rt_path)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       pass_fds=list(self.tun_fds.values()))
        self.procs.append(self.engine)
        # The engine holds the TUN fds now; ours would keep the interfaces alive after it dies.
        for fd in self.tun_fds.values():
            os.close(fd)
        self.tun_fds = {}
        line = self.engine.stdout.readline()
        if line.strip() != "ready":
            err = self.engine.stderr.read() if self.engine.poll() is not None else ""
            raise EmuError(f"the engine did not start: {line.strip()} {err.strip()}")

    def _popen(self, argv: list[str], host: str, stdin: bool = False) -> subprocess.Popen:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                             preexec_fn=self._preexec(self.ns[host]))
        self.procs.append(p)
        return p

    def start_agents(self, t0: int) -> list[tuple[dict, subprocess.Popen]]:
        servers = [self._popen(_agents.receiver_argv(self.agent_bin, self.exp, f, t0, self.run_id),
                               f["dst"], stdin=bool(f.get("python"))) for f in self.agent_flows]
        for f, p in zip(self.agent_flows, servers):
            line = p.stdout.readline()
            if line.strip() != "listening":
                raise EmuError(f"receiver of flow {f['id'] + 1} did not start: {line.strip()} "
                               f"{p.stderr.read().strip() if p.poll() is not None else ''}")
        clients = []
        for f in self.agent_flows:
            argv = _agents.sender_argv(self.agent_bin, self.exp, f, self.addr[f["dst"]], t0,
                                       self.run_id, self.work)
            p = self._popen(argv, f["src"], stdin=bool(f.get("python")))
            clients.append((f, p))
            if f.get("python"):
                self.controllers.add(f, p, servers[self.agent_flows.index(f)])
        return clients + self.commands.start_clients(t0)


    def tun_stats(self) -> dict:
        out = {}
        for h in self.hosts:
            try:
                j = json.loads(run_cmd(["ip", "-n", self.ns[h], "-s", "-j", "link", "show", TUN_NAME]))
                s = j[0].get("stats64", j[0].get("stats", {}))
                out[h] = {"tx_packets": s["tx"]["packets"], "tx_dropped": s["tx"]["dropped"],
                          "rx_packets": s["rx"]["packets"], "rx_dropped": s["rx"]["dropped"],
                          "tx_errors": s["tx"]["errors"], "rx_errors": s["rx"]["errors"]}
                q = json.loads(run_cmd(["tc", "-n", self.ns[h], "-s", "-j", "qdisc", "show", "dev", TUN_NAME]))
                out[h]["qdisc_drops"] = sum(x.get("drops", 0) for x in q)
                out[h]["qdisc"] = [x.get("kind") for x in q]
            except (EmuError, ValueError, KeyError, IndexError) as e:
                out[h] = {**out.get(h, {}), "error": str(e)}
        return out

    def register_bpf(self) -> None:
        """Build and register the BPF schemes' congestion controls (one per program)."""
        from . import bpf
        by_path: dict[str, str] = {}
        for f in self.exp["flows"]:
            spec = f.get("bpf")
            if not spec:
                continue
            if spec["path"] not in by_path:
                obj = bpf.build(Path(spec["path"]), self.work / "bpf")
                entry = bpf.register(obj, spec.get("cc"), self.work, self.bpf_entries)
                entry["src"] = spec["path"]
                by_path[spec["path"]] = entry["cc"]
                self._check_record(entry)
            spec["cc"] = by_path[spec["path"]]

    def _check_record(self, entry: dict) -> None:
        """Refuse now, before the real-time run, variables of `record:` the registered program
        does not hold as numbers."""
        from .bpf import global_maps, read_globals
        want = {v for f in self.exp["flows"] if (f.get("bpf") or {}).get("path") == entry["src"]
                for v in f["bpf"].get("record") or ()}
        if want and (missing := sorted(want - set(read_globals(global_maps(entry))))):
            raise EmuError(f"record: {missing} are not numeric globals of the BPF program as the "
                           "kernel holds it (its .bss/.data/.rodata maps; the kernel drops a "
                           "global-data section no hook reads). Fix: record global variables "
                           "the program uses, struct fields dotted")

    # -- teardown ------------------------------------------------------------------------------
    def teardown(self) -> None:
        for c in self.commands.cmd_procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(c["proc"].pid, signal.SIGKILL)
        for c in self.commands.cmd_procs:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                c["proc"].wait(timeout=5)
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
        for p in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
            for s in (p.stdout, p.stderr, p.stdin):
                if s:
                    with contextlib.suppress(OSError):
                        s.close()
        for fd in self.tun_fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.tun_fds = {}
        for ns in self.created_ns:
            kill_pids(ns_pids(ns))
        for ns in self.created_ns:
            delete_namespace(ns)
        self.created_ns = []
        # SIGKILLed processes vanish asynchronously (the kernel tears them down, init reaps
        # the orphans): return only once none of this run's is left, so "nothing left
        # behind" holds when the caller sees the run end.
        deadline = time.monotonic() + 5
        while (left := our_processes(self.run_id)) and time.monotonic() < deadline:
            kill_pids(left)
            time.sleep(0.02)
        hostsys.restore(self.work)
        if self.bpf_entries:
            from .bpf import unregister
            problems = unregister(self.bpf_entries)
            if problems:  # keep the work directory's bpf.json: `ccbench clean` retries
                import sys
                print("warning: " + "; ".join(problems) + " (`sudo ccbench clean` retries)",
                      file=sys.stderr)
                if getattr(self, "_lock", None) is not None:
                    self._lock.release()
                return
        shutil.rmtree(self.work, ignore_errors=True)
        if getattr(self, "_lock", None) is not None:
            self._lock.release()

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        """Set up, drive the run to its end, collect: ({table: DataFrame}, metadata, wall s)."""
        from .bpfvars import VarSampler
        t0, clients = self._start()
        sampler = VarSampler(self.exp, self.bpf_entries, t0).start()
        try:
            drive = self._drive(t0)
        finally:
            sampler.stop()
        agents = self._collect_agents(clients)
        if self.bpf_entries:  # before teardown unregisters them (their maps go with them)
            from .bpf import repair_counts
            for e in self.bpf_entries:
                e["repairs"] = repair_counts(e)
        tables, meta = collect(self.exp, self.work, agents)
        tables["flows"] = sampler.merge(tables["flows"])
        meta.update(self._metadata(drive, agents, meta))
        return tables, meta, drive["wall"]

    def _start(self) -> tuple[int, list[tuple[dict, subprocess.Popen]]]:
        """Hosts, engine and agents up, the engine told when the run starts: (t0, clients)."""
        from ...runlock import RunLock
        # the lock exists before any namespace or process: `ccbench clean` then never
        # mistakes this run for a killed one
        self._lock = RunLock(self.work)
        self.register_bpf()
        self.setup_hosts()
        self.start_engine()
        self.commands.start_servers()
        # Time the agents get to start before t0: 1 s + 50 ms per flow. At 0.3 s + 40 ms a third
        # of the kernel runs on a 2-core machine at load average 15-20 missed it.
        lead = 1_000_000_000 + 50_000_000 * len(self.exp["flows"])
        t0 = time.monotonic_ns() + lead
        clients = self.start_agents(t0)
        if time.monotonic_ns() >= t0 - 20_000_000:
            raise EmuError(f"starting the agents took longer than the {lead / 1e9:.2f} s lead "
                           "time before t0 (the machine is too busy: run emulations on an "
                           "otherwise idle machine)")
        self.engine.stdin.write(f"go {t0}\n")
        self.engine.stdin.flush()
        return t0, clients

    def _drive(self, t0: int) -> dict:
        """Follow the run until the engine says ``done`` (progress, controllers' reports,
        command flows' stop times), then read the TUN counters and stop the engine:
        {cpu_a, cpu_b (/proc/stat before and after), wall (s), tun (tun_stats)}."""
        dur = self.exp["duration_ns"]
        cpu_a = cpu_times()
        wall0 = time.perf_counter()
        end = t0 + dur
        sel = selectors.DefaultSelector()
        out_fd = self.engine.stdout.fileno()
        sel.register(out_fd, selectors.EVENT_READ)
        ctl_fds = self.controllers.fds()
        for fd in ctl_fds:  # periodic controllers' interval reports (control.py)
            sel.register(fd, selectors.EVENT_READ)
        pending = b""
        done = False
        # command flows with a stop time: their processes are killed then
        stops = sorted((t0 + f["stop_ns"], f["id"]) for f in self.commands.flows if f.get("stop_ns") is not None)
        while not done:
            now = time.monotonic_ns()
            if self.progress:
                self.progress(max(0, now - t0), dur, self.rates.text())
            if now > end + 10_000_000_000:
                raise EmuError("the engine did not stop 10 s after the end of the run")
            while stops and stops[0][0] <= now:
                self.commands.stop(stops.pop(0)[1], grace=0.0)
            timeout = 0.25 if not stops else min(0.25, max(0.0, (stops[0][0] - now) / 1e9))
            ready = [k.fd for k, _ in sel.select(timeout=timeout)]
            self._read_controllers(sel, ready, ctl_fds)
            if out_fd not in ready:
                continue
            # raw reads: one read may bring several lines (progress lines, then `done`)
            chunk = os.read(out_fd, 65536)
            if not chunk:
                self.engine.wait(timeout=5)
                raise EmuError(f"the engine failed (exit {self.engine.returncode}): "
                               f"{self.engine.stderr.read().strip()}")
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace").strip()
                if line == "done":
                    done = True
                elif (p := parse_progress(line)) is not None:
                    self.rates.feed(*p)
        sel.close()
        cpu_b = cpu_times()
        wall = time.perf_counter() - wall0
        if self.progress:
            self.progress(dur, dur, self.rates.text())
        # The engine still holds the TUNs: read their counters, then let it exit.
        tun = self.tun_stats()
        self.commands.stop()
        self.engine.stdin.write("exit\n")
        self.engine.stdin.flush()
        self.engine.wait(timeout=10)
        return {"cpu_a": cpu_a, "cpu_b": cpu_b, "wall": wall, "tun": tun}

    def _read_controllers(self, sel, ready: list[int], ctl_fds: list[int]) -> None:
        """Feed the controllers what their ready pipes hold; a closed pipe leaves the
        selector."""
        for fd in ready:
            if fd in ctl_fds:
                data = os.read(fd, 65536)
                if data:
                    self.controllers.feed(fd, data)
                else:
                    sel.unregister(fd)
                    ctl_fds.remove(fd)

    def _collect_agents(self, clients: list[tuple[dict, subprocess.Popen]]) -> list[dict]:
        """Each client's summary (its last JSON line), with its flow, exit status and stderr."""
        agents = []
        for f, p in clients:
            try:
                out, err = p.communicate(timeout=max(2.0, 3 * self.exp["sample_interval_ns"] / 1e9))
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            summary = {}
            if f.get("python"):  # stdout was read during the run: reports, then the summary
                out = self.controllers.finish(f["id"], out)
            for line in reversed(out.splitlines()):
                with contextlib.suppress(ValueError):
                    summary = json.loads(line)
                    break
            if p.returncode == 3:
                raise EmuError(f"flow {f['id'] + 1}: {summary.get('error') or err.strip()}")
            if f.get("command"):
                summary["command"] = f["command"]["kind"]
                if f.get("_run_first"):
                    summary["run_first"] = f["_run_first"]
            summary.update({"flow": f["id"], "exit": p.returncode})
            if err.strip():
                summary["stderr"] = err.strip()[-500:]
            agents.append(summary)
        return agents

    def _metadata(self, drive: dict, agents: list[dict], collected: dict) -> dict:
        """The run's metadata beyond what collect() found (``collected``): host, CPUs, TUN
        counters, agents, BPF, controllers, commands, and the accuracy checks."""
        tun = drive["tun"]
        usage = cpu_usage(drive["cpu_a"], drive["cpu_b"])
        meta = {
            "run_id": self.run_id,
            "kernel": os.uname().release,
            "engine_cpu": self.engine_cpu, "app_cpus": self.app_cpus, "spin_ns": self.spin_ns,
            "tun": tun,
            "tun_drops": sum(v.get("tx_dropped", 0) + v.get("rx_dropped", 0) + v.get("qdisc_drops", 0)
                             for v in tun.values()),
            "cpu_usage": usage,
            "steal_frac": usage.get("cpu", {}).get("steal"),
            "offloads": self.offloads, "tun_offloads": self.tun_offloads,
            "tcp_ehash_buckets": self.tcp_ehash,
            "netdev_max_backlog": {"during": hostsys.read(hostsys.BACKLOG_KEY),
                                   "raised_from": next((c["was"] for c in self.host_changes), None)},
            **tcpset.metadata(self.exp, self.tcp_plan),
            "agents": agents,
            **({"bpf": [{k: e.get(k) for k in ("cc", "ids", "maps", "obj", "repairs")} for e in self.bpf_entries]}
               if self.bpf_entries else {}),
            **({"controllers": self.controllers.summary()} if self.controllers.flows else {}),
            **({"commands": self.commands.summary(), "command_notes": self.commands.notes}
               if self.commands.flows else {}),
        }
        if self.engine_cpu is not None:
            busy = usage.get(f"cpu{self.engine_cpu}", {}).get("busy")
            if busy is not None:
                meta["foreign_cpu_frac_on_engine_cpu"] = round(
                    max(0.0, busy - collected["engine_cpu_frac"]), 4)
        meta.update(accuracy(self.exp, {**collected, **meta}))
        return meta




def emulate(experiment: dict, progress=False, spin_ns: int = 50_000, capture: dict | None = None,
            join_late_ns: int | None = None):
    """Run a resolved experiment on the emulation backend; returns ({table: DataFrame},
    emu metadata, wall seconds). `capture` ({dir, snaplen}): the engine writes pcapng files
    of the packets' real bytes (docs/captures.md). Raises doctor.EmuUnavailable before
    creating anything when the machine cannot run it."""
    preflight(experiment)
    emu = Emulation(experiment, engine_bin=binary("engine"), agent_bin=binary("agent"),
                    spin_ns=spin_ns, progress=progress, capture=capture, join_late_ns=join_late_ns)
    old = None
    if _in_main_thread():
        def on_term(signum, frame):
            raise _Terminated()
        old = signal.signal(signal.SIGTERM, on_term)
    aff = os.sched_getaffinity(0)
    try:
        # the driver (and the `ip`/`tc` commands it runs) stays off the engine's CPU
        os.sched_setaffinity(0, set(emu.app_cpus))
        return emu.run()
    finally:
        os.sched_setaffinity(0, aff)
        # teardown must not be interrupted by a second signal
        masked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            emu.teardown()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, masked)
            if old is not None:
                signal.signal(signal.SIGTERM, old)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


