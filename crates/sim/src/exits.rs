//! Host noise at link exits (docs/simulator.md, "Host timing noise"): a packet that leaves a
//! link reaches the next node after that node's processing delay ([`crate::noise`]). A child
//! module of the event loop, so that `engine.rs` keeps the loop itself.
//!
//! Two forms. On a link whose packets leave in order ([`netmodel::Link::fifo_exit`]) the link
//! wakes once per packet, at its hand-over ([`Sim::exit_in_order`]); elsewhere each packet's
//! arrival is an event of the link and its hand-over an `Exit` event of the link's exit FIFO
//! ([`Sim::exit_noisy`], [`Sim::on_exit`]).

use netmodel::PktMeta;

use super::{Kind, Sim, ACK_BIT, HOP_MASK, HOP_SHIFT, IDX_MASK};

impl Sim {
    /// Host noise on: a packet left link `l`; the next node takes it after its processing
    /// delay. Arrival at a host is recorded now (the moment it reaches the host, as the
    /// emulator records the write into the host's TUN).
    pub(super) fn exit_noisy(&mut self, l: u32, m: PktMeta) {
        let to_host = self.to_host(m);
        if to_host {
            self.record_delivery(m, self.now);
        }
        let noise = self.noise.as_deref_mut().expect("noise on");
        if noise.push_exit(l, self.now, m, to_host) {
            let t = noise.front(l).expect("just queued");
            self.push(t, Kind::Exit, l);
        }
    }

    /// Host noise on a link whose packets leave in order (`Link::fifo_exit`): the link wakes
    /// once per packet, at its hand-over to the next node, not at its arrival and again at the
    /// hand-over. Its delay is drawn before it arrives ([`Sim::next_hand_over`]); what happens
    /// at the arrival itself is only recorded (a delivery at a host, with the arrival time), so
    /// nothing else in the run sees the difference. Packets due are handed over in order; those
    /// that arrived by now and are not due join the exit FIFO.
    pub(super) fn exit_in_order(&mut self, l: u32) {
        let now = self.now;
        loop {
            let noise = self.noise.as_deref_mut().expect("noise on");
            match noise.queue_front(l) {
                Some((t, m)) if t <= now => {
                    noise.queue_pop(l);
                    self.forward(m, true);
                    continue;
                }
                Some(_) => {
                    self.exits_arrived(l, now);
                    return;
                }
                None => {}
            }
            // The FIFO is empty: a packet due now is handed over at once, without queueing.
            match self.exit_arrival(l, now) {
                Some((h, m)) if h <= now => self.forward(m, true),
                Some(w) => {
                    self.noise.as_deref_mut().expect("noise on").queue_push(l, w);
                    self.exits_arrived(l, now);
                    return;
                }
                None => return,
            }
        }
    }

    /// Packets that reached the end of in-order link `l` by `t` join its exit FIFO.
    pub(super) fn exits_arrived(&mut self, l: u32, t: u64) {
        while let Some(w) = self.exit_arrival(l, t) {
            self.noise.as_deref_mut().expect("noise on").queue_push(l, w);
        }
    }

    /// The next packet that reached the end of in-order link `l` by `t`, with its hand-over
    /// time; its delivery to a host is recorded at its arrival time.
    #[inline]
    pub(super) fn exit_arrival(&mut self, l: u32, t: u64) -> Option<(u64, PktMeta)> {
        let (m, arr) = self.links[l as usize].pop_arrival(t)?;
        let (h, to_host) = match self.noise.as_deref_mut().expect("noise on").take_ahead(l) {
            Some((id, h, to_host)) => {
                debug_assert_eq!(id, m.id);
                (h, to_host)
            }
            None => {
                let to_host = self.to_host(m);
                (self.noise.as_deref_mut().expect("noise on").draw(l, arr, to_host), to_host)
            }
        };
        if to_host {
            self.record_delivery(m, arr);
        }
        Some((h, m))
    }

    /// At the end of `run_until(t)`: deliveries up to `t` on in-order exits are recorded by
    /// then, as when every arrival was an event (the records and the conservation count read
    /// between calls and at the end).
    pub(super) fn exits_reached(&mut self, t: u64) {
        for l in 0..self.links.len() as u32 {
            let in_order = self.noise.as_deref().expect("noise on").exits[l as usize].in_order;
            if in_order && self.links[l as usize].peek_arrival().is_some_and(|(_, a)| a <= t) {
                self.exits_arrived(l, t);
            }
        }
    }

    /// In-order link `l`'s next hand-over: its exit FIFO's front, else that of the next packet
    /// to arrive, drawn now (the draws stay in exit order).
    #[inline(never)]
    pub(super) fn next_hand_over(&mut self, l: u32) -> Option<u64> {
        let front = self.noise.as_deref().expect("noise on").front(l);
        let mut t = front.or_else(|| {
            if let Some(h) = self.noise.as_deref().expect("noise on").ahead(l) {
                return Some(h);
            }
            let (m, arr) = self.links[l as usize].peek_arrival()?;
            let to_host = self.to_host(m);
            let noise = self.noise.as_deref_mut().expect("noise on");
            let h = noise.draw(l, arr, to_host);
            noise.set_ahead(l, m.id, h, to_host);
            Some(h)
        });
        if self.links[l as usize].host_waiting() {
            // TCP Small Queues: the owner also waits for the transmission to complete
            t = match (t, self.links[l as usize].next_event_time()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        t
    }

    /// Whether packet `m`, leaving its current link, reaches its destination host.
    #[inline]
    pub(super) fn to_host(&self, m: PktMeta) -> bool {
        let hop = ((m.id & HOP_MASK) >> HOP_SHIFT) as usize + 1;
        let route = &self.routes[self.conn_flow[m.flow as usize] as usize];
        hop >= if m.id & ACK_BIT != 0 { route.1.len() } else { route.0.len() }
    }

    /// Record the delivery of packet `m` (if it carries data) to its host at `t`.
    pub(super) fn record_delivery(&mut self, m: PktMeta, t: u64) {
        let p = self.pkts.items[(m.id & IDX_MASK) as usize];
        if p.seg.is_data() {
            self.data_in_net -= 1;
            self.rec.delivered(t, p.flow, p.size, p.sent_ns, p.rec);
        }
    }

    /// Link `l`'s exit FIFO hands over every packet due by now.
    pub(super) fn on_exit(&mut self, l: u32) {
        let now = self.now;
        loop {
            let noise = self.noise.as_deref_mut().expect("noise on");
            match noise.queue_front(l) {
                Some((t, m)) if t <= now => {
                    noise.queue_pop(l);
                    self.forward(m, true);
                }
                Some((t, _)) => {
                    self.push(t, Kind::Exit, l);
                    return;
                }
                None => return,
            }
        }
    }
}
