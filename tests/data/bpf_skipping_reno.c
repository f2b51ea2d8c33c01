/* Test program: Reno whose loss response misbehaves the way a kernel that skips the program
 * makes it (docs/bpf-schemes.md, "Programs the kernel does not run"): first and third ssthresh
 * calls return the stale stack word such a kernel stored (0x81104110) instead of cwnd / 2.
 * CCBENCH_REPAIR (ccbench_tcp_ca.h) must find each one on the next ACK and replay the real
 * response; ccbench_faked_skips counts the misbehaving calls for the test to compare. */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

__u64 ccbench_faked_skips = 0;
__u32 calls = 0;

static __always_inline __u32 skipping_loss_ssthresh(struct sock *sk)
{
	__u32 s = tcp_of(sk)->snd_cwnd >> 1;

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_skipping_ssthresh, struct sock *sk)
{
	if (++calls == 1 || calls == 3) { /* early: many ACKs follow to find them */
		__sync_fetch_and_add(&ccbench_faked_skips, 1);
		return 0x81104110;
	}
	return skipping_loss_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(bpf_skipping_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
void BPF_PROG(bpf_skipping_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	CCBENCH_REPAIR(sk, skipping_loss_ssthresh);
}

SEC("struct_ops")
__u32 BPF_PROG(bpf_skipping_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_skipping = {
	.ssthresh = (void *)bpf_skipping_ssthresh,
	.cong_avoid = (void *)bpf_skipping_cong_avoid,
	.pkts_acked = (void *)bpf_skipping_pkts_acked,
	.undo_cwnd = (void *)bpf_skipping_undo_cwnd,
	.name = "bpf_skipping",
};
