/* ccbench's stand-in for libbpf's <bpf/bpf_tracing.h> (simulator build, see bpf_helpers.h):
 * BPF_PROG(name, args...) is a plain C function taking the typed arguments, as the simulator
 * calls a struct_ops hook directly. */
#ifndef CCBENCH_SIM_BPF_TRACING_H
#define CCBENCH_SIM_BPF_TRACING_H

#define BPF_PROG(name, args...) name(args)
#define BPF_STRUCT_OPS(name, args...) name(args)
#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) name(args)

#endif
