/*
 * poll: counters from the switches' control sockets (poll.h).
 */
#include "ctl/poll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctlproto/ctlmsg.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/slab.h"
#include "ctlproto/ctlsock.h"

struct inart_poller {
	const struct inart_topo *t;
	char **path;		      /* per node: switches only */
	struct inart_ctl_conn **conn; /* per node: its kept connection */
	unsigned char *full;	      /* per node: refused port_counters, asked for stats */
	int timeout_ms;
	unsigned long failures;
	struct inart_port_sample *buf; /* max degree */
	int max_deg;
};

void inart_poller_destroy(struct inart_poller *p)
{
	if (p == NULL)
		return;
	for (int v = 0; v < p->t->n_nodes; v++) {
		free(p->path[v]);
		inart_ctl_conn_destroy(p->conn[v]);
	}
	free(p); /* its arrays with it (lay_out) */
}

/* The poller and its arrays in one block (common/slab.h): per node
 * (n_nodes + 1 entries each) path, conn, full; then buf, max_deg + 1
 * samples. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_poller *p = obj;
	size_t n = (size_t)p->t->n_nodes + 1;

	p->path = inart_slab_take(s, n, sizeof(*p->path));
	p->conn = inart_slab_take(s, n, sizeof(*p->conn));
	p->full = inart_slab_take(s, n, sizeof(*p->full));
	p->buf = inart_slab_take(s, (size_t)p->max_deg + 1, sizeof(*p->buf));
}

struct inart_poller *inart_poller_create(const struct inart_topo *t, char *const *path,
					 int timeout_ms)
{
	struct inart_poller proto = {0}, *p;

	if (t == NULL || !t->finalized || path == NULL || timeout_ms <= 0)
		return inart_null_errno(EINVAL);
	proto.t = t;
	proto.timeout_ms = timeout_ms;
	for (int v = 0; v < t->n_nodes; v++) {
		int deg = t->out_off[v + 1] - t->out_off[v];

		if (t->nodes[v].kind == INART_NODE_SWITCH && deg > proto.max_deg)
			proto.max_deg = deg;
	}
	p = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (p == NULL)
		return NULL;
	for (int v = 0; v < t->n_nodes; v++) {
		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		if (path[v] == NULL) {
			inart_poller_destroy(p);
			return inart_null_errno(EINVAL);
		}
		p->path[v] = strdup(path[v]);
		p->conn[v] = inart_ctl_conn_create(path[v]);
		if (p->path[v] == NULL || p->conn[v] == NULL)
			goto nomem;
	}
	return p;
nomem:
	inart_poller_destroy(p);
	return inart_null_errno(ENOMEM);
}

unsigned long inart_poller_failures(const struct inart_poller *p)
{
	return p == NULL ? 0 : p->failures;
}

unsigned long inart_poller_connects(const struct inart_poller *p)
{
	unsigned long n = 0;

	for (int v = 0; p != NULL && v < p->t->n_nodes; v++)
		n += inart_ctl_conn_connects(p->conn[v]);
	return n;
}

static int counter(const json_t *port, const char *name, int k, uint64_t *out,
		   struct inart_err *err)
{
	const json_t *v = json_object_get(port, name);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return inart_err_set(err, -EINVAL, "stats: ports[%d]: '%s' missing or not a count",
				     k, name);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int inart_poll_parse_ports(const json_t *stats, struct inart_port_sample *out, int max,
			   struct inart_err *err)
{
	const json_t *ports = json_object_get(stats, "ports");
	size_t n = json_array_size(ports);

	if (!json_is_array(ports))
		return inart_err_set(err, -EINVAL, "stats: no 'ports' array");
	if (n > (size_t)max)
		return inart_err_set(err, -EINVAL, "stats: %zu ports, at most %d expected", n, max);
	for (size_t k = 0; k < n; k++) {
		const json_t *p = json_array_get(ports, k);
		struct inart_port_sample *s = &out[k];

		if (counter(p, "rx_bytes", (int)k, &s->rx_bytes, err) < 0 ||
		    counter(p, "tx_bytes", (int)k, &s->tx_bytes, err) < 0 ||
		    counter(p, "rx_ina_bytes", (int)k, &s->rx_ina_bytes, err) < 0 ||
		    counter(p, "tx_ina_bytes", (int)k, &s->tx_ina_bytes, err) < 0)
			return -EINVAL;
	}
	return (int)n;
}

/* Ask switch v for its port counters (a switch that refuses port_counters
 * -- an older switchd -- for its stats from then on): the parsed reply in
 * *o and the time it arrived in *now.  0 or -errno (err says why). */
static int ask(struct inart_poller *p, int v, json_t **o, double *now, struct inart_err *err)
{
	static const char ports[] = "{\"op\": \"port_counters\"}", stats[] = "{\"op\": \"stats\"}";
	char *rep = NULL;
	size_t rlen = 0;
	int rc;

	for (;;) {
		const char *body = p->full[v] ? stats : ports;

		rc = inart_ctl_conn_call(p->conn[v], body, strlen(body), &rep, &rlen, p->timeout_ms,
					 err);
		*now = inart_now_s();
		if (rc < 0)
			break;
		rc = inart_ctl_reply_parse(rep, rlen, o, err);
		free(rep);
		rep = NULL;
		if (rc == -EPERM && !p->full[v]) {
			p->full[v] = 1;
			continue;
		}
		break;
	}
	return rc;
}

/* Ask switch v; feed its answer.  0 or -errno (err says why). */
static int poll_one(struct inart_poller *p, int v, struct inart_estimator *e, struct inart_err *err)
{
	json_t *o = NULL, *up;
	int rc, n;
	double now;

	rc = ask(p, v, &o, &now, err);
	if (rc < 0)
		goto out;
	n = inart_poll_parse_ports(o, p->buf, p->max_deg, err);
	if (n < 0) {
		rc = n;
		goto out;
	}
	/* the switch's uptime when it read the counters times the intervals */
	up = json_object_get(o, "uptime_s");
	rc = json_is_number(up)
		 ? inart_estimator_feed_at(e, v, now, json_number_value(up), p->buf, n)
		 : inart_estimator_feed(e, v, now, p->buf, n);
	if (rc < 0)
		inart_err_set(err, rc, "%d ports, the topology gives it %d", n,
			      p->t->out_off[v + 1] - p->t->out_off[v]);
out:
	json_decref(o);
	return rc;
}

int inart_poller_round(struct inart_poller *p, struct inart_estimator *e, struct inart_err *err)
{
	int answered = 0, first = 1;

	if (p == NULL || e == NULL)
		return -EINVAL;
	for (int v = 0; v < p->t->n_nodes; v++) {
		struct inart_err one = {{0}};

		if (p->path[v] == NULL)
			continue;
		if (poll_one(p, v, e, &one) == 0) {
			answered++;
			continue;
		}
		p->failures++;
		if (first && err != NULL)
			inart_err_set(err, -EIO, "switch '%s' (%s): %s", p->t->nodes[v].id,
				      p->path[v], one.msg);
		first = 0;
	}
	return answered;
}
