/* The simulator's side of a natively compiled BPF congestion control (docs/bpf-schemes.md,
 * "In the simulator"). Compiled into the same shared object as the program, with
 * -DCCBENCH_SIM_OPS=<the program's struct tcp_congestion_ops variable>:
 *  - the kfuncs of net/ipv4/tcp_cong.c a struct_ops program may call (Linux 6.x semantics, as
 *    the simulator's crates/sim/src/cc/mod.rs implements them);
 *  - per-socket storage (BPF_MAP_TYPE_SK_STORAGE), the clock, bpf_tcp_send_ack;
 *  - ccbench_sim_abi(): the ops table and the layout the simulator checks before using it.
 * Everything else of the program (its .bss and .data) is one copy per loaded object: the
 * simulator loads a private copy per run, so all flows of a run share them, as all sockets
 * share a registered struct_ops program's globals in the kernel.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define EXPORT __attribute__((visibility("default")))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

extern struct tcp_congestion_ops CCBENCH_SIM_OPS;

/* ---- tcp_cong.c ---------------------------------------------------------------------- */

__u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked)
{
	__u32 cwnd = MIN(tp->snd_cwnd + acked, tp->snd_ssthresh);

	acked -= cwnd - tp->snd_cwnd;
	tp->snd_cwnd = MIN(cwnd, tp->snd_cwnd_clamp);
	return acked;
}

void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked)
{
	if (w == 0)
		w = 1; /* never in Linux (w is a window); a program's own w could be 0 */
	/* credits accumulated at a higher w are applied gently now */
	if (tp->snd_cwnd_cnt >= w) {
		tp->snd_cwnd_cnt = 0;
		tp->snd_cwnd++;
	}
	tp->snd_cwnd_cnt += acked;
	if (tp->snd_cwnd_cnt >= w) {
		__u32 delta = tp->snd_cwnd_cnt / w;

		tp->snd_cwnd_cnt -= delta * w;
		tp->snd_cwnd += delta;
	}
	tp->snd_cwnd = MIN(tp->snd_cwnd, tp->snd_cwnd_clamp);
}

/* include/net/tcp.h tcp_is_cwnd_limited() */
static int is_cwnd_limited(const struct tcp_sock *tp)
{
	if (tp->is_cwnd_limited)
		return 1;
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	(void)ack;
	if (!is_cwnd_limited(tp))
		return;
	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

__u32 tcp_reno_ssthresh(struct sock *sk)
{
	return MAX(((struct tcp_sock *)sk)->snd_cwnd >> 1U, 2U);
}

__u32 tcp_reno_undo_cwnd(struct sock *sk)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	return MAX(tp->snd_cwnd, tp->prior_cwnd);
}

/* ---- helpers -------------------------------------------------------------------------- */

struct storage {
	struct storage *next;
	const void *map;
	unsigned long long data[]; /* 8-byte aligned, as a map value */
};

void *ccbench_sim_sk_storage_get(const void *map, unsigned long size, void *sk, void *init,
				 unsigned long long flags)
{
	struct sock *s = sk;
	struct storage *e;

	(void)init;
	if (!s)
		return NULL;
	for (e = s->ccbench_storage; e; e = e->next)
		if (e->map == map)
			return e->data;
	if (!(flags & BPF_SK_STORAGE_GET_F_CREATE))
		return NULL;
	e = calloc(1, sizeof(*e) + size);
	if (!e)
		return NULL;
	e->map = map;
	e->next = s->ccbench_storage;
	s->ccbench_storage = e;
	return e->data;
}

long ccbench_sim_sk_storage_delete(const void *map, void *sk)
{
	struct sock *s = sk;
	struct storage **p, *e;

	for (p = (struct storage **)&s->ccbench_storage; (e = *p); p = &e->next) {
		if (e->map == map) {
			*p = e->next;
			free(e);
			return 0;
		}
	}
	return -2; /* -ENOENT */
}

/* the socket whose hook is running (set by the simulator before each call) */
EXPORT struct sock *ccbench_sim_current;

unsigned long long ccbench_sim_ktime_get_ns(void)
{
	return ccbench_sim_current ? ccbench_sim_current->ccbench_now_ns : 0;
}

unsigned int ccbench_sim_get_prandom_u32(void)
{
	struct sock *s = ccbench_sim_current;
	__u64 z;

	if (!s)
		return 0;
	z = (s->ccbench_prandom += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (unsigned int)((z ^ (z >> 31)) >> 32);
}

long ccbench_sim_tcp_send_ack(void *tp, unsigned int rcv_nxt)
{
	(void)tp;
	(void)rcv_nxt;
	return 0;
}

/* ---- the interface to crates/sim/src/cc/native/ --------------------------------------- */

/* The simulator's check that it and this object agree on the types (abi.rs `Abi`). */
struct ccbench_sim_abi {
	__u32 version;
	__u32 sizeof_tcp_sock;
	__u32 sizeof_ack_sample;
	__u32 sizeof_rate_sample;
	__u32 sizeof_ops;
	__u32 off_icsk_ca_priv;
	__u32 off_snd_cwnd;
	__u32 off_tcp_mstamp;
	__u32 off_ecn_flags;
	__u32 off_ops_name;
	__u32 off_ops_init;
	struct tcp_congestion_ops *ops;
	struct sock **current;
};

EXPORT const struct ccbench_sim_abi *ccbench_sim_abi(void)
{
	static const struct ccbench_sim_abi abi = {
		.version = CCBENCH_SIM_ABI,
		.sizeof_tcp_sock = sizeof(struct tcp_sock),
		.sizeof_ack_sample = sizeof(struct ack_sample),
		.sizeof_rate_sample = sizeof(struct rate_sample),
		.sizeof_ops = sizeof(struct tcp_congestion_ops),
		.off_icsk_ca_priv = offsetof(struct inet_connection_sock, icsk_ca_priv),
		.off_snd_cwnd = offsetof(struct tcp_sock, snd_cwnd),
		.off_tcp_mstamp = offsetof(struct tcp_sock, tcp_mstamp),
		.off_ecn_flags = offsetof(struct tcp_sock, ecn_flags),
		.off_ops_name = offsetof(struct tcp_congestion_ops, name),
		.off_ops_init = offsetof(struct tcp_congestion_ops, init),
		.ops = &CCBENCH_SIM_OPS,
		.current = &ccbench_sim_current,
	};
	return &abi;
}

/* Free a socket's storage when its flow ends. */
EXPORT void ccbench_sim_sock_free(struct sock *sk)
{
	struct storage *e = sk->ccbench_storage, *n;

	for (; e; e = n) {
		n = e->next;
		free(e);
	}
	sk->ccbench_storage = NULL;
}
