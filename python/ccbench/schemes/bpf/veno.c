/* TCP Veno for the kernel backend, as a BPF struct_ops congestion control ("bpf_veno").
 *
 * C. P. Fu and S. C. Liew, "TCP Veno: TCP Enhancement for Transmission Over Wireless Access
 * Networks", IEEE JSAC 21(2), 2003, with the rules of Linux net/ipv4/tcp_veno.c (4.x-6.x),
 * written for ccbench from the same description as the simulator's crates/sim/src/cc/veno.rs.
 * Vegas-style RTT samples (basertt: lifetime minimum; minrtt: minimum since the previous
 * cong_avoid call; both +1 us) give the backlog diff = cwnd - cwnd * basertt / minrtt with one
 * fractional bit. Congestion avoidance: diff < beta (3 packets) grows as Reno; otherwise one
 * segment every other cwnd's worth of ACKed packets. A loss with diff < beta is taken as random
 * (ssthresh = 4/5 cwnd), otherwise ssthresh = cwnd / 2. As in the kernel, the sample count is
 * never reset and minrtt is forgotten after every cong_avoid call.
 *
 * Differences: the module of this kernel counts ACKed packets in congestion avoidance, as here;
 * the simulator's veno.rs models 3.x, which counted ACKs (one per call) — with delayed ACKs
 * that grows half as fast.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 veno_loss_ssthresh(struct sock *sk);

#define V_PARAM_SHIFT 1
#define VENO_RTT_INIT 0x7fffffff

static const __u32 beta = 3 << V_PARAM_SHIFT;

struct veno {
	__u32 cntrtt;  /* RTT samples in the connection's life */
	__u32 minrtt;  /* minimum since the last cong_avoid (+1 us) */
	__u32 basertt; /* lifetime minimum (+1 us) */
	__u32 diff;    /* backlog, packets << V_PARAM_SHIFT */
	__u8 doing_veno_now;
	__u8 inc;      /* congestive state: grow in this cwnd period */
};

static __always_inline void veno_enable(struct veno *v)
{
	v->doing_veno_now = 1;
	v->minrtt = VENO_RTT_INIT;
}

static __always_inline void veno_reset(struct veno *v)
{
	v->basertt = VENO_RTT_INIT;
	v->inc = 1;
	veno_enable(v);
}

SEC("struct_ops")
void BPF_PROG(bpf_veno_init, struct sock *sk)
{
	struct veno *v = ca_priv(sk);

	v->cntrtt = 0;
	v->diff = 0;
	veno_reset(v);
}

SEC("struct_ops")
void BPF_PROG(bpf_veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, veno_loss_ssthresh);
	struct veno *v = ca_priv(sk);
	__s32 rtt = sample->rtt_us;
	__u32 vrtt;

	if (rtt < 0)
		return;
	vrtt = (__u32)rtt + 1;
	if (vrtt < v->basertt)
		v->basertt = vrtt;
	if (vrtt < v->minrtt)
		v->minrtt = vrtt;
	v->cntrtt++;
}

SEC("struct_ops")
void BPF_PROG(bpf_veno_set_state, struct sock *sk, __u8 new_state)
{
	struct veno *v = ca_priv(sk);

	if (new_state == TCP_CA_Open)
		veno_enable(v);
	else
		v->doing_veno_now = 0;
}

SEC("struct_ops")
void BPF_PROG(bpf_veno_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		veno_reset(ca_priv(sk));
}

SEC("struct_ops")
void BPF_PROG(bpf_veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct veno *v = ca_priv(sk);
	__u32 cwnd;
	__u64 target;

	if (!v->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (v->cntrtt <= 2) {
		/* too few samples for a backlog: Reno */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		cwnd = tp->snd_cwnd;
		target = ((__u64)cwnd * v->basertt) << V_PARAM_SHIFT;
		target /= v->minrtt;
		v->diff = (cwnd << V_PARAM_SHIFT) - (__u32)target;
		if (in_slow_start(tp)) {
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				goto done;
		}
		if (v->diff < beta) {
			/* non-congestive: +1 per cwnd packets acked */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		} else if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			/* congestive: +1 every other such period */
			if (v->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
				tp->snd_cwnd = tp->snd_cwnd + 1;
				v->inc = 0;
			} else {
				v->inc = 1;
			}
			tp->snd_cwnd_cnt = 0;
		} else {
			tp->snd_cwnd_cnt += acked;
		}
done:
		cwnd = tp->snd_cwnd;
		if (cwnd < 2)
			tp->snd_cwnd = 2;
		else if (cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
	}
	v->minrtt = VENO_RTT_INIT;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 veno_loss_ssthresh(struct sock *sk)
{
	struct veno *v = ca_priv(sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd;
	__u32 s = v->diff < beta ? cwnd * 4 / 5 : cwnd >> 1;

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_veno_ssthresh, struct sock *sk)
{
	return veno_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_veno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_veno = {
	.init = (void *)bpf_veno_init,
	.ssthresh = (void *)bpf_veno_ssthresh,
	.cong_avoid = (void *)bpf_veno_cong_avoid,
	.set_state = (void *)bpf_veno_set_state,
	.cwnd_event = (void *)bpf_veno_cwnd_event,
	.pkts_acked = (void *)bpf_veno_pkts_acked,
	.undo_cwnd = (void *)bpf_veno_undo_cwnd,
	.name = "bpf_veno",
};
