"""Periodic controllers for tests/test_emu_control.py (kernel flows driven by socket options)."""
from ccbench.cc import Controller, Scheme


class StepRate(Controller):
    """Pace at `first` bit/s until `at` s, then at `then`."""
    interval = "10ms"

    def __init__(self, first=20e6, then=50e6, at=1.5):
        self.first, self.then, self.at_ns = first, then, at * 1e9

    def init(self, sk):
        return {"pacing_rate": self.first}

    def on_interval(self, sk, st):
        return {"pacing_rate": self.first if sk.now_ns < self.at_ns else self.then}


class StepWindow(Controller):
    """Window of `first` packets until `at` s, then `then` (per-RTT intervals)."""
    interval = "rtt"

    def __init__(self, first=50, then=20, at=1.5):
        self.first, self.then, self.at_ns = first, then, at * 1e9

    def on_interval(self, sk, st):
        return {"cwnd": self.first if sk.now_ns < self.at_ns else self.then}


class Breaks(Controller):
    interval = "10ms"

    def on_interval(self, sk, st):
        if sk.now_ns > 500_000_000:
            return {"pacing_rate": st.throughput_bps / 0}
        return None


class PerAck(Scheme):
    def cong_avoid(self, sk, acked):
        sk.cwnd += 1
