//! ccbench-agent: one end of one TCP flow, run inside a host's network namespace.
//!
//! ```text
//! ccbench-agent server --port P --t0 T0 --end E [--run ID]
//! ccbench-agent client --dst ADDR --port P --cc NAME --t0 T0 --start S --end E
//!                      [--stop S2] [--bytes N] [--interval I] [--out FILE] [--run ID]
//! ```
//! Times: `--t0` is the absolute CLOCK_MONOTONIC time (ns) of experiment time 0; `--start`,
//! `--stop`, `--end` and `--interval` are ns relative to it. The client connects at `start`
//! with `TCP_CONGESTION` set to NAME, sends bulk data (or exactly N bytes) until `stop`
//! (or `end`), and samples `TCP_INFO` (and `TCP_CC_INFO`, which only BBR fills) every
//! `interval` on the experiment's time grid into FILE (CSV, the flows-table column names).
//! A finite flow waits until every byte is acknowledged (SIOCOUTQ = 0) before closing. The
//! last line on stdout is a JSON summary. Exit code 3: the congestion control was refused.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use emu::clock::{self, mono_ns};

const NONE: u64 = u64::MAX;

fn die(code: i32, msg: &str) -> ! {
    eprintln!("ccbench-agent: {msg}");
    println!("{}", serde_json::json!({"error": msg}));
    std::process::exit(code)
}

fn errno_msg(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

struct Args(HashMap<String, String>);

impl Args {
    fn parse(v: &[String]) -> Args {
        let mut m = HashMap::new();
        let mut i = 0;
        while i < v.len() {
            let k = v[i].strip_prefix("--").unwrap_or_else(|| die(2, &format!("unexpected argument {}", v[i])));
            let val = v.get(i + 1).cloned().unwrap_or_else(|| die(2, &format!("--{k} needs a value")));
            m.insert(k.to_string(), val);
            i += 2;
        }
        Args(m)
    }
    fn str(&self, k: &str) -> String {
        self.0.get(k).cloned().unwrap_or_else(|| die(2, &format!("--{k} is required")))
    }
    fn u64(&self, k: &str, default: Option<u64>) -> u64 {
        match self.0.get(k) {
            Some(v) => v.parse().unwrap_or_else(|_| die(2, &format!("--{k}: {v} is not an integer"))),
            None => default.unwrap_or_else(|| die(2, &format!("--{k} is required"))),
        }
    }
}

fn sockaddr(addr: u32, port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as _;
    sa.sin_port = port.to_be();
    sa.sin_addr = libc::in_addr { s_addr: addr.to_be() };
    sa
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on our own fd.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// poll one fd for `events` until the absolute time `deadline` (ns); true if ready.
fn wait_fd(fd: i32, events: i16, deadline: u64) -> bool {
    let now = mono_ns();
    if now >= deadline {
        return false;
    }
    let ms = ((deadline - now) / 1_000_000).clamp(1, 100) as i32;
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0
}

fn server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", None);
    let end = t0 + a.u64("end", None);
    // SAFETY: plain socket calls on fds we own, with valid pointers.
    let lfd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if lfd < 0 {
        die(1, &errno_msg("socket"));
    }
    let one: i32 = 1;
    unsafe {
        libc::setsockopt(lfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const i32 as *const _, 4);
    }
    let sa = sockaddr(0, port);
    if unsafe { libc::bind(lfd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    if unsafe { libc::listen(lfd, 16) } != 0 {
        die(1, &errno_msg("listen"));
    }
    set_nonblocking(lfd);
    println!("listening");
    std::io::stdout().flush().ok();
    let mut received: u64 = 0;
    let mut buf = vec![0u8; 1 << 18];
    let mut fd = -1;
    while mono_ns() < end {
        if fd < 0 {
            if wait_fd(lfd, libc::POLLIN, end) {
                fd = unsafe { libc::accept(lfd, std::ptr::null_mut(), std::ptr::null_mut()) };
                if fd >= 0 {
                    set_nonblocking(fd);
                }
            }
            continue;
        }
        if !wait_fd(fd, libc::POLLIN, end) {
            continue;
        }
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut _, buf.len()) };
        if r == 0 {
            break;
        }
        if r > 0 {
            received += r as u64;
        }
    }
    println!("{}", serde_json::json!({"bytes_received": received}));
}

/// One TCP_INFO (+ TCP_CC_INFO) sample, in the flows table's units.
fn sample(fd: i32, t: u64, bbr: bool, out: &mut String) {
    let mut info = [0u8; 512];
    let mut len: libc::socklen_t = info.len() as _;
    // SAFETY: getsockopt into our buffer with its length.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) };
    if r != 0 || len < 200 {
        return;
    }
    let u8_ = |o: usize| info[o] as u64;
    let u32_ = |o: usize| u32::from_ne_bytes(info[o..o + 4].try_into().unwrap()) as u64;
    let u64_ = |o: usize| u64::from_ne_bytes(info[o..o + 8].try_into().unwrap());
    // struct tcp_info offsets (include/uapi/linux/tcp.h)
    let ca_state = ["open", "disorder", "cwr", "recovery", "loss"].get(u8_(1) as usize).copied().unwrap_or("open");
    let (unacked, sacked, lost, retrans_out) = (u32_(24), u32_(28), u32_(32), u32_(36));
    let rtt = u32_(68);
    let rttvar = u32_(72);
    let ssthresh = u32_(76);
    let cwnd = u32_(80);
    let total_retrans = u32_(100);
    let pacing = u64_(104);
    let bytes_acked = u64_(120);
    let min_rtt = u32_(148);
    let delivery = u64_(160);
    let delivered = u32_(192);
    let inflight = (unacked + retrans_out).saturating_sub(sacked + lost);
    let ss = if ssthresh >= 0x7fff_ffff { String::new() } else { ssthresh.to_string() };
    let min_rtt_s = if min_rtt == 0xffff_ffff { String::new() } else { min_rtt.to_string() };
    let pacing_s = if pacing == u64::MAX { String::new() } else { (pacing * 8).to_string() };
    use std::fmt::Write as _;
    let _ = write!(
        out,
        "{t},{cwnd},{ss},{rtt},{rttvar},{min_rtt_s},{inflight},{delivered},{bytes_acked},{total_retrans},{lost},{ca_state},{pacing_s},{}",
        delivery * 8
    );
    if bbr {
        let mut cc = [0u8; 64];
        let mut clen: libc::socklen_t = cc.len() as _;
        // SAFETY: as above.
        let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, cc.as_mut_ptr() as *mut _, &mut clen) };
        if r == 0 && clen >= 20 {
            let w = |o: usize| u32::from_ne_bytes(cc[o..o + 4].try_into().unwrap()) as u64;
            let bw = w(0) | (w(4) << 32); // bytes/s
            let _ = write!(out, ",{},{},{},{}", bw * 8, w(8), w(12) as f64 / 256.0, w(16) as f64 / 256.0);
        } else {
            out.push_str(",,,,");
        }
    }
    out.push('\n');
}

const HEADER: &str = "time_ns,cwnd,ssthresh,srtt_us,rttvar_us,min_rtt_us,inflight,delivered,bytes_acked,retrans,lost,ca_state,pacing_rate_bps,delivery_rate_bps";

fn client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let cc = a.str("cc");
    let t0 = a.u64("t0", None);
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", None);
    let stop = match a.u64("stop", Some(NONE)) {
        NONE => end,
        s => (t0 + s).min(end),
    };
    let bytes = a.u64("bytes", Some(0));
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_path = a.0.get("out").cloned();
    clock::set_timer_slack(1);

    // SAFETY: plain socket calls on fds we own, with valid pointers and lengths.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        die(1, &errno_msg("socket"));
    }
    let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as u32) };
    if r != 0 {
        die(3, &format!("TCP_CONGESTION {cc}: {} (is tcp_{cc} loaded? see `ccbench doctor`)", std::io::Error::last_os_error()));
    }
    clock::sleep_until(start);
    let sa = sockaddr(u32::from(dst), port);
    let mut connected = false;
    // The receiver listens before t0; retry briefly in case a SYN was lost.
    while mono_ns() < stop {
        if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } == 0 {
            connected = true;
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            die(1, &format!("connect {dst}:{port}: {e}"));
        }
    }
    let connected_ns = mono_ns() - t0;
    let mut name = [0u8; 32];
    let mut nlen: libc::socklen_t = name.len() as _;
    unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_mut_ptr() as *mut _, &mut nlen) };
    let actual_cc = String::from_utf8_lossy(&name[..nlen as usize]).trim_end_matches('\0').to_string();
    let bbr = actual_cc == "bbr";
    set_nonblocking(fd);

    // Sampler thread: TCP_INFO on the experiment's time grid until told to stop.
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        let first_k = (start - t0).div_ceil(interval);
        std::thread::spawn(move || {
            clock::set_timer_slack(1);
            let mut out = String::with_capacity(1 << 16);
            out.push_str(HEADER);
            if bbr {
                out.push_str(",cc_btl_bw,cc_min_rtt_us,cc_pacing_gain,cc_cwnd_gain");
            }
            out.push('\n');
            let mut k = first_k;
            loop {
                let t = k * interval;
                if t0 + t > end {
                    break;
                }
                clock::sleep_until(t0 + t);
                if done.load(Ordering::Relaxed) {
                    break;
                }
                sample(fd, t, bbr, &mut out);
                k += 1;
            }
            out
        })
    };

    let buf = vec![0u8; 1 << 18];
    let mut written: u64 = 0;
    let mut completed_ns: Option<u64> = None;
    let mut error: Option<String> = None;
    if connected {
        while mono_ns() < stop && (bytes == 0 || written < bytes) {
            if !wait_fd(fd, libc::POLLOUT, stop) {
                continue;
            }
            let want = if bytes == 0 { buf.len() } else { (bytes - written).min(buf.len() as u64) as usize };
            let r = unsafe { libc::send(fd, buf.as_ptr() as *const _, want, libc::MSG_NOSIGNAL) };
            if r > 0 {
                written += r as u64;
            } else if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EAGAIN) && e.raw_os_error() != Some(libc::EINTR) {
                    error = Some(format!("send: {e}"));
                    break;
                }
            }
        }
        if bytes > 0 && written == bytes {
            // Finite flow: wait until the kernel holds no unacknowledged byte.
            while mono_ns() < end {
                let mut outq: i32 = 0;
                unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut outq) };
                if outq == 0 {
                    completed_ns = Some(mono_ns() - t0);
                    break;
                }
                clock::sleep_until(mono_ns() + 200_000);
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    let csv = sampler.join().unwrap_or_default();
    unsafe { libc::close(fd) };
    if let Some(p) = out_path {
        if let Err(e) = std::fs::write(&p, csv) {
            die(1, &format!("write {p}: {e}"));
        }
    }
    println!(
        "{}",
        serde_json::json!({"cc": actual_cc, "connected": connected, "connected_ns": connected_ns,
                           "bytes_written": written, "completed_ns": completed_ns, "error": error})
    );
}

fn main() {
    clock::die_with_parent(libc::SIGTERM);
    let v: Vec<String> = std::env::args().skip(1).collect();
    let a = Args::parse(v.get(1..).unwrap_or(&[]));
    if let Some(n) = a.0.get("nice") {
        clock::prioritise(n.parse().unwrap_or_else(|_| die(2, "--nice: not an integer")));
    }
    match v.first().map(String::as_str) {
        Some("server") => server(&a),
        Some("client") => client(&a),
        _ => die(2, "usage: ccbench-agent server|client --key value ..."),
    }
}
