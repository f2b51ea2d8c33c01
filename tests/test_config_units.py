"""Unit parsing tables: rates, times, queue sizes, payload sizes, CoCo time strings, BDP."""

from fractions import Fraction

import pytest

from ccbench.config.errors import ConfigError
from ccbench.config.model import bdp_packets
from ccbench.config.units import (coco_time_us, parse_payload_size, parse_queue, parse_rate,
                                  parse_time)

P = ("x",)


@pytest.mark.parametrize("text, bps", [
    ("100Mbit", 100_000_000), ("1Gbit", 10**9), ("12.5Mbps", 12_500_000),
    ("10kbit", 10_000), ("1e9bit", 10**9), ("100mbit", 100_000_000),
    ("100 Mbit/s", 100_000_000), ("2.5gbps", 2_500_000_000), ("64kbps", 64_000),
    ("1500bit", 1500), ("1Tbit", 10**12), ("1Mibit", 2**20), ("1Kibit", 1024),
    (100, 100_000_000), (12.5, 12_500_000), (0.5, 500_000), ("100", 100_000_000),
    ("0.001", 1000), ("1_000kbit", 10**6),
    (0, None), (0.0, None), ("0Mbit", None), ("unlimited", None), ("inf", None),
])
def test_rates(text, bps):
    assert parse_rate(text, P) == bps


@pytest.mark.parametrize("text", ["100Mbt", "fast", "100 M", "Mbit", "", True, [1], "1e", "10Gb"])
def test_bad_rates(text):
    with pytest.raises(ConfigError) as e:
        parse_rate(text, ("flows", 1, "left-rate"))
    assert e.value.path == "flows[1].left-rate"
    assert "is not a rate" in e.value.message
    assert e.value.hint == "use e.g. 100Mbit, 1Gbit, 12.5Mbps or a bare number of Mbit/s"


def test_rate_error_text_exact():
    with pytest.raises(ConfigError) as e:
        parse_rate("100Mbt", ("flows", 1, "left-rate"))
    assert str(e.value) == ('flows[1].left-rate: "100Mbt" is not a rate; use e.g. 100Mbit, '
                            '1Gbit, 12.5Mbps or a bare number of Mbit/s')
    assert e.value.value == "100Mbt"


@pytest.mark.parametrize("text", ["12.5MBps", "1MB/s", "100Bps"])
def test_byte_rates_refused(text):
    with pytest.raises(ConfigError, match="bytes per second") as e:
        parse_rate(text, P)
    assert "bits" in e.value.hint


@pytest.mark.parametrize("text", ["-1Mbit", -5, -0.1])
def test_negative_rate(text):
    with pytest.raises(ConfigError, match="negative rate") as e:
        parse_rate(text, P)
    assert ">= 0" in e.value.hint


def test_rate_below_one_bit():
    with pytest.raises(ConfigError, match="below 1 bit/s"):
        parse_rate("0.1bit", P)


@pytest.mark.parametrize("text, ns", [
    ("10ms", 10_000_000), ("500us", 500_000), ("500µs", 500_000), ("500μs", 500_000),
    ("1.5s", 1_500_000_000), ("250ns", 250), ("1.1ms", 1_100_000), (5, 5_000_000),
    (0.5, 500_000), ("2", 2_000_000), ("0", 0), ("1min", 60 * 10**9), ("1MS", 1_000_000),
    ("1.0000004ms", 1_000_000), ("1.0000005ms", 1_000_001),
])
def test_delays(text, ns):
    assert parse_time(text, P) == ns  # bare numbers are ms


@pytest.mark.parametrize("text, ns", [(30, 30 * 10**9), ("30s", 30 * 10**9),
                                      (2.5, 2_500_000_000), ("500ms", 500_000_000)])
def test_seconds_bare(text, ns):
    assert parse_time(text, P, bare_ns=10**9) == ns


@pytest.mark.parametrize("text", ["10 msec", "ten", "10h", None, True, {"base": 1}])
def test_bad_times(text):
    with pytest.raises(ConfigError) as e:
        parse_time(text, ("central", "delay"), what="a delay")
    assert e.value.path == "central.delay"
    assert "is not a delay" in e.value.message
    assert "10ms" in e.value.hint and "ms" in e.value.hint


def test_negative_delay():
    with pytest.raises(ConfigError) as e:
        parse_time("-5ms", ("central", "delay"), what="a delay")
    assert str(e.value) == 'central.delay: negative delay "-5ms"; it must be >= 0'


@pytest.mark.parametrize("text, packets, nbytes, bdp", [
    (1000, 1000, None, None), ("1000", 1000, None, None), ("1000pkt", 1000, None, None),
    ("1000p", 1000, None, None), ("20 packets", 20, None, None), (0, 0, None, None),
    ("1.5MB", None, 1_500_000, None), ("64KB", None, 64_000, None), ("64kB", None, 64_000, None),
    ("1500B", None, 1500, None), ("64KiB", None, 65536, None), ("1MiB", None, 2**20, None),
    ("1GB", None, 10**9, None), ("100bytes", None, 100, None),
    ("1.5bdp", None, None, Fraction(3, 2)), ("2BDP", None, None, Fraction(2)),
    ("unlimited", None, None, None),
])
def test_queue_sizes(text, packets, nbytes, bdp):
    q = parse_queue(text, P)
    assert (q.packets, q.bytes, q.bdp) == (packets, nbytes, bdp)


@pytest.mark.parametrize("text, msg", [
    (1000.0, "not a whole number of packets"), ("1.5pkt", "not a whole number of packets"),
    ("1000b", "is not a queue size"), ("10Mbit", "is not a queue size"),
    ("-1", "negative queue size"), ("0bdp", "must be > 0 BDP"), (True, "is not a queue size"),
    (2**32, "too large"),
])
def test_bad_queue_sizes(text, msg):
    with pytest.raises(ConfigError, match=msg) as e:
        parse_queue(text, ("central", "queue"))
    assert e.value.path == "central.queue"
    assert e.value.hint


@pytest.mark.parametrize("text, nbytes", [("10MB", 10_000_000), (1000000, 1_000_000),
                                          ("100pkt", 144_800), ("1KiB", 1024), ("1.5kB", 1500)])
def test_payload_sizes(text, nbytes):
    assert parse_payload_size(text, P, 1448) == nbytes


@pytest.mark.parametrize("text", [0, "0MB", "-1", "10Mbit", "lots"])
def test_bad_payload_sizes(text):
    with pytest.raises(ConfigError) as e:
        parse_payload_size(text, ("flows", 0, "bytes"), 1448, what="a flow size")
    assert e.value.path == "flows[0].bytes"
    assert "100pkt" in e.value.hint


@pytest.mark.parametrize("text, us", [
    ("5", 5000), (5, 5000), (5.5, 5500), ("5ms", 5000), ("5us", 5), ("5s", 5_000_000),
    (" 7ms ", 7000), ("0us", 0), ("1.0009us", 1), ("0.0015ms", 1), ("2.9999us", 2),
    ("1.1ms", 1100),
])
def test_coco_time_truncates_to_us(text, us):
    assert coco_time_us(text, P, 100_000_000) == us


@pytest.mark.parametrize("text, msg", [("5ns", "not a time string"), ("abc", "not a time string"),
                                       ("-1ms", "negative"), ("101s", "exceeds the maximum"),
                                       (True, "not a time string")])
def test_coco_time_errors(text, msg):
    with pytest.raises(ConfigError, match=msg):
        coco_time_us(text, P, 100_000_000)


@pytest.mark.parametrize("bdp_bytes, mss, packets", [
    # 100 Mbit/s x 24 ms = 300 000 B; / 1500 = 200 packets exactly
    (Fraction(100_000_000 * 24_000_000, 8 * 10**9), 1448, 200),
    (Fraction(300_001), 1448, 201),   # rounded up
    (Fraction(1), 1448, 1), (Fraction(0), 1448, 1),   # at least 1
    (Fraction(3000), 948, 3),         # packets of mss + 52 bytes
])
def test_bdp_packets(bdp_bytes, mss, packets):
    assert bdp_packets(bdp_bytes, mss) == packets
