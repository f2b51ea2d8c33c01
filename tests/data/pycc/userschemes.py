"""User schemes for tests/test_pycc.py (loaded by file path)."""
from ccbench.cc import Controller, Scheme


class FailsLater(Scheme):
    def __init__(self, at_s=1.5):
        self.at_ns = int(at_s * 1e9)

    def pkts_acked(self, sk, acked, rtt_us, in_flight):
        if sk.now_ns > self.at_ns:
            self.helper(sk)

    def helper(self, sk):
        return sk.cwnd / 0


class Jitter(Scheme):
    """Random AI step from self.rng: deterministic per seed."""
    record = ("steps",)

    def __init__(self):
        self.steps = 0

    def cong_avoid(self, sk, acked):
        if sk.cwnd < sk.ssthresh:
            sk.cwnd = min(sk.cwnd + acked, sk.ssthresh)
        elif self.rng.random() < acked / sk.cwnd:
            sk.cwnd += 1
            self.steps += 1


class ConstRate(Controller):
    interval = "10ms"
    record = ("calls", "last_tput")

    def __init__(self, rate=5_000_000):
        self.rate = rate
        self.calls = 0
        self.last_tput = None

    def on_interval(self, sk, st):
        self.calls += 1
        self.last_tput = st.throughput_bps
        return {"pacing_rate": self.rate}


class RttWindow(Controller):
    """Per-RTT window controller: cwnd follows a schedule."""
    interval = "rtt"

    def init(self, sk):
        return {"cwnd": 8}

    def on_interval(self, sk, st):
        return {"cwnd": 40 if sk.now_ns > 1_000_000_000 else 8}


class BadCommand(Controller):
    interval = "5ms"

    def on_interval(self, sk, st):
        return {"window": 3}
