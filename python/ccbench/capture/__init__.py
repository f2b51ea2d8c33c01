"""Packet captures in and out (docs/captures.md).

* :mod:`.export`: pcapng files per capture point (every host's interface, both sides of every
  bottleneck) from a simulated run (synthesised IPv4/TCP headers) or written by the emulator
  (the real bytes); ``ccbench run --pcap`` and ``ccbench export pcap``.
* :mod:`.scan`: the streaming Rust reader (``_core.PcapScanner``) as chunks of polars frames.
* :mod:`.importer`: ``ccbench import pcap`` — captures from a testbed (CoCo-Beholder's dumps
  folder, or any pcap/pcapng files with a small mapping) into a standard results directory.
"""
from __future__ import annotations

from .export import CaptureError, capture_config, export_pcap

__all__ = ["CaptureError", "capture_config", "export_pcap"]
