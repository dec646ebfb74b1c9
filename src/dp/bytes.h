/*
 * bytes: big-endian (network order) loads and stores on byte buffers, with
 * no alignment assumption.  Shared by the wire codec, the frame parser and
 * the switch pipeline.  Callers check lengths before calling.
 */
#ifndef INART_BYTES_H
#define INART_BYTES_H

#include <stdint.h>

static inline uint16_t inart_get_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t inart_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t inart_get_be64(const uint8_t *p)
{
	return (uint64_t)inart_get_be32(p) << 32 | inart_get_be32(p + 4);
}

static inline void inart_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void inart_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void inart_put_be64(uint8_t *p, uint64_t v)
{
	inart_put_be32(p, (uint32_t)(v >> 32));
	inart_put_be32(p + 4, (uint32_t)v);
}

#endif
