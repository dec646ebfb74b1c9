/*
 * worker_fsm: the worker's recovery table (see worker_fsm.h).  The same
 * table is in docs/dataplane.md (The recovery table); tests/test_worker_fsm.c
 * prints this one and compares.  A row per event, a column per chunk state;
 * the guards within an action (credit, NACK rounds, probe tries) are in the
 * action's function and the document.
 */
#include "dp/worker_fsm.h"

#include <stddef.h>

#define NONE A_NONE
#define DUP A_DUPLICATE
#define OLD A_OLD_NEWS
#define LOWER A_LOWER_SCALE
#define JOIN A_JOIN_SCALE
#define RESCALED A_SEND_RESCALED

/* A row per event, a column per state, as docs/dataplane.md prints it. */
/* clang-format off */
const uint8_t inart_worker_fsm_table[WE_N_EVENTS][C_N_STATES] = {
	/*                       IDLE        INFLIGHT         RESEND     DONE */
	[WE_WINDOW] =         {A_SEND_NEW, NONE,            NONE,      NONE},
	[WE_VISIT] =          {NONE,       NONE,            RESCALED,  NONE},
	[WE_RESULT_TIMEOUT] = {NONE,       A_RECOVER,       RESCALED,  NONE},
	[WE_ANSWER_PENDING] = {NONE,       A_WAIT_ANSWER,   RESCALED,  NONE},
	[WE_PROBE_DUE] =      {NONE,       A_RECOVER,       RESCALED,  NONE},
	[WE_IDLE] =           {NONE,       A_IDLE_PROBE,    NONE,      NONE},
	[WE_STALL_ROUND] =    {NONE,       A_STALL_ACT,     RESCALED,  NONE},
	[WE_RESULT] =         {A_STORE,    A_STORE,         A_STORE,   DUP},
	[WE_OVERFLOW] =       {LOWER,      LOWER,           LOWER,     DUP},
	[WE_SCALE_NOTICE] =   {LOWER,      LOWER,           LOWER,     DUP},
	[WE_NACK_US] =        {OLD,        A_RESEND_ASKED,  OLD,       DUP},
	[WE_NACK_OTHERS] =    {OLD,        A_OPEN,          OLD,       DUP},
	[WE_NACK_LOWER] =     {JOIN,       JOIN,            JOIN,      DUP},
	[WE_NACK_HIGHER] =    {OLD,        OLD,             OLD,       DUP},
	[WE_CHAIN_GAP] =      {NONE,       A_PROBE_SOON,    NONE,      NONE},
	[WE_CHAIN_BEHIND] =   {NONE,       A_PROBE_SOON,    NONE,      NONE},
	[WE_STEP_NOTICE] =    {A_STALE,    A_STALE,         A_STALE,   A_STALE},
};
/* clang-format on */

static const char *const state_names[C_N_STATES] = {
    [C_IDLE] = "IDLE",
    [C_INFLIGHT] = "INFLIGHT",
    [C_RESEND] = "RESEND",
    [C_DONE] = "DONE",
};

static const char *const event_names[WE_N_EVENTS] = {
    [WE_WINDOW] = "window",
    [WE_VISIT] = "visit",
    [WE_RESULT_TIMEOUT] = "result timeout",
    [WE_ANSWER_PENDING] = "timeout, answer due",
    [WE_PROBE_DUE] = "probe due",
    [WE_IDLE] = "idle",
    [WE_STALL_ROUND] = "stall round",
    [WE_RESULT] = "result",
    [WE_OVERFLOW] = "overflow",
    [WE_SCALE_NOTICE] = "scale notice",
    [WE_NACK_US] = "NACK us",
    [WE_NACK_OTHERS] = "NACK others",
    [WE_NACK_LOWER] = "answer, lower scale",
    [WE_NACK_HIGHER] = "answer, higher scale",
    [WE_CHAIN_GAP] = "chain gap",
    [WE_CHAIN_BEHIND] = "chain behind",
    [WE_STEP_NOTICE] = "step notice",
};

static const char *const action_names[A_N_ACTIONS] = {
    [A_NONE] = "-",
    [A_SEND_NEW] = "send new",
    [A_SEND_RESCALED] = "send rescaled",
    [A_WAIT_ANSWER] = "wait answer",
    [A_RECOVER] = "recover",
    [A_IDLE_PROBE] = "idle probe",
    [A_STALL_ACT] = "stall act",
    [A_DUPLICATE] = "duplicate",
    [A_OLD_NEWS] = "old news",
    [A_STORE] = "store",
    [A_LOWER_SCALE] = "lower scale",
    [A_JOIN_SCALE] = "join scale",
    [A_RESEND_ASKED] = "resend asked",
    [A_OPEN] = "open",
    [A_PROBE_SOON] = "probe soon",
    [A_STALE] = "stale",
};

const char *inart_worker_fsm_state_name(int st)
{
	return st >= 0 && st < C_N_STATES ? state_names[st] : NULL;
}

const char *inart_worker_fsm_event_name(int ev)
{
	return ev >= 0 && ev < WE_N_EVENTS ? event_names[ev] : NULL;
}

const char *inart_worker_fsm_action_name(int act)
{
	return act >= 0 && act < A_N_ACTIONS ? action_names[act] : NULL;
}
