/* SPDX-License-Identifier: MIT */
/* storable.c - Perl Storable's binary records (see storable.h), read with
 * a bounded cursor and written for a hash of scalars. The layout, as
 * Storable 3.x writes it: a header byte (major version 2 shifted left,
 * bit 0 set for network order) and the minor version; a native record then
 * names its byte order and the sizes of int, long, pointer and NV. Then
 * one item: a type byte and its body. Lengths are 32 bits (big-endian in
 * network order, native otherwise) except the one-byte lengths of short
 * scalars and class names; a hash lists value before key. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/storable.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

enum {
	SX_OBJECT = 0, /* a reference to an item seen before */
	SX_LSCALAR = 1,
	SX_ARRAY = 2,
	SX_HASH = 3,
	SX_REF = 4,
	SX_UNDEF = 5,
	SX_INTEGER = 6, /* native IV */
	SX_DOUBLE = 7,  /* native NV */
	SX_BYTE = 8,    /* value + 128 */
	SX_NETINT = 9,  /* 32 bits, big-endian */
	SX_SCALAR = 10,
	SX_SV_UNDEF = 14,
	SX_SV_YES = 15,
	SX_SV_NO = 16,
	SX_BLESS = 17,
	SX_IX_BLESS = 18,
	SX_OVERLOAD = 20, /* a reference to an object with overloads */
	SX_UTF8STR = 23,
	SX_LUTF8STR = 24,
	SX_FLAG_HASH = 25,
	SX_BOOLEAN_TRUE = 34,
	SX_BOOLEAN_FALSE = 35,
};

#define STORABLE_MAJOR 2
#define STORABLE_MINOR 11
#define FLAG_KEY_IS_SV 0x08 /* a flagged hash's key stored as an item */

struct cur {
	const uint8_t *p;
	size_t len, off;
	bool net;
	uint32_t classes; /* class names seen, for SX_IX_BLESS */
	char *msg;
	size_t msglen;
};

static int fail(struct cur *c, const char *what)
{
	err_set(c->msg, c->msglen, "Storable record: %s at byte %zu", what, c->off);
	return ERR_PROTO;
}

static int take(struct cur *c, size_t n, const uint8_t **at)
{
	if (n > c->len - c->off)
		return fail(c, "truncated");
	*at = c->p + c->off;
	c->off += n;
	return 0;
}

static int u8(struct cur *c, uint8_t *v)
{
	const uint8_t *at;
	int rc = take(c, 1, &at);

	if (!rc)
		*v = *at;
	return rc;
}

/* A 32-bit length or integer in the record's byte order. */
static int u32(struct cur *c, uint32_t *v)
{
	const uint8_t *at;
	int rc = take(c, 4, &at);

	if (rc)
		return rc;
	if (c->net)
		*v = (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
	else
		memcpy(v, at, 4); /* native: the header said this host's order */
	return 0;
}

static int string(struct cur *c, size_t n, json_t **out)
{
	const uint8_t *at;
	int rc = take(c, n, &at);

	if (rc)
		return rc;
	*out = json_stringn((const char *)at, n);
	if (!*out)
		return fail(c, "a string that is not UTF-8 text (binary strings are not read)");
	return 0;
}

static int item(struct cur *c, int depth, json_t **out);

static int hash(struct cur *c, int depth, bool flagged, json_t **out)
{
	uint32_t n, i, klen;
	uint8_t flags;
	int rc;

	if (flagged && (rc = u8(c, &flags)))
		return rc;
	if ((rc = u32(c, &n)))
		return rc;
	/* Each entry is at least a type byte and a 4-byte key length. */
	if (n > (c->len - c->off) / 5)
		return fail(c, "a hash longer than the record");
	if (!(*out = json_object()))
		return ERR_NOMEM;
	for (i = 0; i < n; i++) {
		json_t *v = NULL;
		const uint8_t *key;
		char *k;
		if ((rc = item(c, depth + 1, &v)))
			return rc;
		if (flagged && !(rc = u8(c, &flags)) && (flags & FLAG_KEY_IS_SV))
			rc = fail(c, "a hash key that is an item");
		if (rc) {
			json_decref(v);
			return rc;
		}
		if ((rc = u32(c, &klen)) || (rc = take(c, klen, &key))) {
			json_decref(v);
			return rc;
		}
		if (memchr(key, '\0', klen)) {
			json_decref(v);
			return fail(c, "a hash key with a NUL byte");
		}
		if (!(k = strndup((const char *)key, klen))) {
			json_decref(v);
			return ERR_NOMEM;
		}
		rc = json_object_set_new(*out, k, v) ? fail(c, "a hash key that is not UTF-8 text") : 0;
		free(k);
		if (rc)
			return rc;
	}
	return 0;
}

static int item(struct cur *c, int depth, json_t **out)
{
	const uint8_t *at;
	uint32_t n, i;
	uint8_t t, b;
	int rc;

	*out = NULL;
	if (depth > STORABLE_DEPTH_MAX)
		return fail(c, "nested too deep");
	if ((rc = u8(c, &t)))
		return rc;
	switch (t) {
	case SX_SCALAR:
	case SX_UTF8STR:
		return (rc = u8(c, &b)) ? rc : string(c, b, out);
	case SX_LSCALAR:
	case SX_LUTF8STR:
		return (rc = u32(c, &n)) ? rc : string(c, n, out);
	case SX_BYTE:
		if ((rc = u8(c, &b)))
			return rc;
		*out = json_integer((json_int_t)b - 128);
		break;
	case SX_NETINT:
		if ((rc = take(c, 4, &at)))
			return rc;
		n = (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
		*out = json_integer((json_int_t)(int32_t)n);
		break;
	case SX_INTEGER: {
		int64_t v;
		if (c->net)
			return fail(c, "a native integer in a network-order record");
		if ((rc = take(c, 8, &at)))
			return rc;
		memcpy(&v, at, 8);
		*out = json_integer((json_int_t)v);
		break;
	}
	case SX_DOUBLE: {
		double v;
		if (c->net)
			return fail(c, "a native double in a network-order record");
		if ((rc = take(c, 8, &at)))
			return rc;
		memcpy(&v, at, 8);
		*out = json_real(v);
		break;
	}
	case SX_UNDEF:
	case SX_SV_UNDEF:
		*out = json_null();
		break;
	case SX_SV_YES:
	case SX_BOOLEAN_TRUE:
		*out = json_true();
		break;
	case SX_SV_NO:
	case SX_BOOLEAN_FALSE:
		*out = json_false();
		break;
	case SX_REF:
	case SX_OVERLOAD:
		return item(c, depth + 1, out);
	case SX_BLESS:
		if ((rc = u8(c, &b)))
			return rc;
		n = b;
		if ((b & 0x80) && (rc = u32(c, &n)))
			return rc;
		if ((rc = take(c, n, &at)))
			return rc;
		c->classes++;
		return item(c, depth + 1, out);
	case SX_IX_BLESS:
		if ((rc = u8(c, &b)))
			return rc;
		n = b;
		if ((b & 0x80) && (rc = u32(c, &n)))
			return rc;
		if (n >= c->classes)
			return fail(c, "a blessing by an unknown class index");
		return item(c, depth + 1, out);
	case SX_HASH:
	case SX_FLAG_HASH:
		if ((rc = hash(c, depth, t == SX_FLAG_HASH, out))) {
			json_decref(*out);
			*out = NULL;
		}
		return rc;
	case SX_ARRAY:
		if ((rc = u32(c, &n)))
			return rc;
		if (n > c->len - c->off)
			return fail(c, "an array longer than the record");
		if (!(*out = json_array()))
			return ERR_NOMEM;
		for (i = 0; i < n; i++) {
			json_t *v;
			if ((rc = item(c, depth + 1, &v)) || json_array_append_new(*out, v)) {
				json_decref(*out);
				*out = NULL;
				return rc ? rc : ERR_NOMEM;
			}
		}
		return 0;
	case SX_OBJECT:
		return fail(c, "a shared reference (not read)");
	default: {
		char what[64];
		c->off--;
		snprintf(what, sizeof(what), "item type %u (not read)", t);
		return fail(c, what);
	}
	}
	return *out ? 0 : ERR_NOMEM;
}

int storable_thaw(const void *data, size_t len, json_t **out, char *msg, size_t msglen)
{
	struct cur c = { .p = data, .len = len, .msg = msg, .msglen = msglen };
	const uint8_t *at;
	uint8_t h, minor;
	int rc;

	*out = NULL;
	if ((rc = u8(&c, &h)) || (rc = u8(&c, &minor)))
		return rc;
	if (h >> 1 != STORABLE_MAJOR)
		return fail(&c, "not a Storable 2.x record (header)");
	c.net = h & 1;
	if (!c.net) {
		/* Byte order, then the sizes of int, long, pointer and NV: only
		 * this host's (x86-64) native records are read. */
		static const uint8_t host[] = { 8, '1', '2', '3', '4', '5', '6', '7', '8', 4, 8, 8, 8 };
		if ((rc = take(&c, sizeof(host), &at)))
			return rc;
		if (memcmp(at, host, sizeof(host)))
			return fail(&c, "a native record of another architecture (send nfreeze's network order)");
	}
	if ((rc = item(&c, 0, out)))
		return rc;
	if (c.off != c.len) {
		json_decref(*out);
		*out = NULL;
		return fail(&c, "bytes after the record");
	}
	return 0;
}

static int put_u32(struct buf *out, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	return buf_append(out, b, 4);
}

/* A string as SX_SCALAR (up to 255 bytes) or SX_LSCALAR. */
static int put_string(struct buf *out, const char *s, size_t n)
{
	uint8_t t[2];
	int rc;

	if (n > UINT32_MAX)
		return ERR_TOO_BIG;
	if (n <= 255) {
		t[0] = SX_SCALAR;
		t[1] = (uint8_t)n;
		rc = buf_append(out, t, 2);
	} else {
		t[0] = SX_LSCALAR;
		rc = buf_append(out, t, 1);
		if (!rc)
			rc = put_u32(out, (uint32_t)n);
	}
	return rc ? rc : buf_append(out, s, n);
}

int storable_nfreeze_hash(const json_t *obj, struct buf *out)
{
	static const uint8_t header[] = { STORABLE_MAJOR << 1 | 1, STORABLE_MINOR, SX_HASH };
	const char *key;
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return ERR_INVALID;
	if ((rc = buf_append(out, header, sizeof(header))) || (rc = put_u32(out, (uint32_t)json_object_size(obj))))
		return rc;
	json_object_foreach((json_t *)obj, key, v) {
		if (json_is_string(v)) {
			rc = put_string(out, json_string_value(v), json_string_length(v));
		} else if (json_is_integer(v)) {
			json_int_t i = json_integer_value(v);
			if (i >= -128 && i <= 127) {
				uint8_t b[2] = { SX_BYTE, (uint8_t)(i + 128) };
				rc = buf_append(out, b, 2);
			} else if (i >= INT32_MIN && i <= INT32_MAX) {
				uint8_t b = SX_NETINT;
				rc = buf_append(out, &b, 1);
				if (!rc)
					rc = put_u32(out, (uint32_t)(int32_t)i);
			} else {
				/* nfreeze writes a number past 32 bits as its text. */
				char num[24];
				int n = snprintf(num, sizeof(num), "%lld", (long long)i);
				rc = put_string(out, num, (size_t)n);
			}
		} else if (json_is_null(v)) {
			uint8_t b = SX_UNDEF;
			rc = buf_append(out, &b, 1);
		} else {
			return ERR_INVALID;
		}
		if (rc || (rc = put_u32(out, (uint32_t)strlen(key))) || (rc = buf_append(out, key, strlen(key))))
			return rc;
	}
	return 0;
}
