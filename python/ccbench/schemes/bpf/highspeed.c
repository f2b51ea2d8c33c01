/* HighSpeed TCP for the kernel backend, as a BPF struct_ops congestion control
 * ("bpf_highspeed").
 *
 * S. Floyd, RFC 3649, with the rules of Linux net/ipv4/tcp_highspeed.c (5.x/6.x), written for
 * ccbench from the same description as the simulator's crates/sim/src/cc/highspeed.rs: in
 * congestion avoidance each ACK adds a(w) = row + 1 credits and cwnd grows by one per cwnd
 * credits; a loss sets ssthresh = cwnd - cwnd * b(w), b(w) = md / 256; the row is the first of
 * RFC 3649's Appendix B table whose window is >= cwnd, moved incrementally on each CA ACK.
 *
 * Difference from the kernel module: no snd_cwnd_clamp of 2^32/128 packets at init (the clamp is not writable from a struct_ops program; windows that large do not occur
 * on the links ccbench emulates).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define ROWS 72

/* RFC 3649 Appendix B: cwnd upper bound of each row (packets) and b(w) x 256 */
static const __u32 row_cwnd[ROWS] = {
	38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039,
	3399, 3778, 4177, 4596, 5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991,
	10661, 11358, 12082, 12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965,
	21013, 22101, 23230, 24402, 25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586,
	37253, 38992, 40808, 42707, 44694, 46776, 48961, 51258, 53677, 56230, 58932, 61799,
	64851, 68113, 71617, 75401, 79517, 84035, 89053,
};
static const __u32 row_md[ROWS] = {
	128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65, 64, 62, 61,
	60, 59, 58, 57, 56, 55, 54, 53, 52, 52, 51, 50, 49, 48, 48, 47, 46, 45, 45, 44, 43, 43,
	42, 41, 41, 40, 39, 39, 38, 38, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32, 31, 30, 30, 29,
	28, 28, 27, 26, 26, 25, 24,
};

struct hstcp {
	__u32 ai; /* table row */
};

SEC("struct_ops")
void BPF_PROG(bpf_highspeed_init, struct sock *sk)
{
	struct hstcp *ca = ca_priv(sk);

	ca->ai = 0;
}

SEC("struct_ops")
void BPF_PROG(bpf_highspeed_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hstcp *ca = ca_priv(sk);
	__u32 cwnd = tp->snd_cwnd, ai, i;

	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* the row with vals[ai - 1] < cwnd <= vals[ai] (or the last row): the first row whose
	 * window is >= cwnd, where the kernel's up/down loops from the previous row also land */
	ai = ROWS - 1;
	for (i = 0; i < ROWS; i++) {
		if (cwnd <= row_cwnd[i]) {
			ai = i;
			break;
		}
	}
	ca->ai = ai;
	/* cwnd += a(w) / cwnd per ACK */
	tp->snd_cwnd_cnt += ai + 1;
	if (tp->snd_cwnd_cnt >= cwnd) {
		tp->snd_cwnd_cnt -= cwnd;
		tp->snd_cwnd = cwnd + 1;
	}
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 highspeed_loss_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hstcp *ca = ca_priv(sk);
	__u32 ai = ca->ai < ROWS ? ca->ai : ROWS - 1;
	__u32 cwnd = tp->snd_cwnd;
	__u32 s = cwnd - (__u32)(((__u64)cwnd * row_md[ai]) >> 8);

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_highspeed_ssthresh, struct sock *sk)
{
	return highspeed_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_highspeed_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_highspeed_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, highspeed_loss_ssthresh);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_highspeed = {
	.init = (void *)bpf_highspeed_init,
	.pkts_acked = (void *)bpf_highspeed_pkts_acked,
	.ssthresh = (void *)bpf_highspeed_ssthresh,
	.cong_avoid = (void *)bpf_highspeed_cong_avoid,
	.undo_cwnd = (void *)bpf_highspeed_undo_cwnd,
	.name = "bpf_highspeed",
};
