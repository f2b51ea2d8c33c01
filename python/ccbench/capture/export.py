"""pcapng export of a run: one file per capture point in RESULTS/pcap/.

Simulator runs are deterministic, so ``export_pcap`` on a finished simulated run simulates
it again with the capture on and checks that every table comes out identical before it keeps
the files. Emulated runs capture while they run (``ccbench run --backend emu --pcap``): the
engine writes the packets' real bytes.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import yaml

#: Default bytes kept per packet: the IPv4 and TCP headers with every option (20 + 60).
DEFAULT_SNAPLEN = 80
PCAP_DIR = "pcap"
MAPPING_FILE = "mapping.yaml"

from .errors import CaptureError  # noqa: E402,F401 (re-exported: ccbench.capture.CaptureError)


def host_addresses(experiment: dict) -> dict[str, str]:
    """IPv4 address of every host: the emulator's addresses, so both backends' captures
    name hosts alike."""
    from ..backends.emu.common import host_addr
    hosts = [n["name"] for n in experiment["nodes"] if n.get("kind", "host") == "host"]
    return {h: host_addr(i) for i, h in enumerate(hosts)}


def capture_config(experiment: dict, out_dir: str | Path, snaplen: int = DEFAULT_SNAPLEN) -> dict:
    """The simulator's capture settings (crates/sim/src/capture.rs CaptureConfig)."""
    from ..backends.emu.common import PORT_BASE
    if snaplen < 0:
        raise CaptureError(f"--pcap-snaplen {snaplen}: must be >= 0 (0 keeps whole packets)")
    if 0 < snaplen < 60:
        raise CaptureError(f"--pcap-snaplen {snaplen}: below 60 bytes the TCP options are cut; "
                           f"use 60 or more (default {DEFAULT_SNAPLEN}), or 0 for whole packets")
    return {"dir": str(out_dir), "snaplen": int(snaplen), "addresses": host_addresses(experiment),
            "port_base": PORT_BASE, "epoch_ns": 0}


def summary_of(stats: dict) -> dict:
    """The run's capture summary from the simulator's stats (raises on a write error)."""
    cap = stats.get("capture")
    if cap is None:
        raise CaptureError("the simulator wrote no capture")
    if "Err" in cap:
        raise CaptureError(cap["Err"])
    s = dict(cap["Ok"])
    s["dir"] = PCAP_DIR
    return s


def export_pcap(results, out_dir: str | Path | None = None, *, snaplen: int = DEFAULT_SNAPLEN,
                progress=False, run_scheme_code: bool = False) -> dict:
    """Write the pcapng captures of a finished run; returns the capture summary
    ({dir, snaplen, points: [{name, file, kind, description, packets}]}).

    Simulated runs are simulated again with the capture on (same seed, same tables: checked);
    emulated runs keep the captures the engine wrote during the run. A results folder is data:
    a run whose schemes are code (a Python scheme, a BPF program compiled for the simulator) is
    simulated again only with ``run_scheme_code`` (the user vouching for the files it names)."""
    from ..backends import sim as _sim
    from ..results import Results, load
    if not isinstance(results, Results):
        results = load(results)
    backend = results.meta.get("backend", "sim")
    if backend != "sim":
        have = results.path / PCAP_DIR
        if have.is_dir() and any(have.glob("*.pcapng")):
            if out_dir is not None and Path(out_dir).resolve() != have.resolve():
                shutil.copytree(have, out_dir, dirs_exist_ok=True)
            return results.meta.get("capture") or {"dir": str(have)}
        raise CaptureError(
            f"{results.path}: a {backend} run's packets can only be captured while it runs: "
            "rerun it with `ccbench run --backend emu --pcap`")
    out = Path(out_dir) if out_dir else results.path / PCAP_DIR
    exp = dict(results.experiment)
    code = sorted({(f.get("bpf") or {}).get("path") or f.get("python") or ""
                   for f in exp.get("flows", []) if f.get("bpf") or f.get("python")})
    if code and not run_scheme_code:
        raise CaptureError(
            f"{results.path}: simulating this run again would run its schemes' code ("
            f"{', '.join(map(str, code))}). Fix: if you trust those files, add "
            "--run-scheme-code; or rerun the experiment yourself with `ccbench run FILE --pcap`")
    tmp = Path(tempfile.mkdtemp(prefix=".pcap-", dir=out.parent if out.parent.exists() else None))
    try:
        tables, stats, _ = _sim.simulate(exp, progress=progress,
                                         capture=capture_config(exp, tmp / "pcap", snaplen))
        summary = summary_of(stats)
        for name in ("flowstats", "intervals", "delay_hist"):
            old = getattr(results, name)
            new = tables.get(name)
            if old is not None and new is not None and not old.equals(new.cast(old.schema)):
                raise CaptureError(
                    f"{results.path}: simulating again gave a different {name} table (another "
                    "ccbench version?); the capture would not match these results. Rerun with "
                    "`ccbench run FILE --pcap`")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(tmp / "pcap"), str(out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_mapping(results, out)
    if out == results.path / PCAP_DIR:
        meta = json.loads((results.path / "metadata.json").read_text())
        meta["capture"] = summary
        (results.path / "metadata.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return summary


def write_mapping(results, pcap_dir: Path) -> Path:
    """mapping.yaml beside an export's files: each flow's endpoints and the captures at its
    sender and receiver, and the run's resolved experiment, so `ccbench import pcap DIR`
    rebuilds the run (the round trip of docs/captures.md)."""
    from ..backends.emu.common import PORT_BASE
    exp = results.experiment
    addr = host_addresses(exp)
    flows = []
    for f in exp["flows"]:
        flows.append({"sender": addr[f["src"]], "receiver": f"{addr[f['dst']]}:{PORT_BASE + f['id']}",
                      "scheme": f["scheme"], "label": f["label"],
                      "sender_capture": f"{f['src']}.pcapng",
                      "receiver_capture": f"{f['dst']}.pcapng"})
    p = Path(pcap_dir) / MAPPING_FILE
    p.write_text("# written by ccbench export pcap: `ccbench import pcap " + str(pcap_dir) +
                 " -o DIR` rebuilds the run from these captures\n" +
                 yaml.safe_dump({"flows": flows, "experiment": exp}, sort_keys=False))
    return p
