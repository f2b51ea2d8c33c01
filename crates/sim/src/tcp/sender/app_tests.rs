//! Unit tests of the application model of the sender (`new_app_driven`, `app_write`,
//! `app_pause`): what is sent, app-limited rate samples and the restart after idle.

use super::*;
use crate::cc::reno::Reno;
use crate::tcp::{AckSeg, DataSeg};

const MSS: u64 = 1448;
const MS: u64 = 1_000_000;

/// App-driven sender after a handshake with the given RTT (SYN at 0, SYN-ACK at `rtt`).
fn established_app(rtt: u64) -> TcpSender {
    let cfg = TcpConfig { tlp: false, ..Default::default() };
    let mut s = TcpSender::new_app_driven(&cfg, Box::new(Reno::new()));
    s.open(0);
    assert!(s.poll_transmit(0).unwrap().syn);
    s.on_ack(rtt, &AckSeg { syn: true, tsecr_ns: 0, rwnd: 1 << 30, ..Default::default() });
    s
}

fn send_all(s: &mut TcpSender, now: u64) -> Vec<DataSeg> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

fn ack(a: u64, tsecr: u64) -> AckSeg {
    AckSeg { ack: a, tsecr_ns: tsecr, rwnd: 1 << 30, ..Default::default() }
}

#[test]
fn sends_only_what_the_application_wrote() {
    let mut s = established_app(10 * MS);
    assert!(send_all(&mut s, 10 * MS).is_empty(), "nothing written yet");
    assert!(s.next_timer().is_none());
    s.app_write(10 * MS, 3 * MSS + 100);
    let segs = send_all(&mut s, 10 * MS);
    // No Nagle: the 100-byte tail goes out at once.
    assert_eq!(segs.iter().map(|d| d.len).collect::<Vec<_>>(), vec![1448, 1448, 1448, 100]);
    assert_eq!(s.app_unsent(), 0);
    assert!(s.next_timer().is_some(), "RTO armed for the data in flight");
    s.on_ack(20 * MS, &ack(3 * MSS + 100, 10 * MS));
    assert!(s.next_timer().is_none(), "idle: everything acknowledged");
    assert!(s.completed_at().is_none(), "an app-driven flow never completes");
}

#[test]
fn writes_below_cwnd_mark_rate_samples_app_limited() {
    let mut s = established_app(10 * MS);
    // 2 packets per RTT with a window of 10: the write finds the queue empty and cwnd room.
    let mut t = 10 * MS;
    let mut acked = 0;
    for _ in 0..5 {
        s.app_write(t, 2 * MSS);
        assert!(s.sock().app_limited != 0, "tcp_rate_check_app_limited marks the write");
        assert_eq!(send_all(&mut s, t).len(), 2);
        acked += 2 * MSS;
        t += 10 * MS;
        s.on_ack(t, &ack(acked, t - 10 * MS));
        assert!(s.rate_app_limited, "delivery-rate sample flagged app-limited");
    }
    // A bulk (infinite) sender: its first write finds the queue empty, so the first flight is
    // marked (as Linux's first tcp_sendmsg_locked after connect); after that it never is.
    let cfg = TcpConfig { tlp: false, ..Default::default() };
    let mut b = TcpSender::new(&cfg, Box::new(Reno::new()), None);
    b.open(0);
    b.poll_transmit(0);
    b.on_ack(10 * MS, &AckSeg { syn: true, rwnd: 1 << 30, ..Default::default() });
    assert_ne!(b.sock().app_limited, 0, "the first write marks");
    assert_eq!(send_all(&mut b, 10 * MS).len(), 10);
    b.on_ack(20 * MS, &ack(10 * MSS, 10 * MS));
    assert!(b.rate_app_limited, "a sample of the first flight");
    assert_eq!(b.sock().app_limited, 0, "cleared once the marked flight is delivered");
    assert_eq!(send_all(&mut b, 20 * MS).len(), 20);
    b.on_ack(30 * MS, &ack(30 * MSS, 20 * MS));
    assert_eq!(b.sock().app_limited, 0);
    assert!(!b.rate_app_limited, "the second flight is not app-limited");
}

#[test]
fn idle_longer_than_rto_restarts_the_window() {
    let mut s = established_app(10 * MS);
    // Unlimited backlog for a while: cwnd grows in slow start.
    s.app_write(10 * MS, u64::MAX);
    let mut t = 10 * MS;
    let mut acked = 0;
    for _ in 0..4 {
        let n = send_all(&mut s, t).len() as u64;
        t += 10 * MS;
        acked += n * MSS;
        s.on_ack(t, &ack(acked, t - 10 * MS));
    }
    let grown = s.sock().cwnd;
    assert!(grown >= 40, "cwnd {grown}");
    // Off: the application withdraws what was not sent; what is in flight gets ACKed.
    s.app_pause(t);
    assert_eq!(s.app_unsent(), 0);
    let in_flight = s.bytes_sent() - acked;
    assert!(send_all(&mut s, t).is_empty());
    t += 10 * MS;
    s.on_ack(t, &ack(acked + in_flight, t - 10 * MS));
    assert!(s.next_timer().is_none());
    // Idle 1 s (> RTO = 210 ms), then on again: the first transmission restarts the window
    // at min(IW, cwnd) after halving once per RTO idle (tcp_cwnd_restart).
    t += 1000 * MS;
    s.app_write(t, u64::MAX);
    let burst = send_all(&mut s, t).len();
    assert_eq!(s.sock().cwnd, 10);
    assert_eq!(burst, 10);
}

#[test]
fn idle_restart_can_be_switched_off() {
    let cfg = TcpConfig { tlp: false, slow_start_after_idle: false, ..Default::default() };
    let mut s = TcpSender::new_app_driven(&cfg, Box::new(Reno::new()));
    s.open(0);
    s.poll_transmit(0);
    s.on_ack(10 * MS, &AckSeg { syn: true, rwnd: 1 << 30, ..Default::default() });
    s.app_write(10 * MS, 30 * MSS);
    let mut t = 10 * MS;
    let mut acked = 0;
    while acked < 30 * MSS {
        let n = send_all(&mut s, t).len() as u64;
        t += 10 * MS;
        acked += n * MSS;
        s.on_ack(t, &ack(acked, t - 10 * MS));
    }
    let cwnd = s.sock().cwnd;
    assert!(cwnd > 10);
    t += 1000 * MS;
    s.app_write(t, 100 * MSS);
    send_all(&mut s, t);
    assert_eq!(s.sock().cwnd, cwnd);
}

#[test]
fn each_write_ends_with_a_psh_segment() {
    // tcp_push at the end of tcp_sendmsg_locked marks the write's last segment; a write that
    // appends to an unsent tail moves the mark to its own end.
    let mut s = established_app(10 * MS);
    s.app_write(10 * MS, 3 * MSS);
    s.app_write(10 * MS, 2 * MSS + 100);
    let segs = send_all(&mut s, 10 * MS);
    let psh: Vec<bool> = segs.iter().map(|d| d.psh).collect();
    assert_eq!(segs.iter().map(|d| d.len).collect::<Vec<_>>(), vec![1448, 1448, 1448, 1448, 1448, 100]);
    // The second write appended to the first one's unsent tail skb: one mark, at its end.
    assert_eq!(psh, vec![false, false, false, false, false, true]);
    // Written after the first was sent: each write's last segment carries PSH.
    s.on_ack(20 * MS, &ack(5 * MSS + 100, 10 * MS));
    s.app_write(20 * MS, 2 * MSS);
    let a: Vec<bool> = send_all(&mut s, 20 * MS).iter().map(|d| d.psh).collect();
    s.app_write(20 * MS, MSS);
    let b: Vec<bool> = send_all(&mut s, 20 * MS).iter().map(|d| d.psh).collect();
    assert_eq!((a, b), (vec![false, true], vec![true]));
}

#[test]
fn a_backlogged_writer_marks_psh_at_the_end_of_each_write() {
    // A bulk sender writes until its send buffer is full (SOCK_NOSPACE), then again whenever an
    // ACK frees a third of it (sndbuf.rs): the segments ending those writes, and only they,
    // carry PSH.
    let cfg = TcpConfig { tlp: false, wmem: [4096, 16384, 16384], ..Default::default() };
    let mut s = TcpSender::new(&cfg, Box::new(Reno::new()), None);
    s.open(0);
    assert!(s.poll_transmit(0).unwrap().syn);
    let mut write_ends = vec![];
    let mut ws = s.write_seq();
    s.on_ack(10 * MS, &AckSeg { syn: true, tsecr_ns: 0, rwnd: 1 << 30, ..Default::default() });
    if s.write_seq() > ws {
        write_ends.push(s.write_seq());
    }
    let (mut psh_ends, mut sent_end, mut t) = (vec![], 0, 10 * MS);
    for _ in 0..400 {
        for d in send_all(&mut s, t) {
            if d.psh {
                psh_ends.push(d.end());
            }
            sent_end = sent_end.max(d.end());
        }
        t += MS;
        ws = s.write_seq();
        let una = s.sock().snd_una;
        s.on_ack(t, &ack((una + 2 * MSS).min(sent_end), t - 10 * MS));
        if s.write_seq() > ws {
            write_ends.push(s.write_seq());
        }
    }
    let sent: Vec<u64> = write_ends.iter().copied().filter(|&e| e <= sent_end).collect();
    assert!(sent.len() >= 3, "writes {write_ends:?}");
    assert!(sent_end > 50 * MSS);
    assert_eq!(psh_ends, sent);
}
