/*
 * txn: a daemon's installs as transactions, shared by switchd and ps
 * (docs/programs.md, section 6).  A daemon holds up to three states, each an
 * opaque object of its own (switchd: a core or a table set; ps: a core with
 * its trees), named by an install identity (16 hex digits, "" if installed
 * without one):
 *   in service  -- what the packet thread uses;
 *   prepared    -- built aside by `install`/`trees` with "phase": "prepare",
 *                  put in service by `commit` with the same identity,
 *                  dropped by `abort` (or by the next prepare);
 *   previous    -- what the last commit replaced, put back by `rollback`
 *                  with the identity in service (one level).
 * A prepare whose identity is the one in service is "unchanged": nothing is
 * built, its commit does nothing (recovery installs do not disturb a node
 * that already holds the plan).  A prepared object built relative to the
 * state in service (incremental table updates) is refused at commit if
 * another commit came in between.
 *
 * All of it runs in the control thread; swap runs the daemon's command that
 * puts an object in service (in the packet thread) and returns the object it
 * replaced.  Issue 10 (plan epochs) extends this: several objects in service
 * side by side, each under its identity.
 */
#ifndef INART_TXN_H
#define INART_TXN_H

#include "common/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define INART_TXN_ID_LEN 17

struct inart_txn {
	/* the daemon's */
	void *ctx;
	void *(*swap)(void *ctx, void *obj); /* in service; returns the replaced one */
	void (*destroy)(void *ctx, void *obj);
	/* state */
	char id[INART_TXN_ID_LEN], prep_id[INART_TXN_ID_LEN], prev_id[INART_TXN_ID_LEN];
	void *prep, *prev;
	int has_prep, prep_unchanged, prep_relative, has_prev;
	uint64_t prep_base, commits;
};

/* 1 if a prepare of identity id would be "unchanged" (id non-empty and in
 * service, so the caller need not build anything). */
int inart_txn_unchanged(const struct inart_txn *t, const char *id);

/* Keep obj (built aside; NULL for an unchanged prepare) as the prepared
 * state of identity id; relative: built from the state in service. */
void inart_txn_prepare(struct inart_txn *t, const char *id, void *obj, int relative);

/* Put obj in service now (an install without "phase"): the previous state is
 * kept for rollback. */
void inart_txn_install(struct inart_txn *t, const char *id, void *obj);

/* commit / abort / rollback: 0 or -EINVAL with err.  *unchanged (may be
 * NULL) = 1 when the commit had nothing to do. */
int inart_txn_commit(struct inart_txn *t, const char *id, int *unchanged, struct inart_err *err);
int inart_txn_abort(struct inart_txn *t, const char *id, struct inart_err *err);
int inart_txn_rollback(struct inart_txn *t, const char *id, struct inart_err *err);

/* 1 if op (enum inart_ctl_op of ctlproto/ctlmsg.h) is a transaction op:
 * commit, abort, rollback. */
int inart_txn_is_op(int op);

/* A control request's transaction op on identity id, logged: 0 with the
 * reply's data in *data (NULL if none), or -EINVAL with err.  *committed
 * (may be NULL) = 1 when a commit put a new state in service. */
int inart_txn_request(struct inart_txn *t, int op, const char *id, json_t **data, int *committed,
		      struct inart_err *err);

/* Add "install_id", "prepared", "previous" (those set) to o. */
void inart_txn_json(const struct inart_txn *t, json_t *o);

/* Destroy the prepared and previous objects (the one in service is the
 * daemon's). */
void inart_txn_free(struct inart_txn *t);

#endif
