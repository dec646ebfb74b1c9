/*
 * switchd_shape: switchd's per-port egress shaping (switchd_shape.h).  The
 * shapers wait past a frame's grant by up to 1 ms (SLACK_NS) while their
 * bucket has room, so that releases go in batches of up to a burst.
 */
#include "daemon/switchd_shape.h"

#include <errno.h>
#include <string.h>

#include "common/clock.h"

#define SLACK_NS 1000000ull

int inart_switchd_shape_open(struct sw_state *s, const struct inart_shaper_cfg *cfg,
			     struct inart_err *err)
{
	uint64_t now = inart_now_ns();

	for (int i = 0; i < s->n_ports; i++) {
		struct inart_shaper_cfg c = cfg[i];

		if (c.rate_bps == 0)
			continue;
		if (c.slack_ns == 0)
			c.slack_ns = SLACK_NS;
		s->shaper[i] = inart_shaper_create(&c, now);
		if (s->shaper[i] == NULL)
			return inart_err_set(err, -errno, "--shape %d (%s): %s", i, s->ifnames[i],
					     strerror(errno));
		s->n_shaped++;
	}
	return 0;
}

void inart_switchd_shape_close(struct sw_state *s)
{
	for (int i = 0; i < s->n_ports; i++) {
		inart_shaper_destroy(s->shaper[i]);
		s->shaper[i] = NULL;
	}
	s->n_shaped = 0;
}

int inart_switchd_shape_tx(struct sw_state *s, int port, const uint8_t *frame, uint16_t len,
			   uint64_t now)
{
	struct inart_shaper *sh = s->shaper[port];

	return sh != NULL && inart_shaper_offer(sh, frame, len, now) != INART_SHAPER_SEND;
}

void inart_switchd_shape_release(struct sw_state *s, uint64_t now)
{
	for (int i = 0; i < s->n_ports; i++) {
		struct inart_shaper *sh = s->shaper[i];
		const uint8_t *f;
		uint16_t len;

		if (sh == NULL || inart_shaper_deadline(sh) > now)
			continue;
		while (inart_shaper_next(sh, now, &f, &len)) {
			inart_port_queue(&s->ports[i], f, len);
			if (inart_port_pending(&s->ports[i]) >= s->batch)
				inart_port_flush(&s->ports[i]);
		}
		if (inart_port_pending(&s->ports[i]))
			inart_port_flush(&s->ports[i]);
	}
}

uint64_t inart_switchd_shape_deadline(const struct sw_state *s)
{
	uint64_t dl = UINT64_MAX;

	for (int i = 0; i < s->n_ports && s->n_shaped > 0; i++)
		if (s->shaper[i] != NULL && inart_shaper_deadline(s->shaper[i]) < dl)
			dl = inart_shaper_deadline(s->shaper[i]);
	return dl;
}

void inart_switchd_shape_stats(const struct sw_state *s, struct inart_shaper_stats *st)
{
	for (int i = 0; i < s->n_ports; i++)
		if (s->shaper[i] != NULL)
			inart_shaper_stats(s->shaper[i], &st[i]);
}

void inart_switchd_shape_json(const struct sw_state *s, const struct inart_shaper_stats *st,
			      json_t *ports)
{
	for (int i = 0; i < s->n_ports; i++) {
		json_t *p = json_array_get(ports, (size_t)i);
		struct inart_shaper_cfg c;

		if (s->shaper[i] == NULL || p == NULL)
			continue;
		inart_shaper_cfg_of(s->shaper[i], &c);
		json_object_set_new(p, "shape_rate_bps", json_integer((json_int_t)c.rate_bps));
		json_object_set_new(p, "shaped_tx", json_integer((json_int_t)st[i].tx_pkts));
		json_object_set_new(p, "shaped_tx_bytes", json_integer((json_int_t)st[i].tx_bytes));
		json_object_set_new(p, "shaped_held", json_integer((json_int_t)st[i].held_pkts));
		json_object_set_new(p, "shaped_drops", json_integer((json_int_t)st[i].drops));
		json_object_set_new(p, "shaped_queue", json_integer((json_int_t)st[i].queued));
		json_object_set_new(p, "shaped_queue_bytes",
				    json_integer((json_int_t)st[i].queued_bytes));
		json_object_set_new(p, "shaped_queue_max_bytes",
				    json_integer((json_int_t)st[i].max_queued_bytes));
	}
}
