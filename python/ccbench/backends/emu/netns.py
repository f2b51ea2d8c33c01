"""Host namespaces: entering them, their TUN device, offloads, and the kernel settings an
experiment's `tcp` block maps to (sysctls and per-route options)."""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SIOCETHTOOL = 0x8946
# legacy ethtool get/set commands (include/uapi/linux/ethtool.h): (get, set)
ETHTOOL_FEATURES = {"sg": (0x18, 0x19), "tso": (0x1E, 0x1F), "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}


def setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


@contextlib.contextmanager
def in_netns(name: str):
    """Move the calling thread into network namespace `name` for the block."""
    root = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        setns(target)
        try:
            yield
        finally:
            setns(root)
    finally:
        os.close(target)
        os.close(root)


def open_tun(name: str) -> int:
    """Create TUN interface `name` (no packet info) in the current namespace; its fd."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def _ethtool(sock: socket.socket, ifname: str, cmd: int, data: int = 0) -> int:
    ev = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifr = struct.pack("16sP16x", ifname.encode(), ctypes.addressof(ev))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", ev.raw)[1]


def offloads_off(ifname: str) -> dict:
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


def write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", *key.split(".")).write_text(value)


def host_sysctls(exp: dict) -> dict[str, str]:
    """Per-namespace sysctls of an experiment: IPv6 off, no cached metrics between flows,
    SACK as `tcp.sack`, receive buffers of at least twice the receive window (or `rmem`),
    send buffers as `wmem` (Linux's default 4096 16384 4MiB), slow start after idle, tail
    loss probes, SACK compression, `tcp_min_tso_segs` and F-RTO as the `tcp` block says."""
    tcp = exp.get("tcp", {})
    buf = max(int(tcp.get("rwnd_bytes") or 32 << 20) * 2, 8 << 20)
    rmem = tcp.get("rmem") or [4096, 131072, buf]
    # the send buffer as the simulator's: Linux's default tcp_wmem unless the experiment says
    wmem = tcp.get("wmem") or [4096, 16384, 4 << 20]
    return {
        "net.ipv6.conf.all.disable_ipv6": "1",
        "net.ipv6.conf.default.disable_ipv6": "1",
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_sack": "1" if tcp.get("sack", True) else "0",
        "net.ipv4.tcp_rmem": " ".join(str(int(v)) for v in rmem),
        "net.ipv4.tcp_moderate_rcvbuf": "1" if tcp.get("moderate_rcvbuf", True) else "0",
        "net.ipv4.tcp_wmem": " ".join(str(int(v)) for v in wmem),
        "net.ipv4.tcp_slow_start_after_idle": "1" if tcp.get("slow_start_after_idle", True) else "0",
        # tail loss probes: 0 disables, 3 (the default) enables; SACK compression: 0 ACKs
        # every out-of-order segment at once (a TCP profile older than 3.10 / 4.18 sets both)
        "net.ipv4.tcp_early_retrans": "3" if tcp.get("tlp", True) else "0",
        "net.ipv4.tcp_comp_sack_nr": "44" if tcp.get("sack_compression", True) else "0",
        # RACK off: this kernel (≥ 4.15) has no FACK any more, so it falls back to dupthresh
        "net.ipv4.tcp_recovery": "1" if tcp.get("rack", True) else "0",
        # the fewest segments tcp_tso_autosize puts in one skb (Linux's default 2)
        "net.ipv4.tcp_min_tso_segs": str(int(tcp.get("min_tso_segs", 2))),
        # F-RTO: 0 = off; 2 (the default) = RFC 5682 since 3.10 (pre-3.10 has no switch here)
        "net.ipv4.tcp_frto": "0" if tcp.get("frto") == "off" else "2",
    }


def kernel_switches(exp: dict) -> dict[str, dict]:
    """The `tcp` settings this kernel has no switch for, each as {requested, kernel, applied}:
    what the experiment asked, what the running kernel does, and whether they agree (the
    run's `emu` metadata; docs/experiment-file.md)."""
    tcp = exp.get("tcp", {})

    def switch(requested, kernel) -> dict:
        return {"requested": requested, "kernel": kernel, "applied": requested == kernel}

    frto = tcp.get("frto", "rfc5682")
    return {
        # TCP_TIMEOUT_INIT (1 s) is fixed at compile time: no sysctl or route metric sets it
        "initial_rto_ns": switch(int(tcp.get("initial_rto_ns", 10**9)), 10**9),
        # rate-halving (prr: false) is gone from kernels since 3.2
        "prr": switch(bool(tcp.get("prr", True)), True),
        # RFC 5682 F-RTO, or none with tcp_frto = 0; the pre-3.10 F-RTO is simulator-only
        "frto": switch(frto, "off" if frto == "off" else "rfc5682"),
        # the kernel always undoes spurious reductions
        "undo": switch(bool(tcp.get("undo", True)), True),
        # TSQ sees only the TUN device, which orphans each skb it takes: it never binds on the
        # emulated host link, as if off
        "tsq": switch(tcp.get("tsq", "off"), "off"),
    }


def route_options(exp: dict) -> str:
    """`ip route` options carrying the per-connection settings no sysctl has: initial window,
    initial receive window (when given), minimum RTO (whole ms), and `quickack 1` when delayed ACKs are off."""
    tcp = exp.get("tcp", {})
    opts = [f"initcwnd {int(tcp.get('init_cwnd', 10))}"]
    if tcp.get("init_rwnd"):
        # the SYN-ACK's window cap of a kernel before 4.19 (a TCP profile sets it)
        opts.append(f"initrwnd {int(tcp['init_rwnd'])}")
    if tcp.get("min_rto_ns"):
        opts.append(f"rto_min {max(1, round(tcp['min_rto_ns'] / 1e6))}ms")
    if not tcp.get("delayed_ack", True):
        opts.append("quickack 1")
    return " ".join(opts)
