/* DCTCP for the kernel backend, as a BPF struct_ops congestion control ("bpf_dctcp").
 *
 * Data Center TCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) with the rules of Linux
 * net/ipv4/tcp_dctcp.c and include/net/tcp_dctcp.h, written for ccbench from the same
 * description as the simulator's crates/sim/src/cc/dctcp.rs:
 *  - sender: once per RTT (snd_una reaches next_seq) alpha <- alpha - alpha/16 + F/16, F the
 *    fraction of delivered packets that were CE-marked (alpha kept x1024, starts at 1024); on
 *    ECE the core enters CWR with ssthresh = max(cwnd - cwnd*alpha/2, 2); on loss (Recovery,
 *    RTO) ssthresh = max(cwnd/2, 2); growth and undo are Reno's;
 *  - receiver (this program must also be the receiving socket's congestion control): ECE
 *    mirrors the CE state of the last data packet, and a change of CE state is ACKed at once,
 *    after first sending a pending delayed ACK with the old state.
 * TCP_CONG_NEEDS_ECN makes the SYN ask for ECN. Without ECN negotiated the kernel's module
 * switches the socket to Reno's ops; a BPF program cannot swap ops, so it keeps alpha at its
 * initial value and, with no marks ever arriving, behaves as Reno.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U
static const __u32 shift_g = 4;   /* g = 1/16 */

struct dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
	__u32 ca_state;   /* the CA state the last set_state moved to */
};

static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = DCTCP_MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->ca_state = TCP_CA_Open;
	dctcp_reset(tp, ca);
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 dctcp_loss_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);
	__u32 cwnd = tp->snd_cwnd, s;

	ca->loss_cwnd = cwnd;
	s = cwnd - ((cwnd * ca->alpha) >> 11U);
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_dctcp_ssthresh, struct sock *sk)
{
	return dctcp_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);
	__u32 delivered, delivered_ce, alpha, dec;

	if (seq_after(ca->next_seq, tp->snd_una))
		return; /* the observation window has not ended */
	delivered = tp->delivered - ca->old_delivered;
	delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	alpha = ca->alpha;
	/* alpha -= min_not_zero(alpha, alpha >> g): a small alpha still decays to 0 */
	dec = alpha >> shift_g;
	alpha -= dec ? dec : alpha;
	if (delivered_ce) {
		delivered_ce <<= (10 - shift_g);
		delivered_ce /= delivered > 1 ? delivered : 1;
		alpha += delivered_ce;
		if (alpha > DCTCP_MAX_ALPHA)
			alpha = DCTCP_MAX_ALPHA;
	}
	ca->alpha = alpha;
	dctcp_reset(tp, ca);
}

static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->loss_cwnd = cwnd;
	tp->snd_ssthresh = (cwnd >> 1) > 2 ? (cwnd >> 1) : 2;
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_state, struct sock *sk, __u8 new_state)
{
	struct dctcp *ca = ca_priv(sk);

	if (new_state == TCP_CA_Recovery && new_state != ca->ca_state)
		dctcp_react_to_loss(sk);
	ca->ca_state = new_state;
}

static __always_inline void ece_ack_cwr(struct tcp_sock *tp, __u32 ce_state)
{
	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	__u32 new_ce;

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE) {
		new_ce = ev == CA_EVENT_ECN_IS_CE;
		if (ca->ce_state != new_ce) {
			/* the CE state changed: ACK at once; a delayed ACK first, with the old state */
			if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
				ece_ack_cwr(tp, ca->ce_state);
				bpf_tcp_send_ack(tp, ca->prior_rcv_nxt);
			}
			icsk->icsk_ack.pending |= ICSK_ACK_NOW;
		}
		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->ce_state = new_ce;
		ece_ack_cwr(tp, new_ce);
	} else if (ev == CA_EVENT_LOSS) {
		dctcp_react_to_loss(sk);
	}
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_dctcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct dctcp *ca = ca_priv(sk);

	return tp->snd_cwnd > ca->loss_cwnd ? tp->snd_cwnd : ca->loss_cwnd;
}

SEC("struct_ops")
void BPF_PROG(bpf_dctcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, dctcp_loss_ssthresh);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_dctcp = {
	.init = (void *)bpf_dctcp_init,
	.pkts_acked = (void *)bpf_dctcp_pkts_acked,
	.in_ack_event = (void *)bpf_dctcp_update_alpha,
	.cwnd_event = (void *)bpf_dctcp_cwnd_event,
	.ssthresh = (void *)bpf_dctcp_ssthresh,
	.cong_avoid = (void *)bpf_dctcp_cong_avoid,
	.undo_cwnd = (void *)bpf_dctcp_undo_cwnd,
	.set_state = (void *)bpf_dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "bpf_dctcp",
};
