/* SPDX-License-Identifier: MIT */
/* storable.h - the part of Perl's Storable binary format that openQA 4.6's
 * chunked asset upload carries (OpenQA::File records: a hash of scalars,
 * a blessed Mojo::File among them): read into JSON values, and a hash of
 * strings and integers written in network order (as nfreeze). */
#ifndef VIGIL_STORABLE_H
#define VIGIL_STORABLE_H
#include <jansson.h>
#include <stddef.h>
#include "util/buf.h"

#define STORABLE_DEPTH_MAX 32

/* Reads a frozen (freeze or nfreeze) record: hashes become objects,
 * arrays arrays, scalars strings/integers/reals, undef null; references
 * and blessings are followed (the class is dropped). Binary strings that
 * are not UTF-8, shared references, tied and code values are refused.
 * 0 with *out a new reference, or ERR_PROTO with msg naming the byte
 * offset, ERR_NOMEM. */
int storable_thaw(const void *data, size_t len, json_t **out, char *msg, size_t msglen);

/* Appends obj (an object whose values are strings, integers or null) to
 * out as Storable's nfreeze writes a hash of scalars. 0, ERR_INVALID
 * (another value type), ERR_NOMEM or ERR_TOO_BIG. */
int storable_nfreeze_hash(const json_t *obj, struct buf *out);

#endif
