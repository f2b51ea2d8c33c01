//! UDP constant-bit-rate roles (the simulator's `udp` scheme).

use super::socket::{sockaddr, udp_listen, udp_send_failure, udp_socket, wait_fd};
use super::{die, errno_msg, stop_time, Args, FOREVER};
use crate::clock::{self, mono_ns};

/// `udp-server --port P [--t0 T0] [--end E]`: count the datagrams of a UDP CBR flow.
pub fn udp_server(a: &Args) {
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(mono_ns()));
    let end = t0 + a.u64("end", Some(FOREVER));
    let fd = udp_listen(port, Some(8 << 20));
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
pub fn udp_client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let rate = a.u64("rate", None).max(1);
    let size = a.u64("size", Some(1500)).clamp(29, 1500);
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = stop_time(a, t0, end);
    let spin = a.u64("spin", Some(0));
    clock::set_timer_slack(1);
    let fd = udp_socket();
    let sz: i32 = 4 << 20;
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
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
                errors += 1;
                error = error.or(udp_send_failure());
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
