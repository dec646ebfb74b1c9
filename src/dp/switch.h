/*
 * switch: the software programmable switch, sans I/O.  Frames and the
 * current time go in, frames and deadlines come out; no socket, clock or
 * allocation on the data path (everything is sized at creation).
 *
 * Pipeline per frame: parse Ethernet/IPv4/UDP -> if UDP to
 * INART_WIRE_UDP_PORT with a valid INA header and a label: label table ->
 *   UP entry:   aggregate here (pool slot of the tree's region, bitmap
 *               disjointness = exactly-once, integer sum, emit upward when
 *               the subtree's expected bitmap is complete; RETX packets are
 *               forwarded, never aggregated; a busy slot -> FALLBACK forward)
 *               or forward (out port, next label);
 *   DOWN entry: replicate the RESULT to every (port, label, dst ip) listed.
 * -> rewrite (MACs, label, IPv4 checksum, TTL; UDP checksum 0) -> emit.
 * First hop (docs/wire.md, Ingress filtering): on a port whose peer is a
 * host (peer_ip), every IPv4 and ARP frame must come from that address
 * (SPOOFED), and INA DATA must carry exactly the host's rank in its job
 * (the ingress table; RANK); every label entry names the ports it may
 * arrive on (in_ports; INGRESS).  Every labelled INA packet needs TTL > 1;
 * an aggregate carries one less than its contributions' smallest TTL.
 * Everything else: ARP requests are answered with the receiving port's MAC
 * for every target address except the asker's own (proxy ARP; every port is
 * a point-to-point link), IPv4 is forwarded by longest prefix match with TTL
 * decrement (no ICMP; packets to the switch's own port addresses are
 * dropped: there is no local stack), the rest dropped.  Every drop is counted
 * with its reason; malformed INA packets never touch aggregation state.
 * Partial aggregates older than flush_timeout_ns are flushed upward with
 * INART_F_PARTIAL by inart_switch_tick; a slot whose missing ranks sent
 * chunks INART_SW_LOST_AFTER later (their contributions were lost) is flushed
 * at once; a PARTIAL aggregate from below never waits in a fresh slot.
 * Slots keep the aggregate they emitted and clean results passing down the
 * tree's DOWN entries: a NACK passing down makes the switch send the kept
 * aggregate again (RETX) or flush what it holds for the chunk, and take those
 * ranks out of the NACK; a probe going up is answered with a kept result
 * (docs/wire.md, Loss recovery).  A slot holds one chunk, identified
 * by (job, tree, entry label, iter, seq, slot, fan_in, bitmap_words, count,
 * scale_exp); a contribution of any other chunk finds it busy (FALLBACK).
 * Aggregates leave with a new INA header (DATA, plus OVERFLOW if any sum
 * overflowed or a contribution carried it), label = next_label, IPv4 source
 * = the out port's address (or the first contributor's if the port has
 * none), destination and UDP source port of the first contributor, TTL 64.
 *
 * Neighbour MACs: every port is a point-to-point link; the switch learns the
 * peer's MAC from the source of frames received on the port (or it is set
 * in the config); until known, frames go to the broadcast address.
 *
 * Ownership: the switch owns its tables and pool; frames passed in and out
 * are the caller's buffers.
 */
#ifndef INART_SWITCH_H
#define INART_SWITCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/wire.h"

#define INART_SW_MAX_PORTS 64
#define INART_SW_MAX_FANOUT 64
#define INART_FRAME_MAX 1518 /* Ethernet frame without FCS, room for a VLAN tag */
#define INART_SW_MAX_LABELS (1 << 20)
#define INART_SW_MAX_POOL_SLOTS (1 << 24)
/* pool_slots x max_values: the aggregator pool's int32 sums are at most this
 * many (512 MiB), whatever the configuration asks */
#define INART_SW_MAX_POOL_VALUES (1u << 27)
/* values per slot at most (a packet carries at most 358) */
#define INART_SW_MAX_SLOT_VALUES 1024

/* A rank that contributed chunk seq + INART_SW_LOST_AFTER (or a later
 * iteration) at an aggregating entry is taken not to contribute chunk seq
 * any more (contributions of one rank travel one path in order). */
#define INART_SW_LOST_AFTER 2
/* An aggregating entry that saw no contribution for this long forgets its
 * ranks' progress at the next one: a job started again (new worker
 * contexts count iterations from 1, the PS's restart rule:
 * INART_PS_RESTART_IDLE_NS), whose chunks the old run's records would all
 * show given up (flushed as partial aggregates at once). */
#define INART_SW_RESTART_IDLE_NS 1000000000ull

struct inart_sw_port_cfg {
	uint8_t mac[6];
	uint32_t ip;	     /* host order; 0: none */
	uint8_t peer_mac[6]; /* all zero: learn it */
	uint32_t peer_ip;    /* host order: the host on this port (the first hop of
				its traffic): every IPv4 or ARP frame received here must
				come from this address (ingress filtering); 0: the peer
				is a switch (trusted) or not known, no check */
};

struct inart_sw_cfg {
	int n_ports;
	struct inart_sw_port_cfg ports[INART_SW_MAX_PORTS];
	int pool_slots;		   /* aggregator slots in all (0: no aggregation) */
	int max_values;		   /* int32 values per slot; 0: inart_wire_max_values(1) */
	uint64_t flush_timeout_ns; /* partial aggregates flushed after this */
};

enum inart_label_kind {
	INART_LABEL_UP = 1,   /* DATA towards the PS */
	INART_LABEL_DOWN = 2, /* RESULT towards the workers */
};

struct inart_label_down {
	uint16_t port;
	uint32_t label;	 /* label of the copy (0: none, last hop) */
	uint32_t dst_ip; /* host order; 0: keep the destination */
};

/* A label table entry as updates carry it and inart_switch_get_labels
 * returns it.  The arrays are the caller's (in an update) or the switch's
 * (read back: valid until the tables change); an entry uses only what its
 * kind needs, and the switch stores it in that much memory. */
struct inart_label_entry {
	uint32_t label; /* != 0 */
	uint8_t kind;	/* enum inart_label_kind */
	uint32_t job;
	uint16_t tree;
	uint64_t in_ports; /* bit p: the label may arrive on port p (the previous hops:
			      the tree's children for UP, its parent for DOWN);
			      0: any port */
	/* UP */
	uint16_t out_port;
	uint32_t next_label;
	uint8_t aggregate; /* 1: aggregation point of (job, tree) */
	uint16_t slot_base, n_slots;
	uint8_t bitmap_words;
	const uint64_t *expected; /* aggregating: bitmap_words words, the contributors below */
	/* DOWN */
	uint16_t n_down;
	const struct inart_label_down *down; /* n_down copies */
};

struct inart_route {
	uint32_t prefix; /* host order */
	uint8_t len;	 /* 0..32 */
	uint16_t port;
};

/* The host on `port` is worker `rank` of `job`: DATA of that job received on
 * the port must carry exactly that rank (ingress filtering at the first
 * hop).  A DATA packet from a host port (peer_ip set) of a job the port has
 * no entry for is dropped. */
struct inart_sw_ingress {
	uint16_t port;
	uint16_t rank;
	uint32_t job;
};

/* A batch of table changes, applied all or nothing. */
struct inart_sw_update {
	int replace; /* 1: clear the tables (labels, routes, ingress) first */
	int n_labels;
	const struct inart_label_entry *labels;
	int n_del_labels;
	const uint32_t *del_labels;
	int n_routes;
	const struct inart_route *routes;
	int n_ingress; /* added, or replacing the entry of the same (port, job) */
	const struct inart_sw_ingress *ingress;
};

struct inart_frame {
	uint8_t *data;
	uint16_t len;
	uint16_t port;
};

enum inart_sw_drop {
	INART_DROP_MALFORMED, /* Ethernet/IPv4/UDP not parseable */
	INART_DROP_WIRE,      /* INA header failed inart_wire_decode */
	INART_DROP_NO_LABEL,  /* unknown label */
	INART_DROP_MISMATCH,  /* label's job/tree/kind/bitmap disagree with the packet */
	INART_DROP_BITS,      /* contributors outside the subtree */
	INART_DROP_DUPLICATE, /* contributors already aggregated in the slot */
	INART_DROP_NO_ROUTE,  /* no IPv4 route */
	INART_DROP_TTL,	      /* TTL expired */
	INART_DROP_OUT_FULL,  /* more output frames than the caller gave room for */
	INART_DROP_OTHER,     /* not IPv4 nor ARP, or ARP not for us */
	INART_DROP_SPOOFED,   /* from a host port with a source address not the host's */
	INART_DROP_INGRESS,   /* a label on a port it may not arrive on */
	INART_DROP_RANK,      /* DATA from a host port not carrying exactly the host's rank */
	INART_DROP_N
};

struct inart_sw_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	/* of rx_bytes / tx_bytes: IPv4 UDP frames to the INA port (the jobs'
	 * own traffic; the controller subtracts it to estimate background) */
	uint64_t rx_ina_bytes, tx_ina_bytes;
};

struct inart_sw_tree_stats {
	uint32_t job;
	uint16_t tree;
	uint64_t aggregated; /* contributions absorbed */
	uint64_t emitted;    /* complete aggregates sent up */
	uint64_t partial;    /* partial aggregates flushed (timeout or early) */
	uint64_t early;	     /* of which flushed before the timeout: the ranks missing had
				sent later chunks (their contributions were lost) */
	uint64_t fallback;   /* forwarded unaggregated (slot busy) */
	uint64_t duplicates;
	uint64_t results;   /* RESULT copies sent down (NACKs included) */
	uint64_t repaired;  /* kept aggregates sent again for a NACK */
	uint64_t answered;  /* probes answered with a kept result */
	uint64_t overflows; /* int32 sums that overflowed */
};

struct inart_switch;

/* Whether a switch can be created with cfg: 0, or -EINVAL with the reason
 * in err (the field, its value and its bounds): n_ports not in
 * 1..INART_SW_MAX_PORTS, pool_slots above INART_SW_MAX_POOL_SLOTS,
 * max_values above INART_SW_MAX_SLOT_VALUES or their product above
 * INART_SW_MAX_POOL_VALUES. */
int inart_switch_cfg_check(const struct inart_sw_cfg *cfg, struct inart_err *err);

/* NULL + errno (EINVAL: cfg refused by inart_switch_cfg_check, which
 * names the reason; ENOMEM). */
struct inart_switch *inart_switch_create(const struct inart_sw_cfg *cfg);
void inart_switch_destroy(struct inart_switch *sw);

/* Validate the whole batch, then apply it; on error nothing changes and why
 * names the offending entry.  0 or -EINVAL / -ENOSPC / -ENOMEM.  The same
 * as inart_switch_tables_build + inart_switch_tables_swap + destroy. */
int inart_switch_apply(struct inart_switch *sw, const struct inart_sw_update *u,
		       struct inart_err *err);

/*
 * Tables built off the packet path.  A table set (labels, routes, ingress,
 * and the per-entry state the pipeline keeps: rank progress, tree
 * counters) is compiled from the switch's current tables and an update
 * without changing the switch; swapping it in is O(trees + busy slots).
 * Threads: build reads only what the pipeline never writes (the current
 * tables' entries and routes), so it may run in another thread while
 * inart_switch_rx runs, as long as no swap happens meanwhile; the swap and
 * everything else run in the packet thread.
 */
struct inart_sw_tables;

/* 0 and *out, or -EINVAL/-ENOSPC/-ENOMEM with err (nothing allocated). */
int inart_switch_tables_build(const struct inart_switch *sw, const struct inart_sw_update *u,
			      struct inart_sw_tables **out, struct inart_err *err);
/* Put t in service (tree counters carried over by (job, tree); slots whose
 * entry is gone are freed); returns the previous table set (the caller
 * destroys it, e.g. in another thread). */
struct inart_sw_tables *inart_switch_tables_swap(struct inart_switch *sw,
						 struct inart_sw_tables *t);
void inart_sw_tables_destroy(struct inart_sw_tables *t);
/* Bytes allocated for a table set (entries, index, copies, bitmaps, rank
 * progress, counters, routes); docs/dataplane.md states it per entry. */
size_t inart_sw_tables_bytes(const struct inart_sw_tables *t);
/* The switch's current table set (read-only). */
const struct inart_sw_tables *inart_switch_tables(const struct inart_switch *sw);

/* Process one received frame; emit up to max_out frames into out[] (each
 * out[i].data has INART_FRAME_MAX bytes).  Returns the number emitted. */
int inart_switch_rx(struct inart_switch *sw, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out);

/* Earliest pending flush deadline, UINT64_MAX if none. */
uint64_t inart_switch_next_deadline(const struct inart_switch *sw);

/* Flush partial aggregates whose deadline passed. Returns frames emitted. */
int inart_switch_tick(struct inart_switch *sw, uint64_t now_ns, struct inart_frame *out,
		      int max_out);

/* Forget all aggregation state (as after a restart); tables stay.  Returns
 * how many slots were aggregating a chunk (their partial sums are lost). */
int inart_switch_lose_state(struct inart_switch *sw);

/* Pool slots aggregating a chunk now (read-only: the packet thread's state,
 * read where it stands still). */
int inart_switch_slots_busy(const struct inart_switch *sw);

/* Counters: drops[INART_DROP_N], per port (n_ports), per tree (up to
 * max_trees entries; returns how many trees there are). */
int inart_switch_stats(const struct inart_switch *sw, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees);

const char *inart_switch_drop_name(int reason);

/* Reading the tables back (control socket): copy up to max entries, return
 * how many there are in all.  Labels come in no particular order; routes too;
 * label entries point into the switch's tables (valid until they change). */
int inart_switch_get_labels(const struct inart_switch *sw, struct inart_label_entry *out, int max);
int inart_switch_get_routes(const struct inart_switch *sw, struct inart_route *out, int max);
int inart_switch_get_ingress(const struct inart_switch *sw, struct inart_sw_ingress *out, int max);
/* The same on a table set. */
int inart_sw_tables_labels(const struct inart_sw_tables *t, struct inart_label_entry *out, int max);

/* The peer MAC of a port as currently known (configured or learned); 0, or
 * -1 if port is out of range or the MAC is not known yet. */
int inart_switch_peer_mac(const struct inart_switch *sw, int port, uint8_t mac[6]);

#endif
