/*
 * test_schedule: the emulator's background schedule (emu/schedule.h):
 * routes between hosts (shortest, the adjacency order breaking ties, never
 * through a host), pairs summed on the arcs they share on top of a link's
 * own entry or background, capacity and size limits, bad entries.
 */
#include <errno.h>
#include <math.h>

#include "emu/schedule.h"
#include "testutil.h"

/* h0, h1 -- e0 -- {s0 | s1} -- e1 -- h2, h3; hx between e0 and e2 -- h9. */
static struct inart_topo *topo(void)
{
	return tu_topo("h0-e0:10 h1-e0:10 e0-s0:10 e0-s1:10 s0-e1:10 s1-e1:10 e1-h2:10 e1-h3:10 "
		       "e0-hx:10 hx-e2:10 e2-h9:10",
		       "");
}

static int arc(const struct inart_topo *t, const char *a, const char *b)
{
	int x = inart_topo_arc_between(t, tu_find(t, a), tu_find(t, b));

	assert_true(x >= 0);
	return x;
}

static struct inart_emu_bg_entry pair(const struct inart_topo *t, const char *a, const char *b,
				      double at, double g)
{
	return (struct inart_emu_bg_entry){
	    .arc = -1, .src = tu_find(t, a), .dst = tu_find(t, b), .at_s = at, .gbps = g};
}

/* The change of arc x at time at in out[0..n), NaN if none. */
static double change(const struct inart_emu_bg_change *out, int n, int x, double at)
{
	for (int i = 0; i < n; i++)
		if (out[i].arc == x && fabs(out[i].at_s - at) < 1e-12)
			return out[i].gbps;
	return NAN;
}

static void test_route(void **state)
{
	struct inart_topo *t = topo();
	int arcs[16];

	assert_int_equal(inart_emu_schedule_route(t, tu_find(t, "h0"), tu_find(t, "h2"), arcs, 16),
			 4);
	assert_int_equal(arcs[0], arc(t, "h0", "e0"));
	assert_int_equal(arcs[1], arc(t, "e0", "s0")); /* s0 comes first at e0 */
	assert_int_equal(arcs[2], arc(t, "s0", "e1"));
	assert_int_equal(arcs[3], arc(t, "e1", "h2"));
	/* the other way round */
	assert_int_equal(inart_emu_schedule_route(t, tu_find(t, "h3"), tu_find(t, "h1"), arcs, 16),
			 4);
	assert_int_equal(arcs[0], arc(t, "h3", "e1"));
	assert_int_equal(arcs[3], arc(t, "e0", "h1"));
	/* h9 is reached only through the host hx, which does not forward */
	assert_int_equal(inart_emu_schedule_route(t, tu_find(t, "h0"), tu_find(t, "h9"), arcs, 16),
			 -ENOENT);
	assert_int_equal(inart_emu_schedule_route(t, tu_find(t, "h0"), tu_find(t, "h0"), arcs, 16),
			 -EINVAL);
	assert_int_equal(inart_emu_schedule_route(t, tu_find(t, "h0"), tu_find(t, "h2"), arcs, 3),
			 -ENOSPC);
	inart_topo_destroy(t);
}

static void test_resolve(void **state)
{
	struct inart_topo *t = topo();
	struct inart_emu_bg_change out[64];
	struct inart_err err = {0};
	int es0 = arc(t, "e0", "s0"), h0e0 = arc(t, "h0", "e0"), e1h3 = arc(t, "e1", "h3"), n;
	struct inart_emu_bg_entry in[5];

	t->arcs[es0].bg_gbps = 0.5; /* the topology's own background */
	in[0] = pair(t, "h0", "h2", 1, 3);
	in[1] = pair(t, "h1", "h3", 2, 4); /* shares e0->s0 and s0->e1 */
	in[2] = (struct inart_emu_bg_entry){.arc = es0, .at_s = 3, .gbps = 1};
	in[3] = pair(t, "h0", "h2", 4, 0);
	n = inart_emu_schedule_resolve(t, in, 4, out, 64, &err);
	assert_true(n > 0);
	/* e0->s0: background + h0->h2, + h1->h3, the link's entry instead of
	 * its background, h0->h2 stopped */
	assert_true(change(out, n, es0, 1) == 3.5);
	assert_true(change(out, n, es0, 2) == 7.5);
	assert_true(change(out, n, es0, 3) == 8);
	assert_true(change(out, n, es0, 4) == 5);
	assert_true(change(out, n, h0e0, 1) == 3);
	assert_true(change(out, n, h0e0, 4) == 0);
	assert_true(isnan(change(out, n, h0e0, 2)));
	assert_true(change(out, n, e1h3, 2) == 4);
	assert_true(isnan(change(out, n, arc(t, "e0", "s1"), 1))); /* the other path: nothing */
	/* e0->s0 4 changes, s0->e1 3 (1, 2, 4 s), h0->e0 and e1->h2 2 each,
	 * h1->e0 and e1->h3 1 each */
	assert_int_equal(n, 13);
	/* the same place and time twice: the last given wins */
	in[4] = pair(t, "h0", "h2", 4, 2);
	n = inart_emu_schedule_resolve(t, in, 5, out, 64, &err);
	assert_true(change(out, n, es0, 4) == 7);
	/* the pairs together fill e0->s0: refused, naming it */
	in[0] = pair(t, "h0", "h2", 1, 6);
	assert_int_equal(inart_emu_schedule_resolve(t, in, 2, out, 64, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "e0->s0 from 2 s"));
	/* no route; too many changes; a bad entry */
	in[0] = pair(t, "h0", "h9", 1, 1);
	assert_int_equal(inart_emu_schedule_resolve(t, in, 1, out, 64, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no route from 'h0' to 'h9'"));
	in[0] = pair(t, "h0", "h2", 1, 1);
	assert_int_equal(inart_emu_schedule_resolve(t, in, 1, out, 3, &err), -ENOSPC);
	in[0].gbps = -1;
	assert_int_equal(inart_emu_schedule_resolve(t, in, 1, out, 64, &err), -EINVAL);
	/* link entries alone: as given */
	in[0] = (struct inart_emu_bg_entry){.arc = es0, .at_s = 1.5, .gbps = 6};
	assert_int_equal(inart_emu_schedule_resolve(t, in, 1, out, 64, &err), 1);
	assert_int_equal(out[0].arc, es0);
	assert_true(out[0].at_s == 1.5 && out[0].gbps == 6);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_route),
	    cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
