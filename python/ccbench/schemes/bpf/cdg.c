/* CDG (CAIA Delay-Gradient) for the kernel backend, as a BPF struct_ops congestion control
 * ("bpf_cdg").
 *
 * D. A. Hayes and G. Armitage, "Revisiting TCP congestion control using delay gradients", IFIP
 * Networking 2011, with the rules of Linux net/ipv4/tcp_cdg.c (4.2-6.x) at its module defaults
 * (window 8, backoff_beta 724/1024, backoff_factor 42, hystart_detect 3, use_ineff 5,
 * use_shadow on, use_tolerance off). Once per RTT (the ACK passing the snd_nxt of the previous
 * step) the gradients of the RTT's minimum and maximum RTT sample are summed over the last 8
 * RTTs (extrapolated while the window fills); a positive sum g (the minimum's, else the
 * maximum's) backs off with probability 1 - exp(-g x 42 us^-1 x 1e-6), i.e. P = 1 - e^(-g/G)
 * with G = 3 ms per RTT: ssthresh = cwnd = 0.7071 cwnd. After 5 back-offs without a gradient
 * falling by 32 us or more (ineffectual: a loss-based flow is competing) it stops backing off.
 * Growth is Reno's; a shadow window follows the window a Reno flow would have, and a loss sets
 * ssthresh to max(2, shadow/2, cwnd/2) (shadow = min(shadow/2, cwnd)). Slow start ends by
 * Reno's rule or by HyStart (ACK train at any cwnd, delay > 9/8 of the minimum after 8 samples).
 * RTT samples: Hayes's delayed-ACK filter (a one-packet ACK while the receiver is taken to
 * delay ACKs only lowers an existing minimum).
 *
 * Differences from the module: a BPF congestion control cannot call tcp_enter_cwr(), so a
 * delay back-off sets cwnd = ssthresh = 0.7071 cwnd at once (the module enters CWR and PRR
 * brings cwnd there over an RTT) and suspends growth and gradients until an ACK beyond that
 * moment's snd_nxt, where the module's end of CWR (CA_EVENT_COMPLETE_CWR) would come (Linux
 * tcp_fastretrans_alert() holds CWR until snd_una passes high_seq, not reaches it); a loss in
 * between is the kernel's, which does signal COMPLETE_CWR. The per-RTT gradient window (64
 * bytes) does not fit in icsk_ca_priv next to the rest, so it lives in socket storage
 * (BPF_MAP_TYPE_SK_STORAGE; the module kcallocs it), with the module's fallback when it cannot
 * be had. The e^-x table is exp(-x) x 65536 - 1 rounded (the module's differs by 1 in two entries).
 * The simulator's crates/sim/src/cc/cdg.rs models FreeBSD's cc_cdg.c (moving averages, table
 * probability, queue-state loss tolerance, its own slow-start exit and ineffectual-back-off
 * rule), not this module.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 cdg_loss_ssthresh(struct sock *sk);

#define CDG_WINDOW 8             /* gradient window, RTTs (power of two) */
#define CDG_BACKOFF_BETA 724     /* 0.7071 x 1024 */
#define CDG_BACKOFF_FACTOR 42    /* 1000 / (G x window), G = 3 ms */
#define CDG_USE_INEFF 5
#define HYSTART_ACK_TRAIN 1
#define HYSTART_DELAY 2
#define CDG_HYSTART_DETECT (HYSTART_ACK_TRAIN | HYSTART_DELAY)

enum { CDG_UNKNOWN = 0, CDG_NONFULL = 1, CDG_FULL = 2, CDG_BACKOFF = 3 };

struct cdg_minmax {
	__s32 min;
	__s32 max;
};

struct cdg_grads {
	struct cdg_minmax g[CDG_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cdg_grads);
} cdg_gradients SEC(".maps");

struct cdg {
	struct cdg_minmax rtt;      /* this RTT's samples */
	struct cdg_minmax rtt_prev; /* the previous RTT's */
	struct cdg_minmax gsum;     /* sums of the gradients in the window */
	__u8 gfilled;
	__u8 tail;
	__u8 state;
	__u8 delack;
	__u32 rtt_seq;
	__u32 shadow_wnd;
	__u16 backoff_cnt;
	__u16 sample_cnt;
	__s32 delay_min;
	__u32 last_ack;
	__u32 round_start;
	__u32 cwr_high;  /* snd_nxt at the back-off: an ACK beyond it ends the reduction */
	__u8 in_cwr;
};

/* exp(-x) x 65536 - 1 for x = 0, 256e-6 x 2^k (k = 0..15) */
static const __u16 nexp_tab[17] = {
	65535, 65518, 65501, 65468, 65401, 65267, 65000, 64470, 63422,
	61378, 57484, 50422, 38795, 22965, 8047, 987, 14,
};

/* exp(-ux x 1e-6) x U32_MAX */
static __always_inline __u32 nexp_u32(__u32 ux)
{
	__u32 msb = ux >> 8, res, y;
	int i;

	if (msb > 0xffff)
		return 0;
	/* the low eight bits linearly, then e^(a + b + ...) = e^a x e^b x ... */
	res = 0xffffffff - (ux & 0xff) * (0xffffffff / 1000000);
	for (i = 1; i < 17; i++) {
		if (!msb)
			break;
		y = (__u32)nexp_tab[(msb & 1) ? i : 0] + 1;
		res = ((__u64)res * y) >> 16;
		msb >>= 1;
	}
	return res;
}

static __always_inline __s32 sdiv32(__s32 a, __s32 b)
{
	/* C's truncating division for b > 0 (no signed division before BPF cpu v4) */
	return a >= 0 ? (__s32)((__u32)a / (__u32)b) : -(__s32)((__u32)(-a) / (__u32)b);
}

static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline void cdg_hystart_update(struct sock *sk, struct cdg *ca)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 now_us, base_owd, thresh;

	if (ca->rtt.min && (!ca->delay_min || ca->rtt.min < ca->delay_min))
		ca->delay_min = ca->rtt.min; /* the lowest non-zero minimum */
	if (!ca->delay_min)
		return;
	if (CDG_HYSTART_DETECT & HYSTART_ACK_TRAIN) {
		now_us = (__u32)tp->tcp_mstamp;
		if (!ca->last_ack || !ccbench_is_cwnd_limited(sk)) {
			ca->last_ack = now_us;
			ca->round_start = now_us;
		} else if (seq_before(now_us, ca->last_ack + 3000)) {
			base_owd = (__u32)ca->delay_min / 2;
			if (base_owd < 125)
				base_owd = 125;
			ca->last_ack = now_us;
			if (seq_after(now_us, ca->round_start + base_owd)) {
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}
	if (CDG_HYSTART_DETECT & HYSTART_DELAY) {
		if (ca->sample_cnt < 8) {
			ca->sample_cnt++;
		} else {
			thresh = (__u32)ca->delay_min + (__u32)ca->delay_min / 8;
			if (thresh < 125)
				thresh = 125;
			if (ca->rtt.min > (__s32)thresh)
				tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

static __always_inline __s32 cdg_grad(struct sock *sk, struct cdg *ca)
{
	__s32 gmin = ca->rtt.min - ca->rtt_prev.min;
	__s32 gmax = ca->rtt.max - ca->rtt_prev.max;
	struct cdg_grads *w;
	__s32 grad;
	__u32 t;

	w = bpf_sk_storage_get(&cdg_gradients, sk, 0, 0);
	if (w) {
		t = ca->tail & (CDG_WINDOW - 1);
		ca->gsum.min += gmin - w->g[t].min;
		ca->gsum.max += gmax - w->g[t].max;
		w->g[t].min = gmin;
		w->g[t].max = gmax;
		ca->tail = (t + 1) & (CDG_WINDOW - 1);
		gmin = ca->gsum.min;
		gmax = ca->gsum.max;
	}
	/* sums, not averages: the division by the window is in the back-off factor */
	grad = gmin > 0 ? gmin : gmax;
	if (!ca->gfilled) {
		if (!w)
			grad *= CDG_WINDOW; /* no window: one gradient stands for all */
		else if (ca->tail == 0)
			ca->gfilled = 1;
		else
			grad = sdiv32(grad * CDG_WINDOW, ca->tail); /* extrapolate the missing ones */
	}
	if (gmin <= -32 || gmax <= -32)
		ca->backoff_cnt = 0; /* the last back-off was effectual */
	return grad;
}

static __always_inline void cdg_complete_cwr(struct sock *sk, struct cdg *ca)
{
	ca->state = CDG_UNKNOWN;
	ca->rtt_seq = tcp_of(sk)->snd_nxt;
	ca->rtt_prev = ca->rtt;
	ca->rtt.min = 0;
	ca->rtt.max = 0;
	ca->in_cwr = 0;
}

static __always_inline int cdg_backoff(struct sock *sk, struct cdg *ca, __u32 grad)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 cwnd = tp->snd_cwnd, ss;

	if (bpf_get_prandom_u32() <= nexp_u32(grad * CDG_BACKOFF_FACTOR))
		return 0;
	ca->backoff_cnt++;
	if (ca->backoff_cnt > CDG_USE_INEFF)
		return 0;
	if (ca->shadow_wnd < cwnd)
		ca->shadow_wnd = cwnd;
	ca->state = CDG_BACKOFF;
	/* the module's tcp_enter_cwr(), at once instead of through PRR */
	ss = (cwnd * CDG_BACKOFF_BETA) >> 10;
	if (ss < 2)
		ss = 2;
	tp->snd_ssthresh = ss;
	tp->snd_cwnd = ss;
	tp->snd_cwnd_cnt = 0;
	ca->cwr_high = tp->snd_nxt;
	ca->in_cwr = 1;
	return 1;
}

static __always_inline void cdg_clear_window(struct cdg_grads *w)
{
	int i;

	if (!w)
		return;
	for (i = 0; i < CDG_WINDOW; i++) {
		w->g[i].min = 0;
		w->g[i].max = 0;
	}
}

SEC("struct_ops")
void BPF_PROG(bpf_cdg_init, struct sock *sk)
{
	struct cdg *ca = ca_priv(sk);
	struct tcp_sock *tp = tcp_of(sk);

	/* zeroed as the module's kcalloc: a socket that ran bpf_cdg before (TCP_CONGESTION set
	 * again) keeps its storage, whose old gradients would bias gsum (zeroed with the private
	 * area) for good */
	cdg_clear_window(bpf_sk_storage_get(&cdg_gradients, sk, 0, BPF_SK_STORAGE_GET_F_CREATE));
	ca->rtt_seq = tp->snd_nxt;
	ca->shadow_wnd = tp->snd_cwnd;
}

SEC("struct_ops")
void BPF_PROG(bpf_cdg_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cdg *ca = ca_priv(sk);
	struct tcp_sock *tp = tcp_of(sk);
	__u32 prior, incr;
	__s32 grad;

	if (ca->in_cwr) {
		if (!seq_after(ack, ca->cwr_high))
			return; /* the module is in CWR: no cong_avoid */
		cdg_complete_cwr(sk, ca);
	}
	if (in_slow_start(tp))
		cdg_hystart_update(sk, ca);
	if (seq_after(ack, ca->rtt_seq) && (ca->rtt.min || ca->rtt.max)) {
		grad = 0;
		if (ca->rtt_prev.min || ca->rtt_prev.max)
			grad = cdg_grad(sk, ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.min = 0;
		ca->rtt.max = 0;
		ca->last_ack = 0;
		ca->sample_cnt = 0;
		if (grad > 0 && cdg_backoff(sk, ca, (__u32)grad))
			return;
	}
	if (!ccbench_is_cwnd_limited(sk)) {
		/* application-limited: the shadow window follows the window in use */
		if (ca->shadow_wnd > tp->snd_cwnd)
			ca->shadow_wnd = tp->snd_cwnd;
		return;
	}
	prior = tp->snd_cwnd;
	tcp_reno_cong_avoid(sk, ack, acked);
	incr = tp->snd_cwnd - prior;
	if (ca->shadow_wnd + incr > ca->shadow_wnd)
		ca->shadow_wnd += incr;
}

SEC("struct_ops")
void BPF_PROG(bpf_cdg_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, cdg_loss_ssthresh);
	struct cdg *ca = ca_priv(sk);
	struct tcp_sock *tp = tcp_of(sk);
	__s32 rtt = sample->rtt_us;

	if (rtt <= 0)
		return;
	/* Hayes's delayed-ACK filter */
	if (tp->sacked_out == 0) {
		if (sample->pkts_acked == 1 && ca->delack) {
			/* only lowers an existing non-zero minimum */
			if (rtt < ca->rtt.min)
				ca->rtt.min = rtt;
			ca->delack--;
			return;
		} else if (sample->pkts_acked > 1 && ca->delack < 5) {
			ca->delack++;
		}
	}
	if (!ca->rtt.min || rtt < ca->rtt.min)
		ca->rtt.min = rtt;
	if (rtt > ca->rtt.max)
		ca->rtt.max = rtt;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 cdg_loss_ssthresh(struct sock *sk)
{
	struct cdg *ca = ca_priv(sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd, s;

	if (ca->state == CDG_BACKOFF) {
		s = (cwnd * CDG_BACKOFF_BETA) >> 10;
		return s > 2 ? s : 2;
	}
	s = ca->shadow_wnd >> 1;
	ca->shadow_wnd = s < cwnd ? s : cwnd;
	s = ca->shadow_wnd > cwnd >> 1 ? ca->shadow_wnd : cwnd >> 1;
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_cdg_ssthresh, struct sock *sk)
{
	return cdg_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_cdg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cdg *ca = ca_priv(sk);
	struct tcp_sock *tp = tcp_of(sk);

	if (ev == CA_EVENT_CWND_RESTART) {
		cdg_clear_window(bpf_sk_storage_get(&cdg_gradients, sk, 0, 0));
		__builtin_memset(ca, 0, sizeof(*ca));
		ca->rtt_seq = tp->snd_nxt;
		ca->shadow_wnd = tp->snd_cwnd;
	} else if (ev == CA_EVENT_COMPLETE_CWR) {
		cdg_complete_cwr(sk, ca);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_cdg_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_cdg = {
	.init = (void *)bpf_cdg_init,
	.ssthresh = (void *)bpf_cdg_ssthresh,
	.cong_avoid = (void *)bpf_cdg_cong_avoid,
	.cwnd_event = (void *)bpf_cdg_cwnd_event,
	.pkts_acked = (void *)bpf_cdg_pkts_acked,
	.undo_cwnd = (void *)bpf_cdg_undo_cwnd,
	.name = "bpf_cdg",
};
