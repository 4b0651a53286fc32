/* SPDX-License-Identifier: MIT */
/* bugref.c - bug references in comment texts, the markers and tracker URLs
 * openQA knows. A hand-written scanner over explicit lengths instead of a
 * regular expression engine: each reference is marker, optional '#repo',
 * '#', id ([A-Z]+- then digits). Owns nothing; allocates only results. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "server/store/bugref.h"
#include "util/buf.h"
#include "util/banned.h" /* last: after every system header */

struct tracker {
	const char *marker;
	const char *url;  /* the URL an id is appended to */
};

/* bsc before bnc: a URL of their common tracker reads back as bsc. */
static const struct tracker trackers[] = {
	{ "bsc", "https://bugzilla.suse.com/show_bug.cgi?id=" },
	{ "bnc", "https://bugzilla.suse.com/show_bug.cgi?id=" },
	{ "boo", "https://bugzilla.opensuse.org/show_bug.cgi?id=" },
	{ "bgo", "https://bugzilla.gnome.org/show_bug.cgi?id=" },
	{ "bmo", "https://bugzilla.mozilla.org/show_bug.cgi?id=" },
	{ "brc", "https://bugzilla.redhat.com/show_bug.cgi?id=" },
	{ "bko", "https://bugzilla.kernel.org/show_bug.cgi?id=" },
	{ "poo", "https://progress.opensuse.org/issues/" },
	{ "gh", "https://github.com/" },
	{ "kde", "https://bugs.kde.org/show_bug.cgi?id=" },
	{ "kdi", "https://invent.kde.org/" },
	{ "fdo", "https://bugs.freedesktop.org/show_bug.cgi?id=" },
	{ "jsc", "https://jira.suse.com/browse/" },
	{ "pio", "https://pagure.io/" },
	{ "ggo", "https://gitlab.gnome.org/" },
	{ "gfs", "https://gitlab.com/fedora/sigs/" },
	{ "ffo", "https://forge.fedoraproject.org/" },
};

/* URL roots turned back into references: the old Novell tracker, then
 * every tracker's own URL. */
static const struct tracker url_alias = { "bsc", "https://bugzilla.novell.com/show_bug.cgi?id=" };

#define NTRACKERS (sizeof(trackers) / sizeof(trackers[0]))
#define NROOTS (1 + NTRACKERS)

static const struct tracker *url_root(size_t t)
{
	return t == 0 ? &url_alias : &trackers[t - 1];
}

/* Perl's \w on decoded text: ASCII word characters and every non-ASCII
 * character (a UTF-8 byte >= 0x80 is part of one). */
static bool is_word(unsigned char c)
{
	return isalnum(c) || c == '_' || c >= 0x80;
}

static bool is_repo_char(unsigned char c)
{
	return c && c != '#' && !isspace(c) && c != '<' && c != '>' && c != ',';
}

/* Length of an id "[A-Z]+-" digits at s (uppercase letters only unless
 * nocase), 0 when there is none. */
static size_t id_len(const char *s, bool nocase)
{
	size_t i = 0, d;

	while (nocase ? isalpha((unsigned char)s[i]) : isupper((unsigned char)s[i]))
		i++;
	if (i > 0) {
		if (s[i] != '-')
			i = 0; /* letters without '-': the id is digits only */
		else
			i++;
	}
	for (d = i; isdigit((unsigned char)s[d]); d++)
		;
	return d > i ? d : 0;
}

/* May a reference start at text + i? After ^, white space, ',' or a tag
 * of one to six word characters ("<b>", "<li>"). */
static bool start_ok(const char *text, size_t i)
{
	size_t k;

	if (i == 0 || isspace((unsigned char)text[i - 1]) || text[i - 1] == ',')
		return true;
	if (text[i - 1] != '>')
		return false;
	for (k = 2; k <= 7 && k <= i; k++) {
		if (text[i - k] == '<')
			return k >= 3;
		if (!is_word((unsigned char)text[i - k]))
			return false;
	}
	return false;
}

/* The length of a reference at s (the marker known to start it), 0 when
 * the rest does not form one. */
static size_t match_at(const char *s, size_t mlen)
{
	const char *p = s + mlen;
	int hash1;

	/* marker '#'? repo? '#' id: try with the optional '#' first, as the regex would. */
	for (hash1 = 1; hash1 >= 0; hash1--) {
		const char *q = p;
		size_t r = 0, n;
		if (hash1) {
			if (*q != '#')
				continue;
			q++;
		}
		while (is_repo_char((unsigned char)q[r]))
			r++;
		/* The repo is all of the run or nothing: a shorter one is followed by a repo character, not '#'. */
		if (q[r] != '#')
			r = 0;
		if (q[r] != '#')
			continue;
		n = id_len(q + r + 1, false);
		if (!n)
			continue;
		if (is_word((unsigned char)q[r + 1 + n]) || q[r + 1 + n] == '"')
			continue;
		return (size_t)(q + r + 1 + n - s);
	}
	return 0;
}

json_t *bugref_find_all(const char *text)
{
	json_t *a = json_array();
	size_t i, t;

	if (!a || !text)
		return a;
	for (i = 0; text[i] && json_array_size(a) < BUGREF_MAX; i++) {
		if (!start_ok(text, i))
			continue;
		for (t = 0; t < NTRACKERS; t++) {
			size_t ml = strlen(trackers[t].marker), n;
			if (strncmp(text + i, trackers[t].marker, ml))
				continue;
			n = match_at(text + i, ml);
			if (n) {
				/* NULL on OOM, as documented: a reference lost would
				 * leave a job unlabeled (builds.c's "labeled") */
				if (json_array_append_new(a, json_stringn(text + i, n))) {
					json_decref(a);
					return NULL;
				}
				i += n - 1;
				break;
			}
		}
	}
	return a;
}

/* "/issues/", "/issue/", "/pulls/", "/pull/", "/work_items/", each also
 * with "/-" before it (gitlab): the length at s, 0 if none. */
static size_t kind_len(const char *s)
{
	static const char *const kinds[] = { "issues/", "issue/", "pulls/", "pull/", "work_items/" };
	size_t i, off = 0;

	if (*s != '/')
		return 0;
	off = 1;
	if (s[1] == '-' && s[2] == '/')
		off = 3;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncasecmp(s + off, kinds[i], strlen(kinds[i])))
			return off + strlen(kinds[i]);
	return 0;
}

static bool id_ends_ok(const char *s, size_t n)
{
	return n && !is_word((unsigned char)s[n]);
}

char *bugref_from_urls(const char *text)
{
	struct buf out;
	size_t i = 0, t;

	buf_init(&out, 2 * LIMIT_COMMENT_TEXT + 64);
	if (!text)
		return NULL;
	while (text[i]) {
		bool done = false;
		if (i == 0 || !strchr("\"([", text[i - 1])) {
			for (t = 0; t < NROOTS && !done; t++) {
				const char *root = url_root(t)->url, *s = text + i;
				size_t rl = strlen(root), r, k, n;
				if (strncasecmp(s, root, rl))
					continue;
				s += rl;
				/* Optional "<repo>/issues/" with the shortest repo that leads to an id;
				 * unlike openQA's pattern the repo never spans white space, so one
				 * URL cannot swallow the text up to the next. */
				for (r = 0; s[r] && !isspace((unsigned char)s[r]); r++) {
					k = kind_len(s + r);
					if (!k)
						continue;
					n = id_len(s + r + k, true);
					if (!id_ends_ok(s + r + k, n))
						continue;
					if (buf_puts(&out, url_root(t)->marker) ||
					    (r && (buf_puts(&out, "#") || buf_append(&out, s, r))) || buf_puts(&out, "#") ||
					    buf_append(&out, s + r + k, n))
						goto fail;
					i += rl + r + k + n;
					done = true;
					break;
				}
				if (done)
					break;
				n = id_len(s, true);
				if (!id_ends_ok(s, n))
					continue;
				if (buf_puts(&out, url_root(t)->marker) || buf_puts(&out, "#") || buf_append(&out, s, n))
					goto fail;
				i += rl + n;
				done = true;
			}
		}
		if (!done) {
			if (buf_append(&out, text + i, 1))
				goto fail;
			i++;
		}
	}
	if (!out.data)
		return strdup("");
	return buf_steal(&out);
fail:
	buf_release(&out);
	return NULL;
}

int bugref_force_result(const char *text, char *result, size_t len)
{
	static const char label[] = "label:force_result:";
	const char *p;

	for (p = text; text && (p = strstr(p, label)); p++) {
		size_t n;
		if (p > text && is_word((unsigned char)p[-1]))
			continue;
		for (n = 0; is_word((unsigned char)p[sizeof(label) - 1 + n]); n++)
			;
		if (!n)
			continue;
		if (len) {
			if (n >= len)
				n = len - 1;
			memcpy(result, p + sizeof(label) - 1, n);
			result[n] = '\0';
		}
		return 1;
	}
	return 0;
}
