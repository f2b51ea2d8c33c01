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


def write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", *key.split(".")).write_text(value)
