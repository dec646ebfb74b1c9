/*
 * shaper: token-bucket egress shaping of one port (see shaper.h).  Tokens
 * are kept in 1e-9 bit: rate_bps of them accrue per nanosecond, a byte is
 * 8e9 of them; the FIFO's frames are packed in chunks, each frame a 2-byte
 * length and its bytes, 8-byte aligned.
 */
#include "dp/shaper.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define TOK_PER_BYTE 8000000000ll /* 1e-9 bit */
#define CHUNK_BYTES (65536 - 2 * sizeof(void *))
#define FULL_FRAME 1514u

struct chunk {
	struct chunk *next;
	uint32_t rd, wr; /* entries in [rd, wr) */
	uint8_t data[CHUNK_BYTES];
};

struct inart_shaper {
	struct inart_shaper_cfg cfg;
	int64_t tokens, bmax; /* tokens <= bmax; below 0 only by a frame's excess over the burst */
	uint64_t last_ns;
	struct chunk *head, *tail, *free; /* FIFO oldest .. newest; spare chunks */
	struct inart_shaper_stats st;
};

static uint32_t clamp_size(double b)
{
	return b > INART_SHAPER_SIZE_MAX ? INART_SHAPER_SIZE_MAX : (uint32_t)b;
}

uint32_t inart_shaper_default_burst(uint64_t rate_bps)
{
	double b = (double)rate_bps / 8 * 4e-3;

	return b < 2 * FULL_FRAME ? 2 * FULL_FRAME : clamp_size(b);
}

uint32_t inart_shaper_default_limit(uint64_t rate_bps)
{
	double b = (double)rate_bps / 8 * 0.2;

	return b < 65536 ? 65536 : clamp_size(b);
}

static struct chunk *take_chunk(struct inart_shaper *sh)
{
	struct chunk *c = sh->free;

	if (c != NULL)
		sh->free = c->next;
	else if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	else
		sh->st.chunks++;
	c->next = NULL;
	c->rd = c->wr = 0;
	return c;
}

struct inart_shaper *inart_shaper_create(const struct inart_shaper_cfg *cfg, uint64_t now_ns)
{
	struct inart_shaper *sh;
	struct inart_shaper_cfg c = *cfg;

	if (c.rate_bps < 1 || c.rate_bps > INART_SHAPER_RATE_MAX ||
	    c.burst > INART_SHAPER_SIZE_MAX || c.limit > INART_SHAPER_SIZE_MAX)
		return inart_null_errno(EINVAL);
	if (c.burst == 0)
		c.burst = inart_shaper_default_burst(c.rate_bps);
	if (c.limit == 0)
		c.limit = inart_shaper_default_limit(c.rate_bps);
	sh = calloc(1, sizeof(*sh));
	if (sh == NULL)
		return NULL;
	sh->cfg = c;
	sh->bmax = (int64_t)c.burst * TOK_PER_BYTE;
	sh->tokens = sh->bmax; /* full at start */
	sh->last_ns = now_ns;
	sh->free = take_chunk(sh);
	if (sh->free == NULL) {
		free(sh);
		return NULL;
	}
	return sh;
}

static void free_chunks(struct chunk *c)
{
	while (c != NULL) {
		struct chunk *n = c->next;

		free(c);
		c = n;
	}
}

void inart_shaper_destroy(struct inart_shaper *sh)
{
	if (sh == NULL)
		return;
	free_chunks(sh->head);
	free_chunks(sh->free);
	free(sh);
}

static void refill(struct inart_shaper *sh, uint64_t now)
{
	uint64_t dt, rate = sh->cfg.rate_bps;

	if (now <= sh->last_ns)
		return;
	dt = now - sh->last_ns;
	sh->last_ns = now;
	/* (bmax - tokens) / rate ns fill the bucket: no overflow below that */
	if (dt >= (uint64_t)(sh->bmax - sh->tokens) / rate + 1)
		sh->tokens = sh->bmax;
	else if ((sh->tokens += (int64_t)(dt * rate)) > sh->bmax)
		sh->tokens = sh->bmax;
}

/* Tokens a frame of len bytes needs in the bucket to be granted. */
static int64_t need(const struct inart_shaper *sh, size_t len)
{
	return (int64_t)(len < sh->cfg.burst ? len : sh->cfg.burst) * TOK_PER_BYTE;
}

static uint64_t ready_len(const struct inart_shaper *sh, size_t len)
{
	int64_t miss = need(sh, len) - sh->tokens;
	uint64_t rate = sh->cfg.rate_bps;

	if (miss <= 0) { /* ready since the tokens passed need (for the slack) */
		uint64_t ago = (uint64_t)-miss / rate;

		return ago < sh->last_ns ? sh->last_ns - ago : 0;
	}
	return sh->last_ns + ((uint64_t)miss + rate - 1) / rate;
}

static size_t entry_size(size_t len)
{
	return (2 + len + 7) & ~(size_t)7;
}

static uint16_t head_len(const struct inart_shaper *sh)
{
	uint16_t len;

	memcpy(&len, sh->head->data + sh->head->rd, sizeof(len));
	return len;
}

static enum inart_shaper_verdict drop(struct inart_shaper *sh, size_t len)
{
	sh->st.drops++;
	sh->st.drop_bytes += len;
	return INART_SHAPER_DROP;
}

/* Copy the frame to the FIFO's tail: 0, or -ENOMEM. */
static int push(struct inart_shaper *sh, const uint8_t *frame, size_t len)
{
	size_t e = entry_size(len);
	uint16_t l16 = (uint16_t)len;
	struct chunk *t = sh->tail;

	if (t == NULL || t->wr + e > CHUNK_BYTES) {
		struct chunk *c = take_chunk(sh);

		if (c == NULL)
			return -ENOMEM;
		if (t == NULL)
			sh->head = c;
		else
			t->next = c;
		sh->tail = t = c;
	}
	memcpy(t->data + t->wr, &l16, sizeof(l16));
	memcpy(t->data + t->wr + 2, frame, len);
	t->wr += (uint32_t)e;
	sh->st.queued++;
	sh->st.queued_bytes += len;
	if (sh->st.queued_bytes > sh->st.max_queued_bytes)
		sh->st.max_queued_bytes = sh->st.queued_bytes;
	return 0;
}

static void grant(struct inart_shaper *sh, size_t len)
{
	sh->tokens -= (int64_t)len * TOK_PER_BYTE;
	sh->st.tx_pkts++;
	sh->st.tx_bytes += len;
}

enum inart_shaper_verdict inart_shaper_offer(struct inart_shaper *sh, const uint8_t *frame,
					     size_t len, uint64_t now_ns)
{
	if (len == 0 || len > INART_SHAPER_FRAME_MAX)
		return drop(sh, len);
	refill(sh, now_ns);
	if (sh->st.queued == 0 && sh->tokens >= need(sh, len)) {
		grant(sh, len);
		return INART_SHAPER_SEND;
	}
	if (sh->st.queued_bytes + len > sh->cfg.limit || push(sh, frame, len) < 0)
		return drop(sh, len);
	return INART_SHAPER_HELD;
}

int inart_shaper_next(struct inart_shaper *sh, uint64_t now_ns, const uint8_t **frame,
		      uint16_t *len)
{
	struct chunk *c = sh->head;
	uint16_t l;

	if (c == NULL)
		return 0;
	refill(sh, now_ns);
	l = head_len(sh);
	if (sh->tokens < need(sh, l))
		return 0;
	grant(sh, l);
	sh->st.held_pkts++;
	sh->st.queued--;
	sh->st.queued_bytes -= l;
	*frame = c->data + c->rd + 2;
	*len = l;
	c->rd += (uint32_t)entry_size(l);
	if (c->rd == c->wr) { /* emptied: spare (its bytes stay until reused) */
		sh->head = c->next;
		if (sh->head == NULL)
			sh->tail = NULL;
		c->next = sh->free;
		sh->free = c;
	}
	return 1;
}

uint64_t inart_shaper_ready_at(const struct inart_shaper *sh)
{
	return sh->head == NULL ? UINT64_MAX : ready_len(sh, head_len(sh));
}

uint64_t inart_shaper_deadline(const struct inart_shaper *sh)
{
	uint64_t r, room;

	if (sh->head == NULL)
		return UINT64_MAX;
	r = ready_len(sh, head_len(sh));
	/* tokens accrue past the grant up to half the bucket's room (the other
	   half for a late wake-up), no further */
	room = (uint64_t)(sh->bmax - need(sh, head_len(sh))) / sh->cfg.rate_bps / 2;
	return r + (sh->cfg.slack_ns < room ? sh->cfg.slack_ns : room);
}

void inart_shaper_stats(const struct inart_shaper *sh, struct inart_shaper_stats *st)
{
	*st = sh->st;
}

void inart_shaper_cfg_of(const struct inart_shaper *sh, struct inart_shaper_cfg *cfg)
{
	*cfg = sh->cfg;
}
