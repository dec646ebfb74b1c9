/*
 * ctlfield: the fields of control messages (docs/programs.md).  Text forms:
 * addresses are dotted quads ("10.0.0.1"), MACs "02:00:00:00:00:01", bitmap
 * words hex strings of at most 16 digits (JSON numbers are not 64-bit safe).
 * JSON readers: each reads one field of an object that comes from untrusted
 * bytes, checks its type, range or length, and on a refusal returns -EINVAL
 * with a reason in err that starts with "what" (the entry at fault, e.g.
 * "labels[3]: down[2]") and names the key.  Pure, no I/O, no allocation.
 */
#ifndef INART_CTLFIELD_H
#define INART_CTLFIELD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/addr.h" /* the text forms of addresses the fields hold */

/* o must be an object whose keys are all in the NULL-terminated list (a
 * typo must not be ignored). */
int inart_ctl_get_keys(json_t *o, const char *what, const char *const *allowed,
		       struct inart_err *err);
/* A boolean field; absent: 0. */
int inart_ctl_get_bool(json_t *o, const char *what, const char *key, int *out,
		       struct inart_err *err);
/* An optional array of at most max elements; *arr = NULL, *n = 0 when
 * absent. */
int inart_ctl_get_array(json_t *o, const char *what, const char *key, size_t max, json_t **arr,
			size_t *n, struct inart_err *err);

/* Field tables: the fields of one JSON object read into one C struct, each
 * key the name of the struct member it fills (so the keys are written
 * once).  Numbers are range-checked ([min, max]; absent: dflt, or an error
 * if required) and stored in the member's type; IPs and MACs are read in
 * their text forms (absent: 0). */
enum inart_ctl_ftype {
	INART_CTL_U16 = 1,
	INART_CTL_U32,
	INART_CTL_U64,
	INART_CTL_INT,
	INART_CTL_IP,
	INART_CTL_MAC,
};
struct inart_ctl_field {
	const char *key;
	int type; /* enum inart_ctl_ftype */
	int required;
	int64_t min, max, dflt;
	size_t off; /* of the member in the struct */
};
/* A numeric member m of struct st (its type chosen by the member's type),
 * an IPv4 member (uint32_t), a MAC member (uint8_t[6]). */
#define INART_CTL_NUM(st, m, req, lo, hi, dft)                                                     \
	{                                                                                          \
#m,                                                                                \
		    _Generic(((struct st *)0)->m, uint16_t                                         \
			     : INART_CTL_U16, uint32_t                                             \
			     : INART_CTL_U32, uint64_t                                             \
			     : INART_CTL_U64, int                                                  \
			     : INART_CTL_INT),                                                     \
		    req, lo, hi, dft, offsetof(struct st, m)                                       \
	}
#define INART_CTL_IPV4(st, m, req)                                                                 \
	{                                                                                          \
#m, INART_CTL_IP, req, 0, 0, 0, offsetof(struct st, m)                             \
	}
#define INART_CTL_ETH(st, m)                                                                       \
	{                                                                                          \
#m, INART_CTL_MAC, 0, 0, 0, 0, offsetof(struct st, m)                              \
	}
#define INART_CTL_N_FIELDS(f) (sizeof(f) / sizeof((f)[0]))

/* Read the n fields f of o into the struct at base, in table order; the
 * first refusal stops (base is then partly filled). */
int inart_ctl_get_fields(json_t *o, const char *what, const struct inart_ctl_field *f, size_t n,
			 void *base, struct inart_err *err);
/* inart_ctl_get_fields after checking that o is an object whose keys are
 * the fields' or in more_keys (NULL-terminated; NULL: none). */
int inart_ctl_get_object(json_t *o, const char *what, const char *const *more_keys,
			 const struct inart_ctl_field *f, size_t n, void *base,
			 struct inart_err *err);

#endif
