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


class HookCounter(Scheme):
    """Counts every hook; reno growth so that losses happen."""
    record = ("acks",)

    def __init__(self):
        self.calls = {}
        self.states = set()
        self.events = set()
        self.acks = 0

    def _n(self, k):
        self.calls[k] = self.calls.get(k, 0) + 1

    def init(self, sk):
        self._n("init")

    def cong_avoid(self, sk, acked):
        self._n("cong_avoid")
        if sk.cwnd < sk.ssthresh:
            sk.cwnd = min(sk.cwnd + acked, sk.ssthresh)
        else:
            sk.snd_cwnd_cnt += acked
            if sk.snd_cwnd_cnt >= sk.cwnd:
                sk.snd_cwnd_cnt -= sk.cwnd
                sk.cwnd += 1

    def ssthresh(self, sk):
        self._n("ssthresh")
        return max(sk.cwnd >> 1, 2)

    def set_state(self, sk, new_state):
        self._n("set_state")
        self.states.add(new_state)

    def cwnd_event(self, sk, event):
        self._n("cwnd_event")
        self.events.add(event)

    def pkts_acked(self, sk, acked, rtt_us, in_flight):
        self._n("pkts_acked")

    def in_ack_event(self, sk, flags):
        self._n("in_ack_event")
        self.acks += 1

    def skb_marked_lost(self, sk, tx_in_flight, tx_lost, is_app_limited, tx_valid):
        self._n("skb_marked_lost")

    def undo_cwnd(self, sk):
        self._n("undo_cwnd")
        return max(sk.cwnd, sk.prior_cwnd)


class FixedWindow(Scheme):
    """cong_control: owns the window and the pacing rate (BBR-like)."""
    record = ("samples",)

    def __init__(self):
        self.samples = 0
        self.last_delivered = None

    def init(self, sk):
        sk.pacing_status = "needed"

    def cong_control(self, sk, rs):
        self.samples += 1
        if rs.delivered > 0 and rs.interval_us > 0:
            self.last_delivered = rs.delivered
        sk.cwnd = 20
        sk.pacing_rate = 4_000_000.0
        return True
