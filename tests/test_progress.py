"""Progress output: nothing for short runs, a redrawn bar on a terminal, periodic lines otherwise."""
from __future__ import annotations

import io

from ccbench.progress import printer


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def feed(tty):
    out, clk = io.StringIO(), Clock()
    cb = printer("simulating", out, tty=tty, clock=clk, every=10.0)
    for i in range(0, 101):  # 100 s of wall for a 50 s run, one callback per wall second
        clk.t = float(i)
        cb(int(i * 0.5e9), int(50e9))
    return out.getvalue()


def test_plain_lines_every_10_s_with_speed_and_eta():
    lines = feed(False).splitlines()
    assert len(lines) == 11 and lines[-1].startswith("simulating: 100%")
    assert "\r" not in "".join(lines)
    assert "0.50x real time" in lines[0] and "eta" in lines[0] and "s wall" in lines[0]


def test_terminal_bar_is_redrawn_in_place_and_ends_with_a_newline():
    s = feed(True)
    assert s.count("\r") == 100 and s.endswith("\n") and s.count("\n") == 1


def test_short_runs_print_nothing():
    out, clk = io.StringIO(), Clock()
    cb = printer("simulating", out, tty=True, clock=clk)
    clk.t = 0.5
    cb(10, 10)
    assert out.getvalue() == ""
