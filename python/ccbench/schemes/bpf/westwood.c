/* TCP Westwood+ for the kernel backend, as a BPF struct_ops congestion control
 * ("bpf_westwood").
 *
 * L. A. Grieco and S. Mascolo, "Performance evaluation and comparison of Westwood+, New Reno,
 * and Vegas TCP congestion control", ACM CCR 34(2), 2004, with the rules of Linux
 * net/ipv4/tcp_westwood.c (4.x-6.x hooks), written for ccbench from the same description as the
 * simulator's crates/sim/src/cc/westwood.rs. Growth and the ssthresh hook are Reno's. The
 * bytes acknowledged per window of at least max(RTT, 50 ms) give a bandwidth sample, filtered
 * twice with (7a + b) / 8; the minimum RTT sample is kept. At the end of a fast recovery (or
 * CWR) cwnd and ssthresh are set to bw_est x rtt_min / mss, the pipe size; after an RTO
 * ssthresh is.
 * Units as the kernel's: times in ms ("jiffies" at HZ = 1000, as the simulator assumes),
 * bandwidth in bytes per ms.
 *
 * Differences: time is the socket's tcp_mstamp in ms rather than jiffies; no get_info.
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

static __always_inline __u32 westwood_loss_ssthresh(struct sock *sk);

#define TCP_WESTWOOD_RTT_MIN 50 /* ms: HZ / 20 */
#define TCP_WESTWOOD_INIT_RTT 20000 /* ms: 20 HZ */
#define CA_ACK_SLOWPATH 0x1

struct westwood {
	__u32 bw_ns_est;  /* bandwidth, filtered once (bytes/ms) */
	__u32 bw_est;     /* filtered twice */
	__u32 rtt_win_sx; /* start of the current sampling window, ms */
	__u32 bk;         /* bytes acked in it */
	__u32 snd_una;    /* snd_una at the previous ACK */
	__u32 cumul_ack;
	__u32 accounted;  /* duplicate ACKs' bytes, taken back from later cumulative ACKs */
	__u32 rtt;        /* last RTT sample, ms */
	__u32 rtt_min;    /* minimum RTT sample, ms */
	__u8 first_ack;
	__u8 reset_rtt_min;
};

static __always_inline __u32 now_ms(struct sock *sk)
{
	return (__u32)(tcp_of(sk)->tcp_mstamp / 1000);
}

SEC("struct_ops")
void BPF_PROG(bpf_westwood_init, struct sock *sk)
{
	struct westwood *w = ca_priv(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = TCP_WESTWOOD_INIT_RTT;
	w->rtt = TCP_WESTWOOD_INIT_RTT;
	w->rtt_win_sx = now_ms(sk);
	w->snd_una = tcp_of(sk)->snd_una;
	w->first_ack = 1;
}

static __always_inline __u32 ww_filter(__u32 a, __u32 b)
{
	return (7 * a + b) >> 3;
}

/* close the sampling window once it is longer than max(RTT, 50 ms) */
static __always_inline void ww_update_window(struct sock *sk, struct westwood *w)
{
	__u32 now = now_ms(sk), delta = now - w->rtt_win_sx, min = w->rtt, b;

	if (w->first_ack) {
		w->snd_una = tcp_of(sk)->snd_una;
		w->first_ack = 0;
	}
	if (min < TCP_WESTWOOD_RTT_MIN)
		min = TCP_WESTWOOD_RTT_MIN;
	if (w->rtt && delta > min) {
		b = w->bk / delta;
		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = b;
			w->bw_est = b;
		} else {
			w->bw_ns_est = ww_filter(w->bw_ns_est, b);
			w->bw_est = ww_filter(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->rtt_win_sx = now;
	}
}

static __always_inline void ww_update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else if (w->rtt < w->rtt_min) {
		w->rtt_min = w->rtt;
	}
}

/* bytes a slow-path ACK acknowledges: a duplicate ACK counts one MSS, taken back later */
static __always_inline __u32 ww_acked_count(struct sock *sk, struct westwood *w)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 mss = tp->mss_cache;

	w->cumul_ack = tp->snd_una - w->snd_una;
	if (!w->cumul_ack) {
		w->accounted += mss;
		w->cumul_ack = mss;
	}
	if (w->cumul_ack > mss) {
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = mss;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

static __always_inline __u32 ww_bw_rttmin(struct sock *sk, struct westwood *w)
{
	__u32 mss = tcp_of(sk)->mss_cache, pipe;

	pipe = mss ? w->bw_est * w->rtt_min / mss : 0;
	return pipe > 2 ? pipe : 2;
}

SEC("struct_ops")
void BPF_PROG(bpf_westwood_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct westwood *w = ca_priv(sk);

	ww_update_window(sk, w);
	if (flags & CA_ACK_SLOWPATH) {
		w->bk += ww_acked_count(sk, w);
	} else {
		w->bk += tp->snd_una - w->snd_una;
		w->snd_una = tp->snd_una;
	}
	ww_update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(bpf_westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, westwood_loss_ssthresh);
	struct westwood *w = ca_priv(sk);

	if (sample->rtt_us > 0)
		w->rtt = ((__u32)sample->rtt_us + 999) / 1000; /* usecs_to_jiffies rounds up */
}

SEC("struct_ops")
void BPF_PROG(bpf_westwood_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct westwood *w = ca_priv(sk);

	if (ev == CA_EVENT_COMPLETE_CWR) {
		/* both, as tcp_westwood_event: slow start must not regrow to the old ssthresh */
		tp->snd_ssthresh = ww_bw_rttmin(sk, w);
		tp->snd_cwnd = tp->snd_ssthresh;
	} else if (ev == CA_EVENT_LOSS) {
		tp->snd_ssthresh = ww_bw_rttmin(sk, w);
		w->reset_rtt_min = 1;
	}
}

SEC("struct_ops")
void BPF_PROG(bpf_westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 westwood_loss_ssthresh(struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_westwood_ssthresh, struct sock *sk)
{
	return westwood_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_westwood = {
	.init = (void *)bpf_westwood_init,
	.ssthresh = (void *)bpf_westwood_ssthresh,
	.cong_avoid = (void *)bpf_westwood_cong_avoid,
	.cwnd_event = (void *)bpf_westwood_cwnd_event,
	.in_ack_event = (void *)bpf_westwood_in_ack_event,
	.pkts_acked = (void *)bpf_westwood_pkts_acked,
	.undo_cwnd = (void *)bpf_westwood_undo_cwnd,
	.name = "bpf_westwood",
};
