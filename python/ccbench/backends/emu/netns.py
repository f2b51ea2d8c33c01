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
