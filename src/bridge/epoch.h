/*
 * epoch: two plans side by side in the data plane, for a switch of plans
 * without losing an all-reduce (issue 10; docs/controller.md, "Hitless
 * switch").
 *
 * An installation of epoch E (inart_epoch_apply) lives in one half of every
 * identifier space the data plane keys its state by, chosen by E's parity:
 *   - job ids: job + (E & 1) x 2^31 (switch labels, ingress entries, PS
 *     trees, worker configurations: the wire's job field);
 *   - labels: label + (E & 1) x 2^30 (every label and next/copy label);
 *   - aggregator slots: every switch's pool is twice what one plan needs
 *     and epoch E's regions are in half (E & 1).
 * So the tables of epochs E and E + 1 never share a label, a (job, tree)
 * or a slot, and a switch or PS can hold both (inart_epoch_union): the
 * state of E's trees goes on untouched while E + 1's are added, and removed
 * later by installing E + 1 alone.  The configuration of a switch (its pool
 * of both halves) is the same for every epoch, so an epoch install changes
 * tables only and keeps the aggregation state in service.
 *
 * Ownership: inart_epoch_apply changes the installation in place; a union
 * refers to the entries of both installations (which must outlive it) and
 * owns only its arrays, in one block with it (inart_epoch_union_destroy).
 */
#ifndef INART_EPOCH_H
#define INART_EPOCH_H

#include <stdint.h>

#include "bridge/install.h"

#define INART_EPOCH_JOB_BIT (1u << 31)
#define INART_EPOCH_LABEL_BIT (1u << 30)

/* Move installation `in` (built for one plan) into epoch E's half.  0, or
 * -ERANGE with err when a label, job or pool does not fit a half. */
int inart_epoch_apply(struct inart_install *in, uint32_t epoch, struct inart_err *err);

/* The tables of old and new side by side: every switch of new with old's
 * labels and ingress entries added (routes and configuration: new's); every
 * PS of either with the trees of both; the workers of new.  0 or -errno
 * (-EINVAL: a switch of one not in the other). */
int inart_epoch_union(const struct inart_install *old, const struct inart_install *new_in,
		      struct inart_install **out, struct inart_err *err);
void inart_epoch_union_destroy(struct inart_install *u);

/* A plan file's epoch (docs/controller.md): the optional top-level object
 *   "epoch": {"n": E, "from_step": {"JOB": S, ...}}
 * *n = E (-1: the plan has none), *from_step = S for job `job` (0: absent:
 * from the worker's next call; job may be NULL).  Parsed from buf (len
 * bytes; name for messages) or read from path.  0 or -EINVAL/-errno with
 * err. */
int inart_epoch_parse(const char *buf, size_t len, const char *name, const char *job, int64_t *n,
		      uint32_t *from_step, struct inart_err *err);
int inart_epoch_load(const char *path, const char *job, int64_t *n, uint32_t *from_step,
		     struct inart_err *err);

#endif
