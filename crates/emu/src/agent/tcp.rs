//! TCP roles: the receiver (one connection, or any number with `--multi 1`) and the sender
//! (connect at the flow's start with `TCP_CONGESTION`, write as the application says, sample
//! `TCP_INFO` on the experiment's time grid).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::app::{app_write, AppSpec};
use super::control;
use super::socket::{listen_on, set_nonblocking, sockaddr, wait_fd};
use super::tcp_info::{declare_bbr, sample};
use netmodel::records::FlowSamples;
use super::{die, errno_msg, stop_time, write_out, Args, FOREVER};
use crate::clock::{self, mono_ns};

pub fn server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let lfd = listen_on(port, 16);
    listener_cc(a, lfd);
    // `--control 1`: window clamps commanded on stdin (a periodic controller's cwnd, control.rs)
    let clamp = (a.u64("control", Some(0)) == 1).then(control::receiver_commands);
    let (mut applied, mut checked) = (0u64, 0u64);
    println!("listening");
    std::io::stdout().flush().ok();
    let mut received: u64 = 0;
    let mut buf = vec![0u8; 1 << 18];
    let mut fd = -1;
    while mono_ns() < end {
        if let (Some(c), true) = (&clamp, fd >= 0) {
            let now = mono_ns();
            if now >= checked + 2_000_000 {
                control::enforce_clamp(fd, c.load(Ordering::Relaxed), &mut applied);
                checked = now;
            }
        }
        if fd < 0 {
            if wait_fd(lfd, libc::POLLIN, end) {
                fd = unsafe { libc::accept(lfd, std::ptr::null_mut(), std::ptr::null_mut()) };
                if fd >= 0 {
                    set_nonblocking(fd);
                }
            }
            continue;
        }
        if !wait_fd(fd, libc::POLLIN, if clamp.is_some() { end.min(mono_ns() + 2_000_000) } else { end }) {
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
    if fd >= 0 && mono_ns() >= end {
        abort_on_close(fd);
    }
    println!("{}", serde_json::json!({"bytes_received": received}));
}

/// A connection still open when the run ends is reset, not closed with a FIN: the engine has
/// stopped, so a FIN would never be acknowledged and the orphaned socket would retransmit it
/// for minutes, keeping its congestion control referenced (a BPF scheme's struct_ops map
/// then outlives the run, bpf.py).
fn abort_on_close(fd: i32) {
    let l = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt with a valid linger struct.
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_LINGER, &l as *const libc::linger as *const _, std::mem::size_of::<libc::linger>() as u32) };
}

/// `server --cc NAME`: the accepted connections' congestion control (they inherit the
/// listener's). Only the receiving half of a CC acts there (DCTCP's ECE rules).
fn listener_cc(a: &Args, lfd: i32) {
    if let Some(cc) = a.0.get("cc") {
        // SAFETY: setsockopt with the name's bytes and length.
        let r = unsafe { libc::setsockopt(lfd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as u32) };
        if r != 0 {
            die(3, &format!("TCP_CONGESTION {cc} on the listener: {}", std::io::Error::last_os_error()));
        }
    }
}

pub fn client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let cc = a.str("cc");
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = stop_time(a, t0, end);
    let bytes = a.u64("bytes", Some(0));
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_path = a.0.get("out").cloned();
    let flow = a.u64("flow", Some(0)) as u32;
    let app_rate = match a.u64("app-rate", Some(0)) {
        0 => None,
        r => Some(r),
    };
    let onoff = match (a.u64("on", Some(0)), a.u64("off", Some(0))) {
        (0, _) => None,
        (on, off) => Some((on, off)),
    };
    let mss = a.u64("mss", Some(1448)).max(1);
    // a periodic controller (control.rs): interval reports on stdout, commands on stdin
    let control = match (a.u64("control-interval", Some(0)), a.u64("control-rtt", Some(0))) {
        (0, 0) => None,
        (0, k) => Some(control::Interval::Rtt(k as f64 / 1000.0)),
        (ns, _) => Some(control::Interval::Fixed(ns)),
    };
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
    if a.0.get("pacing").map(String::as_str) == Some("fq") {
        // tcp: {pacing: fq}. Any SO_MAX_PACING_RATE other than ~0 switches the socket to TCP's
        // own pacing (sock_setsockopt sets SK_PACING_NEEDED), at sk_pacing_rate =
        // tcp_update_pacing_rate's 200 %/120 % of cwnd/srtt: what the fq qdisc paces at.
        let max: u64 = u64::MAX - 1;
        let r = unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &max as *const u64 as *const _, 8) };
        if r != 0 {
            die(1, &errno_msg("SO_MAX_PACING_RATE"));
        }
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
    let done = Arc::new(AtomicBool::new(false));
    let reporter = match (control, connected) {
        (Some(every), true) => {
            control::sender_commands(fd);
            Some(control::report_intervals(fd, t0, every, done.clone()))
        }
        _ => None,
    };

    // Sampler thread: TCP_INFO on the experiment's time grid until told to stop.
    let sampler = {
        let done = done.clone();
        let first_k = (start - t0).div_ceil(interval);
        std::thread::spawn(move || {
            clock::set_timer_slack(1);
            let mut out = FlowSamples::default();
            if bbr {
                declare_bbr(&mut out);
            }
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
                sample(fd, t, flow, bbr, &mut out);
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
    let samples = sampler.join().unwrap_or_default();
    if let Some(r) = reporter {
        r.join().ok();
    }
    if mono_ns() >= end {
        abort_on_close(fd);
    }
    unsafe { libc::close(fd) };
    if let Some(p) = out_path {
        write_out(&p, &samples.table());
    }
    println!(
        "{}",
        serde_json::json!({"cc": actual_cc, "connected": connected, "connected_ns": connected_ns,
                           "bytes_written": written, "completed_ns": completed_ns, "error": error,
                           "app_rate_bps": app_rate, "on_periods": periods})
    );
}

/// `server --multi 1 ...`: accept any number of connections (short-flow arrivals), read and
/// discard from all of them until `end`.
pub fn multi_server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let lfd = listen_on(port, 1024);
    listener_cc(a, lfd);
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
