/*
 * rollout: the install transaction over many daemons (see rollout.h).
 *
 * Invariant: when inart_rollout_run returns an error, no node is left with
 * a prepared batch of this transaction that it was told about and not told
 * to abort, and every node it committed was told to roll back; a node that
 * could not be reached for those is marked failed with the reason.
 */
#include "ctlproto/rollout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *inart_rollout_state_name(int state)
{
	static const char *const names[] = {
	    [INART_RO_UNTOUCHED] = "untouched", [INART_RO_SKIPPED] = "skipped",
	    [INART_RO_PREPARED] = "prepared",	[INART_RO_COMMITTED] = "installed",
	    [INART_RO_UNCHANGED] = "unchanged", [INART_RO_ROLLED_BACK] = "rolled back",
	    [INART_RO_FAILED] = "failed",
	};

	return state >= 0 && state <= INART_RO_FAILED ? names[state] : "?";
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* info: the node must be what it should; note what it holds in id. */
static int info(struct inart_rollout_node *nd, inart_rollout_call_fn call, void *ctx, char *id)
{
	struct inart_ctl_req rq = {.op = INART_CTL_INFO};
	json_t *r = NULL;
	const char *role, *name, *held;
	int rc = call(ctx, nd->path, &rq, &r, &nd->err);

	if (rc < 0)
		return rc;
	role = jstr(r, "role");
	name = jstr(r, "name");
	held = jstr(r, "install_id");
	if (role == NULL || strcmp(role, nd->role) != 0) {
		inart_err_set(&nd->err, 0, "%s: should be a %s, the daemon there is a %s", nd->path,
			      nd->role, role ? role : "?");
		rc = -EINVAL;
	} else if (name != NULL && name[0] && strcmp(name, nd->name) != 0) {
		inart_err_set(&nd->err, 0, "%s: expected %s '%s', found '%s'", nd->path, nd->role,
			      nd->name, name);
		rc = -EINVAL;
	}
	snprintf(id, 17, "%s", held ? held : "?");
	json_decref(r);
	return rc;
}

static int simple(struct inart_rollout_node *nd, int op, const char *id, inart_rollout_call_fn call,
		  void *ctx)
{
	struct inart_ctl_req rq = {.op = op};
	json_t *r = NULL;
	int rc;

	snprintf(rq.node, sizeof(rq.node), "%s", nd->name);
	snprintf(rq.install_id, sizeof(rq.install_id), "%s", id);
	rc = call(ctx, nd->path, &rq, &r, &nd->err);
	if (rc == 0 && op == INART_CTL_COMMIT) {
		json_t *u = json_object_get(r, "unchanged");

		rc = json_is_true(u) ? 1 : 0;
	}
	json_decref(r);
	return rc;
}

/* Undo a failed transaction: abort the prepared, roll back the committed.
 * Returns how many nodes could not be told. */
static int undo(struct inart_rollout_node *nodes, int n, const char *id, inart_rollout_call_fn call,
		void *ctx)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		struct inart_rollout_node *nd = &nodes[i];
		char keep[sizeof(nd->err.msg)];

		snprintf(keep, sizeof(keep), "%s", nd->err.msg);
		if (nd->state == INART_RO_PREPARED) {
			if (simple(nd, INART_CTL_ABORT, id, call, ctx) < 0) {
				nd->state = INART_RO_FAILED;
				failed++;
				continue;
			}
		} else if (nd->state == INART_RO_COMMITTED) {
			if (simple(nd, INART_CTL_ROLLBACK, id, call, ctx) < 0) {
				nd->state = INART_RO_FAILED;
				failed++;
				continue;
			}
			nd->state = INART_RO_ROLLED_BACK;
		}
		inart_err_set(&nd->err, 0, "%s", keep);
	}
	return failed;
}

int inart_rollout_run(struct inart_rollout_node *nodes, int n, const char *id,
		      inart_rollout_call_fn call, void *ctx, struct inart_err *err)
{
	int rc = 0, bad = -1;

	if (err != NULL)
		err->msg[0] = '\0';
	for (int i = 0; i < n; i++) {
		nodes[i].state = INART_RO_UNTOUCHED;
		nodes[i].err.msg[0] = '\0';
		snprintf(nodes[i].before, sizeof(nodes[i].before), "?");
		snprintf(nodes[i].after, sizeof(nodes[i].after), "?");
	}
	/* 1. everybody is there and is who it should be */
	for (int i = 0; i < n && rc == 0; i++) {
		struct inart_rollout_node *nd = &nodes[i];
		int r = info(nd, call, ctx, nd->before);

		if (r < 0 && nd->optional && r != -EINVAL) {
			nd->state = INART_RO_SKIPPED;
		} else if (r < 0) {
			nd->state = INART_RO_FAILED;
			rc = r;
			bad = i;
		}
	}
	/* 2. prepare */
	for (int i = 0; i < n && rc == 0; i++) {
		struct inart_rollout_node *nd = &nodes[i];
		json_t *r = NULL;

		if (nd->state == INART_RO_SKIPPED)
			continue;
		nd->req->prepare = 1;
		snprintf(nd->req->install_id, sizeof(nd->req->install_id), "%s", id);
		snprintf(nd->req->node, sizeof(nd->req->node), "%s", nd->name);
		rc = call(ctx, nd->path, nd->req, &r, &nd->err);
		json_decref(r);
		if (rc < 0) {
			nd->state = INART_RO_FAILED;
			bad = i;
		} else {
			nd->state = INART_RO_PREPARED;
		}
	}
	/* 3. commit */
	for (int i = 0; i < n && rc == 0; i++) {
		struct inart_rollout_node *nd = &nodes[i];
		int r;

		if (nd->state == INART_RO_SKIPPED)
			continue;
		r = simple(nd, INART_CTL_COMMIT, id, call, ctx);
		if (r < 0) {
			nd->state = INART_RO_FAILED;
			rc = r;
			bad = i;
		} else {
			nd->state = r == 1 ? INART_RO_UNCHANGED : INART_RO_COMMITTED;
		}
	}
	if (rc < 0) {
		int left = undo(nodes, n, id, call, ctx);

		if (left == 0)
			inart_err_set(err, 0, "%s %s: %s; every node is back to what it held",
				      nodes[bad].role, nodes[bad].name, nodes[bad].err.msg);
		else
			inart_err_set(
			    err, 0,
			    "%s %s: %s; %d other node(s) could not be rolled back (see the "
			    "table)",
			    nodes[bad].role, nodes[bad].name, nodes[bad].err.msg, left);
	}
	/* 4. what everybody holds now */
	for (int i = 0; i < n; i++)
		if (nodes[i].state != INART_RO_SKIPPED) {
			char keep[sizeof(nodes[i].err.msg)];

			snprintf(keep, sizeof(keep), "%s", nodes[i].err.msg);
			if (info(&nodes[i], call, ctx, nodes[i].after) < 0)
				snprintf(nodes[i].after, sizeof(nodes[i].after), "?");
			inart_err_set(&nodes[i].err, 0, "%s", keep);
		}
	return rc;
}
