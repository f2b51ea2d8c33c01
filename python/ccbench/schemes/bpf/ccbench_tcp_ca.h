/* Shared declarations of ccbench's BPF congestion controls (struct_ops tcp_congestion_ops).
 *
 * Built by ccbench (python/ccbench/backends/emu/bpf.py) against a vmlinux.h generated from this
 * kernel's BTF: clang -O2 -g -target bpf. The kernel lets struct_ops programs of a
 * tcp_congestion_ops read the socket through BTF and write only a few fields (snd_cwnd,
 * snd_ssthresh, snd_cwnd_cnt, snd_cwnd_stamp, ecn_flags, app_limited, sk_pacing_rate,
 * sk_pacing_status, icsk_ack.pending and the private area icsk_ca_priv); see
 * bpf_tcp_ca_btf_struct_access() in net/ipv4/bpf_tcp_ca.c. The tcp_cong.c helpers below are
 * kfuncs the kernel exports to them.
 */
#ifndef CCBENCH_TCP_CA_H
#define CCBENCH_TCP_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define TCP_CONG_NEEDS_ECN 0x2
/* tp->ecn_flags bits (include/net/tcp_ecn.h): RFC 3168 ECN negotiated, CWR demanded */
#define TCP_ECN_OK 0x1
#define TCP_ECN_DEMAND_CWR 0x4

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline struct tcp_sock *tcp_of(struct sock *sk)
{
	/* the verifier types a tcp_congestion_ops hook's sk as struct tcp_sock */
	return (struct tcp_sock *)sk;
}

static __always_inline void *ca_priv(struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* sequence-number order with wrap-around (include/net/tcp.h before/after) */
static __always_inline int seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

static __always_inline int in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* include/net/tcp.h tcp_is_cwnd_limited() (5.19+): the window limited what was sent in the
 * last window's worth of data (tcp_cwnd_validate() keeps the is_cwnd_limited bit), or, in slow
 * start, cwnd is below twice the most packets in flight in that period. Congestion controls
 * grow the window only then (RFC 7661), so an application- or receive-window-limited sender
 * does not build up a window it never used. */
static __always_inline int ccbench_is_cwnd_limited(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return 1;
	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

/* A guard against a kernel that does not run a program now and then. Some kernels skip a
 * struct_ops program in particular task contexts (this project's development machine, a
 * Firecracker guest, runs no BPF program while one of PID 1's threads is current: see
 * docs/bpf-schemes.md). A skipped void hook loses one update; a skipped ssthresh or undo_cwnd
 * leaves the trampoline's return slot unwritten, so the kernel stores a stale stack word
 * (seen: 0x811xxxxx, above any ssthresh Linux can hold) and PRR then computes a window of
 * ~10^9 packets. Every program calls CCBENCH_REPAIR first thing in pkts_acked, which the
 * kernel calls on every ACK: an ssthresh above TCP_INFINITE_SSTHRESH is replaced by the
 * program's own loss response replayed on prior_cwnd (the window the kernel saved just before
 * calling ssthresh, in tcp_init_cwnd_reduction() and tcp_enter_loss()), and a window above
 * 2^24 packets (a skipped undo_cwnd) by prior_cwnd, which Reno's undo returns. ccbench reads
 * the two counters after a run (bpf.json) and warns when they are not zero. A skip that
 * leaves a plausible value is not detectable this way. */
__u64 ccbench_replayed_ssthresh = 0;
__u64 ccbench_restored_cwnd = 0;

#define CCBENCH_MAX_CWND (1U << 24)

#define CCBENCH_REPAIR(sk, loss_ssthresh)                                                  \
	do {                                                                               \
		struct tcp_sock *rtp = tcp_of(sk);                                         \
		__u32 rcwnd = rtp->snd_cwnd;                                               \
		if (rtp->snd_ssthresh > TCP_INFINITE_SSTHRESH) {                           \
			rtp->snd_cwnd = rtp->prior_cwnd;                                   \
			rtp->snd_ssthresh = loss_ssthresh(sk);                             \
			rtp->snd_cwnd = rcwnd < rtp->snd_ssthresh ? rcwnd : rtp->snd_ssthresh; \
			__sync_fetch_and_add(&ccbench_replayed_ssthresh, 1);               \
		} else if (rcwnd > CCBENCH_MAX_CWND) {                                     \
			rtp->snd_cwnd = rtp->prior_cwnd > 2 ? rtp->prior_cwnd : 2;         \
			__sync_fetch_and_add(&ccbench_restored_cwnd, 1);                   \
		}                                                                          \
	} while (0)

#endif
