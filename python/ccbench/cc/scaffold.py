"""`ccbench new scheme NAME`: a commented C template of a congestion control that runs on both
backends from the one file (docs/bpf-schemes.md), an experiment that runs it next to CUBIC, and
an `expect:` block to start from."""
from __future__ import annotations

import re
from pathlib import Path

#: a BPF struct_ops name is at most 15 characters; the template's is ``bpf_<name>``
MAX_NAME = 11
_IDENT = re.compile(r"[a-z][a-z0-9_]*\Z")

C_TEMPLATE = r"""/* {name}: a congestion control written once for both ccbench backends.
 *
 * The kernel backend compiles this file with clang -target bpf and registers it as a struct_ops
 * tcp_congestion_ops ("bpf_{name}"); the simulator compiles the same file natively and calls the
 * same hooks (docs/bpf-schemes.md). Start from this AIMD and change what you study:
 *
 *   ccbench run {name}.yaml                      # the simulator
 *   sudo ccbench run {name}.yaml --backend both  # the simulator and the kernel, compared
 *
 * Editing this file re-runs every campaign run that uses it (its content is part of the run
 * key). The socket fields a program may write are snd_cwnd, snd_ssthresh, snd_cwnd_cnt and its
 * private area (ca_priv); read the rest (srtt_us is in units of 1/8 us, as in the kernel).
 */
#include "ccbench_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* additive increase: segments per RTT in congestion avoidance */
#define {NAME}_ADD 1U
/* multiplicative decrease on a loss: cwnd * {NAME}_MD_NUM / {NAME}_MD_DEN */
#define {NAME}_MD_NUM 1U
#define {NAME}_MD_DEN 2U

/* private per-connection state (at most 104 bytes: icsk_ca_priv) */
struct {name}_state {{
	__u32 losses; /* reductions so far */
}};

SEC("struct_ops")
void BPF_PROG({name}_init, struct sock *sk)
{{
	struct {name}_state *st = ca_priv(sk);

	st->losses = 0;
}}

/* every ACK outside recovery: grow the window */
SEC("struct_ops")
void BPF_PROG({name}_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{{
	struct tcp_sock *tp = tcp_of(sk);

	if (!ccbench_is_cwnd_limited(sk))
		return; /* the application or the receiver limits the sender: no growth */
	if (in_slow_start(tp)) {{
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}}
	/* +{NAME}_ADD segments per window of ACKs */
	tcp_cong_avoid_ai(tp, tp->snd_cwnd / {NAME}_ADD ? tp->snd_cwnd / {NAME}_ADD : 1, acked);
}}

/* the loss response: the new ssthresh (also replayed by CCBENCH_REPAIR, below) */
static __always_inline __u32 {name}_loss_ssthresh(struct sock *sk)
{{
	__u32 s = tcp_of(sk)->snd_cwnd * {NAME}_MD_NUM / {NAME}_MD_DEN;

	return s > 2 ? s : 2;
}}

SEC("struct_ops")
__u32 BPF_PROG({name}_ssthresh, struct sock *sk)
{{
	struct {name}_state *st = ca_priv(sk);

	st->losses++;
	return {name}_loss_ssthresh(sk);
}}

SEC("struct_ops")
__u32 BPF_PROG({name}_undo_cwnd, struct sock *sk)
{{
	return tcp_reno_undo_cwnd(sk);
}}

/* every ACK with its RTT sample (sample->rtt_us, -1 without one) */
SEC("struct_ops")
void BPF_PROG({name}_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{{
	/* repairs a loss response the kernel skipped (ccbench_tcp_ca.h); keep it first */
	CCBENCH_REPAIR(sk, {name}_loss_ssthresh);
}}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_{name} = {{
	.init = (void *){name}_init,
	.ssthresh = (void *){name}_ssthresh,
	.cong_avoid = (void *){name}_cong_avoid,
	.undo_cwnd = (void *){name}_undo_cwnd,
	.pkts_acked = (void *){name}_pkts_acked,
	.name = "bpf_{name}",
}};
"""

YAML_TEMPLATE = """# {name} next to CUBIC on a 20 Mbit/s dumbbell with a 40 ms RTT and a one-BDP queue.
#   ccbench run {name}.yaml                      # the simulator
#   sudo ccbench run {name}.yaml --backend both  # the simulator and the kernel, compared
duration: 20
seed: 1
central: {{rate: 20Mbit, delay: 20ms, queue: 1bdp}}
flows:
  - {{scheme: {{bpf: {name}.c}}, name: {name}}}
  - {{scheme: cubic}}
expect:
  # the two flows fill the link between them after the first seconds
  - {{metric: utilisation, link: r1->r2, after: 5s, min: 0.9}}
  # {name} takes at least a fifth of the link (change to what your algorithm promises)
  - {{metric: share, group: 0, after: 5s, min: 0.2}}
  - {{metric: delay-p95, max: 4x base-rtt}}
"""


class ScaffoldError(ValueError):
    """A name or directory the scaffold cannot use (the message says which and why)."""


def new_scheme(name: str, out_dir: str | Path = ".") -> list[Path]:
    """Write ``NAME.c`` and ``NAME.yaml`` into ``out_dir``; refuses to overwrite either."""
    if not _IDENT.match(name) or len(name) > MAX_NAME:
        raise ScaffoldError(f"{name!r} is not a scheme name: lower-case letters, digits and _, "
                            f"starting with a letter, at most {MAX_NAME} characters (the kernel "
                            "names it bpf_<name>, 15 characters at most)")
    out = Path(out_dir)
    files = {out / f"{name}.c": C_TEMPLATE.format(name=name, NAME=name.upper()),
             out / f"{name}.yaml": YAML_TEMPLATE.format(name=name)}
    there = [str(f) for f in files if f.exists()]
    if there:
        raise ScaffoldError(f"{', '.join(there)} already exist{'s' if len(there) == 1 else ''}; "
                            "choose another name or directory (-o)")
    out.mkdir(parents=True, exist_ok=True)
    for f, text in files.items():
        f.write_text(text)
    return list(files)


__all__ = ["MAX_NAME", "ScaffoldError", "new_scheme"]
