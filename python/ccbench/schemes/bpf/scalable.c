/* Scalable TCP for the kernel backend, as a BPF struct_ops congestion control ("bpf_scalable").
 *
 * T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks", ACM CCR
 * 33(2), 2003, with the rules of Linux net/ipv4/tcp_scalable.c (5.x/6.x), written for ccbench
 * from the same description as the simulator's crates/sim/src/cc/scalable.rs: slow start as
 * Reno; in congestion avoidance one segment per min(cwnd, 100) packets acked (Reno below 100
 * packets, +1 % per RTT above); a loss sets ssthresh = cwnd - cwnd/8.
 *
 * Growth only while the window limits the sender (tcp_is_cwnd_limited(), as the module).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define SCALABLE_AI_CNT 100U
#define SCALABLE_MD_SCALE 3

SEC("struct_ops")
void BPF_PROG(bpf_scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 w;

	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	w = tp->snd_cwnd < SCALABLE_AI_CNT ? tp->snd_cwnd : SCALABLE_AI_CNT;
	tcp_cong_avoid_ai(tp, w, acked);
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 scalable_loss_ssthresh(struct sock *sk)
{
	__u32 cwnd = tcp_of(sk)->snd_cwnd;
	__u32 s = cwnd - (cwnd >> SCALABLE_MD_SCALE);

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_scalable_ssthresh, struct sock *sk)
{
	return scalable_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_scalable_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, scalable_loss_ssthresh);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_scalable = {
	.ssthresh = (void *)bpf_scalable_ssthresh,
	.pkts_acked = (void *)bpf_scalable_pkts_acked,
	.cong_avoid = (void *)bpf_scalable_cong_avoid,
	.undo_cwnd = (void *)bpf_scalable_undo_cwnd,
	.name = "bpf_scalable",
};
