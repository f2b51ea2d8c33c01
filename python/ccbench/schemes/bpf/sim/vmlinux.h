/* ccbench's "vmlinux.h" for the simulator: the kernel types a tcp_congestion_ops program reads,
 * for compiling a BPF congestion control natively (cc -O2 -shared -fPIC) so that ccbench's
 * simulator can run it (docs/bpf-schemes.md, "In the simulator").
 *
 * Only the fields congestion control uses are here, under their Linux names
 * (include/linux/tcp.h, include/net/inet_connection_sock.h, include/net/sock.h,
 * include/net/tcp.h), so that a program written against the real vmlinux.h compiles unchanged.
 * Units are Linux's: windows in packets, sequence numbers as u32 (the simulator's byte offsets
 * modulo 2^32), tcp_mstamp in us, srtt_us as 8 x the smoothed RTT in us, sk_pacing_rate in
 * bytes per second. Two differences a program can see: bitfields (is_cwnd_limited,
 * icsk_ca_state) are whole bytes here, and the socket carries three fields of the simulator's
 * own (ccbench_storage, ccbench_now_ns, ccbench_prandom).
 *
 * The layout is mirrored by crates/sim/src/cc/native/abi.rs, which checks it when a program
 * is loaded: change both together and bump CCBENCH_SIM_ABI in bpf/bpf_helpers.h.
 */
#ifndef CCBENCH_SIM_VMLINUX_H
#define CCBENCH_SIM_VMLINUX_H

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u8 u8;
typedef __s8 s8;
typedef __u16 u16;
typedef __s16 s16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef unsigned long size_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

#ifndef NULL
#define NULL ((void *)0)
#endif

/* enum tcp_ca_state (include/uapi/linux/tcp.h) */
enum tcp_ca_state {
	TCP_CA_Open = 0,
	TCP_CA_Disorder = 1,
	TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3,
	TCP_CA_Loss = 4,
};

/* enum tcp_ca_event (include/net/tcp.h) */
enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

/* enum tcp_ca_ack_event_flags (include/net/tcp.h) */
enum tcp_ca_ack_event_flags {
	CA_ACK_SLOWPATH = 1,
	CA_ACK_WIN_UPDATE = 2,
	CA_ACK_ECE = 4,
};

/* enum inet_csk_ack_state_t (include/net/inet_connection_sock.h) */
enum inet_csk_ack_state_t {
	ICSK_ACK_SCHED = 1,
	ICSK_ACK_TIMER = 2,
	ICSK_ACK_PUSHED = 4,
	ICSK_ACK_PUSHED2 = 8,
	ICSK_ACK_NOW = 16,
};

/* enum sk_pacing (include/net/sock.h) */
enum sk_pacing {
	SK_PACING_NONE = 0,
	SK_PACING_NEEDED = 1,
	SK_PACING_FQ = 2,
};

struct sock {
	__u64 sk_pacing_rate;       /* bytes per second */
	__u64 sk_max_pacing_rate;   /* bytes per second; ~0 = unlimited */
	__u32 sk_pacing_status;     /* enum sk_pacing */
	__u8 sk_pacing_shift;
	__u8 __ccbench_pad0[3];
	void *ccbench_storage;      /* simulator: this socket's BPF_MAP_TYPE_SK_STORAGE values */
	__u64 ccbench_now_ns;       /* simulator: the clock (bpf_ktime_get_ns) */
	__u64 ccbench_prandom;      /* simulator: this socket's bpf_get_prandom_u32 state */
};

struct inet_sock {
	struct sock sk;
};

#define ICSK_CA_PRIV_SIZE 104

struct inet_connection_sock {
	struct inet_sock icsk_inet;
	__u32 icsk_rto;             /* us here (Linux: jiffies) */
	__u8 icsk_ca_state;         /* enum tcp_ca_state (a 5-bit field in Linux) */
	__u8 icsk_retransmits;
	__u8 __ccbench_pad1[2];
	struct {
		__u8 pending;       /* ICSK_ACK_*: writable, no effect in the simulator */
		__u8 quick;
		__u8 pingpong;
		__u8 retry;
		__u32 ato;
	} icsk_ack;
	__u64 icsk_ca_priv[ICSK_CA_PRIV_SIZE / sizeof(__u64)];
};

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	__u32 mss_cache;
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 rcv_nxt;              /* the receiving half is not modelled: 0 */
	__u32 snd_wnd;              /* bytes */
	__u32 snd_cwnd;
	__u32 snd_ssthresh;
	__u32 snd_cwnd_cnt;
	__u32 snd_cwnd_clamp;
	__u32 snd_cwnd_stamp;       /* kept for the program; the simulator does not use it */
	__u32 prior_cwnd;
	__u32 srtt_us;              /* 8 x the smoothed RTT, us */
	__u32 packets_out;
	__u32 sacked_out;
	__u32 lost_out;
	__u32 retrans_out;
	__u32 max_packets_out;
	__u32 total_retrans;
	__u32 delivered;
	__u32 delivered_ce;
	__u32 lost;
	__u32 app_limited;
	__u32 lsndtime;             /* ms (Linux: jiffies, HZ = 1000) */
	__u32 rtt_min_us;           /* windowed minimum RTT (Linux: tcp_min_rtt()); ~0 before a sample */
	__u64 tcp_mstamp;           /* us */
	__u64 tcp_clock_cache;      /* ns */
	__u64 tcp_wstamp_ns;
	__u64 delivered_mstamp;     /* us */
	__u8 ecn_flags;             /* TCP_ECN_OK when ECN was negotiated; writes have no effect */
	__u8 is_cwnd_limited;       /* a 1-bit field in Linux */
	__u8 __ccbench_pad2[6];
};

/* struct ack_sample (include/net/tcp.h) */
struct ack_sample {
	__u32 pkts_acked;
	__s32 rtt_us;
	__u32 in_flight;
};

/* struct rate_sample (include/net/tcp.h) */
struct rate_sample {
	__u64 prior_mstamp;
	__u32 prior_delivered;
	__u32 prior_delivered_ce;
	__s32 delivered;
	__s32 delivered_ce;
	long interval_us;
	__u32 snd_interval_us;
	__u32 rcv_interval_us;
	long rtt_us;
	int losses;
	__u32 acked_sacked;
	__u32 prior_in_flight;
	__u32 last_end_seq;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
};

#define TCP_CA_NAME_MAX 16

/* struct tcp_congestion_ops (include/net/tcp.h, 6.10+ cong_control signature) */
struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	void (*set_state)(struct sock *sk, __u8 new_state);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	void (*in_ack_event)(struct sock *sk, __u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	__u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs);
	__u32 (*undo_cwnd)(struct sock *sk);
	__u32 (*sndbuf_expand)(struct sock *sk);
	size_t (*get_info)(struct sock *sk, __u32 ext, int *attr, void *info);
	char name[TCP_CA_NAME_MAX];
	void *owner;
	__u32 key;
	__u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
};

#endif
