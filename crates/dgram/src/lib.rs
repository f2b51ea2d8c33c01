//! dgram: a congestion-controlled datagram transport beside the TCP endpoint.
//!
//! Pantheon's user-space schemes (PCC, LEDBAT, Sprout, Verus, SCReAM, Indigo, RemyCC, QUIC
//! Cubic) are not TCP window algorithms: they send sequenced datagrams at a rate and/or under
//! a window their algorithm sets, and their receivers acknowledge each packet or report per
//! interval. This crate holds that transport **without I/O**: callers pass the time in
//! (`u64` nanoseconds) and hand packets in and out, so the same code is the simulator's
//! datagram endpoint (virtual time) and the `ccbench-dgram` process that sends real UDP on
//! the kernel backend (wall-clock time).
//!
//! - [`cc`]: the interface every algorithm implements ([`cc::DgramCc`]), its feedback types,
//!   and the registry (`cc::make`, `cc::schemes`): one file per algorithm under `src/cc/`,
//!   each ending with its registration as the TCP algorithms of the simulator do.
//! - [`wire`]: the binary format of data packets and acknowledgements.
//! - [`sender`]: sequencing, pacing, the window, loss detection and the RTT estimate around
//!   one algorithm; [`receiver`]: acknowledgement by the scheme's policy, the receiver half.
//!
//! Docs: docs/datagram.md.

pub mod cc;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use receiver::Receiver;
pub use sender::{Sender, SenderConfig};

/// The seed a flow's algorithm is built with: the experiment's seed and the flow id mixed
/// (splitmix64), the same on both backends.
pub fn flow_seed(seed: u64, flow: u32) -> u64 {
    let mut z = seed ^ (flow as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Datagram bytes of a packet whose IP packet is `ip_bytes` (IPv4 20 + UDP 8 less).
pub fn dgram_bytes(ip_bytes: u32) -> u32 {
    ip_bytes.saturating_sub(28).max(wire::DATA_HDR as u32)
}

#[cfg(test)]
mod loopback_tests {
    //! Sender and receiver over an ideal pipe (fixed one-way delay, no loss), as the
    //! simulator's endpoint and the process connect them: acknowledgements by timer, the
    //! receiver half's feedback reaching the sender, RTT samples without the hold time.
    use super::cc::{AckPolicy, Acked, Control, DgramCc, DgramReceiverCc, Lost};
    use super::*;
    use std::sync::{Arc, Mutex};

    const OWD: u64 = 5_000_000;

    struct Counter {
        next: u64,
        n: u64,
    }

    impl DgramReceiverCc for Counter {
        fn on_packet(&mut self, _now: u64, _seq: u64, _bytes: u32, _sent: u64) {
            self.n += 1;
        }
        fn feedback(&mut self, now: u64) -> Vec<f64> {
            self.next = now + 20_000_000;
            vec![self.n as f64]
        }
        fn next_report_ns(&self) -> Option<u64> {
            Some(self.next)
        }
    }

    #[derive(Default)]
    struct Seen {
        rtts: Vec<u64>,
        feedback: Vec<f64>,
        losses: u64,
    }

    struct Paced(Arc<Mutex<Seen>>);

    impl DgramCc for Paced {
        fn name(&self) -> &'static str {
            "paced"
        }
        fn on_ack(&mut self, a: &Acked) {
            self.0.lock().unwrap().rtts.push(a.rtt_ns);
        }
        fn on_loss(&mut self, _l: &Lost) {
            self.0.lock().unwrap().losses += 1;
        }
        fn on_feedback(&mut self, _now: u64, v: &[f64]) {
            self.0.lock().unwrap().feedback.extend_from_slice(v);
        }
        fn control(&self) -> Control {
            Control { rate_bps: Some(11_776_000.0), cwnd_bytes: None } // 1 ms per 1472 bytes
        }
        fn ack_policy(&self) -> AckPolicy {
            AckPolicy { every_packets: 1000, every_ns: Some(4_000_000) }
        }
        fn receiver(&self) -> Option<Box<dyn DgramReceiverCc>> {
            Some(Box::new(Counter { next: 20_000_000, n: 0 }))
        }
    }

    #[test]
    fn timer_acks_feedback_and_rtt_without_hold_over_a_pipe() {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let cc: Box<dyn DgramCc> = Box::new(Paced(seen.clone()));
        let mut rx = Receiver::for_scheme(0, cc.as_ref());
        let mut tx = Sender::new(SenderConfig::new(0, 1472), cc);
        // events: (time, is_ack, packet or ack) through the pipe; a tiny event loop
        let mut to_rx: Vec<(u64, wire::DataHeader)> = Vec::new();
        let mut to_tx: Vec<(u64, wire::Ack)> = Vec::new();
        tx.start(0);
        let mut now = 0;
        while now < 200_000_000 {
            while let Some(h) = tx.poll_transmit(now) {
                to_rx.push((now + OWD, h));
            }
            for (_, h) in to_rx.iter().filter(|(t, _)| *t <= now) {
                rx.on_data(now, h);
            }
            to_rx.retain(|(t, _)| *t > now);
            while let Some(a) = rx.poll_ack(now) {
                to_tx.push((now + OWD, a));
            }
            for (_, a) in to_tx.iter().filter(|(t, _)| *t <= now) {
                tx.on_ack(now, a);
            }
            to_tx.retain(|(t, _)| *t > now);
            if tx.next_wakeup_ns().is_some_and(|t| t <= now) {
                tx.on_timer(now);
            }
            now += 100_000;
        }
        let s = seen.lock().unwrap();
        assert_eq!(s.losses, 0);
        assert!(s.rtts.len() > 180, "{}", s.rtts.len());
        // every sample is the pipe's 10 ms although packets waited up to 4 ms for their ack
        assert!(s.rtts.iter().all(|&r| r.abs_diff(2 * OWD) <= 100_000), "{:?}", &s.rtts[..5]);
        // the receiver half reported every 20 ms: counts of packets received, growing
        assert!(s.feedback.len() >= 8 && s.feedback.windows(2).all(|w| w[1] >= w[0]), "{:?}", s.feedback);
        assert_eq!(tx.flow_row().srtt_us.round(), 10_000.0);
    }
}
