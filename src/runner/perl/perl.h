/* SPDX-License-Identifier: MIT */
/* perl.h - openQA Perl test distributions (main.pm) under `vigil run`:
 * os-autoinst's own test process (autotest.pm/testapi.pm) talks JSON lines
 * to vigil, which answers from one command table (docs/perl.md). */
#ifndef VIGIL_PERL_H
#define VIGIL_PERL_H
#include <stddef.h>
#include <jansson.h>

struct runner;
struct perl;

/* Whether dir holds a Perl distribution: main.pm and no main.lua. */
int perl_is_distri(const char *dir);

/* Run the job's Perl distribution: write vars.json, unpack the embedded
 * bootstrap into the VM's work directory, start perl on a socketpair,
 * start the VM once the schedule is loaded, answer every command until
 * tests_done, and fill r->modules from test_order.json and the
 * result-<module>.json files Perl wrote. Failures end the job through
 * runner__abort; perl is always reaped. */
void perl_run(struct runner *r);

/* One command of the test process: msg is its JSON object (borrowed).
 * Returns 1 with *reply a new object to send back ({"ret": ...},
 * {"vigil_error": ...}, or read_serial's own shape), or 0 when the
 * command takes no reply (tests_done). p may be NULL for the commands
 * that need no VM (unit tests). */
int perl_answer(struct runner *r, struct perl *p, json_t *msg, json_t **reply);

/* perl_backend.c: the backend_* commands for consoles, mouse, held keys,
 * power and the machine, and vigil_add_console. *known = 0 for any other
 * command (NULL returned); else the reply, or NULL with err filled. */
json_t *perl_backend_answer(struct runner *r, const char *cmd, json_t *msg, int *known, char *err, size_t errlen);
/* Adds one entry {name, class, args} of the test process's console table
 * to r's (a warning names an unsupported class). 0 or negative. */
int perl_backend_add_console(struct runner *r, json_t *console);

/* The test process's variables read back from the vars.json it saved
 * (after each module and at the end; perl_results.c): later values win,
 * and each variable the test set or changed is named in the log. */
void perl_read_vars(struct runner *r);

/* A needle match as the test process takes it (needle::TO_JSON, areas'
 * similarity 0..1), from screen.c's match (needle name, areas, error);
 * NULL when the needle is gone. And a check's candidate list likewise. */
json_t *perl__match_json(struct runner *r, const char *name, json_t *areas, double error, int ok);
json_t *perl__cands_json(struct runner *r, json_t *cands);

/* r->modules replaced by the modules of Perl's test_order.json and their
 * result-<name>.json files (perl_results.c), keeping the start and end
 * times the run recorded for each name; unchanged when there is no
 * test_order.json. 0, or ERR_NOMEM (r->modules unchanged: no module may
 * lose its result, so the job ends incomplete). */
int perl_load_results(struct runner *r);

/* Perl's stringified regex as PCRE2 takes it: the charset flags a, aa,
 * d, l and u are removed from every "(?^flags:" group (PCRE2 rejects
 * them; they change nothing for the ASCII that serial output is matched
 * with). New string, NULL on OOM. */
char *perl_regex_to_pcre2(const char *re);

#endif
