"""TCP Vegas as Linux net/ipv4/tcp_vegas.c, a port of crates/sim/src/cc/vegas.rs (same
decisions, same u32 arithmetic; see that file for how Linux differs from the paper).
Parameters as the module's: alpha, beta, gamma (packets)."""
from __future__ import annotations

from ccbench.cc import Scheme, tcp_cong_avoid_ai, tcp_slow_start

RTT_INIT = 0x7FFFFFFF
U32 = 0xFFFFFFFF


class Vegas(Scheme):
    record = ("diff", "base_rtt_us", "min_rtt_us", "cnt_rtt", "doing_vegas")

    def __init__(self, alpha: int = 2, beta: int = 4, gamma: int = 1) -> None:
        self.alpha, self.beta, self.gamma = int(alpha), int(beta), int(gamma)
        self.beg_snd_nxt = 0
        self.doing_vegas_now = True
        self.cnt_rtt = 0
        self.min_rtt = RTT_INIT
        self.base_rtt = RTT_INIT
        self.diff = 0

    # traces (cc_* columns), NaN before the first sample as the Rust version
    @property
    def base_rtt_us(self):
        return None if self.base_rtt == RTT_INIT else self.base_rtt

    @property
    def min_rtt_us(self):
        return None if self.min_rtt == RTT_INIT else self.min_rtt

    @property
    def doing_vegas(self):
        return 1.0 if self.doing_vegas_now else 0.0

    def _enable(self, sk) -> None:
        self.doing_vegas_now = True
        self.beg_snd_nxt = sk.snd_nxt
        self.cnt_rtt = 0
        self.min_rtt = RTT_INIT

    def init(self, sk) -> None:
        self.base_rtt = RTT_INIT
        self._enable(sk)

    def pkts_acked(self, sk, acked: int, rtt_us: int, in_flight: int) -> None:
        if rtt_us < 0:
            return
        vrtt = min(rtt_us, U32 - 1) + 1  # never a zero RTT
        if vrtt < self.base_rtt:
            self.base_rtt = vrtt
        if vrtt < self.min_rtt:
            self.min_rtt = vrtt
        self.cnt_rtt = min(self.cnt_rtt + 1, U32)

    def set_state(self, sk, new_state: str) -> None:
        if new_state == "open":
            self._enable(sk)
        else:
            self.doing_vegas_now = False

    def cwnd_event(self, sk, event: str) -> None:
        if event == "cwnd_restart" or event == "tx_start":
            self.init(sk)

    def _reno(self, sk, acked: int) -> None:
        if not sk.is_cwnd_limited:
            return
        if sk.in_slow_start:
            acked = tcp_slow_start(sk, acked)
            if acked == 0:
                return
        tcp_cong_avoid_ai(sk, sk.cwnd, acked)

    def cong_avoid(self, sk, acked: int) -> None:
        if not self.doing_vegas_now:
            self._reno(sk, acked)
            return
        if sk.snd_una > self.beg_snd_nxt:
            # Once per RTT.
            self.beg_snd_nxt = sk.snd_nxt
            if self.cnt_rtt <= 2:
                self._reno(sk, acked)
            else:
                rtt, base, cwnd = self.min_rtt, self.base_rtt, sk.cwnd
                target_cwnd = (cwnd * base // rtt) & U32
                diff = ((cwnd * ((rtt - base) & U32)) & U32) // base
                self.diff = diff
                if diff > self.gamma and cwnd < sk.ssthresh:
                    cwnd = min(cwnd, (target_cwnd + 1) & U32)
                    sk.cwnd = cwnd
                    sk.ssthresh = min(sk.ssthresh, cwnd)
                elif cwnd < sk.ssthresh:
                    tcp_slow_start(sk, acked)
                elif diff > self.beta:
                    sk.cwnd = cwnd - 1
                    sk.ssthresh = min(sk.ssthresh, cwnd - 1)
                elif diff < self.alpha:
                    sk.cwnd = cwnd + 1
                cwnd = sk.cwnd
                if cwnd < 2:
                    sk.cwnd = 2
                elif cwnd > sk.cwnd_clamp:
                    sk.cwnd = sk.cwnd_clamp
                sk.ssthresh = sk.current_ssthresh
            self.cnt_rtt = 0
            self.min_rtt = RTT_INIT
        elif sk.in_slow_start:
            tcp_slow_start(sk, acked)
