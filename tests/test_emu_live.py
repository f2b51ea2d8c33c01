"""The emulator's live progress (no root needed): parsing the engine's progress lines, the
per-flow rates and the progress line that shows them."""
from __future__ import annotations

import io

from ccbench.backends.emu.live import FlowRates, parse_progress
from ccbench.backends.emu.run import _progress_cb
from ccbench.progress import printer


def test_parse_progress_lines_and_reject_anything_else():
    assert parse_progress("progress t_ns=1000000000 bytes=125000,0,7") == (10**9, [125000, 0, 7])
    assert parse_progress("progress t_ns=5 bytes=") == (5, [])
    for bad in ("done", "ready", "progress t_ns=x bytes=1", "progress bytes=1 t_ns=2",
                "progress t_ns=1 bytes=1,a", ""):
        assert parse_progress(bad) is None


def test_rates_are_mbit_per_s_over_the_last_interval():
    r = FlowRates()
    r.feed(10**9, [1_000_000, 0])
    assert r.text() == ""  # one line: no interval yet
    r.feed(2 * 10**9, [4_750_000, 250_000])  # 3.75 MB and 0.25 MB in 1 s
    assert r.mbps == [30.0, 2.0]
    assert r.text() == "Mbit/s #1 30.00 #2 2.00"
    r.feed(2 * 10**9 + 500_000_000, [4_750_000, 500_000])  # 0.5 s later
    assert r.mbps == [0.0, 4.0]


def test_many_flows_are_folded():
    r = FlowRates()
    r.feed(0, [0] * 11)
    r.feed(10**9, [125_000] * 11)
    assert r.text().endswith("#8 1.00 +3 more") and "#9" not in r.text()


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def test_progress_line_shows_emulated_time_and_the_rates():
    out, clk = io.StringIO(), Clock()
    cb = printer("emulating", out, tty=False, clock=clk, unit="emulated")
    clk.t = 2.0
    cb(10**9, 3 * 10**9, "Mbit/s #1 29.80")
    clk.t = 4.0
    cb(3 * 10**9, 3 * 10**9, "Mbit/s #1 29.90")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("emulating: 33%  1.0/3 s emulated, 2.0 s wall")
    assert lines[0].endswith(", Mbit/s #1 29.80") and lines[1].endswith("Mbit/s #1 29.90")
    tty = io.StringIO()
    cb = printer("emulating", tty, tty=True, clock=clk, unit="emulated", delay=0)
    cb(10**9, 3 * 10**9, "Mbit/s #1 1.00")
    assert tty.getvalue().startswith("\r  emulating [") and "Mbit/s #1 1.00" in tty.getvalue()


def test_quiet_means_no_progress_and_a_callable_gets_the_times():
    assert _progress_cb(False) is None
    seen = []
    cb = _progress_cb(lambda now, end: seen.append((now, end)))
    cb(1, 2, "Mbit/s #1 1.00")
    assert seen == [(1, 2)]
