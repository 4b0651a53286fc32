/* SPDX-License-Identifier: MIT */
/* jt_yaml.h - openQA's job group YAML (schema JobTemplates-01.yaml):
 * products, defaults and scenarios turned into a flat list of job
 * templates, and a list written back as YAML. Pure: no database; the
 * caller maps names to rows. Parsed with libyaml, anchors, aliases and
 * '<<' merge keys included. */
#ifndef VIGIL_JT_YAML_H
#define VIGIL_JT_YAML_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "util/buf.h"

#define LIMIT_JT_YAML     (512u * 1024u)  /* bytes of one template document */
#define LIMIT_JT_ENTRIES  10000           /* job templates one document may expand to */
#define LIMIT_JT_DEPTH    64              /* nested collections (the schema needs under 10) */

/* One job template as the YAML describes it. All strings owned. */
struct jt_entry {
	char *arch;
	char *product;       /* the key under products: */
	char *distri, *flavor, *version;
	char *machine;       /* NULL: none given and no default */
	char *testsuite;     /* NULL: "testsuite: null" (openQA's empty test suite) */
	char *name;          /* custom job template name, NULL when the test suite names it */
	bool has_prio;
	long prio;
	json_t *settings;    /* object of strings, never NULL */
	char *description;   /* never NULL */
	int line;            /* 1-based line of the scenario in the YAML */
};

struct jt_list {
	struct jt_entry *v;
	size_t n, cap;
};

void jt_list_init(struct jt_list *l);
void jt_list_release(struct jt_list *l);

/* Parse and validate a document of len bytes into l (emptied first).
 * 0; ERR_PROTO with "line L, column C: /path: what is wrong" in err for
 * bad YAML or a schema violation (unknown keys, wrong types, a scenario
 * whose product is not under products:, a scenario defined twice);
 * ERR_TOO_BIG (over LIMIT_JT_YAML or LIMIT_JT_ENTRIES); ERR_NOMEM. */
int jt_yaml_parse(const char *yaml, size_t len, struct jt_list *l, char *err, size_t errlen);

/* Write l as a document of the same schema into out: products named by
 * their key, scenarios in the order given. With defaults, each
 * architecture gets a defaults: entry (default_prio and its most used
 * machine) and scenarios repeat only what differs; without, every
 * scenario spells out machine, priority and settings (openQA's "expand").
 * An empty list gives "products: {}" and "scenarios: {}". 0 or
 * ERR_NOMEM/ERR_TOO_BIG. */
int jt_yaml_dump(const struct jt_list *l, long default_prio, bool defaults, struct buf *out);

/* Append a copy of e (strings duplicated, settings referenced). 0 or ERR_NOMEM/ERR_TOO_BIG. */
int jt_list_add(struct jt_list *l, const struct jt_entry *e);

#endif
