"""Pure logic of the emulation backend, without root: the kernel settings an experiment maps
to, the agents' command lines, the collection of agent tables and the accuracy verdict."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ccbench.backends.emu import accuracy as acc
from ccbench.backends.emu.agents import notsent_lowat, receiver_argv, sender_argv
from ccbench.backends.emu.collect import conns_dir, conns_table, flows_table, flow_dir
from ccbench.backends.emu.tcpset import host_sysctls, kernel_switches, route_options

MS = 1_000_000


def test_route_options_carry_initcwnd_rto_min_and_quickack():
    # an absent key is its default, as in the simulator (resolved experiments write these)
    assert route_options({}) == "initcwnd 10 rto_min 200ms"
    exp = {"tcp": {"init_cwnd": 4, "min_rto_ns": 200 * MS, "delayed_ack": True}}
    assert route_options(exp) == "initcwnd 4 rto_min 200ms"
    # delayed ACKs off: `quickack 1` on the route (there is no sysctl for it)
    exp["tcp"]["delayed_ack"] = False
    assert route_options(exp).split()[-2:] == ["quickack", "1"]
    # sub-millisecond minimum RTOs round to at least 1 ms (iproute2 takes whole ms here)
    assert "rto_min 1ms" in route_options({"tcp": {"min_rto_ns": 300_000}})
    # an old kernel's SYN-ACK window cap (a TCP profile) is the route's initrwnd
    assert route_options({"tcp": {"init_rwnd": 4}}) == "initcwnd 10 initrwnd 4 rto_min 200ms"


def test_sysctls_follow_the_tcp_block():
    s = host_sysctls({})
    assert s["net.ipv4.tcp_sack"] == "1" and s["net.ipv4.tcp_slow_start_after_idle"] == "1"
    assert s["net.ipv6.conf.all.disable_ipv6"] == "1" and s["net.ipv4.tcp_no_metrics_save"] == "1"
    s = host_sysctls({"tcp": {"sack": False, "slow_start_after_idle": False, "rwnd_bytes": 64 << 20}})
    assert s["net.ipv4.tcp_sack"] == "0" and s["net.ipv4.tcp_slow_start_after_idle"] == "0"
    # receive buffers: twice the receive window, at least 8 MB
    assert s["net.ipv4.tcp_rmem"].split()[-1] == str(128 << 20)
    assert host_sysctls({"tcp": {"rwnd_bytes": 1 << 20}})["net.ipv4.tcp_rmem"].split()[-1] == str(8 << 20)
    # send buffers: Linux's default tcp_wmem (the simulator's), whatever the window
    assert s["net.ipv4.tcp_wmem"] == "4096 16384 4194304"


def _exp(**flow) -> dict:
    f = {"id": 0, "scheme": "cubic", "src": "a1", "dst": "b1", "start_ns": 0, "path": [0, 1],
         "rev_path": [2, 3], **flow}
    links = [{"rate_bps": 1_000_000_000}, {"rate_bps": 16_000_000}, {"rate_bps": None}, {}]
    return {"duration_ns": 3_000 * MS, "sample_interval_ns": 10 * MS, "mss": 1448, "seed": 5,
            "links": links, "flows": [f]}


def _opts(argv: list[str]) -> dict:
    return dict(zip(argv[2::2], argv[3::2]))


def test_agent_command_lines(tmp_path):
    agent = Path("/x/ccbench-agent")
    exp = _exp(bytes=100_000, stop_ns=2_000 * MS)
    f = exp["flows"][0]
    assert receiver_argv(agent, exp, f, 7, "ccb-abcdef")[1] == "server"
    a = sender_argv(agent, exp, f, "10.77.0.2", 7, "ccb-abcdef", tmp_path)
    o = _opts(a)
    assert a[1] == "client" and o["--port"] == "10000" and o["--bytes"] == "100000"
    assert o["--stop"] == str(2_000 * MS) and o["--flow"] == "0" and o["--out"] == str(flow_dir(tmp_path, 0))
    udp = _exp(scheme="udp", app_rate_bps=5_000_000)
    a = sender_argv(agent, udp, udp["flows"][0], "10.77.0.2", 7, "r", tmp_path)
    assert a[1] == "udp-client" and _opts(a)["--size"] == "1500" and _opts(a)["--rate"] == "5000000"
    arr = _exp(arrivals={"rate_per_s": 20.0, "size": {"kind": "fixed", "bytes": 1000}})
    a = sender_argv(agent, arr, arr["flows"][0], "10.77.0.2", 7, "r", tmp_path)
    assert a[1] == "arrivals-client" and _opts(a)["--seed"] == "5"
    assert receiver_argv(agent, arr, arr["flows"][0], 7, "r")[-2:] == ["--multi", "1"]


def test_datagram_flows_run_ccbench_dgram(tmp_path, monkeypatch):
    from ccbench.backends.emu import agents, doctor
    monkeypatch.setattr(agents, "binary", lambda name: Path(f"/x/{name}"))
    dg = _exp(scheme="fixed", transport="dgram", params={"rate-mbps": 20}, stop_ns=2_000 * MS)
    f = dg["flows"][0]
    r = receiver_argv(Path("/x/agent"), dg, f, 7, "r")
    assert r[:2] == ["/x/dgram", "receiver"]
    assert _opts(r)["--scheme"] == "fixed" and _opts(r)["--params"] == '{"rate-mbps": 20}'
    s = sender_argv(Path("/x/agent"), dg, f, "10.77.0.2", 7, "r", tmp_path)
    o = _opts(s)
    assert s[:2] == ["/x/dgram", "sender"] and o["--seed"] == "5" and o["--flow"] == "0"
    assert o["--size"] == "1500" and o["--out"] == str(flow_dir(tmp_path, 0))
    assert o["--stop"] == str(2_000 * MS) and o["--interval"] == str(10 * MS)
    # no kernel congestion control is needed for it
    assert doctor.experiment_schemes(dg) == []


def test_backlogged_onoff_limits_unsent_bytes_to_a_millisecond_of_the_slowest_link():
    exp = _exp(onoff={"on_ns": 1_000 * MS, "off_ns": 1_000 * MS})
    f = exp["flows"][0]
    assert notsent_lowat(exp, f) == 16 << 10  # 1 ms at 16 Mbit/s is 2 KB: the 16 KB floor
    exp["links"][1]["rate_bps"] = 10_000_000_000
    assert notsent_lowat(exp, f) == 1_000_000_000 // 8000  # 1 Gbit/s access link: 125 KB
    o = _opts(sender_argv(Path("a"), exp, f, "d", 0, "r", Path("/w")))
    assert o["--notsent-lowat"] == "125000" and "--app-rate" not in o
    exp["flows"][0]["app_rate_bps"] = 2_000_000  # a rate-limited source needs no limit
    assert "--notsent-lowat" not in sender_argv(Path("a"), exp, f, "d", 0, "r", Path("/w"))


def _write(directory: Path, table: str, df: pl.DataFrame) -> None:
    """Write `df` as the agents do: <table>.<col>.bin (little-endian) + <table>.columns.json."""
    import json

    import numpy as np
    from ccbench.results.schema import CATEGORIES, DTYPE_OF
    directory.mkdir(parents=True, exist_ok=True)
    man = []
    for c in df.columns:
        dt, s, cats = DTYPE_OF[df.schema[c]], df[c], None
        if dt == "cat":
            cats = list(CATEGORIES[(table, c)])
            raw = np.array([cats.index(x) for x in s], dtype=np.uint8)
        elif dt == "bool":
            raw = s.cast(pl.UInt8).to_numpy()
        elif dt == "i64":
            raw = s.fill_null(-(2 ** 63)).to_numpy()
        elif dt == "f64":
            raw = s.fill_null(float("nan")).to_numpy()
        else:
            raw = s.to_numpy()
        (directory / f"{table}.{c}.bin").write_bytes(raw.astype(raw.dtype.newbyteorder("<")).tobytes())
        man.append([c, dt, cats])
    (directory / f"{table}.columns.json").write_text(json.dumps(man))


def test_conns_are_numbered_after_the_flows_in_arrival_order_over_groups(tmp_path):
    arr = {"rate_per_s": 1.0}
    exp = {"flows": [{"id": 0}, {"id": 1, "arrivals": arr}, {"id": 2, "arrivals": arr}]}
    mk = lambda flow, starts: pl.DataFrame({  # noqa: E731
        "conn": pl.Series(range(len(starts)), dtype=pl.UInt32), "flow": pl.Series([flow] * len(starts), dtype=pl.UInt32),
        "size_bytes": pl.Series([1000] * len(starts), dtype=pl.UInt64),
        "start_ns": pl.Series(starts, dtype=pl.Int64),
        "completed_ns": pl.Series([None] * len(starts), dtype=pl.Int64),
        "acked_bytes": pl.Series([0] * len(starts), dtype=pl.UInt64),
        "retrans_pkts": pl.Series([0] * len(starts), dtype=pl.UInt64)})
    _write(conns_dir(tmp_path, 1), "conns", mk(1, [10, 30]))
    _write(conns_dir(tmp_path, 2), "conns", mk(2, [20, 30]))
    c = conns_table(exp, tmp_path)
    assert c["conn"].to_list() == [3, 4, 5, 6]
    assert list(zip(c["flow"], c["start_ns"])) == [(1, 10), (2, 20), (1, 30), (2, 30)]
    assert c["completed_ns"].null_count() == 4
    assert conns_table({"flows": [{"id": 0}]}, tmp_path) is None


def test_agent_flows_tables_merge_with_cc_columns_sorted(tmp_path):
    from ccbench.results.schema import SCHEMAS, check
    base = {"time_ns": [10, 0], "cwnd": [10, 10], "ssthresh": [None, 5], "srtt_us": [1.0, 2.0],
            "rttvar_us": [0.0, 0.0], "min_rtt_us": [None, 1.0], "inflight": [1, 1],
            "delivered": [1, 1], "bytes_acked": [0, 0], "retrans": [0, 0], "lost": [0, 0],
            "ca_state": ["open", "recovery"], "pacing_rate_bps": [1.0, 1.0],
            "delivery_rate_bps": [1.0, 1.0]}
    for flow, extra in ((1, {"cc_pacing_gain": [2.0, 1.0], "cc_btl_bw": [1.0, None]}), (0, {})):
        df = pl.DataFrame({**base, "flow": [flow] * 2, **extra},
                          schema={**SCHEMAS["flows"], **{k: pl.Float64 for k in extra}})
        _write(flow_dir(tmp_path, flow), "flows", df)
    exp = {"flows": [{"id": 0}, {"id": 1}, {"id": 2}]}  # flow 2's agent wrote nothing
    f = flows_table(exp, tmp_path)
    check("flows", f)
    assert f.columns[-2:] == ["cc_btl_bw", "cc_pacing_gain"]
    assert list(zip(f["time_ns"], f["flow"])) == [(0, 0), (0, 1), (10, 0), (10, 1)]
    assert f["ca_state"].to_list() == ["recovery", "recovery", "open", "open"]
    assert f.filter(pl.col("flow") == 0)["cc_pacing_gain"].null_count() == 2
    assert f["ssthresh"].to_list() == [5, 5, None, None]
    assert flows_table({"flows": [{"id": 7}]}, tmp_path).height == 0


def test_release_limits_and_verdict():
    exp = {"flows": [{"base_rtt_ns": 40 * MS}, {"base_rtt_ns": 10 * MS}, {}]}
    # p99 limit: min(250 µs, 1 % of the smallest RTT); p99.9: 5 % of it
    assert acc.release_limits(exp) == (100_000, 500_000)
    assert acc.release_limits({"flows": [{"base_rtt_ns": 100 * MS}]}) == (250_000, 5 * MS)
    assert acc.release_limits({"flows": [{}]}) == (250_000, 500_000)
    meta = {"release_error_ns": {"p99": 100_000, "p999": 500_000}, "engine": {"counters": {}},
            "engine_busy_frac": 0.95, "steal_frac": 0.05, "tun_drops": 0,
            "agents": [{"flow": 0, "connected": True}]}
    v = acc.accuracy(exp, meta)
    assert v["accurate"] and v["inaccurate_reasons"] == []  # every value exactly at its limit
    for key, bad, words in (("release_error_ns", {"p99": 100_001, "p999": 0}, "p99 100"),
                            ("release_error_ns", {"p99": 0, "p999": 500_001}, "p99.9"),
                            ("engine_busy_frac", 0.951, "engine busy"),
                            ("steal_frac", 0.051, "steal"),
                            ("tun_drops", 3, "TUN devices"),
                            ("agents", [{"flow": 2, "connected": False}], "flow 3: did not connect")):
        v = acc.accuracy(exp, {**meta, key: bad})
        assert not v["accurate"] and any(words in r for r in v["inaccurate_reasons"]), (key, v)
    v = acc.accuracy(exp, {**meta, "engine": {"counters": {"tun_write_errors": 2, "dead_fds": 1}}})
    assert len(v["inaccurate_reasons"]) == 2
    # without a busy fraction the CPU fraction stands in
    v = acc.accuracy(exp, {**{k: x for k, x in meta.items() if k != "engine_busy_frac"},
                           "engine_cpu_frac": 0.99})
    assert not v["accurate"]


def test_sysctls_carry_wmem():
    s = host_sysctls({"tcp": {"wmem": [4096, 16384, 262144]}})
    assert s["net.ipv4.tcp_wmem"] == "4096 16384 262144"


def test_sysctls_carry_min_tso_segs():
    assert host_sysctls({})["net.ipv4.tcp_min_tso_segs"] == "2"  # Linux's default
    assert host_sysctls({"tcp": {"min_tso_segs": 1}})["net.ipv4.tcp_min_tso_segs"] == "1"


def test_sysctls_carry_rmem_and_moderate_rcvbuf():
    s = host_sysctls({"tcp": {"rmem": [4096, 131072, 1 << 20], "moderate_rcvbuf": False}})
    assert s["net.ipv4.tcp_rmem"] == f"4096 131072 {1 << 20}"
    assert s["net.ipv4.tcp_moderate_rcvbuf"] == "0"
    assert host_sysctls({})["net.ipv4.tcp_moderate_rcvbuf"] == "1"


def _resolved(flows: list[dict], tcp: dict | None = None, topology: bool = False) -> dict:
    from ccbench import config
    doc = {"duration": 2, "tcp": tcp or {}, "flows": flows}
    if topology:  # h1 and h2 both send to h3 through r; h3 sends back to h1
        doc["topology"] = {"links": [{"from": h, "to": "r", "rate": "10Mbit", "delay": "5ms"}
                                     for h in ("h1", "h2", "h3")]}
    return config.resolve(doc)


def test_each_group_gets_its_own_settings_on_its_own_hosts():
    """Dumbbell: flow k runs between a<k> and b<k>; a group's tcp reaches its hosts only,
    each setting on the end it acts on (sender, receiver or both)."""
    from ccbench.backends.emu import tcpset
    exp = _resolved([{"scheme": "cubic"},
                     {"scheme": "cubic", "tcp": {"init-cwnd": 3, "slow-start-after-idle": False,
                                                 "sack": False, "moderate-rcvbuf": False,
                                                 "delayed-ack": False}}])
    p = tcpset.plan(exp)
    assert p.problems == []
    top = host_sysctls(exp)
    assert p.sysctls["a1"] == p.sysctls["b1"] == top
    a2, b2 = p.sysctls["a2"], p.sysctls["b2"]
    assert a2["net.ipv4.tcp_slow_start_after_idle"] == "0" and b2["net.ipv4.tcp_slow_start_after_idle"] == "1"
    assert a2["net.ipv4.tcp_sack"] == b2["net.ipv4.tcp_sack"] == "0"
    assert a2["net.ipv4.tcp_moderate_rcvbuf"] == "1" and b2["net.ipv4.tcp_moderate_rcvbuf"] == "0"
    # the sender's route to the receiver has the initial window, the receiver's the quick ACKs
    assert p.routes == {"a2": [("b2", "initcwnd 3 rto_min 200ms")],
                        "b2": [("a2", "initcwnd 10 rto_min 200ms quickack 1")]}
    meta = tcpset.metadata(exp, p)
    assert meta["sysctls"] == top and meta["route_options"] == "initcwnd 10 rto_min 200ms"
    assert meta["sysctls_by_host"]["a2"] == {"net.ipv4.tcp_sack": "0",
                                             "net.ipv4.tcp_slow_start_after_idle": "0"}
    assert meta["routes_by_host"]["a2"] == ["to b2: initcwnd 3 rto_min 200ms"]
    # a group without tcp of its own changes nothing: the hosts get the experiment's settings
    plain = _resolved([{"scheme": "cubic"}, {"scheme": "reno", "direction": "<-"}], {"tlp": False})
    p = tcpset.plan(plain)
    assert p.routes == {} and all(s == host_sysctls(plain) for s in p.sysctls.values())
    assert set(tcpset.metadata(plain, p)) == {"sysctls", "route_options", *kernel_switches(plain)}


def test_the_groups_profile_and_socket_options_follow_the_group():
    from ccbench.backends.emu import tcpset
    exp = _resolved([{"scheme": "cubic", "tcp": {"profile": "linux-2.6.36", "pacing": "fq"}},
                     {"scheme": "cubic"}])
    p = tcpset.plan(exp)
    assert p.sysctls["a1"]["net.ipv4.tcp_early_retrans"] == "0"  # no TLP before 3.10
    assert p.sysctls["a2"]["net.ipv4.tcp_early_retrans"] == "3"
    assert p.routes["a1"] == [("b1", "initcwnd 3 rto_min 200ms")]
    assert p.routes["b1"] == [("a1", "initcwnd 10 initrwnd 4 rto_min 200ms")]
    a = [sender_argv(Path("a"), exp, f, "d", 0, "r", Path("/w")) for f in exp["flows"]]
    assert "--pacing" in a[0] and "--pacing" not in a[1]
    # what the kernel cannot switch is recorded for the group (the top level's as before)
    gs = tcpset.group_switches(exp)
    assert gs["0"]["initial_rto_ns"] == {"requested": 3 * 10**9, "kernel": 10**9, "applied": False}
    assert "1" not in gs and kernel_switches(exp)["initial_rto_ns"]["applied"] is True


def test_groups_sharing_a_namespace_or_a_route_with_other_values_are_refused():
    from ccbench.backends.emu import tcpset
    from ccbench.backends.emu.doctor import EmuUnavailable, preflight
    # h1 -> h3 and h2 -> h3: one receiver namespace, two receive buffers
    exp = _resolved([{"scheme": "cubic", "src": "h1", "dst": "h3"},
                     {"scheme": "cubic", "src": "h2", "dst": "h3",
                      "tcp": {"rmem": [4096, 131072, "8MiB"]}}], topology=True)
    (msg,) = tcpset.plan(exp).problems
    assert msg.startswith("tcp.rmem (with tcp.rwnd): ") and "net.ipv4.tcp_rmem in host h3's namespace" in msg
    assert "flow 1" in msg and "flow 2" in msg and "Fix: give these groups hosts of their own" in msg
    with pytest.raises(EmuUnavailable, match="tcp.rmem"):
        preflight(exp)
    # a sender-side setting on two senders is fine, and so is a receiver-side one on two receivers
    ok = _resolved([{"scheme": "cubic", "src": "h1", "dst": "h3"},
                    {"scheme": "cubic", "src": "h2", "dst": "h3", "tcp": {"init-cwnd": 3, "tlp": False}}],
                   topology=True)
    assert tcpset.plan(ok).problems == []
    # two flows between the same hosts share the route that carries the initial window
    same = _resolved([{"scheme": "cubic", "src": "h1", "dst": "h3"},
                      {"scheme": "cubic", "src": "h1", "dst": "h3", "tcp": {"init-cwnd": 3}}],
                     topology=True)
    (msg,) = tcpset.plan(same).problems
    assert msg.startswith("tcp.init-cwnd: ") and "initcwnd of host h1's route to h3" in msg
    # ... but not the sysctls of the other end
    assert "h3" not in tcpset.plan(_resolved(
        [{"scheme": "cubic", "src": "h1", "dst": "h3"},
         {"scheme": "cubic", "src": "h1", "dst": "h3", "tcp": {"wmem": [4096, 16384, "8MiB"]}}],
        topology=True)).problems[0].split("(")[0]


def test_clean_never_writes_a_host_setting_ccbench_did_not_set(tmp_path):
    """hostsys.restore reads a record from a work directory under /tmp: a record with another
    value than the one a run sets (or of another user) is ignored, never written to /proc."""
    import json
    from ccbench.backends.emu import hostsys
    for bad in ({"key": hostsys.BACKLOG_KEY, "set": 1000, "was": 1},        # not our value
                {"key": hostsys.BACKLOG_KEY, "set": hostsys.BACKLOG, "was": 0},
                {"key": hostsys.BACKLOG_KEY, "set": hostsys.BACKLOG, "was": 10**9},
                {"key": "kernel.panic", "set": hostsys.BACKLOG, "was": 1}):
        (tmp_path / "host.json").write_text(json.dumps([bad]))
        assert hostsys.restore(tmp_path) == []
        assert not (tmp_path / "host.json").exists()


def test_only_kernel_tcp_flows_get_tcp_settings_and_kernel_ccs():
    """One rule (common.kernel_tcp) for the flows whose endpoints are the agents' kernel TCP
    sockets: a datagram scheme's, UDP's and the probes' are not (tcp settings were planned for
    datagram flows before it)."""
    from ccbench import api, config
    from ccbench.backends.emu.common import kernel_tcp
    from ccbench.backends.emu.doctor import experiment_schemes
    exp = config.resolve({"duration": 1, "central": {"rate": "10Mbit", "delay": "5ms"},
                          "flows": [{"scheme": "cubic"}, {"scheme": "fixed"}, {"scheme": "udp", "rate": "1Mbit"},
                                    {"scheme": "probe", "interval": "100ms", "size": 64}]},
                         schemes=api.registry())
    assert [kernel_tcp(f) for f in exp["flows"]] == [True, False, False, False]
    assert experiment_schemes(exp) == ["cubic"]
