"""A periodic rate controller (ccbench.cc.Controller): additive increase of the pacing rate
every interval, multiplicative decrease on an interval with losses or an RTT above
``rtt_factor`` × the minimum. An example of the periodic mode (docs/python-schemes.md) and the
subject of its benchmark (benches/pycc.py)."""
from __future__ import annotations

from ccbench.cc import Controller


class AimdRate(Controller):
    interval = "10ms"
    record = ("rate",)

    def __init__(self, rate: float = 10e6, step: float = 1e6, beta: float = 0.7,
                 rtt_factor: float = 1.5, interval: str | float = "10ms") -> None:
        self.rate, self.step, self.beta, self.rtt_factor = float(rate), step, beta, rtt_factor
        self.interval = interval

    def init(self, sk):
        return {"pacing_rate": self.rate}

    def on_interval(self, sk, st):
        congested = st.lost > 0 or (st.rtt_samples and st.min_rtt_us
                                    and st.rtt_mean_us > self.rtt_factor * st.min_rtt_us)
        if congested:
            self.rate = max(self.rate * self.beta, 1e5)
        else:
            self.rate += self.step
        return {"pacing_rate": self.rate}
