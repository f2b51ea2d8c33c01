//! `tcp_tso_should_defer` (Linux `tcp_output.c`, 6.18): TSO's Nagle test.
//!
//! Linux's TCP sends multi-segment skbs whatever the device (the emulator's TUN has every
//! offload off and still carries two-segment sends, docs/fidelity.md). Before it splits the
//! write queue's head skb to what the windows allow, `tcp_write_xmit` asks whether to wait for
//! the next ACK and send more at once. It does not wait in recovery, after a millisecond
//! without a send, when a whole autosized skb or a third of the window may go, when the head
//! skb fits whole and more data follows it, or when the next ACK is not due within
//! min(srtt/2, 1 ms). Otherwise it waits — the kernel's sender then releases data in bursts
//! about a millisecond apart where ACKs come more often (docs/fidelity.md, "Burst release").
//!
//! The simulator sends segment by segment; it keeps the write queue's skbs only as far as the
//! test needs them: the head skb starts where the previous one was sent out and holds at most
//! the size goal (`tcp_xmit_size_goal`, 64 KB or half the peer's largest window).

use super::TcpSender;
use crate::cc::CaState;

/// `NSEC_PER_MSEC`: a sender idle this long sends at once (no deferring after a pause).
const DEFER_MAX_IDLE_NS: u64 = 1_000_000;
/// `sysctl_tcp_tso_win_divisor` (Linux's default 3): a third of the window may go at once.
const TSO_WIN_DIVISOR: u64 = 3;
/// The most the next ACK may be away for a deferral: min(srtt/2, this).
const DEFER_ACK_HORIZON_NS: u64 = 1_000_000;

/// Why `tcp_write_xmit` stops at a deferral: its `is_cwnd_limited` (cwnd validation).
pub(super) struct Deferred {
    pub cwnd_limited: bool,
}

impl TcpSender {
    /// The write queue's head skb: (bytes of it not sent yet, whether data follows it).
    fn wq_head(&mut self) -> (u64, bool) {
        let goal = self.size_goal();
        if self.sk.snd_nxt >= self.wq_head_start + goal || self.sk.snd_nxt < self.wq_head_start {
            self.wq_head_start = self.sk.snd_nxt;
        }
        let end = self.wq_head_start + goal;
        let write_seq = self.write_seq();
        (end.min(write_seq) - self.sk.snd_nxt, end < write_seq)
    }

    /// A finite transfer has all its data in the socket: its last skb carries the FIN.
    fn app_done(&self) -> bool {
        self.app_bytes.is_some_and(|b| self.write_seq() >= b)
    }

    /// A new segment starts a write-queue skb here (where `tcp_write_xmit` asks again).
    pub(super) fn at_wq_skb_start(&mut self) -> bool {
        self.wq_head();
        self.sk.snd_nxt == self.wq_head_start
    }

    /// `tcp_tso_should_defer`: hold the new data the windows allow now. Called with new data
    /// waiting and room in both windows.
    pub(super) fn tso_should_defer(&mut self) -> Option<Deferred> {
        if !self.cfg.tso_defer || !self.cc.tso_defer() || self.sk.ca_state >= CaState::Recovery {
            return None;
        }
        // Paced senders are left out: Linux defers them too (the pacing timer's
        // tcp_write_xmit asks the same test), but this model of it, applied to BBR in
        // CoCo-Beholder's square-wave delay (140 ms steps), moved 9.7 Mbit/s where the kernel
        // moved 17.2 and the simulator without it 24.4 (docs/fidelity.md, "Burst release").
        if self.sk.is_paced() {
            return None;
        }
        let now = self.sk.now_ns;
        // only while sending: the last transmission left less than a millisecond ago
        if now > self.wstamp_ns + DEFER_MAX_IDLE_NS {
            return None;
        }
        let mss = self.cfg.mss as u64;
        let (skb_len, more) = self.wq_head();
        if skb_len <= mss {
            return None; // a one-segment skb: Nagle's test (off here), not this one
        }
        let in_flight = self.sk.packets_in_flight() as u64;
        let cwnd = self.sk.cwnd as u64;
        let send_win = (self.sk.snd_una + self.sk.snd_wnd).saturating_sub(self.sk.snd_nxt);
        let cong_win = cwnd.saturating_sub(in_flight) * mss;
        let limit = send_win.min(cong_win);
        if limit >= self.autosize_segs() * mss {
            return None; // a full autosized skb may go
        }
        if more && limit >= skb_len {
            return None; // the head skb goes whole and will get no more data
        }
        if limit >= self.sk.snd_wnd.min(cwnd * mss) / TSO_WIN_DIVISOR {
            return None; // a third of the window may go
        }
        // the next ACK: the oldest unACKed segment's, one srtt after it left
        let head_sent = self.rtx.front()?.sent_ns;
        let srtt_ns = self.srtt8 * 125;
        let how_far = (head_sent + srtt_ns) as i64 - now as i64;
        if how_far > (srtt_ns / 2).min(DEFER_ACK_HORIZON_NS) as i64 {
            return None;
        }
        if cong_win < send_win {
            if cong_win <= skb_len {
                return Some(Deferred { cwnd_limited: true });
            }
        } else if send_win <= skb_len {
            return Some(Deferred { cwnd_limited: false });
        }
        // an application-limited tail: wait for more data unless none will come (FIN)
        if !more && self.app_done() {
            return None;
        }
        Some(Deferred { cwnd_limited: false })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ack, b, established, send_all, MS};
    use super::super::TcpSender;
    use crate::cc::reno::Reno;
    use crate::tcp::TcpConfig;

    /// 100 segments out at `t0` (the handshake's 20-ms RTT), the first two ACKed 20 ms later
    /// (sent at once: nothing left for 20 ms).
    fn clocked(defer: bool) -> (TcpSender, u64) {
        let cfg = TcpConfig { init_cwnd: 100, tlp: false, tso_defer: defer, ..Default::default() };
        let mut s = established(&cfg, Box::new(Reno::new()), 20 * MS);
        let t0 = 20 * MS;
        assert_eq!(send_all(&mut s, t0).len(), 100);
        s.on_ack(t0 + 20 * MS, &ack(b(2), &[], t0));
        assert_eq!(send_all(&mut s, t0 + 20 * MS).len(), 4, "slow start: 2 acked, 4 sent");
        (s, t0 + 20 * MS)
    }

    #[test]
    fn a_small_send_waits_for_the_next_ack_until_a_millisecond_passes() {
        let (mut s, t) = clocked(true);
        // 0.2 ms later two more are ACKed: 4 segments of room, below an autosized skb
        // (~10 segments at ~116 Mbit/s) and a third of the window, the next ACK due: wait
        s.on_ack(t + MS / 5, &ack(b(4), &[], t));
        assert!(send_all(&mut s, t + MS / 5).is_empty());
        s.on_ack(t + MS / 2, &ack(b(6), &[], t));
        assert!(send_all(&mut s, t + MS / 2).is_empty());
        // 1.1 ms after the last send the next ACK releases all the room at once
        s.on_ack(t + 11 * MS / 10, &ack(b(8), &[], t));
        assert_eq!(send_all(&mut s, t + 11 * MS / 10).len(), 12);
    }

    #[test]
    fn without_deferral_every_ack_sends() {
        let (mut s, t) = clocked(false);
        s.on_ack(t + MS / 5, &ack(b(4), &[], t));
        assert_eq!(send_all(&mut s, t + MS / 5).len(), 4);
    }

    #[test]
    fn a_whole_autosized_skb_or_a_third_of_the_window_goes_at_once() {
        let (mut s, t) = clocked(true);
        // 12 segments ACKed at once: room 24 ≥ one autosized skb
        s.on_ack(t + MS / 5, &ack(b(14), &[], t));
        assert_eq!(send_all(&mut s, t + MS / 5).len(), 24);
    }

    #[test]
    fn recovery_and_a_pause_never_defer() {
        let (mut s, t) = clocked(true);
        s.on_ack(t + MS / 5, &ack(b(4), &[], t));
        assert!(s.tso_should_defer().is_some_and(|d| d.cwnd_limited));
        s.sk.ca_state = crate::cc::CaState::Recovery;
        assert!(s.tso_should_defer().is_none());
        s.sk.ca_state = crate::cc::CaState::Disorder;
        assert!(s.tso_should_defer().is_some(), "Disorder defers as Open does");
        s.sk.now_ns = t + 2 * MS; // nothing sent for 2 ms
        assert!(s.tso_should_defer().is_none());
    }
}
