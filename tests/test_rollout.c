/* Tests of rollout (ctlproto/rollout): the install transaction over many daemons,
 * with a transport that plays daemons in memory -- one refuses its batch,
 * one dies between prepare and commit, one already holds the installation,
 * an optional one cannot be reached.  Every node must end holding either
 * the new identity (all accepted) or what it held before (issue 7: an
 * install that one PS refused after the check left the switches on the new
 * plan and that PS on the old one). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctlproto/rollout.h"

#define NN 4

/* A daemon in memory: what it holds, what it has prepared, what it held
 * before its last commit, and how it misbehaves. */
struct fake {
	const char *path, *role, *name;
	char held[17], prepared[17], previous[17];
	int has_prep, has_prev;
	int refuse_prepare, die_at_commit, unreachable;
	int dead;
	int calls[16]; /* per op */
};

static struct fake fakes[NN];

static struct fake *by_path(const char *path)
{
	for (int i = 0; i < NN; i++)
		if (strcmp(fakes[i].path, path) == 0)
			return &fakes[i];
	return NULL;
}

static int fake_call(void *ctx, const char *path, const struct inart_ctl_req *req, json_t **reply,
		     struct inart_err *err)
{
	struct fake *f = by_path(path);
	json_t *o = json_object();

	(void)ctx;
	*reply = NULL;
	f->calls[req->op]++;
	if (f->unreachable || f->dead) {
		json_decref(o);
		inart_err_set(err, 0, "%s: cannot connect", path);
		return -ECONNREFUSED;
	}
	switch (req->op) {
	case INART_CTL_INFO:
		json_object_set_new(o, "role", json_string(f->role));
		json_object_set_new(o, "name", json_string(f->name));
		json_object_set_new(o, "install_id", json_string(f->held));
		break;
	case INART_CTL_INSTALL:
	case INART_CTL_TREES:
		assert_true(req->prepare);
		if (f->refuse_prepare) {
			json_decref(o);
			inart_err_set(err, 0, "trees[0]: refused");
			return -EPERM;
		}
		snprintf(f->prepared, sizeof(f->prepared), "%s", req->install_id);
		f->has_prep = 1;
		break;
	case INART_CTL_COMMIT:
		if (f->die_at_commit) {
			f->dead = 1;
			json_decref(o);
			inart_err_set(err, 0, "%s: connection closed before the reply", path);
			return -ECONNRESET;
		}
		assert_true(f->has_prep);
		assert_string_equal(f->prepared, req->install_id);
		json_object_set_new(o, "unchanged",
				    json_boolean(strcmp(f->held, f->prepared) == 0));
		if (strcmp(f->held, f->prepared) != 0) {
			memcpy(f->previous, f->held, sizeof(f->previous));
			f->has_prev = 1;
			memcpy(f->held, f->prepared, sizeof(f->held));
		}
		f->has_prep = 0;
		break;
	case INART_CTL_ABORT:
		f->has_prep = 0;
		break;
	case INART_CTL_ROLLBACK:
		assert_string_equal(f->held, req->install_id);
		assert_true(f->has_prev);
		memcpy(f->held, f->previous, sizeof(f->held));
		f->has_prev = 0;
		break;
	default:
		fail_msg("unexpected op %d", req->op);
	}
	*reply = o;
	return 0;
}

static struct inart_ctl_req reqs[NN];
static struct inart_rollout_node nodes[NN];

/* Two switches s0 s1, PS p0, and p1 left out of the plan (optional); all
 * hold install "old". */
static void setup(void)
{
	static const char *const names[NN] = {"s0", "s1", "p0", "p1"};
	static const char *const paths[NN] = {"/s0", "/s1", "/p0", "/p1"};

	memset(fakes, 0, sizeof(fakes));
	memset(reqs, 0, sizeof(reqs));
	memset(nodes, 0, sizeof(nodes));
	for (int i = 0; i < NN; i++) {
		fakes[i].path = paths[i];
		fakes[i].name = names[i];
		fakes[i].role = i < 2 ? "switch" : "ps";
		snprintf(fakes[i].held, sizeof(fakes[i].held), "00000000000000aa");
		reqs[i].op = i < 2 ? INART_CTL_INSTALL : INART_CTL_TREES;
		nodes[i].name = names[i];
		nodes[i].path = paths[i];
		nodes[i].role = fakes[i].role;
		nodes[i].optional = i == 3;
		nodes[i].req = &reqs[i];
	}
}

static const char *const NEW = "00000000000000bb";

static void test_all_accept(void **state)
{
	struct inart_err why = {{0}};

	(void)state;
	setup();
	snprintf(fakes[1].held, sizeof(fakes[1].held), "%s", NEW); /* s1 already has it */
	assert_int_equal(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why), 0);
	for (int i = 0; i < NN; i++) {
		assert_string_equal(fakes[i].held, NEW);
		assert_string_equal(nodes[i].after, NEW);
	}
	assert_string_equal(nodes[0].before, "00000000000000aa");
	assert_int_equal(nodes[0].state, INART_RO_COMMITTED);
	assert_int_equal(nodes[1].state, INART_RO_UNCHANGED);
	assert_int_equal(fakes[0].calls[INART_CTL_ROLLBACK], 0);
}

/* A PS refuses its batch at prepare: nobody commits, everybody prepared
 * aborts; all hold what they held. */
static void test_refused_prepare(void **state)
{
	struct inart_err why = {{0}};

	(void)state;
	setup();
	fakes[2].refuse_prepare = 1;
	assert_int_equal(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why), -EPERM);
	assert_non_null(strstr(why.msg, "ps p0: trees[0]: refused"));
	for (int i = 0; i < NN; i++) {
		assert_string_equal(fakes[i].held, "00000000000000aa");
		assert_int_equal(fakes[i].has_prep, 0);
		assert_int_equal(fakes[i].calls[INART_CTL_COMMIT], 0);
	}
	assert_int_equal(nodes[2].state, INART_RO_FAILED);
	assert_int_equal(nodes[0].state, INART_RO_PREPARED); /* then aborted */
	assert_int_equal(fakes[0].calls[INART_CTL_ABORT], 1);
}

/* A node dies between prepare and commit: the nodes committed before it are
 * rolled back, the ones after it aborted. */
static void test_commit_fails(void **state)
{
	struct inart_err why = {{0}};

	(void)state;
	setup();
	fakes[2].die_at_commit = 1;
	assert_int_equal(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why), -ECONNRESET);
	assert_string_equal(fakes[0].held, "00000000000000aa");
	assert_string_equal(fakes[1].held, "00000000000000aa");
	assert_int_equal(nodes[0].state, INART_RO_ROLLED_BACK);
	assert_int_equal(nodes[1].state, INART_RO_ROLLED_BACK);
	assert_int_equal(nodes[2].state, INART_RO_FAILED);
	assert_int_equal(fakes[3].has_prep, 0); /* aborted */
	assert_non_null(strstr(why.msg, "every node is back"));
}

/* A node that is not what it should be stops everything before anything
 * is sent; an optional node that cannot be reached is skipped. */
static void test_identity_and_optional(void **state)
{
	struct inart_err why = {{0}};

	(void)state;
	setup();
	fakes[3].unreachable = 1;
	assert_int_equal(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why), 0);
	assert_int_equal(nodes[3].state, INART_RO_SKIPPED);
	assert_string_equal(fakes[2].held, NEW);
	setup();
	fakes[1].name = "s9";
	assert_int_equal(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why), -EINVAL);
	assert_non_null(strstr(why.msg, "expected switch 's1', found 's9'"));
	for (int i = 0; i < NN; i++) {
		assert_int_equal(
		    fakes[i].calls[INART_CTL_INSTALL] + fakes[i].calls[INART_CTL_TREES], 0);
		assert_string_equal(fakes[i].held, "00000000000000aa");
	}
	setup();
	fakes[0].unreachable = 1; /* not optional */
	assert_true(inart_rollout_run(nodes, NN, NEW, fake_call, NULL, &why) < 0);
	assert_string_equal(inart_rollout_state_name(INART_RO_ROLLED_BACK), "rolled back");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_accept),
	    cmocka_unit_test(test_refused_prepare),
	    cmocka_unit_test(test_commit_fails),
	    cmocka_unit_test(test_identity_and_optional),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
