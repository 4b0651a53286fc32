/* SPDX-License-Identifier: MIT */
/* groups.h - job groups (openQA's JobGroup.pm): their rows as openQA's
 * JSON, creation, lookups by id and name, and the YAML document of job
 * templates a group may store. Errors come with the text to answer in msg. */
#ifndef VIGIL_GROUPS_H
#define VIGIL_GROUPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* The groups (one when id > 0, else all) as openQA's array. 0 and *out
 * (new array); ERR_NOT_FOUND (id > 0 and no such group); ERR_IO; the text in msg. */
int groups_list(struct db *db, int64_t id, json_t **out, char *msg, size_t msglen);

#define LIMIT_GROUP_NAME 1024        /* bytes of a group's name */
#define LIMIT_GROUP_TEXT (64u << 10) /* bytes of its description */

/* Create a group; parent_id and sort_order 0 for none, description may be
 * NULL. 0 and *id; ERR_INVALID (the name is taken, or the name or the
 * description is over its bound); ERR_IO; the text in msg. */
int groups_add(struct db *db, const char *name, int64_t parent_id, int64_t priority, int64_t sort_order,
	       const char *description, int64_t *id, char *msg, size_t msglen);

/* The retention settings of a group (openQA's names), each NULL for the
 * server's default. */
extern const char *const groups_retention_keys[]; /* ends with NULL */
/* Set retention key (one of groups_retention_keys) of group id to value,
 * or back to the default with has_value false. 0, ERR_INVALID (no such
 * key), ERR_NOT_FOUND, or a db error. */
int groups_set_retention(struct db *db, int64_t id, const char *key, bool has_value, int64_t value);
/* Set name, description (NULL: unchanged) and, when has_prio,
 * default_priority. 0, ERR_INVALID (name taken: msg says so),
 * ERR_NOT_FOUND, or a db error. */
int groups_update(struct db *db, int64_t id, const char *name, const char *description, bool has_prio, int64_t prio,
		  char *msg, size_t msglen);

/* 0 when group id exists, ERR_NOT_FOUND, or a db error. */
int groups_exists(struct db *db, int64_t id);
/* The id of the group named name. 0 and *id, ERR_NOT_FOUND, or a db error. */
int groups_by_name(struct db *db, const char *name, int64_t *id);
/* The name of group id into buf (unchanged when there is none). 0, ERR_NOT_FOUND, or a db error. */
int groups_name(struct db *db, int64_t id, char *buf, size_t len);
/* The group's default priority. 0 and *prio, ERR_NOT_FOUND, or a db error. */
int groups_default_priority(struct db *db, int64_t id, int64_t *prio);
/* True when the group's job templates come from a stored YAML document
 * (openQA then changes them only through that document). */
bool groups_has_yaml(struct db *db, int64_t id);

/* The group's stored YAML document (*yaml new string, NULL when none) and
 * default priority. 0, ERR_NOT_FOUND, or a db error. */
int groups_yaml(struct db *db, int64_t id, char **yaml, long *prio);
/* Store yaml as the group's document. 0 or a db error. */
int groups_set_yaml(struct db *db, int64_t id, const char *yaml);

/* Every group as [[id, name], ...] ordered by name. 0 and *out (new array) or a db error. */
int groups_all(struct db *db, json_t **out);

#endif
