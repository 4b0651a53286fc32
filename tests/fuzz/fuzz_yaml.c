/* SPDX-License-Identifier: MIT */
/* fuzz_yaml.c - job group YAML (openQA's JobTemplates-01 schema) as
 * jt_yaml_parse reads it, and what jt_yaml_dump writes back from it, which
 * must parse again to the same number of templates. */
#include "fuzz.h"
#include "server/store/jt_yaml.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_list l, again;
	char err[512];
	struct buf out;

	jt_list_init(&l);
	jt_list_init(&again);
	buf_init(&out, 16u << 20);
	if (jt_yaml_parse((const char *)data, size, &l, err, sizeof(err)) == 0 &&
	    jt_yaml_dump(&l, 50, true, &out) == 0 && out.data) {
		if (jt_yaml_parse(out.data, out.len, &again, err, sizeof(err)) != 0 || again.n != l.n)
			abort(); /* what we write we must read back */
	}
	buf_release(&out);
	jt_list_release(&again);
	jt_list_release(&l);
	return 0;
}
