/* Tests of wire: byte layout, round trips, every decode error, encoder refusals,
 * NACK/probe packets (header only) and the prev word of RESULT packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/wire.h"

static struct inart_wire_hdr sample_hdr(void)
{
	struct inart_wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = INART_F_DATA | INART_F_PARTIAL;
	h.bitmap_words = 2;
	h.scale_exp = -3;
	h.job = 0x01020304;
	h.tree = 0x0506;
	h.fan_in = 70;
	h.label = 0x0a0b0c0d;
	h.iter = 0x11121314;
	h.seq = 0x21222324;
	h.slot = 0x3132;
	h.count = 3;
	h.bitmap[0] = 0x8000000000000001ull;
	h.bitmap[1] = 0x20; /* rank 69 */
	return h;
}

/* The exact bytes of the sample header (docs/wire.md layout). */
static void test_layout(void **state)
{
	struct inart_wire_hdr h = sample_hdr();
	int32_t v[3] = {1, -1, 0x7fffffff};
	uint8_t buf[128];
	static const uint8_t want[] = {
	    0x01, 0x09, 0x02, 0xfd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0x46,
	    0x0a, 0x0b, 0x0c, 0x0d, 0x11, 0x12, 0x13, 0x14, 0x21, 0x22, 0x23, 0x24,
	    0x31, 0x32, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, /* fixed part */
	    0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* bitmap[0] */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, /* bitmap[1] */
	    0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff};
	size_t n;

	(void)state;
	n = inart_wire_encode(&h, v, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(inart_wire_hdr_len(2), 48);
	/* exact capacity works, one byte less does not */
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(want)), sizeof(want));
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(want) - 1), 0);
	/* header-only encoder writes the same header */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(inart_wire_encode_hdr(&h, buf, sizeof(buf)), 48);
	assert_memory_equal(buf, want, 48);
}

static void test_round_trip(void **state)
{
	struct inart_wire_hdr h = sample_hdr(), d;
	int32_t v[3] = {123456, -7, INT32_MIN};
	uint8_t buf[128];
	const uint8_t *pl = NULL;
	size_t n;
	int i;

	(void)state;
	n = inart_wire_encode(&h, v, buf, sizeof(buf));
	assert_true(n > 0);
	memset(&d, 0xaa, sizeof(d));
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
	assert_int_equal(d.version, 1);
	assert_int_equal(d.flags, h.flags);
	assert_int_equal(d.bitmap_words, 2);
	assert_int_equal(d.scale_exp, -3);
	assert_int_equal(d.job, h.job);
	assert_int_equal(d.tree, h.tree);
	assert_int_equal(d.fan_in, 70);
	assert_int_equal(d.label, h.label);
	assert_int_equal(d.iter, h.iter);
	assert_int_equal(d.seq, h.seq);
	assert_int_equal(d.slot, h.slot);
	assert_int_equal(d.count, 3);
	assert_true(d.bitmap[0] == h.bitmap[0] && d.bitmap[1] == h.bitmap[1]);
	for (i = 2; i < INART_WIRE_MAX_BITMAP_WORDS; i++)
		assert_true(d.bitmap[i] == 0); /* zeroed beyond bitmap_words */
	assert_ptr_equal(pl, buf + 48);
	for (i = 0; i < 3; i++) {
		uint32_t x = (uint32_t)pl[4 * i] << 24 | (uint32_t)pl[4 * i + 1] << 16 |
			     (uint32_t)pl[4 * i + 2] << 8 | pl[4 * i + 3];

		assert_int_equal((int32_t)x, v[i]);
	}
	/* version 0 in the struct means "current" */
	h.version = 0;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), n);
	assert_int_equal(buf[0], INART_WIRE_VERSION);
	h.version = 2;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
}

/* Seeded random headers: decode(encode(h)) == h; max-size packets fit the MTU. */
static void test_random_round_trips(void **state)
{
	static uint8_t buf[2048];
	static int32_t v[400];
	unsigned seed = 12345;
	int it, i;

	(void)state;
	srand(seed);
	for (it = 0; it < 2000; it++) {
		struct inart_wire_hdr h, d;
		const uint8_t *pl;
		size_t n;
		int w = 1 + rand() % INART_WIRE_MAX_BITMAP_WORDS;

		memset(&h, 0, sizeof(h));
		h.flags =
		    (uint8_t)((rand() & 1 ? INART_F_DATA : INART_F_RESULT) | ((rand() % 16) << 2));
		h.bitmap_words = (uint8_t)w;
		h.scale_exp = (int8_t)(rand() % 256 - 128);
		h.job = (uint32_t)rand() * 7u;
		h.tree = (uint16_t)rand();
		h.fan_in = (uint16_t)(1 + rand() % (64 * w));
		h.label = (uint32_t)rand();
		h.iter = (uint32_t)rand();
		h.seq = (uint32_t)rand();
		h.slot = (uint16_t)rand();
		h.count = (uint16_t)(rand() % (inart_wire_max_values(w) + 1));
		if (rand() % 4 == 0) { /* a NACK or a probe: header only */
			h.flags |= INART_F_NACK;
			h.count = 0;
		}
		if (h.flags & INART_F_RESULT)
			h.prev = (uint32_t)rand();
		h.bitmap[rand() % ((h.fan_in + 63) / 64)] = 0;
		for (i = 0; i < 1 + rand() % 4; i++) {
			int r = rand() % h.fan_in;

			h.bitmap[r / 64] |= 1ull << (r % 64);
		}
		for (i = 0; i < h.count; i++)
			v[i] = (int32_t)((uint32_t)rand() * 2654435761u);
		n = inart_wire_encode(&h, v, buf, sizeof(buf));
		assert_int_equal(n, inart_wire_hdr_len(w) + 4u * h.count);
		assert_true(n + INART_WIRE_IPUDP_LEN <= INART_WIRE_IP_MTU);
		assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
		h.version = INART_WIRE_VERSION;
		assert_memory_equal(&h.job, &d.job, sizeof(h.job));
		assert_int_equal(d.flags, h.flags);
		assert_int_equal(d.scale_exp, h.scale_exp);
		assert_int_equal(d.fan_in, h.fan_in);
		assert_int_equal(d.count, h.count);
		assert_int_equal(d.slot, h.slot);
		assert_int_equal(d.seq, h.seq);
		assert_int_equal(d.prev, h.prev);
		assert_memory_equal(d.bitmap, h.bitmap, sizeof(h.bitmap));
	}
}

static size_t fresh(uint8_t *buf, size_t cap)
{
	struct inart_wire_hdr h = sample_hdr();
	int32_t v[3] = {1, 2, 3};

	return inart_wire_encode(&h, v, buf, cap);
}

static int dec(const uint8_t *buf, size_t n)
{
	struct inart_wire_hdr d;
	const uint8_t *pl;

	return inart_wire_decode(buf, n, &d, &pl);
}

/* Set buf[i] to b (it stays so), then dec(buf, n). */
static int dec_set(uint8_t *buf, size_t n, size_t i, int b)
{
	buf[i] = (uint8_t)b;
	return dec(buf, n);
}

static void test_decode_errors(void **state)
{
	uint8_t buf[128];
	size_t n = fresh(buf, sizeof(buf)), k;

	(void)state;
	assert_int_equal(dec(buf, n), INART_WIRE_OK);
	/* every truncation fails; lengths below the header are ETRUNC */
	for (k = 0; k < n; k++) {
		int rc = dec(buf, k);

		assert_true(rc != INART_WIRE_OK);
		if (k < 48)
			assert_int_equal(rc, INART_WIRE_ETRUNC);
		else
			assert_int_equal(rc, INART_WIRE_ELENGTH);
	}
	assert_int_equal(inart_wire_decode(NULL, 10, NULL, NULL), INART_WIRE_ETRUNC);
	/* one byte too many */
	assert_int_equal(dec(buf, n + 1), INART_WIRE_ELENGTH);
	/* version */
	assert_int_equal(dec_set(buf, n, 0, 2), INART_WIRE_EVERSION);
	assert_int_equal(dec_set(buf, n, 0, 0), INART_WIRE_EVERSION);
	n = fresh(buf, sizeof(buf));
	/* bitmap_words */
	assert_int_equal(dec_set(buf, n, 2, 0), INART_WIRE_EBITMAP);
	assert_int_equal(dec_set(buf, n, 2, 17), INART_WIRE_EBITMAP);
	/* longer header than the buffer holds after count: length */
	assert_int_equal(dec_set(buf, n, 2, 3), INART_WIRE_ELENGTH);
	/* header longer than the buffer */
	assert_int_equal(dec_set(buf, n, 2, 16), INART_WIRE_ETRUNC);
	n = fresh(buf, sizeof(buf));
	/* count */
	assert_int_equal(dec_set(buf, n, 27, 4), INART_WIRE_ELENGTH);
	assert_int_equal(dec_set(buf, n, 27, 2), INART_WIRE_ELENGTH);
	n = fresh(buf, sizeof(buf));
	/* prev: must be 0 in DATA packets */
	assert_int_equal(dec_set(buf, n, 31, 1), INART_WIRE_ERESERVED);
	buf[31] = 0;
	assert_int_equal(dec_set(buf, n, 28, 0x80), INART_WIRE_ERESERVED);
	n = fresh(buf, sizeof(buf));
	/* flags: neither, both, reserved bit, NACK with values */
	assert_int_equal(dec_set(buf, n, 1, INART_F_PARTIAL), INART_WIRE_EFLAGS);
	assert_int_equal(dec_set(buf, n, 1, INART_F_DATA | INART_F_RESULT), INART_WIRE_EFLAGS);
	assert_int_equal(dec_set(buf, n, 1, INART_F_DATA | INART_F_NACK), INART_WIRE_EFLAGS);
	assert_int_equal(dec_set(buf, n, 1, INART_F_RESULT | INART_F_NACK), INART_WIRE_EFLAGS);
	assert_int_equal(dec_set(buf, n, 1, INART_F_RESULT | 0x80), INART_WIRE_EFLAGS);
	assert_int_equal(
	    dec_set(buf, n, 1, INART_F_RESULT | INART_F_RETX | INART_F_OVERFLOW | INART_F_FALLBACK),
	    INART_WIRE_OK);
	n = fresh(buf, sizeof(buf));
	/* fan_in: 0, above 128 for two words, exactly 128 is fine */
	buf[10] = 0;
	assert_int_equal(dec_set(buf, n, 11, 0), INART_WIRE_EFANIN);
	assert_int_equal(dec_set(buf, n, 11, 129), INART_WIRE_EFANIN);
	assert_int_equal(dec_set(buf, n, 11, 128), INART_WIRE_OK);
	/* bits at ranks >= fan_in: rank 69 is set, fan_in 69 refuses it */
	assert_int_equal(dec_set(buf, n, 11, 69), INART_WIRE_EBITS);
	assert_int_equal(dec_set(buf, n, 11, 70), INART_WIRE_OK);
	/* rank 63 with fan_in 63 */
	n = fresh(buf, sizeof(buf));
	buf[11] = 64;
	/* clear rank 69 */
	assert_int_equal(dec_set(buf, n, 47, 0), INART_WIRE_OK);
	/* bit 63 of word 0 is set */
	assert_int_equal(dec_set(buf, n, 11, 63), INART_WIRE_EBITS);
	/* empty bitmap */
	n = fresh(buf, sizeof(buf));
	memset(buf + 32, 0, 16);
	assert_int_equal(dec(buf, n), INART_WIRE_EBITS);
	/* strerror names every code */
	for (k = 0; k <= 8; k++)
		assert_string_not_equal(inart_wire_strerror(-(int)k), "unknown error");
	assert_string_equal(inart_wire_strerror(-99), "unknown error");
}

/* NACKs and probes carry no values; prev is RESULT-only and round-trips. */
static void test_nack_prev(void **state)
{
	struct inart_wire_hdr h = sample_hdr(), d;
	uint8_t buf[128];
	const uint8_t *pl;
	int32_t v[3] = {1, 2, 3};
	size_t n;

	(void)state;
	/* a probe: DATA|RETX|NACK, no values */
	h.flags = INART_F_DATA | INART_F_RETX | INART_F_NACK;
	h.count = 0;
	n = inart_wire_encode(&h, NULL, buf, sizeof(buf));
	assert_int_equal(n, 48);
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
	assert_int_equal(d.flags, h.flags);
	assert_int_equal(d.count, 0);
	/* with values it is refused both ways */
	h.count = 3;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	/* a NACK from a PS: RESULT|NACK with its round in prev */
	h = sample_hdr();
	h.flags = INART_F_RESULT | INART_F_NACK;
	h.count = 0;
	h.prev = 0x01020304;
	n = inart_wire_encode(&h, NULL, buf, sizeof(buf));
	assert_int_equal(n, 48);
	assert_true(buf[28] == 1 && buf[29] == 2 && buf[30] == 3 && buf[31] == 4);
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
	assert_int_equal(d.prev, 0x01020304);
	/* held (issue 12): the top bit of a NACK's prev, on the wire as is */
	h.prev = INART_WIRE_NACK_HELD | 3;
	n = inart_wire_encode(&h, NULL, buf, sizeof(buf));
	assert_true(buf[28] == 0x80 && buf[29] == 0 && buf[30] == 0 && buf[31] == 3);
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
	assert_true(inart_wire_nack_held(&d));
	assert_int_equal(inart_wire_nack_prev(&d), 3);
	d.prev = 3;
	assert_false(inart_wire_nack_held(&d));
	d.prev = INART_WIRE_NACK_HELD | 3;
	d.flags |= INART_F_STALE; /* a step notice's prev is a step: never held */
	assert_false(inart_wire_nack_held(&d));
	/* a result names the one sent before it */
	h.flags = INART_F_RESULT;
	h.count = 3;
	h.prev = 77;
	n = inart_wire_encode(&h, v, buf, sizeof(buf));
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_OK);
	assert_int_equal(d.prev, 77);
	/* prev in a DATA packet is refused both ways */
	h.flags = INART_F_DATA;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h.prev = 0;
	n = inart_wire_encode(&h, v, buf, sizeof(buf));
	buf[30] = 1;
	assert_int_equal(inart_wire_decode(buf, n, &d, &pl), INART_WIRE_ERESERVED);
}

static void test_encode_refusals(void **state)
{
	struct inart_wire_hdr h;
	int32_t v[3] = {0};
	uint8_t buf[128];

	(void)state;
	h = sample_hdr();
	h.bitmap_words = 0;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.bitmap_words = 17;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.flags = INART_F_DATA | INART_F_RESULT;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.flags = 0x40 | INART_F_DATA;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.fan_in = 0;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.fan_in = 200;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.fan_in = 69;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	h.bitmap[0] = h.bitmap[1] = 0;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 0);
	h = sample_hdr();
	assert_int_equal(inart_wire_encode(&h, NULL, buf, sizeof(buf)), 0);
	h.count = 0;
	assert_int_equal(inart_wire_encode(&h, NULL, buf, sizeof(buf)), 48);
	/* bits in words beyond bitmap_words are ignored */
	h = sample_hdr();
	h.bitmap[5] = 0xff;
	assert_int_equal(inart_wire_encode(&h, v, buf, sizeof(buf)), 60);
	assert_int_equal(inart_wire_max_values(1), (1500 - 28 - 40) / 4);
	assert_int_equal(inart_wire_max_values(16), (1500 - 28 - 160) / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_random_round_trips),
	    cmocka_unit_test(test_decode_errors),
	    cmocka_unit_test(test_encode_refusals),
	    cmocka_unit_test(test_nack_prev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
