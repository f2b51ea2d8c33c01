//! `ledbat` and `ledbat-utp`: Low Extra Delay Background Transport, a scavenger that keeps the
//! queuing delay it causes near a target and yields to loss-based flows.
//!
//! Sources: RFC 6817 §2.4 (the sender's algorithm: base-delay history of per-minute minima,
//! current-delay filter, `cwnd += GAIN·off_target·bytes_acked·MSS/cwnd`, the flight-size cap
//! with ALLOWED_INCREASE, halving on loss at most once per RTT) and §3.1 (TARGET ≤ 100 ms,
//! GAIN ≤ 1, BASE_HISTORY 10, INIT_CWND = MIN_CWND = 2). Pantheon's `ledbat` runs BitTorrent's
//! libutp (github.com/bittorrent/libutp, `utp_internal.cpp`: `apply_ccontrol`, `DelayHist`,
//! `maybe_decay_win`), whose constants differ; `ledbat-utp` registers them:
//! - gain: libutp grows by at most `MAX_CWND_INCREASE_BYTES_PER_RTT` = 3000 bytes per RTT at
//!   zero queuing delay, i.e. GAIN = 2 for 1500-byte packets (the RFC caps GAIN at 1);
//! - base history 13 one-minute minima (RFC: 10); current delay = minimum of the last 3
//!   queuing-delay samples (`CUR_DELAY_SIZE`; the RFC leaves the filter open, we use 3 for both);
//! - slow start: libutp starts with one packet, grows by one packet per acknowledged packet
//!   while that exceeds the LEDBAT increase, and leaves slow start when the delay passes 90 % of
//!   the target or on the first loss (the RFC has no slow start: 2 packets, LEDBAT growth);
//! - loss: halve at most once per 100 ms (`MAX_WINDOW_DECAY`; RFC: once per RTT).
//!
//! Differences from both references: the one-way delay is the transport's `recv_ns − sent_ns`
//! (no clock-drift correction: the simulator and one host share a clock); libutp also bounds
//! the delay sample by the acknowledgement's RTT and lets the window drop below one packet by
//! pacing — here the window never goes below `min-cwnd-pkts` packets; libutp stops growing when
//! the window has not been full for a second, we use the RFC's cap (flight size + ALLOWED_INCREASE
//! packets) in both variants; lost datagrams are not retransmitted (the transport never does).

use super::base_delay::MinHistory;
use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use std::collections::VecDeque;

const MINUTE_NS: u64 = 60_000_000_000;

pub struct Ledbat {
    name: &'static str,
    target_ns: f64,
    gain: f64,
    allowed_increase: f64,
    min_cwnd_pkts: f64,
    decay_ns: Option<u64>,
    slow_start: bool,
    ssthresh: f64,
    mss: f64,
    cwnd: f64,
    /// One-minute minima of the one-way delay (BASE_HISTORY of them, the current one included).
    base: MinHistory,
    /// The last few queuing-delay samples (ns).
    current: VecDeque<u64>,
    filter_len: usize,
    qdelay_ns: f64,
    last_decay: Option<u64>,
    last_rtt_ns: u64,
}

impl Ledbat {
    fn base_delay(&self) -> u64 {
        self.base.min().unwrap_or(0)
    }

    fn add_delay_sample(&mut self, now: u64, owd: u64) {
        // the first minute begins at the first sample; a sample past the minute opens the next
        if self.base.is_empty() {
            self.base.begin(now);
        }
        self.base.roll(now);
        self.base.note(owd);
        let q = owd - self.base_delay();
        self.current.push_back(q);
        while self.current.len() > self.filter_len {
            self.current.pop_front();
        }
        self.qdelay_ns = self.current.iter().copied().min().unwrap_or(0) as f64;
    }
}

impl DgramCc for Ledbat {
    fn name(&self) -> &'static str {
        self.name
    }
    fn on_send(&mut self, _now: u64, _seq: u64, bytes: u32, _inflight: u64) {
        if bytes as f64 > self.mss {
            let pkts = self.cwnd / self.mss;
            self.mss = bytes as f64;
            self.cwnd = pkts * self.mss;
        }
    }
    fn on_ack(&mut self, a: &Acked) {
        self.last_rtt_ns = a.rtt_ns;
        self.add_delay_sample(a.now_ns, a.recv_ns.saturating_sub(a.sent_ns));
        let off_target = (self.target_ns - self.qdelay_ns) / self.target_ns;
        let acked = a.bytes as f64;
        let ledbat = self.cwnd + self.gain * off_target * acked * self.mss / self.cwnd;
        if self.slow_start {
            let ss = self.cwnd + acked.min(self.cwnd) / self.cwnd.max(acked) * self.mss;
            if ss > self.ssthresh {
                self.slow_start = false;
                self.cwnd = ledbat;
            } else if self.qdelay_ns > 0.9 * self.target_ns {
                self.slow_start = false;
                self.ssthresh = self.cwnd;
                self.cwnd = ledbat;
            } else {
                self.cwnd = ss.max(ledbat);
            }
        } else {
            self.cwnd = ledbat;
        }
        let flight = (a.inflight_bytes + a.bytes as u64) as f64;
        self.cwnd = self.cwnd.min(flight + self.allowed_increase * self.mss);
        self.cwnd = self.cwnd.max(self.min_cwnd_pkts * self.mss);
    }
    fn on_loss(&mut self, l: &Lost) {
        let every = self.decay_ns.unwrap_or(self.last_rtt_ns);
        if self.last_decay.map_or(true, |t| l.now_ns.saturating_sub(t) >= every) {
            self.last_decay = Some(l.now_ns);
            self.cwnd = (self.cwnd / 2.0).max(self.min_cwnd_pkts * self.mss);
            self.slow_start = false;
            self.ssthresh = self.cwnd;
        }
    }
    fn control(&self) -> Control {
        Control { rate_bps: None, cwnd_bytes: Some(self.cwnd as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd / self.mss));
        out.push(("qdelay_ms", self.qdelay_ns / 1e6));
        out.push(("base_delay_ms", self.base_delay() as f64 / 1e6));
        out.push(("slow_start", self.slow_start as u8 as f64));
    }
}

fn make(name: &'static str, p: &Params, utp: bool) -> Result<Box<dyn DgramCc>, String> {
    let d = |rfc: f64, lib: f64| if utp { lib } else { rfc };
    let target_ms = p.float("target-ms", 100.0, 1.0, 100.0)?;
    let gain = p.float("gain", d(1.0, 2.0), 0.01, 10.0)?;
    let init = p.float("init-cwnd-pkts", d(2.0, 1.0), 1.0, 100.0)?;
    let min_cwnd = p.float("min-cwnd-pkts", d(2.0, 1.0), 1.0, 100.0)?;
    let allowed = p.float("allowed-increase", 1.0, 0.01, 100.0)?;
    let hist = p.int("base-history", d(10.0, 13.0) as i64, 1, 1000)? as usize;
    let filt = p.int("current-filter", 3, 1, 1000)? as usize;
    let decay_ms = p.float("decay-ms", d(0.0, 100.0), 0.0, 10_000.0)?;
    let ss = p.bool("slow-start", utp)?;
    let max_kb = p.float("max-cwnd-kb", 1024.0, 1.0, 1e7)?;
    let mss = 1500.0;
    Ok(Box::new(Ledbat {
        name,
        target_ns: target_ms * 1e6,
        gain,
        allowed_increase: allowed,
        min_cwnd_pkts: min_cwnd,
        decay_ns: if decay_ms > 0.0 { Some((decay_ms * 1e6) as u64) } else { None },
        slow_start: ss,
        ssthresh: max_kb * 1024.0,
        mss,
        cwnd: init * mss,
        base: MinHistory::new(MINUTE_NS, hist - 1),
        current: VecDeque::new(),
        filter_len: filt,
        qdelay_ns: 0.0,
        last_decay: None,
        last_rtt_ns: 100_000_000,
    }))
}

const fn params(gain: f64, init: f64, min: f64, hist: f64, decay: f64, ss: f64) -> [ParamInfo; 10] {
    [
        ParamInfo { name: "target-ms", default: 100.0, doc: "TARGET queuing delay, ms (RFC 6817: at most 100)" },
        ParamInfo { name: "gain", default: gain, doc: "GAIN: packets of growth per RTT at zero queuing delay" },
        ParamInfo { name: "init-cwnd-pkts", default: init, doc: "initial window, packets" },
        ParamInfo { name: "min-cwnd-pkts", default: min, doc: "smallest window, packets" },
        ParamInfo { name: "allowed-increase", default: 1.0, doc: "ALLOWED_INCREASE: window ≤ flight size + this many packets" },
        ParamInfo { name: "base-history", default: hist, doc: "BASE_HISTORY: one-minute delay minima kept" },
        ParamInfo { name: "current-filter", default: 3.0, doc: "queuing delay = minimum of this many last samples" },
        ParamInfo { name: "decay-ms", default: decay, doc: "halve on loss at most once per this long (0 = once per RTT)" },
        ParamInfo { name: "slow-start", default: ss, doc: "libutp's slow start (1) or none (0)" },
        ParamInfo { name: "max-cwnd-kb", default: 1024.0, doc: "window cap (libutp's send buffer), KiB" },
    ]
}

static RFC_PARAMS: [ParamInfo; 10] = params(1.0, 2.0, 2.0, 10.0, 0.0, 0.0);
static UTP_PARAMS: [ParamInfo; 10] = params(2.0, 1.0, 1.0, 13.0, 100.0, 1.0);

pub static SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "ledbat",
        description: "LEDBAT scavenger: window steered to a 100 ms queuing-delay target (RFC 6817 constants)",
        source: "RFC 6817 §2.4, §3.1; github.com/bittorrent/libutp utp_internal.cpp",
        params: &RFC_PARAMS,
        make: |p, _| make("ledbat", p, false),
    },
    SchemeInfo {
        name: "ledbat-utp",
        description: "LEDBAT with libutp's constants (what Pantheon's `ledbat` runs): gain 2, slow start, 100 ms decay",
        source: "github.com/bittorrent/libutp utp_internal.cpp (apply_ccontrol, DelayHist, maybe_decay_win); RFC 6817",
        params: &UTP_PARAMS,
        make: |p, _| make("ledbat-utp", p, true),
    },
];

#[cfg(test)]
mod tests {
    use super::super::testlink::{Aimd, Link, MS, SEC};
    use super::super::make as mk;
    use serde_json::json;

    fn ledbat(name: &str) -> Box<dyn super::DgramCc> {
        mk(name, &serde_json::Value::Null, 1).unwrap()
    }

    /// Alone on a 10 Mbit/s, 40 ms link with a deep buffer, LEDBAT fills the link and holds the
    /// queuing delay near its 100 ms target (a loss-based flow would fill the 500-packet buffer:
    /// 600 ms).
    #[test]
    fn holds_queuing_delay_near_target() {
        for name in ["ledbat", "ledbat-utp"] {
            let mut l = Link::new(10.0, 40.0, 500, 1);
            let f = l.add(ledbat(name), 0, 60 * SEC);
            l.run(60 * SEC);
            let tput = l.tput_bps(f, 20 * SEC, 60 * SEC) / 1e6;
            let q50 = l.owd_ms(f, 20 * SEC, 60 * SEC, 0.5) - 20.0;
            let q95 = l.owd_ms(f, 20 * SEC, 60 * SEC, 0.95) - 20.0;
            eprintln!("{name}: tput {tput:.2} Mbit/s, queuing delay p50 {q50:.1} ms p95 {q95:.1} ms");
            assert!(tput > 9.5, "{name}: {tput}");
            assert!((85.0..=115.0).contains(&q50), "{name}: median queuing delay {q50}");
            assert!(q95 < 125.0, "{name}: p95 queuing delay {q95}");
            assert_eq!(l.losses(f), 0);
        }
    }

    /// A smaller target gives a proportionally smaller standing queue.
    #[test]
    fn target_parameter_sets_the_queue() {
        let mut l = Link::new(10.0, 40.0, 500, 1);
        let f = l.add(mk("ledbat", &json!({"target-ms": 25}), 1).unwrap(), 0, 40 * SEC);
        l.run(40 * SEC);
        let q50 = l.owd_ms(f, 20 * SEC, 40 * SEC, 0.5) - 20.0;
        eprintln!("target 25 ms: median queuing delay {q50:.1} ms");
        assert!((18.0..=32.0).contains(&q50), "{q50}");
    }

    /// The scavenger property: when a loss-based AIMD flow joins, the queue it builds pushes
    /// LEDBAT's delay above target and LEDBAT's window collapses; the AIMD flow takes the link.
    #[test]
    fn yields_to_a_loss_based_flow() {
        let mut l = Link::new(10.0, 40.0, 250, 3);
        let f = l.add(ledbat("ledbat"), 0, 60 * SEC);
        let g = l.add(Aimd::boxed(), 20 * SEC, 60 * SEC);
        l.run(60 * SEC);
        let alone = l.var_mean(f, "cwnd_pkts", 10 * SEC, 20 * SEC);
        let shared = l.var_mean(f, "cwnd_pkts", 35 * SEC, 60 * SEC);
        let tf = l.tput_bps(f, 35 * SEC, 60 * SEC) / 1e6;
        let tg = l.tput_bps(g, 35 * SEC, 60 * SEC) / 1e6;
        eprintln!("ledbat cwnd alone {alone:.1} pkts, with AIMD {shared:.1}; tput ledbat {tf:.2} aimd {tg:.2}");
        assert!(shared < alone / 4.0, "{alone} -> {shared}");
        assert!(tf < 1.5 && tg > 8.0, "{tf} {tg}");
    }

    /// Loss halves the window, at most once per decay interval.
    #[test]
    fn loss_halves_once_per_interval() {
        let mut c = ledbat("ledbat-utp");
        let a = |t: u64, s: u64| super::Acked {
            now_ns: t,
            seq: s,
            bytes: 1500,
            sent_ns: t - 40 * MS,
            recv_ns: t - 20 * MS,
            rtt_ns: 40 * MS,
            delivered_bytes: 0,
            inflight_bytes: 1_000_000,
        };
        for s in 0..200 {
            c.on_ack(&a(SEC + s * MS, s));
        }
        let w0 = c.control().cwnd_bytes.unwrap();
        let lost = |t| super::Lost { now_ns: t, seq: 1, bytes: 1500, sent_ns: 0, inflight_bytes: 0 };
        c.on_loss(&lost(2 * SEC));
        c.on_loss(&lost(2 * SEC + 50 * MS));
        let w1 = c.control().cwnd_bytes.unwrap();
        assert_eq!(w1, w0 / 2, "{w0} {w1}");
        c.on_loss(&lost(2 * SEC + 100 * MS));
        assert_eq!(c.control().cwnd_bytes.unwrap(), w1 / 2);
    }
}
