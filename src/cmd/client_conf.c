/* SPDX-License-Identifier: MIT */
/* client_conf.c - client.conf lookup: which files and sections hold a
 * server's key and secret; the INI text itself is read by util/conf.c.
 * Owns nothing beyond the caller's buffers. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/client_conf.h"
#include "util/buf.h"
#include "util/conf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

size_t client_conf_sections(const char *url, char names[][CLIENT_CONF_VALUE], size_t max)
{
	const char *hp = strstr(url, "://");
	size_t n = 0, hl, ul;
	const char *colon;

	hp = hp ? hp + 3 : url;
	hl = strcspn(hp, "/?#");
	if (hl == 0 || hl >= CLIENT_CONF_VALUE)
		return 0;
	/* host:port (the python client's netloc) */
	if (n < max) {
		memcpy(names[n], hp, hl);
		names[n++][hl] = '\0';
	}
	/* host alone (openqa-cli's), without brackets of an IPv6 address */
	colon = hp[0] == '[' ? memchr(hp, ']', hl) : memchr(hp, ':', hl);
	if (colon && n < max) {
		size_t h = (size_t)(colon - hp);
		const char *s = hp;
		if (hp[0] == '[') {
			s++;
			h--;
		}
		if (h && (h != hl || hp[0] == '[')) {
			memcpy(names[n], s, h);
			names[n++][h] = '\0';
		}
	}
	/* the whole base URL */
	ul = (size_t)(hp - url) + hl;
	if (hp != url && ul < CLIENT_CONF_VALUE && n < max) {
		memcpy(names[n], url, ul);
		names[n++][ul] = '\0';
	}
	return n;
}

static int copy_value(const struct conf_entry *e, char *dst, char *err, size_t errlen)
{
	size_t vl = strlen(e->value);

	if (vl >= CLIENT_CONF_VALUE) {
		err_set(err, errlen, "line %d: value longer than %d bytes", e->line, CLIENT_CONF_VALUE - 1);
		return ERR_PROTO;
	}
	memcpy(dst, e->value, vl + 1);
	return 0;
}

int client_conf_parse(const char *text, size_t len, char names[][CLIENT_CONF_VALUE], size_t n,
		      struct client_cred *cred, char *err, size_t errlen)
{
	size_t i, best = n;
	struct conf c;
	struct client_cred found;
	int rc;

	if (len > LIMIT_CLIENT_CONF) {
		err_set(err, errlen, "%zu bytes, over the limit of %u", len, LIMIT_CLIENT_CONF);
		return ERR_TOO_BIG;
	}
	conf_init(&c);
	if ((rc = conf_parse(&c, text, len, err, errlen)))
		goto out;
	memset(&found, 0, sizeof(found));
	for (i = 0; i < n && best == n; i++) {
		const struct conf_entry *k = conf_get(&c, names[i], "key"), *s = conf_get(&c, names[i], "secret");
		if (!k && !s)
			continue;
		best = i;
		if ((k && (rc = copy_value(k, found.key, err, errlen))) ||
		    (s && (rc = copy_value(s, found.secret, err, errlen))))
			goto out;
	}
	rc = ERR_NOT_FOUND;
	if (best == n) {
		err_set(err, errlen, "no section [%s]", n ? names[0] : "?");
		goto out;
	}
	if (!found.key[0] || !found.secret[0]) {
		err_set(err, errlen, "section [%s] has no '%s =' line", names[best], found.key[0] ? "secret" : "key");
		goto out;
	}
	*cred = found;
	rc = 0;
out:
	conf_release(&c);
	return rc;
}

static int try_file(const char *path, char names[][CLIENT_CONF_VALUE], size_t n, struct client_cred *cred,
		    char *err, size_t errlen)
{
	struct buf b;
	char msg[256];
	int rc;

	buf_init(&b, LIMIT_CLIENT_CONF);
	rc = file_read_all(path, &b);
	if (rc) {
		err_set(err, errlen, "'%s': %s", path, rc == ERR_TOO_BIG ? "over 64 KiB" : err_str(rc));
		buf_release(&b);
		return rc;
	}
	rc = client_conf_parse(b.data ? b.data : "", b.len, names, n, cred, msg, sizeof(msg));
	if (rc)
		err_set(err, errlen, "'%s': %s", path, msg);
	buf_release(&b);
	return rc;
}

int client_conf_lookup(const char *file, const char *url, struct client_cred *cred, char *used, size_t usedlen,
		       char *err, size_t errlen)
{
	char names[3][CLIENT_CONF_VALUE], *paths[4] = { NULL }, searched[1024] = "";
	const char *env = getenv("OPENQA_CONFIG"), *home = getenv("HOME");
	size_t n = client_conf_sections(url, names, 3), i, np = 0;
	int rc = ERR_NOT_FOUND;

	if (!n) {
		err_set(err, errlen, "cannot tell the host name of '%s'", url);
		return ERR_INVALID;
	}
	if (file) {
		rc = try_file(file, names, n, cred, err, errlen);
		if (!rc && used)
			snprintf(used, usedlen, "%s", file);
		return rc;
	}
	if (env && *env)
		paths[np++] = path_join(env, "client.conf");
	if (home && *home)
		paths[np++] = path_join(home, ".config/openqa/client.conf");
	paths[np++] = str_dup("/etc/openqa/client.conf");
	paths[np++] = str_dup("/usr/etc/openqa/client.conf");
	for (i = 0; i < np; i++)
		if (!paths[i]) { /* a place not looked at could hold the credentials */
			err_set(err, errlen, "out of memory");
			rc = ERR_NOMEM;
			goto out;
		}
	for (i = 0; i < np; i++) {
		char msg[512];
		int r;
		if (!file_exists(paths[i]))
			continue;
		r = try_file(paths[i], names, n, cred, msg, sizeof(msg));
		if (r == 0) {
			if (used)
				snprintf(used, usedlen, "%s", paths[i]);
			rc = 0;
			break;
		}
		if (r != ERR_NOT_FOUND || strstr(msg, "has no")) {
			/* A broken file, or the right section half filled: say so rather than look further. */
			err_set(err, errlen, "%s", msg);
			rc = r;
			break;
		}
		if (strlen(searched) + strlen(paths[i]) + 3 < sizeof(searched)) {
			if (searched[0])
				strncat(searched, ", ", sizeof(searched) - strlen(searched) - 1);
			strncat(searched, paths[i], sizeof(searched) - strlen(searched) - 1);
		}
	}
	if (rc == ERR_NOT_FOUND)
		err_set(err, errlen, "no section [%s] or [%s] in %s", names[0], n > 1 ? names[1] : names[0],
			searched[0] ? searched : "any client.conf ($OPENQA_CONFIG, ~/.config/openqa, /etc/openqa)");
out:
	for (i = 0; i < np; i++)
		free(paths[i]);
	return rc;
}
