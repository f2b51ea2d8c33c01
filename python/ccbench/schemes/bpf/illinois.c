/* TCP-Illinois for the kernel backend, as a BPF struct_ops congestion control ("bpf_illinois").
 *
 * S. Liu, T. Basar and R. Srikant, "TCP-Illinois: a loss and delay-based congestion control
 * algorithm for high-speed networks", VALUETOOLS 2006, with the rules of Linux
 * net/ipv4/tcp_illinois.c (module defaults win_thresh 15, theta 5), written for ccbench from
 * the same description as the simulator's crates/sim/src/cc/illinois.rs. Once per RTT the
 * average queueing delay da (mean RTT of the round minus the lowest RTT seen) against the
 * largest dm (highest RTT minus lowest) sets the increase alpha (10 packets per RTT while da <=
 * dm/100, falling towards 0.3 as da grows; back to 10 only after theta low-delay rounds) and the
 * decrease beta (1/8 while da <= dm/10, rising linearly to 1/2 at da >= 0.8 dm). Below 15
 * packets it is Reno (alpha 1, beta 1/2). alpha is x128, beta x64; a loss sets ssthresh =
 * cwnd - cwnd * beta.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 illinois_loss_ssthresh(struct sock *sk);

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1U << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10)
#define ALPHA_MAX (10 * ALPHA_SCALE)
#define ALPHA_BASE ALPHA_SCALE
#define RTT_MAX (0xffffffffU / ALPHA_MAX) /* us: keeps the alpha arithmetic in 32 bits */
#define BETA_SHIFT 6
#define BETA_SCALE (1U << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8)
#define BETA_MAX (BETA_SCALE / 2)
#define BETA_BASE BETA_MAX

static const __u32 win_thresh = 15, theta = 5;

struct illinois {
	__u64 sum_rtt;  /* RTT samples of the current round, us */
	__u32 cnt_rtt;
	__u32 base_rtt; /* lowest sample, us */
	__u32 max_rtt;  /* highest sample, us */
	__u32 end_seq;  /* right edge of the current round */
	__u32 alpha;    /* x128 */
	__u32 beta;     /* x64 */
	__u32 acked;    /* packets acked by the current ACK */
	__u32 rtt_low;  /* consecutive rounds with low delay */
	__u8 rtt_above; /* delay has been above dm/100 */
};

static __always_inline void rtt_reset(struct sock *sk, struct illinois *ca)
{
	ca->end_seq = tcp_of(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

SEC("struct_ops")
void BPF_PROG(bpf_illinois_init, struct sock *sk)
{
	struct illinois *ca = ca_priv(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk, ca);
}

SEC("struct_ops")
void BPF_PROG(bpf_illinois_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, illinois_loss_ssthresh);
	struct illinois *ca = ca_priv(sk);
	__s32 rtt = sample->rtt_us;
	__u32 r;

	ca->acked = sample->pkts_acked;
	if (rtt < 0)
		return;
	r = (__u32)rtt > RTT_MAX ? RTT_MAX : (__u32)rtt;
	if (ca->base_rtt > r)
		ca->base_rtt = r;
	if (ca->max_rtt < r)
		ca->max_rtt = r;
	ca->cnt_rtt++;
	ca->sum_rtt += r;
}

static __always_inline __u32 ill_alpha(struct illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100;

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX; /* never above the low-delay zone */
		if (++ca->rtt_low < theta)
			return ca->alpha; /* wait for theta good rounds */
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	/* alpha = k1 / (k2 + da), from amax at d1 down to amin at dm */
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

static __always_inline __u32 ill_beta(__u32 da, __u32 dm)
{
	__u32 d2 = dm / 10, d3;

	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	/* linear from bmin at d2 to bmax at d3 */
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

SEC("struct_ops")
void BPF_PROG(bpf_illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct illinois *ca = ca_priv(sk);
	__u32 dm, da, delta, cwnd;

	if (seq_after(ack, ca->end_seq)) {
		/* once per RTT */
		if (tp->snd_cwnd < win_thresh) {
			ca->alpha = ALPHA_BASE;
			ca->beta = BETA_BASE;
		} else if (ca->cnt_rtt > 0) {
			dm = ca->max_rtt - ca->base_rtt;
			da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;
			ca->alpha = ill_alpha(ca, da, dm);
			ca->beta = ill_beta(da, dm);
		}
		rtt_reset(sk, ca);
	}
	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* cwnd += alpha / cwnd per packet acked */
	tp->snd_cwnd_cnt += ca->acked;
	ca->acked = 1;
	delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
	cwnd = tp->snd_cwnd;
	if (delta >= cwnd) {
		cwnd += delta / cwnd;
		tp->snd_cwnd = cwnd < tp->snd_cwnd_clamp ? cwnd : tp->snd_cwnd_clamp;
		tp->snd_cwnd_cnt = 0;
	}
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 illinois_loss_ssthresh(struct sock *sk)
{
	struct illinois *ca = ca_priv(sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd;
	__u32 s = cwnd - ((cwnd * ca->beta) >> BETA_SHIFT);

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_illinois_ssthresh, struct sock *sk)
{
	return illinois_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_illinois_set_state, struct sock *sk, __u8 new_state)
{
	struct illinois *ca = ca_priv(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk, ca);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_illinois_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_illinois = {
	.init = (void *)bpf_illinois_init,
	.ssthresh = (void *)bpf_illinois_ssthresh,
	.cong_avoid = (void *)bpf_illinois_cong_avoid,
	.set_state = (void *)bpf_illinois_set_state,
	.pkts_acked = (void *)bpf_illinois_pkts_acked,
	.undo_cwnd = (void *)bpf_illinois_undo_cwnd,
	.name = "bpf_illinois",
};
