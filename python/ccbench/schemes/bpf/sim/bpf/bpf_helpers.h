/* ccbench's stand-in for libbpf's <bpf/bpf_helpers.h> when a BPF congestion control is
 * compiled natively for the simulator (docs/bpf-schemes.md, "In the simulator"): SEC() places
 * nothing, maps are plain structs, __ksym functions are ordinary functions of the simulator's
 * runtime (sim/ccbench_sim_runtime.c), and the helpers a congestion control calls are that
 * runtime's.
 */
#ifndef CCBENCH_SIM_BPF_HELPERS_H
#define CCBENCH_SIM_BPF_HELPERS_H

/* The version of the interface between a native program and crates/sim/src/cc/native/. */
#define CCBENCH_SIM_ABI 1
#define CCBENCH_SIM 1

#define SEC(name)
#define __ksym
#define __kconfig
#define __weak __attribute__((weak))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define __noinline __attribute__((noinline))
#define __hidden __attribute__((visibility("hidden")))

/* map definitions: the same members as libbpf's, so that sizeof(*map.value) is the value size */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) __typeof__(val) *name
#define __array(name, val) __typeof__(val) *name[]

#define BPF_MAP_TYPE_SK_STORAGE 24
#define BPF_F_NO_PREALLOC (1U << 0)
#define BPF_SK_STORAGE_GET_F_CREATE (1ULL << 0)

struct sock;
struct tcp_sock;

/* Per-socket storage (BPF_MAP_TYPE_SK_STORAGE): one zeroed value per (map, socket), created
 * with BPF_SK_STORAGE_GET_F_CREATE (`init` is not copied in: NULL only, as cdg.c uses it),
 * freed with the flow. */
void *ccbench_sim_sk_storage_get(const void *map, unsigned long size, void *sk, void *init,
				 unsigned long long flags);
long ccbench_sim_sk_storage_delete(const void *map, void *sk);
#define bpf_sk_storage_get(map, sk, init, flags)                                         \
	ccbench_sim_sk_storage_get((map), sizeof(*(map)->value), (sk), (init), (flags))
#define bpf_sk_storage_delete(map, sk) ccbench_sim_sk_storage_delete((map), (sk))

/* The simulator's clock (ns since the start of the run). */
unsigned long long ccbench_sim_ktime_get_ns(void);
#define bpf_ktime_get_ns() ccbench_sim_ktime_get_ns()
#define bpf_ktime_get_boot_ns() ccbench_sim_ktime_get_ns()
#define bpf_ktime_get_coarse_ns() ccbench_sim_ktime_get_ns()

/* Random numbers: a per-socket stream (splitmix64) seeded from the experiment's seed and the
 * connection, so a run is reproducible (the kernel's is per-CPU prandom). */
unsigned int ccbench_sim_get_prandom_u32(void);
#define bpf_get_prandom_u32() ccbench_sim_get_prandom_u32()

/* An ACK from the receiving half: the simulator's receiver runs its own rules (DCTCP's ECE
 * state machine included), so this does nothing and returns 0. */
long ccbench_sim_tcp_send_ack(void *tp, unsigned int rcv_nxt);
#define bpf_tcp_send_ack(tp, rcv_nxt) ccbench_sim_tcp_send_ack((tp), (rcv_nxt))

/* No trace pipe: printing does nothing. */
#define bpf_printk(fmt, ...) ((void)0)
#define bpf_trace_printk(fmt, sz, ...) ((void)0)

#endif
