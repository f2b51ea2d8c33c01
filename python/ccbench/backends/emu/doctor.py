"""`ccbench doctor`: can this machine run the emulation backend, and how well?

`checks()` inspects the machine without creating anything; `preflight(experiment)` runs the
checks an emulation run needs and raises `EmuUnavailable` with every problem and its fix
before a single namespace, interface or process is created.
"""
from __future__ import annotations

import os
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from .common import BIN_ENV, BIN_NAMES, binary, cpu_times, cpu_usage

CC_AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
CC_ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


class EmuUnavailable(RuntimeError):
    """The emulation backend cannot run this experiment here; the message says how to fix it."""


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def kernel_ccs() -> tuple[list[str], list[str]]:
    """(available, allowed) congestion controls of the running kernel."""
    def read(p: Path) -> list[str]:
        try:
            return p.read_text().split()
        except OSError:
            return []
    return read(CC_AVAILABLE), read(CC_ALLOWED)


def kernel_modules() -> set[str]:
    """Congestion controls the running kernel offers or can load: the available ones and
    those with a tcp_NAME module under /lib/modules."""
    mods = Path("/lib/modules") / os.uname().release / "kernel" / "net" / "ipv4"
    found = {p.name.split(".")[0][len("tcp_"):] for p in mods.glob("tcp_*.ko*")} if mods.is_dir() else set()
    return set(kernel_ccs()[0]) | found


def _timer_precision(n: int = 200, sleep_s: float = 100e-6) -> dict:
    """Overshoot of a 100 µs sleep (what an engine without spinning would see), µs."""
    over = []
    for _ in range(n):
        t = time.perf_counter_ns()
        time.sleep(sleep_s)
        over.append((time.perf_counter_ns() - t) / 1e3 - sleep_s * 1e6)
    over.sort()
    return {"p50_us": round(statistics.median(over), 1),
            "p99_us": round(over[int(0.99 * (len(over) - 1))], 1), "max_us": round(over[-1], 1)}


def _steal_frac(interval: float = 0.3) -> float | None:
    try:
        a = cpu_times()
        time.sleep(interval)
        return cpu_usage(a, cpu_times())["cpu"]["steal"]
    except (OSError, ValueError, IndexError, KeyError):
        return None


def checks(schemes: list[str] | None = None, measure: bool = True) -> list[Check]:
    """Everything the emulation backend needs, without creating anything."""
    out = []
    root = os.geteuid() == 0
    out.append(Check("root", root, "running as root" if root else f"running as uid {os.geteuid()}",
                     "run as root (sudo ccbench ...): namespaces and TUN devices need CAP_NET_ADMIN"))
    tun = os.path.exists("/dev/net/tun")
    out.append(Check("tun", tun, "/dev/net/tun present" if tun else "/dev/net/tun missing",
                     "modprobe tun (and create the node: mkdir -p /dev/net && mknod /dev/net/tun c 10 200)"))
    netns = os.path.exists("/proc/self/ns/net") and shutil.which("ip") is not None
    out.append(Check("netns", netns,
                     "network namespaces and iproute2 present" if netns else
                     "no /proc/self/ns/net or no `ip` command",
                     "install iproute2 and use a kernel with CONFIG_NET_NS"))
    for name in ("engine", "agent", "dgram"):
        p = binary(name)
        out.append(Check(f"{name} binary", p is not None,
                         str(p) if p else f"{BIN_NAMES[name]} not found",
                         "run `make build` (builds target/release/ccbench-emu, ccbench-agent "
                         "and ccbench-dgram), "
                         f"or set {BIN_ENV} to the directory holding them",
                         # only datagram schemes need ccbench-dgram (preflight says so)
                         required=name != "dgram"))
    avail, allowed = kernel_ccs()
    out.append(Check("congestion controls", bool(avail),
                     f"available: {' '.join(avail) or '-'}; allowed for non-root: {' '.join(allowed) or '-'}",
                     "mount /proc", required=bool(schemes)))
    from .bpf import missing as bpf_missing
    why = bpf_missing()
    out.append(Check("bpf schemes", why is None,
                     "clang, bpftool, libbpf headers and kernel BTF present: `scheme: {bpf: ...}` "
                     "can be built" if why is None else why.split(". Fix:")[0],
                     "make bpf (docs/bpf-schemes.md)", required=False))
    skips = bpf_skipping_kernel()
    if skips:
        out.append(Check("bpf programs always run", False, skips,
                         "read docs/bpf-schemes.md, 'Programs the kernel does not run': BPF "
                         "scheme runs on this kernel are checked and repaired, and marked "
                         "inaccurate when it happened", required=False))
    for s in schemes or []:
        ok = s in avail
        out.append(Check(f"scheme {s}", ok, "available in the kernel" if ok else "not available in the kernel",
                         f"modprobe tcp_{s} (then it appears in {CC_AVAILABLE})"))
    ncpu = os.cpu_count() or 1
    out.append(Check("cpus", ncpu >= 2, f"{ncpu} CPU(s)",
                     "use a machine with ≥ 2 CPUs: the engine spins on one, applications need another",
                     required=False))
    if measure:
        tp = _timer_precision()
        out.append(Check("timer precision", tp["p99_us"] < 500,
                         f"100 µs sleep overshoot p50 {tp['p50_us']} µs, p99 {tp['p99_us']} µs, max {tp['max_us']} µs",
                         "expect imprecise emulation (busy or virtualised host)", required=False))
        st = _steal_frac()
        if st is not None:
            out.append(Check("steal time", st < 0.05, f"{st * 100:.1f} % of CPU time stolen by the host now",
                             "runs with steal > 5 % have millisecond timing errors; use a quieter host",
                             required=False))
    out.extend(leftover_checks())
    return out


def leftover_checks() -> list[Check]:
    """Emulation runs on this machine: killed runs' leftovers (a warning naming each, with
    `ccbench clean`), and runs in progress (informational)."""
    try:
        from .cleanup import runs
        found = runs()
    except Exception as e:  # doctor must report, not fail
        return [Check("leftovers", False, f"could not list emulation runs: {e}", "",
                      required=False)]
    dead = {r: e for r, e in found.items() if not e["live"]}
    live = {r: e for r, e in found.items() if e["live"]}

    def what(e: dict) -> str:
        parts = []
        if e["namespaces"]:
            parts.append(f"{len(e['namespaces'])} namespaces")
        if e["processes"]:
            parts.append(f"{len(e['processes'])} processes")
        if e.get("bpf"):
            parts.append("registered BPF congestion control " + " ".join(e["bpf"]))
        if e["workdir"]:
            parts.append("work dir")
        return ", ".join(parts) or "nothing"

    out = [Check("leftovers", not dead,
                 "none" if not dead else "killed runs left " + "; ".join(
                     f"{r} ({what(e)})" for r, e in dead.items()),
                 "`ccbench clean` removes them (running runs are never touched)",
                 required=False)]
    if live:
        out.append(Check("running emulations", True, "; ".join(
            f"{r} (pid {e['owner']}: {what(e)})" for r, e in live.items()), required=False))
    return out


def experiment_schemes(experiment: dict) -> list[str]:
    """Kernel congestion controls the experiment needs (not command schemes, not UDP sources
    or latency probes)."""
    from .agents import kernel_cc
    from .common import kernel_tcp
    return sorted({kernel_cc(f) for f in experiment.get("flows", [])
                   if kernel_tcp(f) and not f.get("bpf")})


def preflight(experiment: dict) -> list[Check]:
    """Raise EmuUnavailable (with every problem and its fix) unless the emulation backend can
    run `experiment` here. Creates nothing."""
    problems = []
    cs = checks(experiment_schemes(experiment), measure=False)
    for c in cs:
        if c.required and not c.ok:
            problems.append(f"{c.name}: {c.detail}. Fix: {c.fix}")
    avail, _ = kernel_ccs()
    for f in experiment.get("flows", []):
        if f.get("command"):
            continue
        # UDP CBR, probes, app-rate, on/off and arrivals run on the agent (docs/emulation.md,
        # "Workloads")
        if f["scheme"] in ("udp", "probe"):
            continue
        if f.get("transport") == "dgram":  # ccbench-dgram, in user space (docs/datagram.md)
            if binary("dgram") is None:
                problems.append(f"flow {f['id'] + 1} ({f.get('label', '')}) runs the datagram scheme "
                                f"{f['scheme']!r}: ccbench-dgram not found. Fix: make build "
                                f"(builds target/release/ccbench-dgram), or set {BIN_ENV}")
            continue
        if f.get("bpf"):
            from .bpf import missing
            if (why := missing()) is not None:
                problems.append(f"flow {f['id'] + 1} ({f.get('label', '')}) is a BPF scheme: {why}")
            continue
        if f.get("python"):
            from .control import is_controller
            if not is_controller(f["python"], dict(f.get("params") or {})):
                problems.append(
                    f"flow {f['id'] + 1} ({f.get('label', '')}) is a per-ACK Python scheme ({f['python']}): "
                    "per-ACK hooks run in the simulator's TCP endpoint only; on the kernel a "
                    "periodic ccbench.cc.Controller can drive the flow through socket options "
                    "(docs/python-schemes.md, \"On the kernel\"). Fix: run it with --backend sim, "
                    "or write it as a Controller")
                continue
            kcc = f.get("kernel_cc") or "cubic"
            if kcc not in avail:
                problems.append(
                    f"flow {f['id'] + 1} ({f.get('label', '')}): the controller's kernel congestion "
                    f"control {kcc!r} is not offered by this kernel (available: {' '.join(avail)}). "
                    f"Fix: set scheme.kernel to one of them")
            continue
        if f["scheme"] not in avail:
            problems.append(
                f"flow {f['id'] + 1} ({f.get('label', '')}) uses congestion control {f['scheme']!r}, which "
                f"this kernel does not offer (available: {' '.join(avail) or 'none'}). "
                f"Fix: modprobe tcp_{f['scheme']}, or run this experiment on the simulator (--backend sim)")
        if f.get("params"):
            problems.append(
                f"flow {f['id'] + 1} ({f.get('label', '')}) sets parameters {f['params']} of {f['scheme']}: "
                "kernel algorithms take module-wide parameters (/sys/module/tcp_*/parameters), not "
                "per-flow ones. Fix: remove params for --backend emu")
    # flow groups whose own tcp settings would need two values in one namespace or route
    from .tcpset import plan
    problems += plan(experiment).problems
    if problems:
        raise EmuUnavailable("the emulation backend cannot run this experiment:\n  - "
                             + "\n  - ".join(dict.fromkeys(problems)))
    return cs


def report(schemes: list[str] | None = None) -> tuple[str, bool]:
    """Human-readable doctor output and whether every required check passed."""
    cs = checks(schemes)
    lines = []
    ok = True
    for c in cs:
        mark = "ok  " if c.ok else ("FAIL" if c.required else "warn")
        ok &= c.ok or not c.required
        lines.append(f"[{mark}] {c.name:<20} {c.detail}")
        if not c.ok:
            lines.append(f"       fix: {c.fix}")
    return "\n".join(lines), ok


def bpf_skipping_kernel(btf_path: str = "/sys/kernel/btf/vmlinux") -> str | None:
    """A description when this kernel carries the sandbox patch that runs no BPF program in the
    context of PID 1's threads unless PID 1 loaded it (seen on Firecracker guest kernels: a
    `tgid == 1 && !prog->aux->init_owned` test in __bpf_prog_enter); None otherwise. Detected
    by the patch's field name in the kernel's BTF (docs/bpf-schemes.md)."""
    try:
        with open(btf_path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0init_owned\0" not in data:
        return None
    return ("this kernel has bpf_prog_aux.init_owned: it skips BPF programs that run while one "
            "of PID 1's threads is current, so a BPF scheme now and then loses a hook call")
