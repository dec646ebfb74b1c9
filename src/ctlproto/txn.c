/*
 * txn: install transactions of a daemon (see txn.h).
 *
 * Invariants: has_prep says whether prep/prep_id are meaningful (prep may be
 * NULL only if prep_unchanged); has_prev likewise for prev/prev_id; every
 * object held here is the daemon's to destroy through t->destroy, never in
 * service.
 */
#include "ctlproto/txn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctlproto/ctlmsg.h"
#include "io/log.h"

static void drop_prep(struct inart_txn *t)
{
	if (t->has_prep && t->prep != NULL)
		t->destroy(t->ctx, t->prep);
	t->prep = NULL;
	t->has_prep = t->prep_unchanged = t->prep_relative = 0;
	t->prep_id[0] = '\0';
}

static void set_prev(struct inart_txn *t, void *old, const char *old_id)
{
	if (t->has_prev && t->prev != NULL)
		t->destroy(t->ctx, t->prev);
	t->prev = old;
	t->has_prev = 1;
	snprintf(t->prev_id, sizeof(t->prev_id), "%s", old_id);
}

int inart_txn_unchanged(const struct inart_txn *t, const char *id)
{
	return id != NULL && id[0] != '\0' && strcmp(id, t->id) == 0;
}

void inart_txn_prepare(struct inart_txn *t, const char *id, void *obj, int relative)
{
	drop_prep(t);
	t->has_prep = 1;
	t->prep = obj;
	t->prep_unchanged = obj == NULL;
	t->prep_relative = relative;
	t->prep_base = t->commits;
	snprintf(t->prep_id, sizeof(t->prep_id), "%s", id ? id : "");
}

void inart_txn_install(struct inart_txn *t, const char *id, void *obj)
{
	char old_id[INART_TXN_ID_LEN];

	snprintf(old_id, sizeof(old_id), "%s", t->id);
	set_prev(t, t->swap(t->ctx, obj), old_id);
	snprintf(t->id, sizeof(t->id), "%s", id ? id : "");
	t->commits++;
}

int inart_txn_commit(struct inart_txn *t, const char *id, int *unchanged, struct inart_err *err)
{
	if (unchanged != NULL)
		*unchanged = 0;
	if (!t->has_prep || strcmp(id, t->prep_id) != 0) {
		inart_err_set(err, 0, "commit %s: nothing prepared under that identity%s%s%s", id,
			      t->has_prep ? " (prepared: " : "", t->has_prep ? t->prep_id : "",
			      t->has_prep ? ")" : "");
		return -EINVAL;
	}
	if (t->prep_unchanged) {
		t->has_prep = t->prep_unchanged = 0;
		t->prep_id[0] = '\0';
		if (unchanged != NULL)
			*unchanged = 1;
		return 0;
	}
	if (t->prep_relative && t->prep_base != t->commits) {
		inart_err_set(err, 0,
			      "commit %s: the tables changed since it was prepared; prepare again",
			      id);
		drop_prep(t);
		return -EINVAL;
	}
	inart_txn_install(t, id, t->prep);
	t->prep = NULL;
	t->has_prep = 0;
	t->prep_id[0] = '\0';
	return 0;
}

int inart_txn_abort(struct inart_txn *t, const char *id, struct inart_err *err)
{
	if (id != NULL && id[0] != '\0' && t->has_prep && strcmp(id, t->prep_id) != 0) {
		inart_err_set(err, 0, "abort %s: the prepared install is %s", id, t->prep_id);
		return -EINVAL;
	}
	drop_prep(t);
	return 0;
}

int inart_txn_rollback(struct inart_txn *t, const char *id, struct inart_err *err)
{
	void *cur;

	if (strcmp(id, t->id) != 0 || !t->has_prev) {
		inart_err_set(err, 0, "rollback %s: %s", id,
			      strcmp(id, t->id) != 0 ? "not the install in service"
						     : "nothing to go back to");
		return -EINVAL;
	}
	cur = t->swap(t->ctx, t->prev);
	t->destroy(t->ctx, cur);
	snprintf(t->id, sizeof(t->id), "%s", t->prev_id);
	t->prev = NULL;
	t->has_prev = 0;
	t->prev_id[0] = '\0';
	t->commits++;
	return 0;
}

int inart_txn_is_op(int op)
{
	return op == INART_CTL_COMMIT || op == INART_CTL_ABORT || op == INART_CTL_ROLLBACK;
}

int inart_txn_request(struct inart_txn *t, int op, const char *id, json_t **data, int *committed,
		      struct inart_err *err)
{
	int rc, unchanged = 1;

	*data = NULL;
	if (committed != NULL)
		*committed = 0;
	switch (op) {
	case INART_CTL_COMMIT:
		rc = inart_txn_commit(t, id, &unchanged, err);
		if (rc == 0) {
			if (committed != NULL)
				*committed = !unchanged;
			*data = json_object();
			json_object_set_new(*data, "installed", json_string(t->id));
			json_object_set_new(*data, "unchanged", json_boolean(unchanged));
			inart_log_info("install %s in service%s", t->id,
				       unchanged ? " (unchanged)" : "");
		}
		return rc;
	case INART_CTL_ABORT:
		return inart_txn_abort(t, id, err);
	case INART_CTL_ROLLBACK:
		rc = inart_txn_rollback(t, id, err);
		if (rc == 0) {
			*data = json_object();
			json_object_set_new(*data, "installed", json_string(t->id));
			inart_log_warn("rolled back to install '%s'", t->id);
		}
		return rc;
	default:
		inart_err_set(err, 0, "not a transaction op");
		return -EINVAL;
	}
}

void inart_txn_json(const struct inart_txn *t, json_t *o)
{
	json_object_set_new(o, "install_id", json_string(t->id));
	if (t->has_prep)
		json_object_set_new(o, "prepared", json_string(t->prep_id));
	if (t->has_prev)
		json_object_set_new(o, "previous", json_string(t->prev_id));
}

void inart_txn_free(struct inart_txn *t)
{
	drop_prep(t);
	if (t->has_prev && t->prev != NULL)
		t->destroy(t->ctx, t->prev);
	t->prev = NULL;
	t->has_prev = 0;
}
