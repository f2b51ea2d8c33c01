//! `ccbench-dgram`: the datagram transport of crates/dgram (the same sender, receiver and
//! algorithms the simulator runs) over a real UDP socket, one end of one flow, run by the
//! kernel backend inside a host's network namespace (docs/datagram.md).
//!
//! ```text
//! ccbench-dgram receiver --port P --scheme NAME [--params JSON] [--seed S] [--flow F]
//!                        [--t0 T0] [--end E] [--run ID] [--nice N]
//! ccbench-dgram sender   --dst ADDR --port P --scheme NAME [--params JSON] [--seed S]
//!                        [--flow F] [--t0 T0] [--start S] [--stop S2] [--end E]
//!                        [--size IP_BYTES] [--interval I --out DIR] [--run ID] [--nice N]
//! ```
//! Times as `ccbench-agent`'s: `--t0` the absolute CLOCK_MONOTONIC time (ns) of experiment
//! time 0, the others ns relative to it. Both ends keep time as ns since t0 on CLOCK_MONOTONIC
//! (one host: one clock, so the one-way delays the receiver reports are exact); without `--t0`
//! (a Pantheon-style wrapper starts them, examples/wrappers/dgram_wrapper.py) both use
//! CLOCK_MONOTONIC itself, start at once and run until killed. The receiver binds port P, prints `listening`, acknowledges each data packet to its
//! source address as the scheme's policy says, and exits at `end`. The sender sends
//! `--size`-byte IP packets (1500: 1472 datagram bytes) from `start` until `stop` as its
//! scheme allows, waits with `ppoll` for acknowledgements or its next wake-up, and writes its
//! `flows` rows (the sender's state and the scheme's `cc_*` values, every `interval` on the
//! experiment's grid while it sends) into DIR in the column encoding the agents use. The last
//! stdout line of each is a JSON summary. `--seed` is the experiment's: the algorithm's own
//! seed is `dgram::flow_seed(seed, flow)`, as in the simulator.

use std::io::Write;

use crate::agent::socket::{set_nonblocking, sockaddr, udp_send_failure};
use crate::agent::{die, errno_msg, stop_time, write_out, Args, FOREVER};
use crate::clock::{self, mono_ns};
use dgram::wire::{self, Message};
use netmodel::records::FlowSamples;

/// Socket buffer sizes: room for a few hundred milliseconds at a gigabit.
const SOCK_BUF: i32 = 8 << 20;

fn scheme(a: &Args) -> Box<dyn dgram::cc::DgramCc> {
    let name = a.str("scheme");
    let params: serde_json::Value = match a.0.get("params") {
        Some(p) => serde_json::from_str(p).unwrap_or_else(|e| die(2, &format!("--params: not JSON: {e}"))),
        None => serde_json::Value::Null,
    };
    let flow = a.u64("flow", Some(0)) as u32;
    dgram::cc::make(&name, &params, dgram::flow_seed(a.u64("seed", Some(0)), flow)).unwrap_or_else(|e| die(3, &e))
}

fn udp_socket(buf_opt: i32) -> i32 {
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        die(1, &errno_msg("socket"));
    }
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, buf_opt, &SOCK_BUF as *const i32 as *const _, 4) };
    set_nonblocking(fd);
    fd
}

/// Wait until `fd` is readable or the absolute time `until` (ns), at ns resolution.
fn wait_readable(fd: i32, until: u64) {
    let now = mono_ns();
    if now >= until {
        return;
    }
    let d = (until - now).min(100_000_000);
    let ts = libc::timespec { tv_sec: (d / 1_000_000_000) as i64, tv_nsec: (d % 1_000_000_000) as i64 };
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd and a valid timespec.
    unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
}

/// `--end` as an absolute time (`t0 + end`); without it, a day from now (run until killed).
fn end_time(a: &Args, t0: u64) -> u64 {
    match a.0.get("end") {
        Some(_) => t0 + a.u64("end", None),
        None => mono_ns() + FOREVER,
    }
}

fn summary(v: serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

/// Send the acknowledgements the receiver's policy has due at `now`; returns the failed sends.
fn send_acks(fd: i32, rx: &mut dgram::Receiver, peer: Option<&libc::sockaddr_in>, now: u64, out: &mut Vec<u8>) -> u64 {
    let Some(p) = peer else { return 0 };
    let mut errors = 0;
    while let Some(ack) = rx.poll_ack(now) {
        ack.encode(out);
        // SAFETY: sending our buffer to the peer's address.
        let r = unsafe { libc::sendto(fd, out.as_ptr() as *const _, out.len(), 0, p as *const _ as *const libc::sockaddr, std::mem::size_of_val(p) as u32) };
        if r < 0 {
            errors += 1;
        }
    }
    errors
}

/// `receiver`: acknowledge the flow's data packets.
pub fn receiver(a: &Args) {
    let cc = scheme(a);
    let flow = a.u64("flow", Some(0)) as u32;
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", Some(0));
    let end = end_time(a, t0);
    let mut rx = dgram::Receiver::for_scheme(flow, cc.as_ref());
    drop(cc);
    clock::set_timer_slack(1);
    let fd = udp_socket(libc::SO_RCVBUFFORCE);
    let sa = sockaddr(0, port);
    // SAFETY: binding our socket to a valid address.
    if unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    println!("listening");
    std::io::stdout().flush().ok();
    let mut peer: Option<libc::sockaddr_in> = None;
    let (mut bad, mut send_errors) = (0u64, 0u64);
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(wire::MAX_ACK_BYTES);
    loop {
        let now_abs = mono_ns();
        if now_abs >= end {
            break;
        }
        loop {
            // SAFETY: sockaddr_in is plain data; recvfrom into our buffers.
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let r = unsafe { libc::recvfrom(fd, buf.as_mut_ptr() as *mut _, buf.len(), 0, &mut from as *mut _ as *mut libc::sockaddr, &mut len) };
            if r < 0 {
                break;
            }
            match wire::decode(&buf[..r as usize]) {
                Ok(Message::Data(h)) if h.flow == flow => {
                    peer = Some(from);
                    rx.on_data(mono_ns().saturating_sub(t0), &h);
                }
                _ => bad += 1,
            }
            // acknowledge as each datagram is read, not after a burst is drained
            send_errors += send_acks(fd, &mut rx, peer.as_ref(), mono_ns().saturating_sub(t0), &mut out);
        }
        send_errors += send_acks(fd, &mut rx, peer.as_ref(), mono_ns().saturating_sub(t0), &mut out);
        let wake = rx.next_wakeup_ns().map_or(end, |t| (t0 + t).min(end));
        wait_readable(fd, wake);
    }
    summary(serde_json::json!({"dgram": "receiver", "flow": flow, "datagrams_received": rx.received_pkts,
                               "bytes_received": rx.received_bytes, "acks_sent": rx.acks_sent,
                               "undecodable": bad, "send_errors": send_errors}));
}

/// Send every datagram the sender has due now; count failures, keep the first failure's reason.
fn transmit(fd: i32, tx: &mut dgram::Sender, rel: &dyn Fn() -> u64, pkt: &mut Vec<u8>, send_errors: &mut u64, error: &mut Option<String>) {
    while let Some(h) = tx.poll_transmit(rel()) {
        h.encode(pkt);
        // SAFETY: sending our buffer on our connected socket.
        let r = unsafe { libc::send(fd, pkt.as_ptr() as *const _, pkt.len(), 0) };
        if r < 0 {
            *send_errors += 1;
            if error.is_none() {
                *error = udp_send_failure();
            }
        }
    }
}

/// `sender`: send the flow as its scheme allows; record its samples.
pub fn sender(a: &Args) {
    let cc = scheme(a);
    let flow = a.u64("flow", Some(0)) as u32;
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let size = a.u64("size", Some(1500)).clamp(28 + wire::DATA_HDR as u64, 1500) as u32;
    let t0 = a.u64("t0", Some(0));
    let start = t0 + a.u64("start", Some(0));
    let end = end_time(a, t0);
    let stop = stop_time(a, t0, end);
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_dir = a.0.get("out").cloned();
    clock::set_timer_slack(1);
    let fd = udp_socket(libc::SO_SNDBUFFORCE);
    let sa = sockaddr(u32::from(dst), port);
    // SAFETY: connecting our socket to a valid address.
    if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("connect"));
    }
    let mut tx = dgram::Sender::new(dgram::SenderConfig::new(flow, dgram::dgram_bytes(size)), cc);
    let mut samples = FlowSamples::default();
    let mut scratch = Vec::new();
    let rel = || mono_ns().saturating_sub(t0);
    clock::sleep_until(start);
    tx.start(rel());
    // rows on the experiment's grid from the start; none without --out (a wrapper's run)
    let mut next_k = if out_dir.is_some() { (start - t0).div_ceil(interval) } else { u64::MAX / interval };
    let (mut bad, mut send_errors, mut acks) = (0u64, 0u64, 0u64);
    let mut error: Option<String> = None;
    let mut buf = vec![0u8; 65536];
    let mut pkt = Vec::with_capacity(size as usize);
    while mono_ns() < stop {
        loop {
            // SAFETY: recv into our buffer on our socket.
            let r = unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut _, buf.len(), 0) };
            if r < 0 {
                break;
            }
            match wire::decode(&buf[..r as usize]) {
                Ok(Message::Ack(ack)) if ack.flow == flow => {
                    acks += 1;
                    tx.on_ack(rel(), &ack);
                    // clocked by each acknowledgement, as the simulator's sender is: draining a
                    // burst first would show the scheme a flight emptied by the burst
                    transmit(fd, &mut tx, &rel, &mut pkt, &mut send_errors, &mut error);
                }
                _ => bad += 1,
            }
        }
        let now = rel();
        if tx.next_wakeup_ns().is_some_and(|t| t <= now) {
            tx.on_timer(now);
        }
        transmit(fd, &mut tx, &rel, &mut pkt, &mut send_errors, &mut error);
        if error.is_some() {
            break;
        }
        let now = rel();
        while next_k * interval <= now && t0.saturating_add(next_k * interval) < stop {
            scratch.clear();
            tx.cc_vars(&mut scratch);
            samples.push(next_k * interval, flow, &tx.flow_row(), &scratch);
            next_k += 1;
        }
        let wake = [tx.next_wakeup_ns(), Some(next_k * interval)].into_iter().flatten().min().unwrap_or(u64::MAX);
        wait_readable(fd, (t0.saturating_add(wake)).min(stop));
    }
    tx.stop();
    if let Some(d) = out_dir {
        write_out(&d, &samples.table());
    }
    let s = tx.stats();
    summary(serde_json::json!({"dgram": "sender", "scheme": tx.cc().name(), "connected": s.sent_pkts > 0 || stop <= start,
                               "datagrams_sent": s.sent_pkts, "ip_bytes_sent": s.sent_pkts * size as u64,
                               "acks_received": acks, "delivered_pkts": s.delivered_pkts, "lost_pkts": s.lost_pkts,
                               "spurious_losses": s.spurious_losses, "undecodable": bad,
                               "send_errors": send_errors, "error": error}));
}
