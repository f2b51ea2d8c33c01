//! Latency-probe roles (the simulator's `probe` scheme, crates/sim/src/probe.rs): a UDP echo
//! pair. `probe-client` sends one datagram of `size` IP bytes every `interval` (its sequence
//! number in the first 4 payload bytes) and times each echo; `probe-server` sends every
//! datagram straight back to where it came from. The client writes the `probes` table
//! (netmodel::records::probes) into DIR: `sent_ns` and `rtt_ns` on the experiment's clock,
//! taken around the send and the receive calls (ppoll with a nanosecond timeout and 1-ns timer
//! slack: a probe leaves on time, an echo is read as it arrives). Flent's UDP ping does the
//! same from user space (Høiland-Jørgensen et al., "Flent", VALUETOOLS 2017, §3).

use netmodel::records::{probes_table, ProbeLog};

use super::socket::{set_nonblocking, sockaddr, udp_listen, udp_socket, wait_fd};
use super::{die, errno_msg, stop_time, write_out, Args, FOREVER};
use crate::clock::{self, mono_ns};

/// `probe-server --port P [--t0 T0] [--end E]`: echo every datagram until `end`.
pub fn probe_server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let fd = udp_listen(port, None);
    let mut buf = vec![0u8; 65536];
    let mut echoed = 0u64;
    while mono_ns() < end {
        if !wait_fd(fd, libc::POLLIN, end) {
            continue;
        }
        loop {
            // SAFETY: receiving into our buffer; `from` is sized for an IPv4 address.
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut flen = std::mem::size_of_val(&from) as u32;
            let r = unsafe {
                libc::recvfrom(fd, buf.as_mut_ptr() as *mut _, buf.len(), 0, &mut from as *mut _ as *mut libc::sockaddr, &mut flen)
            };
            if r < 0 {
                break;
            }
            // SAFETY: sending the bytes just received back to their sender.
            unsafe { libc::sendto(fd, buf.as_ptr() as *const _, r as usize, 0, &from as *const _ as *const libc::sockaddr, flen) };
            echoed += 1;
        }
    }
    println!("{}", serde_json::json!({"probe_echoes": echoed}));
}

/// Wait until `fd` is readable or the absolute time `until` (ns), whichever comes first.
fn wait_readable(fd: i32, until: u64) -> bool {
    let now = mono_ns();
    if now >= until {
        return false;
    }
    let d = until - now;
    let ts = libc::timespec { tv_sec: (d / 1_000_000_000) as _, tv_nsec: (d % 1_000_000_000) as _ };
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, a valid timeout, no signal mask.
    unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) > 0 }
}

/// `probe-client --dst ADDR --port P --interval NS --size IP_BYTES --flow F --out DIR
/// --t0 T0 [--start S] [--stop S2] [--end E]`: probes from `start` until `stop`, echoes
/// read until `end`, then the `probes` table into DIR.
pub fn probe_client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let interval = a.u64("interval", None).max(1);
    let size = a.u64("size", Some(64)).clamp(32, 65_535) as usize;
    let flow = a.u64("flow", None) as u32;
    let out = a.str("out");
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = stop_time(a, t0, end);
    clock::set_timer_slack(1);
    let fd = udp_socket();
    let sa = sockaddr(u32::from(dst), port);
    // SAFETY: connecting our socket to a valid address.
    if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("connect"));
    }
    set_nonblocking(fd);
    let mut payload = vec![0u8; size - 28];
    let mut buf = vec![0u8; 65536];
    let mut log = ProbeLog::default();
    let (mut next, mut errors) = (start, 0u64);
    clock::sleep_until(start);
    while mono_ns() < end {
        let until = if next < stop { next } else { end };
        if wait_readable(fd, until) {
            loop {
                // SAFETY: receiving into our buffer on our socket.
                let r = unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut _, buf.len(), 0) };
                if r < 4 {
                    break;
                }
                let now = mono_ns();
                let seq = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as u64;
                log.echoed(seq, now.saturating_sub(t0));
            }
        }
        let now = mono_ns();
        if next < stop && now >= next {
            let seq = log.len() as u32;
            payload[..4].copy_from_slice(&seq.to_le_bytes());
            log.sent(mono_ns().saturating_sub(t0));
            // SAFETY: sending our buffer on our connected socket.
            if unsafe { libc::send(fd, payload.as_ptr() as *const _, payload.len(), 0) } < 0 {
                errors += 1;
            }
            next += interval;
        }
    }
    write_out(&out, &probes_table(&[(flow, &log)]));
    let answered = log.rtt_ns.iter().filter(|r| r.is_some()).count();
    println!(
        "{}",
        serde_json::json!({"probe": true, "connected": answered > 0 || log.is_empty(),
                           "probes_sent": log.len(), "probes_answered": answered,
                           "send_errors": errors})
    );
}
