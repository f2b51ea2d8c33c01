"""Host namespaces: entering them, their TUN device, offloads and sysctls (which sysctls and
route options an experiment's `tcp` settings map to: tcpset.py)."""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
from pathlib import Path

from .common import run_cmd

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
IFF_VNET_HDR = 0x4000
TUNSETOFFLOAD = 0x400454D0
# include/uapi/linux/if_tun.h: checksum, TCPv4 segmentation, and segmentation with ECN (CWR)
TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO_ECN = 0x01, 0x02, 0x08
SIOCETHTOOL = 0x8946
# legacy ethtool get/set commands (include/uapi/linux/ethtool.h): (get, set)
ETHTOOL_FEATURES = {"tx-csum": (0x16, 0x17), "sg": (0x18, 0x19), "tso": (0x1E, 0x1F),
                    "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}


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


def open_tun(name: str, offloads: bool = False) -> int:
    """Create TUN interface `name` (no packet info) in the current namespace; its fd. With
    `offloads` every packet carries a `virtio_net_hdr` and the kernel may hand over TCPv4
    packets unsegmented and with partial checksums (the engine cuts them: crates/emu vnet.rs)."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    flags = IFF_TUN | IFF_NO_PI | (IFF_VNET_HDR if offloads else 0)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), flags))
    if offloads:
        fcntl.ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN)
    return fd


def _ethtool(sock: socket.socket, ifname: str, cmd: int, data: int = 0) -> int:
    ev = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifr = struct.pack("16sP16x", ifname.encode(), ctypes.addressof(ev))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", ev.raw)[1]


def set_offloads(ifname: str, segmentation: bool) -> dict:
    """Turn transmit checksums, SG, TSO and GSO on or off on `ifname` (in the current
    namespace) and GRO off; returns the state. (Linux's TCP builds GSO-sized packets either way;
    without the offloads the kernel cuts and checksums them in software before the TUN.)"""
    state = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for feat, (get, set_) in ETHTOOL_FEATURES.items():
            with contextlib.suppress(OSError):
                _ethtool(s, ifname, set_, int(segmentation and feat != "gro"))
            try:
                state[feat] = bool(_ethtool(s, ifname, get))
            except OSError as e:
                state[feat] = f"unknown ({e.strerror})"
    return state


def sysctl_path(key: str) -> Path:
    return Path("/proc/sys", *key.split("."))


def read_sysctl(key: str) -> str:
    return sysctl_path(key).read_text().strip()


def write_sysctl(key: str, value: str) -> None:
    sysctl_path(key).write_text(value)


# Each host namespace gets a TCP socket hash of its own (Linux >= 6.1). A namespace created
# from the host's shares the host's table (here 262 144 buckets), and a sock_diag dump of a
# namespace's TCP sockets walks every bucket of it: ~1.5 ms of kernel CPU per dump on the
# application CPU, which `ccbench-agent monitor` does every sample interval for a command
# scheme (docs/emulation.md, "Command schemes"). The size is taken from the *creating*
# namespace's net.ipv4.tcp_child_ehash_entries, so the hosts are created from inside a
# short-lived namespace that has it set: the host's own setting is never touched.
HOST_EHASH = 8192
EHASH_KEY = "net.ipv4.tcp_child_ehash_entries"
# what the kernel derives from a namespace's own hash size (tcp_set_hashinfo: buckets / 2 and
# max(128, buckets / 128)); the hosts keep the values a namespace sharing the machine's has
SIZED_KEYS = ("net.ipv4.tcp_max_tw_buckets", "net.ipv4.tcp_max_syn_backlog")


def add_namespaces(names: list[str], maker: str, created: list[str]) -> int | None:
    """Create the namespaces `names` (appended to `created` as each exists), each with its
    own TCP hash of HOST_EHASH buckets, from inside the
    namespace `maker`, which is deleted again. The limits the kernel sizes from the hash
    (SIZED_KEYS: TIME_WAIT sockets, half-open connections) are set to the maker's, i.e. what a
    namespace sharing the machine's table has. Returns HOST_EHASH, or None where the kernel
    has no per-namespace hash (before 6.1): the namespaces then share the machine's table."""
    run_cmd(["ip", "netns", "add", maker])
    created.append(maker)
    try:
        with in_netns(maker):
            shared = {k: read_sysctl(k) for k in SIZED_KEYS}
            write_sysctl(EHASH_KEY, str(HOST_EHASH))
        own = HOST_EHASH
    except OSError:
        own = None
    for ns in names:
        with in_netns(maker) if own else contextlib.nullcontext():
            run_cmd(["ip", "netns", "add", ns])
        created.append(ns)
        if own:
            with in_netns(ns):
                for k, v in shared.items():
                    write_sysctl(k, v)
    run_cmd(["ip", "netns", "del", maker])
    created.remove(maker)
    return own
