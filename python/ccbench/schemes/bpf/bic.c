/* BIC-TCP for the kernel backend, as a BPF struct_ops congestion control ("bpf_bic").
 *
 * L. Xu, K. Harfoush and I. Rhee, "Binary Increase Congestion Control (BIC) for Fast
 * Long-Distance Networks", INFOCOM 2004, with the rules of Linux net/ipv4/tcp_bic.c (4.x-6.x,
 * module defaults), written for ccbench from the same description as the simulator's
 * crates/sim/src/cc/bic.rs. At or below low_window (14) BIC is Reno. Above it, after a loss at
 * W_max the window searches towards W_max (per RTT +(W_max - cwnd)/4, at most 16 packets, a
 * crawl of 1/smooth_part within 4 of W_max), then probes past it (slowly, then accelerating,
 * then 16 per RTT). The per-ACK divisor cnt is scaled by the measured packets per ACK (EWMA
 * 15/16, updated in the Open state). A loss sets W_max (fast convergence: lower if the window
 * did not regain the previous one) and ssthresh = cwnd * 819/1024 (cwnd/2 at or below 14).
 *
 * Differences: "jiffies" are the socket's tcp_mstamp in milliseconds (HZ = 1000, a 31-ms hold-off between cnt updates at the same
 * window, as the simulator assumes); the CA state for the ACK-ratio update is tracked in the
 * private area from set_state rather than read from the icsk_ca_state bitfield. Undo is Reno's,
 * as in the kernel since 4.x (the simulator models 3.x: max(cwnd, cwnd at the loss)).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024
#define BICTCP_B 4
#define ACK_RATIO_SHIFT 4
#define HZ 1000

static const __u32 fast_convergence = 1, max_increment = 16, low_window = 14, beta = 819,
		   smooth_part = 20;

struct bic {
	__u32 cnt;           /* cwnd += 1 after cnt packets acked */
	__u32 last_max_cwnd; /* W_max */
	__u32 last_cwnd;     /* cwnd at the last cnt update */
	__u32 last_time;     /* its time, ms */
	__u32 delayed_ack;   /* packets per ACK << ACK_RATIO_SHIFT */
	__u8 ca_state;       /* from set_state */
};

static __always_inline void bic_reset(struct bic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

static __always_inline void bic_update(struct bic *ca, __u32 cwnd, __u32 now)
{
	__u32 w_max = ca->last_max_cwnd, dist, cnt;

	if (ca->last_cwnd == cwnd && now - ca->last_time <= HZ / 32)
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;
	if (cwnd <= low_window) {
		ca->cnt = cwnd; /* Reno */
		return;
	}
	if (cwnd < w_max) {
		dist = (w_max - cwnd) / BICTCP_B;
		if (dist > max_increment)
			cnt = cwnd / max_increment;          /* far below: linear */
		else if (dist <= 1)
			cnt = cwnd * smooth_part / BICTCP_B; /* next to W_max: crawl */
		else
			cnt = cwnd / dist;                   /* binary search */
	} else if (cwnd < w_max + BICTCP_B) {
		cnt = cwnd * smooth_part / BICTCP_B;         /* just past W_max: crawl */
	} else if (cwnd < w_max + max_increment * (BICTCP_B - 1)) {
		cnt = cwnd * (BICTCP_B - 1) / (cwnd - w_max); /* probing, accelerating */
	} else {
		cnt = cwnd / max_increment;                  /* probing: linear */
	}
	/* no loss yet: at least 5 % per RTT */
	if (ca->last_max_cwnd == 0 && cnt > 20)
		cnt = 20;
	if (ca->delayed_ack)
		cnt = (cnt << ACK_RATIO_SHIFT) / ca->delayed_ack;
	ca->cnt = cnt ? cnt : 1;
}

SEC("struct_ops")
void BPF_PROG(bpf_bic_init, struct sock *sk)
{
	struct bic *ca = ca_priv(sk);

	bic_reset(ca);
	ca->ca_state = TCP_CA_Open;
}

SEC("struct_ops")
void BPF_PROG(bpf_bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct bic *ca = ca_priv(sk);

	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bic_update(ca, tp->snd_cwnd, (__u32)(tp->tcp_mstamp / 1000));
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 bic_loss_ssthresh(struct sock *sk)
{
	struct bic *ca = ca_priv(sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd, s;

	if (cwnd < ca->last_max_cwnd && fast_convergence)
		ca->last_max_cwnd = cwnd * (BICTCP_BETA_SCALE + beta) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
	s = cwnd <= low_window ? cwnd >> 1 : cwnd * beta / BICTCP_BETA_SCALE;
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_bic_ssthresh, struct sock *sk)
{
	return bic_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_bic_set_state, struct sock *sk, __u8 new_state)
{
	struct bic *ca = ca_priv(sk);

	if (new_state == TCP_CA_Loss)
		bic_reset(ca);
	ca->ca_state = new_state;
}

SEC("struct_ops")
void BPF_PROG(bpf_bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, bic_loss_ssthresh);
	struct bic *ca = ca_priv(sk);

	if (ca->ca_state == TCP_CA_Open)
		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_bic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_bic = {
	.init = (void *)bpf_bic_init,
	.ssthresh = (void *)bpf_bic_ssthresh,
	.cong_avoid = (void *)bpf_bic_cong_avoid,
	.set_state = (void *)bpf_bic_set_state,
	.pkts_acked = (void *)bpf_bic_pkts_acked,
	.undo_cwnd = (void *)bpf_bic_undo_cwnd,
	.name = "bpf_bic",
};
