//! The simulator's datagram endpoint: a flow whose resolved `transport` is `dgram` runs the
//! sans-I/O transport of crates/dgram (its `Sender` at the source host, its `Receiver` at the
//! destination) over the same links, queues and recorders as a TCP flow (docs/datagram.md).
//!
//! A child module of `engine` (it extends [`Sim`] with the endpoint's event handlers; the
//! event loop calls them where it calls the TCP endpoint's). Data packets are `Seg::DgramData`
//! carrying their sequence number (the send time is the packet's `sent_ns`, the size its IP
//! size less 28); acknowledgements are `Seg::DgramAck` holding an index into their
//! connection's table of acknowledgements in flight, freed when one arrives or is dropped.
//! Records: each data packet is a `packets` row whose `seq` is the datagram bytes sent before
//! it (as the emulator numbers UDP), acknowledgements are not recorded (as TCP's ACKs); the
//! `flows` rows are the sender's state with the scheme's `vars()` as `cc_*` columns; a flow's
//! `app_bytes` are the datagram bytes delivered.

use super::*;
use ::dgram::wire::{Ack, DataHeader};

pub(super) struct DgramEnd {
    sender: ::dgram::Sender,
    receiver: ::dgram::Receiver,
    /// Acknowledgements in the network, by the index `Seg::DgramAck` holds.
    acks: Vec<Ack>,
    free_acks: Vec<u32>,
}

impl DgramEnd {
    /// The endpoint of resolved flow `f`: packets of `mss + 52` IP bytes (1500 by default, the
    /// TCP flows' full segments), the scheme built from its parameters and the flow's seed.
    pub(super) fn new(f: &FlowConfig, seed: u64, mss: u32) -> Result<Self, String> {
        let err = |e: String| format!("flow {} ({}): {e}", f.id + 1, f.label);
        let cc = ::dgram::cc::make(&f.scheme, &f.params, ::dgram::flow_seed(seed, f.id)).map_err(err)?;
        let receiver = ::dgram::Receiver::for_scheme(f.id, cc.as_ref());
        let cfg = ::dgram::SenderConfig::new(f.id, ::dgram::dgram_bytes(mss + crate::tcp::HDR_BYTES));
        Ok(DgramEnd { sender: ::dgram::Sender::new(cfg, cc), receiver, acks: Vec::new(), free_acks: Vec::new() })
    }

    pub(super) fn start(&mut self, now: u64) {
        self.sender.start(now);
    }

    pub(super) fn stop(&mut self) {
        self.sender.stop();
    }

    /// Datagram bytes that reached the receiver.
    pub(super) fn delivered_bytes(&self) -> u64 {
        self.receiver.received_bytes
    }

    fn store(&mut self, a: Ack) -> u32 {
        match self.free_acks.pop() {
            Some(i) => {
                self.acks[i as usize] = a;
                i
            }
            None => {
                self.acks.push(a);
                (self.acks.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, i: u32) -> Ack {
        self.free_acks.push(i);
        std::mem::take(&mut self.acks[i as usize])
    }
}

impl Sim {
    pub(super) fn dgram_of(&mut self, c: u32) -> Option<&mut DgramEnd> {
        match self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) {
            Some(Endpoint::Dgram(d)) => Some(d),
            _ => None,
        }
    }

    /// Send what the sender allows now, then schedule its next wake-up.
    pub(super) fn flush_dgram_sender(&mut self, c: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let first = self.routes[f as usize].0[0];
        loop {
            let Some(d) = self.dgram_of(c) else { return };
            let Some(h) = d.sender.poll_transmit(now) else { break };
            let size = h.size + UDP_HDR_BYTES;
            self.data_in_net += 1;
            let rec = self.rec.sent(now, f, h.seq * h.size as u64, size, false);
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec, size, seg: Seg::DgramData(h.seq) });
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: c, ecn: netmodel::ECN_NOT_ECT });
        }
        let t = self.dgram_of(c).and_then(|d| d.sender.next_wakeup_ns());
        self.wake(Kind::Sender, c, t);
    }

    /// Send the acknowledgements due now, then schedule the receiver's next wake-up.
    pub(super) fn flush_dgram_receiver(&mut self, c: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let first = self.routes[f as usize].1[0];
        loop {
            let Some(d) = self.dgram_of(c) else { return };
            let Some(a) = d.receiver.poll_ack(now) else { break };
            let size = a.encoded_len() as u32 + UDP_HDR_BYTES;
            let k = d.store(a);
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec: NO_RECORD, size, seg: Seg::DgramAck(k) }) | ACK_BIT;
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: c, ecn: netmodel::ECN_NOT_ECT });
        }
        let t = self.dgram_of(c).and_then(|d| d.receiver.next_wakeup_ns());
        self.wake(Kind::Receiver, c, t);
    }

    /// The sender's wake-up: loss timeouts and the scheme's timer, then sending.
    pub(super) fn on_dgram_sender_timer(&mut self, c: u32) {
        let now = self.now;
        let Some(conn) = self.conns[c as usize].as_deref_mut() else { return };
        let (true, Endpoint::Dgram(d)) = (conn.active, &mut conn.ep) else { return };
        d.sender.on_timer(now);
        self.flush_dgram_sender(c);
    }

    /// Data packet `seq` of connection `c` (sent at `sent_ns`, `size` IP bytes) arrived.
    pub(super) fn on_dgram_data(&mut self, c: u32, seq: u64, sent_ns: u64, size: u32) {
        let now = self.now;
        let Some(d) = self.dgram_of(c) else { return };
        let h = DataHeader { flow: c, seq, sent_ns, size: size - UDP_HDR_BYTES };
        d.receiver.on_data(now, &h);
        self.flush_dgram_receiver(c);
    }

    /// Acknowledgement `k` of connection `c` arrived at the sender.
    pub(super) fn on_dgram_ack(&mut self, c: u32, k: u32) {
        let now = self.now;
        let Some(conn) = self.conns[c as usize].as_deref_mut() else { return };
        let active = conn.active;
        let Endpoint::Dgram(d) = &mut conn.ep else { return };
        let a = d.take(k);
        if active {
            d.sender.on_ack(now, &a);
            self.flush_dgram_sender(c);
        }
    }

    /// Acknowledgement `k` of connection `c` was dropped in the network.
    pub(super) fn dgram_ack_dropped(&mut self, c: u32, k: u32) {
        if let Some(d) = self.dgram_of(c) {
            d.take(k);
        }
    }

    /// The `flows` row of an active datagram flow `f`.
    pub(super) fn dgram_sample(&mut self, f: u32) {
        let now = self.now;
        let Some(conn) = self.conns[f as usize].as_deref() else { return };
        let (true, Endpoint::Dgram(d)) = (conn.active, &conn.ep) else { return };
        self.cc_scratch.clear();
        d.sender.cc_vars(&mut self.cc_scratch);
        self.rec.flows.push(now, f, &d.sender.flow_row(), &self.cc_scratch);
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::from_json;
    use crate::Sim;

    /// One flow over a 50 Mbit/s, 20 ms-RTT dumbbell with a queue of `queue` packets.
    fn exp(scheme: &str, params: &str, queue: u32, dur_ms: u64) -> String {
        let link = |id: u32, src: &str, dst: &str, rate: u64, delay: u64, q: u32| {
            format!(r#"{{"id": {id}, "name": "{src}->{dst}", "src": "{src}", "dst": "{dst}", "rate_bps": {rate},
                "delay_ns": {delay}, "queue": {{"kind": "droptail", "packets": {q}, "bytes": null}}}}"#)
        };
        format!(
            r#"{{"duration_ns": {}, "seed": 3, "nodes": [{{"name": "a"}}, {{"name": "r"}}, {{"name": "b"}}],
            "links": [{}, {}, {}, {}], "bottleneck_links": [1],
            "flows": [{{"id": 0, "label": "f", "scheme": "{scheme}", "transport": "dgram", "params": {params},
                "src": "a", "dst": "b", "start_ns": 0, "path": [0, 1], "rev_path": [2, 3]}}]}}"#,
            dur_ms * 1_000_000,
            link(0, "a", "r", 1_000_000_000, 1_000_000, 1000),
            link(1, "r", "b", 50_000_000, 9_000_000, queue),
            link(2, "b", "r", 1_000_000_000, 9_000_000, 1000),
            link(3, "r", "a", 1_000_000_000, 1_000_000, 1000),
        )
    }

    fn run(json: &str) -> crate::Output {
        let e = from_json(json).unwrap();
        Sim::new(&e).unwrap().finish()
    }

    fn flowstats(out: &crate::Output, col: &str) -> u64 {
        match out.table("flowstats").unwrap().get(col) {
            Some(crate::Col::U64(v)) => v[0],
            _ => panic!("no u64 column {col}"),
        }
    }

    #[test]
    fn fixed_rate_below_the_link_is_delivered_whole() {
        let out = run(&exp("fixed", r#"{"rate-mbps": 20}"#, 100, 2000));
        let sent = flowstats(&out, "sent_bytes");
        let delivered = flowstats(&out, "delivered_bytes");
        // 20 Mbit/s of datagram bytes (1472 of each 1500-byte IP packet) for 2 s
        assert!((sent as f64 - 5e6 * 1500.0 / 1472.0).abs() < 3000.0, "{sent}");
        assert_eq!(flowstats(&out, "dropped_pkts"), 0);
        assert!(sent - delivered < 30 * 1500, "{sent} {delivered}");
        let flows = out.table("flows").unwrap();
        assert!(flows.rows() > 150, "a row per 10 ms");
        assert!(matches!(flows.get("cc_rate_mbps"), Some(crate::Col::F64(v)) if v[0] == 20.0));
    }

    #[test]
    fn fixed_above_the_link_loses_and_aimd_backs_off() {
        let over = run(&exp("fixed", r#"{"rate-mbps": 80}"#, 50, 2000));
        let loss = flowstats(&over, "dropped_pkts") as f64 / flowstats(&over, "sent_pkts") as f64;
        assert!((loss - 0.375).abs() < 0.03, "80 into 50 Mbit/s loses 3/8: {loss}");
        let aimd = run(&exp("aimd-dgram", "null", 50, 4000));
        let loss = flowstats(&aimd, "dropped_pkts") as f64 / flowstats(&aimd, "sent_pkts") as f64;
        let tput = flowstats(&aimd, "delivered_bytes") as f64 * 8.0 / 4.0;
        assert!(loss > 0.0 && loss < 0.02, "{loss}");
        assert!(tput > 35e6 && tput < 50.5e6, "{tput}");
    }

    #[test]
    fn same_seed_same_tables() {
        // PCC Vivace draws its probing order from the seed: the seed's plumbing is exercised
        let bytes = crate::Output::column_bytes;
        let a = run(&exp("pcc-vivace", "null", 30, 2000));
        let b = run(&exp("pcc-vivace", "null", 30, 2000));
        assert!(bytes(&a) == bytes(&b), "same seed, different tables");
        let other = exp("pcc-vivace", "null", 30, 2000).replace(r#""seed": 3"#, r#""seed": 4"#);
        assert!(bytes(&a) != bytes(&run(&other)), "another seed gave the same tables");
    }
}
