/* SPDX-License-Identifier: MIT */
/* vars.h - the job's variables (openQA's vars.json): an ordered string map.
 * Keys follow openQA: ^[A-Z0-9_]+(\[\])?$. Values are strings; JSON numbers
 * and booleans read from files are turned into their text. */
#ifndef VIGIL_VARS_H
#define VIGIL_VARS_H

#include <stddef.h>
#include <jansson.h>

struct vars {
	json_t *obj; /* key -> string, owned */
};

int vars_init(struct vars *v);
void vars_release(struct vars *v);
/* Borrowed value or NULL; valid until the key is set again. */
const char *vars_get(const struct vars *v, const char *key);
/* Callback form for modules that must not depend on the runner. */
const char *vars_get_cb(void *v, const char *key);
long vars_get_long(const struct vars *v, const char *key, long dflt);
double vars_get_double(const struct vars *v, const char *key, double dflt);
int vars_get_bool(const struct vars *v, const char *key, int dflt);
/* 0, ERR_INVALID (bad key) or ERR_NOMEM. */
int vars_set(struct vars *v, const char *key, const char *value);
int vars_valid_key(const char *key);
/* Merge a JSON object file; later values win. Errors name the file and key. */
int vars_load_file(struct vars *v, const char *path, int only_missing, char *err, size_t errlen);
/* Parse "K=V" (key upper-cased as isotovideo does). */
int vars_set_assignment(struct vars *v, const char *kv, char *err, size_t errlen);
/* Replace ${NAME} in every value with the environment's or the vars' NAME. */
int vars_expand(struct vars *v, char *err, size_t errlen);
int vars_save(const struct vars *v, const char *path);

#endif
