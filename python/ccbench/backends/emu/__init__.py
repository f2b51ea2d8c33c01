"""The emulation backend: real Linux TCP in network namespaces, links by the shared netmodel.

    emulate(experiment) → ({table: DataFrame}, emu metadata dict, wall seconds)

Every host of the topology becomes a network namespace `ccb-<runid>-<host>` holding one TUN
interface (`ccbtun`, checksum and segmentation offloads on: the engine cuts the kernel's GSO
packets into segments itself, docs/emulation.md "Offloads"; MTU 1500, txqueuelen 10000, IPv6
off). The TUN fds are
opened here (inside each namespace) and handed to one real-time engine process in the root
namespace (`ccbench-emu`, crates/emu), which carries every packet through the topology's links
with the same netmodel code as the simulator. Flow agents (`ccbench-agent`) run inside the
host namespaces: a receiver per flow listening on port PORT_BASE + flow id, and a sender that
connects at the flow's start with TCP_CONGESTION set and samples TCP_INFO.

Everything created carries the run's prefix; `teardown` runs on success, error, SIGINT and
SIGTERM, and `clean()` (``ccbench clean``) removes what a killed run left behind.
See docs/emulation.md.

Modules, one concern each:

* `common`: names, addresses, binaries, `EmuError`;
* `netns`: entering namespaces, TUN devices, offloads, writing sysctls;
* `tcpset`: the experiment's `tcp` settings per host (sysctls, routes, socket options), from
  the table of ccbench.config.tcpkeys;
* `doctor`: can this machine run it (`ccbench doctor`, the preflight of every run);
* `agents`: the flow agents' command lines; `commands`: command schemes (real programs);
* `run`: one run (`Emulation`, `emulate`); `cleanup`: finding and removing what runs leave;
* `collect`: engine columns and agent samples → results tables; `accuracy`: the verdict.
"""
from .cleanup import clean, list_namespaces, our_processes, runs
from .common import BIN_ENV, BIN_NAMES, PORT_BASE, PREFIX, WORK_ROOT, EmuError, binary
from .run import Emulation, emulate


__all__ = ["emulate", "clean", "binary", "Emulation", "EmuError", "list_namespaces",
           "our_processes", "runs", "WORK_ROOT", "PORT_BASE", "PREFIX", "BIN_ENV", "BIN_NAMES"]
