"""The dumbbell layout (docs/experiment-file.md): hosts a<k> on the left, b<k> on the right,
routers r1 and r2 joined by the central link; flow k runs between a<k> and b<k> over its own
side links, rightward (``->``, a<k> sends) or leftward (``<-``)."""

from __future__ import annotations

from .links import channel_keys
from .model import SAME_RATE, GroupSpec, LinkSpec, RunSpec
from .resolved import DirectedLink, experiment, flow_entry, flow_groups
from .units import QueueLimit


def _is_second(src: str, dst: str) -> bool:
    """Whether ``src->dst`` leaves the *right* end of its dumbbell link: r1->a<k>, r2->r1,
    b<k>->r2 (the first direction of each pair is the one leaving the left end)."""
    return (src == "r1" and dst.startswith("a")) or (src, dst) == ("r2", "r1") \
        or (src.startswith("b") and dst == "r2")


def build_dumbbell(run: RunSpec, groups: list[GroupSpec]) -> dict:
    """Lay out the dumbbell: one host pair a<k>/b<k> per flow, each on its own side links,
    all crossing the central link r1-r2; returns the resolved dict."""
    per_flow = flow_groups(groups)
    n = len(per_flow)

    nodes = ([{"name": f"a{k}", "kind": "host"} for k in range(1, n + 1)]
             + [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
             + [{"name": f"b{k}", "kind": "host"} for k in range(1, n + 1)])

    links: list[DirectedLink] = []

    def add(name_src: str, name_dst: str, role: str, spec: LinkSpec, queue: QueueLimit,
            qpath: tuple, ecn: QueueLimit | None) -> int:
        extra = {}
        if spec.cond is not None:
            # The end the direction leaves: the left end is listed first (queue_a's end).
            end = "right" if _is_second(name_src, name_dst) else "left"
            pair = "-".join(sorted((name_src, name_dst)))
            extra = spec.cond.link_keys(end, pair, run.seed, run.duration_ns)
        aqm = spec.aqm_b if _is_second(name_src, name_dst) else spec.aqm_a
        rate = spec.rate_bps
        if _is_second(name_src, name_dst) and spec.rate_b_bps != SAME_RATE:
            rate = spec.rate_b_bps  # central rate: {left, right}
        if spec.overhead_bytes:
            extra = {**extra, "overhead_bytes": spec.overhead_bytes}
        extra = {**extra, **channel_keys(spec, name_src, name_dst)}
        links.append(DirectedLink(len(links), f"{name_src}->{name_dst}", name_src, name_dst,
                                  role, rate, spec.delay_ns, queue, qpath, ecn, extra,
                                  aqm=aqm))
        return len(links) - 1

    # Ids: all left side links (a_k->r1, r1->a_k per flow), the central pair, then all right
    # side links (r2->b_k, b_k->r2 per flow): a1->r1 is 0, r1->r2 is 2n, r2->b1 is 2n+2.
    left_ids = []
    for k, (_, g) in enumerate(per_flow, start=1):
        up = add(f"a{k}", "r1", "left", g.left, g.left.queue_a, g.left.queue_a_path, g.left.ecn_a)
        down = add("r1", f"a{k}", "left", g.left, g.left.queue_b, g.left.queue_b_path, g.left.ecn_b)
        left_ids.append((up, down))
    c = run.central
    c_lr = add("r1", "r2", "central", c, c.queue_a, c.queue_a_path, c.ecn_a)
    c_rl = add("r2", "r1", "central", c, c.queue_b, c.queue_b_path, c.ecn_b)
    right_ids = []
    for k, (_, g) in enumerate(per_flow, start=1):
        out = add("r2", f"b{k}", "right", g.right, g.right.queue_a, g.right.queue_a_path, g.right.ecn_a)
        back = add(f"b{k}", "r2", "right", g.right, g.right.queue_b, g.right.queue_b_path, g.right.ecn_b)
        right_ids.append((out, back))

    flows = []
    for i, (gi, g) in enumerate(per_flow):
        k = i + 1
        lu, ld = left_ids[i]
        ro, rb = right_ids[i]
        rightward = [lu, c_lr, ro]   # a_k -> b_k
        leftward = [rb, c_rl, ld]    # b_k -> a_k
        if g.direction == "->":
            path, rev, src, dst = rightward, leftward, f"a{k}", f"b{k}"
        else:
            path, rev, src, dst = leftward, rightward, f"b{k}", f"a{k}"
        flows.append(flow_entry(i, gi, g, g.direction, g.direction, src, dst, path, rev, links))

    return experiment(run, nodes, links, [c_lr, c_rl], flows)


__all__ = ["build_dumbbell"]
