/* SPDX-License-Identifier: MIT */
/* fuzz_params.c - query strings and form bodies as every route gets them
 * (params_parse: percent escapes, '+', UTF-8 check, the parameter limit),
 * then the job settings one form would become once %VAR% references are
 * expanded (jobs_settings_expand, with its bounds). */
#include <jansson.h>
#include "fuzz.h"
#include "server/http/api.h"
#include "server/store/jobs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct params p;
	char msg[256];

	params_init(&p);
	if (params_parse(&p, (const char *)data, size, msg, sizeof(msg)) == 0) {
		json_t *s = json_object();
		size_t i;
		for (i = 0; i < p.n; i++) {
			char *u = api_upper(p.v[i].key);
			if (u && *u)
				json_object_set_new(s, u, json_string(p.v[i].value));
			free(u);
		}
		jobs_settings_default_class(s);
		(void)jobs_settings_expand(s, msg, sizeof(msg));
		{
			char *name = jobs_name(s);
			free(name);
		}
		json_decref(s);
		(void)params_get(&p, "TEST");
	}
	params_release(&p);
	return 0;
}
