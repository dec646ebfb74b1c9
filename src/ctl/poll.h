/*
 * poll: the controller's counters from the switches -- one `port_counters`
 * request (`stats` to a switch that refuses it) per switch per round over a
 * connection kept open to its control socket (reopened after a failure),
 * the ports' byte counters fed to the estimator (estimate.h) with the time
 * each reply arrived.  The
 * I/O shell around the sans-I/O estimator; a switch that does not answer
 * within the timeout is skipped (the estimator then finds it silent).
 *
 * Ownership: the poller copies the socket paths; it refers to the topology,
 * which must outlive it.
 */
#ifndef INART_CTL_POLL_H
#define INART_CTL_POLL_H

#include <jansson.h>

#include "ctl/estimate.h"

struct inart_poller;

/* Poll the switches of t; path[v] is switch v's control socket (entries of
 * other nodes are ignored).  NULL + errno (EINVAL: a switch without a path). */
struct inart_poller *inart_poller_create(const struct inart_topo *t, char *const *path,
					 int timeout_ms);
void inart_poller_destroy(struct inart_poller *p);

/* One round: every switch asked, each answer fed to e.  Returns how many
 * answered; err names the first switch that did not and why. */
int inart_poller_round(struct inart_poller *p, struct inart_estimator *e, struct inart_err *err);

/* Requests that failed so far (per round: switches that did not answer). */
unsigned long inart_poller_failures(const struct inart_poller *p);

/* Control connections opened so far: one per switch while its daemon
 * keeps it (ctlproto/ctlsock: inart_ctl_conn), one more after each failure. */
unsigned long inart_poller_connects(const struct inart_poller *p);

/* The port counters of a `stats` or `port_counters` reply (its "ports" array): at most max
 * entries into out.  The number of ports, or -EINVAL (err: which port or
 * counter is missing or not a non-negative integer). */
int inart_poll_parse_ports(const json_t *stats, struct inart_port_sample *out, int max,
			   struct inart_err *err);

#endif
