/*
 * progress: how far each contributor (worker rank) of a tree has come, for
 * loss detection.  The switch keeps one record per rank of an aggregating
 * entry, the PS one per rank of a tree; both use these two functions, so the
 * rule "a rank that sent a later chunk will not send this one any more" is
 * written once (docs/wire.md, Loss recovery).
 *
 * A record holds the newest chunk (iter, seq) the rank's contributions came
 * with along the tree (the caller decides which packets count: not
 * retransmissions, probes or fallbacks).  Contributions of one rank travel one
 * path in order, so a rank whose chunk seq + `after` (or a later iteration)
 * arrived will not send chunk seq: it is *gone* for it.  Iterations are
 * compared in serial arithmetic, so they may wrap.
 */
#ifndef INART_PROGRESS_H
#define INART_PROGRESS_H

#include <stdint.h>

/* pos = seq + 1 of the newest chunk of iteration iter; pos 0: nothing yet */
struct inart_rank_pos {
	uint32_t iter, pos;
};

/* The rank sent chunk (iter, seq): keep it if newer than the record. */
static inline void inart_progress_note(struct inart_rank_pos *p, uint32_t iter, uint32_t seq)
{
	if (p->pos == 0 || (int32_t)(iter - p->iter) > 0 || (iter == p->iter && seq + 1 > p->pos)) {
		p->iter = iter;
		p->pos = seq + 1;
	}
}

/* 1 if the rank will not send chunk (iter, seq) any more: its newest chunk
 * is `after` or more beyond seq, or in a later iteration. */
static inline int inart_progress_gone(const struct inart_rank_pos *p, uint32_t iter, uint32_t seq,
				      uint32_t after)
{
	if (p->pos == 0)
		return 0;
	if (p->iter != iter)
		return (int32_t)(p->iter - iter) > 0;
	return p->pos - 1 >= seq + after;
}

#endif
