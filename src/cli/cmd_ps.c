/*
 * cmd_ps: `inart ps` -- the parameter server daemon.  The sans-I/O PS core
 * (dp/ps) runs over one UDP socket bound to IP:47470, in one thread: poll()
 * on the socket and the control socket; datagrams are received and sent in
 * batches (recvmmsg/sendmmsg) from preallocated buffers.  When the socket
 * pushes back, input is not read until the pending results are out (the
 * kernel's receive buffer holds it meanwhile).
 *
 * Control requests: trees (add/replace a batch of trees, all checked before
 * any is applied), tree_del, show, stats, reset_stats, log_level, info.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "bridge/ctlmsg.h"
#include "dp/ps.h"
#include "dp/wire.h"
#include "io/ctlsock.h"
#include "io/log.h"
#include "io/udp.h"
#include "util.h"

const char cmd_ps_help[] =
    "usage: inart ps --bind IP --ctl PATH [OPTIONS]\n"
    "       inart ps --stats --ctl PATH [--json]\n"
    "\n"
    "Run a parameter server: it receives InArt contributions on UDP IP:47470,\n"
    "combines them so that every worker counts exactly once per chunk, and sends\n"
    "the results down its trees.  Trees are configured over the UNIX control\n"
    "socket PATH ('inart ctl install'); docs/programs.md has the protocol.\n"
    "With --stats, print the counters of the PS running at PATH and exit.\n"
    "\n"
    "Options:\n"
    "  --bind IP          address to bind (this PS's address in the deployment)\n"
    "  --ctl PATH         control socket\n"
    "  --name ID          node id of this PS (checked against the requests)\n"
    "  --batch N          datagrams per recvmmsg/sendmmsg (default 64)\n"
    "  --log-level L      error, warn, info (default) or debug\n"
    "  --stats            print the counters of a running PS and exit\n"
    "  --json             with --stats: the JSON reply\n"
    "\n"
    "Exit status: 0 stopped by SIGINT/SIGTERM, 1 setup failure, 2 usage error.\n";

#define OUT_CAP 2048
#define OUT_ROOM (INART_PS_MAX_CHILDREN + 1) /* most datagrams one rx can emit */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct ps_state {
	const char *name;
	uint32_t ip;
	struct inart_ps *ps;
	struct inart_ps_tree_cfg *trees; /* as configured, for show */
	int n_trees, cap_trees;
	struct inart_ps_stats base;
	uint64_t start_ns, send_blocked, base_send_blocked;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tree_index(const struct ps_state *s, uint32_t job, uint16_t tree)
{
	for (int i = 0; i < s->n_trees; i++)
		if (s->trees[i].job == job && s->trees[i].tree == tree)
			return i;
	return -1;
}

static int trees_apply(struct ps_state *s, const struct inart_ctl_req *rq, char *why,
		       size_t why_len)
{
	struct inart_ps *probe = inart_ps_create();
	int rc = 0;

	if (probe == NULL) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	/* every tree must be accepted by a core before the live one changes */
	for (int i = 0; i < rq->n_trees; i++) {
		rc = inart_ps_tree_set(probe, &rq->trees[i]);
		if (rc < 0) {
			snprintf(why, why_len, "trees[%d] (job %u tree %u): refused: %s", i,
				 rq->trees[i].job, rq->trees[i].tree, strerror(-rc));
			inart_ps_destroy(probe);
			return rc;
		}
	}
	inart_ps_destroy(probe);
	if (rq->replace) {
		for (int i = 0; i < s->n_trees;) {
			int keep = 0;

			for (int k = 0; k < rq->n_trees; k++)
				if (rq->trees[k].job == s->trees[i].job &&
				    rq->trees[k].tree == s->trees[i].tree)
					keep = 1;
			if (keep) {
				i++;
				continue;
			}
			inart_ps_tree_del(s->ps, s->trees[i].job, s->trees[i].tree);
			s->trees[i] = s->trees[--s->n_trees];
		}
	}
	for (int i = 0; i < rq->n_trees; i++) {
		const struct inart_ps_tree_cfg *c = &rq->trees[i];
		int k = tree_index(s, c->job, c->tree);

		if (k < 0 && s->n_trees == s->cap_trees) {
			int cap = s->cap_trees ? 2 * s->cap_trees : 16;
			struct inart_ps_tree_cfg *nt = realloc(s->trees, (size_t)cap * sizeof(*nt));

			if (nt == NULL) {
				snprintf(why, why_len, "out of memory after %d trees", i);
				return -ENOMEM;
			}
			s->trees = nt;
			s->cap_trees = cap;
		}
		if (rq->reset && k >= 0)
			inart_ps_tree_del(s->ps, c->job, c->tree); /* fresh chunk state */
		rc = inart_ps_tree_set(s->ps, c);
		if (rc < 0) {
			snprintf(why, why_len, "trees[%d]: %s (after %d trees were applied)", i,
				 strerror(-rc), i);
			return rc;
		}
		if (k < 0)
			k = s->n_trees++;
		s->trees[k] = *c;
	}
	return 0;
}

static json_t *stats_json(struct ps_state *s)
{
	struct inart_ps_stats st;
	json_t *o;

	inart_ps_stats(s->ps, &st);
	inart_ctl_counters_sub(&st, &s->base, inart_ctl_ps_counters, inart_ctl_n_ps_counters);
	o = json_object();
	json_object_set_new(o, "role", json_string("ps"));
	json_object_set_new(o, "name", json_string(s->name ? s->name : ""));
	json_object_set_new(o, "uptime_s", json_real((double)(now_ns() - s->start_ns) / 1e9));
	json_object_set_new(o, "trees", json_integer(s->n_trees));
	json_object_set_new(o, "ps", inart_ctl_ps_stats_json(&st));
	json_object_set_new(o, "send_blocked",
			    json_integer((json_int_t)(s->send_blocked - s->base_send_blocked)));
	return o;
}

/* One control request for this PS (cli_ctl_serve does the rest). */
static int ps_op(void *ctx, struct inart_ctl_req *rq, json_t **data, char *why, size_t why_len)
{
	struct ps_state *s = ctx;
	char ip[16];
	json_t *a;
	int rc = 0;

	switch (rq->op) {
	case INART_CTL_INFO:
		*data = json_object();
		inart_ctl_fmt_ip(s->ip, ip);
		json_object_set_new(*data, "role", json_string("ps"));
		json_object_set_new(*data, "name", json_string(s->name ? s->name : ""));
		json_object_set_new(*data, "bind", json_string(ip));
		json_object_set_new(*data, "trees", json_integer(s->n_trees));
		break;
	case INART_CTL_TREES:
		rc = trees_apply(s, rq, why, why_len);
		if (rc == 0)
			inart_log_info("configured %d trees%s%s (%d in all)", rq->n_trees,
				       rq->replace ? " (replace)" : "", rq->reset ? " (reset)" : "",
				       s->n_trees);
		break;
	case INART_CTL_TREE_DEL: {
		int k = tree_index(s, rq->job, rq->tree);

		if (k < 0) {
			snprintf(why, why_len, "no tree (job %u, tree %u)", rq->job, rq->tree);
			rc = -ENOENT;
			break;
		}
		inart_ps_tree_del(s->ps, rq->job, rq->tree);
		s->trees[k] = s->trees[--s->n_trees];
		break;
	}
	case INART_CTL_SHOW:
		*data = json_object();
		a = json_array();
		for (int i = 0; i < s->n_trees; i++)
			json_array_append_new(a, inart_ctl_ps_tree_json(&s->trees[i]));
		json_object_set_new(*data, "trees", a);
		break;
	case INART_CTL_STATS:
		*data = stats_json(s);
		break;
	case INART_CTL_RESET_STATS:
		inart_ps_stats(s->ps, &s->base);
		s->base_send_blocked = s->send_blocked;
		break;
	default:
		snprintf(why, why_len, "'%s' is a switch request; this is a PS",
			 inart_ctl_op_name(rq->op));
		rc = -EINVAL;
		break;
	}
	return rc;
}

static char *handle(void *ctx, const char *body, size_t len)
{
	const struct ps_state *s = ctx;

	return cli_ctl_serve(body, len, "PS", s->name, ps_op, ctx);
}

/* Datagrams emitted by the core and not sent yet: d[head..used). */
struct outq {
	struct inart_dgram d[OUT_CAP];
	int head, used;
};

static void outq_flush(struct ps_state *s, struct inart_udp *u, struct outq *q)
{
	if (q->head < q->used)
		q->head += inart_udp_send(u, q->d + q->head, q->used - q->head);
	if (q->head == q->used) {
		q->head = q->used = 0;
		return;
	}
	s->send_blocked++;
	for (int j = q->head; j < q->used; j++) { /* compact, swapping buffers */
		uint8_t *tmp = q->d[j - q->head].data;

		q->d[j - q->head] = q->d[j];
		q->d[j].data = tmp;
	}
	q->used -= q->head;
	q->head = 0;
}

/* Wait until one more datagram's worth of output fits. */
static void outq_room(struct ps_state *s, struct inart_udp *u, struct outq *q)
{
	while (OUT_CAP - q->used < OUT_ROOM && !stop_flag) {
		struct pollfd w = {inart_udp_fd(u), POLLOUT, 0};

		outq_flush(s, u, q);
		if (OUT_CAP - q->used < OUT_ROOM)
			poll(&w, 1, 10);
	}
}

static int run(struct ps_state *s, struct inart_udp *u, struct inart_ctlsrv *srv, int batch)
{
	static uint8_t bufs[OUT_CAP][INART_DGRAM_MAX];
	static struct outq q;
	struct inart_dgram in[1024];
	struct pollfd pfd[2];

	for (int i = 0; i < OUT_CAP; i++)
		q.d[i].data = bufs[i];
	pfd[0].fd = inart_udp_fd(u);
	pfd[1].fd = inart_ctlsrv_fd(srv);
	pfd[1].events = POLLIN;
	while (!stop_flag) {
		int r;

		pfd[0].events = POLLIN | (q.used > 0 ? POLLOUT : 0);
		r = poll(pfd, 2, q.used > 0 ? 1 : 1000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			inart_log_error("poll: %s", strerror(errno));
			return -errno;
		}
		outq_flush(s, u, &q);
		for (int round = 0; round < 8 && !stop_flag; round++) {
			int n = inart_udp_recv(u, in, batch);
			uint64_t now;

			if (n <= 0) {
				if (n < 0)
					inart_log_error("receive: %s", strerror(-n));
				break;
			}
			now = now_ns();
			for (int i = 0; i < n; i++) {
				outq_room(s, u, &q);
				q.used += inart_ps_rx(s->ps, in[i].data, in[i].len, in[i].peer_ip,
						      in[i].peer_port, now, q.d + q.used,
						      OUT_CAP - q.used);
			}
			outq_flush(s, u, &q);
		}
		if (pfd[1].revents & POLLIN)
			inart_ctlsrv_service(srv);
	}
	return 0;
}

int cmd_ps(int argc, char **argv)
{
	enum { O_BIND = 1, O_CTL, O_NAME, O_BATCH, O_LOG, O_STATS, O_JSON };
	static const struct option longopts[] = {
	    {"bind", required_argument, NULL, O_BIND},
	    {"ctl", required_argument, NULL, O_CTL},
	    {"name", required_argument, NULL, O_NAME},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"log-level", required_argument, NULL, O_LOG},
	    {"stats", no_argument, NULL, O_STATS},
	    {"json", no_argument, NULL, O_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "ps", *ctl = NULL, *bind_s = NULL;
	struct ps_state st = {0};
	struct inart_err err = {{0}};
	struct inart_ctlsrv *srv;
	struct inart_udp *u;
	struct sigaction sa;
	int c, batch = 64, level = INART_LOG_INFO, stats = 0, json = 0, rc;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(cmd_ps_help, stdout);
			return EXIT_OK;
		case O_BIND:
			bind_s = optarg;
			if (inart_ctl_parse_ip(optarg, &st.ip) < 0)
				cli_usage_error(cmd, "--bind: '%s' is not an IPv4 address", optarg);
			break;
		case O_CTL:
			ctl = optarg;
			break;
		case O_NAME:
			st.name = optarg;
			break;
		case O_BATCH:
			batch = cli_int(cmd, "--batch", optarg, 1, 1024);
			break;
		case O_LOG:
			level = cli_log_level(cmd, optarg);
			break;
		case O_STATS:
			stats = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	rc = cli_ctl_daemon_args(cmd, argc, argv, ctl, stats, json,
				 bind_s != NULL || st.name != NULL);
	if (rc >= 0)
		return rc;
	if (bind_s == NULL)
		cli_usage_error(cmd, "--bind IP is required");

	inart_log_init("inart-ps", level);
	st.ps = inart_ps_create();
	if (st.ps == NULL)
		cli_failf("out of memory");
	u = inart_udp_open(st.ip, INART_WIRE_UDP_PORT, batch, &err);
	if (u == NULL)
		cli_fail(&err);
	st.start_ns = now_ns();
	srv = inart_ctlsrv_open(ctl, handle, &st, &err);
	if (srv == NULL)
		cli_fail(&err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	inart_log_info("PS %s up on %s:%d, control socket %s", st.name ? st.name : "", bind_s,
		       INART_WIRE_UDP_PORT, ctl);
	rc = run(&st, u, srv, batch);
	inart_log_info("stopping");
	inart_ctlsrv_close(srv);
	inart_udp_close(u);
	inart_ps_destroy(st.ps);
	free(st.trees);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}
