/* SPDX-License-Identifier: MIT */
/* client_conf.h - openQA's client.conf: INI sections named after a server
 * ("[openqa.example.com]", "[127.0.0.1:9526]", "[http://host:9526]") with
 * "key =" and "secret =" lines, looked up the way openqa-cli and the
 * python client look them up. */
#ifndef VIGIL_CMD_CLIENT_CONF_H
#define VIGIL_CMD_CLIENT_CONF_H

#include <stddef.h>

#define LIMIT_CLIENT_CONF (64u * 1024u)  /* bytes of one client.conf */
#define CLIENT_CONF_VALUE 256            /* longest key or secret, NUL included */

struct client_cred {
	char key[CLIENT_CONF_VALUE];
	char secret[CLIENT_CONF_VALUE];
};

/* The section names that may hold url's credentials, most specific
 * first: "host:port", "host", then the URL without a trailing slash
 * ("http://host:port"). Writes up to max names of size CLIENT_CONF_VALUE
 * each into names; returns how many. */
size_t client_conf_sections(const char *url, char names[][CLIENT_CONF_VALUE], size_t max);

/* Find the first of the n section names in the INI text (len bytes) and
 * fill cred with its key and secret (the last line of each wins; white
 * space around '=' and at the end is dropped; '#' and ';' start comments).
 * 0 when found with both set; ERR_NOT_FOUND (no such section, or it lacks
 * key or secret: err says which); ERR_PROTO for a malformed line (err has
 * "line N: ..."); ERR_TOO_BIG over LIMIT_CLIENT_CONF. */
int client_conf_parse(const char *text, size_t len, char names[][CLIENT_CONF_VALUE], size_t n,
		      struct client_cred *cred, char *err, size_t errlen);

/* Credentials for url: from file when given (it must exist), else from
 * the first of $OPENQA_CONFIG/client.conf, ~/.config/openqa/client.conf,
 * /etc/openqa/client.conf, /usr/etc/openqa/client.conf that has a section
 * for url. The file used goes into used (may be NULL). 0, ERR_NOT_FOUND
 * (err lists what was searched), ERR_NOMEM, or a file/parse error with
 * the file named in err. */
int client_conf_lookup(const char *file, const char *url, struct client_cred *cred, char *used, size_t usedlen,
		       char *err, size_t errlen);

#endif
