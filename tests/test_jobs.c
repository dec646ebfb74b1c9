/* Tests of jobs: the model table, adding jobs, validation errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cp/model/jobs.h"

static void expect_msg(const struct inart_err *err, const char *words)
{
	if (strstr(err->msg, words) == NULL)
		fail_msg("message '%s' lacks '%s'", err->msg, words);
}

static void test_models(void **state)
{
	const char *names[] = {"resnet50", "vgg16", "alexnet", "bert-base", "gpt2-small"};
	const double params[] = {25.6e6, 138.4e6, 61.1e6, 110e6, 124e6};
	double bytes = 0;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_true(inart_model_bytes(names[i]) == 4 * params[i]);
		assert_string_equal(inart_model_name(i, &bytes), names[i]);
		assert_true(bytes == 4 * params[i]);
	}
	assert_null(inart_model_name(5, &bytes));
	assert_null(inart_model_name(-1, NULL));
	assert_string_equal(inart_model_name(0, NULL), "resnet50");
	assert_true(inart_model_bytes("resnet") == -1);
	assert_true(inart_model_bytes("") == -1);
	assert_true(inart_model_bytes("ResNet50") == -1);
	/* resnet50 is 102.4 MB = 0.8192 Gbit */
	{
		struct inart_job j = {.gradient_bytes = inart_model_bytes("resnet50")};

		assert_true(fabs(inart_job_gbit(&j) - 0.8192) < 1e-12);
	}
}

/* Hosts h0..h5 on switch s0; h6 on s1 linked to s0; h7 alone; h8 behind a
 * link with no residual capacity towards it. */
struct net {
	struct inart_topo *t;
	int h[9], s0, s1;
};

static void net_make(struct net *n)
{
	char id[8];

	n->t = inart_topo_create();
	for (int i = 0; i < 9; i++) {
		snprintf(id, sizeof(id), "h%d", i);
		n->h[i] = inart_topo_add_node(n->t, id, INART_NODE_HOST, 0, 0, 0, NULL);
	}
	n->s0 = inart_topo_add_node(n->t, "s0", INART_NODE_SWITCH, 1, 100, 4, NULL);
	n->s1 = inart_topo_add_node(n->t, "s1", INART_NODE_SWITCH, 0, 0, 0, NULL);
	for (int i = 0; i < 6; i++)
		assert_true(inart_topo_add_link(n->t, n->h[i], n->s0, 10, 10, 0, 0, NULL) >= 0);
	assert_true(inart_topo_add_link(n->t, n->s0, n->s1, 10, 10, 0, 0, NULL) >= 0);
	assert_true(inart_topo_add_link(n->t, n->h[6], n->s1, 10, 10, 0, 0, NULL) >= 0);
	assert_true(inart_topo_add_link(n->t, n->s1, n->h[8], 10, 10, 10, 0, NULL) >= 0);
	assert_int_equal(inart_topo_finalize(n->t, NULL), 0);
}

static void test_add_and_find(void **state)
{
	struct inart_jobs *js = inart_jobs_create();
	struct inart_err err = {{0}};
	int w[3] = {0, 1, 2}, ps[2] = {3, 4};

	(void)state;
	assert_int_equal(inart_jobs_add(js, "a", w, 3, ps, 2, 1000, NULL, &err), 0);
	/* arrays are copied */
	w[0] = 7;
	ps[1] = 8;
	assert_int_equal(js->jobs[0].workers[0], 0);
	assert_int_equal(js->jobs[0].ps[1], 4);
	assert_null(js->jobs[0].model);
	for (int i = 0; i < 20; i++) { /* growth */
		char id[8];

		snprintf(id, sizeof(id), "j%d", i);
		assert_int_equal(inart_jobs_add(js, id, w, 1, ps, 1, 8, "vgg16", &err), i + 1);
	}
	assert_string_equal(js->jobs[5].model, "vgg16");
	assert_int_equal(js->n_jobs, 21);
	assert_int_equal(inart_jobs_find(js, "a"), 0);
	assert_int_equal(inart_jobs_find(js, "j19"), 20);
	assert_int_equal(inart_jobs_find(js, "j20"), -1);
	{ /* pairs: job a has 2 PSs, the 20 others 1 each */
		int first[21];

		assert_int_equal(inart_jobs_pairs(js, NULL), 22);
		assert_int_equal(inart_jobs_pairs(js, first), 22);
		assert_int_equal(first[0], 0);
		assert_int_equal(first[1], 2);
		assert_int_equal(first[20], 21);
	}
	assert_int_equal(inart_job_ps_index(&js->jobs[0], 4), 1);
	assert_int_equal(inart_job_ps_index(&js->jobs[0], 3), 0);
	assert_int_equal(inart_job_ps_index(&js->jobs[0], 0), -1);
	assert_int_equal(inart_jobs_add(js, "a", w, 1, ps, 1, 8, NULL, &err), -EEXIST);
	expect_msg(&err, "duplicate job id 'a'");
	assert_int_equal(inart_jobs_add(js, "", w, 1, ps, 1, 8, NULL, &err), -EINVAL);
	expect_msg(&err, "empty id");
	assert_int_equal(js->n_jobs, 21);
	inart_jobs_destroy(js);
	inart_jobs_destroy(NULL);
}

/* Validate a one-job set; returns the code and leaves the message in err. */
static int validate1(const struct net *n, const int *w, int nw, const int *ps, int nps,
		     double bytes, struct inart_err *err)
{
	struct inart_jobs *js = inart_jobs_create();
	int rc;

	assert_int_equal(inart_jobs_add(js, "j0", w, nw, ps, nps, bytes, NULL, NULL), 0);
	rc = inart_jobs_validate(js, n->t, err);
	inart_jobs_destroy(js);
	return rc;
}

static void test_validate(void **state)
{
	struct net n;
	struct inart_err err = {{0}};
	struct inart_jobs *js;

	(void)state;
	net_make(&n);
	/* valid: workers h0 h1, PSs h2 h6 (h6 across s1) */
	assert_int_equal(
	    validate1(&n, (int[]){n.h[0], n.h[1]}, 2, (int[]){n.h[2], n.h[6]}, 2, 1e6, &err), 0);
	/* not a host */
	assert_int_equal(validate1(&n, (int[]){n.h[0], n.s0}, 2, (int[]){n.h[2]}, 1, 1e6, &err),
			 -EINVAL);
	expect_msg(&err, "job 'j0': worker 's0' is not a host");
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.s1}, 1, 1e6, &err), -EINVAL);
	expect_msg(&err, "job 'j0': PS 's1' is not a host");
	/* listed twice */
	assert_int_equal(validate1(&n, (int[]){n.h[0], n.h[0]}, 2, (int[]){n.h[2]}, 1, 1e6, &err),
			 -EINVAL);
	expect_msg(&err, "host 'h0' is listed twice (worker and worker)");
	assert_int_equal(validate1(&n, (int[]){n.h[0], n.h[1]}, 2, (int[]){n.h[1]}, 1, 1e6, &err),
			 -EINVAL);
	expect_msg(&err, "host 'h1' is listed twice (worker and PS)");
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.h[3], n.h[3]}, 2, 1e6, &err),
			 -EINVAL);
	expect_msg(&err, "host 'h3' is listed twice (PS and PS)");
	/* unreachable PS: isolated host, and a host behind a link whose
	 * residual capacity is zero in one direction */
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.h[2], n.h[7]}, 2, 1e6, &err),
			 -EINVAL);
	expect_msg(&err, "job 'j0': worker 'h0' cannot reach PS 'h7'");
	assert_int_equal(validate1(&n, (int[]){n.h[1]}, 1, (int[]){n.h[8]}, 1, 1e6, &err), -EINVAL);
	expect_msg(&err, "worker 'h1' cannot reach PS 'h8'");
	/* empty job */
	assert_int_equal(validate1(&n, NULL, 0, (int[]){n.h[2]}, 1, 1e6, &err), -EINVAL);
	expect_msg(&err, "job 'j0': no workers");
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, NULL, 0, 1e6, &err), -EINVAL);
	expect_msg(&err, "job 'j0': no PS");
	/* gradient size */
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.h[2]}, 1, 0, &err), -EINVAL);
	expect_msg(&err, "gradient size must be > 0");
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.h[2]}, 1, NAN, &err), -EINVAL);
	assert_int_equal(validate1(&n, (int[]){n.h[0]}, 1, (int[]){n.h[2]}, 1, INFINITY, &err),
			 -EINVAL);
	/* no jobs at all */
	js = inart_jobs_create();
	assert_int_equal(inart_jobs_validate(js, n.t, &err), -EINVAL);
	expect_msg(&err, "no jobs");
	/* the same host may serve two different jobs, in different roles */
	assert_int_equal(
	    inart_jobs_add(js, "a", (int[]){n.h[0]}, 1, (int[]){n.h[1]}, 1, 10, NULL, NULL), 0);
	assert_int_equal(
	    inart_jobs_add(js, "b", (int[]){n.h[1]}, 1, (int[]){n.h[0]}, 1, 10, NULL, NULL), 1);
	assert_int_equal(inart_jobs_validate(js, n.t, &err), 0);
	/* the second job's error names it */
	assert_int_equal(
	    inart_jobs_add(js, "c", (int[]){n.h[4]}, 1, (int[]){n.h[4]}, 1, 10, NULL, NULL), 2);
	assert_int_equal(inart_jobs_validate(js, n.t, &err), -EINVAL);
	expect_msg(&err, "job 'c': host 'h4' is listed twice");
	inart_jobs_destroy(js);
	inart_topo_destroy(n.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_models),
	    cmocka_unit_test(test_add_and_find),
	    cmocka_unit_test(test_validate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
