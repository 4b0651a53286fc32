/* SPDX-License-Identifier: MIT */
/* bugref.h - openQA's bug references in comment texts: "bsc#123",
 * "poo#45", "gh#owner/repo#12", "jsc#PED-7" found in a text, and bug
 * tracker URLs rewritten into that short form when a comment is stored.
 * Pure text functions: no database, no I/O. */
#ifndef VIGIL_BUGREF_H
#define VIGIL_BUGREF_H

#include <jansson.h>
#include <stddef.h>

/* Longest comment text the server stores (bytes). */
#define LIMIT_COMMENT_TEXT (64u * 1024u)
/* Most bug references reported for one text. */
#define BUGREF_MAX 256

/* Every bug reference in text, in order of appearance, as a new JSON
 * array of strings ("boo#123"). A reference counts only at the start of
 * the text or after white space, a comma or a short HTML tag, and only when
 * no word character or '"' follows it, as openQA's. NULL on OOM. */
json_t *bugref_find_all(const char *text);

/* A new copy of text with every known bug tracker URL replaced by its
 * reference ("https://bugzilla.suse.com/show_bug.cgi?id=1" -> "bsc#1",
 * "https://github.com/o/r/issues/5" -> "gh#o/r#5"); URLs right after '"',
 * '(' or '[' (markdown links) are kept. NULL on OOM. */
char *bugref_from_urls(const char *text);

/* The result named by the first "label:force_result:RESULT[:description]"
 * label in text (a label starts at the text's start or after a non-word
 * character) into result (len bytes, cut to fit). 1 when there is one,
 * 0 otherwise. */
int bugref_force_result(const char *text, char *result, size_t len);

#endif
