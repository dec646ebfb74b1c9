/*
 * install_id: FNV-1a over every field an installation installs, in a fixed
 * order (switches, PSs, workers); fields added later are hashed only when
 * set, so installations without them keep their identities.
 */
#include "bridge/install_id.h"

#include <string.h>

#include "bridge/install.h"

static void fnv(uint64_t *h, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= 1099511628211ull;
	}
}

static void fnv_mac(uint64_t *h, const uint8_t m[6])
{
	for (int i = 0; i < 6; i++)
		fnv(h, m[i], 1);
}

static void digest_switch(uint64_t *h, const struct inart_sw_install *si)
{
	const struct inart_sw_cfg *c = &si->cfg;

	fnv(h, (uint64_t)si->node, 4);
	fnv(h, (uint64_t)c->n_ports, 4);
	for (int p = 0; p < c->n_ports; p++) {
		fnv_mac(h, c->ports[p].mac);
		fnv(h, c->ports[p].ip, 4);
		fnv_mac(h, c->ports[p].peer_mac);
		fnv(h, c->ports[p].peer_ip, 4);
	}
	fnv(h, (uint64_t)c->pool_slots, 4);
	fnv(h, (uint64_t)c->max_values, 4);
	fnv(h, c->flush_timeout_ns, 8);
	fnv(h, (uint64_t)si->n_labels, 4);
	for (int i = 0; i < si->n_labels; i++) {
		const struct inart_label_entry *e = &si->labels[i];

		fnv(h, e->label, 4);
		fnv(h, e->kind, 1);
		fnv(h, e->job, 4);
		fnv(h, e->tree, 2);
		fnv(h, e->in_ports, 8);
		fnv(h, e->out_port, 2);
		fnv(h, e->next_label, 4);
		fnv(h, e->aggregate, 1);
		fnv(h, e->slot_base, 2);
		fnv(h, e->n_slots, 2);
		fnv(h, e->bitmap_words, 1);
		for (int w = 0; e->aggregate && w < e->bitmap_words; w++)
			fnv(h, e->expected[w], 8);
		fnv(h, e->n_down, 2);
		for (int k = 0; k < e->n_down; k++) {
			fnv(h, e->down[k].port, 2);
			fnv(h, e->down[k].label, 4);
			fnv(h, e->down[k].dst_ip, 4);
		}
	}
	fnv(h, (uint64_t)si->n_routes, 4);
	for (int i = 0; i < si->n_routes; i++) {
		fnv(h, si->routes[i].prefix, 4);
		fnv(h, si->routes[i].len, 1);
		fnv(h, si->routes[i].port, 2);
	}
	fnv(h, (uint64_t)si->n_ingress, 4);
	for (int i = 0; i < si->n_ingress; i++) {
		fnv(h, si->ingress[i].port, 2);
		fnv(h, si->ingress[i].rank, 2);
		fnv(h, si->ingress[i].job, 4);
	}
}

uint64_t inart_install_digest(const struct inart_install *in)
{
	uint64_t h = 1469598103934665603ull;

	fnv(&h, (uint64_t)in->n_switches, 4);
	for (int k = 0; k < in->n_switches; k++)
		digest_switch(&h, &in->sw[k]);
	fnv(&h, (uint64_t)in->n_ps, 4);
	for (int k = 0; k < in->n_ps; k++) {
		fnv(&h, (uint64_t)in->ps[k].node, 4);
		fnv(&h, (uint64_t)in->ps[k].n_trees, 4);
		for (int i = 0; i < in->ps[k].n_trees; i++) {
			const struct inart_ps_tree_cfg *c = &in->ps[k].trees[i];

			fnv(&h, c->job, 4);
			fnv(&h, c->tree, 2);
			fnv(&h, c->fan_in, 2);
			fnv(&h, c->max_chunks, 4);
			fnv(&h, c->n_children, 2);
			for (int q = 0; q < c->n_children; q++) {
				fnv(&h, c->children[q].ip, 4);
				fnv(&h, c->children[q].label, 4);
			}
			fnv(&h, c->n_sources, 2);
			for (int q = 0; q < c->n_sources; q++) {
				fnv(&h, c->sources[q].ip, 4);
				fnv(&h, c->sources[q].rank, 2);
			}
		}
	}
	fnv(&h, (uint64_t)in->n_workers, 4);
	for (int k = 0; k < in->n_workers; k++) {
		const struct inart_worker_cfg *c = &in->workers[k].cfg;

		fnv(&h, (uint64_t)in->workers[k].node, 4);
		fnv(&h, c->job, 4);
		fnv(&h, c->rank, 2);
		fnv(&h, c->n_workers, 2);
		fnv(&h, c->n_trees, 2);
		for (int t = 0; t < c->n_trees; t++) {
			uint64_t share;

			memcpy(&share, &c->trees[t].share, 8);
			fnv(&h, c->trees[t].ps_ip, 4);
			fnv(&h, c->trees[t].label, 4);
			fnv(&h, share, 8);
			/* (only when paced: unpaced installations keep their
			   identities) */
			memcpy(&share, &c->trees[t].pace_Bps, 8);
			if (c->trees[t].pace_Bps > 0)
				fnv(&h, share, 8);
		}
		fnv(&h, c->values_per_packet, 2);
		fnv(&h, c->window, 2);
		fnv(&h, c->slots, 2);
		fnv(&h, c->retx_timeout_ns, 8);
		fnv(&h, (uint8_t)c->scale_exp, 1);
		if (in->workers[k].ring.size > 0) { /* ring jobs only: PS plans keep their ids */
			const struct inart_ring_cfg *rc = &in->workers[k].ring;
			uint64_t pace;

			fnv(&h, rc->pos, 2);
			fnv(&h, rc->size, 2);
			fnv(&h, rc->prev_ip, 4);
			fnv(&h, rc->next_ip, 4);
			memcpy(&pace, &rc->pace_Bps, 8);
			fnv(&h, pace, 8);
		}
	}
	return h;
}

void inart_install_id_fmt(uint64_t id, char out[17])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++)
		out[i] = hex[(id >> (60 - 4 * i)) & 15];
	out[16] = '\0';
}
