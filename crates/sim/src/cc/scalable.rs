//! Scalable TCP (T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM CCR 33(2), 2003) as in Linux net/ipv4/tcp_scalable.c, 4.13+/5.x/6.x form.
//!
//! Congestion avoidance adds one segment per `min(cwnd, TCP_SCALABLE_AI_CNT)` packets acked
//! (Reno below 100 packets, +1 % per RTT above); a loss cuts the window by 1/8.
//!
//! Known differences / history:
//! * The kernel has no module parameters. `ai_cnt` is a ccbench variant parameter: the default 100
//!   is the 5.x/6.x constant (the paper's a = 0.01 per ACK, with stretch ACKs counted by
//!   `tcp_cong_avoid_ai(…, acked)`). Kernels before the 2017 ACK-counting rework (2.6/3.x/≤ 4.12)
//!   used 50 — "instead of 100 to account for delayed ack" — with one credit per ACK; set
//!   `ai_cnt: 50` for that era. The per-ACK credit
//!   of the old core is not modelled here (the shared helper counts packets).
//! * `undo_cwnd` is Reno's (the 5.x/6.x ops table), the trait default.

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, CongestionControl, ParamInfo, Params, SchemeInfo, Sock,
};

/// `TCP_SCALABLE_AI_CNT` (packets): cwnd += 1 per this many packets acked once cwnd exceeds it
/// (tcp_scalable.c, 5.x/6.x; 50 in older kernels).
pub const TCP_SCALABLE_AI_CNT: u32 = 100;
/// `TCP_SCALABLE_MD_SCALE`: multiplicative decrease by 2^-3 = 1/8 (ssthresh = cwnd − cwnd>>3).
pub const TCP_SCALABLE_MD_SCALE: u32 = 3;

/// Parameters (ccbench variant knob; the Linux module has none).
pub static PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "ai_cnt",
    default: 100.0,
    doc: "packets acked per +1 segment once cwnd > ai_cnt (TCP_SCALABLE_AI_CNT; 100 in 5.x/6.x, 50 in 2.6/3.x kernels)",
}];

#[derive(Clone, Debug)]
pub struct Scalable {
    /// `TCP_SCALABLE_AI_CNT` in use.
    ai_cnt: u32,
    /// Last AI divisor used, min(cwnd, ai_cnt) (trace only).
    last_w: u32,
}

impl Scalable {
    pub fn new(ai_cnt: u32) -> Self {
        Scalable { ai_cnt: ai_cnt.max(1), last_w: 0 }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Scalable::new(p.int("ai_cnt", TCP_SCALABLE_AI_CNT as i64, 1, 1 << 20)? as u32))
    }
}

impl Default for Scalable {
    fn default() -> Self {
        Scalable::new(TCP_SCALABLE_AI_CNT)
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    /// `tcp_scalable_ssthresh`: max(cwnd − cwnd>>3, 2).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        (sk.cwnd - (sk.cwnd >> TCP_SCALABLE_MD_SCALE)).max(2)
    }

    /// `tcp_scalable_cong_avoid`.
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
        let w = sk.cwnd.min(self.ai_cnt);
        self.last_w = w;
        tcp_cong_avoid_ai(sk, w, acked);
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("ai_w", self.last_w as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "scalable",
    description: "Scalable TCP: +1 segment per 100 acked above 100 packets (1 %/RTT), decrease by 1/8 on loss",
    source: "Linux net/ipv4/tcp_scalable.c (5.x/6.x); Kelly, ACM CCR 33(2) 2003",
    params: PARAMS,
    make: |p| Ok(Box::new(Scalable::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.is_cwnd_limited_flag = true;
        s
    }

    #[test]
    fn plus_one_per_100_acked_above_100() {
        let mut c = Scalable::default();
        let mut s = sk(1000, 500);
        c.cong_avoid(&mut s, 99);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1000, 99));
        c.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1001, 0));
        // Stretch ACK of 250 packets: +2, 50 credits left.
        c.cong_avoid(&mut s, 250);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1003, 50));
        // 1 % per RTT: one window of ACKs (1003 packets) adds 10 (1053/100).
        let before = s.cwnd;
        for _ in 0..before {
            c.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, before + 10);
        let mut out = vec![];
        c.sample(&mut out);
        assert_eq!(out, vec![("ai_w", 100.0)]);
    }

    #[test]
    fn reno_like_below_100() {
        let mut c = Scalable::default();
        let mut s = sk(50, 20);
        c.cong_avoid(&mut s, 49);
        assert_eq!(s.cwnd, 50);
        c.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 51); // +1 per cwnd (50) packets
        // Slow start below ssthresh, leftover goes to CA.
        let mut s = sk(10, 12);
        c.cong_avoid(&mut s, 5);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (12, 3));
        // Not cwnd-limited: nothing.
        s.is_cwnd_limited_flag = false;
        c.cong_avoid(&mut s, 100);
        assert_eq!(s.cwnd, 12);
    }

    #[test]
    fn decrease_by_one_eighth() {
        let mut c = Scalable::default();
        for &(w, want) in &[(1000u32, 875u32), (1001, 876), (9, 8), (8, 7), (2, 2), (1, 2)] {
            let mut s = sk(w, 10_000);
            assert_eq!(c.ssthresh(&mut s), want, "cwnd {}", w);
        }
    }

    #[test]
    fn old_kernel_ai_cnt_50() {
        let mut c = Scalable::new(50);
        let mut s = sk(1000, 500);
        c.cong_avoid(&mut s, 50);
        assert_eq!(s.cwnd, 1001);
    }

    #[test]
    fn params() {
        let m = serde_json::json!({"ai_cnt": 50});
        let c = Scalable::from_params(&Params { scheme: "scalable", obj: m.as_object() }).unwrap();
        assert_eq!(c.ai_cnt, 50);
        let c = Scalable::from_params(&Params { scheme: "scalable", obj: None }).unwrap();
        assert_eq!((c.ai_cnt as f64, PARAMS[0].default), (100.0, 100.0));
        let e = crate::cc::make("scalable", &serde_json::json!({"ai": 50})).err().unwrap();
        assert!(e.contains("ai_cnt"), "{}", e);
    }
}
