/* TCP Hybla for the kernel backend, as a BPF struct_ops congestion control ("bpf_hybla").
 *
 * C. Caini and R. Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks",
 * Int. J. Satellite Communications and Networking 22(5), 2004, with the rules of Linux
 * net/ipv4/tcp_hybla.c (5.x/6.x), written for ccbench from the same description as the
 * simulator's crates/sim/src/cc/hybla.rs. With rho = SRTT / 25 ms (at least 1, kept with 3
 * fractional bits and recomputed at each new minimum SRTT), slow start adds 2^rho - 1 segments
 * per ACK and congestion avoidance rho^2 / cwnd per ACK, hybla_frac128 of a segment accumulating in
 * 1/128 units; outside the Open state it is Reno. ssthresh and undo are Reno's.
 *
 * Differences: the module sets snd_cwnd_clamp to 65535 packets at init, which a struct_ops
 * program cannot write (the window is not clamped here; slow start still stops at ssthresh).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define RTT0_US 25000

/* floor(128 x 2^(k/8)), k = 0..7: the fractional part of 2^rho in 1/128 units */
const volatile __u32 hybla_frac128[8] = { 128, 139, 152, 165, 181, 197, 215, 234 };

struct hybla {
	__u32 snd_cwnd_cents; /* hybla_frac128 of a segment, x128 */
	__u32 rho;            /* integer part */
	__u32 rho2;
	__u32 rho_3ls;        /* rho x 8 */
	__u32 rho2_7ls;       /* rho^2 x 128 */
	__u32 minrtt_us;      /* lowest SRTT seen (x8 us, as srtt_us) */
	__u8 hybla_en;
};

static __always_inline void hybla_recalc(struct sock *sk, struct hybla *ca)
{
	__u32 r = tcp_of(sk)->srtt_us / RTT0_US; /* srtt_us is 8 x SRTT: rho x 8 */

	ca->rho_3ls = r > 8 ? r : 8;
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops")
void BPF_PROG(bpf_hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hybla *ca = ca_priv(sk);

	ca->snd_cwnd_cents = 0;
	ca->hybla_en = 1;
	hybla_recalc(sk, ca);
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(bpf_hybla_set_state, struct sock *sk, __u8 new_state)
{
	struct hybla *ca = ca_priv(sk);

	ca->hybla_en = new_state == TCP_CA_Open;
}

SEC("struct_ops")
void BPF_PROG(bpf_hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hybla *ca = ca_priv(sk);
	__u32 increment, odd, frac, rho, cwnd;
	int slow_start = 0;

	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc(sk, ca);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!ccbench_is_cwnd_limited(sk))
		return; /* application- or receive-window-limited: no growth */
	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->rho == 0)
		hybla_recalc(sk, ca);
	frac = ca->rho_3ls - (ca->rho << 3);
	if (in_slow_start(tp)) {
		slow_start = 1;
		rho = ca->rho < 16 ? ca->rho : 16;
		increment = (1U << rho) * hybla_frac128[frac & 7] - 128; /* (2^rho - 1) x 128 */
	} else {
		increment = ca->rho2_7ls / tp->snd_cwnd; /* rho^2 / cwnd, x128 */
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}
	odd = increment % 128;
	cwnd = tp->snd_cwnd + (increment >> 7);
	ca->snd_cwnd_cents += odd;
	/* odd < 128 and cents < 128 before: at most one carry */
	if (ca->snd_cwnd_cents >= 128) {
		cwnd++;
		ca->snd_cwnd_cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	/* no growth for a while: one segment per cwnd ACKs */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= cwnd) {
		cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	if (slow_start && cwnd > tp->snd_ssthresh)
		cwnd = tp->snd_ssthresh;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
}

/* The loss response: also replayed by CCBENCH_REPAIR when the kernel did not run it */
static __always_inline __u32 hybla_loss_ssthresh(struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_hybla_ssthresh, struct sock *sk)
{
	return hybla_loss_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_hybla_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, hybla_loss_ssthresh);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_hybla = {
	.init = (void *)bpf_hybla_init,
	.pkts_acked = (void *)bpf_hybla_pkts_acked,
	.ssthresh = (void *)bpf_hybla_ssthresh,
	.cong_avoid = (void *)bpf_hybla_cong_avoid,
	.set_state = (void *)bpf_hybla_set_state,
	.undo_cwnd = (void *)bpf_hybla_undo_cwnd,
	.name = "bpf_hybla",
};
