//! ccbench-agent: one end of one TCP flow, run inside a host's network namespace.
//!
//! ```text
//! ccbench-agent server --port P [--t0 T0] [--end E] [--multi 1] [--run ID]
//! ccbench-agent client --dst ADDR --port P --cc NAME [--t0 T0] [--start S] [--end E]
//!                      [--stop S2] [--bytes N] [--interval I] [--out FILE] [--run ID]
//!                      [--app-rate BPS --mss M] [--on NS --off NS] [--notsent-lowat B]
//! ccbench-agent udp-server --port P [--t0 T0] [--end E]
//! ccbench-agent udp-client --dst ADDR --port P --rate BPS [--size IP_BYTES] [--t0 T0]
//!                      [--start S] [--stop S2] [--end E] [--spin NS]
//! ccbench-agent arrivals-client --dst ADDR --port P --cc NAME --arrivals JSON --seed S
//!                      --flow F --t0 T0 [--start S] [--stop S2] --end E --out FILE
//! ccbench-agent monitor --peer ADDR --port P --t0 T0 [--start S] --end E [--interval I]
//!                      [--out FILE] [--run ID]
//! ccbench-agent launch --at T [--run ID] -- PROGRAM ARGS...
//! ```
//! Without `--t0` the server and client take "now" as time 0 and run until killed (no
//! `--end`): that is how a command scheme or a Pantheon wrapper starts them. `monitor` samples
//! another program's socket through netlink sock_diag (command schemes); `launch` execs a
//! program at an absolute CLOCK_MONOTONIC time.
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
/// `--end` when not given (processes started by a wrapper run until killed): one day, ns.
const FOREVER: u64 = 86_400_000_000_000;

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

/// A non-blocking TCP listening socket on `port` (any address, SO_REUSEADDR), or exit.
fn listen_on(port: u16, backlog: i32) -> i32 {
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
    let lfd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if lfd < 0 {
        die(1, &errno_msg("socket"));
    }
    let one: i32 = 1;
    unsafe { libc::setsockopt(lfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const i32 as *const _, 4) };
    let sa = sockaddr(0, port);
    if unsafe { libc::bind(lfd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    if unsafe { libc::listen(lfd, backlog) } != 0 {
        die(1, &errno_msg("listen"));
    }
    set_nonblocking(lfd);
    lfd
}

fn server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let lfd = listen_on(port, 16);
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

/// One TCP_INFO (+ TCP_CC_INFO) sample of our own socket, in the flows table's units.
fn sample(fd: i32, t: u64, bbr: bool, out: &mut String) {
    let mut info = [0u8; 512];
    let mut len: libc::socklen_t = info.len() as _;
    // SAFETY: getsockopt into our buffer with its length.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) };
    if r != 0 || len < 200 {
        return;
    }
    let mut cc = [0u8; 64];
    let mut clen: libc::socklen_t = cc.len() as _;
    let cc_ok = bbr && {
        // SAFETY: as above.
        let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, cc.as_mut_ptr() as *mut _, &mut clen) };
        r == 0 && clen >= 20
    };
    format_info(&info[..len as usize], t, bbr, if cc_ok { Some(&cc[..clen as usize]) } else { None }, out);
}

/// Format a `struct tcp_info` (and BBR's `tcp_bbr_info` when `bbr`) as one CSV row.
fn format_info(info: &[u8], t: u64, bbr: bool, cc: Option<&[u8]>, out: &mut String) {
    let mut buf = [0u8; 512];
    let n = info.len().min(buf.len());
    buf[..n].copy_from_slice(&info[..n]); // short (older) structs read as zeros
    let info = &buf;
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
        match cc {
            Some(cc) if cc.len() >= 20 => {
                let w = |o: usize| u32::from_ne_bytes(cc[o..o + 4].try_into().unwrap()) as u64;
                let bw = w(0) | (w(4) << 32); // bytes/s
                let _ = write!(out, ",{},{},{},{}", bw * 8, w(8), w(12) as f64 / 256.0, w(16) as f64 / 256.0);
            }
            _ => out.push_str(",,,,"),
        }
    }
    out.push('\n');
}

const HEADER: &str = "time_ns,cwnd,ssthresh,srtt_us,rttvar_us,min_rtt_us,inflight,delivered,bytes_acked,retrans,lost,ca_state,pacing_rate_bps,delivery_rate_bps";

fn client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let cc = a.str("cc");
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = match a.u64("stop", Some(NONE)) {
        NONE => end,
        s => (t0 + s).min(end),
    };
    let bytes = a.u64("bytes", Some(0));
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_path = a.0.get("out").cloned();
    let app_rate = match a.u64("app-rate", Some(0)) {
        0 => None,
        r => Some(r),
    };
    let onoff = match (a.u64("on", Some(0)), a.u64("off", Some(0))) {
        (0, _) => None,
        (on, off) => Some((on, off)),
    };
    let mss = a.u64("mss", Some(1448)).max(1);
    let lowat = a.u64("notsent-lowat", Some(65536)).max(1);
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

    let mut written: u64 = 0;
    let mut completed_ns: Option<u64> = None;
    let mut error: Option<String> = None;
    let mut periods: u64 = 0;
    if connected {
        let limit = onoff.is_some() && app_rate.is_none();
        let app = AppSpec { rate_bps: app_rate, onoff, chunk: mss, start, stop, bytes,
                            max_unsent: limit.then_some(lowat) };
        if limit {
            // A backlogged on/off source cannot withdraw what the socket holds at the end of
            // an on period (the simulator does): keep at most `lowat` unsent bytes queued.
            let v = lowat as i32;
            // SAFETY: setsockopt with a valid int.
            unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, &v as *const i32 as *const _, 4) };
        }
        let r = app_write(fd, &app);
        written = r.0;
        periods = r.1;
        error = r.2;
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
                           "bytes_written": written, "completed_ns": completed_ns, "error": error,
                           "app_rate_bps": app_rate, "on_periods": periods})
    );
}

/// What the sending application writes (see docs/emulation.md, "Workloads").
struct AppSpec {
    /// Application rate of payload bytes (None: as fast as the socket takes them).
    rate_bps: Option<u64>,
    /// (on, off) periods in ns.
    onoff: Option<(u64, u64)>,
    /// Bytes per application write of a rate-limited source (one MSS, as the simulator).
    chunk: u64,
    start: u64,
    stop: u64,
    /// Total bytes (0 = unlimited).
    bytes: u64,
    /// Keep at most this many bytes unsent in the socket (SIOCOUTQNSD) when set.
    max_unsent: Option<u64>,
}

/// Granularity of a rate-limited writer: it wakes at the simulator's write instants
/// (`period_start + k·chunk·8/rate`) when they are at least this far apart, else every TICK and
/// writes every chunk due by then (a burst of at most rate × TICK).
const APP_TICK_NS: u64 = 1_000_000;

/// Write into the non-blocking socket `fd` as `app` says until its stop (or its byte count).
/// Returns (bytes written, on periods begun, error).
fn app_write(fd: i32, app: &AppSpec) -> (u64, u64, Option<String>) {
    let buf = vec![0u8; 1 << 18];
    let mut written: u64 = 0;
    let mut periods: u64 = 0;
    let mut cur_period = u64::MAX;
    let mut period_written: u64 = 0;
    loop {
        let now = mono_ns();
        if now >= app.stop || (app.bytes > 0 && written >= app.bytes) {
            break;
        }
        // the current on period: [p_start, p_end); off until p_next
        let (p_start, p_end, p_idx) = match app.onoff {
            None => (app.start, app.stop, 0),
            Some((on, off)) => {
                let cyc = (on + off).max(1);
                let k = (now - app.start) / cyc;
                (app.start + k * cyc, app.start + k * cyc + on, k)
            }
        };
        if p_idx != cur_period {
            cur_period = p_idx;
            period_written = 0;
            periods += 1;
        }
        if now >= p_end {
            // off: write nothing until the next on period
            let (on, off) = app.onoff.unwrap();
            let _ = on;
            clock::sleep_until((p_end + off).min(app.stop));
            continue;
        }
        let p_end = p_end.min(app.stop);
        let mut want = buf.len() as u64;
        let mut next_wake = p_end;
        if let Some(rate) = app.rate_bps {
            // chunks due at `now`: the k-th (k = 0, 1, ...) is written at p_start + k·chunk·8/rate
            let per = |k: u64| p_start + (k as u128 * app.chunk as u128 * 8_000_000_000 / rate as u128) as u64;
            let k_due = ((now - p_start) as u128 * rate as u128 / (app.chunk as u128 * 8_000_000_000)) as u64 + 1;
            let due = k_due * app.chunk;
            next_wake = per(k_due).max(now + APP_TICK_NS.min(per(k_due + 1) - per(k_due))).min(p_end);
            want = due.saturating_sub(period_written);
            if want == 0 {
                clock::sleep_until(next_wake);
                continue;
            }
            want = want.min(buf.len() as u64);
        }
        if app.bytes > 0 {
            want = want.min(app.bytes - written);
        }
        if let Some(lim) = app.max_unsent {
            // TCP_NOTSENT_LOWAT alone lets the tail skb grow by up to 64 KB past it
            let mut nsd: i32 = 0;
            // SAFETY: ioctl into an int we own.
            unsafe { libc::ioctl(fd, libc::SIOCOUTQNSD, &mut nsd) };
            want = want.min(lim.saturating_sub(nsd.max(0) as u64));
            if want == 0 {
                wait_fd(fd, libc::POLLOUT, next_wake.max(now + 1));
                continue;
            }
        }
        // SAFETY: sending from our buffer on our socket.
        let r = unsafe { libc::send(fd, buf.as_ptr() as *const _, want as usize, libc::MSG_NOSIGNAL) };
        if r > 0 {
            written += r as u64;
            period_written += r as u64;
            if app.rate_bps.is_some() && r as u64 == want {
                continue; // caught up; the next pass sleeps until the next instant
            }
        } else if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EAGAIN) && e.raw_os_error() != Some(libc::EINTR) {
                return (written, periods, Some(format!("send: {e}")));
            }
        }
        // socket full: wait for room (or the end of the on period)
        wait_fd(fd, libc::POLLOUT, next_wake.max(now + 1));
    }
    (written, periods, None)
}

/// `udp-server --port P [--t0 T0] [--end E]`: count the datagrams of a UDP CBR flow.
fn udp_server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        die(1, &errno_msg("socket"));
    }
    let sz: i32 = 8 << 20;
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &sz as *const i32 as *const _, 4) };
    let sa = sockaddr(0, port);
    if unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    set_nonblocking(fd);
    println!("listening");
    std::io::stdout().flush().ok();
    let (mut pkts, mut bytes) = (0u64, 0u64);
    let mut buf = vec![0u8; 65536];
    while mono_ns() < end {
        if !wait_fd(fd, libc::POLLIN, end) {
            continue;
        }
        loop {
            let r = unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut _, buf.len(), 0) };
            if r < 0 {
                break;
            }
            pkts += 1;
            bytes += r as u64;
        }
    }
    println!("{}", serde_json::json!({"datagrams_received": pkts, "bytes_received": bytes}));
}

/// `udp-client --dst ADDR --port P --rate BPS [--size IP_BYTES] --t0 T0 [--start S] [--end E]
/// [--stop S2]`: constant bit rate of IP bytes, datagram k sent at start + k·size·8/rate
/// (absolute sleeps, no drift; a late wake-up sends every datagram already due at once).
fn udp_client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let rate = a.u64("rate", None).max(1);
    let size = a.u64("size", Some(1500)).clamp(29, 1500);
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = match a.u64("stop", Some(NONE)) {
        NONE => end,
        s => (t0 + s).min(end),
    };
    let spin = a.u64("spin", Some(0));
    clock::set_timer_slack(1);
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        die(1, &errno_msg("socket"));
    }
    let sz: i32 = 4 << 20;
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sz as *const i32 as *const _, 4) };
    let sa = sockaddr(u32::from(dst), port);
    if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("connect"));
    }
    let payload = vec![0u8; (size - 28) as usize];
    let at = |k: u64| start + (k as u128 * size as u128 * 8_000_000_000 / rate as u128) as u64;
    let (mut k, mut sent, mut errors) = (0u64, 0u64, 0u64);
    let mut late: Vec<u32> = Vec::with_capacity(1 << 16);
    let mut error: Option<String> = None;
    loop {
        let t = at(k);
        if t >= stop {
            break;
        }
        if spin > 0 { clock::sleep_spin_until(t, spin) } else { clock::sleep_until(t) }
        let now = mono_ns();
        if now >= stop {
            break;
        }
        late.push((now.saturating_sub(t)).min(u32::MAX as u64) as u32);
        // every datagram due by now (one normally; several after a late wake-up)
        while at(k) <= now && at(k) < stop {
            // SAFETY: sending our buffer on our connected socket.
            let r = unsafe { libc::send(fd, payload.as_ptr() as *const _, payload.len(), 0) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                errors += 1;
                if !matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED)) {
                    error = Some(format!("send: {e}"));
                }
            } else {
                sent += 1;
            }
            k += 1;
        }
        if error.is_some() {
            break;
        }
    }
    late.sort_unstable();
    let q = |p: f64| late.get(((late.len().max(1) - 1) as f64 * p) as usize).copied().unwrap_or(0);
    println!(
        "{}",
        serde_json::json!({"udp": true, "connected": sent > 0 || stop <= start, "datagrams_sent": sent,
                           "ip_bytes_sent": sent * size, "send_errors": errors, "error": error,
                           "send_late_ns": {"p50": q(0.5), "p99": q(0.99), "max": q(1.0)}})
    );
}

/// `server --multi 1 ...`: accept any number of connections (short-flow arrivals), read and
/// discard from all of them until `end`.
fn multi_server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let lfd = listen_on(port, 1024);
    println!("listening");
    std::io::stdout().flush().ok();
    let (mut received, mut accepted) = (0u64, 0u64);
    let mut buf = vec![0u8; 1 << 18];
    let mut fds: Vec<libc::pollfd> = vec![libc::pollfd { fd: lfd, events: libc::POLLIN, revents: 0 }];
    while mono_ns() < end {
        let ms = ((end - mono_ns()) / 1_000_000).clamp(1, 100) as i32;
        // SAFETY: our pollfd array with its length.
        if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as _, ms) } <= 0 {
            continue;
        }
        let mut i = 1;
        while i < fds.len() {
            if fds[i].revents != 0 {
                let r = unsafe { libc::read(fds[i].fd, buf.as_mut_ptr() as *mut _, buf.len()) };
                if r > 0 {
                    received += r as u64;
                } else if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
                    unsafe { libc::close(fds[i].fd) };
                    fds.swap_remove(i);
                    continue;
                }
            }
            i += 1;
        }
        if fds[0].revents != 0 {
            loop {
                let fd = unsafe { libc::accept(lfd, std::ptr::null_mut(), std::ptr::null_mut()) };
                if fd < 0 {
                    break;
                }
                set_nonblocking(fd);
                accepted += 1;
                fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
            }
        }
    }
    println!("{}", serde_json::json!({"bytes_received": received, "accepted": accepted}));
}

struct ShortConn {
    fd: i32,
    size: u64,
    written: u64,
    connected: bool,
}

/// `arrivals-client --dst ADDR --port P --cc NAME --arrivals JSON --seed S --flow F --t0 T0
/// [--start S] [--stop S2] --end E --out FILE`: Poisson short flows, one new connection per
/// arrival (the simulator's arrival times and sizes, workload.rs), each writing its size and
/// closing once every byte is acknowledged (SIOCOUTQ = 0, checked every 100 µs: the
/// completion-time granularity). FILE gets one CSV row per connection, in arrival order:
/// `i,size_bytes,start_ns,completed_ns,acked_bytes,retrans_pkts` (completed empty = not
/// completed by the end).
fn arrivals_client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let cc = a.str("cc");
    let cfg: emu::workload::ArrivalsConfig =
        serde_json::from_str(&a.str("arrivals")).unwrap_or_else(|e| die(2, &format!("--arrivals: {e}")));
    let seed = a.u64("seed", Some(0));
    let flow = a.u64("flow", None) as u32;
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = match a.u64("stop", Some(NONE)) {
        NONE => end,
        s => (t0 + s).min(end),
    };
    let out_path = a.str("out");
    clock::set_timer_slack(1);
    let mut gen = emu::workload::Arrivals::new(&cfg, seed, flow);
    let mut next = Some(start + gen.next_gap()).filter(|&t| t < end);
    let sa = sockaddr(u32::from(dst), port);
    let buf = vec![0u8; 1 << 18];
    let mut open: Vec<(usize, ShortConn)> = Vec::new();
    // (size, start, completed, acked, retrans)
    let mut log: Vec<(u64, u64, Option<u64>, u64, u64)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    let finish = |c: &ShortConn, done: Option<u64>, log: &mut Vec<(u64, u64, Option<u64>, u64, u64)>, i: usize| {
        let mut info = [0u8; 512];
        let mut len: libc::socklen_t = info.len() as _;
        // SAFETY: getsockopt into our buffer.
        let ok = unsafe { libc::getsockopt(c.fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) } == 0 && len >= 128;
        // tcpi_bytes_acked counts the SYN too
        let acked = if ok { u64::from_ne_bytes(info[120..128].try_into().unwrap()).saturating_sub(1).min(c.size) } else { 0 };
        let retrans = if ok { u32::from_ne_bytes(info[100..104].try_into().unwrap()) as u64 } else { 0 };
        log[i].2 = done;
        log[i].3 = acked;
        log[i].4 = retrans;
        unsafe { libc::close(c.fd) };
    };
    loop {
        let now = mono_ns();
        if now >= end {
            break;
        }
        while let Some(t) = next.filter(|&t| t <= now) {
            let size = gen.next_size();
            let n = t + gen.next_gap();
            next = Some(n).filter(|&n| n < stop);
            // SAFETY: plain socket calls on an fd we own.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0) };
            if fd < 0 {
                errors.push(errno_msg("socket"));
                continue;
            }
            let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as u32) };
            if r != 0 {
                die(3, &format!("TCP_CONGESTION {cc}: {}", std::io::Error::last_os_error()));
            }
            unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) };
            log.push((size, t - t0, None, 0, 0));
            open.push((log.len() - 1, ShortConn { fd, size, written: 0, connected: false }));
        }
        // progress every open connection
        let mut j = 0;
        while j < open.len() {
            let (i, c) = &mut open[j];
            let mut remove = false;
            if c.written < c.size {
                let want = (c.size - c.written).min(buf.len() as u64) as usize;
                let r = unsafe { libc::send(c.fd, buf.as_ptr() as *const _, want, libc::MSG_NOSIGNAL) };
                if r > 0 {
                    c.written += r as u64;
                    c.connected = true;
                } else if r < 0 {
                    let e = std::io::Error::last_os_error();
                    if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ENOTCONN)) {
                        errors.push(format!("connection {i}: send: {e}"));
                        remove = true;
                    }
                }
            } else {
                let mut outq: i32 = 0;
                unsafe { libc::ioctl(c.fd, libc::TIOCOUTQ, &mut outq) };
                if outq == 0 {
                    let done = mono_ns() - t0;
                    finish(c, Some(done), &mut log, *i);
                    open.swap_remove(j);
                    continue;
                }
            }
            if remove {
                finish(c, None, &mut log, *i);
                open.swap_remove(j);
                continue;
            }
            j += 1;
        }
        // wait: for socket room, the next arrival, or (with connections awaiting their last
        // ACK) 100 µs
        pfds.clear();
        pfds.extend(open.iter().filter(|(_, c)| c.written < c.size).map(|(_, c)| libc::pollfd { fd: c.fd, events: libc::POLLOUT, revents: 0 }));
        let mut until = next.unwrap_or(end).min(end);
        if open.iter().any(|(_, c)| c.written >= c.size) {
            until = until.min(mono_ns() + 100_000);
        }
        let now = mono_ns();
        if until > now {
            let d = until - now;
            let ts = libc::timespec { tv_sec: (d / 1_000_000_000) as _, tv_nsec: (d % 1_000_000_000) as _ };
            // SAFETY: our pollfd array with its length and a valid timespec.
            unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
        }
    }
    for (i, c) in open.drain(..) {
        finish(&c, None, &mut log, i);
    }
    let mut csv = String::from("i,size_bytes,start_ns,completed_ns,acked_bytes,retrans_pkts\n");
    use std::fmt::Write as _;
    for (i, l) in log.iter().enumerate() {
        let _ = writeln!(csv, "{i},{},{},{},{},{}", l.0, l.1, l.2.map_or(String::new(), |c| c.to_string()), l.3, l.4);
    }
    if let Err(e) = std::fs::write(&out_path, csv) {
        die(1, &format!("write {out_path}: {e}"));
    }
    let completed = log.iter().filter(|l| l.2.is_some()).count();
    errors.truncate(5);
    println!(
        "{}",
        serde_json::json!({"cc": cc, "connected": log.is_empty() || completed > 0, "arrivals": log.len(),
                           "completed": completed, "error": if errors.is_empty() { None } else { Some(errors.join("; ")) }})
    );
}

// --- monitor: TCP_INFO of another program's socket through netlink sock_diag (INET_DIAG) ---

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
// include/uapi/linux/inet_diag.h
const INET_DIAG_INFO: u16 = 2;
const INET_DIAG_VEGASINFO: u16 = 3;
const INET_DIAG_CONG: u16 = 4;
const INET_DIAG_BBRINFO: u16 = 16;
/// Every TCP state but LISTEN, TIME_WAIT and CLOSE (bit = 1 << TCP_*; include/net/tcp_states.h).
const DIAG_STATES: u32 = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11);
const DIAG_MSG_LEN: usize = 72; // struct inet_diag_msg

/// One dump of this namespace's TCP sockets; returns (tcp_info, BBR info, CC name) of the
/// socket talking to `peer` with `port` at either end that has acknowledged the most bytes.
fn diag_dump(nl: i32, seq: u32, peer: u32, port: u16, rx: &mut [u8]) -> Option<(Vec<u8>, Option<Vec<u8>>, String)> {
    let mut req = [0u8; 16 + 56];
    req[0..4].copy_from_slice(&(16u32 + 56).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req[8..12].copy_from_slice(&seq.to_ne_bytes());
    req[16] = libc::AF_INET as u8;
    req[17] = libc::IPPROTO_TCP as u8;
    req[18] = (1u8 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1));
    req[20..24].copy_from_slice(&DIAG_STATES.to_ne_bytes());
    // SAFETY: sending our buffer on our netlink socket.
    if unsafe { libc::send(nl, req.as_ptr() as *const _, req.len(), 0) } < 0 {
        return None;
    }
    let mut best: Option<(u64, Vec<u8>, Option<Vec<u8>>, String)> = None;
    loop {
        // SAFETY: receiving into our buffer of its length.
        let n = unsafe { libc::recv(nl, rx.as_mut_ptr() as *mut _, rx.len(), 0) };
        if n <= 0 {
            break;
        }
        let buf = &rx[..n as usize];
        let mut off = 0;
        let mut finished = false;
        while off + 16 <= buf.len() {
            let len = u32::from_ne_bytes(buf[off..off + 4].try_into().unwrap()) as usize;
            let typ = u16::from_ne_bytes(buf[off + 4..off + 6].try_into().unwrap());
            if len < 16 || off + len > buf.len() {
                finished = true;
                break;
            }
            if typ == NLMSG_DONE || typ == NLMSG_ERROR {
                finished = true;
                break;
            }
            let m = &buf[off + 16..off + len];
            if typ == SOCK_DIAG_BY_FAMILY && m.len() >= DIAG_MSG_LEN {
                let sport = u16::from_be_bytes([m[4], m[5]]);
                let dport = u16::from_be_bytes([m[6], m[7]]);
                let dst = u32::from_be_bytes(m[24..28].try_into().unwrap());
                if dst == peer && (sport == port || dport == port) {
                    let (mut info, mut cc, mut name) = (None, None, String::new());
                    let mut a = DIAG_MSG_LEN;
                    while a + 4 <= m.len() {
                        let alen = u16::from_ne_bytes([m[a], m[a + 1]]) as usize;
                        let atyp = u16::from_ne_bytes([m[a + 2], m[a + 3]]);
                        if alen < 4 || a + alen > m.len() {
                            break;
                        }
                        let data = &m[a + 4..a + alen];
                        match atyp {
                            INET_DIAG_INFO => info = Some(data.to_vec()),
                            INET_DIAG_BBRINFO => cc = Some(data.to_vec()),
                            INET_DIAG_CONG => name = String::from_utf8_lossy(data).trim_end_matches('\0').to_string(),
                            _ => {}
                        }
                        a += (alen + 3) & !3;
                    }
                    if let Some(info) = info {
                        let acked = if info.len() >= 128 { u64::from_ne_bytes(info[120..128].try_into().unwrap()) } else { 0 };
                        if best.as_ref().is_none_or(|b| acked >= b.0) {
                            best = Some((acked, info, cc, name));
                        }
                    }
                }
            }
            off += (len + 3) & !3;
        }
        if finished {
            break;
        }
    }
    best.map(|(_, i, c, n)| (i, c, n))
}

/// `monitor --peer ADDR --port P --t0 T0 [--start S] --end E [--interval I] [--out FILE]`:
/// samples, on the experiment's time grid, the TCP_INFO (and BBR's info) of the socket in
/// this namespace that talks to ADDR with port P at either end — the socket of a program we
/// did not write (command schemes). One netlink dump per sample (tens of µs for a few sockets).
fn monitor(a: &Args) {
    let peer: std::net::Ipv4Addr = a.str("peer").parse().unwrap_or_else(|_| die(2, "--peer: not an IPv4 address"));
    let peer = u32::from(peer);
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", None);
    let start = a.u64("start", Some(0));
    let end = t0 + a.u64("end", None);
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_path = a.0.get("out").cloned();
    clock::set_timer_slack(1);
    // SAFETY: a netlink socket we own.
    let nl = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, NETLINK_SOCK_DIAG) };
    if nl < 0 {
        die(1, &errno_msg("netlink socket"));
    }
    // SIGTERM (the driver at the end of the run) stops sampling; the samples are still written.
    // SAFETY: the handler only stores an atomic.
    unsafe { libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t) };
    println!("monitoring");
    std::io::stdout().flush().ok();
    let mut rx = vec![0u8; 1 << 16];
    let mut samples: Vec<(u64, Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let mut cc_name = String::new();
    let mut k = start.div_ceil(interval);
    let mut seq = 1u32;
    loop {
        let t = k * interval;
        if t0 + t > end || MONITOR_STOP.load(Ordering::Relaxed) {
            break;
        }
        clock::sleep_until(t0 + t);
        if MONITOR_STOP.load(Ordering::Relaxed) {
            break;
        }
        if let Some((info, cc, name)) = diag_dump(nl, seq, peer, port, &mut rx) {
            if !name.is_empty() {
                cc_name = name;
            }
            samples.push((t, info, cc));
        }
        seq = seq.wrapping_add(1);
        k += 1;
    }
    let bbr = samples.iter().any(|s| s.2.is_some());
    let mut out = String::with_capacity(256 * samples.len() + 256);
    out.push_str(HEADER);
    if bbr {
        out.push_str(",cc_btl_bw,cc_min_rtt_us,cc_pacing_gain,cc_cwnd_gain");
    }
    out.push('\n');
    for (t, info, cc) in &samples {
        format_info(info, *t, bbr, cc.as_deref(), &mut out);
    }
    if let Some(p) = out_path {
        if let Err(e) = std::fs::write(&p, out) {
            die(1, &format!("write {p}: {e}"));
        }
    }
    println!("{}", serde_json::json!({"cc": cc_name, "connected": !samples.is_empty(), "samples": samples.len(), "monitor": true}));
}

static MONITOR_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    MONITOR_STOP.store(true, Ordering::Relaxed);
}

/// `launch --at ABS_NS [--run ID] -- PROGRAM ARGS...`: sleep until CLOCK_MONOTONIC time ABS_NS,
/// then exec PROGRAM (command schemes start at the flow's start without launch latency).
fn launch(v: &[String]) -> ! {
    let sep = v.iter().position(|x| x == "--").unwrap_or_else(|| die(2, "launch: missing -- PROGRAM"));
    let a = Args::parse(&v[..sep]);
    let at = a.u64("at", None);
    let argv: Vec<std::ffi::CString> = v[sep + 1..]
        .iter()
        .map(|x| std::ffi::CString::new(x.as_str()).unwrap_or_else(|_| die(2, "launch: NUL in argument")))
        .collect();
    if argv.is_empty() {
        die(2, "launch: missing PROGRAM");
    }
    clock::sleep_until(at);
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated argv of valid C strings.
    unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
    die(127, &errno_msg(&format!("exec {}", v[sep + 1])))
}

fn main() {
    clock::die_with_parent(libc::SIGTERM);
    let v: Vec<String> = std::env::args().skip(1).collect();
    if v.first().map(String::as_str) == Some("launch") {
        launch(&v[1..]);
    }
    let a = Args::parse(v.get(1..).unwrap_or(&[]));
    if let Some(n) = a.0.get("nice") {
        clock::prioritise(n.parse().unwrap_or_else(|_| die(2, "--nice: not an integer")));
    }
    match v.first().map(String::as_str) {
        Some("server") if a.0.get("multi").map(String::as_str) == Some("1") => multi_server(&a),
        Some("server") => server(&a),
        Some("client") => client(&a),
        Some("monitor") => monitor(&a),
        Some("udp-server") => udp_server(&a),
        Some("arrivals-client") => arrivals_client(&a),
        Some("udp-client") => udp_client(&a),
        _ => die(2, "usage: ccbench-agent server|client|monitor --key value ... | launch --at T -- PROGRAM ..."),
    }
}
