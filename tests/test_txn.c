/* Tests of txn (src/ctlproto/txn.c, compiled in): a daemon's install
 * transactions over objects that record what happens to them -- which one
 * is in service, which were destroyed -- so every path (prepare, commit,
 * unchanged, abort, rollback, a stale relative prepare) is checked against
 * where each object ends. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctlproto/txn.c"

struct obj {
	int id;
	int destroyed;
};

struct world {
	struct obj objs[16];
	struct obj *in_service;
	int swaps;
};

static void *w_swap(void *ctx, void *o)
{
	struct world *w = ctx;
	struct obj *old = w->in_service;

	w->in_service = o;
	w->swaps++;
	return old;
}

static void w_destroy(void *ctx, void *o)
{
	(void)ctx;
	assert_int_equal(((struct obj *)o)->destroyed, 0);
	((struct obj *)o)->destroyed = 1;
}

static void init(struct world *w, struct inart_txn *t)
{
	memset(w, 0, sizeof(*w));
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 16; i++)
		w->objs[i].id = i;
	w->in_service = &w->objs[0];
	t->ctx = w;
	t->swap = w_swap;
	t->destroy = w_destroy;
}

static void test_prepare_commit_rollback(void **state)
{
	struct world w;
	struct inart_txn t;
	struct inart_err why = {{0}};
	int unchanged;

	(void)state;
	init(&w, &t);
	inart_txn_install(&t, "aaaaaaaaaaaaaaaa", &w.objs[1]);
	assert_ptr_equal(w.in_service, &w.objs[1]);
	assert_string_equal(t.id, "aaaaaaaaaaaaaaaa");
	/* prepare b: nothing changes until the commit */
	inart_txn_prepare(&t, "bbbbbbbbbbbbbbbb", &w.objs[2], 0);
	assert_ptr_equal(w.in_service, &w.objs[1]);
	assert_int_equal(inart_txn_commit(&t, "cccccccccccccccc", &unchanged, &why), -EINVAL);
	assert_ptr_equal(w.in_service, &w.objs[1]);
	assert_int_equal(inart_txn_commit(&t, "bbbbbbbbbbbbbbbb", &unchanged, &why), 0);
	assert_int_equal(unchanged, 0);
	assert_ptr_equal(w.in_service, &w.objs[2]);
	/* rollback: only the install in service, one level */
	assert_int_equal(inart_txn_rollback(&t, "aaaaaaaaaaaaaaaa", &why), -EINVAL);
	assert_int_equal(inart_txn_rollback(&t, "bbbbbbbbbbbbbbbb", &why), 0);
	assert_ptr_equal(w.in_service, &w.objs[1]);
	assert_int_equal(w.objs[2].destroyed, 1);
	assert_string_equal(t.id, "aaaaaaaaaaaaaaaa");
	assert_int_equal(inart_txn_rollback(&t, "aaaaaaaaaaaaaaaa", &why), -EINVAL);
	inart_txn_free(&t);
	assert_int_equal(w.objs[1].destroyed, 0); /* in service: the daemon's */
}

static void test_unchanged_abort_stale(void **state)
{
	struct world w;
	struct inart_txn t;
	struct inart_err why = {{0}};
	int unchanged;
	json_t *o;

	(void)state;
	init(&w, &t);
	inart_txn_install(&t, "aaaaaaaaaaaaaaaa", &w.objs[1]);
	/* the identity in service: unchanged, nothing built or swapped */
	assert_int_equal(inart_txn_unchanged(&t, "aaaaaaaaaaaaaaaa"), 1);
	assert_int_equal(inart_txn_unchanged(&t, ""), 0);
	inart_txn_prepare(&t, "aaaaaaaaaaaaaaaa", NULL, 0);
	assert_int_equal(inart_txn_commit(&t, "aaaaaaaaaaaaaaaa", &unchanged, &why), 0);
	assert_int_equal(unchanged, 1);
	assert_int_equal(w.swaps, 1);
	/* abort drops the prepared object */
	inart_txn_prepare(&t, "bbbbbbbbbbbbbbbb", &w.objs[3], 0);
	assert_int_equal(inart_txn_abort(&t, "cccccccccccccccc", &why), -EINVAL);
	assert_int_equal(inart_txn_abort(&t, "bbbbbbbbbbbbbbbb", &why), 0);
	assert_int_equal(w.objs[3].destroyed, 1);
	/* a relative prepare (built from the tables in service) is refused if
	 * another commit came in between */
	inart_txn_prepare(&t, "dddddddddddddddd", &w.objs[4], 1);
	inart_txn_install(&t, "", &w.objs[5]);
	assert_int_equal(inart_txn_commit(&t, "dddddddddddddddd", NULL, &why), -EINVAL);
	assert_non_null(strstr(why.msg, "prepare again"));
	assert_int_equal(w.objs[4].destroyed, 1);
	assert_ptr_equal(w.in_service, &w.objs[5]);
	/* a second prepare replaces the first */
	inart_txn_prepare(&t, "eeeeeeeeeeeeeeee", &w.objs[6], 0);
	inart_txn_prepare(&t, "ffffffffffffffff", &w.objs[7], 0);
	assert_int_equal(w.objs[6].destroyed, 1);
	o = json_object();
	inart_txn_json(&t, o);
	assert_string_equal(json_string_value(json_object_get(o, "install_id")), "");
	assert_string_equal(json_string_value(json_object_get(o, "prepared")), "ffffffffffffffff");
	assert_string_equal(json_string_value(json_object_get(o, "previous")), "aaaaaaaaaaaaaaaa");
	json_decref(o);
	inart_txn_free(&t);
	assert_int_equal(w.objs[7].destroyed, 1);
	assert_int_equal(w.objs[1].destroyed, 1); /* the previous */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prepare_commit_rollback),
	    cmocka_unit_test(test_unchanged_abort_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
