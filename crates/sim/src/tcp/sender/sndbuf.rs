//! Send buffer (Linux `tcp_wmem`, `sk_sndbuf`, `sk_wmem_queued`): how much the application may
//! have written and not yet had ACKed, and its autotuning.
//!
//! * The socket's `write_seq` ([`TcpSender::write_seq`]) is what the application has copied
//!   into the socket; `written` is what it has handed over (a backlog it keeps itself while the
//!   socket is full, as the emulator's non-blocking writer does).
//! * `tcp_sendmsg_locked` (tcp.c) starts a new skb only while `sk_wmem_queued < sk_sndbuf`
//!   (`sk_stream_memory_free`) and fills it up to the size goal (`tcp_xmit_size_goal`: 64 KB of
//!   GSO, bounded to half the largest window the peer offered, whole MSS), so the queue can end
//!   up to one skb above the buffer. Once it is full the socket is `SOCK_NOSPACE`.
//! * `sk_wmem_queued` counts skb truesize: the payload plus one skb head per skb
//!   ([`SKB_HEAD_TRUESIZE`]). Unsent data sits in skbs of the size goal. `tcp_write_xmit` splits
//!   the write queue's head at each transmission (`tcp_mss_split_point`, `tso_fragment`), and a
//!   sender clocked by ACKs defers small sends until a whole `tcp_tso_autosize` skb may go
//!   (`tcp_tso_should_defer`; a paced sender sends one per pacing slot): sent data sits in skbs
//!   of about 1 ms of the pacing rate, at least 2 segments, so at low rates the heads take a
//!   large share (`ss -m` during a Reno slow start on the HSPA+ preset, 2-segment skbs: 1.26
//!   bytes of truesize per byte in flight). The model starts a new sent skb every
//!   `tcp_tso_autosize` segments and frees its head when its last segment is ACKed
//!   (`tcp_trim_head` keeps a partly ACKed skb). Retransmissions and SACK processing split skbs
//!   further in Linux (`tcp_fragment`); that is not modelled.
//! * On an ACK (`tcp_check_space` → `tcp_new_space`, tcp_input.c), a `SOCK_NOSPACE` socket grows
//!   the buffer when the flow is not cwnd-limited (`tcp_should_expand_sndbuf`; memory pressure is
//!   not modelled) to `tcp_sndbuf_expand`'s factor × max(10, cwnd, reordering + 1) × per-MSS
//!   worst-case truesize, at most `tcp_wmem[2]`; the factor is the CC's `sndbuf_expand` (2, BBR 3).
//!   The application is woken only once the free space is at least half of what is queued
//!   (`__sk_stream_is_writeable`: queued ≤ 2/3 of the buffer), and then writes until full again.
//!   Each write checks first whether the sender is application-limited
//!   (`tcp_rate_check_app_limited` in `tcp_sendmsg_locked`): with an empty write queue and room
//!   in the window, the rate samples of the next round are marked app-limited. Linux checks
//!   nowhere else; a sender whose buffer ran dry between two writes is not marked.
//! * `tcp_init_buffer_space` expands the buffer once at establishment.

use super::TcpSender;

/// truesize of one skb without its payload: the kmalloc'ed head holding the headers plus the
/// `sk_buff` itself. Measured on Linux 6.18 (x86-64): one 23 768-byte skb on the write queue
/// counted 24 600 bytes in `sk_wmem_queued` (`ss -m`, skmem `w`).
pub(super) const SKB_HEAD_TRUESIZE: u64 = 832;
/// `MAX_TCP_HEADER` + `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` as `tcp_sndbuf_expand`
/// adds them to the MSS before rounding up to a power of two. With it the per-MSS truesize for
/// MSS 1460 is 2048 + 256 = 2304, the value Linux 6.18 shows (`tb` 46 080 = 2 × 10 × 2304 at
/// establishment for CUBIC/Reno, 69 120 = 3 × 10 × 2304 for BBR).
const SKB_HDR_AND_SHINFO: u64 = 576;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`.
const SK_BUFF_SIZE: u64 = 256;
/// `TCP_INIT_CWND`: tcp_sndbuf_expand's floor on the segments it provisions for.
const TCP_INIT_CWND: u64 = 10;
/// GSO size limit of one skb (`sk_gso_max_size` 65536 − 1 − `MAX_TCP_HEADER`), in bytes.
const GSO_MAX_BYTES: u64 = 65536 - 1 - 320;
/// `tcp_tso_rtt_log`: flows with min_rtt below 2^(this) µs × 32 get larger TSO skbs.
const TSO_RTT_LOG: u32 = 9;

impl TcpSender {
    /// The socket's `write_seq`: bytes copied into the socket.
    #[inline]
    pub(super) fn write_seq(&self) -> u64 {
        self.write_seq
    }

    /// The send buffer (`sk_sndbuf`, bytes of truesize).
    pub fn sndbuf(&self) -> u64 {
        self.sndbuf
    }

    /// Segments per sent skb: `tcp_tso_autosize` (pacing rate >> `sk_pacing_shift` 10, plus the
    /// low-RTT bonus), at least `tcp_min_tso_segs` (`TcpConfig::min_tso_segs`), at most one GSO skb.
    pub(super) fn autosize_segs(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        let mut bytes = (self.sk.pacing_rate_bps / 8.0) as u64 >> 10;
        let r = if self.sk.min_rtt_us == u32::MAX { u32::MAX } else { self.sk.min_rtt_us >> TSO_RTT_LOG };
        if r < 32 {
            bytes += 65536 >> r;
        }
        let max = (GSO_MAX_BYTES / mss).max(1);
        (bytes / mss).clamp((self.cfg.min_tso_segs as u64).clamp(1, max), max)
    }

    /// `sk_wmem_queued`: the payload written and not ACKed, one head per sent skb not fully
    /// ACKed and one per size-goal skb of unsent data.
    pub(super) fn wmem_queued(&self) -> u64 {
        let unsent = self.write_seq - self.sk.snd_nxt.min(self.write_seq);
        let unsent_skbs = unsent.div_ceil(self.size_goal());
        (self.write_seq - self.sk.snd_una) + SKB_HEAD_TRUESIZE * (self.sent_skbs + unsent_skbs)
    }

    /// A new segment leaves: it starts a new sent skb when the current one holds
    /// `tcp_tso_autosize` segments already. (Linux splits the write queue's head at each
    /// transmission, but a sender clocked by ACKs defers small sends until a whole autosized
    /// skb may go, `tcp_tso_should_defer`, and a paced one sends one per pacing slot.)
    pub(super) fn mark_skb_boundary(&mut self, seg: &mut super::TxSeg) {
        if self.skb_segs >= self.autosize_segs() {
            seg.flags |= super::SKB_HEAD;
            self.sent_skbs += 1;
            self.skb_segs = 0;
        }
        self.skb_segs += 1;
    }

    /// A segment is cumulatively ACKed: the skb it started lives on in the next segment when
    /// that one belongs to it (`tcp_trim_head`), else the skb is freed.
    pub(super) fn release_skb_head(&mut self, seg: &super::TxSeg) {
        if seg.flags & super::SKB_HEAD == 0 {
            return;
        }
        match self.rtx.front_mut() {
            Some(next) if next.flags & super::SKB_HEAD == 0 && next.seq == seg.end() => next.flags |= super::SKB_HEAD,
            Some(_) => self.sent_skbs -= 1,
            None => {
                // everything is ACKed: the skb being built is gone, the next segment starts one
                self.sent_skbs -= 1;
                self.skb_segs = u64::MAX;
            }
        }
    }

    /// `tcp_xmit_size_goal`: payload of a new skb on the write queue (whole MSS, at most GSO's
    /// 64 KB and half the largest window the peer offered).
    pub(super) fn size_goal(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        let half_wnd = if self.max_window > 0 { (self.max_window / 2).max(mss) } else { GSO_MAX_BYTES };
        (GSO_MAX_BYTES.min(half_wnd) / mss).max(1) * mss
    }

    /// Bytes of new data `tcp_write_xmit` would send at once: the congestion and receive
    /// windows' room, and for a paced sender (internal pacing: `tcp_pacing_check` stops the loop
    /// after one skb) at most one `tcp_tso_autosize` skb, none while the pacing timer runs.
    fn sendable_now(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        let room = self.sk.cwnd.saturating_sub(self.sk.packets_in_flight()) as u64 * mss;
        let rwnd = (self.sk.snd_una + self.sk.snd_wnd).saturating_sub(self.sk.snd_nxt);
        let b = room.min(rwnd);
        if !self.sk.is_paced() {
            b
        } else if self.wstamp_ns <= self.sk.now_ns {
            b.min(self.autosize_segs() * mss)
        } else {
            0
        }
    }

    /// `tcp_sendmsg_locked`: copy the application's backlog into the socket, one skb at a time,
    /// while the queued truesize is below the buffer; a full buffer sets `SOCK_NOSPACE`.
    ///
    /// The memory check (`sk_stream_memory_free`) runs only when a new skb is started. While
    /// the write queue's tail is also its send head, each time it reaches the size goal
    /// `tcp_push_one` sends what the windows allow off its front (`tso_fragment`) and the copy
    /// goes on into the rest of the same skb, unchecked. So a write that finds at most one
    /// unsent skb puts everything the windows let out at once into the socket, whatever the
    /// buffer, plus one full skb left unsent — as long as each push sends only part of the tail
    /// (`tcp_tso_autosize` below the size goal; at high pacing rates a push takes the whole
    /// 64 KB skb and the next one is checked: Linux 6.18 on the emulator, CUBIC at 1 Gbit/s ×
    /// 40 ms with 4 MiB, stayed at ~2880 segments in flight with cwnd 4265). Measured on Linux
    /// 6.18 with `ss -tmi`: Reno in slow start over the HSPA+ preset with `tcp_wmem[2]` 4 MiB had
    /// `w` jump from 2.87 to 9.30 MB in one write, unACKed from 1663 to 5540 segments, nothing
    /// unsent (docs/fidelity.md, "Send buffers").
    /// TSQ would stop the pushes on a host whose NIC queue holds the packets; it is not modelled,
    /// and behind the emulator's TUN it did not bind (`tcp_limit_output_bytes` 16 KB changed
    /// nothing).
    pub(super) fn sndbuf_fill(&mut self) {
        let goal = self.size_goal();
        let unsent = self.write_seq.saturating_sub(self.sk.snd_nxt);
        // Only a tail that `tcp_push_one` sends in part stays on the write queue to be appended
        // to: when one `tcp_tso_autosize` skb holds a whole size-goal skb (high pacing rates),
        // every push empties the queue and every skb is checked.
        let split = self.autosize_segs() * (self.cfg.mss as u64) < goal;
        let pushed_to = if split && unsent <= goal { self.sk.snd_nxt + self.sendable_now() + goal } else { 0 };
        let start = self.write_seq;
        while self.write_seq < self.written {
            if self.wmem_queued() >= self.sndbuf && self.write_seq >= pushed_to {
                self.nospace = true;
                break;
            }
            if self.write_seq == start && self.tail_room && self.psh_marks.back() == Some(&start) {
                // The write appends to an unsent tail skb: its PSH moves to the new end
                // (tcp_sendmsg_locked clears TCPHDR_PSH at a call's first copy into an skb).
                self.psh_marks.pop_back();
            }
            let step = goal.min(self.written - self.write_seq);
            self.write_seq += step;
            self.tail_room = step < goal;
            // forced_push: a full skb beyond half the largest window since the last mark.
            if step == goal && self.max_window > 0 && self.write_seq > self.pushed_seq + self.max_window / 2 {
                self.mark_push();
            }
        }
        // tcp_push at the end of the call (and before it waits for memory) marks the tail.
        if self.write_seq > start && self.psh_marks.back() != Some(&self.write_seq) {
            self.mark_push();
        }
    }

    /// `tcp_mark_push`: PSH on the write queue's tail, which ends at `write_seq`.
    fn mark_push(&mut self) {
        self.psh_marks.push_back(self.write_seq);
        self.pushed_seq = self.write_seq;
    }

    /// `tcp_sndbuf_expand`: provision the buffer for factor × max(10, cwnd, reordering + 1)
    /// worst-case (one skb per MSS) segments, never above `tcp_wmem[2]`, never shrinking.
    pub(super) fn sndbuf_expand(&mut self) {
        let mss_clamp = self.cfg.mss as u64 + 12; // the peer's MSS option (timestamps take 12)
        let per_mss = (mss_clamp + SKB_HDR_AND_SHINFO).next_power_of_two() + SK_BUFF_SIZE;
        let nr_segs = TCP_INIT_CWND.max(self.sk.cwnd as u64).max(self.reordering as u64 + 1);
        let sndmem = self.cc.sndbuf_expand() as u64 * nr_segs * per_mss;
        if self.sndbuf < sndmem {
            self.sndbuf = sndmem.min(self.cfg.wmem[2]);
        }
    }

    /// `tcp_init_buffer_space` (send half), at establishment: the buffer starts at
    /// `tcp_wmem[1]` and is expanded once; then the application writes.
    pub(super) fn sndbuf_init(&mut self) {
        self.sndbuf = self.cfg.wmem[1];
        self.sndbuf_expand();
        self.rate_check_app_limited(); // the application's first write (tcp_sendmsg_locked)
        self.sndbuf_fill();
    }

    /// `tcp_check_space` after an ACK: a socket the application found full may grow its buffer
    /// (`tcp_new_space` when not cwnd-limited) and wakes the application once a third of the
    /// buffer is free (`sk_stream_write_space`).
    pub(super) fn check_space(&mut self) {
        if !self.nospace {
            return;
        }
        if self.sk.packets_in_flight() < self.sk.cwnd {
            self.sndbuf_expand();
        }
        let queued = self.wmem_queued();
        if self.sndbuf.saturating_sub(queued) >= queued / 2 {
            // the woken application writes: tcp_sendmsg_locked checks app-limitation first
            self.nospace = false;
            self.rate_check_app_limited();
            self.sndbuf_fill();
        }
    }
}
