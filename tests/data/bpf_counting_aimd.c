/* A test program of tests/test_bpf_record.py: the `ccbench new scheme` AIMD with globals that
 * count its loss responses (recorded with scheme: {bpf: ..., record: [...]}).
 *
 * The kernel backend compiles this file with clang -target bpf and registers it as a struct_ops
 * tcp_congestion_ops ("bpf_cntaimd"); the simulator compiles the same file natively and calls the
 * same hooks (docs/bpf-schemes.md). Start from this AIMD and change what you study:
 *
 *   ccbench run cntaimd.yaml                      # the simulator
 *   sudo ccbench run cntaimd.yaml --backend both  # the simulator and the kernel, compared
 *
 * Editing this file re-runs every campaign run that uses it (its content is part of the run
 * key). The socket fields a program may write are snd_cwnd, snd_ssthresh, snd_cwnd_cnt and its
 * private area (ca_priv); read the rest (srtt_us is in units of 1/8 us, as in the kernel).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* additive increase: segments per RTT in congestion avoidance */
#define CNTAIMD_ADD 1U
/* multiplicative decrease on a loss: cwnd * CNTAIMD_MD_NUM / CNTAIMD_MD_DEN */
#define CNTAIMD_MD_NUM 1U
#define CNTAIMD_MD_DEN 2U

/* globals, shared by every socket of the program (recorded by tests/test_bpf_record.py) */
__u64 total_losses = 0;
struct {
	__u32 last_ssthresh;
	__u32 calls;
} stats = {};
__u32 scale = 7; /* .data: a non-zero initial value (read below: the kernel keeps only the
                   * global-data maps its programs use) */

/* private per-connection state (at most 104 bytes: icsk_ca_priv) */
struct cntaimd_state {
	__u32 losses; /* reductions so far */
};

SEC("struct_ops")
void BPF_PROG(cntaimd_init, struct sock *sk)
{
	struct cntaimd_state *st = ca_priv(sk);

	st->losses = 0;
}

/* every ACK outside recovery: grow the window */
SEC("struct_ops")
void BPF_PROG(cntaimd_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);

	if (!ccbench_is_cwnd_limited(sk))
		return; /* the application or the receiver limits the sender: no growth */
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	/* +CNTAIMD_ADD segments per window of ACKs */
	tcp_cong_avoid_ai(tp, tp->snd_cwnd / CNTAIMD_ADD ? tp->snd_cwnd / CNTAIMD_ADD : 1, acked);
}

/* the loss response: the new ssthresh (also replayed by CCBENCH_REPAIR, below) */
static __always_inline __u32 cntaimd_loss_ssthresh(struct sock *sk)
{
	__u32 s = tcp_of(sk)->snd_cwnd * CNTAIMD_MD_NUM / CNTAIMD_MD_DEN;

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(cntaimd_ssthresh, struct sock *sk)
{
	struct cntaimd_state *st = ca_priv(sk);

	st->losses++;
	total_losses += scale / 7;
	stats.calls++;
	stats.last_ssthresh = cntaimd_loss_ssthresh(sk);
	return stats.last_ssthresh;
}

SEC("struct_ops")
__u32 BPF_PROG(cntaimd_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* every ACK with its RTT sample (sample->rtt_us, -1 without one) */
SEC("struct_ops")
void BPF_PROG(cntaimd_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	/* repairs a loss response the kernel skipped (ccbench_tcp_ca.h); keep it first */
	CCBENCH_REPAIR(sk, cntaimd_loss_ssthresh);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_cntaimd = {
	.init = (void *)cntaimd_init,
	.ssthresh = (void *)cntaimd_ssthresh,
	.cong_avoid = (void *)cntaimd_cong_avoid,
	.undo_cwnd = (void *)cntaimd_undo_cwnd,
	.pkts_acked = (void *)cntaimd_pkts_acked,
	.name = "bpf_cntaimd",
};
