/* YeAH-TCP for the kernel backend, as a BPF struct_ops congestion control ("bpf_yeah").
 *
 * A. Baiocchi, A. P. Castellani and F. Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
 * PFLDnet 2007, with the rules of Linux net/ipv4/tcp_yeah.c (4.x-6.x), written for ccbench from
 * the same description as the simulator's crates/sim/src/cc/yeah.rs. Vegas's RTT bookkeeping
 * (minRTT of the last RTT, lifetime baseRTT, both +1 us) gives, once per RTT with at least 3
 * samples, the backlog queue = cwnd * (minRTT - baseRTT) / minRTT packets. Congestion avoidance
 * is in fast mode (Scalable: +1 per min(cwnd, 100) packets acked) while queue <= 80 and the
 * queueing delay <= baseRTT / 8, otherwise in slow mode (Reno: +1 per cwnd packets acked). In
 * slow mode a queue above 80 packets triggers precautionary decongestion: cwnd loses
 * min(queue, cwnd/2) packets (not below reno_count, the estimated window of competing Reno
 * flows) and ssthresh = cwnd. On loss the reduction is the last queue estimate, between cwnd/8
 * and cwnd/2, or a halving after 16 RTTs in a row in slow mode (competing with Reno).
 * As the module, YeAH ignores Vegas's doing_vegas_now: set_state and cwnd_event only restart
 * the per-RTT bookkeeping.
 *
 * Differences from the module: the snd_cwnd_clamp of 2^32/128 set at init is not writable from
 * struct_ops (never reached); no get_info. The simulator's yeah.rs models 3.x: its slow mode
 * counts one per ACK (with delayed ACKs: half this program's growth), its fast mode adds 1
 * once the count exceeds min(cwnd, 100) rather than reaching it, and slow start lasts while
 * cwnd <= ssthresh.
 */
#include "ccbench_vegas.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 yeah_loss_ssthresh(struct sock *sk);

#define TCP_YEAH_ALPHA 80    /* packets queued at the bottleneck before decongestion */
#define TCP_YEAH_GAMMA 1     /* 1/GAMMA of the queue removed per RTT */
#define TCP_YEAH_DELTA 3     /* log2 of the least fraction of cwnd removed on loss */
#define TCP_YEAH_EPSILON 1   /* log2 of the largest fraction removed by decongestion */
#define TCP_YEAH_PHY 8       /* queueing delay tolerated: baseRTT / PHY */
#define TCP_YEAH_RHO 16      /* slow-mode RTTs in a row that mean Reno competition on loss */
#define TCP_YEAH_ZETA 50     /* fast-mode RTTs after which reno_count restarts */
#define TCP_SCALABLE_AI_CNT 100

struct yeah {
	struct vegas v; /* first, as ccbench_vegas.h wants (the module's beg_snd_una and
			 * beg_snd_cwnd are left out: nothing reads them) */
	__u32 last_q;         /* queue estimate of the last per-RTT step, packets */
	__u32 doing_reno_now; /* slow-mode RTTs in a row (0: fast mode) */
	__u32 reno_count;
	__u32 fast_count;
};

SEC("struct_ops")
void BPF_PROG(bpf_yeah_init, struct sock *sk)
{
	struct yeah *y = ca_priv(sk);

	vegas_reset(sk);
	y->doing_reno_now = 0;
	y->last_q = 0;
	y->reno_count = 2;
	y->fast_count = 0;
}

SEC("struct_ops")
void BPF_PROG(bpf_yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, yeah_loss_ssthresh);
	vegas_rtt_sample(sk, sample);
}

SEC("struct_ops")
void BPF_PROG(bpf_yeah_set_state, struct sock *sk, __u8 new_state)
{
	vegas_state(sk, new_state);
}

SEC("struct_ops")
void BPF_PROG(bpf_yeah_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	vegas_cwnd_event(sk, ev);
}

SEC("struct_ops")
void BPF_PROG(bpf_yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct yeah *y = ca_priv(sk);
	__u32 cwnd, rtt, base, queue, reduction;

	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			goto per_rtt;
	}
	cwnd = tp->snd_cwnd;
	if (!y->doing_reno_now) /* fast mode: Scalable */
		tcp_cong_avoid_ai(tp, cwnd < TCP_SCALABLE_AI_CNT ? cwnd : TCP_SCALABLE_AI_CNT, acked);
	else /* slow mode: Reno */
		tcp_cong_avoid_ai(tp, cwnd, acked);
per_rtt:
	if (!seq_after(ack, y->v.beg_snd_nxt))
		return;
	/* once per RTT */
	if (y->v.cnt_rtt > 2) {
		rtt = y->v.min_rtt;
		base = y->v.base_rtt;
		cwnd = tp->snd_cwnd;
		queue = (__u32)((__u64)cwnd * (rtt - base) / rtt);
		if (queue > TCP_YEAH_ALPHA || rtt - base > base / TCP_YEAH_PHY) {
			/* slow mode */
			if (queue > TCP_YEAH_ALPHA && cwnd > y->reno_count) {
				/* precautionary decongestion */
				reduction = queue / TCP_YEAH_GAMMA;
				if (reduction > cwnd >> TCP_YEAH_EPSILON)
					reduction = cwnd >> TCP_YEAH_EPSILON;
				cwnd -= reduction;
				if (cwnd < y->reno_count)
					cwnd = y->reno_count;
				tp->snd_cwnd = cwnd;
				tp->snd_ssthresh = cwnd;
			}
			if (y->reno_count <= 2)
				y->reno_count = cwnd >> 1 > 2 ? cwnd >> 1 : 2;
			else
				y->reno_count++;
			if (y->doing_reno_now < 0xffffff)
				y->doing_reno_now++;
		} else {
			y->fast_count++;
			if (y->fast_count > TCP_YEAH_ZETA) {
				y->reno_count = 2;
				y->fast_count = 0;
			}
			y->doing_reno_now = 0;
		}
		y->last_q = queue;
	}
	y->v.beg_snd_nxt = tp->snd_nxt;
	y->v.cnt_rtt = 0;
	y->v.min_rtt = VEGAS_RTT_INIT;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 yeah_loss_ssthresh(struct sock *sk)
{
	struct yeah *y = ca_priv(sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd;
	__u32 half = cwnd >> 1 > 2 ? cwnd >> 1 : 2;
	__u32 reduction;

	if (y->doing_reno_now < TCP_YEAH_RHO) {
		reduction = y->last_q < half ? y->last_q : half;
		if (reduction < cwnd >> TCP_YEAH_DELTA)
			reduction = cwnd >> TCP_YEAH_DELTA;
	} else {
		reduction = half;
	}
	y->fast_count = 0;
	y->reno_count = y->reno_count >> 1 > 2 ? y->reno_count >> 1 : 2;
	return (__s32)(cwnd - reduction) > 2 ? cwnd - reduction : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_yeah_ssthresh, struct sock *sk)
{
	return yeah_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_yeah_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_yeah = {
	.init = (void *)bpf_yeah_init,
	.ssthresh = (void *)bpf_yeah_ssthresh,
	.cong_avoid = (void *)bpf_yeah_cong_avoid,
	.set_state = (void *)bpf_yeah_set_state,
	.cwnd_event = (void *)bpf_yeah_cwnd_event,
	.pkts_acked = (void *)bpf_yeah_pkts_acked,
	.undo_cwnd = (void *)bpf_yeah_undo_cwnd,
	.name = "bpf_yeah",
};
