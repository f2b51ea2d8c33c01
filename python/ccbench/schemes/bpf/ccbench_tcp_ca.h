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

#endif
