"""`ccbench export pcap` and `ccbench import pcap` (wired into ccbench.cli)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_run_args(r: argparse.ArgumentParser) -> None:
    from .export import DEFAULT_SNAPLEN
    r.add_argument("--pcap", action="store_true",
                   help="also write pcapng captures to DIR/pcap/: every host's interface and "
                        "both sides of each bottleneck (docs/captures.md)")
    r.add_argument("--pcap-snaplen", type=int, default=DEFAULT_SNAPLEN, metavar="BYTES",
                   help=f"bytes kept per captured packet (default {DEFAULT_SNAPLEN}: all "
                        "headers; 0 = whole packets)")


def run_snaplen(a) -> int | None:
    """api.run's `pcap` argument from the run command's flags."""
    return a.pcap_snaplen if getattr(a, "pcap", False) else None


def cmd_export(a) -> int:
    from .export import export_pcap
    s = export_pcap(a.dir, a.output, snaplen=a.snaplen, progress=not a.quiet)
    out = Path(a.output) if a.output else Path(a.dir) / "pcap"
    for p in s.get("points", []):
        print(f"{out / p['file']}: {p['packets']:,} packets ({p['description']})")
    return 0


def cmd_import(a) -> int:
    from .importer import import_pcap
    res = import_pcap(a.inputs, a.output, mapping=a.mapping, coco=a.coco,
                      sample_interval=a.sample_interval)
    imp = res.meta["import"]
    print(f"imported {imp['packets']:,} data packets of {len(res.experiment['flows'])} flows "
          f"({imp['mode']} mode) → {res.path}")
    for w in imp.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    return 0


def add_parsers(sub) -> None:
    from .export import DEFAULT_SNAPLEN
    ex = sub.add_parser("export", help="export a run's packets: `ccbench export pcap RESULTS`")
    exs = ex.add_subparsers(dest="what", required=True)
    e = exs.add_parser("pcap", help="pcapng per capture point (hosts, both sides of each "
                       "bottleneck) of a simulated run (simulated again with the capture on)")
    e.add_argument("dir", help="results directory")
    e.add_argument("-o", "--output", help="output directory (default DIR/pcap)")
    e.add_argument("--snaplen", type=int, default=DEFAULT_SNAPLEN,
                   help=f"bytes kept per packet (default {DEFAULT_SNAPLEN}; 0 = whole packets)")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(fn=cmd_export)

    im = sub.add_parser("import", help="import testbed captures: `ccbench import pcap DIR|FILES`")
    ims = im.add_subparsers(dest="what", required=True)
    i = ims.add_parser("pcap", help="pcap/pcapng captures → a standard results directory "
                       "(metrics, report, compare and check work on it)",
                       description="CoCo-Beholder mode: a dumps folder (metadata.json and "
                       "<k>-<scheme>-sender/receiver.pcap) as it is. Generic mode: capture "
                       "files plus --mapping YAML naming the flows and capture points "
                       "(docs/captures.md).")
    i.add_argument("inputs", nargs="+", help="a CoCo-Beholder dumps folder, or capture files")
    i.add_argument("-o", "--output", required=True, help="results directory to write")
    i.add_argument("--mapping", metavar="YAML",
                   help="generic mode: flows (sender/receiver address and port, scheme) and "
                        "which file is whose capture")
    i.add_argument("--coco", action="store_true",
                   help="force CoCo-Beholder mode (default: when the folder has metadata.json)")
    i.add_argument("--sample-interval", type=float, default=0.01, metavar="S",
                   help="bin width of the derived per-interval tables, s (default 0.01)")
    i.set_defaults(fn=cmd_import)
