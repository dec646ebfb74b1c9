/*
 * ctltable: the JSON forms of the switch's table entries (labels, routes,
 * ingress bindings), its configuration and a PS tree, both ways.  Used by the
 * control messages (ctlmsg), by switchd/ps for replies and by `inart ctl
 * show`.  Field forms: ctlfield.h; the schema: docs/programs.md.
 *
 * The parsers take untrusted JSON: unknown keys are refused, every field is
 * type- and range-checked and the reason for a refusal names the entry
 * ("what" prefixes it, e.g. "labels[3]: down[2]: port 70000 out of range").
 * Table consistency with the switch (ports, slot regions, duplicate labels)
 * is checked by inart_switch_apply.
 *
 * Ownership: serializers return new jansson references; a parsed entry
 * points into the caller's arrays (exp, down, src).
 */
#ifndef INART_CTLTABLE_H
#define INART_CTLTABLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/ps.h"
#include "dp/switch.h"

/* A table of n entries as a JSON array (a configuration: one object). */
json_t *inart_ctl_labels_json(const struct inart_label_entry *e, int n);
json_t *inart_ctl_routes_json(const struct inart_route *r, int n);
json_t *inart_ctl_ingress_json(const struct inart_sw_ingress *g, int n);
json_t *inart_ctl_sw_cfg_json(const struct inart_sw_cfg *cfg);
json_t *inart_ctl_ps_trees_json(const struct inart_ps_tree_cfg *t, int n);
/* The reverse, for one entry; 0 or -EINVAL with err ("what" prefixes it).
 * A label entry's expected words and copies go into exp and down, which have
 * room for what inart_ctl_label_sizes says (at most 16 words, 64 copies); a
 * tree's sources into src (inart_ctl_ps_tree_sources of them). */
void inart_ctl_label_sizes(json_t *j, size_t *words, size_t *copies);
int inart_ctl_label_parse(json_t *j, const char *what, struct inart_label_entry *e, uint64_t *exp,
			  struct inart_label_down *down, struct inart_err *err);
size_t inart_ctl_ps_tree_sources(json_t *j);
int inart_ctl_route_parse(json_t *j, const char *what, struct inart_route *r,
			  struct inart_err *err);
int inart_ctl_ingress_parse(json_t *j, const char *what, struct inart_sw_ingress *g,
			    struct inart_err *err);
int inart_ctl_sw_cfg_parse(json_t *j, const char *what, struct inart_sw_cfg *cfg,
			   struct inart_err *err);
int inart_ctl_ps_tree_parse(json_t *j, const char *what, struct inart_ps_tree_cfg *cfg,
			    struct inart_ps_source *src, struct inart_err *err);

#endif
