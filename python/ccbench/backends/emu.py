"""The emulation backend: real Linux TCP in network namespaces, links by the shared netmodel.

    emulate(experiment) → ({table: DataFrame}, emu metadata dict, wall seconds)

Every host of the topology becomes a network namespace `ccb-<runid>-<host>` holding one TUN
interface (`ccbtun`, offloads off, MTU 1500, txqueuelen 10000, IPv6 off). The TUN fds are
opened here (inside each namespace) and handed to one real-time engine process in the root
namespace (`ccbench-emu`, crates/emu), which carries every packet through the topology's links
with the same netmodel code as the simulator. Flow agents (`ccbench-agent`) run inside the
host namespaces: a receiver per flow listening on port PORT_BASE + flow id, and a sender that
connects at the flow's start with TCP_CONGESTION set and samples TCP_INFO.

Everything created carries the run's prefix; `teardown` runs on success, error, SIGINT and
SIGTERM, and `clean()` (``ccbench clean``) removes what a killed run left behind.
See docs/emulation.md.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

PREFIX = "ccb-"
RUN_RE = re.compile(r"^ccb-[0-9a-f]{6}$")
NS_RE = re.compile(r"^ccb-[0-9a-f]{6}-")
TUN_NAME = "ccbtun"
DROP_REASONS = ("none", "queue", "loss")
PORT_BASE = 10000
NET = "10.77"                # every address lives inside our namespaces only
BIN_ENV = "CCBENCH_EMU_BIN"  # directory holding ccbench-emu and ccbench-agent
BIN_NAMES = {"engine": "ccbench-emu", "agent": "ccbench-agent"}
REPO = Path(__file__).resolve().parents[3]
WORK_ROOT = Path(tempfile.gettempdir()) / "ccbench-emu"

ENGINE_NICE = -20           # engine: own autogroup at this nice (see crates/emu clock::prioritise)
AGENT_NICE = -10            # agents: likewise, so a busy machine does not starve the senders

# Accuracy thresholds (justified in docs/emulation.md, "Accuracy flags").
MAX_RELEASE_P99_NS = 250_000
MAX_RELEASE_P99_RTT_FRAC = 0.01
MAX_RELEASE_P999_RTT_FRAC = 0.05
MAX_STEAL_FRAC = 0.05
MAX_ENGINE_CPU_FRAC = 0.95

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SIOCETHTOOL = 0x8946
# legacy ethtool get/set commands (include/uapi/linux/ethtool.h): (get, set)
ETHTOOL_FEATURES = {"sg": (0x18, 0x19), "tso": (0x1E, 0x1F), "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}


class EmuError(RuntimeError):
    pass


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so the same teardown runs as for Ctrl-C."""


def binary(name: str) -> Path | None:
    """Where the engine ("engine") or agent ("agent") binary is: $CCBENCH_EMU_BIN, then the
    repository's target/release (what `make build` produces), then target/debug, then PATH."""
    exe = BIN_NAMES[name]
    cands = []
    if os.environ.get(BIN_ENV):
        cands.append(Path(os.environ[BIN_ENV]) / exe)
    cands += [REPO / "target" / "release" / exe, REPO / "target" / "debug" / exe]
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    w = shutil.which(exe)
    return Path(w) if w else None


# ---------------------------------------------------------------------------------------------
# namespaces, TUN devices


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


@contextlib.contextmanager
def in_netns(name: str):
    """Move the calling thread into network namespace `name` for the block."""
    root = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(root)
    finally:
        os.close(target)
        os.close(root)


def _run(cmd: list[str], *, input: str | None = None, check: bool = True) -> str:
    p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise EmuError(f"`{' '.join(cmd)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def _ethtool(sock: socket.socket, ifname: str, cmd: int, data: int = 0) -> int:
    ev = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifr = struct.pack("16sP16x", ifname.encode(), ctypes.addressof(ev))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", ev.raw)[1]


def _offloads_off(ifname: str) -> dict:
    """Turn off SG/TSO/GSO/GRO on `ifname` (in the current namespace); returns the state."""
    state = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for feat, (get, set_) in ETHTOOL_FEATURES.items():
            with contextlib.suppress(OSError):
                _ethtool(s, ifname, set_, 0)
            try:
                state[feat] = bool(_ethtool(s, ifname, get))
            except OSError as e:
                state[feat] = f"unknown ({e.strerror})"
    return state


def _write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", *key.split(".")).write_text(value)


def host_addr(i: int) -> str:
    n = i + 1
    return f"{NET}.{n >> 8}.{n & 255}"


# ---------------------------------------------------------------------------------------------
# cleanup


def _proc_cmdlines():
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            yield int(d.name), (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue


def _kill_pids(pids) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _ns_pids(ns: str) -> list[int]:
    out = _run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in out.split() if x.isdigit()]


def list_namespaces(run_id: str | None = None) -> list[str]:
    d = Path("/run/netns")
    if not d.is_dir():
        return []
    names = sorted(p.name for p in d.iterdir() if NS_RE.match(p.name))
    if run_id:
        names = [n for n in names if n.startswith(run_id + "-")]
    return names


def _our_processes(run_id: str | None = None) -> list[int]:
    """Engine and agent processes of ccbench runs (by binary name and run-id argument)."""
    me = os.getpid()
    pids = []
    for pid, argv in _proc_cmdlines():
        if pid == me or not argv or not argv[0]:
            continue
        exe = os.path.basename(argv[0].decode(errors="replace"))
        if exe not in BIN_NAMES.values():
            continue
        text = b" ".join(argv).decode(errors="replace")
        if run_id is None and PREFIX in text or run_id is not None and run_id in text:
            pids.append(pid)
    return pids


def clean(run_id: str | None = None, verbose: bool = False) -> dict:
    """Remove the namespaces, processes and work directories of ccbench emulation runs (all
    runs, or one `run_id`). Returns what was removed."""
    removed = {"processes": [], "namespaces": [], "workdirs": []}
    for ns in list_namespaces(run_id):
        pids = _ns_pids(ns)
        _kill_pids(pids)
        removed["processes"] += pids
    pids = _our_processes(run_id)
    _kill_pids(pids)
    removed["processes"] += pids
    for ns in list_namespaces(run_id):
        for _ in range(20):
            p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True)
            if p.returncode == 0 or not Path("/run/netns", ns).exists():
                break
            time.sleep(0.05)
        removed["namespaces"].append(ns)
    if WORK_ROOT.is_dir():
        for d in WORK_ROOT.iterdir():
            if RUN_RE.match(d.name) and (run_id is None or d.name == run_id):
                shutil.rmtree(d, ignore_errors=True)
                removed["workdirs"].append(str(d))
    if verbose:
        for k, v in removed.items():
            print(f"removed {len(v)} {k}" + (f": {' '.join(map(str, v))}" if v else ""))
    return removed


# ---------------------------------------------------------------------------------------------
# one run


def _cpu_times() -> dict[str, list[int]]:
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu"):
            f = line.split()
            out[f[0]] = [int(x) for x in f[1:9]]
    return out


def _cpu_usage(a: dict, b: dict) -> dict:
    """Busy and steal fractions per CPU between two /proc/stat snapshots."""
    res = {}
    for k in b:
        if k not in a:
            continue
        d = [y - x for x, y in zip(a[k], b[k])]
        tot = max(1, sum(d))
        idle = d[3] + d[4]
        res[k] = {"busy": round(1 - idle / tot, 4), "steal": round(d[7] / tot, 4)}
    return res


class _Progress:
    def __init__(self, enabled: bool, stream=sys.stderr):
        self.enabled = enabled
        self.stream = stream

    def __call__(self, now_s: float, end_s: float) -> None:
        if not self.enabled:
            return
        now_s = max(0.0, now_s)
        frac = min(1.0, now_s / end_s) if end_s else 1.0
        fill = int(frac * 30)
        self.stream.write(f"\r  emulating [{'#' * fill}{'.' * (30 - fill)}] {frac * 100:5.1f}%  "
                          f"{now_s:6.2f}/{end_s:.2f} s")
        if frac >= 1.0:
            self.stream.write("\n")
        self.stream.flush()


class Emulation:
    """Set-up, run and teardown of one experiment on the emulation backend."""

    def __init__(self, experiment: dict, *, engine_bin: Path, agent_bin: Path,
                 spin_ns: int = 50_000, progress=False):
        self.exp = experiment
        self.engine_bin = engine_bin
        self.agent_bin = agent_bin
        self.spin_ns = spin_ns
        self.progress = _Progress(bool(progress))
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
        self.sysctls: dict = {}
        self.agent_flows = [f for f in experiment["flows"] if not f.get("command")]
        self.cmd_flows = [dict(f) for f in experiment["flows"] if f.get("command")]
        self.cmd_procs: list[dict] = []
        self.cmd_notes: list[str] = []

    # -- set-up --------------------------------------------------------------------------------
    def _sysctls(self) -> dict:
        tcp = self.exp.get("tcp", {})
        buf = max(int(tcp.get("rwnd_bytes", 32 << 20)) * 2, 8 << 20)
        return {
            "net.ipv6.conf.all.disable_ipv6": "1",
            "net.ipv6.conf.default.disable_ipv6": "1",
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_sack": "1" if tcp.get("sack", True) else "0",
            "net.ipv4.tcp_rmem": f"4096 131072 {buf}",
            "net.ipv4.tcp_wmem": f"4096 16384 {buf}",
            "net.ipv4.tcp_slow_start_after_idle": "1" if tcp.get("slow_start_after_idle", True) else "0",
            # tail loss probes: 0 disables, 3 (the default) enables; SACK compression: 0 ACKs
            # every out-of-order segment at once (a TCP profile older than 3.10 / 4.18 sets both)
            "net.ipv4.tcp_early_retrans": "3" if tcp.get("tlp", True) else "0",
            "net.ipv4.tcp_comp_sack_nr": "44" if tcp.get("sack_compression", True) else "0",
        }

    def _route_opts(self) -> str:
        tcp = self.exp.get("tcp", {})
        opts = [f"initcwnd {int(tcp.get('init_cwnd', 10))}"]
        if tcp.get("min_rto_ns"):
            opts.append(f"rto_min {max(1, round(tcp['min_rto_ns'] / 1e6))}ms")
        if not tcp.get("delayed_ack", True):
            opts.append("quickack 1")
        return " ".join(opts)

    def setup_hosts(self) -> None:
        self.sysctls = self._sysctls()
        route = self._route_opts()
        rps_mask = format(sum(1 << c for c in self.app_cpus), "x") if self.engine_cpu is not None else None
        for h in self.hosts:
            ns = self.ns[h]
            _run(["ip", "netns", "add", ns])
            self.created_ns.append(ns)
            with in_netns(ns):
                for k, v in self.sysctls.items():
                    _write_sysctl(k, v)
                fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
                self.tun_fds[h] = fd
                fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", TUN_NAME.encode(), IFF_TUN | IFF_NO_PI))
                self.offloads[h] = _offloads_off(TUN_NAME)
            a = self.addr[h]
            _run(["ip", "-n", ns, "-batch", "-"], input="\n".join([
                "link set lo up",
                f"link set {TUN_NAME} mtu 1500 txqueuelen 10000 up",
                f"addr add {a}/32 dev {TUN_NAME}",
                f"route add {NET}.0.0/16 dev {TUN_NAME} src {a} {route}",
            ]) + "\n")
            if rps_mask:
                # RPS: the receive work of packets the engine writes runs on the application CPUs
                _run(["ip", "netns", "exec", ns, "sh", "-c",
                      f"echo {rps_mask} > /sys/class/net/{TUN_NAME}/queues/rx-0/rps_cpus"])

    def _preexec(self, ns: str):
        path = f"/run/netns/{ns}"
        cpus = set(self.app_cpus)

        def fn():
            fd = os.open(path, os.O_RDONLY)
            _setns(fd)
            os.close(fd)
            os.sched_setaffinity(0, cpus)
        return fn

    def start_engine(self) -> None:
        hosts = [{"name": h, "fd": self.tun_fds[h], "addr": self.addr[h]} for h in self.hosts]
        rt = {"run_id": self.run_id, "experiment": self.exp, "hosts": hosts, "port_base": PORT_BASE,
              "engine_cpu": self.engine_cpu, "spin_ns": self.spin_ns,
              "engine_nice": ENGINE_NICE, "record_release": True, "out_dir": str(self.work / "engine")}
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

    def start_agents(self, t0: int) -> list[tuple[dict, subprocess.Popen]]:
        dur = self.exp["duration_ns"]
        servers = []
        for f in self.agent_flows:
            p = subprocess.Popen(
                [str(self.agent_bin), "udp-server" if f["scheme"] == "udp" else "server",
                 "--port", str(PORT_BASE + f["id"]), "--t0", str(t0),
                 "--end", str(dur), "--run", self.run_id, "--nice", str(AGENT_NICE)]
                + (["--multi", "1"] if f.get("arrivals") else []),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=self._preexec(self.ns[f["dst"]]))
            self.procs.append(p)
            servers.append(p)
        for f, p in zip(self.agent_flows, servers):
            line = p.stdout.readline()
            if line.strip() != "listening":
                raise EmuError(f"receiver of flow {f['id']} did not start: {line.strip()} "
                               f"{p.stderr.read().strip() if p.poll() is not None else ''}")
        clients = []
        for f in self.agent_flows:
            if f["scheme"] == "udp":
                # constant bit rate of IP bytes, datagrams of mss + 52 IP bytes (1500), as the
                # simulator's UDP sources; no TCP_INFO samples (no flows rows, as in the simulator)
                args = [str(self.agent_bin), "udp-client", "--dst", self.addr[f["dst"]],
                        "--port", str(PORT_BASE + f["id"]), "--rate", str(int(f["app_rate_bps"])),
                        "--size", str(min(1500, int(self.exp.get("mss", 1448)) + 52)),
                        "--t0", str(t0), "--start", str(f.get("start_ns") or 0), "--end", str(dur),
                        "--run", self.run_id, "--nice", str(AGENT_NICE)]
                if f.get("stop_ns") is not None:
                    args += ["--stop", str(f["stop_ns"])]
                p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=self._preexec(self.ns[f["src"]]))
                self.procs.append(p)
                clients.append((f, p))
                continue
            if f.get("arrivals"):
                # Poisson short flows: one connection per arrival, the simulator's generator
                # (same seed stream, so the same arrival times and sizes); conns CSV per group
                args = [str(self.agent_bin), "arrivals-client", "--dst", self.addr[f["dst"]],
                        "--port", str(PORT_BASE + f["id"]), "--cc", f["scheme"],
                        "--arrivals", json.dumps(f["arrivals"]), "--seed", str(int(self.exp.get("seed", 0))),
                        "--flow", str(f["id"]), "--t0", str(t0), "--start", str(f.get("start_ns") or 0),
                        "--end", str(dur), "--out", str(self.work / f"conns{f['id']}.csv"),
                        "--run", self.run_id, "--nice", str(AGENT_NICE)]
                if f.get("stop_ns") is not None:
                    args += ["--stop", str(f["stop_ns"])]
                p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=self._preexec(self.ns[f["src"]]))
                self.procs.append(p)
                clients.append((f, p))
                continue
            args = [str(self.agent_bin), "client", "--dst", self.addr[f["dst"]],
                    "--port", str(PORT_BASE + f["id"]), "--cc", f["scheme"], "--t0", str(t0),
                    "--start", str(f.get("start_ns") or 0), "--end", str(dur),
                    "--interval", str(self.exp["sample_interval_ns"]),
                    "--out", str(self.work / f"flow{f['id']}.csv"), "--run", self.run_id,
                    "--nice", str(AGENT_NICE)]
            if f.get("stop_ns") is not None:
                args += ["--stop", str(f["stop_ns"])]
            if f.get("bytes"):
                args += ["--bytes", str(f["bytes"])]
            if f.get("app_rate_bps"):
                args += ["--app-rate", str(int(f["app_rate_bps"])), "--mss", str(int(self.exp.get("mss", 1448)))]
            if f.get("onoff"):
                args += ["--on", str(int(f["onoff"]["on_ns"])), "--off", str(int(f["onoff"]["off_ns"]))]
                if not f.get("app_rate_bps"):
                    # backlogged on/off: at most ~1 ms of the path's rate (≥ 16 KB) unsent in the
                    # socket, so little is sent after an on period ends (the kernel cannot withdraw it)
                    rates = [self.exp["links"][j]["rate_bps"] for j in f["path"]
                             if self.exp["links"][j].get("rate_bps")]
                    lowat = min(4 << 20, max(16 << 10, (min(rates) // 8000) if rates else 0))
                    args += ["--notsent-lowat", str(lowat)]
            p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=self._preexec(self.ns[f["src"]]))
            self.procs.append(p)
            clients.append((f, p))
        return clients + self.start_command_clients(t0)

    # -- command schemes (config/commands.py) --------------------------------------------------
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
            raise EmuError(f"flow {f['id']}: the {role} command uses {{{e.args[0]}}}, which is not "
                           f"known before time 0 is fixed (receivers start first): "
                           f"use {{duration}}, {{port}}, {{dst}}, {{src}}") from None

    def _cmd_env(self) -> dict:
        env = dict(os.environ)
        env["PATH"] = f"{self.agent_bin.parent}{os.pathsep}{env.get('PATH', '')}"
        env["CCBENCH_RUN"] = self.run_id
        env["CCBENCH_AGENT"] = str(self.agent_bin)
        return env

    def _spawn(self, f: dict, role: str, host: str, argv: list[str], at: int | None = None):
        """Start one process of a command scheme in `host`'s namespace, in its own process
        group (killed as a whole), output to a log in the work directory. With `at`, the
        agent's `launch` sleeps until that CLOCK_MONOTONIC time and then execs it."""
        if at is not None:
            argv = [str(self.agent_bin), "launch", "--at", str(at), "--run", self.run_id, "--", *argv]
        log = self.work / f"flow{f['id']}-{role}.log"
        env = self._cmd_env()
        env["CCBENCH_SCHEME"] = f["command"].get("name") or f["scheme"]
        with open(log, "wb") as out:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 env=env, start_new_session=True, cwd=self.work,
                                 preexec_fn=self._preexec(self.ns[host]))
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
            raise EmuError(f"flow {f['id']}: `{c['wrapper']} run_first` failed: {e}") from None
        ans = p.stdout.strip().splitlines()[-1].strip() if p.stdout.strip() else ""
        if p.returncode != 0 or ans not in ("sender", "receiver"):
            raise EmuError(f"flow {f['id']}: `{c['wrapper']} run_first` must print sender or "
                           f"receiver, got {ans!r} (exit {p.returncode}) {p.stderr.strip()[-300:]}")
        return ans

    def start_command_servers(self) -> None:
        """Start the first side of every command-scheme flow (the receiver; for a Pantheon
        wrapper the side its `run_first` names, given the port) and wait until it listens."""
        for f in self.cmd_flows:
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
                    raise EmuError(f"flow {f['id']}: the {c['kind']} receiver exited ({p.returncode}) "
                                   f"before listening on port {port}: {self._log_tail(self.cmd_procs[-1])}")
                if time.monotonic() > deadline:
                    self.cmd_notes.append(f"flow {f['id']}: nothing listened on port {port} within 5 s "
                                          f"of starting the receiver; started the sender anyway")
                    break
                time.sleep(0.01)

    def start_command_clients(self, t0: int) -> list:
        """Launch the second side of every command flow at t0 + start (agent `launch`), and a
        TCP_INFO monitor (agent `monitor`, netlink sock_diag) in the sender's namespace."""
        out = []
        dur = self.exp["duration_ns"]
        for f in self.cmd_flows:
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
                   "--out", str(self.work / f"flow{f['id']}.csv"), "--run", self.run_id,
                   "--nice", str(AGENT_NICE)]
            p = subprocess.Popen(mon, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=self._preexec(self.ns[f["src"]]))
            self.procs.append(p)
            if p.stdout.readline().strip() != "monitoring":
                raise EmuError(f"flow {f['id']}: the TCP_INFO monitor did not start: "
                               f"{p.stderr.read().strip() if p.poll() is not None else ''}")
            out.append((f, p))
        return out

    def stop_commands(self, flow: int | None = None, grace: float = 1.0) -> None:
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

    def command_summary(self) -> list[dict]:
        return [{"flow": c["flow"], "role": c["role"], "host": c["host"],
                 "argv": c["argv"][c["argv"].index("--") + 1:] if "--" in c["argv"] else c["argv"],
                 "exit": c["proc"].returncode, "output_tail": self._log_tail(c)}
                for c in self.cmd_procs]

    def tun_stats(self) -> dict:
        out = {}
        for h in self.hosts:
            try:
                j = json.loads(_run(["ip", "-n", self.ns[h], "-s", "-j", "link", "show", TUN_NAME]))
                s = j[0].get("stats64", j[0].get("stats", {}))
                out[h] = {"tx_packets": s["tx"]["packets"], "tx_dropped": s["tx"]["dropped"],
                          "rx_packets": s["rx"]["packets"], "rx_dropped": s["rx"]["dropped"],
                          "tx_errors": s["tx"]["errors"], "rx_errors": s["rx"]["errors"]}
                q = json.loads(_run(["tc", "-n", self.ns[h], "-s", "-j", "qdisc", "show", "dev", TUN_NAME]))
                out[h]["qdisc_drops"] = sum(x.get("drops", 0) for x in q)
                out[h]["qdisc"] = [x.get("kind") for x in q]
            except (EmuError, ValueError, KeyError, IndexError) as e:
                out[h] = {**out.get(h, {}), "error": str(e)}
        return out

    # -- teardown ------------------------------------------------------------------------------
    def teardown(self) -> None:
        for c in self.cmd_procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(c["proc"].pid, signal.SIGKILL)
        for c in self.cmd_procs:
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
            _kill_pids(_ns_pids(ns))
        for ns in self.created_ns:
            for _ in range(20):
                p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True)
                if p.returncode == 0 or not Path("/run/netns", ns).exists():
                    break
                time.sleep(0.05)
        self.created_ns = []
        # SIGKILLed processes vanish asynchronously (the kernel tears them down, init reaps
        # the orphans): return only once none of this run's is left, so "nothing left
        # behind" holds when the caller sees the run end.
        deadline = time.monotonic() + 5
        while (left := _our_processes(self.run_id)) and time.monotonic() < deadline:
            _kill_pids(left)
            time.sleep(0.02)
        shutil.rmtree(self.work, ignore_errors=True)

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        dur = self.exp["duration_ns"]
        self.work.mkdir(parents=True, exist_ok=True)
        self.setup_hosts()
        self.start_engine()
        self.start_command_servers()
        lead = 300_000_000 + 40_000_000 * len(self.exp["flows"])
        t0 = time.monotonic_ns() + lead
        clients = self.start_agents(t0)
        if time.monotonic_ns() >= t0 - 20_000_000:
            raise EmuError("starting the agents took longer than the lead time before t0")
        self.engine.stdin.write(f"go {t0}\n")
        self.engine.stdin.flush()
        cpu_a = _cpu_times()
        wall0 = time.perf_counter()
        end = t0 + dur
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.engine.stdout, selectors.EVENT_READ)
        done = False
        # command flows with a stop time: their processes are killed then
        stops = sorted((t0 + f["stop_ns"], f["id"]) for f in self.cmd_flows if f.get("stop_ns") is not None)
        while not done:
            now = time.monotonic_ns()
            self.progress((now - t0) / 1e9, dur / 1e9)
            if now > end + 10_000_000_000:
                raise EmuError("the engine did not stop 10 s after the end of the run")
            while stops and stops[0][0] <= now:
                self.stop_commands(stops.pop(0)[1], grace=0.0)
            timeout = 0.25 if not stops else min(0.25, max(0.0, (stops[0][0] - now) / 1e9))
            if sel.select(timeout=timeout):
                line = self.engine.stdout.readline()
                if line.strip() == "done":
                    done = True
                elif not line:
                    self.engine.wait(timeout=5)
                    raise EmuError(f"the engine failed (exit {self.engine.returncode}): "
                                   f"{self.engine.stderr.read().strip()}")
        sel.close()
        cpu_b = _cpu_times()
        wall = time.perf_counter() - wall0
        self.progress(dur / 1e9, dur / 1e9)
        # The engine still holds the TUNs: read their counters, then let it exit.
        tun = self.tun_stats()
        self.stop_commands()
        self.engine.stdin.write("exit\n")
        self.engine.stdin.flush()
        self.engine.wait(timeout=10)
        agents = []
        for f, p in clients:
            try:
                out, err = p.communicate(timeout=max(2.0, 3 * self.exp["sample_interval_ns"] / 1e9))
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            summary = {}
            for line in reversed(out.splitlines()):
                with contextlib.suppress(ValueError):
                    summary = json.loads(line)
                    break
            if p.returncode == 3:
                raise EmuError(f"flow {f['id']}: {summary.get('error') or err.strip()}")
            if f.get("command"):
                summary["command"] = f["command"]["kind"]
                if f.get("_run_first"):
                    summary["run_first"] = f["_run_first"]
            summary.update({"flow": f["id"], "exit": p.returncode})
            if err.strip():
                summary["stderr"] = err.strip()[-500:]
            agents.append(summary)
        tables, meta = collect(self.exp, self.work, agents)
        usage = _cpu_usage(cpu_a, cpu_b)
        meta.update({
            "run_id": self.run_id,
            "kernel": os.uname().release,
            "engine_cpu": self.engine_cpu, "app_cpus": self.app_cpus, "spin_ns": self.spin_ns,
            "tun": tun,
            "tun_drops": sum(v.get("tx_dropped", 0) + v.get("rx_dropped", 0) + v.get("qdisc_drops", 0)
                             for v in tun.values()),
            "cpu_usage": usage,
            "steal_frac": usage.get("cpu", {}).get("steal"),
            "offloads": self.offloads,
            "sysctls": self.sysctls,
            "route_options": self._route_opts(),
            # the kernel's initial RTO is TCP_TIMEOUT_INIT (1 s), fixed at compile time: no
            # sysctl or route metric changes it (only a cgroup BPF sock_ops program could)
            "initial_rto_ns": {"requested": int(self.exp.get("tcp", {}).get("initial_rto_ns", 10**9)),
                               "kernel": 10**9,
                               "applied": int(self.exp.get("tcp", {}).get("initial_rto_ns", 10**9)) == 10**9},
            "agents": agents,
            **({"commands": self.command_summary(), "command_notes": self.cmd_notes}
               if self.cmd_flows else {}),
        })
        if self.engine_cpu is not None:
            busy = usage.get(f"cpu{self.engine_cpu}", {}).get("busy")
            if busy is not None:
                meta["foreign_cpu_frac_on_engine_cpu"] = round(max(0.0, busy - meta["engine_cpu_frac"]), 4)
        meta.update(accuracy(self.exp, meta))
        return tables, meta, wall


# ---------------------------------------------------------------------------------------------
# results


_NP = {"u8": np.uint8, "bool": np.uint8, "u32": np.uint32, "u64": np.uint64, "i32": np.int32,
       "i64": np.int64, "f64": np.float64}


def _read_table(d: Path, name: str, manifest: list) -> pl.DataFrame:
    cols = []
    for col, dt in manifest:
        arr = np.fromfile(d / f"{name}.{col}.bin", dtype=_NP[dt])
        s = pl.Series(col, arr.astype(bool) if dt == "bool" else arr)
        if dt == "i64":
            s = s.to_frame().select(pl.when(pl.col(col) == np.iinfo(np.int64).min).then(None)
                                    .otherwise(pl.col(col)).alias(col)).to_series()
        if col == "drop_reason":  # codes of the simulator's DROP_REASONS categories
            s = pl.Series(col, np.asarray(DROP_REASONS, dtype=object)[arr].astype(str), dtype=pl.String)
        if col == "drop_link":
            s = s.to_frame().select(pl.when(pl.col(col) < 0).then(None).otherwise(pl.col(col))
                                    .alias(col)).to_series()
        cols.append(s)
    return pl.DataFrame(cols)


FLOW_SCHEMA = {"time_ns": pl.Int64, "flow": pl.UInt32, "cwnd": pl.UInt32, "ssthresh": pl.Int64,
               "srtt_us": pl.Float64, "rttvar_us": pl.Float64, "min_rtt_us": pl.Float64,
               "inflight": pl.UInt32, "delivered": pl.UInt64, "bytes_acked": pl.UInt64,
               "retrans": pl.UInt64, "lost": pl.UInt64, "ca_state": pl.String,
               "pacing_rate_bps": pl.Float64, "delivery_rate_bps": pl.Float64}


def _flows_table(exp: dict, work: Path) -> pl.DataFrame:
    parts = []
    for f in exp["flows"]:
        p = work / f"flow{f['id']}.csv"
        if not p.is_file() or p.stat().st_size == 0:
            continue
        df = pl.read_csv(p, infer_schema_length=0)  # all strings; cast below
        if df.height == 0:
            continue
        df = df.with_columns(pl.lit(f["id"]).alias("flow"))
        casts = [pl.col(c).cast(t) if c != "flow" else pl.col(c).cast(t)
                 for c, t in FLOW_SCHEMA.items() if c in df.columns]
        casts += [pl.col(c).cast(pl.Float64) for c in df.columns if c.startswith("cc_")]
        parts.append(df.with_columns(casts))
    if not parts:
        return pl.DataFrame(schema=FLOW_SCHEMA)
    df = pl.concat(parts, how="diagonal")
    order = list(FLOW_SCHEMA) + sorted(c for c in df.columns if c.startswith("cc_"))
    return df.select(order).sort(["time_ns", "flow"])


def derived_tables(pk: pl.DataFrame, exp: dict, app_bytes: dict, completed: dict):
    """intervals, delay_hist and flowstats from the per-packet records (as the simulator's
    recorder aggregates them; docs/architecture.md)."""
    w = exp["sample_interval_ns"]
    hb = exp.get("hist_bucket_ns", 10_000)
    u64 = pl.UInt64
    sent = pk.group_by("flow", (pl.col("sent_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("sent_bytes"), pl.len().cast(u64).alias("sent_pkts"))
    arr = pk.filter(pl.col("arrival_ns").is_not_null()).with_columns(
        (pl.col("arrival_ns") - pl.col("sent_ns")).alias("delay"))
    dl = arr.group_by("flow", (pl.col("arrival_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("delivered_bytes"),
        pl.len().cast(u64).alias("delivered_pkts"),
        pl.col("delay").sum().cast(u64).alias("delay_sum_ns"))
    dr = pk.filter(pl.col("drop_ns").is_not_null()).group_by(
        "flow", (pl.col("drop_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("dropped_bytes"), pl.len().cast(u64).alias("dropped_pkts"))
    iv = sent.join(dl, on=["flow", "bin"], how="full", coalesce=True).join(
        dr, on=["flow", "bin"], how="full", coalesce=True)
    cols = ["sent_bytes", "sent_pkts", "delivered_bytes", "delivered_pkts", "delay_sum_ns",
            "dropped_bytes", "dropped_pkts"]
    intervals = iv.with_columns([pl.col(c).fill_null(0).cast(u64) for c in cols]).select(
        pl.col("bin").cast(pl.Int64), pl.col("flow").cast(pl.UInt32), *cols).sort(["bin", "flow"])
    delay_hist = arr.group_by("flow", (pl.col("delay") // hb).alias("bucket")).agg(
        pl.len().cast(u64).alias("count")).select(
        pl.col("flow").cast(pl.UInt32), pl.col("bucket").cast(pl.UInt32), "count").sort(["flow", "bucket"])
    rows = []
    for f in exp["flows"]:
        i = f["id"]
        p = pk.filter(pl.col("flow") == i)
        a = p.filter(pl.col("arrival_ns").is_not_null())
        d = p.filter(pl.col("drop_ns").is_not_null())
        rows.append({
            "flow": i, "sent_bytes": int(p["size"].sum() or 0), "sent_pkts": p.height,
            "delivered_bytes": int(a["size"].sum() or 0), "delivered_pkts": a.height,
            "dropped_bytes": int(d["size"].sum() or 0), "dropped_pkts": d.height,
            "retrans_pkts": int(p["retrans"].sum() or 0),
            "first_sent_ns": p["sent_ns"].min(), "last_sent_ns": p["sent_ns"].max(),
            "first_arrival_ns": a["arrival_ns"].min(), "last_arrival_ns": a["arrival_ns"].max(),
            "delay_sum_ns": int((a["arrival_ns"] - a["sent_ns"]).sum() or 0),
            "app_bytes": int(app_bytes.get(i, 0)), "start_ns": int(f.get("start_ns") or 0),
            "completed_ns": completed.get(i),
        })
    schema = {"flow": pl.UInt32, **{k: u64 for k in ("sent_bytes", "sent_pkts", "delivered_bytes",
              "delivered_pkts", "dropped_bytes", "dropped_pkts", "retrans_pkts")},
              **{k: pl.Int64 for k in ("first_sent_ns", "last_sent_ns", "first_arrival_ns",
                                       "last_arrival_ns")},
              "delay_sum_ns": u64, "app_bytes": u64, "start_ns": pl.Int64, "completed_ns": pl.Int64}
    flowstats = pl.DataFrame(rows, schema=schema)
    return intervals, delay_hist, flowstats


CONNS_SCHEMA = {"conn": pl.UInt32, "flow": pl.UInt32, "size_bytes": pl.UInt64, "start_ns": pl.Int64,
                "completed_ns": pl.Int64, "acked_bytes": pl.UInt64, "retrans_pkts": pl.UInt64}


def _conns_table(exp: dict, work: Path) -> pl.DataFrame | None:
    """The simulator's `conns` table from the arrivals agents' CSVs: one row per connection,
    numbered after the resolved flows in arrival order over all groups (as the simulator)."""
    groups = [f for f in exp["flows"] if f.get("arrivals")]
    if not groups:
        return None
    parts = []
    for f in groups:
        p = work / f"conns{f['id']}.csv"
        if p.is_file() and p.stat().st_size:
            df = pl.read_csv(p, schema_overrides={"completed_ns": pl.Int64})
            parts.append(df.with_columns(pl.lit(f["id"]).alias("flow")))
    if not parts:
        return pl.DataFrame(schema=CONNS_SCHEMA)
    df = pl.concat(parts, how="vertical_relaxed").sort(["start_ns", "flow", "i"])
    n = len(exp["flows"])
    return df.with_columns((pl.int_range(pl.len()) + n).alias("conn")).select(
        [pl.col(c).cast(t) for c, t in CONNS_SCHEMA.items()])


def collect(exp: dict, work: Path, agents: list[dict]):
    """Turn the engine's column files and the agents' samples into the results tables."""
    d = work / "engine"
    st = json.loads((d / "stats.json").read_text())
    man = st.pop("columns")
    pk_full = _read_table(d, "packets", man["packets"])
    queues = _read_table(d, "queues", man["queues"])
    release = _read_table(d, "release", man["release"])
    pk = pk_full.drop("intended_ns")
    app = {f["flow"]: f["app_bytes"] for f in st["flows"]}
    completed = {}
    for f in exp["flows"]:
        if f.get("bytes"):
            c = st["flows"][f["id"]].get("completed_ns")
            if c is None:  # fall back on the agent's own observation (SIOCOUTQ = 0)
                c = next((a.get("completed_ns") for a in agents if a.get("flow") == f["id"]), None)
            completed[f["id"]] = c
    intervals, delay_hist, flowstats = derived_tables(pk, exp, app, completed)
    tables = {"flows": _flows_table(exp, work), "queues": queues, "intervals": intervals,
              "delay_hist": delay_hist, "flowstats": flowstats}
    conns = _conns_table(exp, work)
    if conns is not None:
        tables["conns"] = conns
        # app_bytes of an arrivals group: bytes acknowledged over its connections (simulator)
        acked = dict(conns.group_by("flow").agg(pl.col("acked_bytes").sum()).iter_rows())
        tables["flowstats"] = flowstats.with_columns(
            pl.col("flow").replace_strict(acked, default=None, return_dtype=pl.UInt64)
            .fill_null(pl.col("app_bytes")).alias("app_bytes"))
    if exp.get("record_packets", True):
        tables["packets"] = pk
        tables["emu_release"] = release
    meta = {
        "engine": {k: v for k, v in st.items() if k not in ("flows", "release_error_ns")},
        "release_error_ns": st["release_error_ns"],
        "engine_cpu_frac": st["engine_cpu_frac"],
        "engine_busy_frac": st.get("engine_busy_frac"),
        "engine_flows": st["flows"],
    }
    return tables, meta


def accuracy(exp: dict, meta: dict) -> dict:
    """The run's accuracy verdict: flags and the thresholds behind them."""
    rtts = [f.get("base_rtt_ns") for f in exp["flows"] if f.get("base_rtt_ns")]
    min_rtt = min(rtts) if rtts else None
    p99_lim = MAX_RELEASE_P99_NS
    if min_rtt:
        p99_lim = min(p99_lim, int(MAX_RELEASE_P99_RTT_FRAC * min_rtt))
    p999_lim = int(MAX_RELEASE_P999_RTT_FRAC * min_rtt) if min_rtt else 2 * MAX_RELEASE_P99_NS
    re_ = meta["release_error_ns"]
    reasons = []
    if re_["p99"] > p99_lim:
        reasons.append(f"release error p99 {re_['p99'] / 1e3:.0f} µs > {p99_lim / 1e3:.0f} µs")
    if re_["p999"] > p999_lim:
        reasons.append(f"release error p99.9 {re_['p999'] / 1e3:.0f} µs > {p999_lim / 1e3:.0f} µs")
    if meta.get("tun_drops"):
        reasons.append(f"{meta['tun_drops']} packets dropped by TUN devices (outside the model)")
    c = meta["engine"].get("counters", {})
    if c.get("tun_write_errors"):
        reasons.append(f"{c['tun_write_errors']} TUN write errors")
    if c.get("dead_fds"):
        reasons.append(f"{c['dead_fds']} TUN fds failed during the run")
    steal = meta.get("steal_frac")
    if steal is not None and steal > MAX_STEAL_FRAC:
        reasons.append(f"host steal time {steal * 100:.1f} % > {MAX_STEAL_FRAC * 100:.0f} %")
    busy = meta.get("engine_busy_frac")
    if busy is None:
        busy = meta.get("engine_cpu_frac", 0)
    if busy > MAX_ENGINE_CPU_FRAC:
        reasons.append(f"engine busy {busy * 100:.0f} % of its core (CPU time minus idle "
                       f"spinning) > {MAX_ENGINE_CPU_FRAC * 100:.0f} % (saturated)")
    for a in meta.get("agents", []):
        if a.get("error") or not a.get("connected", True):
            reasons.append(f"flow {a['flow']}: {a.get('error') or 'did not connect'}")
    return {"accurate": not reasons, "inaccurate_reasons": reasons,
            "thresholds": {"release_p99_ns": p99_lim, "release_p999_ns": p999_lim,
                           "steal_frac": MAX_STEAL_FRAC, "engine_cpu_frac": MAX_ENGINE_CPU_FRAC,
                           "tun_drops": 0}}


def emulate(experiment: dict, progress=False, spin_ns: int = 50_000):
    """Run a resolved experiment on the emulation backend; returns ({table: DataFrame},
    emu metadata, wall seconds). Raises doctor.EmuUnavailable before creating anything when
    the machine cannot run it."""
    from ..doctor import preflight
    preflight(experiment)
    emu = Emulation(experiment, engine_bin=binary("engine"), agent_bin=binary("agent"),
                    spin_ns=spin_ns, progress=progress)
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
    import threading
    return threading.current_thread() is threading.main_thread()


__all__ = ["emulate", "clean", "binary", "Emulation", "EmuError", "list_namespaces"]
