//! Reno as in Linux `tcp_reno_cong_avoid` / `tcp_reno_ssthresh` / `tcp_reno_undo_cwnd`
//! (net/ipv4/tcp_cong.c; RFC 5681). Fast retransmit, PRR, RACK, RTO and NewReno
//! partial-ACK handling are core functions (tcp/), not part of this module.

use super::{
    tcp_cong_avoid_ai, tcp_reno_ssthresh, tcp_slow_start, CongestionControl, SchemeInfo, Sock,
};

#[derive(Debug, Default)]
pub struct Reno;

impl Reno {
    pub fn new() -> Self {
        Reno
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_ssthresh(sk)
    }
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        // In "safe" area, increase by 1 per cwnd packets acked.
        let w = sk.cwnd;
        tcp_cong_avoid_ai(sk, w, acked);
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "reno",
    description: "Reno/NewReno AIMD as in Linux tcp_cong.c: packet-counting slow start, +1 MSS per cwnd in CA, halve on loss",
    source: "Linux net/ipv4/tcp_cong.c; RFC 5681, 6582",
    params: &[],
    make: |_| Ok(Box::new(Reno::new())),
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reno_slow_start_then_linear_growth() {
        let mut r = Reno::new();
        let mut sk = Sock::new(1448, 10);
        sk.is_cwnd_limited_flag = true;
        sk.ssthresh = 16;
        r.cong_avoid(&mut sk, 4);
        assert_eq!(sk.cwnd, 14);
        // 4 more acked: 2 to reach ssthresh 16, 2 credits in CA.
        r.cong_avoid(&mut sk, 4);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (16, 2));
        // 14 more: credit 16 = w -> cwnd 17.
        r.cong_avoid(&mut sk, 14);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (17, 0));
        // Not cwnd-limited: no growth.
        sk.is_cwnd_limited_flag = false;
        r.cong_avoid(&mut sk, 100);
        assert_eq!(sk.cwnd, 17);
        // Halving.
        sk.cwnd = 41;
        assert_eq!(r.ssthresh(&mut sk), 20);
    }
}
