//! The `probes` table of latency probes (`scheme: probe`): what a probe flow's sender
//! records, on either backend — when each probe left and how long its echo took.
//!
//! A probe is a small datagram carrying its sequence number; the receiving host sends it
//! straight back (an echo, as Flent's UDP and ICMP pings in its RRUL tests, Høiland-Jørgensen
//! et al., "Flent: The FLExible Network Tester", VALUETOOLS 2017, §3). The round-trip time is
//! the echo's arrival at the sender minus the probe's departure. A lost probe or echo leaves
//! `rtt_ns` null; a late or duplicated echo of an already answered probe is ignored.

use super::columns::{Col, Table, NULL_I64};
use super::schema;

/// One probe flow's probes, in sending order (sequence number = index).
#[derive(Clone, Debug, Default)]
pub struct ProbeLog {
    pub sent_ns: Vec<u64>,
    pub rtt_ns: Vec<Option<u64>>,
}

impl ProbeLog {
    /// A probe leaves now; returns its sequence number.
    pub fn sent(&mut self, now: u64) -> u64 {
        self.sent_ns.push(now);
        self.rtt_ns.push(None);
        (self.sent_ns.len() - 1) as u64
    }

    /// The echo of probe `seq` arrived now (unknown or already answered sequence numbers are
    /// ignored); returns the round-trip time when it counted.
    pub fn echoed(&mut self, seq: u64, now: u64) -> Option<u64> {
        let i = usize::try_from(seq).ok().filter(|&i| i < self.sent_ns.len())?;
        if self.rtt_ns[i].is_some() || now < self.sent_ns[i] {
            return None;
        }
        let rtt = now - self.sent_ns[i];
        self.rtt_ns[i] = Some(rtt);
        Some(rtt)
    }

    pub fn len(&self) -> usize {
        self.sent_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sent_ns.is_empty()
    }
}

/// The `probes` table of the probe flows `(flow id, its log)`.
pub fn probes_table(logs: &[(u32, &ProbeLog)]) -> Table {
    let n: usize = logs.iter().map(|(_, l)| l.len()).sum();
    let (mut flow, mut seq, mut sent, mut rtt) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for &(f, log) in logs {
        for (i, (&s, r)) in log.sent_ns.iter().zip(&log.rtt_ns).enumerate() {
            flow.push(f);
            seq.push(i as u64);
            sent.push(s as i64);
            rtt.push(r.map_or(NULL_I64, |r| r as i64));
        }
    }
    schema::table("probes", schema::PROBES, vec![Col::U32(flow), Col::U64(seq), Col::I64(sent), Col::I64(rtt)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_give_round_trip_times_and_lost_probes_stay_null() {
        let mut log = ProbeLog::default();
        assert_eq!(log.sent(100), 0);
        assert_eq!(log.sent(300), 1);
        assert_eq!(log.sent(500), 2);
        assert_eq!(log.echoed(1, 350), Some(50));
        assert_eq!(log.echoed(1, 360), None); // a duplicate echo counts once
        assert_eq!(log.echoed(0, 420), Some(320)); // echoes may come back out of order
        assert_eq!(log.echoed(7, 600), None); // unknown sequence number
        let t = probes_table(&[(3, &log)]);
        match t.get("rtt_ns").unwrap() {
            Col::I64(v) => assert_eq!(v, &vec![320, 50, NULL_I64]),
            _ => panic!("rtt_ns is i64"),
        }
        match t.get("flow").unwrap() {
            Col::U32(v) => assert_eq!(v, &vec![3, 3, 3]),
            _ => panic!("flow is u32"),
        }
    }
}
