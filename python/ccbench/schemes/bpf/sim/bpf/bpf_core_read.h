/* ccbench's stand-in for libbpf's <bpf/bpf_core_read.h> (simulator build, see bpf_helpers.h):
 * no relocation is needed natively, so a CO-RE read is a field access. The simulator's
 * vmlinux.h declares bitfields as whole bytes, so BPF_CORE_READ_BITFIELD reads them the
 * same way. */
#ifndef CCBENCH_SIM_BPF_CORE_READ_H
#define CCBENCH_SIM_BPF_CORE_READ_H

#define BPF_CORE_READ_BITFIELD(s, field) ((s)->field)
#define BPF_CORE_READ_BITFIELD_PROBED(s, field) ((s)->field)
/* BPF_CORE_READ(s, a, b) is s->a->b (up to four levels) */
#define ___ccbench_cr1(s, a) ((s)->a)
#define ___ccbench_cr2(s, a, b) ((s)->a->b)
#define ___ccbench_cr3(s, a, b, c) ((s)->a->b->c)
#define ___ccbench_cr4(s, a, b, c, d) ((s)->a->b->c->d)
#define ___ccbench_pick(_1, _2, _3, _4, n, ...) n
#define BPF_CORE_READ(s, ...)                                                              \
	___ccbench_pick(__VA_ARGS__, ___ccbench_cr4, ___ccbench_cr3, ___ccbench_cr2,        \
			___ccbench_cr1)(s, __VA_ARGS__)
#define bpf_core_field_exists(field) 1
#define bpf_core_type_exists(type) 1

#endif
