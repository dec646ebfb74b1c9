/*
 * rollout: put an installation in service on many daemons as one
 * transaction (`inart ctl install`; docs/programs.md section 6).
 *
 *   1. info to every node: each must answer as the node it should be (role
 *      and name); what it holds (its install identity) is noted.  Nothing
 *      has changed if one does not.
 *   2. prepare: every node gets its batch with the installation's identity
 *      and "phase": "prepare"; it checks and builds it aside (a node that
 *      already holds that identity answers "unchanged").  If one refuses or
 *      does not answer, every node prepared so far is told to abort: nothing
 *      changed anywhere.
 *   3. commit: in order (switches, then PSs).  If a commit fails, the nodes
 *      committed so far are rolled back to what they held, the others told
 *      to abort.
 *   4. info again: what every node holds now.
 * A node marked optional (a PS that the new plan leaves out, told to drop
 * its trees) that cannot be reached is skipped with a warning, not a failure.
 *
 * The transport is a callback (the real one: inart_ctl_call over the
 * node's control socket), so tests can play refusing or dying daemons.
 * Pure orchestration: the caller builds each node's request.
 *
 * Ownership: nodes and their requests are the caller's; the rollout sets
 * each request's install_id and prepare fields.
 */
#ifndef INART_ROLLOUT_H
#define INART_ROLLOUT_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "ctlproto/ctlmsg.h"

enum inart_rollout_state {
	INART_RO_UNTOUCHED = 0,
	INART_RO_SKIPPED,     /* optional and unreachable */
	INART_RO_PREPARED,    /* prepared (then aborted if the transaction failed) */
	INART_RO_COMMITTED,   /* in service */
	INART_RO_UNCHANGED,   /* already held the installation */
	INART_RO_ROLLED_BACK, /* committed, then put back */
	INART_RO_FAILED,      /* refused or unreachable: err says */
};

struct inart_rollout_node {
	const char *name; /* node id */
	const char *path; /* control socket */
	const char *role; /* "switch" or "ps" */
	int optional;
	struct inart_ctl_req *req; /* install (switch) or trees (PS) */
	/* results */
	int state;
	char before[17], after[17]; /* identities held ("" none, "?" unknown) */
	struct inart_err err;	    /* why it failed */
};

/* One request to the daemon at path: 0 and *reply (new reference) if it
 * accepted, -EPERM with its reason in err if it refused, another -errno if
 * it could not be reached. */
typedef int (*inart_rollout_call_fn)(void *ctx, const char *path, const struct inart_ctl_req *req,
				     json_t **reply, struct inart_err *err);

/* Run the transaction for identity id (16 hex digits) over nodes[0..n).
 * 0 if every node holds it (or was skipped), else -errno with err (the
 * node and its reason; each node's state and why say more). */
int inart_rollout_run(struct inart_rollout_node *nodes, int n, const char *id,
		      inart_rollout_call_fn call, void *ctx, struct inart_err *err);

const char *inart_rollout_state_name(int state);

#endif
