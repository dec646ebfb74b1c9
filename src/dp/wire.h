/*
 * wire: the InArt INA header, carried in UDP/IPv4 (docs/wire.md has the
 * byte-by-byte layout).  Workers and PSs use ordinary UDP sockets on port
 * INART_WIRE_UDP_PORT; switches recognize the port and aggregate.
 *
 * Layout (network byte order), 32 fixed bytes, then the contributor bitmap
 * (bitmap_words 64-bit words), then `count` int32 values:
 *    0 u8  version (INART_WIRE_VERSION)
 *    1 u8  flags (INART_F_*)
 *    2 u8  bitmap_words (1..INART_WIRE_MAX_BITMAP_WORDS)
 *    3 i8  scale_exp: values are round(x * 2^scale_exp)
 *    4 u32 job
 *    8 u16 tree (the PS shard of the job)
 *   10 u16 fan_in (contributors of the whole tree: the job's workers)
 *   12 u32 label (route label; 0 = none, route by IPv4 destination)
 *   16 u32 iter (all-reduce number)
 *   20 u32 seq (chunk number within the tree's shard)
 *   24 u16 slot (aggregator slot within the tree's region at a switch)
 *   26 u16 count (int32 values in the payload)
 *   28 u32 prev: RESULT from a PS: 1 + seq of the result it sent down the
 *          tree before this one (same tree and iter; 0: none); a step notice
 *          (STALE): the step to resynchronise to; DATA: 0; a NACK: its round
 *          or chain head, top bit INART_WIRE_NACK_HELD (below)
 *   32 u64 bitmap[bitmap_words]: bit r = worker rank r contributed
 *   .. i32 values[count]
 * Contributors are the job's worker ranks, so exactly-once is a bitmap
 * disjointness check at every aggregation point and at the PS.
 *
 * inart_wire_decode never trusts a length: it checks every field against the
 * buffer and returns a reason code that callers count.
 */
#ifndef INART_WIRE_H
#define INART_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define INART_WIRE_VERSION 1
#define INART_WIRE_UDP_PORT 47470
#define INART_WIRE_FIXED_LEN 32
#define INART_WIRE_MAX_BITMAP_WORDS 16 /* 1024 contributors */
#define INART_WIRE_MAX_CONTRIB (64 * INART_WIRE_MAX_BITMAP_WORDS)
#define INART_WIRE_IP_MTU 1500
#define INART_WIRE_IPUDP_LEN 28 /* IPv4 header without options + UDP header */

enum inart_wire_flag {
	INART_F_DATA = 0x01,	 /* a contribution travelling towards the PS */
	INART_F_RESULT = 0x02,	 /* the aggregated result travelling back */
	INART_F_RETX = 0x04,	 /* retransmission: never aggregated in switches */
	INART_F_PARTIAL = 0x08,	 /* aggregate flushed before all contributors came */
	INART_F_FALLBACK = 0x10, /* forwarded unaggregated: the switch's pool was busy */
	INART_F_OVERFLOW = 0x20, /* an int32 sum overflowed: rescale and resend */
	INART_F_NACK = 0x40,	 /* header only (count 0): RESULT|NACK from a PS names in its
				    bitmap the ranks whose contributions it misses (they
				    retransmit); DATA|RETX|NACK from a worker is a probe
				    (bitmap: its rank) answered with the result or a NACK */
	INART_F_STALE = 0x80,	 /* RESULT only, header only (count 0): a step notice from a
				    PS: the receiver's all-reduce number `iter` cannot
				    complete (the tree moved past it, or has not reached it);
				    `prev` = the step to resynchronise to (docs/wire.md) */
};

struct inart_wire_hdr {
	uint8_t version, flags, bitmap_words;
	int8_t scale_exp;
	uint32_t job;
	uint16_t tree, fan_in;
	uint32_t label, iter, seq;
	uint16_t slot, count;
	uint32_t prev; /* RESULT only: 1 + seq of the previous result sent down, 0 */
	uint64_t bitmap[INART_WIRE_MAX_BITMAP_WORDS];
};

enum inart_wire_err {
	INART_WIRE_OK = 0,
	INART_WIRE_ETRUNC = -1,	   /* shorter than the header says */
	INART_WIRE_EVERSION = -2,  /* unknown version */
	INART_WIRE_EBITMAP = -3,   /* bitmap_words out of range */
	INART_WIRE_ELENGTH = -4,   /* length does not match count */
	INART_WIRE_EFANIN = -5,	   /* fan_in 0 or above the bitmap's width */
	INART_WIRE_EBITS = -6,	   /* bitmap empty or bits at ranks >= fan_in */
	INART_WIRE_EFLAGS = -7,	   /* neither/both DATA and RESULT, STALE without RESULT,
				      NACK or STALE with values */
	INART_WIRE_ERESERVED = -8, /* prev not 0 in a DATA packet */
};

/* Header length for a bitmap width; total length adds 4 * count. */
static inline size_t inart_wire_hdr_len(int bitmap_words)
{
	return INART_WIRE_FIXED_LEN + 8 * (size_t)bitmap_words;
}

/* Most values that fit one packet within the IP MTU. */
static inline int inart_wire_max_values(int bitmap_words)
{
	return (int)((INART_WIRE_IP_MTU - INART_WIRE_IPUDP_LEN - inart_wire_hdr_len(bitmap_words)) /
		     4);
}

/* ---- Recovery: held NACKs (issue 12).  In a NACK from a PS (RESULT|NACK,
 * not STALE) the top bit of `prev` tells a loss shown from a value perhaps
 * only delayed: set, the ranks named are missing at the PS but nothing shows
 * that their contributions were lost (no later chunk of theirs arrived: they
 * may still be held in a switch's slot, a queue or a stalled process); clear,
 * every rank named is shown lost (docs/wire.md, Loss recovery).  The rest of
 * `prev` keeps its meaning (a multicast NACK's round, a probe answer's chain
 * head); a receiver built before reads a held NACK as an ordinary one. ---- */
#define INART_WIRE_NACK_HELD 0x80000000u

/* 1 if h is a PS's NACK marked held. */
static inline int inart_wire_nack_held(const struct inart_wire_hdr *h)
{
	return (h->flags & (INART_F_RESULT | INART_F_NACK | INART_F_STALE)) ==
		   (INART_F_RESULT | INART_F_NACK) &&
	       (h->prev & INART_WIRE_NACK_HELD) != 0;
}

/* The `prev` of h without the held mark (a NACK's round or chain head). */
static inline uint32_t inart_wire_nack_prev(const struct inart_wire_hdr *h)
{
	return (h->flags & INART_F_NACK) ? h->prev & ~INART_WIRE_NACK_HELD : h->prev;
}
/* ---- end of held NACKs ---- */

/* Decode and check a UDP payload.  On success *payload points at the
 * big-endian int32 values inside buf.  Returns INART_WIRE_OK or a reason. */
int inart_wire_decode(const uint8_t *buf, size_t len, struct inart_wire_hdr *h,
		      const uint8_t **payload);

/* Encode header + values (host order, converted here) into buf.  Returns the
 * length written, or 0 if cap is too small or the header is inconsistent
 * (any header inart_wire_decode would refuse).  h->version may be 0 or
 * INART_WIRE_VERSION; the current version is always written.  Words of
 * h->bitmap beyond bitmap_words are ignored. */
size_t inart_wire_encode(const struct inart_wire_hdr *h, const int32_t *values, uint8_t *buf,
			 size_t cap);

/* Encode only the header (fixed part and bitmap, count as in h) into buf,
 * for callers that write the big-endian payload themselves right after it.
 * Same checks as inart_wire_encode.  Returns the header length or 0. */
size_t inart_wire_encode_hdr(const struct inart_wire_hdr *h, uint8_t *buf, size_t cap);

/* Human-readable reason for a decode error (for counters and logs). */
const char *inart_wire_strerror(int code);

/* ---- ring all-reduce packets (dp/ring; docs/wire.md, "Ring all-reduce") ----
 *
 * A job planned as a ring all-reduce has no PS and no INA: its workers send
 * float32 partial sums to their ring successor and acknowledgements back to
 * their predecessor, over UDP port INART_WIRE_RING_PORT, which switches
 * route by IPv4 like any UDP (never aggregated).  Layout (network byte
 * order), 32 fixed bytes, then `count` float32 values (IEEE bits, big-endian):
 *    0 u8  version (INART_WIRE_RING_VERSION)
 *    1 u8  type (INART_RING_T_DATA, INART_RING_T_ACK)
 *    2 u8  flags (INART_RING_F_*)
 *    3 u8  0
 *    4 u32 job
 *    8 u16 from: ring position of the sender
 *   10 u16 size: workers in the ring (from < size)
 *   12 u32 iter: the all-reduce's step
 *   16 u32 seq: DATA: the message number; ACK: every message below it arrived
 *   20 u16 count: DATA: values (>= 1); ACK: 0
 *   22 u16 0
 *   24 u64 sack: ACK: bit i = message seq + 1 + i arrived; DATA: 0
 *   32 f32 values[count]
 */
#define INART_WIRE_RING_VERSION 1
#define INART_WIRE_RING_PORT 47471
#define INART_WIRE_RING_HDR_LEN 32
#define INART_WIRE_RING_MAX_VALUES                                                                 \
	((INART_WIRE_IP_MTU - INART_WIRE_IPUDP_LEN - INART_WIRE_RING_HDR_LEN) / 4) /* 360 */

enum inart_ring_type {
	INART_RING_T_DATA = 1, /* values of one message, to the ring successor */
	INART_RING_T_ACK = 2,  /* cumulative + selective acknowledgement, to the predecessor */
};

enum inart_ring_flag {
	INART_RING_F_RETX = 0x01, /* DATA: sent again (no time sample from its ACK) */
	INART_RING_F_DONE = 0x02, /* ACK: the sender holds every message of `iter` */
};

struct inart_wire_ring {
	uint8_t type, flags;
	uint32_t job;
	uint16_t from, size;
	uint32_t iter, seq;
	uint16_t count;
	uint64_t sack;
};

/* Decode and check a ring packet (UDP payload).  On success *payload points
 * at the big-endian float32 values inside buf.  INART_WIRE_OK or a reason:
 * ETRUNC (shorter than the header), EVERSION, EFLAGS (unknown type or flag,
 * DONE on DATA, RETX on ACK), ELENGTH (length not 32 + 4 * count, DATA
 * without values, ACK with values), EFANIN (size 0 or from >= size),
 * ERESERVED (a reserved byte not 0, sack on DATA). */
int inart_wire_ring_decode(const uint8_t *buf, size_t len, struct inart_wire_ring *h,
			   const uint8_t **payload);

/* Encode a ring packet (values in host order, converted here).  Returns the
 * length, or 0 if cap is too small or decode would refuse the packet. */
size_t inart_wire_ring_encode(const struct inart_wire_ring *h, const float *values, uint8_t *buf,
			      size_t cap);

#endif
