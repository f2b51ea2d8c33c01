//! `newreno`: Reno's AIMD (`reno.rs`, Linux tcp_cong.c) on an endpoint forced to Linux's
//! non-SACK recovery, i.e. classic NewReno (RFC 6582; Linux net/ipv4/tcp_input.c, `tcp_is_reno()`).
//!
//! Linux has no "newreno" module: NewReno is what the core does for `reno` when SACK is not
//! negotiated (`tcp_is_reno()`): dupACKs are counted as "SACKed" packets (`tcp_add_reno_sack`),
//! the head is marked lost after `reordering` (3) dupACKs (`tcp_newreno_mark_lost`), each
//! partial ACK in Recovery marks and retransmits the next hole, and Recovery is held until
//! something above `high_seq` is acknowledged. This scheme selects that path for its flow: the
//! engine (`tcp::flow_tcp_config`) turns SACK off at both ends of the connection
//! (`needs_non_sack_recovery`), whatever the experiment's `tcp.sack` says. The window rule is
//! exactly Reno's; `reno` with `tcp: {sack: false}` behaves identically.

use super::{reno::Reno, CongestionControl, SchemeInfo, Sock};

#[derive(Debug, Default)]
pub struct NewReno(Reno);

impl NewReno {
    pub fn new() -> Self {
        NewReno(Reno::new())
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.0.ssthresh(sk)
    }
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        self.0.cong_avoid(sk, acked)
    }
    fn needs_non_sack_recovery(&self) -> bool {
        true
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "newreno",
    description: "Classic NewReno: Reno's AIMD with the endpoint forced to non-SACK recovery (3 dupACKs, one retransmission per partial ACK, RFC 6582) for this flow",
    source: "Linux net/ipv4/tcp_cong.c + tcp_input.c non-SACK path (tcp_add_reno_sack, tcp_newreno_mark_lost); RFC 6582",
    params: &[],
    make: |_| Ok(Box::new(NewReno::new())),
}];
