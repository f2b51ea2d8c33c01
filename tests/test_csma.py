"""The half-duplex link mode (``duplex: half``; netmodel::csma, ns-3 CSMA bus semantics)
end to end through the experiment file: resolution, errors that name the key, and the airtime
the ACKs take from the data on a shared channel."""
from __future__ import annotations

import pytest

import ccbench
from ccbench import config
from ccbench.config.semantic import ConfigWarning

YAML = """\
duration: {duration}
seed: 1
host: {{noise: exact}}
mss: {mss}
central: {{rate: {rate}, delay: {delay}, queue: 100, overhead: 18, duplex: {duplex}}}
flows:
  - {{scheme: cubic, left-rate: 1Gbit, left-delay: 0.1ms, right-rate: 1Gbit, right-delay: 0.1ms}}
"""


def _run(tmp_path, name, **kw):
    path = tmp_path / f"{name}.yaml"
    path.write_text(YAML.format(**kw))
    exp = ccbench.load_experiment(path)
    return exp, ccbench.run(exp, tmp_path / name)


def _hold_s(ip_bytes: int, rate: float, delay: float) -> float:
    """Channel time of one frame: its transmission (IP bytes + 18 framing) and its propagation."""
    return (ip_bytes + 18) * 8 / rate + delay


def test_duplex_half_puts_both_central_directions_on_one_channel(tmp_path):
    exp, _ = _run(tmp_path, "r", duration=1, mss=1448, rate="10Mbit", delay="1ms", duplex="half")
    chan = {l["name"]: l.get("channel") for l in exp["links"]}
    assert chan["r1->r2"] == chan["r2->r1"] == "r1-r2"
    assert chan["a1->r1"] is None and chan["r2->b1"] is None
    full = config.resolve({"duration": 1, "central": {"rate": "10Mbit", "duplex": "full"},
                           "flows": [{"scheme": "cubic"}]})
    assert all("channel" not in l for l in full["links"])
    # Side links and topology links take it too.
    side = config.resolve({"duration": 1, "flows": [{"scheme": "cubic", "left-rate": "1Gbit",
                                                      "left-duplex": "half"}]})
    assert [l["channel"] for l in side["links"] if "channel" in l] == ["a1-r1", "a1-r1"]
    topo = config.resolve({"duration": 1, "topology": {"links": [
        {"from": "h1", "to": "r", "rate": "10Mbit", "duplex": "half"},
        {"from": "r", "to": "h2", "rate": "10Mbit"}]},
        "flows": [{"scheme": "cubic", "src": "h1", "dst": "h2"}]})
    assert [l.get("channel") for l in topo["links"]] == ["h1-r", "h1-r", None, None]


@pytest.mark.parametrize("central, group, field, words", [
    ({"duplex": "halfway"}, {}, "central.duplex", "is not full or half"),
    ({"rate": {"left": "10Mbit", "right": "5Mbit"}, "duplex": "half"}, {}, "central.duplex",
     "one rate for both directions"),
    ({"jitter": "1ms", "duplex": "half"}, {}, "central.duplex", "jitter cannot be combined"),
    ({}, {"left-duplex": "half"}, "flows[0].left-duplex", "needs a rate"),
])
def test_bad_duplex_settings_name_the_key(central, group, field, words):
    doc = {"duration": 1, "central": {"rate": "10Mbit", **central},
           "flows": [{"scheme": "cubic", **group}]}
    with pytest.raises(config.ConfigError, match=words) as e:
        config.resolve(doc)
    assert field in str(e.value)


def test_acks_take_airtime_on_a_half_duplex_link(tmp_path):
    rate, delay, secs = 10e6, 1e-3, 10
    _, full = _run(tmp_path, "full", duration=secs, mss=1448, rate="10Mbit", delay="1ms",
                   duplex="full")
    _, half = _run(tmp_path, "half", duration=secs, mss=1448, rate="10Mbit", delay="1ms",
                   duplex="half")
    g_full = full.flowstats["app_bytes"][0] / secs
    g_half = half.flowstats["app_bytes"][0] / secs
    wire = rate / 8 * 1448 / 1518
    assert 0.9 * wire < g_full <= wire
    # At least one ACK (52 B) per two full segments (Linux delayed ACK), each frame holding
    # the channel for its transmission and the 1-ms propagation: 2 MSS per 2 data holds + 1
    # ACK hold = 0.443 of the wire rate, whatever the congestion control does.
    bound = 2 * 1448 / (2 * _hold_s(1500, rate, delay) + _hold_s(52, rate, delay))
    assert g_half < bound
    assert g_half > 0.7 * bound, (g_half, bound)
    # No data packet is lost to the channel at this load (each side retries for ~0.5 s).
    assert (half.packets["drop_reason"] == "channel").sum() == 0


def test_the_csma_ceiling_of_a_long_fat_half_duplex_link(tmp_path):
    # A 200 Mbit/s, 98 ms channel: a 1518-byte frame holds it for 98.06 ms. Segments reach
    # the receiver about 196 ms apart, beyond the 40-ms delayed-ACK timer, so every segment
    # gets its own ACK: at most 1460 B per (data hold + ACK hold) = 7.44 kB/s (a full-duplex
    # link carries MB/s here). Slow start from IW 10 and the handshake cost little of 60 s.
    secs = 60
    # the file is valid, but the channel's ~10 frames per second are worth a warning
    with pytest.warns(ConfigWarning, match="at most 10.2 frames per second"):
        _, res = _run(tmp_path, "lfn", duration=secs, mss=1460, rate="200Mbit", delay="98ms",
                      duplex="half")
    ceiling = 1460 / (_hold_s(1512, 200e6, 0.098) + _hold_s(52, 200e6, 0.098))
    assert abs(ceiling - 7440) < 10
    g = res.flowstats["app_bytes"][0] / secs
    assert 0.85 * ceiling < g < ceiling, (g, ceiling)
