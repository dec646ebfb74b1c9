/*
 * gate: what stands between switchd's sockets and its switch core when the
 * switch emulates a constrained device (docs/emulator.md), sans I/O:
 *
 *   - seeded loss: every frame received on any port is lost with
 *     probability rx_loss, every frame sent on a port of tx_loss_ports with
 *     probability tx_loss (the emulator puts loss on both directions of a
 *     switch-host link this way, and on switch-switch links at the
 *     receiving end: the kernel has no netem);
 *   - the aggregation throughput limit: INA DATA frames (not RETX, with
 *     values) whose label is an aggregation entry of this switch are charged
 *     to a token bucket (dp/tbucket) by their Ethernet frame length; a frame
 *     without tokens is copied into a FIFO and handed to the core when the
 *     bucket allows (so aggregation proceeds at agg_bytes_per_s at most,
 *     everything else at line rate).  Once a frame waits, every later
 *     aggregated frame waits behind it (order kept).  A full FIFO drops the
 *     frame (counted; loss recovery resends it).
 *
 * Invariants: a frame is passed, dropped or held, never duplicated; held
 * frames leave in arrival order; the FIFO and the label set are allocated at
 * creation, by set_agg_labels and by agg_labels_of only, never per frame.
 *
 * Threads (switchd): everything on a gate runs in the packet thread.  A label
 * set for new tables is built elsewhere (agg_labels_of, in the control
 * thread, from the tables built aside) and exchanged for the one in service
 * by swap_agg_labels when the tables are swapped in: no allocation or
 * sorting in the packet thread, and the set that goes out is freed by the
 * control thread with the tables it belonged to.
 *
 * Ownership: the gate owns its FIFO copies; a frame returned by
 * inart_gate_next stays valid until the next call on the gate.
 */
#ifndef INART_GATE_H
#define INART_GATE_H

#include <stdint.h>

#include "dp/switch.h"
#include "dp/tbucket.h"

struct inart_gate_cfg {
	int n_ports;		/* 1..INART_SW_MAX_PORTS */
	double rx_loss;		/* 0..1 */
	double tx_loss;		/* 0..1 */
	uint64_t tx_loss_ports; /* bit i: port i */
	uint64_t seed;
	double agg_bytes_per_s; /* 0: no limit */
	double agg_burst;	/* bytes (0: 16 full frames) */
	int queue_frames;	/* held frames at most (0: 1024) */
};

struct inart_gate_stats {
	uint64_t rx_lost[INART_SW_MAX_PORTS], tx_lost[INART_SW_MAX_PORTS];
	uint64_t agg_frames, agg_bytes; /* charged to the bucket */
	uint64_t agg_held;		/* of which had to wait */
	uint64_t agg_dropped;		/* FIFO full */
};

enum inart_gate_verdict {
	INART_GATE_PASS = 0, /* give the frame to the core now */
	INART_GATE_DROP = 1, /* lost */
	INART_GATE_HELD = 2, /* copied; inart_gate_next returns it later */
};

struct inart_gate;

/* NULL + errno (EINVAL: a probability outside [0, 1], bad rate or ports). */
struct inart_gate *inart_gate_create(const struct inart_gate_cfg *cfg, uint64_t now_ns);
void inart_gate_destroy(struct inart_gate *g);

/* The labels of this switch's aggregating UP entries (copied).  0 or
 * -ENOMEM (the previous set stays). */
int inart_gate_set_agg_labels(struct inart_gate *g, const uint32_t *labels, int n);

/* The labels of the aggregating UP entries among l[0..n) (a label table as
 * inart_switch_get_labels or inart_sw_tables_labels reads it back), sorted:
 * 0 with *out (malloc'ed; NULL if there is none) and *n_out, or -ENOMEM. */
int inart_gate_agg_labels_of(const struct inart_label_entry *l, int n, uint32_t **out, int *n_out);

/* Put the sorted set (*labels, *n) -- from inart_gate_agg_labels_of -- in
 * service and hand back the one it replaces in (*labels, *n) (the caller
 * frees it).  Allocates nothing. */
void inart_gate_swap_agg_labels(struct inart_gate *g, uint32_t **labels, int *n);

/* A frame received on in->port. */
enum inart_gate_verdict inart_gate_rx(struct inart_gate *g, const struct inart_frame *in,
				      uint64_t now_ns);

/* The oldest held frame if the bucket grants it now: 1 and *out (data valid
 * until the next call on g), else 0. */
int inart_gate_next(struct inart_gate *g, uint64_t now_ns, struct inart_frame *out);

/* When the oldest held frame will be granted; UINT64_MAX if none is held. */
uint64_t inart_gate_deadline(const struct inart_gate *g, uint64_t now_ns);

/* 1 if a frame about to be sent on port is lost (tx_loss), else 0. */
int inart_gate_tx_drop(struct inart_gate *g, int port);

/* Frames held now. */
int inart_gate_held(const struct inart_gate *g);

void inart_gate_stats(const struct inart_gate *g, struct inart_gate_stats *st);

#endif
