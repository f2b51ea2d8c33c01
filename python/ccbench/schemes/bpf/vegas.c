/* Vegas for the kernel backend, as a BPF struct_ops congestion control ("bpf_vegas").
 *
 * The algorithm of Linux net/ipv4/tcp_vegas.c (Brakmo & Peterson, IEEE JSAC 13(8), 1995, as
 * Linux implements it), written for ccbench from the same description as the simulator's
 * crates/sim/src/cc/vegas.rs: once per RTT, when the ACK passes the snd_nxt of the previous
 * decision, diff = cwnd * (minRTT - baseRTT) / baseRTT packets are queued; slow start ends
 * once diff > gamma (cwnd = actual window + 1), then cwnd += 1 below alpha and -= 1 above
 * beta; with <= 2 RTT samples in the RTT, or outside the Open state, Reno's rules apply.
 * Parameters are the kernel module's defaults (alpha 2, beta 4, gamma 1). The RTT bookkeeping
 * is ccbench_vegas.h's (shared with yeah.c).
 */
#include "ccbench_vegas.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 vegas_loss_ssthresh(struct sock *sk);

static const __u32 alpha = 2, beta = 4, gamma = 1;

SEC("struct_ops")
void BPF_PROG(bpf_vegas_init, struct sock *sk)
{
	vegas_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, vegas_loss_ssthresh);
	vegas_rtt_sample(sk, sample);
}

SEC("struct_ops")
void BPF_PROG(bpf_vegas_set_state, struct sock *sk, __u8 new_state)
{
	vegas_state(sk, new_state);
}

SEC("struct_ops")
void BPF_PROG(bpf_vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	vegas_cwnd_event(sk, ev);
}

SEC("struct_ops")
void BPF_PROG(bpf_vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct vegas *v = ca_priv(sk);
	__u32 cwnd, rtt, base, target, diff, ss;

	if (!v->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!seq_after(ack, v->beg_snd_nxt)) {
		if (in_slow_start(tp))
			tcp_slow_start(tp, acked);
		return;
	}
	/* once per RTT */
	v->beg_snd_nxt = tp->snd_nxt;
	if (v->cnt_rtt <= 2) {
		/* probably only delayed ACKs: Reno */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		cwnd = tp->snd_cwnd;
		rtt = v->min_rtt;
		base = v->base_rtt;
		target = (__u32)((__u64)cwnd * base / rtt);
		diff = cwnd * (rtt - base) / base; /* packets queued, u32 as the kernel's */
		if (diff > gamma && in_slow_start(tp)) {
			/* too fast: the actual rate (+1 against truncation), leave slow start */
			cwnd = cwnd < target + 1 ? cwnd : target + 1;
			tp->snd_cwnd = cwnd;
			if (tp->snd_ssthresh > cwnd)
				tp->snd_ssthresh = cwnd;
		} else if (in_slow_start(tp)) {
			tcp_slow_start(tp, acked);
		} else if (diff > beta) {
			tp->snd_cwnd = cwnd - 1;
			if (tp->snd_ssthresh > cwnd - 1)
				tp->snd_ssthresh = cwnd - 1;
		} else if (diff < alpha) {
			tp->snd_cwnd = cwnd + 1;
		}
		cwnd = tp->snd_cwnd;
		if (cwnd < 2)
			tp->snd_cwnd = 2;
		else if (cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
		/* tcp_current_ssthresh() in the Open state: max(ssthresh, 3/4 cwnd) */
		cwnd = tp->snd_cwnd;
		ss = (cwnd >> 1) + (cwnd >> 2);
		if (tp->snd_ssthresh < ss)
			tp->snd_ssthresh = ss;
	}
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_INIT;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 vegas_loss_ssthresh(struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_vegas_ssthresh, struct sock *sk)
{
	return vegas_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_vegas = {
	.init = (void *)bpf_vegas_init,
	.ssthresh = (void *)bpf_vegas_ssthresh,
	.cong_avoid = (void *)bpf_vegas_cong_avoid,
	.set_state = (void *)bpf_vegas_set_state,
	.cwnd_event = (void *)bpf_vegas_cwnd_event,
	.pkts_acked = (void *)bpf_vegas_pkts_acked,
	.undo_cwnd = (void *)bpf_vegas_undo_cwnd,
	.name = "bpf_vegas",
};
