//! TCP Westwood+ (Mascolo, Grieco et al.; Grieco & Mascolo, "Performance evaluation and
//! comparison of Westwood+, New Reno, and Vegas TCP congestion control", ACM CCR 34(2), 2004) as
//! in Linux net/ipv4/tcp_westwood.c, 2.6.32–3.x era rules; the hook mapping is that of ≥ 4.x
//! kernels, whose algorithm is unchanged.
//!
//! Growth and the ssthresh hook are Reno. The module estimates the bandwidth from the bytes
//! acknowledged per RTT window (at least 50 ms), low-pass filters it twice with (7a + b)/8, and
//! tracks the minimum RTT sample. After a loss it sets ssthresh (and cwnd, at the end of a
//! fast-recovery/CWR episode) to bw_est·rtt_min/mss — the pipe size — instead of cwnd/2.
//!
//! Units as the kernel: times in jiffies (HZ = 1000 ⇒ ms, `usecs_to_jiffies` rounds up),
//! bandwidth in bytes per jiffy.
//!
//! Era mapping and known differences:
//! * 2.6.x delivered the per-ACK bookkeeping as `CA_EVENT_FAST_ACK` / `CA_EVENT_SLOW_ACK` and the
//!   RTO as `CA_EVENT_FRTO`; here they are `in_ack_event` without/with `CA_ACK_SLOWPATH` and
//!   `CaEvent::Loss`, as in ≥ 4.x kernels (same actions).
//! * 2.6.x also registered `min_cwnd = bw_rttmin`, the floor of rate-halving recovery; the
//!   simulator's core recovers with PRR (no `min_cwnd` hook), as ≥ 3.x kernels do.
//! * The kernel's `rtt_min` is the minimum of the per-ACK RTT samples (`pkts_acked`), not of
//!   SRTT as some descriptions have it; we follow the kernel.
//! * `bw_est·rtt_min` is computed in 64 bits (32 in the kernel; it would wrap above ≈ 34 Gbit/s
//!   at 1 s RTT). `snd_una` is the simulator's 64-bit byte sequence.
//! * `undo_cwnd` is Reno's (the 4.x+ ops table; 2.6 kernels had no undo hook and the core used
//!   max(cwnd, prior_cwnd)-like logic).

use super::{
    tcp_cong_avoid_ai, tcp_reno_ssthresh, tcp_slow_start, AckSample, CaEvent, CongestionControl,
    ParamInfo, SchemeInfo, Sock, CA_ACK_SLOWPATH,
};

/// `TCP_WESTWOOD_RTT_MIN`: HZ/20 = 50 ms, the shortest bandwidth-sampling window (jiffies).
const TCP_WESTWOOD_RTT_MIN: u32 = 1000 / 20;
/// `TCP_WESTWOOD_INIT_RTT`: 20·HZ = 20 s, deliberately conservative initial RTT (jiffies).
const TCP_WESTWOOD_INIT_RTT: u32 = 20 * 1000;

/// The Linux module has no parameters.
pub static PARAMS: &[ParamInfo] = &[];

/// `usecs_to_jiffies` at HZ = 1000 (rounding up).
#[inline]
fn usecs_to_jiffies(us: u64) -> u32 {
    us.div_ceil(1000).min(u32::MAX as u64) as u32
}

/// `westwood_do_filter`: (7a + b)/8.
#[inline]
fn do_filter(a: u32, b: u32) -> u32 {
    ((7 * a as u64 + b as u64) >> 3) as u32
}

/// Per-connection state (`struct westwood`).
#[derive(Clone, Debug)]
pub struct Westwood {
    /// First (lightly smoothed) bandwidth estimate, bytes/jiffy.
    bw_ns_est: u32,
    /// Bandwidth estimate, bytes/jiffy.
    bw_est: u32,
    /// Start of the current sampling window (jiffies).
    rtt_win_sx: u32,
    /// Bytes acknowledged in the current window.
    bk: u32,
    /// snd_una at the previous ACK.
    snd_una: u64,
    /// Bytes acknowledged by the current ACK (slow path).
    cumul_ack: u32,
    /// Bytes already counted through duplicate ACKs.
    accounted: u32,
    /// Last RTT sample and the minimum RTT (jiffies).
    rtt: u32,
    rtt_min: u32,
    first_ack: bool,
    /// Take the next RTT sample as the new minimum (after an RTO).
    reset_rtt_min: bool,
    /// MSS at the last hook (traces only).
    mss: u32,
}

impl Westwood {
    pub fn new() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: TCP_WESTWOOD_INIT_RTT,
            rtt_min: TCP_WESTWOOD_INIT_RTT,
            first_ack: true,
            reset_rtt_min: true,
            mss: 0,
        }
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u32 {
        (sk.now_ns / 1_000_000) as u32
    }

    /// `westwood_filter`.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            // Empty filter: take the first sample.
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = do_filter(self.bw_ns_est, sample);
            self.bw_est = do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the sampling window once max(RTT, 50 ms) has passed.
    fn update_window(&mut self, sk: &Sock) {
        let now = Self::jiffies(sk);
        let delta = now.wrapping_sub(self.rtt_win_sx) as i32;
        // Align snd_una with the first acknowledged sequence for the first sample.
        if self.first_ack {
            self.snd_una = sk.snd_una;
            self.first_ack = false;
        }
        if self.rtt != 0 && delta > 0 && delta as u32 > self.rtt.max(TCP_WESTWOOD_RTT_MIN) {
            self.filter(delta as u32);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    /// `update_rtt_min`.
    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_acked_count`: bytes acknowledged by a slow-path ACK; a duplicate ACK counts one
    /// MSS, later deducted from the cumulative ACK that covers it.
    fn acked_count(&mut self, sk: &Sock) -> u32 {
        let mss = sk.mss;
        self.cumul_ack = sk.snd_una.wrapping_sub(self.snd_una) as u32;
        if self.cumul_ack == 0 {
            // Duplicate ACK: snd_una did not move.
            self.accounted += mss;
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            if self.accounted >= self.cumul_ack {
                // Partial ACK: its data was already counted via dupACKs.
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                // Delayed ACK or the cumulative ACK ending recovery.
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = sk.snd_una;
        self.cumul_ack
    }

    /// `tcp_westwood_bw_rttmin`: bw_est·rtt_min/mss packets, at least 2.
    fn bw_rttmin(&self, mss: u32) -> u32 {
        let v = self.bw_est as u64 * self.rtt_min as u64 / mss.max(1) as u64;
        v.clamp(2, u32::MAX as u64) as u32
    }

    /// Bandwidth estimate in bit/s.
    pub fn bw_est_bps(&self) -> f64 {
        self.bw_est as f64 * 8.0 * 1000.0
    }
}

impl Default for Westwood {
    fn default() -> Self {
        Westwood::new()
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }
    /// 2.6.36's `.min_cwnd = tcp_westwood_bw_rttmin` (rate-halving floor): the pipe size.
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        self.bw_rttmin(sk.mss)
    }

    /// `tcp_westwood_init`.
    fn init(&mut self, sk: &mut Sock) {
        *self = Westwood::new();
        self.rtt_win_sx = Self::jiffies(sk);
        self.snd_una = sk.snd_una;
        self.mss = sk.mss;
    }

    /// Reno: max(cwnd/2, 2).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_ssthresh(sk)
    }

    /// `tcp_reno_cong_avoid`.
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
        let w = sk.cwnd;
        tcp_cong_avoid_ai(sk, w, acked);
    }

    /// `tcp_westwood_pkts_acked`: keep the last RTT sample.
    fn pkts_acked(&mut self, _sk: &mut Sock, sample: &AckSample) {
        if sample.rtt_us > 0 {
            self.rtt = usecs_to_jiffies(sample.rtt_us as u64);
        }
    }

    /// `tcp_westwood_ack`: bandwidth bookkeeping on every ACK.
    fn in_ack_event(&mut self, sk: &mut Sock, flags: u32) {
        self.mss = sk.mss;
        if flags & CA_ACK_SLOWPATH != 0 {
            self.update_window(sk);
            let acked = self.acked_count(sk);
            self.bk = self.bk.wrapping_add(acked);
            self.update_rtt_min();
            return;
        }
        // Fast path (`westwood_fast_bw`): a pure cumulative advance.
        self.update_window(sk);
        self.bk = self.bk.wrapping_add(sk.snd_una.wrapping_sub(self.snd_una) as u32);
        self.snd_una = sk.snd_una;
        self.update_rtt_min();
    }

    /// `tcp_westwood_event`.
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        self.mss = sk.mss;
        match ev {
            CaEvent::CompleteCwr => {
                sk.ssthresh = self.bw_rttmin(sk.mss);
                sk.cwnd = sk.ssthresh;
            }
            CaEvent::Loss => {
                sk.ssthresh = self.bw_rttmin(sk.mss);
                // Update rtt_min when the next ACK arrives.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("bw_est_bps", self.bw_est_bps()));
        out.push(("bw_ns_est_bps", self.bw_ns_est as f64 * 8.0 * 1000.0));
        out.push(("rtt_min_ms", self.rtt_min as f64));
        out.push(("rtt_ms", self.rtt as f64));
        out.push(("bw_rttmin", self.bw_rttmin(self.mss) as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "westwood",
    description: "Westwood+: Reno growth; after loss ssthresh (and cwnd after recovery) = filtered bandwidth × min RTT",
    source: "Linux net/ipv4/tcp_westwood.c (2.6.32–3.x rules, 4.x+ hooks); Grieco & Mascolo, ACM CCR 34(2) 2004",
    params: PARAMS,
    make: |_| Ok(Box::new(Westwood::new())),
}];

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn sk_at(ms: u64) -> Sock {
        let mut s = Sock::new(MSS, 10);
        s.now_ns = ms * 1_000_000;
        s.now_us = ms * 1000;
        s
    }

    /// An ACK at `ms` moving snd_una to `una` (fast path), with an RTT sample.
    fn ack(w: &mut Westwood, s: &mut Sock, ms: u64, una: u64, rtt_ms: i64, flags: u32) {
        s.now_ns = ms * 1_000_000;
        s.now_us = ms * 1000;
        s.snd_una = una;
        w.pkts_acked(s, &AckSample { pkts_acked: 1, rtt_us: rtt_ms * 1000, in_flight: 10 });
        w.in_ack_event(s, flags);
    }

    #[test]
    fn bandwidth_filter_and_bw_rttmin() {
        let mut w = Westwood::new();
        let mut s = sk_at(0);
        w.init(&mut s);
        let p = MSS as u64;
        // First ACK at 10 ms only aligns snd_una (its bytes are not counted); RTT 40 ms becomes
        // rtt_min (reset_rtt_min is set at init).
        ack(&mut w, &mut s, 10, 10 * p, 40, 0);
        assert_eq!((w.bk, w.rtt_min), (0, 40));
        // 20 packets by 30 ms: window still open (30 ≤ max(40, 50)).
        ack(&mut w, &mut s, 30, 30 * p, 42, 0);
        assert_eq!(w.bk, 20 * MSS);
        // At 60 ms the window (60 > 50) closes before this ACK's bytes are added:
        // first sample = 28960 B / 60 ms = 482 B/ms ⇒ bw_ns_est = bw_est = 482.
        ack(&mut w, &mut s, 60, 40 * p, 45, 0);
        assert_eq!((w.bw_ns_est, w.bw_est, w.rtt_win_sx, w.bk), (482, 482, 60, 10 * MSS));
        // At 120 ms: sample 14480/60 = 241; bw_ns_est = (7·482 + 241)/8 = 451;
        // bw_est = (7·482 + 451)/8 = 478.
        ack(&mut w, &mut s, 120, 60 * p, 41, 0);
        assert_eq!((w.bw_ns_est, w.bw_est), (451, 478));
        assert_eq!(w.rtt_min, 40);
        // Pipe size: 478 B/ms · 40 ms / 1448 B = 13.2 ⇒ 13 packets.
        assert_eq!(w.bw_rttmin(MSS), 13);
        assert_eq!(w.bw_est_bps(), 478.0 * 8000.0);
        // The window is max(RTT, 50 ms): with a 90 ms RTT sample, 80 ms is not enough.
        ack(&mut w, &mut s, 200, 70 * p, 90, 0);
        assert_eq!(w.bw_est, 478);
        ack(&mut w, &mut s, 211, 71 * p, 90, 0);
        assert_ne!(w.bw_est, 478);
    }

    #[test]
    fn ssthresh_from_bandwidth_after_loss() {
        let mut w = Westwood::new();
        let mut s = sk_at(0);
        w.init(&mut s);
        w.bw_est = 12_500; // 100 Mbit/s in bytes/ms
        w.rtt_min = 20;
        s.cwnd = 400;
        // Recovery entry: Reno's cwnd/2.
        assert_eq!(w.ssthresh(&mut s), 200);
        // End of recovery: cwnd = ssthresh = 12500·20/1448 = 172.6 ⇒ 172.
        w.cwnd_event(&mut s, CaEvent::CompleteCwr);
        assert_eq!((s.cwnd, s.ssthresh), (172, 172));
        // RTO: ssthresh only, and rtt_min is re-taken from the next sample.
        s.cwnd = 1;
        w.cwnd_event(&mut s, CaEvent::Loss);
        assert_eq!((s.cwnd, s.ssthresh, w.reset_rtt_min), (1, 172, true));
        ack(&mut w, &mut s, 5, 0, 35, 0);
        assert_eq!(w.rtt_min, 35);
        // Floor of 2 packets.
        w.bw_est = 10;
        w.cwnd_event(&mut s, CaEvent::CompleteCwr);
        assert_eq!((s.cwnd, s.ssthresh), (2, 2));
    }

    #[test]
    fn slow_path_dupack_accounting() {
        let mut w = Westwood::new();
        let mut s = sk_at(0);
        w.init(&mut s);
        ack(&mut w, &mut s, 1, 0, 30, CA_ACK_SLOWPATH); // aligns snd_una = 0; a dupACK: +1 MSS
        assert_eq!((w.bk, w.accounted), (MSS, MSS));
        ack(&mut w, &mut s, 2, 0, 30, CA_ACK_SLOWPATH); // another dupACK
        assert_eq!((w.bk, w.accounted), (2 * MSS, 2 * MSS));
        ack(&mut w, &mut s, 3, 0, 30, CA_ACK_SLOWPATH);
        assert_eq!((w.bk, w.accounted), (3 * MSS, 3 * MSS));
        // Partial ACK of 2 packets already counted by dupACKs: counts one MSS, accounted −2.
        ack(&mut w, &mut s, 4, 2 * MSS as u64, 30, CA_ACK_SLOWPATH);
        assert_eq!((w.bk, w.accounted), (4 * MSS, MSS));
        // Cumulative ACK of 5 packets: 5 − 1 already counted ⇒ +4 MSS, accounted 0.
        ack(&mut w, &mut s, 5, 7 * MSS as u64, 30, CA_ACK_SLOWPATH);
        assert_eq!((w.bk, w.accounted), (8 * MSS, 0));
        // 8 MSS counted for 7 acknowledged: the segment that made the partial ACK (the
        // retransmission) counts as a delivery of its own, as in the kernel.
    }

    #[test]
    fn growth_is_reno() {
        let mut w = Westwood::new();
        let mut s = sk_at(0);
        s.is_cwnd_limited_flag = true;
        s.cwnd = 20;
        s.ssthresh = 10;
        w.cong_avoid(&mut s, 19);
        assert_eq!(s.cwnd, 20);
        w.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 21);
    }

    #[test]
    fn no_params() {
        assert!(PARAMS.is_empty());
        let e = crate::cc::make("westwood", &serde_json::json!({"rtt_min": 50})).err().unwrap();
        assert!(e.contains("(none)"), "{}", e);
        assert_eq!(crate::cc::make("westwood", &serde_json::Value::Null).unwrap().name(), "westwood");
    }
}
