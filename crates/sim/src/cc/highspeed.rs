//! HighSpeed TCP (Sally Floyd, RFC 3649) as in Linux net/ipv4/tcp_highspeed.c, 5.x/6.x form
//! (AIMD table of RFC 3649 Appendix B with b(w) scaled ×256).
//!
//! In congestion avoidance each ACK adds `a(w) = ai + 1` credits to `snd_cwnd_cnt` and cwnd
//! grows by one when the credits reach cwnd, i.e. cwnd += a(w)/cwnd per ACK. On loss
//! ssthresh = cwnd − cwnd·b(w) with b(w) = md/256. Row `ai` is the first table row whose
//! window is ≥ cwnd, kept up to date incrementally on every CA ACK as the kernel does; the
//! ssthresh hook uses the row of the last CA ACK (the kernel does not re-index there).
//!
//! Known differences: none in the module logic. Like the kernel, growth in CA is per ACK (not
//! per packet acked: a stretch ACK counts once) and slow start uses `tcp_slow_start` without
//! carrying leftover credit into CA. The module has no parameters.

use super::{tcp_slow_start, CongestionControl, ParamInfo, SchemeInfo, Sock};

/// `hstcp_aimd_vals` (tcp_highspeed.c, from RFC 3649 App. B): (cwnd upper bound in packets,
/// decrease factor b(w) ×256). Row i has a(w) = i + 1.
pub const HSTCP_AIMD_VALS: [(u32, u32); 72] = [
    (38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89), (851, 86), (1058, 83),
    (1284, 81), (1529, 78), (1793, 76), (2076, 74), (2378, 72), (2699, 71), (3039, 69),
    (3399, 68), (3778, 66), (4177, 65), (4596, 64), (5036, 62), (5497, 61), (5979, 60),
    (6483, 59), (7009, 58), (7558, 57), (8130, 56), (8726, 55), (9346, 54), (9991, 53),
    (10661, 52), (11358, 52), (12082, 51), (12834, 50), (13614, 49), (14424, 48), (15265, 48),
    (16137, 47), (17042, 46), (17981, 45), (18955, 45), (19965, 44), (21013, 43), (22101, 43),
    (23230, 42), (24402, 41), (25618, 41), (26881, 40), (28193, 39), (29557, 39), (30975, 38),
    (32450, 38), (33986, 37), (35586, 36), (37253, 36), (38992, 35), (40808, 35), (42707, 34),
    (44694, 33), (46776, 33), (48961, 32), (51258, 32), (53677, 31), (56230, 30), (58932, 30),
    (61799, 29), (64851, 28), (68113, 28), (71617, 27), (75401, 26), (79517, 26), (84035, 25),
    (89053, 24),
];
/// `HSTCP_AIMD_MAX`: number of table rows.
pub const HSTCP_AIMD_MAX: usize = HSTCP_AIMD_VALS.len();
/// cwnd clamp set by `hstcp_init` so that the kernel's 32-bit product cwnd·md (md ≤ 128)
/// cannot overflow: 0xffffffff/128 packets.
pub const HSTCP_CWND_CLAMP: u32 = 0xffff_ffff / 128;

/// The Linux module has no parameters.
pub static PARAMS: &[ParamInfo] = &[];

#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    /// Row index into `HSTCP_AIMD_VALS` (a(w) = ai + 1).
    ai: usize,
}

impl HighSpeed {
    pub fn new() -> Self {
        HighSpeed { ai: 0 }
    }

    /// Current a(w): segments added per window of ACKs.
    pub fn a(&self) -> u32 {
        self.ai as u32 + 1
    }

    /// Current b(w) ×256.
    pub fn md(&self) -> u32 {
        HSTCP_AIMD_VALS[self.ai].1
    }

    /// Move `ai` so that vals[ai−1].cwnd < cwnd ≤ vals[ai].cwnd (or the last row).
    fn update_index(&mut self, cwnd: u32) {
        if cwnd > HSTCP_AIMD_VALS[self.ai].0 {
            while cwnd > HSTCP_AIMD_VALS[self.ai].0 && self.ai < HSTCP_AIMD_MAX - 1 {
                self.ai += 1;
            }
        } else if self.ai > 0 && cwnd <= HSTCP_AIMD_VALS[self.ai - 1].0 {
            while self.ai > 0 && cwnd <= HSTCP_AIMD_VALS[self.ai - 1].0 {
                self.ai -= 1;
            }
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    /// `hstcp_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.ai = 0;
        sk.cwnd_clamp = sk.cwnd_clamp.min(HSTCP_CWND_CLAMP);
    }

    /// `hstcp_ssthresh`: cwnd − cwnd·md/256, at least 2.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let cut = ((sk.cwnd as u64 * self.md() as u64) >> 8) as u32;
        (sk.cwnd - cut).max(2)
    }

    /// `hstcp_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            tcp_slow_start(sk, acked);
            return;
        }
        self.update_index(sk.cwnd);
        // cwnd = cwnd + a(w)/cwnd
        if sk.cwnd < sk.cwnd_clamp {
            sk.snd_cwnd_cnt += self.a();
            if sk.snd_cwnd_cnt >= sk.cwnd {
                sk.snd_cwnd_cnt -= sk.cwnd;
                sk.cwnd += 1;
            }
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("ai", self.ai as f64));
        out.push(("a", self.a() as f64));
        out.push(("b", self.md() as f64 / 256.0));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "highspeed",
    description: "HighSpeed TCP: window-dependent AIMD a(w), b(w) from the RFC 3649 table",
    source: "Linux net/ipv4/tcp_highspeed.c (5.x/6.x); RFC 3649 App. B",
    params: PARAMS,
    make: |_| Ok(Box::new(HighSpeed::new())),
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

    /// Index a(w), b(w) at a window by one CA ACK.
    fn at(c: &mut HighSpeed, w: u32) -> (u32, u32) {
        let mut s = sk(w, 1);
        c.cong_avoid(&mut s, 1);
        (c.a(), c.md())
    }

    #[test]
    fn table_matches_rfc3649_appendix_b() {
        // Spot values of RFC 3649 App. B (w, a(w), b(w)): the kernel's md = round-ish(b·256).
        assert_eq!(HSTCP_AIMD_MAX, 72);
        assert_eq!(HSTCP_AIMD_VALS[0], (38, 128)); // 38: a 1, b 0.50
        assert_eq!(HSTCP_AIMD_VALS[7], (1058, 83)); // 1058: a 8, b 0.33
        assert_eq!(HSTCP_AIMD_VALS[29], (10661, 52)); // 10661: a 30, b 0.20
        assert_eq!(HSTCP_AIMD_VALS[71], (89053, 24)); // 89053: a 72, b 0.10
        // Windows strictly increasing, md non-increasing.
        for i in 1..HSTCP_AIMD_MAX {
            assert!(HSTCP_AIMD_VALS[i].0 > HSTCP_AIMD_VALS[i - 1].0);
            assert!(HSTCP_AIMD_VALS[i].1 <= HSTCP_AIMD_VALS[i - 1].1);
        }
    }

    #[test]
    fn a_and_b_at_several_windows() {
        let mut c = HighSpeed::new();
        // Row = first whose window is ≥ cwnd.
        assert_eq!(at(&mut c, 38), (1, 128));
        assert_eq!(at(&mut c, 39), (2, 112));
        assert_eq!(at(&mut c, 100), (2, 112));
        assert_eq!(at(&mut c, 1000), (8, 83));
        assert_eq!(at(&mut c, 1058), (8, 83));
        assert_eq!(at(&mut c, 1059), (9, 81));
        assert_eq!(at(&mut c, 10000), (30, 52));
        assert_eq!(at(&mut c, 89053), (72, 24));
        assert_eq!(at(&mut c, 500_000), (72, 24)); // beyond the table: last row
        // And back down (the index walks both ways).
        assert_eq!(at(&mut c, 500), (6, 89));
        assert_eq!(at(&mut c, 20), (1, 128));
    }

    #[test]
    fn multiplicative_decrease() {
        let mut c = HighSpeed::new();
        // cwnd 1000 (row 7, md 83): 1000·83 >> 8 = 324 ⇒ 676 (b = 0.324).
        at(&mut c, 1000);
        let mut s = sk(1000, 1);
        assert_eq!(c.ssthresh(&mut s), 676);
        // cwnd 100 (row 1, md 112): 100·112>>8 = 43 ⇒ 57.
        at(&mut c, 100);
        let mut s = sk(100, 1);
        assert_eq!(c.ssthresh(&mut s), 57);
        // cwnd 10000 (row 29, md 52): 520000>>8 = 2031 ⇒ 7969.
        at(&mut c, 10000);
        let mut s = sk(10000, 1);
        assert_eq!(c.ssthresh(&mut s), 7969);
        // Small windows: Reno halving, floor 2.
        at(&mut c, 30);
        let mut s = sk(30, 1);
        assert_eq!(c.ssthresh(&mut s), 15);
        let mut s = sk(3, 1);
        assert_eq!(c.ssthresh(&mut s), 2);
    }

    #[test]
    fn additive_increase_per_ack() {
        let mut c = HighSpeed::new();
        // cwnd 1000: a = 8 credits per ACK ⇒ +1 after 125 ACKs.
        let mut s = sk(1000, 1);
        for _ in 0..124 {
            c.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1000, 992));
        c.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1001, 0));
        // Per ACK, not per packet: a stretch ACK of 10 adds only a(w) = 8 credits.
        c.cong_avoid(&mut s, 10);
        assert_eq!(s.snd_cwnd_cnt, 8);
        // cwnd 38 (a = 1): Reno rate, +1 after 38 ACKs.
        let mut s = sk(38, 1);
        for _ in 0..37 {
            c.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 38);
        c.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 39);
        // Clamp: no growth at the clamp.
        let mut s = sk(1000, 1);
        s.cwnd_clamp = 1000;
        for _ in 0..200 {
            c.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (1000, 0));
    }

    #[test]
    fn slow_start_and_init_clamp() {
        let mut c = HighSpeed::new();
        let mut s = sk(10, 100);
        s.cwnd_clamp = u32::MAX;
        c.init(&mut s);
        assert_eq!(s.cwnd_clamp, 0xffff_ffff / 128);
        c.cong_avoid(&mut s, 4);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (14, 0));
        // Slow start stops at ssthresh; leftover is dropped (kernel ignores tcp_slow_start's return).
        let mut s = sk(98, 100);
        c.cong_avoid(&mut s, 5);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (100, 0));
    }

    #[test]
    fn no_params() {
        assert!(PARAMS.is_empty());
        let e = crate::cc::make("highspeed", &serde_json::json!({"low_window": 38})).err().unwrap();
        assert!(e.contains("(none)"), "{}", e);
        assert_eq!(crate::cc::make("highspeed", &serde_json::Value::Null).unwrap().name(), "highspeed");
    }
}
