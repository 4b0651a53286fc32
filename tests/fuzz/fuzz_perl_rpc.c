/* SPDX-License-Identifier: MIT */
/* fuzz_perl_rpc.c - os-autoinst's JSON-line RPC as vigil's Perl bridge
 * reads it (runner/perl/perl.c): each input line is what the test process
 * sends, parsed as handle_line does and answered by perl_answer on a
 * runner without a VM (the commands that need one are refused by name, as
 * before the VM runs), with the console table of perl_backend.c and an
 * empty distribution and results directory (a temporary directory made
 * once, removed at exit). The reply must serialise. A crash, leak or sanitizer report fails the target. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuzz.h"
#include "image/needle.h"
#include "runner/core/console.h"
#include "runner/perl/perl.h"
#include "runner/core/results.h"
#include "runner/core/job.h"
#include "util/log.h"

static char dir[] = "/tmp/vigil-fuzz-perl-XXXXXX";

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_perl_rpc: could not remove %s\n", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runner *r = calloc(1, sizeof(*r));
	const char *p = (const char *)data, *end = p + size;
	size_t i;

	static bool made; /* not the template's last letter: mkdtemp may put an X there */

	if (!made) {
		made = true;
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
		log_set_stderr_level(LOG_ERR);
	}
	if (!r || console_set_init(&r->consoles))
		abort();
	r->distri_dir = r->out_dir = dir;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *msg = json_loadb(p, len, 0, NULL), *reply = NULL;
		if (json_is_object(msg) && json_is_string(json_object_get(msg, "cmd")) &&
		    perl_answer(r, NULL, msg, &reply)) {
			char *text = json_dumps(reply, JSON_COMPACT);
			if (!text)
				abort(); /* a reply that does not serialise would never reach Perl */
			free(text);
			json_decref(reply);
		}
		json_decref(msg);
		p += len + 1;
	}
	if (r->needles) { /* reload_needles made them */
		needle_set_release(r->needles);
		free(r->needles);
	}
	for (i = 0; i < r->nmodules; i++)
		results_module_release(&r->modules[i]);
	free(r->modules);
	console_set_release(&r->consoles);
	vars_release(&r->vars);
	json_decref(r->last_match);
	free(r);
	return 0;
}
