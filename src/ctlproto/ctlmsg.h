/*
 * ctlmsg: the control protocol of switchd and ps (docs/programs.md), in the
 * spirit of P4Runtime: install and read tables, read and reset counters,
 * configure PS trees.  Pure encoding/decoding, no I/O (ctlproto/ctlsock carries
 * the messages over a UNIX stream socket).
 *
 * Framing: every message is a 4-byte big-endian length n (1 <= n <=
 * INART_CTL_MAX_MSG) followed by n bytes of UTF-8 JSON, one object.  A
 * request names its operation in "op"; a reply is {"ok": true, ...data} or
 * {"ok": false, "reason": "..."}.  Requests:
 *   info                      -> role, name, ports (interface names) / bind
 *   install  [node] [config] [replace] [labels] [del_labels] [routes]
 *            [ingress] [install_id] [phase] [reset]
 *                             switch: one batch, all or nothing; with
 *                             "phase": "prepare" built aside until commit;
 *                             reset: the jobs restart (its commit drops the
 *                             aggregation state, also when unchanged)
 *   tables                    -> labels, routes
 *   stats                     -> counters (since the last reset_stats)
 *   port_counters             -> switch: the port counters of stats alone,
 *                                uptime_s (the controller polls it)
 *   reset_stats, lose_state   (lose_state: forget aggregation state, tests)
 *   log_level level           ("error" | "warn" | "info" | "debug")
 *   trees    [node] [replace] [reset] trees [install_id] [phase]
 *                             PS: add/replace trees, all or nothing; reset:
 *                             forget their chunk state (a new run of the job)
 *   commit install_id         both: put the prepared batch in service
 *   abort [install_id]        both: drop the prepared batch
 *   rollback install_id       both: back to what was in service before the
 *                             commit of install_id
 *   tree_del job tree          PS
 *   show                      -> PS trees
 *   test_fault shard error    switch started with --test-faults only (else
 *                             refused): the next install that builds tables
 *                             fails on that shard with errno `error`
 *                             (docs/dataplane.md, "Shards and steering")
 * Field forms (addresses, MACs, bitmap words): ctlfield.h; table entries
 * and configurations: ctltable.h; counters: ctlstats.h (this header includes
 * the three: they are the protocol's parts).  Unknown keys are refused (a
 * typo must not be ignored).
 *
 * The parser takes untrusted bytes: every field is type- and range-checked
 * and the reason for a refusal names the entry (e.g. "labels[3]: down[2]:
 * port 70000 out of range").
 *
 * Ownership: a parsed request owns its arrays, one block (inart_ctl_req_free);
 * encoders return malloc'ed strings or new jansson references.
 */
#ifndef INART_CTLMSG_H
#define INART_CTLMSG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "ctlproto/ctlfield.h"
#include "ctlproto/ctlstats.h"
#include "ctlproto/ctltable.h"
#include "dp/ps.h"
#include "dp/switch.h"

#define INART_CTL_MAX_MSG (64u << 20) /* bytes of JSON in one message */
#define INART_CTL_HDR_LEN 4
#define INART_CTL_MAX_ROUTES (1 << 20)
#define INART_CTL_MAX_TREES 65536

enum inart_ctl_op {
	INART_CTL_INFO = 1,
	INART_CTL_INSTALL,
	INART_CTL_TABLES,
	INART_CTL_STATS,
	INART_CTL_RESET_STATS,
	INART_CTL_LOSE_STATE,
	INART_CTL_LOG_LEVEL,
	INART_CTL_TREES,
	INART_CTL_TREE_DEL,
	INART_CTL_SHOW,
	INART_CTL_COMMIT,   /* put the prepared batch with this install_id in service */
	INART_CTL_ABORT,    /* drop the prepared batch */
	INART_CTL_ROLLBACK, /* back to the state before the commit of install_id */
	/* switch: the port counters alone (the controller's polls) */
	INART_CTL_PORT_COUNTERS,
	/* Test operations, numbered apart from the protocol's own (a daemon
	 * refuses them unless started for tests: switchd --test-faults). */
	INART_CTL_TEST_FAULT = 64, /* switch: shard K refuses the next install */
};

struct inart_ctl_req {
	int op;		     /* enum inart_ctl_op */
	char node[128];	     /* "node": the target's expected name ("" = any) */
	char install_id[17]; /* "install_id": 16 hex digits, "" = none */
	int prepare;	     /* install/trees: "phase": "prepare" (keep aside until commit) */
	int replace;	     /* trees: drop other trees (install: tab.replace) */
	int reset;	     /* trees: restart the listed trees' chunk state; install:
				the jobs restart (the switch drops its slots) */
	int has_cfg;	     /* install: a switch configuration came with the batch */
	struct inart_sw_cfg cfg;
	struct inart_sw_update tab; /* install: the table batch, as the switch applies it */
	int level;		    /* log_level */
	int n_trees;
	struct inart_ps_tree_cfg *trees; /* their sources point into srcs */
	struct inart_ps_source *srcs;
	void *block;  /* a parsed request's arrays above, one allocation */
	uint32_t job; /* tree_del */
	uint16_t tree;
	int shard, error; /* test_fault: the shard (0..), the errno it refuses with */
};

/* Name of an op ("install"), or NULL. */
const char *inart_ctl_op_name(int op);

/* Framing.  Write the 4-byte header for a body of len bytes. */
void inart_ctl_frame_hdr(uint8_t hdr[INART_CTL_HDR_LEN], uint32_t len);
/* Given the bytes received so far: 1 and *body_len if a whole message is
 * there (header + body_len bytes), 0 if more bytes are needed, -EMSGSIZE if
 * the announced length is 0 or above INART_CTL_MAX_MSG. */
int inart_ctl_frame_check(const uint8_t *buf, size_t len, uint32_t *body_len);

/* Parse one request body.  0, or -EINVAL with the reason in err (req is then
 * empty).  -ENOMEM if allocation failed. */
int inart_ctl_req_parse(const char *body, size_t len, struct inart_ctl_req *req,
			struct inart_err *err);
void inart_ctl_req_free(struct inart_ctl_req *req);

/* A request as JSON text (malloc'ed, NUL-terminated; NULL + errno). Fields
 * not used by req->op are omitted. */
char *inart_ctl_req_encode(const struct inart_ctl_req *req);

/* Replies.  ok: the object data (stolen; NULL = none) with "ok": true
 * added.  err: {"ok": false, "reason": reason}.  NULL + errno. */
char *inart_ctl_reply_ok(json_t *data);
char *inart_ctl_reply_err(const char *reason);
/* Parse a reply: 0 and *obj (new reference, the whole object) if ok;
 * -EPERM with the peer's reason in err if refused; -EINVAL if malformed. */
int inart_ctl_reply_parse(const char *body, size_t len, json_t **obj, struct inart_err *err);

#endif
