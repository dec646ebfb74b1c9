/*
 * ctlfield: the fields of control messages (see ctlfield.h): JSON field
 * readers that check type, range and length and name the field at fault.
 */
#include "ctlproto/ctlfield.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dp/addr.h"

/* ---- checked field access ---- */

/* o must be an object whose keys are all in the NULL-terminated list names
 * (NULL: none) or among the n fields f. */
static int known_keys(json_t *o, const char *what, const char *const *names,
		      const struct inart_ctl_field *f, size_t n, struct inart_err *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o))
		return inart_err_set(err, -EINVAL, "%s: must be an object", what);
	json_object_foreach(o, key, v)
	{
		int ok = 0;

		for (int i = 0; names != NULL && names[i] != NULL; i++)
			if (strcmp(key, names[i]) == 0)
				ok = 1;
		for (size_t i = 0; i < n; i++)
			if (strcmp(key, f[i].key) == 0)
				ok = 1;
		if (!ok)
			return inart_err_set(err, -EINVAL, "%s: unknown key '%.64s'", what, key);
	}
	return 0;
}

int inart_ctl_get_keys(json_t *o, const char *what, const char *const *allowed,
		       struct inart_err *err)
{
	return known_keys(o, what, allowed, NULL, 0, err);
}

/* An integer field in [min, max]; absent: *out = dflt, or an error if
 * required. */
static int inart_ctl_get_int(json_t *o, const char *what, const char *key, int required,
			     int64_t min, int64_t max, int64_t dflt, int64_t *out,
			     struct inart_err *err)
{
	json_t *v = json_object_get(o, key);
	json_int_t x;

	if (v == NULL) {
		if (required)
			return inart_err_set(err, -EINVAL, "%s: missing '%s'", what, key);
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return inart_err_set(err, -EINVAL, "%s: '%s' must be an integer", what, key);
	x = json_integer_value(v);
	if (x < min || x > max)
		return inart_err_set(err, -EINVAL, "%s: '%s' %lld out of range [%lld, %lld]", what,
				     key, (long long)x, (long long)min, (long long)max);
	*out = x;
	return 0;
}

int inart_ctl_get_bool(json_t *o, const char *what, const char *key, int *out,
		       struct inart_err *err)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		*out = 0;
		return 0;
	}
	if (!json_is_boolean(v))
		return inart_err_set(err, -EINVAL, "%s: '%s' must be true or false", what, key);
	*out = json_is_true(v);
	return 0;
}

static int inart_ctl_get_ip(json_t *o, const char *what, const char *key, int required,
			    uint32_t *ip, struct inart_err *err)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		if (required)
			return inart_err_set(err, -EINVAL, "%s: missing '%s'", what, key);
		*ip = 0;
		return 0;
	}
	if (!json_is_string(v) || inart_addr_parse_ip(json_string_value(v), ip) < 0)
		return inart_err_set(err, -EINVAL, "%s: '%s' must be an IPv4 address \"a.b.c.d\"",
				     what, key);
	return 0;
}

static int inart_ctl_get_mac(json_t *o, const char *what, const char *key, uint8_t mac[6],
			     struct inart_err *err)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		memset(mac, 0, 6);
		return 0;
	}
	if (!json_is_string(v) || inart_addr_parse_mac(json_string_value(v), mac) < 0)
		return inart_err_set(err, -EINVAL, "%s: '%s' must be a MAC \"xx:xx:xx:xx:xx:xx\"",
				     what, key);
	return 0;
}

/* An optional array of at most max elements; *n = 0 when absent. */
int inart_ctl_get_array(json_t *o, const char *what, const char *key, size_t max, json_t **arr,
			size_t *n, struct inart_err *err)
{
	json_t *v = json_object_get(o, key);

	*arr = NULL;
	*n = 0;
	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return inart_err_set(err, -EINVAL, "%s: '%s' must be an array", what, key);
	if (json_array_size(v) > max)
		return inart_err_set(err, -EINVAL, "%s: '%s' has %zu entries, at most %zu", what,
				     key, json_array_size(v), max);
	*arr = v;
	*n = json_array_size(v);
	return 0;
}

int inart_ctl_get_fields(json_t *o, const char *what, const struct inart_ctl_field *f, size_t n,
			 void *base, struct inart_err *err)
{
	for (size_t i = 0; i < n; i++) {
		char *p = (char *)base + f[i].off;
		int64_t x = 0;
		int rc;

		if (f[i].type == INART_CTL_IP)
			rc = inart_ctl_get_ip(o, what, f[i].key, f[i].required,
					      (uint32_t *)(void *)p, err);
		else if (f[i].type == INART_CTL_MAC)
			rc = inart_ctl_get_mac(o, what, f[i].key, (uint8_t *)p, err);
		else
			rc = inart_ctl_get_int(o, what, f[i].key, f[i].required, f[i].min, f[i].max,
					       f[i].dflt, &x, err);
		if (rc < 0)
			return rc;
		if (f[i].type == INART_CTL_U16)
			*(uint16_t *)(void *)p = (uint16_t)x;
		else if (f[i].type == INART_CTL_U32)
			*(uint32_t *)(void *)p = (uint32_t)x;
		else if (f[i].type == INART_CTL_U64)
			*(uint64_t *)(void *)p = (uint64_t)x;
		else if (f[i].type == INART_CTL_INT)
			*(int *)(void *)p = (int)x;
	}
	return 0;
}

int inart_ctl_get_object(json_t *o, const char *what, const char *const *more_keys,
			 const struct inart_ctl_field *f, size_t n, void *base,
			 struct inart_err *err)
{
	int rc = known_keys(o, what, more_keys, f, n, err);

	return rc < 0 ? rc : inart_ctl_get_fields(o, what, f, n, base, err);
}
