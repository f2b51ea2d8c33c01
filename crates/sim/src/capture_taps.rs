//! The pcapng capture's taps on the packet path (a child module of `engine.rs`): a packet
//! entering a link (and leaving its host at hop 0) and leaving one (reaching its host at the
//! last hop). Cold: only runs with a capture set ([`Sim::set_capture`], crate::capture).

use netmodel::PktMeta;

use super::{Endpoint, Packet, Seg, Sim, ACK_BIT, HOP_MASK, IDX_MASK};
use crate::capture::{Capture, Wire};

impl Sim {
    /// Capture: packet `meta` is about to enter link `l` (leaving its host when at hop 0).
    #[cold]
    #[inline(never)]
    pub(super) fn capture_enter(&mut self, l: u32, meta: PktMeta) {
        let Some(mut cap) = self.capture.take() else { return };
        let (slot, ack, p) = self.captured(meta);
        if !cap.knows(meta.flow) {
            let cfg = match self.conns[meta.flow as usize].as_deref().map(|c| &c.ep) {
                Some(Endpoint::Tcp { sender, .. }) => Some(sender.tcp_config().clone()),
                _ => None,
            };
            cap.add_conn(meta.flow, p.flow, cfg.as_ref());
        }
        if meta.id & HOP_MASK == 0 {
            cap.on_host_send(slot, meta.flow, ack);
            let (src, dst) = cap.host_points(p.flow);
            self.capture_write(&mut cap, if ack { dst } else { src }, slot, meta, &p);
        }
        if let (Some(pt), _) = cap.link_points(l) {
            self.capture_write(&mut cap, pt, slot, meta, &p);
        }
        self.capture = Some(cap);
    }

    /// Capture: packet `meta` just left link `l` (reaching its host when `l` is its last).
    #[cold]
    #[inline(never)]
    pub(super) fn capture_exit(&mut self, l: u32, meta: PktMeta) {
        let Some(mut cap) = self.capture.take() else { return };
        let (slot, ack, p) = self.captured(meta);
        if cap.knows(meta.flow) {
            if let (_, Some(pt)) = cap.link_points(l) {
                self.capture_write(&mut cap, pt, slot, meta, &p);
            }
            if self.to_host(meta) {
                let (src, dst) = cap.host_points(p.flow);
                self.capture_write(&mut cap, if ack { src } else { dst }, slot, meta, &p);
                if ack {
                    cap.on_ack_received(meta.flow, p.sent_ns);
                }
            }
        }
        self.capture = Some(cap);
    }

    /// Packet `meta`'s slab slot, whether it is an acknowledgement, and its slab entry.
    fn captured(&self, meta: PktMeta) -> (u32, bool, Packet) {
        let slot = meta.id & IDX_MASK;
        (slot, meta.id & ACK_BIT != 0, self.pkts.items[slot as usize])
    }

    fn capture_write(&self, cap: &mut Capture, point: u32, slot: u32, meta: PktMeta, p: &Packet) {
        let wire = match &p.seg {
            Seg::Data(d) => Wire::Data(d),
            Seg::Ack(a) => Wire::Ack(a),
            Seg::Udp | Seg::DgramData(_) => Wire::Udp,
            Seg::DgramAck(_) | Seg::Probe { echo: true, .. } => Wire::UdpReply,
            Seg::Probe { .. } => Wire::Udp,
        };
        cap.record(point, self.now, slot, meta.flow, wire, p.size, p.sent_ns, meta.ecn);
    }
}
