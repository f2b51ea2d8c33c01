"""Reno as Linux ``tcp_reno_cong_avoid`` / ``tcp_reno_ssthresh`` / ``tcp_reno_undo_cwnd``
(net/ipv4/tcp_cong.c; RFC 5681), a port of crates/sim/src/cc/reno.rs written out in full
(no helpers) so that it shows every socket field it touches."""
from __future__ import annotations

from ccbench.cc import Scheme


class Reno(Scheme):
    def ssthresh(self, sk) -> int:
        return max(sk.cwnd >> 1, 2)

    def cong_avoid(self, sk, acked: int) -> None:
        if not sk.is_cwnd_limited:
            return
        cwnd = sk.cwnd
        ssthresh = sk.ssthresh
        if cwnd < ssthresh:
            # tcp_slow_start: grow by the packets acked, up to ssthresh.
            new = min(cwnd + acked, ssthresh)
            acked -= new - cwnd
            cwnd = min(new, sk.cwnd_clamp)
            sk.cwnd = cwnd
            if acked == 0:
                return
        # tcp_cong_avoid_ai(sk, cwnd, acked): +1 per cwnd packets acked.
        w = max(cwnd, 1)
        cnt = sk.snd_cwnd_cnt
        if cnt >= w:
            cnt = 0
            cwnd += 1
        cnt += acked
        if cnt >= w:
            delta = cnt // w
            cnt -= delta * w
            cwnd += delta
        sk.snd_cwnd_cnt = cnt
        sk.cwnd = min(cwnd, sk.cwnd_clamp)
