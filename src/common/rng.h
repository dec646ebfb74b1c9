/*
 * rng: a small seeded pseudo-random generator (xoshiro256** seeded through
 * splitmix64).  Every randomized decision in the project draws from one of
 * these, so that a seed reproduces a run exactly.  The state is a plain value
 * owned by the caller.
 */
#ifndef INART_RNG_H
#define INART_RNG_H

#include <stdint.h>

struct inart_rng {
	uint64_t s[4];
};

static inline uint64_t inart_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void inart_rng_seed(struct inart_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = inart_splitmix64(&seed);
}

static inline uint64_t inart_rng_next(struct inart_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, res = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return res;
}

/* Uniform double in [0, 1). */
static inline double inart_rng_unit(struct inart_rng *r)
{
	return (double)(inart_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0. */
static inline uint64_t inart_rng_below(struct inart_rng *r, uint64_t n)
{
	return inart_rng_next(r) % n;
}

/* A stateless 64-bit mix of two values (for ECMP-style hashing). */
static inline uint64_t inart_hash2(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	return inart_splitmix64(&x);
}

#endif
