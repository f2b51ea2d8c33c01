//! Undo and F-RTO on hand-built ACK sequences (undo.rs).

use super::tests::{ack, b, send_all, MS};
use super::*;
use crate::cc::reno::Reno;
use crate::tcp::{CaState, DataSeg, Frto};

fn cfg(iw: u32, frto: Frto) -> TcpConfig {
    TcpConfig { init_cwnd: iw, tlp: false, frto, ..Default::default() }
}

fn established(cfg: &TcpConfig, rtt: u64) -> TcpSender {
    super::tests::established(cfg, Box::new(Reno::new()), rtt)
}

/// Recovery for segment 1 (3 SACKs), its fast retransmit at `t0 + 10 ms`.
fn into_recovery(undo: bool) -> (TcpSender, u64) {
    let c = TcpConfig { undo, ..cfg(20, Frto::Rfc5682) };
    let mut s = established(&c, 10 * MS);
    let t0 = 10 * MS;
    assert_eq!(send_all(&mut s, t0).len(), 20);
    s.on_ack(t0 + 10 * MS, &ack(b(1), &[(b(2), b(5))], t0));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!((s.sock().ssthresh, s.sock().prior_cwnd), (10, 20));
    let r = send_all(&mut s, t0 + 10 * MS);
    assert!(r[0].retrans && r[0].seq == b(1));
    (s, t0)
}

#[test]
fn timestamp_undo_on_a_partial_ack_of_the_delayed_original() {
    // The ACK that fills the hole echoes the original's TSval (t0), older than the
    // retransmission (t0 + 10 ms): tcp_packet_delayed ⇒ tcp_try_undo_partial reverts the
    // reduction (cwnd = max(cwnd, prior_cwnd) = 20, ssthresh = prior_ssthresh, infinite in
    // slow start) and reopens; tcp_cong_control then slow-starts on the same ACK's two newly
    // delivered segments (1 and 5; 2-4 were SACKed before): 22.
    let (mut s, t0) = into_recovery(true);
    s.on_ack(t0 + 12 * MS, &ack(b(6), &[], t0));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().cwnd, 22);
    assert_eq!(s.sock().ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    assert_eq!(s.sock().lost_out, 0);
    assert!(s.undo_marker.is_none());
    // With undo off the same ACK leaves the flow in Recovery at PRR's window.
    let (mut s, t0) = into_recovery(false);
    s.on_ack(t0 + 12 * MS, &ack(b(6), &[], t0));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!(s.sock().ssthresh, 10);
    assert!(s.sock().cwnd < 20);
}

#[test]
fn no_timestamp_undo_when_the_ack_is_for_the_retransmission() {
    // The same ACK echoing the retransmission's TSval: a real loss, no undo.
    let (mut s, t0) = into_recovery(true);
    s.on_ack(t0 + 21 * MS, &ack(b(6), &[], t0 + 10 * MS));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!(s.sock().ssthresh, 10);
}

#[test]
fn dsack_undo_when_every_retransmission_was_needless() {
    // Segment 1 was reordered, not lost: the receiver gets the original, then the
    // retransmission, and D-SACKs it. undo_retrans falls to 0; when the recovery ends
    // (snd_una ≥ high_seq) tcp_try_undo_recovery reverts it.
    let (mut s, t0) = into_recovery(true);
    assert_eq!(s.undo_retrans, 1);
    // Cumulative ACK of everything sent so far (21 segments), echoing the retransmission
    // (no timestamp evidence), with a D-SACK for segment 1.
    let high = s.high_seq;
    let mut a = ack(high, &[(b(1), b(2))], t0 + 10 * MS);
    a.dsack = true;
    s.on_ack(t0 + 21 * MS, &a);
    assert_eq!(s.undo_retrans, 0);
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert!(s.sock().cwnd >= 20, "cwnd {} not restored", s.sock().cwnd);
    assert_eq!(s.sock().ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    // Without the D-SACK the recovery ends at ssthresh (10), and the same ACK's 16 newly
    // delivered segments (1, 5-19) add one in congestion avoidance: 11.
    let (mut s, t0) = into_recovery(true);
    let high = s.high_seq;
    s.on_ack(t0 + 21 * MS, &ack(high, &[], t0 + 10 * MS));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!((s.sock().cwnd, s.sock().ssthresh), (11, 10));
}

#[test]
fn dsack_beyond_the_retransmissions_sent_is_ignored() {
    // tcp_dsack_seen: more duplicate segments reported than were ever retransmitted ⇒ dubious.
    let (mut s, t0) = into_recovery(true);
    let mut a = ack(b(1), &[(b(1), b(4)), (b(2), b(6))], t0 + 10 * MS);
    a.dsack = true;
    s.on_ack(t0 + 21 * MS, &a);
    assert_eq!(s.undo_retrans, 1);
    assert_eq!(s.sock().ca_state, CaState::Recovery);
}

/// 10 segments out at 10 ms, no ACK until the RTO (210 ms later): the head is retransmitted.
fn rto_with_window(frto: Frto) -> (TcpSender, u64) {
    let mut s = established(&cfg(10, frto), 10 * MS);
    let t0 = 10 * MS;
    assert_eq!(send_all(&mut s, t0).len(), 10);
    let rto = s.next_timer().unwrap();
    assert_eq!(rto, t0 + 210 * MS);
    s.on_timer(rto);
    let r = send_all(&mut s, rto);
    assert_eq!(r.len(), 1);
    assert!(r[0].retrans && r[0].seq == 0);
    (s, rto)
}

/// The first ACK after the timeout (for the RTO retransmission of segment 0, no timestamp
/// echo) and what the sender sends on it.
fn first_ack(s: &mut TcpSender, rto: u64) -> Vec<DataSeg> {
    s.on_ack(rto + 1 * MS, &ack(b(1), &[], 0));
    send_all(s, rto + 1 * MS)
}

#[test]
fn frto_rfc5682_undoes_a_spurious_timeout() {
    // RFC 5682 §2: the RTO retransmission's ACK (here the delayed original's, without a
    // timestamp echo so that Eifel cannot decide first) advances snd_una ⇒ step 2b: new data,
    // not retransmissions; the next ACK covers never-retransmitted segment 1 ⇒ spurious ⇒
    // undo: cwnd back to 10, ssthresh back to infinite, nothing lost.
    let (mut s, rto) = rto_with_window(Frto::Rfc5682);
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!(s.sock().cwnd, 1);
    assert!(s.frto);
    let r = first_ack(&mut s, rto);
    assert_eq!(r.len(), 2, "two new segments (cwnd 2 after slow start)");
    assert!(r.iter().all(|d| !d.retrans) && r[0].seq == b(10));
    s.on_ack(rto + 2 * MS, &ack(b(2), &[], 0));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().lost_out, 0);
    assert_eq!(s.sock().ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    assert!(s.sock().cwnd >= 10, "cwnd {}", s.sock().cwnd);
    // Nothing of the window is retransmitted afterwards.
    let r = send_all(&mut s, rto + 2 * MS);
    assert!(r.iter().all(|d| !d.retrans));
}

#[test]
fn frto_rfc5682_falls_back_when_the_loss_is_real() {
    // After the two new segments a SACK for them and no progress: step 3a, conventional
    // recovery: the lost segments are retransmitted, the reduction stays.
    let (mut s, rto) = rto_with_window(Frto::Rfc5682);
    assert_eq!(first_ack(&mut s, rto).len(), 2);
    s.on_ack(rto + 2 * MS, &ack(b(1), &[(b(10), b(11))], 0));
    assert!(!s.frto);
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!(s.sock().ssthresh, 5);
    let r = send_all(&mut s, rto + 2 * MS);
    assert!(!r.is_empty() && r.iter().all(|d| d.retrans) && r[0].seq == b(1));
}

#[test]
fn frto_off_retransmits_after_the_first_ack() {
    // tcp_frto = 0: the first ACK after the timeout clocks out retransmissions of the
    // segments marked lost, and the reduction stays even when the data was only delayed.
    let (mut s, rto) = rto_with_window(Frto::Off);
    let r = first_ack(&mut s, rto);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|d| d.retrans) && r[0].seq == b(1));
    s.on_ack(rto + 2 * MS, &ack(b(2), &[], 0));
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!(s.sock().ssthresh, 5);
}

#[test]
fn eifel_undoes_a_spurious_timeout_without_frto() {
    // With timestamps the first ACK already echoes the original's TSval (t0 < the RTO
    // retransmission's) ⇒ tcp_try_undo_loss: undone on the first ACK, even with F-RTO off.
    let (mut s, rto) = rto_with_window(Frto::Off);
    s.on_ack(rto + 1 * MS, &ack(b(1), &[], 10 * MS));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    assert!(s.sock().cwnd >= 10);
}

#[test]
fn frto_before_3_10_halves_a_spurious_timeout() {
    // tcp_enter_frto: ssthresh halves at the timeout but nothing is marked lost and cwnd
    // stays at in_flight + 1 (Disorder); the first ACK opens two new segments; the second,
    // covering never-retransmitted data, is the spurious verdict, answered with
    // tcp_frto_response 0: a CWR (rate-halving) reduction to the halved ssthresh, no undo.
    let (mut s, rto) = rto_with_window(Frto::Pre310);
    assert_eq!(s.sock().ca_state, CaState::Disorder);
    assert_eq!(s.sock().lost_out, 0);
    assert_eq!(s.sock().ssthresh, 5);
    assert_eq!(s.frto_counter, 1);
    let r = first_ack(&mut s, rto);
    assert_eq!(s.frto_counter, 2);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|d| !d.retrans) && r[0].seq == b(10));
    s.on_ack(rto + 2 * MS, &ack(b(2), &[], 0));
    assert_eq!(s.frto_counter, 0);
    assert_eq!(s.sock().ca_state, CaState::Cwr);
    assert_eq!(s.sock().ssthresh, 5);
    assert!(s.sock().cwnd <= 11);
    let r = send_all(&mut s, rto + 2 * MS);
    assert!(r.iter().all(|d| !d.retrans));
}

#[test]
fn frto_before_3_10_enters_loss_when_the_new_data_is_sacked() {
    let (mut s, rto) = rto_with_window(Frto::Pre310);
    assert_eq!(first_ack(&mut s, rto).len(), 2);
    // A SACK for the first new segment (not original data) and no progress ⇒
    // tcp_enter_frto_loss(sk, 3): everything un-SACKed is lost, cwnd = in_flight + 3.
    s.on_ack(rto + 2 * MS, &ack(b(1), &[(b(10), b(11))], 0));
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!(s.frto_counter, 0);
    let r = send_all(&mut s, rto + 2 * MS);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|d| d.retrans) && r[0].seq == b(1));
}

#[test]
fn timeout_marks_recently_sent_packets_lost_only_without_rack() {
    // tcp_enter_loss before RACK (rack: false, the 2.6.36-3.12 profiles) marks every
    // un-SACKed packet lost; with RACK (tcp_timeout_mark_lost) a packet sent within rack.rtt
    // of the timeout is left for RACK to judge.
    // 12 out at the timeout: segments 2-9 sent 15 ms before it, 4 more 5 ms before it.
    for (rack, want) in [(false, 12), (true, 8)] {
        let c = TcpConfig { rack, frto: Frto::Off, ..cfg(10, Frto::Off) };
        let mut s = established(&c, 10 * MS);
        let t0 = 10 * MS;
        assert_eq!(send_all(&mut s, t0).len(), 10);
        // An ACK of the first 2 segments 10 ms later gives rack.rtt = 10 ms and opens room
        // for 2 more (slow start: cwnd 12) sent right then.
        s.on_ack(t0 + 10 * MS, &ack(b(2), &[], t0));
        assert_eq!(send_all(&mut s, t0 + 10 * MS).len(), 4);
        // The RTO fires 5 ms after the last sends: those are within rack.rtt.
        s.timer = Some((t0 + 15 * MS, TimerKind::Retrans));
        s.on_timer(t0 + 15 * MS);
        assert_eq!(s.sock().ca_state, CaState::Loss);
        assert_eq!(s.sock().lost_out, want, "rack {rack}");
    }
}
