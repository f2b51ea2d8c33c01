"""Host/router timing noise (crates/sim/src/noise.rs, config/host.py, docs/fidelity.md)."""
from __future__ import annotations

import pytest

import ccbench
from ccbench import config
from ccbench.config.host import MODELS

# Every link at the bottleneck rate, zero propagation delay, 1000-packet queues: CUBIC's
# backlogged side link feeds the central queue at exactly its drain rate.
# tcp.wmem: the phase lock is CUBIC's side-link backlog feeding the central queue at exactly
# its drain rate. With Linux's default 4-MiB send buffer CUBIC's sender (same peak window, 1943
# packets) waits until a third of its buffer is free and refills it in bursts, which breaks the
# exact lock much as host noise does (exact timing: BBR's last arrival 16.0 s against 6.6 s with
# a 64-MiB buffer). The noise model is checked on the layout as recorded: a buffer that does
# not bind.
PHASE = """duration: %(d)s
seed: %(seed)s
%(host)s
tcp: {wmem: [4096, 16384, 64MiB]}
central: {rate: 100Mbit, delay: 0ms, queue: 1000}
flows:
  - {scheme: cubic, left-rate: 100Mbit, right-rate: 100Mbit, left-queue: 1000, right-queue: 1000}
  - {scheme: bbr, left-rate: 100Mbit, right-rate: 100Mbit, left-queue: 1000, right-queue: 1000}
"""


def _run(tmp_path, text, name):
    return ccbench.run(config.resolve(text), tmp_path / name, packets=False)


def test_default_is_the_kernel_model_and_exact_switches_it_off():
    doc = {"duration": 1, "flows": [{"scheme": "cubic"}]}
    assert config.resolve(doc)["host_noise"] == {**MODELS["kernel"]}
    for v in ("exact", "off", False):
        assert config.resolve({**doc, "host": {"noise": v}})["host_noise"] is None
    assert config.resolve({**doc, "host": {"noise": "kernel"}})["host_noise"]["clock_ppm"] == 50


def test_bad_noise_names_the_field_and_the_choices():
    with pytest.raises(config.ConfigError) as e:
        config.resolve({"duration": 1, "host": {"noise": "linux"}, "flows": [{"scheme": "cubic"}]})
    assert "host.noise" in str(e.value) and "exact" in str(e.value) and "kernel" in str(e.value)
    with pytest.raises(config.ConfigError) as e:
        config.resolve({"duration": 1, "host": {"nosie": "exact"}, "flows": [{"scheme": "cubic"}]})
    assert 'did you mean "noise"' in str(e.value)


def test_repeats_differ_with_noise_and_not_without(tmp_path):
    def tput(host, seed):
        text = f"duration: 3\nseed: {seed}\nhost: {{noise: {host}}}\n" \
               "central: {rate: 20Mbit, delay: 10ms, queue: 1bdp}\n" \
               "flows:\n  - {scheme: cubic, flows: 2}\n  - {scheme: vegas, start: 0.5}\n"
        fs = _run(tmp_path, text, f"{host}-{seed}").flowstats
        return fs["delivered_bytes"].to_list()
    assert tput("exact", 1) == tput("exact", 2)
    a, b = tput("kernel", 1), tput("kernel", 2)
    assert a != b
    assert a == tput("kernel", 1)  # still a pure function of the seed
    # Noise perturbs, it does not change the result's scale: totals within 2 %.
    assert abs(sum(a) - sum(b)) < 0.02 * sum(a)


def test_phase_locked_layout_starves_bbr_only_with_exact_timing(tmp_path):
    # Exact timing: BBR's packets always land on a full central queue, its retransmissions
    # are all dropped and it stops for good (last arrival ~7 s). With the kernel noise model
    # it is squeezed to a few Mbit/s until its min-RTT refresh near 10 s, then takes a share --
    # the kernel backend's time course on the same file (docs/fidelity.md).
    exact = _run(tmp_path, PHASE % {"d": 16, "seed": 1, "host": "host: {noise: exact}"}, "exact")
    noisy = _run(tmp_path, PHASE % {"d": 16, "seed": 1, "host": ""}, "noisy")

    def late_mbit(res):  # BBR's rate over 14-16 s
        iv = res.intervals
        b = iv.filter((iv["flow"] == 1) & (iv["bin"] >= 1400))["delivered_bytes"].sum()
        return b * 8 / 2 / 1e6
    assert exact.flowstats["last_arrival_ns"][1] < 9e9
    assert late_mbit(exact) == 0
    assert late_mbit(noisy) > 5


def test_exit_fifo_keeps_every_packet_and_its_order(tmp_path):
    text = "duration: 2\nseed: 3\ncentral: {rate: 50Mbit, delay: 5ms, queue: 1bdp}\n" \
           "flows:\n  - {scheme: reno, flows: 2}\n  - {scheme: udp, rate: 5Mbit, direction: '<-'}\n"
    res = _run(tmp_path, text, "r")
    fs = res.flowstats
    # Conservation (the simulator checks sent = delivered + dropped + in flight itself).
    assert (fs["sent_pkts"] >= fs["delivered_pkts"] + fs["dropped_pkts"]).all()
    assert fs["delivered_pkts"].min() > 0
