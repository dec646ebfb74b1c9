/*
 * wire: decoding and encoding of the InArt INA header (layout in wire.h and
 * docs/wire.md).
 *
 * Invariants: decode reads only inside [buf, buf + len) and accepts exactly
 * the headers encode can produce, so decode -> encode -> decode is the
 * identity on accepted input; words of h->bitmap beyond bitmap_words are
 * zeroed by decode.  Encode refuses (returns 0) any header decode would
 * refuse.  No allocation, no I/O.
 */
#include "dp/wire.h"

#include <stddef.h>
#include <string.h>

#include "dp/bytes.h"

#define FLAGS_KNOWN                                                                                \
	(INART_F_DATA | INART_F_RESULT | INART_F_RETX | INART_F_PARTIAL | INART_F_FALLBACK |       \
	 INART_F_OVERFLOW | INART_F_NACK | INART_F_STALE)

static int check_flags(uint8_t flags)
{
	unsigned dr = flags & (INART_F_DATA | INART_F_RESULT);

	if ((flags & ~FLAGS_KNOWN) != 0 || (dr != INART_F_DATA && dr != INART_F_RESULT))
		return INART_WIRE_EFLAGS;
	if ((flags & INART_F_STALE) && dr != INART_F_RESULT)
		return INART_WIRE_EFLAGS;
	return INART_WIRE_OK;
}

/* Bitmap non-empty and no bit at a rank >= fan_in (fan_in already checked
 * to be within 1..64 * words). */
static int check_bits(const uint64_t *bm, int words, unsigned fan_in)
{
	uint64_t any = 0;
	int i;

	for (i = 0; i < words; i++) {
		unsigned lo = 64u * (unsigned)i;
		uint64_t allowed;

		if (fan_in <= lo)
			allowed = 0;
		else if (fan_in - lo >= 64)
			allowed = ~(uint64_t)0;
		else
			allowed = ((uint64_t)1 << (fan_in - lo)) - 1;
		if (bm[i] & ~allowed)
			return INART_WIRE_EBITS;
		any |= bm[i];
	}
	return any ? INART_WIRE_OK : INART_WIRE_EBITS;
}

int inart_wire_decode(const uint8_t *buf, size_t len, struct inart_wire_hdr *h,
		      const uint8_t **payload)
{
	size_t hl;
	int i, rc;

	if (buf == NULL || len < INART_WIRE_FIXED_LEN)
		return INART_WIRE_ETRUNC;
	if (buf[0] != INART_WIRE_VERSION)
		return INART_WIRE_EVERSION;
	if (buf[2] < 1 || buf[2] > INART_WIRE_MAX_BITMAP_WORDS)
		return INART_WIRE_EBITMAP;
	hl = inart_wire_hdr_len(buf[2]);
	if (len < hl)
		return INART_WIRE_ETRUNC;
	rc = check_flags(buf[1]);
	if (rc != INART_WIRE_OK)
		return rc;
	if (!(buf[1] & INART_F_RESULT) && inart_get_be32(buf + 28) != 0)
		return INART_WIRE_ERESERVED;
	h->version = buf[0];
	h->flags = buf[1];
	h->bitmap_words = buf[2];
	h->scale_exp = (int8_t)buf[3];
	h->job = inart_get_be32(buf + 4);
	h->tree = inart_get_be16(buf + 8);
	h->fan_in = inart_get_be16(buf + 10);
	h->label = inart_get_be32(buf + 12);
	h->iter = inart_get_be32(buf + 16);
	h->seq = inart_get_be32(buf + 20);
	h->slot = inart_get_be16(buf + 24);
	h->count = inart_get_be16(buf + 26);
	h->prev = inart_get_be32(buf + 28);
	if (len != hl + 4 * (size_t)h->count)
		return INART_WIRE_ELENGTH;
	if (h->fan_in == 0 || h->fan_in > 64u * h->bitmap_words)
		return INART_WIRE_EFANIN;
	if ((h->flags & (INART_F_NACK | INART_F_STALE)) && h->count != 0)
		return INART_WIRE_EFLAGS;
	for (i = 0; i < INART_WIRE_MAX_BITMAP_WORDS; i++)
		h->bitmap[i] =
		    i < h->bitmap_words ? inart_get_be64(buf + INART_WIRE_FIXED_LEN + 8 * i) : 0;
	rc = check_bits(h->bitmap, h->bitmap_words, h->fan_in);
	if (rc != INART_WIRE_OK)
		return rc;
	if (payload != NULL)
		*payload = buf + hl;
	return INART_WIRE_OK;
}

/* Checks shared by both encoders; the header length or 0. */
static size_t encode_hdr(const struct inart_wire_hdr *h, uint8_t *buf, size_t cap)
{
	size_t hl;
	int i;

	if (h == NULL || buf == NULL)
		return 0;
	if (h->version != 0 && h->version != INART_WIRE_VERSION)
		return 0;
	if (h->bitmap_words < 1 || h->bitmap_words > INART_WIRE_MAX_BITMAP_WORDS)
		return 0;
	if (check_flags(h->flags) != INART_WIRE_OK)
		return 0;
	if ((h->flags & (INART_F_NACK | INART_F_STALE)) && h->count != 0)
		return 0;
	if (!(h->flags & INART_F_RESULT) && h->prev != 0)
		return 0;
	if (h->fan_in == 0 || h->fan_in > 64u * h->bitmap_words)
		return 0;
	if (check_bits(h->bitmap, h->bitmap_words, h->fan_in) != INART_WIRE_OK)
		return 0;
	hl = inart_wire_hdr_len(h->bitmap_words);
	if (hl > cap)
		return 0;
	buf[0] = INART_WIRE_VERSION;
	buf[1] = h->flags;
	buf[2] = h->bitmap_words;
	buf[3] = (uint8_t)h->scale_exp;
	inart_put_be32(buf + 4, h->job);
	inart_put_be16(buf + 8, h->tree);
	inart_put_be16(buf + 10, h->fan_in);
	inart_put_be32(buf + 12, h->label);
	inart_put_be32(buf + 16, h->iter);
	inart_put_be32(buf + 20, h->seq);
	inart_put_be16(buf + 24, h->slot);
	inart_put_be16(buf + 26, h->count);
	inart_put_be32(buf + 28, h->prev);
	for (i = 0; i < h->bitmap_words; i++)
		inart_put_be64(buf + INART_WIRE_FIXED_LEN + 8 * i, h->bitmap[i]);
	return hl;
}

size_t inart_wire_encode_hdr(const struct inart_wire_hdr *h, uint8_t *buf, size_t cap)
{
	return encode_hdr(h, buf, cap);
}

size_t inart_wire_encode(const struct inart_wire_hdr *h, const int32_t *values, uint8_t *buf,
			 size_t cap)
{
	size_t hl;
	int i;

	if (h == NULL || (h->count > 0 && values == NULL))
		return 0;
	if (inart_wire_hdr_len(h->bitmap_words < 1 ? 1 : h->bitmap_words) + 4 * (size_t)h->count >
	    cap)
		return 0;
	hl = encode_hdr(h, buf, cap);
	if (hl == 0)
		return 0;
	for (i = 0; i < h->count; i++)
		inart_put_be32(buf + hl + 4 * (size_t)i, (uint32_t)values[i]);
	return hl + 4 * (size_t)h->count;
}

const char *inart_wire_strerror(int code)
{
	switch (code) {
	case INART_WIRE_OK:
		return "ok";
	case INART_WIRE_ETRUNC:
		return "truncated header";
	case INART_WIRE_EVERSION:
		return "unknown version";
	case INART_WIRE_EBITMAP:
		return "bitmap_words out of range";
	case INART_WIRE_ELENGTH:
		return "length does not match count";
	case INART_WIRE_EFANIN:
		return "fan_in out of range";
	case INART_WIRE_EBITS:
		return "bitmap empty or bits at ranks >= fan_in";
	case INART_WIRE_EFLAGS:
		return "bad flags";
	case INART_WIRE_ERESERVED:
		return "prev not 0 in a DATA packet";
	default:
		return "unknown error";
	}
}

/* ---- ring all-reduce packets (wire.h) ---- */

/* The multi-byte fields of the ring header: wire offset, size, place in
 * struct inart_wire_ring (the one-byte ones and reserved bytes are apart). */
static const struct {
	uint8_t off, size;
	uint8_t field;
} ring_fields[] = {
    {4, 4, offsetof(struct inart_wire_ring, job)},
    {8, 2, offsetof(struct inart_wire_ring, from)},
    {10, 2, offsetof(struct inart_wire_ring, size)},
    {12, 4, offsetof(struct inart_wire_ring, iter)},
    {16, 4, offsetof(struct inart_wire_ring, seq)},
    {20, 2, offsetof(struct inart_wire_ring, count)},
    {24, 8, offsetof(struct inart_wire_ring, sack)},
};
#define N_RING_FIELDS ((int)(sizeof(ring_fields) / sizeof(ring_fields[0])))

/* Copy field i between the wire (big-endian) and the struct, either way. */
static void ring_field(int i, uint8_t *wire, struct inart_wire_ring *h, int to_wire)
{
	uint8_t *f = (uint8_t *)h + ring_fields[i].field;
	uint64_t v = 0;
	int n = ring_fields[i].size;

	if (to_wire) {
		uint16_t v16;
		uint32_t v32;

		if (n == 2)
			memcpy(&v16, f, 2), v = v16;
		else if (n == 4)
			memcpy(&v32, f, 4), v = v32;
		else
			memcpy(&v, f, 8);
		for (int b = 0; b < n; b++)
			wire[ring_fields[i].off + b] = (uint8_t)(v >> (8 * (n - 1 - b)));
		return;
	}
	for (int b = 0; b < n; b++)
		v = v << 8 | wire[ring_fields[i].off + b];
	if (n == 2)
		*(uint16_t *)(void *)f = (uint16_t)v;
	else if (n == 4)
		*(uint32_t *)(void *)f = (uint32_t)v;
	else
		*(uint64_t *)(void *)f = v;
}

static int ring_check(const struct inart_wire_ring *h, size_t len)
{
	if (h->type == INART_RING_T_DATA) {
		if (h->flags & ~INART_RING_F_RETX)
			return INART_WIRE_EFLAGS;
		if (h->count == 0 || len != INART_WIRE_RING_HDR_LEN + 4 * (size_t)h->count)
			return INART_WIRE_ELENGTH;
		if (h->sack != 0)
			return INART_WIRE_ERESERVED;
	} else if (h->type == INART_RING_T_ACK) {
		if (h->flags & ~INART_RING_F_DONE)
			return INART_WIRE_EFLAGS;
		if (h->count != 0 || len != INART_WIRE_RING_HDR_LEN)
			return INART_WIRE_ELENGTH;
	} else {
		return INART_WIRE_EFLAGS;
	}
	if (h->size == 0 || h->from >= h->size)
		return INART_WIRE_EFANIN;
	return INART_WIRE_OK;
}

int inart_wire_ring_decode(const uint8_t *buf, size_t len, struct inart_wire_ring *h,
			   const uint8_t **payload)
{
	memset(h, 0, sizeof(*h));
	if (len < INART_WIRE_RING_HDR_LEN)
		return INART_WIRE_ETRUNC;
	if (buf[0] != INART_WIRE_RING_VERSION)
		return INART_WIRE_EVERSION;
	if (buf[3] != 0 || inart_get_be16(buf + 22) != 0)
		return INART_WIRE_ERESERVED;
	h->type = buf[1];
	h->flags = buf[2];
	for (int i = 0; i < N_RING_FIELDS; i++)
		ring_field(i, (uint8_t *)buf, h, 0);
	if (payload != NULL)
		*payload = buf + INART_WIRE_RING_HDR_LEN;
	return ring_check(h, len);
}

size_t inart_wire_ring_encode(const struct inart_wire_ring *h, const float *values, uint8_t *buf,
			      size_t cap)
{
	size_t len;

	if (h == NULL || (h->count > 0 && values == NULL))
		return 0;
	len = INART_WIRE_RING_HDR_LEN + 4 * (size_t)h->count;
	if (len > cap || ring_check(h, len) != INART_WIRE_OK)
		return 0;
	buf[0] = INART_WIRE_RING_VERSION;
	buf[1] = h->type;
	buf[2] = h->flags;
	buf[3] = 0;
	buf[22] = buf[23] = 0;
	for (int i = 0; i < N_RING_FIELDS; i++)
		ring_field(i, buf, (struct inart_wire_ring *)h, 1);
	for (int i = 0; i < h->count; i++) {
		uint32_t u;

		memcpy(&u, &values[i], 4);
		inart_put_be32(buf + INART_WIRE_RING_HDR_LEN + 4 * (size_t)i, u);
	}
	return len;
}
