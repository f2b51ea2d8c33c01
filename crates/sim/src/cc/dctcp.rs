//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as in Linux net/ipv4/tcp_dctcp.c (5.x/6.x)
//! and include/net/tcp_dctcp.h.
//!
//! Sender: once per RTT (when `snd_una` passes `next_seq`), from `in_ack_event`,
//! `alpha ← alpha − alpha>>g + (delivered_ce << (10 − g)) / delivered` (alpha is ×1024, so this
//! is α ← (1 − 1/16)·α + 1/16·F with F the fraction of delivered packets whose ACKs carried ECE);
//! on ECE the core enters CWR with `ssthresh = max(cwnd − cwnd·α/2, 2)` (`dctcp_ssthresh`),
//! at most once per window; on loss (Recovery entry, RTO) `ssthresh = max(cwnd/2, 2)`
//! (`dctcp_react_to_loss`); growth is Reno's. `sample()` exports `alpha` (0..1).
//!
//! Receiver: the CE-state ACK machine of `dctcp_ece_ack_update` ([`CeAckState`]): ECE mirrors
//! the CE state of the last data packet, and a change of state is ACKed at once (a pending
//! delayed ACK is first sent for the bytes before the change, with the old ECE value). ccbench's
//! receiver has no CC instance, so it runs this machine directly when the flow's CC needs ECN.
//!
//! Without ECN negotiated (`ecn: false` on the flow's group) `dctcp_init` switches the socket to
//! the `dctcp-reno` ops (Reno ssthresh/growth/undo, no alpha); this module then behaves exactly as
//! Reno and reports its name as `dctcp-reno`.
//!
//! Known differences: none in the algorithm. Linux ≥ 6.1 also feeds the per-RTT CE ratio to
//! PLB (protective load balancing, path rehash), which has no meaning on a single-path dumbbell
//! and is omitted. The module parameter `dctcp_clamp_alpha_on_loss` of ≤ 4.x kernels is not
//! modelled.

use super::{
    tcp_cong_avoid_ai, tcp_reno_ssthresh, tcp_slow_start, CaEvent, CaState, CongestionControl,
    ParamInfo, Params, SchemeInfo, Sock, CA_ACK_ECE,
};

/// `DCTCP_MAX_ALPHA`: alpha is kept ×1024 (10 fractional bits).
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g` module parameter default: g = 1/2^4.
pub const DCTCP_SHIFT_G: u32 = 4;
/// `dctcp_alpha_on_init` module parameter default: start at α = 1 (halve on the first mark).
pub const DCTCP_ALPHA_ON_INIT: u32 = DCTCP_MAX_ALPHA;

pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "shift_g", default: 4.0, doc: "dctcp_shift_g: EWMA gain g = 1/2^shift_g (0..10)" },
    ParamInfo {
        name: "alpha_on_init",
        default: 1024.0,
        doc: "dctcp_alpha_on_init: initial alpha ×1024 (0..1024; 1024 = alpha 1.0)",
    },
];

#[derive(Clone, Debug)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    /// `ca->dctcp_alpha` (×1024).
    alpha: u32,
    /// End of the current observation window (`ca->next_seq`, byte sequence).
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// `ca->loss_cwnd`: cwnd before the last reduction (undo).
    loss_cwnd: u32,
    /// ECN not negotiated: the `dctcp_reno` ops.
    reno_fallback: bool,
}

impl Dctcp {
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Self {
        Dctcp {
            shift_g: shift_g.min(10),
            alpha_on_init: alpha_on_init.min(DCTCP_MAX_ALPHA),
            alpha: alpha_on_init.min(DCTCP_MAX_ALPHA),
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
            reno_fallback: false,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Dctcp::new(
            p.int("shift_g", DCTCP_SHIFT_G as i64, 0, 10)? as u32,
            p.int("alpha_on_init", DCTCP_ALPHA_ON_INIT as i64, 0, DCTCP_MAX_ALPHA as i64)? as u32,
        ))
    }

    /// Current alpha ×1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_reset`: start a new observation window.
    fn reset(&mut self, sk: &Sock) {
        self.next_seq = sk.snd_nxt;
        self.old_delivered = sk.delivered;
        self.old_delivered_ce = sk.delivered_ce;
    }

    /// `dctcp_update_alpha` (the `in_ack_event` hook).
    fn update_alpha(&mut self, sk: &Sock) {
        // Expired RTT: !before(snd_una, next_seq).
        if sk.snd_una >= self.next_seq {
            let delivered = sk.delivered - self.old_delivered;
            let mut delivered_ce = sk.delivered_ce - self.old_delivered_ce;
            let mut alpha = self.alpha;
            // alpha = (1 − g)·alpha + g·F; min_not_zero keeps a small alpha decaying to 0.
            let dec = alpha >> self.shift_g;
            alpha -= if dec == 0 { alpha } else { dec };
            if delivered_ce > 0 {
                delivered_ce <<= 10 - self.shift_g;
                delivered_ce /= delivered.max(1);
                alpha = (alpha as u64 + delivered_ce).min(DCTCP_MAX_ALPHA as u64) as u32;
            }
            self.alpha = alpha;
            self.reset(sk);
        }
    }

    /// `dctcp_react_to_loss`.
    fn react_to_loss(&mut self, sk: &mut Sock) {
        self.loss_cwnd = sk.cwnd;
        sk.ssthresh = (sk.cwnd >> 1).max(2);
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp::new(DCTCP_SHIFT_G, DCTCP_ALPHA_ON_INIT)
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        if self.reno_fallback {
            "dctcp-reno"
        } else {
            "dctcp"
        }
    }

    /// `dctcp_init`: with ECN, start the first window; without, fall back to `dctcp_reno`.
    fn init(&mut self, sk: &mut Sock) {
        if sk.ecn_ok {
            self.reno_fallback = false;
            self.alpha = self.alpha_on_init;
            self.loss_cwnd = 0;
            self.reset(sk);
        } else {
            self.reno_fallback = true;
        }
    }

    /// `dctcp_ssthresh`: max(cwnd − cwnd·alpha/2048, 2) (CWR after ECE, and Recovery before
    /// `set_state` applies the loss rule).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        if self.reno_fallback {
            return tcp_reno_ssthresh(sk);
        }
        self.loss_cwnd = sk.cwnd;
        let cut = ((sk.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (sk.cwnd - cut).max(2)
    }

    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        let w = sk.cwnd;
        tcp_cong_avoid_ai(sk, w, acked);
    }

    /// `dctcp_state`: entering Recovery halves (loss is a stronger signal than marks).
    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if self.reno_fallback {
            return;
        }
        if new_state == CaState::Recovery && new_state != sk.ca_state {
            self.react_to_loss(sk);
        }
    }

    /// `dctcp_cwnd_event`: RTO halves. (`ECN_IS_CE`/`ECN_NO_CE` concern the receiving end:
    /// see [`CeAckState`].)
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if self.reno_fallback {
            return;
        }
        if ev == CaEvent::Loss {
            self.react_to_loss(sk);
        }
    }

    fn in_ack_event(&mut self, sk: &mut Sock, _flags: u32) {
        if self.reno_fallback {
            return;
        }
        let _ = CA_ACK_ECE; // alpha uses delivered_ce, which the core counts on ECE ACKs
        self.update_alpha(sk);
    }

    /// `dctcp_cwnd_undo`: max(cwnd, loss_cwnd).
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        if self.reno_fallback {
            return sk.cwnd.max(sk.prior_cwnd);
        }
        sk.cwnd.max(self.loss_cwnd)
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    /// `alpha` in [0, 1] (absent in the dctcp-reno fallback).
    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        if !self.reno_fallback {
            out.push(("alpha", self.alpha as f64 / DCTCP_MAX_ALPHA as f64));
        }
    }
}

/// What the receiver must do after a data packet under the DCTCP ACK rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CeAckAction {
    /// Send an ACK for this sequence with this ECE value *before* the regular ACK (the delayed
    /// ACK that covered the packets before the CE state changed).
    pub flush: Option<(u64, bool)>,
    /// ACK the current packet immediately (`ICSK_ACK_NOW`).
    pub ack_now: bool,
    /// New `TCP_ECN_DEMAND_CWR` state: ECE on the ACKs that follow.
    pub ece: bool,
}

/// The receiver half of DCTCP: `dctcp_ece_ack_update` (include/net/tcp_dctcp.h) with its
/// `ce_state` and `prior_rcv_nxt`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CeAckState {
    ce_state: bool,
    prior_rcv_nxt: u64,
}

impl CeAckState {
    /// A data packet was received (`ce` = it carried CE); `rcv_nxt` after processing it;
    /// `delack_pending` = a delayed-ACK timer is armed (`ICSK_ACK_TIMER`).
    pub fn update(&mut self, ce: bool, rcv_nxt: u64, delack_pending: bool) -> CeAckAction {
        let mut act = CeAckAction { flush: None, ack_now: false, ece: ce };
        if self.ce_state != ce {
            if delack_pending {
                act.flush = Some((self.prior_rcv_nxt, self.ce_state));
            }
            act.ack_now = true;
        }
        self.prior_rcv_nxt = rcv_nxt;
        self.ce_state = ce;
        act
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "dctcp",
    description: "DCTCP: ECN-based; once per RTT alpha = (1-g)·alpha + g·F (g = 1/16), on ECE cwnd·(1 − alpha/2) once per window, halve on loss; Reno growth. Needs ECN (falls back to dctcp-reno without)",
    source: "Linux net/ipv4/tcp_dctcp.c (5.x/6.x), include/net/tcp_dctcp.h; RFC 8257; Alizadeh et al., SIGCOMM 2010",
    params: PARAMS,
    make: |p| Ok(Box::new(Dctcp::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(cwnd: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.cwnd = cwnd;
        s.ecn_ok = true;
        s
    }

    #[test]
    fn alpha_update_by_hand() {
        let mut d = Dctcp::default();
        let mut s = sk(100);
        s.snd_nxt = 100 * 1448;
        d.init(&mut s);
        assert_eq!(d.alpha(), 1024);
        // Window 1: 100 delivered, 0 marked: 1024 − 1024>>4 = 960.
        s.snd_una = 100 * 1448;
        s.delivered = 100;
        s.snd_nxt = 200 * 1448;
        d.in_ack_event(&mut s, 0);
        assert_eq!(d.alpha(), 960);
        // Not yet at next_seq: no update.
        s.snd_una = 150 * 1448;
        s.delivered = 150;
        s.delivered_ce = 10;
        d.in_ack_event(&mut s, CA_ACK_ECE);
        assert_eq!(d.alpha(), 960);
        // Window 2: 100 delivered, 25 with ECE: 960 − 60 + (25 << 6)/100 = 900 + 16 = 916.
        s.snd_una = 200 * 1448;
        s.delivered = 200;
        s.delivered_ce = 25;
        d.in_ack_event(&mut s, CA_ACK_ECE);
        assert_eq!(d.alpha(), 916);
        // ssthresh = cwnd − cwnd·916/2048 = 100 − 44 = 56.
        assert_eq!(d.ssthresh(&mut s), 56);
        // All marked for a window: 916 − 57 + 64 = 923.
        s.snd_nxt = 300 * 1448;
        d.in_ack_event(&mut s, 0); // next_seq was reset to 200·1448 = snd_una: an (empty) window
        assert_eq!(d.alpha(), 916 - 57);
        s.snd_una = 300 * 1448;
        s.delivered = 300;
        s.delivered_ce = 125;
        d.in_ack_event(&mut s, CA_ACK_ECE);
        assert_eq!(d.alpha(), 859 - 53 + 64);
    }

    #[test]
    fn small_alpha_decays_to_zero_and_never_exceeds_one() {
        let mut d = Dctcp::new(4, 15);
        let mut s = sk(10);
        d.init(&mut s);
        // 15 >> 4 == 0: min_not_zero takes the whole alpha.
        s.snd_una = 1;
        s.snd_nxt = 1;
        d.in_ack_event(&mut s, 0);
        assert_eq!(d.alpha(), 0);
        let mut d = Dctcp::default();
        d.init(&mut s);
        s.snd_una = 2;
        s.delivered = 10;
        s.delivered_ce = 10;
        d.in_ack_event(&mut s, CA_ACK_ECE);
        assert_eq!(d.alpha(), 1024); // 960 + 64
        assert_eq!(d.ssthresh(&mut s), 5); // α = 1: halve
    }

    #[test]
    fn loss_halves_and_fallback_is_reno() {
        let mut d = Dctcp::default();
        let mut s = sk(80);
        d.init(&mut s);
        s.ssthresh = d.ssthresh(&mut s);
        d.set_state(&mut s, CaState::Recovery);
        assert_eq!(s.ssthresh, 40);
        assert_eq!(d.undo_cwnd(&mut s), 80);
        let mut d = Dctcp::default();
        let mut s = sk(80);
        s.ecn_ok = false;
        d.init(&mut s);
        assert_eq!(d.name(), "dctcp-reno");
        assert_eq!(d.ssthresh(&mut s), 40);
        d.in_ack_event(&mut s, CA_ACK_ECE);
        assert_eq!(d.alpha(), 1024);
    }

    #[test]
    fn ce_ack_state_machine() {
        let mut m = CeAckState::default();
        // Unmarked, no change: nothing special, ECE off.
        assert_eq!(m.update(false, 1000, false), CeAckAction { flush: None, ack_now: false, ece: false });
        // CE with a delayed ACK pending: flush ACK for 1000 with ECE=0, then ACK now with ECE=1.
        assert_eq!(m.update(true, 2000, true), CeAckAction { flush: Some((1000, false)), ack_now: true, ece: true });
        // Still CE: no forced ACK.
        assert_eq!(m.update(true, 3000, false), CeAckAction { flush: None, ack_now: false, ece: true });
        // Back to not-CE, no delayed ACK pending: just ACK now with ECE=0.
        assert_eq!(m.update(false, 4000, false), CeAckAction { flush: None, ack_now: true, ece: false });
    }
}
