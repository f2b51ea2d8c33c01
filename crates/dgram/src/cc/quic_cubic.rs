//! `quic-cubic` and `quic-cubic-chromium`: CUBIC as QUIC stacks run it — a window in bytes,
//! grown per acknowledged byte, reduced once per recovery period.
//!
//! Sources: RFC 9438 (CUBIC) §4.2 (window `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛((W_max −
//! cwnd_epoch)/C)`, target `W_cubic(t + RTT)` clamped to [cwnd, 1.5·cwnd], growth
//! `(target − cwnd)/cwnd` per acknowledged segment), §4.3 (Reno-friendly estimate `W_est +=
//! α·acked/cwnd` with α = 3(1 − β)/(1 + β), raised to 1 once `W_est` reaches the window before
//! the last reduction; cwnd = W_est when `W_cubic < W_est`), §4.6 (β = 0.7), §4.7 (fast
//! convergence: `W_max = cwnd·(1 + β)/2` when the window is below the last W_max), §5.1
//! (C = 0.4); RFC 9002 §7 (byte-counted window, initial window min(10·MSS, max(14720, 2·MSS)),
//! minimum window 2 packets, slow start by acknowledged bytes, one reduction per recovery period:
//! a loss of a packet sent before the current recovery began does not reduce again, and the
//! window does not grow until a packet sent after that point is acknowledged).
//! Pantheon's `quic` runs Chromium's QUIC (proto-quic), `net/quic/core/congestion_control/
//! cubic_bytes.cc`: it emulates N = 2 Reno connections, so its β = (N − 1 + 0.7)/N = 0.85, its
//! fast-convergence factor (N − 1 + 0.85)/N = 0.925 (applied when cwnd + 1 MSS < W_max), its α =
//! 3N²(1 − β)/(1 + β); the growth cap is cwnd + acked/2 per acknowledgement and the time shift is
//! the minimum RTT. `quic-cubic-chromium` registers those (`connections` = 2).
//!
//! Differences from Linux's `tcp_cubic` (the simulator's `cubic`): Linux counts the window in
//! packets and grows it by one packet per `cnt` acknowledgements, clocks K and t in 2⁻¹⁰ s with
//! integer cube roots, uses β = 717/1024 and HyStart; here everything is bytes and seconds in
//! floating point and slow start ends only on loss (no HyStart; Chromium's HyStart and PRR are
//! left out too). Persistent congestion (RFC 9002 §7.6) is not modelled: the transport's
//! loss timeout reports each lost packet and the window only ever halves per recovery period.

use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};

pub struct QuicCubic {
    name: &'static str,
    c: f64,
    beta: f64,
    beta_last_max: f64,
    alpha: f64,
    chromium: bool,
    mss: f64,
    cwnd: f64,
    ssthresh: f64,
    w_max: f64,
    cwnd_prior: f64,
    k: f64,
    origin: f64,
    epoch: Option<u64>,
    w_est: f64,
    alpha_now: f64,
    recovery_start: Option<u64>,
    srtt_ns: f64,
    min_rtt_ns: f64,
    min_window: f64,
}

impl QuicCubic {
    fn w_cubic(&self, t: f64) -> f64 {
        self.c * self.mss * (t - self.k).powi(3) + self.origin
    }

    fn congestion_avoidance(&mut self, now: u64, acked: f64) {
        if self.epoch.is_none() {
            self.epoch = Some(now);
            self.w_est = self.cwnd;
            if self.w_max <= self.cwnd {
                self.k = 0.0;
                self.origin = self.cwnd;
            } else {
                self.k = ((self.w_max - self.cwnd) / (self.c * self.mss)).cbrt();
                self.origin = self.w_max;
            }
        }
        let t = (now - self.epoch.unwrap()) as f64 / 1e9;
        let shift = if self.chromium { self.min_rtt_ns } else { self.srtt_ns } / 1e9;
        let mut target = self.w_cubic(t + shift);
        // Reno-friendly estimate (RFC 9438 §4.3).
        self.w_est += self.alpha_now * self.mss * acked / self.cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha_now = if self.chromium { self.alpha } else { 1.0 };
        }
        if self.chromium {
            target = target.min(self.cwnd + acked / 2.0).max(self.w_est);
            self.cwnd = self.cwnd.max(target);
            return;
        }
        if self.w_cubic(t) < self.w_est {
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            let target = target.clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) * acked / self.cwnd;
        }
    }
}

impl DgramCc for QuicCubic {
    fn name(&self) -> &'static str {
        self.name
    }
    fn on_send(&mut self, _now: u64, _seq: u64, bytes: u32, _inflight: u64) {
        if bytes as f64 > self.mss {
            self.mss = bytes as f64;
            self.min_window = 2.0 * self.mss;
        }
    }
    fn on_ack(&mut self, a: &Acked) {
        let r = a.rtt_ns as f64;
        self.srtt_ns = if self.srtt_ns == 0.0 { r } else { 0.875 * self.srtt_ns + 0.125 * r };
        self.min_rtt_ns = if self.min_rtt_ns == 0.0 { r } else { self.min_rtt_ns.min(r) };
        if self.recovery_start.is_some_and(|s| a.sent_ns <= s) {
            return; // in recovery: no growth
        }
        let acked = a.bytes as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked;
        } else {
            self.congestion_avoidance(a.now_ns, acked);
        }
    }
    fn on_loss(&mut self, l: &Lost) {
        if self.recovery_start.is_some_and(|s| l.sent_ns <= s) {
            return; // one reduction per recovery period
        }
        self.recovery_start = Some(l.now_ns);
        let fast = if self.chromium { self.cwnd + self.mss < self.w_max } else { self.cwnd < self.w_max };
        self.w_max = if fast { self.cwnd * self.beta_last_max } else { self.cwnd };
        self.cwnd_prior = self.cwnd;
        self.ssthresh = (self.cwnd * self.beta).max(self.min_window);
        self.cwnd = self.ssthresh;
        self.epoch = None;
        self.alpha_now = self.alpha;
    }
    fn control(&self) -> Control {
        Control { rate_bps: None, cwnd_bytes: Some(self.cwnd as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd / self.mss));
        out.push(("ssthresh_pkts", if self.ssthresh.is_finite() { self.ssthresh / self.mss } else { -1.0 }));
        out.push(("w_max_pkts", self.w_max / self.mss));
        out.push(("k_s", self.k));
    }
}

fn make(name: &'static str, p: &Params, chromium: bool) -> Result<Box<dyn DgramCc>, String> {
    let n = p.float("connections", if chromium { 2.0 } else { 1.0 }, 1.0, 100.0)?;
    let beta0 = p.float("beta", 0.7, 0.1, 0.99)?;
    let c = p.float("c", 0.4, 0.01, 10.0)?;
    let init = p.float("init-cwnd-pkts", 10.0, 1.0, 1000.0)?;
    let beta = (n - 1.0 + beta0) / n;
    let beta_last_max = (n - 1.0 + (1.0 + beta0) / 2.0) / n;
    let alpha = 3.0 * n * n * (1.0 - beta) / (1.0 + beta);
    let mss: f64 = 1500.0;
    // RFC 9002 §7.2: min(10·MSS, max(14720, 2·MSS)) for the default of 10 packets.
    let cwnd = if init == 10.0 { (10.0 * mss).min(14720f64.max(2.0 * mss)) } else { init * mss };
    Ok(Box::new(QuicCubic {
        name,
        c,
        beta,
        beta_last_max,
        alpha,
        chromium,
        mss,
        cwnd,
        ssthresh: f64::INFINITY,
        w_max: 0.0,
        cwnd_prior: 0.0,
        k: 0.0,
        origin: 0.0,
        epoch: None,
        w_est: 0.0,
        alpha_now: alpha,
        recovery_start: None,
        srtt_ns: 0.0,
        min_rtt_ns: 0.0,
        min_window: 2.0 * mss,
    }))
}

const fn params(conn: f64) -> [ParamInfo; 4] {
    [
        ParamInfo { name: "beta", default: 0.7, doc: "β_cubic of one connection (window multiplier on loss)" },
        ParamInfo { name: "c", default: 0.4, doc: "C, MSS/s³" },
        ParamInfo { name: "connections", default: conn, doc: "N emulated connections: β = (N−1+β)/N, α = 3N²(1−β)/(1+β)" },
        ParamInfo { name: "init-cwnd-pkts", default: 10.0, doc: "initial window, packets (10 = RFC 9002's 14720-byte rule)" },
    ]
}

static RFC_PARAMS: [ParamInfo; 4] = params(1.0);
static CHROMIUM_PARAMS: [ParamInfo; 4] = params(2.0);

pub static SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "quic-cubic",
        description: "CUBIC in bytes as QUIC runs it (RFC 9438 + RFC 9002 recovery): β 0.7, C 0.4, Reno-friendly region",
        source: "RFC 9438 §4-5; RFC 9002 §7",
        params: &RFC_PARAMS,
        make: |p, _| make("quic-cubic", p, false),
    },
    SchemeInfo {
        name: "quic-cubic-chromium",
        description: "Chromium QUIC's CubicBytes (Pantheon's `quic`): 2-connection emulation, β 0.85",
        source: "chromium net/quic/core/congestion_control/cubic_bytes.cc, tcp_cubic_sender_bytes.cc; RFC 9438",
        params: &CHROMIUM_PARAMS,
        make: |p, _| make("quic-cubic-chromium", p, true),
    },
];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Link, MS, SEC};
    use super::super::{Acked, DgramCc, Lost};

    fn cubic(name: &str) -> Box<dyn DgramCc> {
        mk(name, &serde_json::Value::Null, 1).unwrap()
    }

    fn ack(t: u64, seq: u64, rtt: u64) -> Acked {
        Acked { now_ns: t, seq, bytes: 1500, sent_ns: t - rtt, recv_ns: t - rtt / 2, rtt_ns: rtt, delivered_bytes: 0, inflight_bytes: 0 }
    }

    fn cwnd_pkts(c: &dyn DgramCc) -> f64 {
        c.control().cwnd_bytes.unwrap() as f64 / 1500.0
    }

    /// Grow to ~1000 packets, lose one: the window drops to 0.7×, then follows the cubic curve
    /// back to W_max at t ≈ K = ∛(0.3·W_max/C) ≈ 9.1 s (one RTT early, as the target looks one
    /// RTT ahead), concave before and convex after (W_max + C·(t − K)³).
    #[test]
    fn reduction_and_cubic_regrowth() {
        let rtt = 50 * MS;
        let mut c = cubic("quic-cubic");
        let (mut t, mut seq) = (SEC, 0u64);
        while cwnd_pkts(c.as_ref()) < 1000.0 {
            c.on_send(t, seq, 1500, 0);
            c.on_ack(&ack(t, seq, rtt));
            seq += 1;
            t += 10_000;
        }
        let w = cwnd_pkts(c.as_ref());
        c.on_loss(&Lost { now_ns: t, seq: seq - 1, bytes: 1500, sent_ns: t - rtt, inflight_bytes: 0 });
        let after = cwnd_pkts(c.as_ref());
        assert!((after / w - 0.7).abs() < 0.002, "{w} -> {after}");
        // A second loss from the same window does not reduce again.
        c.on_loss(&Lost { now_ns: t + MS, seq: seq - 2, bytes: 1500, sent_ns: t - rtt - MS, inflight_bytes: 0 });
        assert_eq!(cwnd_pkts(c.as_ref()), after);
        let k = (0.3 * w / 0.4f64).cbrt();
        let t0 = t + 1;
        let mut samples = Vec::new();
        let end = t0 + ((k + 7.0) * 1e9) as u64;
        t = t0;
        while t < end {
            // one window of acknowledgements per RTT, all for packets sent after the loss
            let n = cwnd_pkts(c.as_ref()).max(1.0);
            let gap = (rtt as f64 / n) as u64;
            c.on_ack(&ack(t + rtt, seq, rtt));
            seq += 1;
            t += gap;
            samples.push(((t - t0) as f64 / 1e9, cwnd_pkts(c.as_ref())));
        }
        let at = |x: f64| samples.iter().find(|s| s.0 >= x).unwrap().1;
        let wk = at(k - 0.05);
        eprintln!("W_max {w:.0}, after loss {after:.0}, K {k:.2} s: cwnd(K/2) {:.0}, cwnd(K) {wk:.0}, cwnd(K+6) {:.0}", at(k / 2.0), at(k + 6.0));
        assert!((wk / w - 1.0).abs() < 0.02, "cwnd at K {wk} vs W_max {w}");
        // concave: at K/2 already most of the way back (cubic: W_max − C(K/2)³ ≈ 0.96 W_max)
        assert!(at(k / 2.0) / w > 0.93 && at(k / 2.0) < wk, "{}", at(k / 2.0));
        // convex after K: W_max + C·6³ = W_max + 86 packets six seconds later
        let want = w + 0.4 * 216.0;
        assert!((at(k + 6.0) / want - 1.0).abs() < 0.02, "{} vs {want}", at(k + 6.0));
    }

    /// Chromium's two-connection emulation backs off to 0.85×.
    #[test]
    fn chromium_backs_off_to_085() {
        let mut c = cubic("quic-cubic-chromium");
        for s in 0..200 {
            c.on_ack(&ack(SEC + s * MS, s, 40 * MS));
        }
        let w = cwnd_pkts(c.as_ref());
        c.on_loss(&Lost { now_ns: 2 * SEC, seq: 1, bytes: 1500, sent_ns: SEC, inflight_bytes: 0 });
        let r = cwnd_pkts(c.as_ref()) / w;
        assert!((r - 0.85).abs() < 0.002, "{r}");
    }

    /// On a 20 Mbit/s, 40 ms link with a BDP of buffer, the sawtooth keeps the link busy.
    #[test]
    fn fills_a_bdp_buffered_link() {
        for name in ["quic-cubic", "quic-cubic-chromium"] {
            let mut l = Link::new(20.0, 40.0, 67, 1);
            let f = l.add(cubic(name), 0, 60 * SEC);
            l.run(60 * SEC);
            let u = l.tput_bps(f, 10 * SEC, 60 * SEC) / 20e6;
            eprintln!("{name}: utilisation {u:.3}, losses {}", l.losses(f));
            assert!(u > 0.9, "{name} {u}");
        }
    }
}
