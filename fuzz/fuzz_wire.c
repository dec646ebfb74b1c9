/*
 * fuzz_wire: libFuzzer target for the INA header decoder.  Every input must
 * decode without reading outside the buffer; an accepted input must encode
 * back to exactly the same bytes (the format has no slack: version, reserved
 * field and lengths are fixed by the fields), and decode again to the same
 * header.  The same input goes through the ring packet decoder (a
 * separate format, wire.h "ring all-reduce packets") with the same checks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_wire: %s\n", what);
	abort();
}

/* The ring packet decoder: no overread, encode(decode(x)) == x. */
static void ring_case(const uint8_t *buf, size_t size)
{
	static uint8_t out[65536 + 256];
	static float vals[65536];
	struct inart_wire_ring h, h2;
	const uint8_t *pl;
	size_t n;
	int rc = inart_wire_ring_decode(buf, size, &h, &pl);

	if (rc != INART_WIRE_OK) {
		if (rc > 0 || rc < INART_WIRE_ERESERVED)
			die("ring: unknown error code");
		return;
	}
	if (pl != buf + INART_WIRE_RING_HDR_LEN ||
	    size != INART_WIRE_RING_HDR_LEN + 4 * (size_t)h.count)
		die("ring: payload position or length inconsistent");
	for (size_t i = 0; i < h.count; i++) {
		uint32_t u = (uint32_t)pl[4 * i] << 24 | (uint32_t)pl[4 * i + 1] << 16 |
			     (uint32_t)pl[4 * i + 2] << 8 | pl[4 * i + 3];

		memcpy(&vals[i], &u, 4);
	}
	n = inart_wire_ring_encode(&h, vals, out, sizeof(out));
	if (n != size || memcmp(out, buf, size) != 0)
		die("ring: encode(decode(x)) != x");
	if (inart_wire_ring_encode(&h, vals, out, size - 1) != 0)
		die("ring: encode ignored the capacity");
	if (inart_wire_ring_decode(out, n, &h2, NULL) != INART_WIRE_OK ||
	    memcmp(&h, &h2, sizeof(h)) != 0)
		die("ring: decode(encode(h)) != h");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 256];
	static int32_t vals[65536];
	struct inart_wire_hdr h, h2;
	const uint8_t *pl, *pl2;
	size_t n, i;
	int rc;

	/* an exact-size heap copy so that AddressSanitizer sees any overread */
	uint8_t *buf = malloc(size ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	ring_case(buf, size);
	rc = inart_wire_decode(buf, size, &h, &pl);
	if (rc != INART_WIRE_OK) {
		if (rc > 0 || rc < INART_WIRE_ERESERVED)
			die("unknown error code");
		free(buf);
		return 0;
	}
	if (pl != buf + inart_wire_hdr_len(h.bitmap_words) ||
	    size != inart_wire_hdr_len(h.bitmap_words) + 4 * (size_t)h.count)
		die("payload position or length inconsistent");
	for (i = 0; i < h.count; i++)
		vals[i] = (int32_t)((uint32_t)pl[4 * i] << 24 | (uint32_t)pl[4 * i + 1] << 16 |
				    (uint32_t)pl[4 * i + 2] << 8 | pl[4 * i + 3]);
	n = inart_wire_encode(&h, vals, out, sizeof(out));
	if (n != size || memcmp(out, buf, size) != 0)
		die("encode(decode(x)) != x");
	if (inart_wire_encode(&h, vals, out, size - 1) != 0)
		die("encode ignored the capacity");
	if (inart_wire_decode(out, n, &h2, &pl2) != INART_WIRE_OK ||
	    memcmp(&h.job, &h2.job, sizeof(h.job)) != 0 ||
	    memcmp(h.bitmap, h2.bitmap, sizeof(h.bitmap)) != 0 || h.flags != h2.flags ||
	    h.count != h2.count || h.fan_in != h2.fan_in || h.label != h2.label ||
	    h.seq != h2.seq || h.iter != h2.iter || h.slot != h2.slot ||
	    h.scale_exp != h2.scale_exp || h.tree != h2.tree)
		die("decode(encode(h)) != h");
	free(buf);
	return 0;
}
