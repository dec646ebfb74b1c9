/*
 * fuzz_ctlmsg: libFuzzer target for the control-socket message parser.  An
 * input is a framed message (4-byte length, body) or, when the frame check
 * refuses it, a bare body.  Every body must parse cleanly or be refused
 * with a reason; an accepted request must encode to JSON that parses to the
 * same encoding, and is then applied to a fixed switch (install) or PS
 * (trees): a refused batch must leave the tables exactly as they were.  The
 * reply parser gets the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlproto/ctlmsg.h"
#include "dp/ps.h"
#include "dp/switch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_ctlmsg: %s\n", what);
	abort();
}

static struct inart_switch *fixed_switch(void)
{
	static const struct inart_label_entry e = {
	    .label = 1, .kind = INART_LABEL_UP, .job = 0, .tree = 0, .out_port = 1};
	static const struct inart_route r = {.prefix = 0x0a000000, .len = 8, .port = 2};
	struct inart_sw_update u = {.n_labels = 1, .labels = &e, .n_routes = 1, .routes = &r};
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = 4;
	cfg.pool_slots = 64;
	cfg.flush_timeout_ns = 1000000;
	sw = inart_switch_create(&cfg);
	if (sw == NULL || inart_switch_apply(sw, &u, NULL) < 0)
		die("fixed switch");
	return sw;
}

static void apply(const struct inart_ctl_req *r)
{
	if (r->op == INART_CTL_INSTALL) {
		struct inart_switch *sw = fixed_switch();
		struct inart_sw_update u = r->tab;
		struct inart_err why = {{0}};

		if (inart_switch_apply(sw, &u, &why) < 0) {
			struct inart_label_entry l;
			struct inart_route rt;

			if (why.msg[0] == '\0')
				die("refused without a reason");
			if (inart_switch_get_labels(sw, &l, 1) != 1 || l.label != 1 ||
			    l.out_port != 1 || inart_switch_get_routes(sw, &rt, 1) != 1 ||
			    rt.port != 2)
				die("a refused batch changed the tables");
		}
		inart_switch_destroy(sw);
	} else if (r->op == INART_CTL_TREES) {
		struct inart_ps *ps = inart_ps_create();

		if (ps == NULL)
			return;
		for (int i = 0; i < r->n_trees; i++)
			if (inart_ps_tree_set(ps, &r->trees[i]) < 0)
				die("a tree the parser accepted was refused by the PS");
		inart_ps_destroy(ps);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_ctl_req r, r2;
	struct inart_err why = {{0}};
	const char *body = (const char *)data;
	size_t len = size;
	uint32_t n;
	json_t *o = NULL;
	char *buf, *e1, *e2;

	if (inart_ctl_frame_check(data, size, &n) == 1) {
		body += INART_CTL_HDR_LEN;
		len = n;
	}
	buf = malloc(len ? len : 1); /* exact size: overreads are caught */
	if (buf == NULL)
		return 0;
	memcpy(buf, body, len);
	why.msg[0] = '\0';
	if (inart_ctl_req_parse(buf, len, &r, &why) == 0) {
		e1 = inart_ctl_req_encode(&r);
		if (e1 == NULL)
			die("encode failed");
		if (inart_ctl_req_parse(e1, strlen(e1), &r2, &why) != 0)
			die("the encoding of an accepted request is refused");
		e2 = inart_ctl_req_encode(&r2);
		if (e2 == NULL || strcmp(e1, e2) != 0)
			die("encode/parse/encode differs");
		apply(&r);
		free(e1);
		free(e2);
		inart_ctl_req_free(&r2);
		inart_ctl_req_free(&r);
	} else if (why.msg[0] == '\0') {
		die("refused without a reason");
	}
	if (inart_ctl_reply_parse(buf, len, &o, &why) == 0)
		json_decref(o);
	free(buf);
	return 0;
}
