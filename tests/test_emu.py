"""End-to-end tests of the emulation backend (real kernel TCP in network namespaces).

They need root, /dev/net/tun, iproute2 and the binaries `make build` produces; otherwise they
are skipped with the reason. Runs are short (3–5 s at 30 Mbit/s) so the file stays under
~90 s of wall time.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench.backends import emu
from ccbench import doctor

REPO = Path(__file__).resolve().parents[1]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the emulation backend needs root (network namespaces, TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing"
    if shutil.which("ip") is None or not os.path.exists("/proc/self/ns/net"):
        return "network namespaces or iproute2 are missing"
    if emu.binary("engine") is None or emu.binary("agent") is None:
        return "ccbench-emu/ccbench-agent not built (run `make build`)"
    avail, _ = doctor.kernel_ccs()
    if not {"reno", "cubic", "bbr"} <= set(avail):
        return f"kernel lacks reno/cubic/bbr (has {avail})"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

RATE = 30_000_000


def _yaml(tmp: Path, scheme: str, duration: float = 3, extra: str = "") -> Path:
    p = tmp / f"{scheme}.yaml"
    p.write_text(f"""
duration: {duration}
seed: 1
central: {{rate: 30Mbit, delay: 10ms, queue: 1bdp}}
flows:
  - {{scheme: {scheme}, flows: 1, direction: "->"}}
{extra}""")
    return p


def _ours(run_id: str | None = None) -> tuple[list[str], list[int]]:
    """Namespaces and processes of one run (all ccbench runs when None). Tests scope their
    checks to their own runs: another test session may be emulating at the same time."""
    return emu.list_namespaces(run_id), emu.our_processes(run_id)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One 3 s run per kernel algorithm (reno, cubic, bbr), each alone on the dumbbell."""
    tmp = tmp_path_factory.mktemp("emu")
    links_before = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    out = {}
    for cc in ("reno", "cubic", "bbr"):
        # a small finite flow the other way: FCT and the ACK-side bookkeeping
        extra = '  - {scheme: cubic, flows: 1, direction: "<-", bytes: 200000, start: 0.5}\n'
        out[cc] = ccbench.run(_yaml(tmp, cc, extra=extra), tmp / f"res-{cc}", backend="emu")
    out["_links_before"] = links_before
    return out


@pytest.mark.parametrize("cc", ["reno", "cubic", "bbr"])
def test_kernel_flow_fills_the_link_and_tables_match_the_simulator(runs, cc, tmp_path):
    res = runs[cc]
    em = res.meta["emu"]
    assert res.meta["backend"] == "emu"
    assert em["agents"][0]["cc"] == cc and em["agents"][0]["connected"]
    # same tables and column types as the simulator's results for the same experiment
    sim = ccbench.run(res.experiment, tmp_path / "sim")
    for t in ("packets", "flows", "queues", "intervals", "delay_hist", "flowstats"):
        e, s = getattr(res, t), getattr(sim, t)
        assert e is not None and e.height > 0, t
        core = [c for c in s.columns if not c.startswith("cc_")]
        assert [c for c in e.columns if not c.startswith("cc_")] == core, t
        assert {c: e.schema[c] for c in core} == {c: s.schema[c] for c in core}, t
    # utilisation of the forward bottleneck over [1 s, 3 s]: a 1-BDP queue keeps it busy
    fwd = res.experiment["flows"][0]["path"][1]
    q = res.queues.filter(pl.col("link") == fwd)
    tx = dict(zip(q["time_ns"].to_list(), q["tx_bytes"].to_list()))
    util = (tx[3_000_000_000] - tx[1_000_000_000]) * 8 / (RATE * 2.0)
    assert 0.85 <= util <= 1.0 + 1e-9, util
    # kernel TCP state was sampled: cwnd, RTT ≈ base RTT (20 ms) plus queueing (≤ 1 BDP)
    f0 = res.flows.filter(pl.col("flow") == 0)
    assert f0.height >= 250
    assert f0["cwnd"].max() > 10
    srtt = f0.filter(pl.col("time_ns") > 1e9)["srtt_us"]
    assert 19_000 <= srtt.median() <= 2 * 20_000 + 5_000
    if cc == "bbr":
        bw = f0.filter(pl.col("time_ns") > 1e9)["cc_btl_bw"].median()
        assert 0.7 * RATE <= bw <= 1.2 * RATE, bw
    # the finite reverse flow completed, and FCT is at least its transfer time at the rate
    fs = res.flowstats.filter(pl.col("flow") == 1)
    assert fs["app_bytes"][0] == 200_000
    fct = fs["completed_ns"][0] - fs["start_ns"][0]
    assert 200_000 * 8 / RATE * 1e9 < fct < 2.5e9
    assert em["tun_drops"] == 0


def test_one_way_delay_is_propagation_plus_queueing_within_the_timing_error(runs):
    res = runs["cubic"]
    exp = res.experiment
    links = {l["id"]: l for l in exp["links"]}
    em = res.meta["emu"]
    max_err = em["release_error_ns"]["max"]
    pk = res.packets.filter((pl.col("flow") == 0) & pl.col("arrival_ns").is_not_null()).sort("sent_ns")
    path = [links[i] for i in exp["flows"][0]["path"]]
    prop = sum(l["delay_ns"] for l in path)

    def tx(b: int, l: dict) -> int:
        return -(-b * 8 * 10**9 // l["rate_bps"]) if l["rate_bps"] else 0

    ser = pl.Series([sum(tx(b, l) for l in path) for b in pk["size"].to_list()])
    # most a packet can wait in the queues of its path (full droptail queues)
    qmax = sum(l["queue"]["packets"] * tx(1500, l) for l in path)
    owd = pk["arrival_ns"] - pk["sent_ns"]
    base = ser + prop
    assert ((owd - base) >= 0).all()
    assert ((owd - base) <= qmax + max_err).all()
    # the engine's own accounting: arrival − intended = release error ≥ 0, ≤ the reported max
    r = pl.read_parquet(res.path / "emu_release.parquet")
    err = r["actual_ns"] - r["intended_ns"]
    assert err.min() >= 0 and err.max() == max_err
    # the first packet meets an empty queue: prop + serialisation + its release error
    assert (owd - base)[0] <= max(em["release_error_ns"]["p999"], 200_000)
    # the queueing the records show matches the queue the engine sampled: delay above base in
    # the second half ≈ bottleneck queue bytes / rate (means within 2 ms)
    late = pk.with_columns(q=owd - base).filter(pl.col("sent_ns") > 1.5e9)
    fwd = exp["flows"][0]["path"][1]
    qs = res.queues.filter((pl.col("link") == fwd) & (pl.col("time_ns") > 1.5e9))
    q_delay = (qs["bytes"].cast(pl.Float64) * 8 / RATE * 1e9).mean()
    assert abs(late["q"].mean() - q_delay) < 2e6, (late["q"].mean(), q_delay)


def test_successful_runs_leave_nothing_behind(runs):
    for cc in ("reno", "cubic", "bbr"):
        rid = runs[cc].meta["emu"]["run_id"]
        assert _ours(rid) == ([], [])
        assert not (emu.WORK_ROOT / rid).exists()
    after = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert after == runs["_links_before"]


def test_progress_shows_the_live_per_flow_rate(tmp_path, capsys, monkeypatch):
    """The engine reports per-flow delivered bytes every second of experiment time; the
    progress line shows the rate of the last second (one bulk flow: about the link rate)."""
    from ccbench.backends.emu import live
    fed = []
    orig = live.FlowRates.feed

    def feed(self, t_ns, nbytes):
        fed.append((t_ns, list(nbytes)))
        orig(self, t_ns, nbytes)
    monkeypatch.setattr(live.FlowRates, "feed", feed)
    ccbench.run(_yaml(tmp_path, "cubic", duration=4), tmp_path / "res", backend="emu", progress=True)
    # one line per second of experiment time (the first when the engine's loop passes 1 s)
    assert [round(t / 1e9) for t, _ in fed] == [1, 2, 3], fed
    assert all(abs(t - round(t / 1e9) * 1e9) < 50e6 for t, _ in fed), fed
    assert all(len(b) == 1 for _, b in fed)
    # seconds 2 and 3: the flow keeps the 30 Mbit/s link busy (bytes as IP length, as the link)
    for (ta, (a,)), (tb, (b,)) in zip(fed[1:], fed[2:]):
        mbps = (b - a) * 8 / ((tb - ta) / 1e9) / 1e6
        assert 0.7 * RATE / 1e6 <= mbps <= 1.3 * RATE / 1e6, mbps
    err = capsys.readouterr().err
    last = [ln for ln in err.splitlines() if ln.startswith("emulating: 100%")]
    assert last and "s emulated" in last[-1] and "Mbit/s #1 " in last[-1], err
    shown = float(last[-1].split("Mbit/s #1 ")[1].split()[0])
    assert 0.7 * RATE / 1e6 <= shown <= 1.3 * RATE / 1e6, last[-1]


def test_missing_kernel_algorithm_fails_before_anything_is_created(tmp_path):
    avail, _ = doctor.kernel_ccs()
    if "vegas" in avail:
        pytest.skip("tcp_vegas is loaded on this kernel")
    before = emu.list_namespaces()
    out = tmp_path / "res"
    with pytest.raises(doctor.EmuUnavailable) as ei:
        ccbench.run(_yaml(tmp_path, "vegas"), out, backend="emu")
    msg = str(ei.value)
    assert "vegas" in msg and "modprobe tcp_vegas" in msg and "--backend sim" in msg
    assert emu.list_namespaces() == before and not out.exists()
    # the CLI says the same, with exit status 2
    p = subprocess.run([sys.executable, "-m", "ccbench", "run", str(_yaml(tmp_path, "vegas")),
                        "--backend", "emu", "-o", str(out)], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 2 and "modprobe tcp_vegas" in p.stderr


def _start_cli_run(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """Start a 5 s CLI run; return it mid-run with its run id."""
    before = set(emu.list_namespaces())
    cmd = [sys.executable, "-m", "ccbench", "run", str(_yaml(tmp_path, "cubic", duration=5)),
           "--backend", "emu", "-o", str(tmp_path / "res"), "--no-plots", "--quiet"]
    p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    rid = None
    while time.monotonic() < deadline:
        new = sorted(set(emu.list_namespaces()) - before)
        if new:
            rid = new[0][: len("ccb-") + 6]
            if any(_is_client(pid) for pid in emu.our_processes(rid)):
                break
        time.sleep(0.05)
    else:
        p.kill()
        pytest.fail("the emulation run did not start its agents within 15 s")
    time.sleep(1.0)  # mid-run: traffic is flowing
    assert emu.list_namespaces(rid), "namespaces exist while the run is going"
    return p, rid


def _is_client(pid: int) -> bool:
    try:
        return b"client" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_tears_everything_down(tmp_path, sig):
    p, rid = _start_cli_run(tmp_path)
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert "interrupted" in err
    assert _ours(rid) == ([], [])
    assert not (tmp_path / "res").exists()


@pytest.fixture
def low_backlog():
    """The host's receive backlog at Linux's default (1000) for the test, whatever it was (a
    run killed before this one could have left it raised), put back after: so the raise and
    restore below are always exercised."""
    from ccbench.backends.emu import hostsys
    path = Path("/proc/sys/net/core/netdev_max_backlog")
    was = hostsys.read(hostsys.BACKLOG_KEY)
    path.write_text("1000")
    yield 1000
    path.write_text(str(was))


def test_sigkill_then_ccbench_clean(tmp_path, low_backlog):
    from ccbench.backends.emu import hostsys
    before = hostsys.read(hostsys.BACKLOG_KEY)
    assert before == low_backlog
    p, rid = _start_cli_run(tmp_path)
    deadline = time.monotonic() + 20
    while not (emu.WORK_ROOT / rid / "host.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    p.kill()
    p.wait(timeout=10)
    assert emu.list_namespaces(rid), "a SIGKILLed run leaves its namespaces (that is what clean is for)"
    # only this run: another test session may be emulating concurrently
    c = subprocess.run([sys.executable, "-m", "ccbench", "clean", "--run", rid], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stderr
    assert "removed 2 namespaces" in c.stdout, c.stdout  # hosts a1 and b1
    # the killed run had raised the host's receive backlog; clean puts it back
    assert f"restored 1 host settings: {hostsys.BACKLOG_KEY}={before}" in c.stdout, c.stdout
    assert hostsys.read(hostsys.BACKLOG_KEY) == before
    deadline = time.monotonic() + 5
    while _ours(rid) != ([], []) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ours(rid) == ([], [])
    assert not (emu.WORK_ROOT / rid).exists()


def test_workloads_pass_the_preflight_and_udp_needs_no_kernel_cc(tmp_path):
    """UDP CBR, app-rate, on/off and arrivals run on the flow agent (tests/test_emu_workloads.py):
    the preflight accepts them, and a UDP source is not a kernel CC to modprobe."""
    from ccbench import config
    from ccbench.doctor import experiment_schemes, preflight
    exp = config.resolve({"duration": 2, "central": {"rate": "20Mbit", "delay": "5ms"},
                          "flows": [{"scheme": "udp", "app-rate": "5Mbit"},
                                    {"scheme": "cubic", "onoff": {"on": "1s", "off": "1s"}},
                                    {"scheme": "reno", "arrivals": {"rate": 5, "size": "10KB"}}]})
    preflight(exp)
    assert experiment_schemes(exp) == ["cubic", "reno"]


def test_a_run_raises_the_hosts_receive_backlog_and_puts_it_back(tmp_path, low_backlog):
    """netdev_max_backlog (host-wide) is raised for the run and restored after it
    (backends/emu/hostsys.py): the metadata says what it was during the run."""
    from ccbench.backends.emu import hostsys
    before = low_backlog
    res = ccbench.run({"duration": 1, "central": {"rate": "20Mbit", "delay": "5ms"},
                       "flows": [{"scheme": "cubic"}]}, tmp_path / "out", backend="emu", budget=False)
    nb = res.meta["emu"]["netdev_max_backlog"]
    assert nb["during"] == hostsys.BACKLOG
    assert nb["raised_from"] == before
    assert hostsys.read(hostsys.BACKLOG_KEY) == before
