//! Congestion control supplied from outside the registry: the hook through which the Python
//! bindings (crates/py) put a user-written scheme on a flow, and the periodic-controller
//! wrapper ([`Periodic`]) that runs a coarse-grained controller (a rate-based or learned
//! scheme, the Gymnasium environment) on top of the ACK-clocked endpoint.
//!
//! The engine asks its [`ExternalCc`] first for every connection it creates; `None` means
//! "not mine" and the registry (`cc::make`) is used as usual.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use super::{CaEvent, CaState, CongestionControl, RateSample, Sock};
use crate::experiment::FlowConfig;

/// Source of congestion-control instances for flows the registry does not know.
pub trait ExternalCc: Send + Sync {
    /// The instance for connection `conn` of resolved flow `flow` (for short-flow arrivals
    /// `conn` is the connection id, else the flow id), or `None` when `flow` is an ordinary
    /// registry scheme.
    fn make(&self, flow: &FlowConfig, conn: u32) -> Option<Result<Box<dyn CongestionControl>, String>>;
}

/// A `&'static str` for a name decided at run time (scheme names, `cc_*` column names of
/// user schemes). Each distinct text is leaked once per process.
pub fn intern(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES.get_or_init(|| Mutex::new(HashSet::new())).lock().unwrap();
    if let Some(&n) = set.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(n);
    n
}

/// Statistics of one monitor interval, accumulated from the rate samples of the ACKs that
/// arrived in it (`rate_sample`, net/ipv4/tcp_rate.c) and the socket's counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntervalStats {
    pub start_ns: u64,
    pub end_ns: u64,
    /// ACKs processed.
    pub acks: u64,
    /// Packets delivered (cumulatively ACKed or SACKed): `tp->delivered` difference.
    pub delivered: u64,
    /// Packets newly marked lost: `tp->lost` difference.
    pub lost: u64,
    /// Payload bytes of new data sent (`snd_nxt` difference) and segments retransmitted.
    pub sent_bytes: u64,
    pub retrans: u64,
    /// Packets delivered with ECN-Echo (`tp->delivered_ce` difference).
    pub delivered_ce: u64,
    /// RTT samples of this interval (µs): count, min, max, mean, first and last, and the
    /// least-squares slope of RTT against time (µs per s: the latency gradient × 10^6).
    pub rtt_samples: u64,
    pub rtt_min_us: f64,
    pub rtt_max_us: f64,
    pub rtt_mean_us: f64,
    pub rtt_first_us: f64,
    pub rtt_last_us: f64,
    pub rtt_slope: f64,
    /// Delivery rate (bit/s) of the last valid rate sample (`delivered·mss·8/interval`).
    pub delivery_rate_bps: f64,
    /// Some sample of the interval was application-limited.
    pub app_limited: bool,
    /// Socket state at the end of the interval.
    pub cwnd: u32,
    pub inflight: u32,
    pub srtt_us: u32,
    /// Lifetime minimum RTT (µs); 0 before the first sample.
    pub min_rtt_us: u32,
    pub pacing_rate_bps: f64,
    pub mss: u32,
}

/// Running sums behind [`IntervalStats`].
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    start_ns: u64,
    acks: u64,
    delivered0: u64,
    lost0: u64,
    snd_nxt0: u64,
    retrans0: u64,
    ce0: u64,
    n: u64,
    min: f64,
    max: f64,
    first: f64,
    last: f64,
    // Sums for the mean and the slope (t in s since the interval start).
    s_r: f64,
    s_t: f64,
    s_tt: f64,
    s_tr: f64,
    rate: f64,
    app_limited: bool,
}

impl Acc {
    fn reset(&mut self, sk: &Sock) {
        *self = Acc {
            start_ns: sk.now_ns,
            delivered0: sk.delivered,
            lost0: sk.lost,
            snd_nxt0: sk.snd_nxt,
            retrans0: sk.total_retrans,
            ce0: sk.delivered_ce,
            min: f64::NAN,
            max: f64::NAN,
            first: f64::NAN,
            last: f64::NAN,
            ..Acc::default()
        };
    }

    fn add(&mut self, sk: &Sock, rs: &RateSample) {
        self.acks += 1;
        if rs.rtt_us >= 0 {
            let r = rs.rtt_us as f64;
            let t = sk.now_ns.saturating_sub(self.start_ns) as f64 * 1e-9;
            if self.n == 0 {
                self.min = r;
                self.max = r;
                self.first = r;
            } else {
                self.min = self.min.min(r);
                self.max = self.max.max(r);
            }
            self.last = r;
            self.n += 1;
            self.s_r += r;
            self.s_t += t;
            self.s_tt += t * t;
            self.s_tr += t * r;
        }
        if rs.delivered > 0 && rs.interval_us > 0 {
            self.rate = rs.delivered as f64 * sk.mss as f64 * 8.0 * 1e6 / rs.interval_us as f64;
        }
        self.app_limited |= rs.is_app_limited;
    }

    fn stats(&self, sk: &Sock) -> IntervalStats {
        let n = self.n as f64;
        let var_t = n * self.s_tt - self.s_t * self.s_t;
        let slope = if self.n >= 2 && var_t > 0.0 { (n * self.s_tr - self.s_t * self.s_r) / var_t } else { 0.0 };
        IntervalStats {
            start_ns: self.start_ns,
            end_ns: sk.now_ns,
            acks: self.acks,
            delivered: sk.delivered - self.delivered0,
            lost: sk.lost - self.lost0,
            sent_bytes: sk.snd_nxt.saturating_sub(self.snd_nxt0),
            retrans: sk.total_retrans - self.retrans0,
            delivered_ce: sk.delivered_ce - self.ce0,
            rtt_samples: self.n,
            rtt_min_us: self.min,
            rtt_max_us: self.max,
            rtt_mean_us: if self.n > 0 { self.s_r / n } else { f64::NAN },
            rtt_first_us: self.first,
            rtt_last_us: self.last,
            rtt_slope: slope,
            delivery_rate_bps: self.rate,
            app_limited: self.app_limited,
            cwnd: sk.cwnd,
            inflight: sk.packets_in_flight(),
            srtt_us: sk.srtt_us,
            min_rtt_us: if sk.min_rtt_us == u32::MAX { 0 } else { sk.min_rtt_us },
            pacing_rate_bps: sk.pacing_rate_bps,
            mss: sk.mss,
        }
    }
}

/// What a periodic controller commands until its next call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Command {
    /// Congestion window (packets); `None` = keep the current one, or when only a rate is
    /// commanded, two rate×sRTT products (so that the rate, not the window, limits sending).
    pub cwnd: Option<u32>,
    /// Pacing rate (bit/s); `None` or 0 = unpaced.
    pub pacing_rate_bps: Option<f64>,
}

/// A periodic controller's decision procedure (the Python callback, or nothing when the
/// Gymnasium environment drives the flow through [`PeriodicHandle`]).
pub trait Driver: Send {
    /// Called from `init`; returns the first command.
    fn init(&mut self, _sk: &Sock) -> Result<Command, String> {
        Ok(Command::default())
    }
    /// Called at the first ACK at or after the end of each interval.
    fn on_interval(&mut self, sk: &Sock, st: &IntervalStats) -> Result<Command, String>;
    /// Values recorded into the `flows` table (`cc_<name>` columns).
    fn sample(&self, _out: &mut Vec<(&'static str, f64)>) {}
}

/// How long a monitor interval lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interval {
    /// A fixed time (ns).
    Fixed(u64),
    /// `k` × the smoothed RTT (the initial RTO's worth before the first sample: 1 s / 8).
    Rtt(f64),
    /// Never ends on its own: the owner of a [`PeriodicHandle`] reads and restarts it.
    External,
}

/// State shared between a [`Periodic`] CC and its [`PeriodicHandle`].
#[derive(Debug, Default)]
pub struct Shared {
    acc: Acc,
    /// The last socket snapshot (taken at every ACK) for statistics read from outside.
    last: Option<Sock>,
    pub command: Command,
    /// First error raised by the driver; the flow stops calling it afterwards.
    pub error: Option<String>,
}

/// The Gymnasium side of a controlled flow: read the interval so far, start a new one, command.
#[derive(Clone, Debug)]
pub struct PeriodicHandle(pub Arc<Mutex<Shared>>);

impl PeriodicHandle {
    /// Statistics since the last call (None before the connection's first ACK) and restart.
    /// `now_ns` closes the interval (the engine's current time).
    pub fn take(&self, now_ns: u64) -> Option<IntervalStats> {
        let mut g = self.0.lock().unwrap();
        let mut sk = g.last.clone()?;
        sk.now_ns = now_ns;
        sk.now_us = now_ns / 1000;
        let st = g.acc.stats(&sk);
        g.acc.reset(&sk);
        g.acc.start_ns = now_ns;
        g.last = Some(sk);
        Some(st)
    }
    pub fn command(&self, c: Command) {
        self.0.lock().unwrap().command = c;
    }
}

/// A periodic controller as a `cong_control` CC: every ACK feeds the interval statistics and
/// applies the current command (cwnd, pacing rate); the driver is called once per interval.
/// Loss recovery stays the endpoint's (RACK, retransmissions), but the window during recovery
/// is the commanded one, as for BBR (`ssthresh` does not reduce it).
pub struct Periodic {
    name: &'static str,
    interval: Interval,
    driver: Option<Box<dyn Driver>>,
    shared: Arc<Mutex<Shared>>,
    deadline_ns: u64,
    started: bool,
    needs_ecn: bool,
}

impl Periodic {
    pub fn new(name: &str, interval: Interval, driver: Option<Box<dyn Driver>>, needs_ecn: bool) -> (Self, PeriodicHandle) {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let p = Periodic {
            name: intern(name),
            interval,
            driver,
            shared: shared.clone(),
            deadline_ns: u64::MAX,
            started: false,
            needs_ecn,
        };
        (p, PeriodicHandle(shared))
    }

    fn next_deadline(&self, sk: &Sock) -> u64 {
        match self.interval {
            Interval::Fixed(ns) => sk.now_ns + ns.max(1),
            Interval::Rtt(k) => {
                let srtt_ns = if sk.srtt_us > 0 { sk.srtt_us as f64 * 1e3 } else { 125e6 };
                sk.now_ns + ((srtt_ns * k) as u64).max(1)
            }
            Interval::External => u64::MAX,
        }
    }

    fn apply(sk: &mut Sock, c: &Command) {
        let rate = c.pacing_rate_bps.filter(|r| *r > 0.0 && r.is_finite());
        sk.pacing_rate_bps = rate.unwrap_or(0.0);
        let cwnd = match (c.cwnd, rate) {
            (Some(w), _) => w,
            (None, Some(r)) => {
                let srtt_s = if sk.srtt_us > 0 { sk.srtt_us as f64 * 1e-6 } else { 0.1 };
                (2.0 * r * srtt_s / (8.0 * sk.mss as f64)).ceil().min(1e9) as u32
            }
            (None, None) => sk.cwnd,
        };
        sk.cwnd = cwnd.clamp(1, sk.cwnd_clamp);
    }

    fn fail(&mut self, e: String) {
        let mut g = self.shared.lock().unwrap();
        if g.error.is_none() {
            g.error = Some(e);
        }
        self.driver = None;
        self.deadline_ns = u64::MAX;
    }
}

impl CongestionControl for Periodic {
    fn name(&self) -> &'static str {
        self.name
    }
    fn init(&mut self, sk: &mut Sock) {
        let first = match self.driver.as_mut().map(|d| d.init(sk)) {
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => {
                self.fail(e);
                None
            }
            None => None,
        };
        let mut g = self.shared.lock().unwrap();
        if let Some(c) = first {
            g.command = c;
        }
        g.acc.reset(sk);
        g.last = Some(sk.clone());
        if g.command != Command::default() {
            Self::apply(sk, &g.command);
        }
        drop(g);
        self.deadline_ns = self.next_deadline(sk);
        self.started = true;
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        sk.ssthresh
    }
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        sk.cwnd
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        let mut g = self.shared.lock().unwrap();
        g.acc.add(sk, rs);
        if sk.now_ns >= self.deadline_ns {
            let st = g.acc.stats(sk);
            drop(g);
            let r = self.driver.as_mut().map(|d| d.on_interval(sk, &st));
            g = self.shared.lock().unwrap();
            match r {
                Some(Ok(c)) => g.command = c,
                Some(Err(e)) => {
                    drop(g);
                    self.fail(e);
                    g = self.shared.lock().unwrap();
                }
                None => {}
            }
            g.acc.reset(sk);
            self.deadline_ns = if self.driver.is_some() { self.next_deadline(sk) } else { u64::MAX };
        }
        let c = g.command;
        if c != Command::default() {
            Self::apply(sk, &c);
        }
        g.last = Some(sk.clone());
        true
    }
    fn set_state(&mut self, _sk: &mut Sock, _new_state: CaState) {}
    fn cwnd_event(&mut self, _sk: &mut Sock, _ev: CaEvent) {}
    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        if let Some(d) = &self.driver {
            d.sample(out);
        }
    }
    fn needs_ecn(&self) -> bool {
        self.needs_ecn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the statistics it sees and commands 8 Mbit/s, then a 30-packet window.
    struct Probe(Arc<Mutex<Vec<IntervalStats>>>);
    impl Driver for Probe {
        fn init(&mut self, _sk: &Sock) -> Result<Command, String> {
            Ok(Command { cwnd: None, pacing_rate_bps: Some(8e6) })
        }
        fn on_interval(&mut self, _sk: &Sock, st: &IntervalStats) -> Result<Command, String> {
            let mut v = self.0.lock().unwrap();
            v.push(*st);
            Ok(if v.len() >= 2 { Command { cwnd: Some(30), pacing_rate_bps: None } } else { Command::default() })
        }
    }

    fn ack(p: &mut Periodic, sk: &mut Sock, t_ms: u64, rtt_us: i64) {
        sk.now_ns = t_ms * 1_000_000;
        sk.now_us = sk.now_ns / 1000;
        sk.delivered += 2;
        sk.snd_nxt += 2 * 1448;
        let rs = RateSample { rtt_us, delivered: 2, interval_us: 1000, ..RateSample::default() };
        assert!(p.cong_control(sk, &rs));
    }

    #[test]
    fn periodic_calls_the_driver_per_interval_and_applies_its_command() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (mut p, h) = Periodic::new("probe", Interval::Fixed(10_000_000), Some(Box::new(Probe(seen.clone()))), false);
        let mut sk = Sock::new(1448, 10);
        sk.srtt_us = 20_000;
        p.init(&mut sk);
        // Only a rate: paced, cwnd = 2 x rate x sRTT = 2 x 8e6 x 0.02 / (8 x 1448) -> 28 packets.
        assert_eq!(sk.pacing_rate_bps, 8e6);
        assert_eq!(sk.cwnd, 28);
        // RTT rising 10 -> 19 ms over 9 ms: slope 1 s/s.
        for t in 1..=9 {
            ack(&mut p, &mut sk, t, 10_000 + (t as i64 - 1) * 1000);
        }
        assert!(seen.lock().unwrap().is_empty());
        ack(&mut p, &mut sk, 10, 19_000); // deadline: the driver runs
        let st = seen.lock().unwrap()[0];
        assert_eq!((st.acks, st.delivered, st.rtt_samples), (10, 20, 10));
        assert_eq!((st.rtt_min_us, st.rtt_max_us, st.rtt_first_us, st.rtt_last_us), (10_000.0, 19_000.0, 10_000.0, 19_000.0));
        assert!((st.rtt_slope - 1e6).abs() < 1e-3 * 1e6, "{}", st.rtt_slope);
        assert_eq!(st.sent_bytes, 20 * 1448);
        // The first call returned the empty command: the socket keeps what was applied.
        assert_eq!((sk.cwnd, sk.pacing_rate_bps), (28, 8e6));
        // The second commands a window only: unpaced from then on.
        for t in 11..=20 {
            ack(&mut p, &mut sk, t, 10_000);
        }
        assert_eq!(seen.lock().unwrap().len(), 2);
        assert_eq!((sk.cwnd, sk.pacing_rate_bps), (30, 0.0));
        // The handle reads the interval so far and restarts it.
        ack(&mut p, &mut sk, 21, 12_000);
        let st = h.take(21_500_000).unwrap();
        assert_eq!((st.acks, st.start_ns, st.end_ns), (1, 20_000_000, 21_500_000));
        assert_eq!(h.take(22_000_000).unwrap().acks, 0);
    }

    #[test]
    fn driver_error_is_kept_and_the_driver_dropped() {
        struct Fails;
        impl Driver for Fails {
            fn on_interval(&mut self, _: &Sock, _: &IntervalStats) -> Result<Command, String> {
                Err("boom".into())
            }
        }
        let (mut p, h) = Periodic::new("f", Interval::Rtt(1.0), Some(Box::new(Fails)), false);
        let mut sk = Sock::new(1448, 10);
        sk.srtt_us = 1000;
        p.init(&mut sk);
        ack(&mut p, &mut sk, 5, 1000);
        ack(&mut p, &mut sk, 10, 1000);
        assert_eq!(h.0.lock().unwrap().error.as_deref(), Some("boom"));
        assert!(p.driver.is_none());
    }

    #[test]
    fn intern_returns_one_str_per_text() {
        let a = intern("cc_x_test");
        let b = intern(&String::from("cc_x_test"));
        assert!(std::ptr::eq(a, b));
    }
}
