/* Vegas's RTT bookkeeping (Linux net/ipv4/tcp_vegas.c: tcp_vegas_init, tcp_vegas_pkts_acked,
 * tcp_vegas_state, tcp_vegas_cwnd_event), shared by vegas.c and yeah.c as YeAH's module shares
 * Vegas's: per RTT (up to the ACK of beg_snd_nxt) the number of RTT samples and their minimum,
 * and the lifetime minimum baseRTT, all +1 us (never a zero RTT). A program's private state
 * starts with struct vegas.
 */
#ifndef CCBENCH_VEGAS_H
#define CCBENCH_VEGAS_H

#include "ccbench_tcp_ca.h"

#define VEGAS_RTT_INIT 0x7fffffff

struct vegas {
	__u32 beg_snd_nxt;  /* right edge of the current RTT */
	__u32 cnt_rtt;      /* RTT samples in it */
	__u32 min_rtt;      /* their minimum (+1 us) */
	__u32 base_rtt;     /* lifetime minimum (+1 us) */
	__u8 doing_vegas_now;
};

static __always_inline void vegas_enable(struct sock *sk)
{
	struct vegas *v = ca_priv(sk);

	v->doing_vegas_now = 1;
	v->beg_snd_nxt = tcp_of(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_INIT;
}

static __always_inline void vegas_reset(struct sock *sk)
{
	struct vegas *v = ca_priv(sk);

	v->base_rtt = VEGAS_RTT_INIT;
	vegas_enable(sk);
}

static __always_inline void vegas_rtt_sample(struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *v = ca_priv(sk);
	__s32 rtt = sample->rtt_us;
	__u32 vrtt;

	if (rtt < 0)
		return;
	vrtt = (__u32)rtt + 1;
	if (vrtt < v->base_rtt)
		v->base_rtt = vrtt;
	if (vrtt < v->min_rtt)
		v->min_rtt = vrtt;
	v->cnt_rtt++;
}

static __always_inline void vegas_state(struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		((struct vegas *)ca_priv(sk))->doing_vegas_now = 0;
}

static __always_inline void vegas_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_reset(sk);
}

#endif
