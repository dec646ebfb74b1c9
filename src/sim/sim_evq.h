/*
 * sim_evq: the event queue of the simulated fabric (sim/sim): a binary
 * min-heap of (time, insertion number) keys with an opaque payload, FIFO
 * among equal times.  Its own module, with its own unit test (test_sim_evq).
 *
 * Ownership: the queue owns its storage (inart_sim_evq_free); payloads
 * belong to the caller.
 */
#ifndef INART_SIM_EVQ_H
#define INART_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct inart_sim_ev {
	uint64_t t, seq;
	int type, a;
	void *p;
};

struct inart_sim_evq {
	struct inart_sim_ev *h;
	size_t n, cap;
	uint64_t next_seq;
};

void inart_sim_evq_init(struct inart_sim_evq *q);
void inart_sim_evq_free(struct inart_sim_evq *q);
/* 0 or -ENOMEM. */
int inart_sim_evq_push(struct inart_sim_evq *q, uint64_t t, int type, int a, void *p);
/* 1 and *ev = the earliest event (removed), or 0 if empty. */
int inart_sim_evq_pop(struct inart_sim_evq *q, struct inart_sim_ev *ev);

#endif
