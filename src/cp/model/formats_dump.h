/*
 * formats_dump: the writers of the JSON formats (docs/formats.md; the
 * readers are formats.h, which includes this header).  They produce
 * canonical, stable JSON (keys in a fixed order, 2-space indentation,
 * shortest round-trip numbers) so that golden files compare byte for byte,
 * and what they write reads back through formats.h to the same objects.
 *
 * Ownership: returned strings belong to the caller (free).
 */
#ifndef INART_FORMATS_DUMP_H
#define INART_FORMATS_DUMP_H

#include "cp/model/plan.h"

/* The kinds of route in a plan job, as the plan format names them (read by
 * formats.c, written here): a flow (worker, PS, aggregation point) and a tree
 * (switch, PS, parent), each with a path; and a ring hop (a ring all-reduce
 * job), a path only.  what: for messages; list: the job's key; keys: the
 * three nodes' keys (none for a ring hop). */
struct inart_route_kind {
	const char *what, *list, *keys[3];
};

extern const struct inart_route_kind inart_route_kinds[3];

/* Serialize to a NUL-terminated malloc'ed string (NULL + errno on failure). */
char *inart_topo_dump(const struct inart_topo *t);
char *inart_jobs_dump(const struct inart_jobs *js, const struct inart_topo *t);
char *inart_plan_dump(const struct inart_plan *p, const struct inart_topo *t,
		      const struct inart_jobs *js);

#endif
