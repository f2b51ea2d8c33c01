"""BPF schemes on the simulator (docs/bpf-schemes.md, "In the simulator"): the shipped C files,
unchanged, compiled natively (ccbench.backends.bpfsim) and run by the core (crates/sim/src/cc/
native). Where a program and the simulator's Rust algorithm follow the same kernel code (vegas,
highspeed, dctcp, ...) the runs are identical packet for packet; the tests hold them to that."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench.backends import bpfsim
from ccbench.config.bpfschemes import shipped

pytestmark = pytest.mark.skipif(bpfsim.compiler() is None, reason="no C compiler")

CLEAN = {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp"}
TABLES = ("flows", "flowstats", "intervals", "queues", "delay_hist")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    """Each test builds into its own cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _run(tmp_path: Path, name: str, scheme, central: dict, dur: float = 5, n: int = 1, seed: int = 1,
         packets: bool = False, other=()):
    doc = {"duration": dur, "seed": seed, "central": central,
           "flows": [{"scheme": scheme, "flows": n}, *other]}
    return ccbench.run(doc, tmp_path / name, packets=packets, budget=False)


def _same(a, b, cols=("cwnd", "ssthresh", "inflight", "delivered", "retrans", "lost", "ca_state")):
    """The two runs' flow traces differ nowhere (first difference in the message)."""
    fa, fb = a.flows.select("time_ns", "flow", *cols), b.flows.select("time_ns", "flow", *cols)
    assert fa.height == fb.height > 0
    if not fa.equals(fb):
        j = fa.join(fb, on=["time_ns", "flow"], suffix="_rust")
        bad = j.filter(pl.any_horizontal(pl.col(c) != pl.col(f"{c}_rust") for c in cols))
        pytest.fail(f"traces differ from {bad['time_ns'][0] / 1e9:.3f} s:\n{bad.head(3)}")


def test_bpf_vegas_runs_on_the_simulator_from_the_yaml_through_ccbench_run(tmp_path):
    (tmp_path / "x.yaml").write_text(
        "duration: 2\nseed: 1\ncentral: {rate: 20Mbit, delay: 10ms, queue: 1bdp}\n"
        "flows:\n  - {scheme: {bpf: vegas}, flows: 1}\n")
    p = subprocess.run([sys.executable, "-m", "ccbench", "run", str(tmp_path / "x.yaml"), "--backend",
                        "sim", "-o", str(tmp_path / "out"), "--quiet", "--no-packets"],
                       capture_output=True, text=True, env={**os.environ})
    assert p.returncode == 0, p.stderr
    assert "bpf_vegas" in p.stdout
    res = ccbench.load(tmp_path / "out")
    assert res.meta["experiment"]["flows"][0]["bpf"]["path"].endswith("schemes/bpf/vegas.c")
    assert "sim_object" not in res.meta["experiment"]["flows"][0]["bpf"]   # the run key's input is unchanged
    assert res.flowstats["delivered_bytes"][0] > 0.9 * 20e6 / 8 * 2 * 0.8
    assert list((tmp_path / "cache" / "ccbench" / "bpf-sim").glob("*/vegas.so"))


@pytest.mark.parametrize("scheme,central,n", [
    ("vegas", CLEAN, 1),
    ("vegas", {"rate": "20Mbit", "delay": "20ms", "queue": "2bdp"}, 2),
    ("highspeed", {"rate": "100Mbit", "delay": "10ms", "queue": "1bdp", "loss": 0.0002}, 1),
    ("highspeed", {"rate": "50Mbit", "delay": "10ms", "queue": "1bdp"}, 2),
    ("scalable", {**CLEAN, "loss": 0.005}, 1),
    ("dctcp", {"rate": "50Mbit", "delay": "5ms", "queue": {"limit": 200, "ecn-threshold": 20}}, 2),
])
def test_the_bpf_program_runs_step_for_step_as_the_simulators_algorithm(tmp_path, scheme, central, n):
    """vegas.c, highspeed.c, scalable.c and dctcp.c follow the same kernel code as vegas.rs,
    highspeed.rs, scalable.rs and dctcp.rs, and both call the same tcp_cong.c helpers: every
    sample of every flow, and every packet, is the same."""
    bpf = _run(tmp_path, "bpf", {"bpf": scheme}, central, n=n, packets=True)
    rust = _run(tmp_path, "rust", scheme, central, n=n, packets=True)
    _same(bpf, rust)
    assert bpf.flowstats.equals(rust.flowstats)
    drop = [c for c, t in bpf.packets.schema.items() if t == pl.Categorical]
    assert bpf.packets.drop(drop).equals(rust.packets.drop(drop))


@pytest.mark.parametrize("name", shipped())
def test_every_shipped_program_runs_in_the_simulator(tmp_path, name):
    res = _run(tmp_path, name, {"bpf": name}, {**CLEAN, "loss": 0.01}, dur=2)
    assert res.flowstats["delivered_pkts"][0] > 100
    assert res.flows["cwnd"].max() >= 4


def test_same_experiment_and_seed_give_identical_results(tmp_path):
    """CDG: random loss, the program's bpf_get_prandom_u32 back-offs and socket storage."""
    central = {**CLEAN, "queue": 300, "loss": 0.005}
    a = _run(tmp_path, "a", {"bpf": "cdg"}, central, dur=4, n=2, seed=7)
    b = _run(tmp_path, "b", {"bpf": "cdg"}, central, dur=4, n=2, seed=7)
    for t in TABLES:
        assert getattr(a, t).equals(getattr(b, t)), t
    c = _run(tmp_path, "c", {"bpf": "cdg"}, central, dur=4, n=2, seed=8)
    assert not c.flows.equals(a.flows)


def test_bpf_cdg_backs_off_on_delay_with_its_gradients_in_socket_storage(tmp_path):
    """Linux's CDG keeps its 8-RTT gradient window in BPF_MAP_TYPE_SK_STORAGE: on a
    300-packet queue it keeps the queueing delay far below Reno's, without loss."""
    central = {**CLEAN, "queue": 300}
    cdg = _run(tmp_path, "cdg", {"bpf": "cdg"}, central, dur=4)
    reno = _run(tmp_path, "reno", "reno", central, dur=4)
    assert cdg.flowstats["dropped_pkts"][0] == 0 < reno.flowstats["dropped_pkts"][0]
    owd = lambda r: r.flowstats["delay_sum_ns"][0] / r.flowstats["delivered_pkts"][0] / 1e6  # noqa: E731
    assert owd(cdg) - 10 < 0.15 * (owd(reno) - 10), (owd(cdg), owd(reno))
    assert cdg.flowstats["delivered_bytes"][0] * 8 / 4 > 0.75 * 20e6


GLOBALS = r"""
#include "ccbench_tcp_ca.h"
char _license[] SEC("license") = "GPL";
__u32 started = 0;   /* .bss: one per run, shared by its flows */

SEC("struct_ops")
void BPF_PROG(g_init, struct sock *sk)
{
	tcp_of(sk)->snd_ssthresh = 100 + started++;
}

SEC("struct_ops")
__u32 BPF_PROG(g_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(g_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(g_undo, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops g = {
	.init = (void *)g_init,
	.ssthresh = (void *)g_ssthresh,
	.cong_avoid = (void *)g_cong_avoid,
	.undo_cwnd = (void *)g_undo,
	.name = "bpf_globals",
};
"""


def test_a_programs_globals_are_shared_by_a_runs_flows_and_fresh_in_the_next_run(tmp_path):
    (tmp_path / "g.c").write_text(GLOBALS)
    central = {"rate": "20Mbit", "delay": "10ms", "queue": 1000}
    for run in ("one", "two"):
        res = _run(tmp_path, run, {"bpf": str(tmp_path / "g.c")}, central, dur=0.5, n=2)
        last = res.flows.group_by("flow").agg(pl.col("ssthresh").last()).sort("flow")
        assert sorted(last["ssthresh"].to_list()) == [100, 101], run


def test_a_helper_the_simulator_lacks_is_a_compile_error_naming_the_field(tmp_path):
    (tmp_path / "bad.c").write_text(GLOBALS.replace("started++;", "started++ + bpf_get_current_pid_tgid();"))
    with pytest.raises(bpfsim.BpfSimError, match=r"(?s)flows\[0\]\.scheme\.bpf.*does not compile for "
                       r"the simulator.*bpf_get_current_pid_tgid"):
        _run(tmp_path, "o", {"bpf": str(tmp_path / "bad.c")}, CLEAN, dur=0.5)


def test_the_build_is_cached_by_its_inputs(tmp_path):
    src = tmp_path / "g.c"
    src.write_text(GLOBALS)
    first = bpfsim.build(src)
    assert bpfsim.build(src) == first
    src.write_text(GLOBALS.replace("100 +", "200 +"))
    assert bpfsim.build(src) != first
    assert bpfsim.ops_variable(GLOBALS) == "g"
    assert bpfsim.ops_variable("no ops here") is None


def test_the_scaffold_writes_a_scheme_that_runs_and_meets_its_expectations(tmp_path, capsys):
    from ccbench import api, cli
    from ccbench.cc.scaffold import ScaffoldError
    assert cli.main(["new", "scheme", "myaimd", "-o", str(tmp_path)]) == 0
    assert "wrote" in capsys.readouterr().out
    c, y = tmp_path / "myaimd.c", tmp_path / "myaimd.yaml"
    assert "bpf_myaimd" in c.read_text() and "{bpf: myaimd.c}" in y.read_text()
    res = ccbench.run(y, tmp_path / "out")
    verdicts = api.check(res)
    assert len(verdicts) == 3 and all(v.passed for v in verdicts), [v.line() for v in verdicts]
    # the template is Reno's AIMD: the same run as the simulator's reno, packet for packet
    import yaml
    doc = yaml.safe_load(y.read_text())
    doc["flows"][0] = {"scheme": "reno"}
    reno = ccbench.run(doc, tmp_path / "reno")
    assert res.flowstats["delivered_bytes"].to_list() == reno.flowstats["delivered_bytes"].to_list()
    # never overwrites, and names are checked
    assert cli.main(["new", "scheme", "myaimd", "-o", str(tmp_path)]) == 2
    assert "already exist" in capsys.readouterr().err
    for bad in ("MyCC", "a-b", "waytoolongname"):
        with pytest.raises(ScaffoldError, match="is not a scheme name"):
            api.new_scheme(bad, tmp_path / "x")
