"""Python-defined schemes in the simulator (ccbench.cc, docs/python-schemes.md): YAML and API
references, periodic controllers, recorded variables, determinism, errors with tracebacks."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench import config
from ccbench.backends.sim import simulate
from ccbench.cc import Scheme, SchemeError
from simhelp import experiment

USER = Path(__file__).parent / "data" / "pycc" / "userschemes.py"


def py(cls: str, **params):
    return {"python": f"{USER}:{cls}", **({"params": params} if params else {})}


def test_error_in_user_code_stops_the_run_with_traceback_flow_and_time():
    exp = experiment([{"scheme": "reno", "flows": 1},
                      {"scheme": py("FailsLater", at_s=1.5), "flows": 1, "start": 0.5}],
                     duration=5, rate="20Mbit", queue=100)
    with pytest.raises(SchemeError) as ei:
        simulate(exp)
    msg = str(ei.value)
    assert msg.startswith("flow 2 (Flow 2: py-failslater ->) at t=")
    t = float(msg.split("t=")[1].split(" ")[0])
    # the first ACK after 1.5 s: the same run without the failure acknowledges new data
    # first in the 10-ms flow sample ending at `due` (a run is the same up to the failure)
    exp["flows"][1]["params"] = {"at_s": 1e9}
    tables, _, _ = simulate(exp)
    fl = tables["flows"].filter(pl.col("flow") == 1).sort("time_ns")
    acked = fl.filter(pl.col("time_ns") <= 1_500_000_000)["bytes_acked"][-1]
    due = fl.filter(pl.col("bytes_acked") > acked)["time_ns"][0] / 1e9
    assert max(1.5, due - 0.01) < t <= due, (t, due)
    assert "in FailsLater.pkts_acked" in msg
    assert "Traceback (most recent call last)" in msg
    assert "userschemes.py" in msg and "in helper" in msg and "ZeroDivisionError" in msg


def test_error_reaches_the_cli(tmp_path, capsys):
    from ccbench.cli import main
    f = tmp_path / "e.yaml"
    f.write_text(f"duration: 3\ncentral: {{rate: 20Mbit, delay: 10ms, queue: 50}}\nflows:\n"
                 f"  - {{scheme: {{python: \"{USER}:FailsLater\", params: {{at_s: 0.5}}}}}}\n")
    assert main(["run", str(f), "-o", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "at t=0.5" in err and "ZeroDivisionError" in err and "in helper" in err


def test_periodic_rate_controller_commands_the_rate_and_records_variables():
    exp = experiment([{"scheme": py("ConstRate", rate=5_000_000), "flows": 1}],
                     duration=4, rate="20Mbit")
    t, _, _ = simulate(exp)
    fl = t["flows"]
    assert {"cc_calls", "cc_last_tput"} <= set(fl.columns)
    calls = fl["cc_calls"].max()
    # Every 10 ms plus the wait for the next ACK (~4.7 ms apart at 5 Mbit/s with delayed
    # ACKs): 4 s -> 270-400 calls.
    assert 270 <= calls <= 400, calls
    delivered = t["flowstats"]["delivered_bytes"][0] * 8 / 4
    assert 4.8e6 < delivered < 5.6e6, delivered
    assert fl.filter(fl["time_ns"] > 1e9)["pacing_rate_bps"].unique().to_list() == [5e6]
    # The controller saw the throughput it produced (payload bit/s of its intervals).
    assert 4.0e6 < fl["cc_last_tput"][-1] < 5.5e6


def test_periodic_window_controller_every_rtt():
    exp = experiment([{"scheme": py("RttWindow"), "flows": 1}], duration=2, rate="100Mbit")
    t, _, _ = simulate(exp)
    fl = t["flows"]
    early = fl.filter((fl["time_ns"] > 2e8) & (fl["time_ns"] < 9e8))["cwnd"].unique().to_list()
    late = fl.filter(fl["time_ns"] > 1.2e9)["cwnd"].unique().to_list()
    assert early == [8] and late == [40]


def test_bad_command_is_reported():
    exp = experiment([{"scheme": py("BadCommand"), "flows": 1}], duration=1)
    with pytest.raises(SchemeError, match="unknown command key \"window\""):
        simulate(exp)


def test_deterministic_per_seed_and_rng_varies_with_seed():
    def run(seed):
        t, _, _ = simulate(experiment([{"scheme": py("Jitter"), "flows": 2}], duration=3,
                                      rate="20Mbit", queue=50, seed=seed))
        return t
    a, b, c = run(1), run(1), run(2)
    assert a["packets"].equals(b["packets"]) and a["flows"].equals(b["flows"])
    assert not a["packets"].equals(c["packets"])
    assert a["flows"]["cc_steps"].max() > 0


def test_object_through_the_python_api(tmp_path):
    calls = []

    class HalfReno(Scheme):
        def __init__(self, step=1):
            self.step = step

        def init(self, sk):
            calls.append(sk.cwnd)

        def cong_avoid(self, sk, acked):
            if sk.cwnd < sk.ssthresh:
                sk.cwnd += acked
            else:
                sk.snd_cwnd_cnt += acked
                if sk.snd_cwnd_cnt >= 2 * sk.cwnd:
                    sk.snd_cwnd_cnt = 0
                    sk.cwnd += self.step

    exp = config.resolve({"duration": 2, "central": {"rate": "20Mbit", "delay": "10ms",
                                                     "queue": 50},
                          "flows": [{"scheme": {"python": HalfReno, "params": {"step": 2},
                                                "name": "half"}, "flows": 2}]})
    assert exp["flows"][0]["scheme"] == "half"
    assert exp["flows"][0]["python"].startswith("object:")
    res = ccbench.run(exp, tmp_path / "r")
    assert calls == [10, 10]
    assert res.flowstats["delivered_bytes"].sum() > 0


def test_sock_outside_a_hook_and_read_only_fields():
    kept = []

    class Keeper(Scheme):
        def init(self, sk):
            kept.append(sk)

        def cong_avoid(self, sk, acked):
            sk.mss = 1

    exp = experiment([{"scheme": {"python": Keeper}, "flows": 1}], duration=1)
    with pytest.raises(SchemeError, match="mss"):
        simulate(exp)
    with pytest.raises(RuntimeError, match="only valid during"):
        kept[0].cwnd


@pytest.mark.parametrize("scheme, fragment", [
    ({"python": "nosuch_module_xyz:C"}, "cannot import 'nosuch_module_xyz'"),
    ({"python": f"{USER}:Nope"}, "has no class 'Nope'"),
    # any importable callable is refused before anything is imported or called
    ({"python": "os:system", "params": {"command": "true"}}, "'os' has no class 'system'"),
    ({"python": "shutil:rmtree", "params": {"path": "/nonexistent"}}, "has no class 'rmtree'"),
    ({"python": "subprocess:getoutput"}, "has no class 'getoutput'"),
    ({"python": "posix:system"}, "cannot import 'posix'"),
    ({"python": "ccbench._core:Sock"}, "not a Python source module"),
    ({"python": "no-colon"}, "is not \"module:Class\""),
    ({"python": f"{USER}:ConstRate", "params": {"rat": 1}}, "ConstRate takes rate"),
    ({"python": f"{USER}:ConstRate", "colour": 1}, 'unknown key "colour"'),
])
def test_config_errors_name_the_field(scheme, fragment):
    with pytest.raises(config.ConfigErrors) as ei:
        config.resolve({"duration": 1, "central": {"rate": "10Mbit", "delay": "5ms"},
                        "flows": [{"scheme": scheme}]})
    text = str(ei.value)
    assert "flows[0].scheme" in text and fragment in text, text


def test_emulation_backend_refuses_python_schemes_with_the_fix():
    from ccbench.doctor import EmuUnavailable, preflight
    exp = experiment([{"scheme": {"python": "ccbench.schemes.reno:Reno"}, "flows": 1}], duration=1)
    with pytest.raises(EmuUnavailable, match="Python scheme .*--backend sim"):
        preflight(exp)


def test_campaign_runs_a_python_scheme_in_pool_workers(tmp_path):
    """Workers import the `module:Class` target themselves; results are the Rust Reno's."""
    # Exact timing: the two points get different derived seeds, and only exact timing makes
    # Reno's result independent of the seed.
    camp = {"duration": 2, "seed": 1, "host": {"noise": "exact"},
            "central": {"rate": "20Mbit", "delay": "10ms", "queue": 50},
            "flows": [{"scheme": "reno", "flows": 1}],
            "sweep": {"axes": {"cc": {"path": "flows[0].scheme",
                                      "values": ["reno", {"python": "ccbench.schemes.reno:Reno"}]}}}}
    from ccbench.campaign import parse_campaign
    index = ccbench.sweep(parse_campaign(camp), tmp_path / "c", jobs=2)
    index = index.sort("point")
    assert index["scheme"].to_list() == ["reno", "py-reno"]
    tput = index["avg_tput_mbps"].to_list()
    assert tput[0] > 15 and tput[0] == tput[1]


def test_every_hook_is_called_and_cong_control_owns_the_window():
    made = []
    from ccbench.cc import runtime
    cls = runtime.load(f"{USER}:HookCounter")

    def factory():
        obj = cls()
        made.append(obj)
        return obj

    exp = experiment([{"scheme": {"python": factory, "name": "hooks"}, "flows": 1,
                       "onoff": {"on": "1s", "off": "500ms"}}],
                     duration=4, rate="20Mbit", queue=30, central={"loss": 0.002})
    t, _, _ = simulate(exp)
    c = made[0].calls
    for hook in ("init", "cong_avoid", "ssthresh", "set_state", "cwnd_event", "pkts_acked",
                 "in_ack_event", "skb_marked_lost"):
        assert c.get(hook, 0) > 0, (hook, c)
    assert {"recovery", "open"} <= made[0].states
    assert "tx_start" in made[0].events
    assert t["flows"]["cc_acks"].max() == made[0].acks > 1000

    exp = experiment([{"scheme": {"python": f"{USER}:FixedWindow"}, "flows": 1}], duration=2,
                     rate="20Mbit")
    t, _, _ = simulate(exp)
    fl = t["flows"].filter(t["flows"]["time_ns"] > 5e8)
    assert fl["cwnd"].unique().to_list() == [20]
    assert fl["pacing_rate_bps"].unique().to_list() == [4e6]
    assert 3.6e6 < t["flowstats"]["delivered_bytes"][0] * 8 / 2 < 4.4e6


def test_a_class_that_is_not_a_scheme_is_refused_before_it_is_called():
    from ccbench.cc import runtime
    with pytest.raises(runtime.TargetError, match="not a subclass of ccbench.cc.Scheme"):
        runtime.instance("subprocess:Popen", {"args": ["touch", "/tmp/ccbench-never"]},
                         seed=1, flow=0, conn=0)
    with pytest.raises(runtime.TargetError, match="parameters do not fit"):
        runtime.instance(f"{USER}:ConstRate", {"rat": 1}, seed=1, flow=0, conn=0)


def test_checking_an_experiment_runs_none_of_its_python_file(tmp_path):
    """validate / resolve / --dry-run read a scheme file's source; only the run executes it."""
    import subprocess
    import sys
    marker = tmp_path / "ran"
    (tmp_path / "mine.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('top-level code ran')\n"
        "from ccbench.cc import Scheme\n"
        "class Mine(Scheme):\n"
        "    def __init__(self, beta=0.5):\n"
        "        self.beta = beta\n")
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   "flows: [{scheme: {python: mine.py:Mine, params: {beta: 0.7}}}]\n")
    for cmd in (["validate", str(exp)], ["resolve", str(exp)]):
        r = subprocess.run([sys.executable, "-m", "ccbench", *cmd], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        assert not marker.exists(), cmd
    bad = tmp_path / "bad.yaml"
    bad.write_text(exp.read_text().replace("beta: 0.7", "gamma: 1"))
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(bad)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "unexpected keyword 'gamma'" in r.stderr + r.stdout
    assert not marker.exists()
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(exp), "-o",
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert marker.read_text() == "top-level code ran"
