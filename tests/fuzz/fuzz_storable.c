/* SPDX-License-Identifier: MIT */
/* fuzz_storable.c - a Perl Storable record as openQA's worker uploads it
 * (a chunk of an asset), read by storable.c; what it reads is written
 * back as nfreeze when it is a hash of scalars, and must read again
 * (numbers past 32 bits come back as text, as Perl's nfreeze has them). */
#include "fuzz.h"
#include "net/storable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = NULL, *back = NULL;
	char msg[160];
	struct buf b;

	if (storable_thaw(data, size, &j, msg, sizeof(msg)))
		return 0;
	buf_init(&b, 1 << 20);
	if (storable_nfreeze_hash(j, &b) == 0) {
		if (storable_thaw(b.data, b.len, &back, msg, sizeof(msg)) ||
		    json_object_size(back) != json_object_size(j))
			abort();
		json_decref(back);
	}
	buf_release(&b);
	json_decref(j);
	return 0;
}
