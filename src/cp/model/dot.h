/*
 * dot: a Graphviz drawing of the topology; with a plan, links are coloured by
 * utilization (push + pull load per iteration over residual capacity, relative
 * to the bottleneck) and the aggregation trees are drawn on top.
 */
#ifndef INART_DOT_H
#define INART_DOT_H

#include "cp/model/evaluate.h"

/* plan and ev may be NULL (topology only).  malloc'ed text or NULL + errno. */
char *inart_dot_render(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_plan *plan, const struct inart_eval *ev);

#endif
