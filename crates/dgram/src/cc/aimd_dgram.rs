//! `aimd-dgram`: a **test scheme** of the datagram transport, not a published algorithm — a
//! window that grows by one packet per round trip and shrinks by `beta` on loss, at most once
//! per round trip (the packets in flight when it shrank may still be reported lost without a
//! second cut), as TCP Reno's congestion avoidance does (RFC 5681 §3.1) but without slow
//! start, retransmission or pacing. It is what the transport's own tests use to see a scheme
//! react to loss on both backends.

use super::{Acked, Control, DgramCc, Lost, ParamInfo, SchemeInfo};

pub struct AimdDgram {
    cwnd: f64,
    beta: f64,
    /// Packets sent before this sequence number belong to the round trip that last cut.
    recovery_until: u64,
    next_seq: u64,
    losses: u64,
}

/// Datagram bytes per packet assumed for the window's packet arithmetic (1500-byte IP packets).
const PKT: f64 = 1472.0;

impl DgramCc for AimdDgram {
    fn name(&self) -> &'static str {
        "aimd-dgram"
    }
    fn on_send(&mut self, _now: u64, seq: u64, _bytes: u32, _inflight: u64) {
        self.next_seq = seq + 1;
    }
    fn on_ack(&mut self, a: &Acked) {
        // one packet per window of acknowledged packets
        self.cwnd += PKT * a.bytes as f64 / self.cwnd;
    }
    fn on_loss(&mut self, l: &Lost) {
        self.losses += 1;
        if l.seq >= self.recovery_until {
            self.cwnd = (self.cwnd * self.beta).max(2.0 * PKT);
            self.recovery_until = self.next_seq;
        }
    }
    fn control(&self) -> Control {
        Control { rate_bps: None, cwnd_bytes: Some(self.cwnd as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd / PKT));
        out.push(("losses", self.losses as f64));
    }
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "aimd-dgram",
    description: "test scheme: additive-increase multiplicative-decrease window on loss (the transport's tests)",
    source: "ccbench (after RFC 5681 §3.1 congestion avoidance; not a published datagram scheme)",
    params: &[
        ParamInfo { name: "init-cwnd", default: 10.0, doc: "initial window, packets" },
        ParamInfo { name: "beta", default: 0.5, doc: "window kept after a loss (fraction)" },
    ],
    make: |p, _seed| {
        Ok(Box::new(AimdDgram {
            cwnd: p.float("init-cwnd", 10.0, 1.0, 1e6)? * PKT,
            beta: p.float("beta", 0.5, 0.05, 0.99)?,
            recovery_until: 0,
            next_seq: 0,
            losses: 0,
        }))
    },
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_per_round_trip_and_halves_once_per_round_trip() {
        let mut c = super::super::make("aimd-dgram", &serde_json::Value::Null, 0).unwrap();
        let w0 = c.control().cwnd_bytes.unwrap();
        for s in 0..10 {
            c.on_send(0, s, 1472, 0);
        }
        for s in 0..10 {
            c.on_ack(&Acked { now_ns: 1, seq: s, bytes: 1472, sent_ns: 0, recv_ns: 0, rtt_ns: 1, delivered_bytes: 0, inflight_bytes: 0 });
        }
        let w1 = c.control().cwnd_bytes.unwrap();
        assert!(w1 > w0 && w1 - w0 < 1472 + 100, "{w0} -> {w1}");
        let lost = |seq| Lost { now_ns: 2, seq, bytes: 1472, sent_ns: 0, inflight_bytes: 0 };
        for s in 10..20 {
            c.on_send(1, s, 1472, 0);
        }
        c.on_loss(&lost(12));
        let w2 = c.control().cwnd_bytes.unwrap();
        assert_eq!(w2, w1 / 2);
        c.on_loss(&lost(13)); // same round trip: no second cut
        assert_eq!(c.control().cwnd_bytes.unwrap(), w2);
        c.on_send(2, 20, 1472, 0);
        c.on_loss(&lost(20));
        assert!(c.control().cwnd_bytes.unwrap() < w2);
    }
}
