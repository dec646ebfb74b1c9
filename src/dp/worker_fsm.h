/*
 * worker_fsm: the worker's recovery rules as one table, states x events ->
 * actions (docs/dataplane.md, Worker, The recovery table).  Data only: the
 * states and events a worker core can be in and meet, the actions it takes,
 * and their names.  worker.c (poll: the send side) and worker_rx.c (what
 * comes back) classify what happens to a chunk into an event, look the
 * action up here and run their function for it; every action has its
 * function in exactly one of the two (the poll-side actions in worker.c, the
 * rx-side ones in worker_rx.c), so this file depends on neither.
 *
 * A tree has a mode besides (FLOWING or STALLED, worker.c): while it is
 * stalled, poll raises only WSTALL_ROUND on its oldest unfinished chunk;
 * anything accepted from its PS makes it FLOWING again.
 */
#ifndef INART_WORKER_FSM_H
#define INART_WORKER_FSM_H

#include <stdint.h>

/* A chunk's state. */
enum inart_worker_state {
	C_IDLE = 0,	/* not sent yet in this all-reduce */
	C_INFLIGHT = 1, /* sent, waiting for its result */
	C_RESEND = 2,	/* its scale was lowered: to be sent again as new */
	C_DONE = 3,	/* its result is stored (once) */
	C_N_STATES
};

/* What happens to a chunk.  Poll side (inart_worker_poll) first, then what
 * inart_worker_rx receives. */
enum inart_worker_event {
	WE_WINDOW = 0,	   /* seq == next < base + window: it may be sent new */
	WE_VISIT,	   /* poll visits it in [base, next), no timer expired */
	WE_RESULT_TIMEOUT, /* its result timer expired */
	WE_ANSWER_PENDING, /* result timer expired while a probe's answer is due */
	WE_PROBE_DUE,	   /* its probe timer expired (the result timer not) */
	WE_IDLE,	   /* no result of the tree for an idle period, chunk ripe */
	WE_STALL_ROUND,	   /* a stalled tree's round, on its oldest unfinished chunk */
	WE_RESULT,	   /* a clean RESULT */
	WE_OVERFLOW,	   /* RESULT|OVERFLOW with every rank (the scale overflowed) */
	WE_SCALE_NOTICE,   /* RESULT|OVERFLOW, bitmap incomplete (the PS's scale) */
	WE_NACK_US,	   /* a NACK naming our rank, at our scale */
	WE_NACK_OTHERS,	   /* a NACK not naming us, at our scale */
	WE_NACK_LOWER,	   /* an answer to our probe (NACK) at a lower scale */
	WE_NACK_HIGHER,	   /* an answer to our probe (NACK) at a higher scale */
	WE_CHAIN_GAP,	   /* a result's prev names it: its result was lost */
	WE_CHAIN_BEHIND,   /* older than a chain gap, not open, past the RTT */
	WE_STEP_NOTICE,	   /* RESULT|STALE naming our rank */
	WE_N_EVENTS,
	WE_FIRST_RX = WE_RESULT /* events from here on are worker_rx.c's */
};

/* What the worker does.  A_NONE: nothing (the event cannot change the
 * state).  Poll side: */
enum inart_worker_action {
	A_NONE = 0,
	A_SEND_NEW,	 /* first transmission (paced, on schedule) -> INFLIGHT */
	A_SEND_RESCALED, /* sent again as new at its new scale -> INFLIGHT */
	A_WAIT_ANSWER,	 /* result timer moved past the probe's answer */
	A_RECOVER,	 /* probe; values after PROBE_TRIES or if a NACK asked */
	A_IDLE_PROBE,	 /* probe it */
	A_STALL_ACT,	 /* probe; every STALL_VALUES-th round the values */
	/* rx side: */
	A_DUPLICATE,	/* done already: a duplicate, nothing else */
	A_OLD_NEWS,	/* follow the chain; the packet says nothing new */
	A_STORE,	/* follow the chain; store the values -> DONE */
	A_LOWER_SCALE,	/* follow the chain; lower the scale -> RESEND */
	A_JOIN_SCALE,	/* follow the chain; take the PS's scale -> RESEND */
	A_RESEND_ASKED, /* follow the chain; values due now (held: from credit) */
	A_OPEN,		/* follow the chain; the PS collects others: wait longer */
	A_PROBE_SOON,	/* a probe is due now (once per probe wait) */
	A_STALE,	/* the all-reduce cannot complete: stop sending */
	A_N_ACTIONS,
	A_FIRST_RX = A_DUPLICATE /* actions from here on are worker_rx.c's */
};

/* The table (worker_fsm.c): an enum inart_worker_action per cell. */
extern const uint8_t inart_worker_fsm_table[WE_N_EVENTS][C_N_STATES];

/* The action for event ev in state st. */
static inline enum inart_worker_action inart_worker_fsm_action(int st, int ev)
{
	return (enum inart_worker_action)inart_worker_fsm_table[ev][st];
}

/* Names for the table's rows, columns and cells (tests and docs print the
 * table from them). */
const char *inart_worker_fsm_state_name(int st);
const char *inart_worker_fsm_event_name(int ev);
const char *inart_worker_fsm_action_name(int act);

#endif
