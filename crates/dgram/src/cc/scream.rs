//! `scream`: SCReAM, Self-Clocked Rate Adaptation for Multimedia — a window steered by the
//! estimated queuing delay, and a media (video) bitrate steered by the window's outcome.
//!
//! Sources: RFC 8298 §4.1.2 (network congestion control: queuing delay = one-way delay minus a
//! base delay kept as minima over a long history; `off_target = (qdelay_target − qdelay)/
//! qdelay_target`; window growth `GAIN_UP·off_target·bytes_acked·MSS/cwnd` only while the
//! window is used to 1/1.2, reduction `GAIN_DOWN·off_target·…` capped at a quarter window, ×0.8
//! on a loss event (at most one per smoothed RTT); fast start growing by the acknowledged bytes
//! while the queuing-delay trend stays below 0.2, re-entered after 5 s without congestion;
//! queuing-delay trend = lag-1 autocorrelation of 20 samples of qdelay/qdelay_target taken every
//! 50 ms, times their smoothed average; pacing at 1.5·cwnd/sRTT once that average exceeds 0.02)
//! and §4.1.3 (media rate control every 200 ms: ramp up by at most RAMP_UP_SPEED = 200 kbit/s
//! per second in fast start, otherwise towards (1 + 0.05·min(1, 50 kbit/s / target))·r_max·(1 −
//! 0.1·trend) with r_max the larger of the transmitted and acknowledged rates over 200 ms,
//! scaled down near the last known-good rate `target_i`; ×0.9 on a loss event). Constants
//! from the reference implementation Pantheon builds (`ScreamClient` over EricssonResearch/scream
//! `code/ScreamTx.cpp`, December 2017, d881890: `kQueueDelayTargetMin` 0.1 s, `kGainUp` 1,
//! `kGainDown` 2, `kLossBeta` 0.8, `kLossEventRateScale` 0.9, `kRampUpSpeed` 200 kbit/s/s,
//! `kQueueDelayGuard` 0.1, `kBaseOwdHistSize` 50 × `kBaseDelayUpdateInterval` 10 s,
//! `kQueueDelayFractionHistSize` 20 × 50 ms, `kRateAdjustInterval` 200 ms, `kPacketPacingHeadRoom`
//! 1.5, minimum window 2 packets).
//!
//! The media source is modelled as an encoder that always has data at the target bitrate the
//! algorithm computes: the transport's pacing rate is that bitrate (or the pacing rate, when
//! lower) and its window is cwnd, plus one packet while the queuing delay is under target
//! (`isOkToTransmit`). Differences: no RTP queue (frames the window cannot send are
//! not queued, so the RTP-queue discard and its delay terms are zero), no congestion-window
//! validation by bytes-in-flight history, no shared-bottleneck detection, ECN or L4S; the
//! window update runs on every acknowledged packet (the transport acknowledges each one) rather
//! than per RTCP feedback report. Pantheon's
//! `ScreamClient.cc` stream settings (minimum, start and maximum bitrate) were not available to
//! check; `min-rate-mbps`, `start-rate-mbps` and `max-rate-mbps` are ccbench's choices.

use super::base_delay::MinHistory;
use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use std::collections::VecDeque;

const TICK_NS: u64 = 50_000_000;
/// Base one-way delay: minima of 10 s intervals (`kBaseDelayUpdateInterval`), 50 kept
/// (`kBaseOwdHistSize`).
const BASE_INTERVAL_NS: u64 = 10_000_000_000;
const BASE_KEPT: usize = 50;

pub struct Scream {
    qdelay_target: f64,
    gain_up: f64,
    gain_down: f64,
    loss_beta: f64,
    loss_rate_scale: f64,
    ramp_up: f64,
    min_rate: f64,
    max_rate: f64,
    mss: f64,
    cwnd: f64,
    in_fast_start: bool,
    last_congestion_ns: u64,
    // delay
    base: MinHistory,
    qdelay: f64,
    frac_avg: f64,
    frac_hist: VecDeque<f64>,
    trend: f64,
    srtt: f64,
    start_ns: u64,
    acked_pending: f64,
    last_cwnd_update: u64,
    inflight: f64,
    loss_event: bool,
    last_loss_event: Option<u64>,
    // media rate
    target: f64,
    target_i: f64,
    was_fast_start: bool,
    last_target_i_update: u64,
    last_rate_adjust: u64,
    bytes_tx: u64,
    bytes_acked: u64,
    rate_hist: VecDeque<(f64, f64)>,
    r_max: f64,
    pacing: Option<f64>,
    next_tick: u64,
}

impl Scream {
    fn base_owd(&self) -> u64 {
        self.base.min().unwrap_or(u64::MAX)
    }

    fn update_cwnd(&mut self, now: u64) {
        let acked = std::mem::take(&mut self.acked_pending);
        let dt = if self.last_cwnd_update == 0 { 0.001 } else { (now - self.last_cwnd_update) as f64 / 1e9 };
        self.last_cwnd_update = now;
        let acked_lim = if self.r_max > 1e5 { acked.min(1.25 * self.r_max * dt / 8.0) } else { 2.0 * self.mss };
        self.frac_avg = 0.9 * self.frac_avg + 0.1 * self.qdelay / self.qdelay_target;
        let off = (self.qdelay_target - self.qdelay) / self.qdelay_target;
        if self.loss_event {
            self.loss_event = false;
            self.cwnd = (self.loss_beta * self.cwnd).max(2.0 * self.mss);
            self.last_congestion_ns = now;
            self.in_fast_start = false;
            self.on_loss_event_rate(now);
        } else if self.in_fast_start {
            if self.trend < 0.2 {
                if self.inflight * 1.5 + acked > self.cwnd {
                    self.cwnd += acked_lim;
                }
            } else {
                self.in_fast_start = false;
            }
        } else if off > 0.0 {
            if self.inflight * 1.2 + acked > self.cwnd {
                self.cwnd += (self.gain_up * off * acked_lim * self.mss / self.cwnd + 0.5).floor();
            }
        } else {
            let delta = (-(self.gain_down * off * acked * self.mss / self.cwnd)).min(self.cwnd / 4.0);
            self.cwnd -= delta.floor();
            self.last_congestion_ns = now;
        }
        self.cwnd = self.cwnd.max(2.0 * self.mss);
        if self.trend > 0.2 {
            self.last_congestion_ns = now;
        } else if now - self.last_congestion_ns > 5_000_000_000 && !self.in_fast_start {
            self.in_fast_start = true;
            self.last_congestion_ns = now;
        }
    }

    /// Media rate on a loss event (RFC 8298 §4.1.3).
    fn on_loss_event_rate(&mut self, now: u64) {
        if now - self.last_target_i_update > 2_000_000_000 {
            self.target_i = self.r_max.max(1.0);
            self.last_target_i_update = now;
        }
        self.target = (self.target * self.loss_rate_scale).max(self.min_rate);
        self.last_rate_adjust = now;
    }

    fn tick(&mut self, now: u64) {
        // rates over the last 4 ticks
        let dt = TICK_NS as f64 / 1e9;
        self.rate_hist.push_back((self.bytes_tx as f64 * 8.0 / dt, self.bytes_acked as f64 * 8.0 / dt));
        self.bytes_tx = 0;
        self.bytes_acked = 0;
        while self.rate_hist.len() > 4 {
            self.rate_hist.pop_front();
        }
        let n = self.rate_hist.len() as f64;
        let tx = self.rate_hist.iter().map(|r| r.0).sum::<f64>() / n;
        let ack = self.rate_hist.iter().map(|r| r.1).sum::<f64>() / n;
        self.r_max = tx.max(ack);
        // pacing, queuing-delay history and trend
        self.pacing = if self.frac_avg > 0.02 {
            Some(1.5 * (self.cwnd * 8.0 / self.srtt.max(0.001)).max(5000.0))
        } else {
            None
        };
        self.frac_hist.push_back(self.qdelay / self.qdelay_target);
        while self.frac_hist.len() > 20 {
            self.frac_hist.pop_front();
        }
        if now - self.start_ns > 2_000_000_000 && self.frac_hist.len() == 20 {
            let avg = self.frac_hist.iter().sum::<f64>() / 20.0;
            let (mut a0, mut a1, mut x2) = (0.0, 0.0, 0.0);
            for &h in &self.frac_hist {
                let x1 = h - avg;
                a0 += x1 * x1;
                a1 += x1 * x2;
                x2 = x1;
            }
            self.trend = if a0 > 0.0 { (a1 / a0 * self.frac_avg).clamp(0.0, 1.0) } else { 0.0 };
        }
        if now - self.last_rate_adjust >= 200_000_000 {
            self.adjust_target(now);
        }
    }

    /// Media rate, every 200 ms without a loss event (RFC 8298 §4.1.3).
    fn adjust_target(&mut self, now: u64) {
        self.last_rate_adjust = now;
        let br = self.r_max;
        let mut scl_i = 4.0 * (self.target - self.target_i) / self.target_i;
        scl_i = (scl_i * scl_i).clamp(0.2, 1.0);
        let ramp = self.ramp_up.min(0.5 * self.target) * 0.2;
        if self.in_fast_start {
            let mut inc = ramp * scl_i;
            if self.target > 1.5 * br {
                inc = 0.0;
            }
            self.target += inc;
            self.was_fast_start = true;
        } else {
            if self.was_fast_start {
                self.was_fast_start = false;
                if now - self.last_target_i_update > 2_000_000_000 {
                    self.target_i = br.max(1.0);
                    self.last_target_i_update = now;
                }
            }
            let scale = 1.0 + 0.05 * (50_000.0 / self.target).min(1.0);
            let mut inc = scale * br * (1.0 - 0.1 * self.trend) - self.target;
            if inc > 0.0 {
                self.was_fast_start = true;
                inc = (inc * scl_i).min(ramp);
                if self.target > 1.5 * br {
                    inc = 0.0;
                }
            }
            self.target += inc;
        }
        self.target = self.target.clamp(self.min_rate, self.max_rate);
    }
}

impl DgramCc for Scream {
    fn name(&self) -> &'static str {
        "scream"
    }
    fn on_start(&mut self, now: u64) {
        self.start_ns = now;
        self.next_tick = now + TICK_NS;
        self.last_congestion_ns = now;
        self.last_rate_adjust = now;
        self.base.begin(now);
    }
    fn on_send(&mut self, _now: u64, _seq: u64, bytes: u32, inflight: u64) {
        if bytes as f64 > self.mss {
            self.mss = bytes as f64;
            self.cwnd = self.cwnd.max(2.0 * self.mss);
        }
        self.bytes_tx += bytes as u64;
        self.inflight = inflight as f64;
    }
    fn on_ack(&mut self, a: &Acked) {
        let r = a.rtt_ns as f64 / 1e9;
        self.srtt = if self.srtt == 0.0 { r } else { 0.875 * self.srtt + 0.125 * r };
        let owd = a.recv_ns.saturating_sub(a.sent_ns);
        // the sample belongs to the interval it may end (ScreamTx folds it in, then stores)
        self.base.note(owd);
        self.base.roll(a.now_ns);
        self.qdelay = owd.saturating_sub(self.base_owd()) as f64 / 1e9;
        self.bytes_acked += a.bytes as u64;
        self.inflight = a.inflight_bytes as f64;
        self.acked_pending += a.bytes as f64;
        self.update_cwnd(a.now_ns);
    }
    fn on_loss(&mut self, l: &Lost) {
        let srtt_ns = (self.srtt * 1e9) as u64;
        if self.last_loss_event.map_or(true, |t| l.now_ns - t > srtt_ns) {
            self.last_loss_event = Some(l.now_ns);
            self.loss_event = true;
            self.update_cwnd(l.now_ns);
        }
        self.inflight = l.inflight_bytes as f64;
    }
    fn next_timer_ns(&self) -> Option<u64> {
        Some(self.next_tick)
    }
    fn on_timer(&mut self, now: u64) {
        while self.next_tick <= now {
            let t = self.next_tick;
            self.tick(t);
            self.next_tick += TICK_NS;
        }
    }
    fn control(&self) -> Control {
        let r = self.pacing.map_or(self.target, |p| p.min(self.target));
        // ScreamTx::isOkToTransmit lets one more packet out while the queue is under target
        let w = if self.qdelay < self.qdelay_target { self.cwnd + self.mss } else { self.cwnd };
        Control { rate_bps: Some(r), cwnd_bytes: Some(w as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd / self.mss));
        out.push(("target_mbps", self.target / 1e6));
        out.push(("qdelay_ms", self.qdelay * 1e3));
        out.push(("qdelay_trend", self.trend));
        out.push(("fast_start", self.in_fast_start as u8 as f64));
    }
}

static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "qdelay-target-ms", default: 100.0, doc: "queuing-delay target" },
    ParamInfo { name: "gain-up", default: 1.0, doc: "window gain below target" },
    ParamInfo { name: "gain-down", default: 2.0, doc: "window gain above target" },
    ParamInfo { name: "loss-beta", default: 0.8, doc: "window multiplier on a loss event" },
    ParamInfo { name: "loss-rate-scale", default: 0.9, doc: "media-rate multiplier on a loss event" },
    ParamInfo { name: "ramp-up-kbps", default: 200.0, doc: "largest media-rate increase, kbit/s per second" },
    ParamInfo { name: "min-rate-mbps", default: 0.15, doc: "media-rate floor" },
    ParamInfo { name: "start-rate-mbps", default: 1.0, doc: "initial media rate" },
    ParamInfo { name: "max-rate-mbps", default: 100.0, doc: "media-rate ceiling" },
];

fn make(p: &Params, _seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let min_rate = p.float("min-rate-mbps", 0.15, 0.001, 1e5)? * 1e6;
    let max_rate = p.float("max-rate-mbps", 100.0, 0.001, 1e5)? * 1e6;
    let start = p.float("start-rate-mbps", 1.0, 0.001, 1e5)? * 1e6;
    if !(min_rate <= start && start <= max_rate) {
        return Err("scheme \"scream\": need min-rate-mbps ≤ start-rate-mbps ≤ max-rate-mbps".into());
    }
    Ok(Box::new(Scream {
        qdelay_target: p.float("qdelay-target-ms", 100.0, 1.0, 10_000.0)? / 1e3,
        gain_up: p.float("gain-up", 1.0, 0.01, 100.0)?,
        gain_down: p.float("gain-down", 2.0, 0.01, 100.0)?,
        loss_beta: p.float("loss-beta", 0.8, 0.1, 1.0)?,
        loss_rate_scale: p.float("loss-rate-scale", 0.9, 0.1, 1.0)?,
        ramp_up: p.float("ramp-up-kbps", 200.0, 1.0, 1e6)? * 1e3,
        min_rate,
        max_rate,
        mss: 1500.0,
        cwnd: 3000.0,
        in_fast_start: true,
        last_congestion_ns: 0,
        base: MinHistory::new(BASE_INTERVAL_NS, BASE_KEPT),
        qdelay: 0.0,
        frac_avg: 0.0,
        frac_hist: VecDeque::new(),
        trend: 0.0,
        srtt: 0.0,
        start_ns: 0,
        acked_pending: 0.0,
        last_cwnd_update: 0,
        inflight: 0.0,
        loss_event: false,
        last_loss_event: None,
        target: start,
        target_i: 1.0,
        was_fast_start: false,
        last_target_i_update: 0,
        last_rate_adjust: 0,
        bytes_tx: 0,
        bytes_acked: 0,
        rate_hist: VecDeque::new(),
        r_max: 0.0,
        pacing: None,
        next_tick: TICK_NS,
    }))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "scream",
    description: "SCReAM: self-clocked window on a 100 ms queuing-delay target, with a video source at the computed bitrate",
    source: "RFC 8298 §4.1; github.com/EricssonResearch/scream code/ScreamTx.cpp (d881890, as Pantheon builds it)",
    params: PARAMS,
    make,
}];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Aimd, Link, SEC};
    use serde_json::json;

    fn scream() -> Box<dyn super::DgramCc> {
        mk("scream", &serde_json::Value::Null, 1).unwrap()
    }

    /// On a 4 Mbit/s, 40 ms link with a deep (300-packet, 900 ms) buffer the media rate ramps
    /// up at ≤ 200 kbit/s per second, settles near the link rate, and the queue stays well
    /// under the 100 ms target — where a loss-based AIMD fills the buffer.
    #[test]
    fn keeps_queuing_delay_under_target() {
        let mut l = Link::new(4.0, 40.0, 300, 1);
        let f = l.add(scream(), 0, 90 * SEC);
        l.run(90 * SEC);
        let t = l.tput_bps(f, 40 * SEC, 90 * SEC) / 4e6;
        let q50 = l.owd_ms(f, 40 * SEC, 90 * SEC, 0.5) - 20.0;
        let q95 = l.owd_ms(f, 40 * SEC, 90 * SEC, 0.95) - 20.0;
        let ramp = l.var_mean(f, "target_mbps", 5 * SEC, 6 * SEC);
        let mut a = Link::new(4.0, 40.0, 300, 1);
        let g = a.add(Aimd::boxed(), 0, 90 * SEC);
        a.run(90 * SEC);
        let qa = a.owd_ms(g, 40 * SEC, 90 * SEC, 0.5) - 20.0;
        eprintln!("scream: utilisation {t:.3}, queuing delay p50 {q50:.1} ms p95 {q95:.1} ms, target at 5 s {ramp:.2} Mbit/s; aimd p50 {qa:.0} ms");
        assert!(ramp < 2.1, "ramp-up too fast: {ramp}");
        assert!(t > 0.8, "{t}");
        assert!(q95 < 100.0, "{q95}");
        assert!(qa > 300.0, "{qa}");
    }

    /// When the link drops from 4 to 2 Mbit/s the queuing delay rises towards the target, the
    /// window shrinks and the media rate follows the new capacity down.
    #[test]
    fn follows_a_capacity_drop() {
        let mut l = Link::new(4.0, 40.0, 300, 2);
        l.rate = Box::new(|t| if t < 60 * SEC { 4e6 } else { 2e6 });
        let f = l.add(scream(), 0, 100 * SEC);
        l.run(100 * SEC);
        let r = l.var_mean(f, "target_mbps", 80 * SEC, 100 * SEC);
        let q95 = l.owd_ms(f, 70 * SEC, 100 * SEC, 0.95) - 20.0;
        eprintln!("after the drop: media rate {r:.2} Mbit/s, p95 queuing delay {q95:.1} ms");
        assert!(r < 2.4 && r > 1.2, "{r}");
        assert!(q95 < 150.0, "{q95}");
    }

    /// The queuing-delay target is the window's set point: a 30 ms target gives a shorter
    /// queue than the default under the same overload (a 1 Mbit/s link with the media rate
    /// pinned at 2 Mbit/s, so only the window limits the queue).
    #[test]
    fn target_sets_the_queue() {
        let run = |target: f64| {
            let mut l = Link::new(1.0, 40.0, 300, 3);
            let p = json!({"qdelay-target-ms": target, "min-rate-mbps": 2, "start-rate-mbps": 2, "max-rate-mbps": 2});
            let f = l.add(mk("scream", &p, 3).unwrap(), 0, 40 * SEC);
            l.run(40 * SEC);
            l.owd_ms(f, 20 * SEC, 40 * SEC, 0.5) - 20.0
        };
        let (q100, q30) = (run(100.0), run(30.0));
        eprintln!("window-limited median queuing delay: target 100 ms -> {q100:.1} ms, 30 ms -> {q30:.1} ms");
        assert!(q100 > 60.0 && q100 < 140.0, "{q100}");
        assert!(q30 > 15.0 && q30 < 45.0, "{q30}");
    }
}
