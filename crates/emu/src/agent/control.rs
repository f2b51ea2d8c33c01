//! The kernel side of a periodic controller (`ccbench.cc.Controller` on `--backend emu`,
//! docs/python-schemes.md, "On the kernel"): the sender reports interval statistics read from
//! `TCP_INFO` on stdout and takes commands on stdin; the receiver takes window clamps.
//!
//! What a user program can control on a Linux TCP socket, and how:
//! * pacing rate: `SO_MAX_PACING_RATE` (bytes/s) caps `sk_pacing_rate`; any value other than
//!   ~0 also switches on TCP's internal pacing (`sock_setsockopt` sets SK_PACING_NEEDED);
//! * congestion control: `TCP_CONGESTION` on the connected socket (`tcp_set_congestion_control`);
//! * window: no socket option sets the sender's cwnd. `TCP_WINDOW_CLAMP` on the **receiver**
//!   bounds the window it advertises (`tcp_set_window_clamp`, `tcp_select_window` in
//!   net/ipv4/tcp.c and tcp_output.c), which bounds the sender's data in flight. Receive-buffer
//!   autotuning (`tcp_rcv_space_adjust`) raises `window_clamp` again as the buffer grows, so the
//!   receiver re-applies the commanded clamp every 2 ms.
//!
//! Sender stdout, one JSON object per line: `{"ev":"connected",...}` once, then
//! `{"ev":"interval",...}` at the end of each interval: cumulative `TCP_INFO` counters (the
//! driver takes differences) and the smoothed RTT polled every millisecond within the interval
//! (count, min, max, mean, first, last and least-squares slope against time).
//! Sender stdin: `{"pacing_rate": bit/s or null, "cc": "name"}` (either key optional).
//! Receiver stdin: `{"window_clamp": bytes}` (0: no clamp).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::errno_msg;
use super::tcp_info::*;
use crate::clock::{self, mono_ns};

fn tcp_info(fd: i32) -> Option<[u8; 256]> {
    let mut info = [0u8; 256];
    let mut len: libc::socklen_t = info.len() as _;
    // SAFETY: getsockopt into our buffer with its length.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) };
    (r == 0 && len as usize >= TCPI_SND_WND.end()).then_some(info)
}

/// The cumulative counters and current state of a `struct tcp_info` (tcp_info.rs's fields)
/// as JSON fields.
fn info_fields(b: &[u8]) -> serde_json::Map<String, serde_json::Value> {
    let ssthresh = TCPI_SND_SSTHRESH.read(b);
    let min_rtt = TCPI_MIN_RTT.read(b);
    let pacing = TCPI_PACING_RATE.read(b);
    let null = || serde_json::Value::Null;
    let v = serde_json::json!({
        "ca_state": TCPI_CA_STATE.read(b), "mss": TCPI_SND_MSS.read(b),
        "unacked": TCPI_UNACKED.read(b), "sacked": TCPI_SACKED.read(b),
        "lost_out": TCPI_LOST.read(b), "retrans_out": TCPI_RETRANS.read(b),
        "srtt_us": TCPI_RTT.read(b), "rttvar_us": TCPI_RTTVAR.read(b),
        "ssthresh": if ssthresh >= INFINITE_SSTHRESH { null() } else { ssthresh.into() },
        "cwnd": TCPI_SND_CWND.read(b), "total_retrans": TCPI_TOTAL_RETRANS.read(b),
        "pacing_rate_Bps": if pacing == NO_PACING_RATE { null() } else { pacing.into() },
        "bytes_acked": TCPI_BYTES_ACKED.read(b), "segs_in": TCPI_SEGS_IN.read(b),
        "min_rtt_us": if min_rtt == NO_MIN_RTT { null() } else { min_rtt.into() },
        "delivery_rate_Bps": TCPI_DELIVERY_RATE.read(b),
        "app_limited": TCPI_APP_LIMITED_BYTE.read(b) & 1,
        "delivered": TCPI_DELIVERED.read(b), "delivered_ce": TCPI_DELIVERED_CE.read(b),
        "bytes_sent": TCPI_BYTES_SENT.read(b), "bytes_retrans": TCPI_BYTES_RETRANS.read(b),
        "snd_wnd": TCPI_SND_WND.read(b),
    });
    match v {
        serde_json::Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// Smoothed-RTT polls within one interval.
#[derive(Default)]
struct RttPolls {
    n: u64,
    min: f64,
    max: f64,
    sum: f64,
    first: f64,
    last: f64,
    // least-squares sums over (t seconds from the interval start, rtt µs)
    st: f64,
    stt: f64,
    sr: f64,
    str_: f64,
}

impl RttPolls {
    fn add(&mut self, t_s: f64, rtt_us: f64) {
        if self.n == 0 {
            self.min = rtt_us;
            self.max = rtt_us;
            self.first = rtt_us;
        }
        self.n += 1;
        self.min = self.min.min(rtt_us);
        self.max = self.max.max(rtt_us);
        self.sum += rtt_us;
        self.last = rtt_us;
        self.st += t_s;
        self.stt += t_s * t_s;
        self.sr += rtt_us;
        self.str_ += t_s * rtt_us;
    }

    /// RTT fields in µs (null without polls); the gradient in s/s.
    fn fields(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let n = self.n as f64;
        let num = |x: f64| serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number);
        let (mean, grad) = if self.n == 0 {
            (f64::NAN, f64::NAN)
        } else {
            let den = n * self.stt - self.st * self.st;
            let g = if self.n >= 2 && den > 0.0 { (n * self.str_ - self.st * self.sr) / den / 1e6 } else { 0.0 };
            (self.sum / n, g)
        };
        m.insert("rtt_polls".into(), self.n.into());
        for (k, v) in [("rtt_min_us", self.min), ("rtt_max_us", self.max), ("rtt_mean_us", mean),
                       ("rtt_first_us", self.first), ("rtt_last_us", self.last), ("rtt_gradient", grad)] {
            m.insert(k.into(), if self.n == 0 { serde_json::Value::Null } else { num(v) });
        }
    }
}

fn emit(m: serde_json::Map<String, serde_json::Value>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::Value::Object(m));
    let _ = out.flush();
}

/// The controller's interval: a fixed length (ns) or a multiple of the smoothed RTT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interval {
    Fixed(u64),
    Rtt(f64),
}

impl Interval {
    fn len_ns(self, srtt_us: u64) -> u64 {
        match self {
            Interval::Fixed(ns) => ns.max(1_000_000),
            // before the first RTT sample the kernel's srtt is 0: use 1 ms, as the floor
            Interval::Rtt(k) => ((k * srtt_us as f64 * 1e3) as u64).max(1_000_000),
        }
    }
}

/// Interval reports of the connected socket `fd` until `done` (sender side): one
/// `connected` line now, then an `interval` line at the end of each interval. `t0`:
/// experiment time 0 (absolute ns).
pub fn report_intervals(fd: i32, t0: u64, every: Interval, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        clock::set_timer_slack(1);
        let Some(info) = tcp_info(fd) else { return };
        let mut m = info_fields(&info);
        m.insert("ev".into(), "connected".into());
        m.insert("t_ns".into(), (mono_ns() - t0).into());
        emit(m);
        let mut start = mono_ns();
        let mut end = start + every.len_ns(TCPI_RTT.read(&info));
        let mut polls = RttPolls::default();
        while !done.load(Ordering::Relaxed) {
            let now = mono_ns();
            if now >= end {
                let Some(info) = tcp_info(fd) else { return };
                let mut m = info_fields(&info);
                m.insert("ev".into(), "interval".into());
                m.insert("start_ns".into(), (start - t0).into());
                m.insert("t_ns".into(), (now - t0).into());
                polls.fields(&mut m);
                emit(m);
                polls = RttPolls::default();
                start = now;
                end = start + every.len_ns(TCPI_RTT.read(&info));
                continue;
            }
            clock::sleep_until((now + 1_000_000).min(end));
            if let Some(info) = tcp_info(fd) {
                let srtt = TCPI_RTT.read(&info);
                if srtt > 0 {
                    polls.add((mono_ns() - start) as f64 / 1e9, srtt as f64);
                }
            }
        }
    })
}

fn parse_line(line: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(m)) => Some(m),
        _ => {
            emit_error(&format!("control: not a JSON object: {}", line.chars().take(200).collect::<String>()));
            None
        }
    }
}

fn emit_error(msg: &str) {
    let mut m = serde_json::Map::new();
    m.insert("ev".into(), "control_error".into());
    m.insert("error".into(), msg.into());
    emit(m);
}

/// Apply one sender command to `fd`; errors are reported on stdout as `control_error` lines.
pub fn apply_sender_command(fd: i32, cmd: &serde_json::Map<String, serde_json::Value>) {
    if let Some(v) = cmd.get("pacing_rate") {
        // bit/s -> bytes/s; null or absent rate: no cap (~0, which keeps pacing status as is)
        let bps = match v {
            serde_json::Value::Null => u64::MAX,
            v => match v.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => ((x / 8.0) as u64).max(1),
                _ => {
                    emit_error(&format!("control: pacing_rate {v} is not a positive number"));
                    return;
                }
            },
        };
        // SAFETY: setsockopt with a valid u64.
        let r = unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &bps as *const u64 as *const _, 8) };
        if r != 0 {
            emit_error(&errno_msg("control: SO_MAX_PACING_RATE"));
        }
    }
    if let Some(serde_json::Value::String(cc)) = cmd.get("cc") {
        // SAFETY: setsockopt with the name's bytes and length.
        let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as u32) };
        if r != 0 {
            emit_error(&errno_msg(&format!("control: TCP_CONGESTION {cc}")));
        }
    }
}

/// Sender: apply the commands read from stdin until it closes.
pub fn sender_commands(fd: i32) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            if let Some(cmd) = parse_line(&line) {
                apply_sender_command(fd, &cmd);
            }
        }
    })
}

/// Receiver: the commanded window clamp (bytes, 0 = none), read from stdin until it closes.
pub fn receiver_commands() -> Arc<AtomicU64> {
    let clamp = Arc::new(AtomicU64::new(0));
    let c = clamp.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let Some(cmd) = parse_line(&line) else { continue };
            match cmd.get("window_clamp").map(|v| v.as_u64()) {
                Some(Some(b)) if b <= i32::MAX as u64 => c.store(b, Ordering::Relaxed),
                Some(_) => emit_error("control: window_clamp must be a number of bytes"),
                None => {}
            }
        }
    });
    clamp
}

/// Receiver: make `fd`'s window clamp the commanded one (autotuning may have raised it).
/// Clamp 0 (never commanded) leaves the socket alone; the kernel's floor is
/// SOCK_MIN_RCVBUF / 2.
pub fn enforce_clamp(fd: i32, clamp: u64, applied: &mut u64) {
    if clamp == 0 {
        return;
    }
    let mut cur: i32 = 0;
    let mut len: libc::socklen_t = 4;
    // SAFETY: getsockopt/setsockopt with a valid int and its length.
    unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, &mut cur as *mut i32 as *mut _, &mut len) };
    if cur as u64 != clamp || *applied != clamp {
        let v = clamp as i32;
        let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, &v as *const i32 as *const _, 4) };
        if r != 0 && *applied != clamp {
            emit_error(&errno_msg("control: TCP_WINDOW_CLAMP"));
        }
        *applied = clamp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_polls_give_the_least_squares_slope() {
        let mut p = RttPolls::default();
        // rtt rises 2 ms per 10 ms: slope 0.2 s/s
        for i in 0..5 {
            p.add(i as f64 * 0.01, 20_000.0 + 2_000.0 * i as f64);
        }
        let mut m = serde_json::Map::new();
        p.fields(&mut m);
        assert_eq!(m["rtt_polls"], 5);
        assert_eq!(m["rtt_min_us"].as_f64(), Some(20_000.0));
        assert_eq!(m["rtt_max_us"].as_f64(), Some(28_000.0));
        assert_eq!(m["rtt_mean_us"].as_f64(), Some(24_000.0));
        assert!((m["rtt_gradient"].as_f64().unwrap() - 0.2).abs() < 1e-9);
        let mut e = serde_json::Map::new();
        RttPolls::default().fields(&mut e);
        assert!(e["rtt_mean_us"].is_null() && e["rtt_polls"] == 0);
    }

    #[test]
    fn intervals_have_a_floor_and_follow_the_rtt() {
        assert_eq!(Interval::Fixed(10_000_000).len_ns(0), 10_000_000);
        assert_eq!(Interval::Rtt(2.0).len_ns(20_000), 40_000_000);
        assert_eq!(Interval::Rtt(1.0).len_ns(0), 1_000_000);
    }

    #[test]
    fn tcp_info_fields_read_the_uapi_offsets() {
        let mut b = [0u8; 256];
        b[1] = 4;
        b[7] = 1;
        b[80..84].copy_from_slice(&40u32.to_ne_bytes());
        b[76..80].copy_from_slice(&0x7fff_ffffu32.to_ne_bytes());
        b[120..128].copy_from_slice(&123_456u64.to_ne_bytes());
        b[200..208].copy_from_slice(&200_000u64.to_ne_bytes());
        b[148..152].copy_from_slice(&0xffff_ffffu32.to_ne_bytes());
        let m = info_fields(&b);
        assert_eq!((m["ca_state"].as_u64(), m["cwnd"].as_u64(), m["app_limited"].as_u64()), (Some(4), Some(40), Some(1)));
        assert!(m["ssthresh"].is_null() && m["min_rtt_us"].is_null());
        assert_eq!((m["bytes_acked"].as_u64(), m["bytes_sent"].as_u64()), (Some(123_456), Some(200_000)));
    }
}
