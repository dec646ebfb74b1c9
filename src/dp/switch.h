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

#include "wire.h"

#define INART_SW_MAX_PORTS 64
#define INART_SW_MAX_FANOUT 64
#define INART_FRAME_MAX 1518 /* Ethernet frame without FCS, room for a VLAN tag */

struct inart_sw_port_cfg {
	uint8_t mac[6];
	uint32_t ip;	     /* host order; 0: none */
	uint8_t peer_mac[6]; /* all zero: learn it */
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

struct inart_label_entry {
	uint32_t label; /* != 0 */
	uint8_t kind;	/* enum inart_label_kind */
	uint32_t job;
	uint16_t tree;
	/* UP */
	uint16_t out_port;
	uint32_t next_label;
	uint8_t aggregate; /* 1: aggregation point of (job, tree) */
	uint16_t slot_base, n_slots;
	uint8_t bitmap_words;
	uint64_t expected[INART_WIRE_MAX_BITMAP_WORDS]; /* contributors below */
	/* DOWN */
	uint16_t n_down;
	struct inart_label_down down[INART_SW_MAX_FANOUT];
};

struct inart_route {
	uint32_t prefix; /* host order */
	uint8_t len;	 /* 0..32 */
	uint16_t port;
};

/* A batch of table changes, applied all or nothing. */
struct inart_sw_update {
	int replace; /* 1: clear both tables first */
	int n_labels;
	const struct inart_label_entry *labels;
	int n_del_labels;
	const uint32_t *del_labels;
	int n_routes;
	const struct inart_route *routes;
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
	INART_DROP_N
};

struct inart_sw_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
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

struct inart_switch *inart_switch_create(const struct inart_sw_cfg *cfg);
void inart_switch_destroy(struct inart_switch *sw);

/* Validate the whole batch, then apply it; on error nothing changes and why
 * names the offending entry.  0 or -EINVAL / -ENOSPC. */
int inart_switch_apply(struct inart_switch *sw, const struct inart_sw_update *u, char *why,
		       size_t why_len);

/* Process one received frame; emit up to max_out frames into out[] (each
 * out[i].data has INART_FRAME_MAX bytes).  Returns the number emitted. */
int inart_switch_rx(struct inart_switch *sw, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out);

/* Earliest pending flush deadline, UINT64_MAX if none. */
uint64_t inart_switch_next_deadline(const struct inart_switch *sw);

/* Flush partial aggregates whose deadline passed. Returns frames emitted. */
int inart_switch_tick(struct inart_switch *sw, uint64_t now_ns, struct inart_frame *out,
		      int max_out);

/* Forget all aggregation state (as after a restart); tables stay. */
void inart_switch_lose_state(struct inart_switch *sw);

/* Counters: drops[INART_DROP_N], per port (n_ports), per tree (up to
 * max_trees entries; returns how many trees there are). */
int inart_switch_stats(const struct inart_switch *sw, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees);

const char *inart_switch_drop_name(int reason);

/* Reading the tables back (control socket): copy up to max entries, return
 * how many there are in all.  Labels come in no particular order; routes too. */
int inart_switch_get_labels(const struct inart_switch *sw, struct inart_label_entry *out, int max);
int inart_switch_get_routes(const struct inart_switch *sw, struct inart_route *out, int max);

/* The peer MAC of a port as currently known (configured or learned); 0, or
 * -1 if port is out of range or the MAC is not known yet. */
int inart_switch_peer_mac(const struct inart_switch *sw, int port, uint8_t mac[6]);

#define INART_SW_MAX_LABELS (1 << 20)

/* A rank that contributed chunk seq + INART_SW_LOST_AFTER (or a later
 * iteration) at an aggregating entry is taken not to contribute chunk seq
 * any more (contributions of one rank travel one path in order). */
#define INART_SW_LOST_AFTER 2

#endif
