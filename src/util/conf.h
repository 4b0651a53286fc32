/* SPDX-License-Identifier: MIT */
/* conf.h - INI files ("[section]", "name = value", '#' and ';' comments):
 * the one reader behind vigil.conf and openQA's client.conf. Parses a
 * bounded text into a list of entries that remember their line; applies a
 * section to a subcommand's getopt table so file keys are its long flags. */
#ifndef VIGIL_UTIL_CONF_H
#define VIGIL_UTIL_CONF_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#define LIMIT_CONF_FILE (256u * 1024u)       /* bytes of one INI file */
#define CONF_DEFAULT_PATH "/etc/vigil/vigil.conf"

struct conf_entry {
	char *section; /* "" before the first header */
	char *key;
	char *value;   /* white space around it dropped; may be "" */
	int line;      /* 1-based */
};

struct conf {
	char *path;    /* the file read, or NULL for text parsed directly */
	struct conf_entry *e;
	size_t n, cap;
	char **sections; /* every "[name]" seen, in order, each once */
	int *section_lines;
	size_t nsections;
};

void conf_init(struct conf *c);
void conf_release(struct conf *c);

/* Parse text (len bytes, NUL bytes refused) into c, appending. 0,
 * ERR_NOMEM, ERR_TOO_BIG (over LIMIT_CONF_FILE) or ERR_PROTO with
 * "line N: ..." in err. */
int conf_parse(struct conf *c, const char *text, size_t len, char *err, size_t errlen);

/* Read and parse the file path; errors name it ("PATH: line N: ..."). */
int conf_load(struct conf *c, const char *path, char *err, size_t errlen);

/* The last entry for section/key (borrowed, valid until conf_release), or
 * NULL. */
const struct conf_entry *conf_get(const struct conf *c, const char *section, const char *key);

/* Whether "[section]" appeared. */
bool conf_has_section(const struct conf *c, const char *section);

/* ERR_INVALID naming file and line when c has a section that is not one
 * of the NULL-terminated names, or an entry outside any section. */
int conf_check_sections(const struct conf *c, const char *const *known, char *err, size_t errlen);

/* "FILE:LINE" of e into out (the file "-" when text was parsed directly). */
void conf_where(const struct conf *c, const struct conf_entry *e, char *out, size_t outlen);

/* A boolean value: true/yes/on/1 or false/no/off/0. 0 or ERR_INVALID. */
int conf_bool(const char *v, bool *out);

/* Which file to read for a command: cli (from --config) when given; else
 * $VIGIL_CONFIG when set and not empty; else CONF_DEFAULT_PATH when it
 * exists; else none (*path = NULL, 0). A file named by --config or
 * $VIGIL_CONFIG must exist: ERR_NOT_FOUND naming it otherwise. *path is
 * borrowed from cli, the environment or a constant. */
int conf_pick(const char *cli, const char **path, char *err, size_t errlen);

/* The value of --NAME in argv ("--NAME V" or "--NAME=V", up to a "--"),
 * the last one wins; NULL when absent. *missing is set when the last
 * "--NAME" has no value after it. Borrowed from argv. */
const char *conf_argv_value(int argc, char **argv, const char *name, bool *missing);

/* Called for each option applied: val is the getopt value of the matching
 * long option, arg its value (NULL for a no_argument option set true).
 * Returns 0 or an error with a message in err (without the option name). */
typedef int (*conf_opt_fn)(void *ctx, int val, const char *arg, char *err, size_t errlen);

/* Apply every key of [section] as the long option of the same name in
 * opts (a getopt table ended by a NULL name) through fn, in file order.
 * Keys named in skip (NULL-terminated, may be NULL) are refused like
 * unknown ones. A no_argument option takes a boolean (false: not applied).
 * 0, or ERR_INVALID with "FILE:LINE: [section] KEY: ..." in err for an
 * unknown key, a bad boolean or fn's error. */
int conf_apply_options(const struct conf *c, const char *section, const struct option *opts,
		       const char *const *skip, conf_opt_fn fn, void *ctx, char *err, size_t errlen);

#endif
