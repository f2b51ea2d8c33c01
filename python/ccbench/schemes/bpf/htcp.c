/* H-TCP for the kernel backend, as a BPF struct_ops congestion control ("bpf_htcp").
 *
 * R. Shorten and D. Leith, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
 * 2004, with the rules of Linux net/ipv4/tcp_htcp.c (5.x/6.x, use_rtt_scaling and
 * use_bandwidth_switch on), written for ccbench from the same description as the simulator's
 * crates/sim/src/cc/htcp.rs. The increase per RTT alpha grows with the time D since the last
 * congestion event: 1 for D <= 1 s, else 1 + 10 (D - 1) + ((D - 1) / 2)^2, scaled by minRTT /
 * 100 ms (ratio clamped to [0.5, 10]) and by 2 (1 - beta). A loss sets ssthresh = cwnd * beta,
 * beta = minRTT / maxRTT clamped to [0.5, 0.8], or 0.5 when the achieved throughput moved by
 * more than 20 % since the previous event. Fixed point x128; times in ms ("jiffies" at HZ =
 * 1000, as the simulator assumes).
 *
 * Differences: time is the socket's tcp_mstamp in ms rather than jiffies; the CA state (maxRTT and throughput are measured in Open/Disorder
 * only) is tracked in the private area from set_state rather than read from the icsk_ca_state
 * bitfield.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_BASE (1 << 7)
#define BETA_MIN (1 << 6)
#define BETA_MAX 102
#define HZ 1000

struct htcp {
	__u32 alpha;          /* increase per RTT, x128 */
	__u32 packetcount;    /* packets acked since lasttime */
	__u32 minRTT, maxRTT; /* ms; 0 = none yet */
	__u32 last_cong;      /* time of the last congestion event, ms */
	__u32 undo_last_cong, undo_maxRTT, undo_old_maxB; /* undo_last_cong 0 = nothing to undo */
	__u32 minB, maxB, old_maxB, Bi; /* achieved throughput, packets/s */
	__u32 lasttime;       /* start of the current throughput sample, ms */
	__u16 pkts_acked;     /* of the last ACK in Open: the growth credit */
	__u8 beta;            /* x128 */
	__u8 modeswitch;      /* adaptive beta allowed (one event seen without a switch) */
	__u8 ca_state;        /* from set_state */
};

static __always_inline __u32 now_ms(struct sock *sk)
{
	return (__u32)(tcp_of(sk)->tcp_mstamp / 1000);
}

static __always_inline void htcp_alpha_update(struct htcp *ca, __u32 now)
{
	__u32 factor = 1, diff = now - ca->last_cong, scale;

	if (diff > HZ) {
		diff -= HZ;
		factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
	}
	if (ca->minRTT) {
		scale = (HZ << 3) / (10 * ca->minRTT); /* 8 x 100 ms / minRTT, in [0.5, 10] x 8 */
		if (scale < (1U << 2))
			scale = 1U << 2;
		if (scale > (10U << 3))
			scale = 10U << 3;
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}
	ca->alpha = 2 * factor * ((1 << 7) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

static __always_inline void htcp_beta_update(struct htcp *ca, __u32 minRTT, __u32 maxRTT)
{
	__u32 maxB = ca->maxB, old_maxB = ca->old_maxB, b;

	ca->old_maxB = maxB;
	/* bandwidth switch: 5 maxB outside [4, 6] old_maxB (wrapping, as the kernel's between()) */
	if (6 * old_maxB - 4 * old_maxB < 5 * maxB - 4 * old_maxB) {
		ca->beta = BETA_MIN;
		ca->modeswitch = 0;
		return;
	}
	if (ca->modeswitch && minRTT > 10 && maxRTT) {
		b = (minRTT << 7) / maxRTT;
		if (b < BETA_MIN)
			b = BETA_MIN;
		if (b > BETA_MAX)
			b = BETA_MAX;
		ca->beta = b;
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

static __always_inline void htcp_reset(struct htcp *ca, __u32 now)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_maxRTT = ca->maxRTT;
	ca->undo_old_maxB = ca->old_maxB;
	ca->last_cong = now;
}

SEC("struct_ops")
void BPF_PROG(bpf_htcp_init, struct sock *sk)
{
	struct htcp *ca = ca_priv(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->pkts_acked = 1;
	ca->last_cong = now_ms(sk);
	ca->ca_state = TCP_CA_Open;
}

SEC("struct_ops")
void BPF_PROG(bpf_htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct htcp *ca = ca_priv(sk);

	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* cwnd += alpha / cwnd per packet */
	if ((__u64)tp->snd_cwnd_cnt * ca->alpha >> 7 >= tp->snd_cwnd) {
		if (tp->snd_cwnd < tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd + 1;
		tp->snd_cwnd_cnt = 0;
		htcp_alpha_update(ca, now_ms(sk));
	} else {
		tp->snd_cwnd_cnt += ca->pkts_acked;
	}
	ca->pkts_acked = 1;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 htcp_loss_ssthresh(struct sock *sk)
{
	struct htcp *ca = ca_priv(sk);
	__u32 minRTT = ca->minRTT, maxRTT = ca->maxRTT, s;

	htcp_beta_update(ca, minRTT, maxRTT);
	htcp_alpha_update(ca, now_ms(sk));
	/* slowly fading memory of maxRTT */
	if (minRTT > 0 && maxRTT > minRTT)
		ca->maxRTT = minRTT + (maxRTT - minRTT) * 95 / 100;
	s = (__u32)(((__u64)tcp_of(sk)->snd_cwnd * ca->beta) >> 7);
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_htcp_ssthresh, struct sock *sk)
{
	return htcp_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_htcp_set_state, struct sock *sk, __u8 new_state)
{
	struct htcp *ca = ca_priv(sk);

	if (new_state == TCP_CA_Open) {
		if (ca->undo_last_cong) {
			ca->last_cong = now_ms(sk);
			ca->undo_last_cong = 0;
		}
	} else if (new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery ||
		   new_state == TCP_CA_Loss) {
		htcp_reset(ca, now_ms(sk));
	}
	ca->ca_state = new_state;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_htcp_undo_cwnd, struct sock *sk)
{
	struct htcp *ca = ca_priv(sk);

	if (ca->undo_last_cong) {
		ca->last_cong = ca->undo_last_cong;
		ca->maxRTT = ca->undo_maxRTT;
		ca->old_maxB = ca->undo_old_maxB;
		ca->undo_last_cong = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, htcp_loss_ssthresh);
	struct tcp_sock *tp = tcp_of(sk);
	struct htcp *ca = ca_priv(sk);
	__u32 now = now_ms(sk), srtt, a, cur;

	if (ca->ca_state == TCP_CA_Open)
		ca->pkts_acked = (__u16)sample->pkts_acked;
	if (sample->rtt_us > 0) {
		srtt = ((__u32)sample->rtt_us + 999) / 1000; /* usecs_to_jiffies rounds up */
		if (ca->minRTT > srtt || !ca->minRTT)
			ca->minRTT = srtt;
		if (ca->ca_state == TCP_CA_Open) {
			if (ca->maxRTT < ca->minRTT)
				ca->maxRTT = ca->minRTT;
			/* upward steps of at most 20 ms */
			if (ca->maxRTT < srtt && srtt <= ca->maxRTT + 20)
				ca->maxRTT = srtt;
		}
	}
	/* achieved throughput, in Open and Disorder only */
	if (ca->ca_state != TCP_CA_Open && ca->ca_state != TCP_CA_Disorder) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}
	ca->packetcount += sample->pkts_acked;
	a = ca->alpha >> 7;
	if (ca->packetcount >= tp->snd_cwnd - (a ? a : 1) && ca->minRTT > 0 &&
	    now - ca->lasttime >= ca->minRTT) {
		cur = (__u32)((__u64)ca->packetcount * HZ / (now - ca->lasttime));
		if ((now - ca->last_cong) / ca->minRTT <= 3) {
			/* just after a backoff */
			ca->minB = cur;
			ca->maxB = cur;
			ca->Bi = cur;
		} else {
			ca->Bi = (3 * ca->Bi + cur) / 4;
			if (ca->Bi > ca->maxB)
				ca->maxB = ca->Bi;
			if (ca->minB > ca->maxB)
				ca->minB = ca->maxB;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_htcp = {
	.init = (void *)bpf_htcp_init,
	.ssthresh = (void *)bpf_htcp_ssthresh,
	.cong_avoid = (void *)bpf_htcp_cong_avoid,
	.set_state = (void *)bpf_htcp_set_state,
	.undo_cwnd = (void *)bpf_htcp_undo_cwnd,
	.pkts_acked = (void *)bpf_htcp_pkts_acked,
	.name = "bpf_htcp",
};
