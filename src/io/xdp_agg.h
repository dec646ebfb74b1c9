/*
 * xdp_agg.h: what the XDP aggregation program (bpf/xdp_agg.bpf.c) and its
 * loader share: the layout of its maps' keys and values.  Fixed-width types
 * only (included by BPF C and by user space).
 *
 * The maps mirror the state of one switch core (dp/switch) for the
 * aggregating UP entries the loader hands to the kernel:
 *   xa_cfg[0]     max_values of the switch (a larger count: FALLBACK);
 *   xa_ports[p]   the switch's port p (MACs, addresses; host order);
 *   xa_ifports    ifindex -> port;
 *   xa_labels     label -> compiled entry (every label of the table: the
 *                 program must know which packets it may not touch);
 *   xa_ingress    (port, job) -> rank (first-hop filtering);
 *   xa_slots      the aggregator pool: key, bitmap, slot metadata, sums
 *                 (PERCPU_ARRAY: one pool per CPU, see below);
 *   xa_progress   rank progress records (dp/progress.h; PERCPU_ARRAY);
 *   xa_trees      per-tree counters (PERCPU_ARRAY, index = entry's tree_idx);
 *   xa_last       per-CPU record of the last verdict (tests, debugging);
 *   xa_tx         a ring buffer of the frames after a packet's first;
 *   xa_ctrs       per-CPU counters (enum inart_xa_ctr).
 * xdp_agg_tick (the same object, run by user space on each CPU with
 * BPF_PROG_TEST_RUN on any frame of INART_XA_FRAME_MAX bytes) is
 * inart_switch_tick one frame at a time: XDP_TX with the flushed aggregate
 * in the frame, XDP_PASS (a slot without entry freed: call again) or
 * XDP_DROP (nothing expired).
 * Concurrency: every CPU is one shard (docs/dataplane.md "Shards and
 * steering"): packets are steered by (job, tree, slot) to one CPU, whose
 * own copy of the slots and rank progress they touch.  No locks: one packet
 * may touch two slots (flush_behind) and many progress records, which a
 * per-slot bpf_spin_lock could not cover.
 */
#ifndef INART_XDP_AGG_H
#define INART_XDP_AGG_H

#include <linux/bpf.h> /* struct bpf_spin_lock */
#include <linux/types.h>

#define INART_XA_MAX_PORTS 64
#define INART_XA_MAX_WORDS 16		       /* INART_WIRE_MAX_BITMAP_WORDS */
#define INART_XA_MAX_VALUES 358		       /* inart_wire_max_values(1): the largest payload */
#define INART_XA_MAX_EXPECTED 64	       /* expected ranks of a kernel-owned entry at most */
#define INART_XA_RESTART_IDLE_NS 1000000000ull /* INART_SW_RESTART_IDLE_NS (dp/switch.h) */
#define INART_XA_MAX_LABELS 65536
#define INART_XA_MAX_INGRESS 4096
#define INART_XA_UDP_PORT 47470 /* INART_WIRE_UDP_PORT */
#define INART_XA_LOST_AFTER 2	/* INART_SW_LOST_AFTER */
#define INART_XA_FRAME_MAX 1518 /* INART_FRAME_MAX */
#define INART_XA_MAX_FRAMES 3	/* frames one packet may produce here */

struct inart_xa_cfg {
	__u32 max_values;
	__u32 n_ports;
	__u32 n_slots; /* the pool's (xa_slots' max_entries) */
	/* slots [0, scan_slots) hold every kernel entry's range (set by the
	 * fill after the labels; 0: all n_slots): the tick scans only those
	 * (a scan of a 65536-slot pool took 60-90 us a tick) */
	__u32 scan_slots;
	__u64 timeout_ns; /* flush_timeout_ns */
	__u64 now;	  /* 0: bpf_ktime_get_ns(); else the clock (tests) */
	/* switchd (io/xagg): bumped after an install's maps are written / at
	 * lose_state; each CPU compares them with its xa_last copy on entry to
	 * xdp_agg_cpu and clears its own pool there (issue 25, part 2) */
	__u32 gen;	/* install: slots of labels gone freed, progress reset */
	__u32 lose_gen; /* lose_state: every slot freed, progress reset */
	__u32 n_ranks;	/* xa_progress' max_entries */
	/* bumped by every fill after its labels (io/xdp_agg_maps), which carry
	 * the new value: a CPU's cached copy of an entry (xa_lcache) is used
	 * while its own tables equals this, else fetched again */
	__u32 tables;
};

struct inart_xa_port {
	__u8 mac[6];
	__u8 peer_mac[6];
	__u8 peer_fixed; /* 1: peer_mac set in the configuration (never learned) */
	__u8 pad[3];
	__u32 ip;      /* host order, 0: none */
	__u32 peer_ip; /* host order, 0: no first-hop filtering */
};

/* A label entry as the program reads it. */
struct inart_xa_ent {
	__u32 label, job, next_label;
	__u16 tree, out_port, slot_base, n_slots;
	__u8 kind, aggregate, bitmap_words;
	__u8 kernel;	/* UP: 1: this aggregating entry's DATA is handled here */
	__u32 tree_idx; /* into xa_trees */
	__u32 rk_off;	/* first progress record (one per expected rank, rank order) */
	__u32 n_exp;	/* expected ranks (<= INART_XA_MAX_EXPECTED when kernel) */
	__u32 up_label; /* DOWN: the label of its tree's aggregating UP entry (up_of), 0 */
	__u32 tables;	/* xa_cfg's tables once the fill that wrote it is done */
	__u64 in_ports;
	__u64 expected[INART_XA_MAX_WORDS];
	__u16 exp_rank[INART_XA_MAX_EXPECTED]; /* the expected ranks in order */
};

struct inart_xa_ing_key {
	__u32 port, job;
};

/* One pool slot: dp/agg_pool's view plus dp/switch's slot_meta. */
struct inart_xa_slot {
	__u8 busy, kept, overflow, bitmap_words;
	__u32 absorbed;
	__u32 job, label, iter, seq;
	__u16 tree, fan_in, slot, count;
	__s8 scale_exp;
	__u8 m_flags, m_ttl, m_repaired;
	__u16 m_sport;
	__u8 sums_be; /* 1: sums hold the wire's big-endian words (a slot
			 complete at its take, copied as received); 0: host order */
	__u8 pad;
	__u64 deadline; /* busy: now + timeout at take */
	__u32 aux;	/* kept result: its prev */
	__u32 pad2;
	__u64 order;		  /* busy: the take's number on this CPU (FIFO order) */
	__u32 m_src_ip, m_dst_ip; /* host order */
	__u64 bitmap[INART_XA_MAX_WORDS];
	__s32 sums[INART_XA_MAX_VALUES];
};

struct inart_xa_pos {
	__u32 iter, pos;
};

/* Per-tree counters: the fields of struct inart_sw_tree_stats the program
 * writes. */
struct inart_xa_tree {
	__u64 aggregated, emitted, partial, early, fallback, duplicates, overflows;
};

enum inart_xa_verdict {
	INART_XA_PUNT = 0,    /* not touched: user space (the C core) handles it */
	INART_XA_DROP = 1,    /* absorbed or a duplicate: nothing sent */
	INART_XA_SEND = 2,    /* frames built here: the first sent to out_port in
				 place of the packet, the others queued on xa_tx */
	INART_XA_KEPT = 4,    /* a clean RESULT: kept in its chunk's slot here, then
				 passed up (the core replicates it: stateless) */
	INART_XA_APPLIED = 3, /* state changed here but the frames could not be
				 queued (xa_tx full): passed up */
};

/* xa_tx (a BPF ring buffer): a frame after a packet's first, to be sent on
 * port as it is (the first left in place of the packet). */
struct inart_xa_txrec {
	__u32 port, len;
	__u8 data[INART_XA_FRAME_MAX];
	__u8 pad[2];
};

/* xa_ctrs (per CPU): what the programs did, and why packets were punted. */
enum inart_xa_ctr {
	INART_XA_C_SENT,      /* packets answered with frames built here */
	INART_XA_C_QUEUED,    /* frames after the first, queued on xa_tx */
	INART_XA_C_DROPPED,   /* absorbed or duplicate: nothing sent */
	INART_XA_C_RING_FULL, /* state applied, frames not queued (passed up) */
	INART_XA_C_FLUSHED,   /* aggregates flushed by xdp_agg_tick */
	INART_XA_C_KEPT,      /* clean RESULTs kept, then passed up */
	INART_XA_C_SHAPED,    /* frames for a shaped port queued on xa_tx (--shape) */
	INART_XA_C_TX_FULL,   /* the same, xa_tx full: lost as on a wire */
	INART_XA_P_FRAME,     /* punted: not untagged IPv4 UDP to 47470 in the plain form */
	INART_XA_P_WIRE,      /* punted: an INA header the program does not take (or refused) */
	INART_XA_P_PORT,      /* punted: unknown ingress, or first-hop checks failed */
	INART_XA_P_LABEL,     /* punted: label 0, TTL <= 1, unknown label, port, job or tree */
	INART_XA_P_ENTRY,     /* punted: not a kernel aggregating UP entry, or RETX/NACK */
	INART_XA_P_CHECK,     /* punted: bitmap width, bits outside the subtree, count */
	INART_XA_CTR_N
};

struct inart_xa_last {
	__u32 verdict;	/* enum inart_xa_verdict */
	__u32 out_port; /* SEND */
	__u32 frames;	/* frames the C core sends for this packet */
	__u32 pad;
	__u64 takes;	     /* slots taken on this CPU (the next take's order) */
	__u32 gen, lose_gen; /* the xa_cfg values this CPU's state follows */
	__u64 lost;	     /* busy slots lose_state freed on this CPU, since load */
};

/* xdp_agg_cpu's per-port counters (per CPU): what it handled in the kernel
 * (index 4 * port + enum inart_xdp_port_ctr, io/xdp_switch.h) */
#define INART_XA_N_PCTRS (4 * INART_XA_MAX_PORTS)
/* xa_rx and xa_tx records: sizes of the ring buffers (switchd sizes xa_tx at
 * load; bytes, a power of two) */
#define INART_XA_RX_RING (1u << 22)
#define INART_XA_TX_RING (1u << 23)
/* xdp_agg_kick's frame: the target CPU as a __u32 at this offset */
#define INART_XA_KICK_CPU_OFF 14
#define INART_XA_MAX_CPUS 64

/* ---- --agg-mbps on the kernel path (h25g): dp/gate's aggregation-rate
 * limit in the kernel (docs/dataplane.md "The aggregation-rate limit").
 * xa_gate[0] (one value, under its bpf_spin_lock: the bucket is the
 * switch's, its frames run on every aggregation CPU) is a token bucket kept
 * in virtual time: a charged frame without tokens, or behind one, is given
 * the time the C gate would grant it (the bucket advanced to then) and
 * handed to switchd through xa_held; switchd sends it back at that time
 * through xdp_agg_inject with a "paid" mark in its metadata, and the
 * aggregation CPU takes it without a charge.  release[] holds the grant
 * times of the last cap frames held: the FIFO is full when the one held
 * cap frames ago is still waiting. ---- */
#define INART_XA_GATE_RING 4096	       /* held frames at most (a power of two) */
#define INART_XA_GATE_PAID 0x50414944u /* the mark's magic ("PAID") */
#define INART_XA_HELD_RING (1u << 23)  /* xa_held's bytes */

struct inart_xa_gate {
	struct bpf_spin_lock lock;
	__u32 cap;     /* frames waiting at most, <= INART_XA_GATE_RING */
	__u64 rate;    /* bytes per second; 0: no limit (nothing charged) */
	__s64 burst;   /* nano-bytes (bytes * 1e9) */
	__s64 tokens;  /* nano-bytes; below 0 only by a frame above the burst */
	__u64 last_ns; /* the bucket's time: after now while frames wait */
	__u64 nonce;   /* the mark's secret (switchd's, random) */
	__u64 n_held;  /* frames held since start: release[n_held % ring] next */
	__u64 agg_frames, agg_bytes, agg_held, agg_dropped; /* as inart_gate_stats */
	__u64 held_lost;				    /* held, but xa_held was full: lost */
	__u64 release[INART_XA_GATE_RING];
};

/* xa_held: a frame held back, for switchd to send back at release_ns. */
struct inart_xa_heldrec {
	__u32 port, len, cpu, pad;
	__u64 release_ns;
	__u8 data[INART_XA_FRAME_MAX];
	__u8 pad2[2];
};

/* The metadata xdp_agg_inject's frames carry (BPF_PROG_TEST_RUN). */
struct inart_xa_paid {
	__u32 magic, cpu, port, pad;
	__u64 nonce;
};

#endif
