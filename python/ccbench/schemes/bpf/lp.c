/* TCP-LP (Low Priority) for the kernel backend, as a BPF struct_ops congestion control ("bpf_lp").
 *
 * A. Kuzmanovic and E. W. Knightly, "TCP-LP: Low-Priority Service via End-Point Congestion
 * Control", IEEE/ACM ToN 14(4), 2006, with the rules of Linux net/ipv4/tcp_lp.c, written for
 * ccbench from the same description as the simulator's crates/sim/src/cc/lp.rs. Reno, except
 * that LP infers early congestion from a rising one-way delay and yields before any loss: a
 * smoothed delay sowd (EWMA 7/8, kept x8) at or above owd_min + 15 % of (owd_max - owd_min)
 * halves cwnd, or sets it to 1 when it happens again within the inference time (3 x the latest
 * delay sample) after the previous one; owd_min and owd_max then restart at sowd and 2 sowd.
 * Within the inference time Reno's growth is suspended. Losses are Reno's (ssthresh = cwnd/2).
 * owd_max forgets the largest sample in favour of the one below it. Wrapping u32 arithmetic of
 * the threshold as the module's (before any sample the test passes).
 *
 * Differences from the module: the delay is the ACK's RTT sample (us), as in the simulator,
 * not the module's timestamp one-way delay (rcv_tsval scaled by an estimate of the peer's clock
 * rate, minus rcv_tsecr, in ms); the inference time is 3 x that sample (module: 3 x (now -
 * rcv_tsecr)). With net.ipv4.tcp_timestamps = 1 (the namespaces' default) each connection's
 * timestamps carry a random offset and the module's u32 arithmetic on them mostly never infers
 * congestion (lp.rs explains); the RTT is the same queueing signal plus the constant reverse
 * delay. The peer-clock estimator is kept only for its start-up: the first delay sample sets
 * the reference and is not used.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 lp_loss_ssthresh(struct sock *sk);

#define LP_VALID_RHZ (1 << 0)
#define LP_VALID_OWD (1 << 1)
#define LP_WITHIN_THR (1 << 3)
#define LP_WITHIN_INF (1 << 4)

struct lp {
	__u32 flag;
	__u32 sowd;        /* smoothed delay x 8, us */
	__u32 owd_min;
	__u32 owd_max;
	__u32 owd_max_rsv; /* the largest sample; owd_max is the one below it */
	__u32 have_ref;    /* the first sample (the clock-rate reference) has been seen */
	__u64 last_drop;   /* tcp_mstamp (us) of the last early-congestion cut, 0: none */
	__u64 inference;   /* us */
};

SEC("struct_ops")
void BPF_PROG(bpf_lp_init, struct sock *sk)
{
	struct lp *lp = ca_priv(sk);

	lp->flag = 0;
	lp->sowd = 0;
	lp->owd_min = 0xffffffff;
	lp->owd_max = 0;
	lp->owd_max_rsv = 0;
	lp->have_ref = 0;
	lp->last_drop = 0;
	lp->inference = 0;
}

static __always_inline void lp_delay_sample(struct lp *lp, __u32 m)
{
	if (lp->have_ref) {
		lp->flag |= LP_VALID_RHZ;
	} else {
		lp->have_ref = 1;
		lp->flag &= ~LP_VALID_RHZ;
	}
	if (m > 0)
		lp->flag |= LP_VALID_OWD;
	else
		lp->flag &= ~LP_VALID_OWD;
	if (!(lp->flag & LP_VALID_RHZ) || !(lp->flag & LP_VALID_OWD))
		return;
	if (m < lp->owd_min)
		lp->owd_min = m;
	if (m > lp->owd_max) {
		if (m > lp->owd_max_rsv) {
			lp->owd_max = lp->owd_max_rsv ? lp->owd_max_rsv : m;
			lp->owd_max_rsv = m;
		} else {
			lp->owd_max = m;
		}
	}
	if (lp->sowd)
		lp->sowd = lp->sowd + m - (lp->sowd >> 3); /* 7/8 old + 1/8 new */
	else
		lp->sowd = m << 3;
}

SEC("struct_ops")
void BPF_PROG(bpf_lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, lp_loss_ssthresh);
	struct tcp_sock *tp = tcp_of(sk);
	struct lp *lp = ca_priv(sk);
	__u64 now = tp->tcp_mstamp;
	__s32 rtt = sample->rtt_us;
	__u32 cwnd, thr;

	if (rtt > 0) {
		lp_delay_sample(lp, (__u32)rtt);
		lp->inference = 3 * (__u64)rtt;
	}
	if (lp->last_drop && now - lp->last_drop < lp->inference)
		lp->flag |= LP_WITHIN_INF;
	else
		lp->flag &= ~LP_WITHIN_INF;
	thr = lp->owd_min + 15 * (lp->owd_max - lp->owd_min) / 100;
	if ((lp->sowd >> 3) < thr) {
		lp->flag |= LP_WITHIN_THR;
		return;
	}
	lp->flag &= ~LP_WITHIN_THR;
	/* early congestion: restart the range at the smoothed delay, then yield */
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;
	if (lp->flag & LP_WITHIN_INF) {
		tp->snd_cwnd = 1;
	} else {
		cwnd = tp->snd_cwnd >> 1;
		tp->snd_cwnd = cwnd > 1 ? cwnd : 1;
	}
	lp->last_drop = now;
}

SEC("struct_ops")
void BPF_PROG(bpf_lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct lp *lp = ca_priv(sk);

	if (!(lp->flag & LP_WITHIN_INF))
		tcp_reno_cong_avoid(sk, ack, acked);
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 lp_loss_ssthresh(struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_lp_ssthresh, struct sock *sk)
{
	return lp_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_lp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_lp = {
	.init = (void *)bpf_lp_init,
	.ssthresh = (void *)bpf_lp_ssthresh,
	.cong_avoid = (void *)bpf_lp_cong_avoid,
	.pkts_acked = (void *)bpf_lp_pkts_acked,
	.undo_cwnd = (void *)bpf_lp_undo_cwnd,
	.name = "bpf_lp",
};
