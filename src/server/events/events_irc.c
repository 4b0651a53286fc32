/* SPDX-License-Identifier: MIT */
/* events_irc.c - the IRC sink, as openQA's bot announced builds: one
 * PRIVMSG line per event to one channel. Registers (PASS, NICK, USER),
 * waits for the welcome, joins, answers PINGs; a batch of lines counts as
 * delivered once the server answered a PING sent after them (it handles a
 * client's lines in order), so a server that restarts meanwhile gets them
 * again. Owns one TCP socket. */
#define LOG_MODULE "events"
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "server/events/events_int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define IRC_WAIT_S 30     /* for the welcome, the join and a PONG */
#define IRC_LINE_MAX 510  /* RFC 1459, without CR LF */

struct irc {
	const struct events_env *env;
	int fd;
	char in[8192];
	size_t inlen;
	char nick[64];
	unsigned pings;
	bool pending;     /* lines sent since the last PONG */
};

static int irc_open(void **ctx, const struct events_env *env, char *err, size_t errlen)
{
	struct irc *c = calloc(1, sizeof(*c));

	if (!c) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	c->env = env;
	c->fd = -1;
	*ctx = c;
	return 0;
}

static void irc_reset(void *ctx)
{
	struct irc *c = ctx;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->inlen = 0;
	c->pending = false;
}

static int put(struct irc *c, const char *line, char *err, size_t errlen)
{
	char buf[IRC_LINE_MAX + 3];
	size_t n = strlen(line), off = 0;

	if (n > IRC_LINE_MAX)
		n = IRC_LINE_MAX;
	memcpy(buf, line, n);
	memcpy(buf + n, "\r\n", 2);
	n += 2;
	while (off < n) {
		ssize_t w = send(c->fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err_set(err, errlen, "IRC: send: %s", w < 0 ? strerror(errno) : "closed");
			return ERR_IO;
		}
		off += (size_t)w;
	}
	return 0;
}

/* Read lines until one satisfies want (which returns true to stop) or
 * wait_ms passes (ERR_TIMEOUT; wait_ms 0: only what is there, then 0).
 * PINGs are answered on the way. */
static int read_until(struct irc *c, bool (*want)(struct irc *c, const char *line, void *arg), void *arg,
		      long wait_ms, char *err, size_t errlen)
{
	struct timespec t0, now;
	long left = wait_ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *nl;
		struct pollfd p = { c->fd, POLLIN, 0 };
		int pr;
		ssize_t r;

		while ((nl = memchr(c->in, '\n', c->inlen))) {
			size_t ll = (size_t)(nl - c->in);
			char line[sizeof(c->in)];
			memcpy(line, c->in, ll);
			line[ll] = '\0';
			if (ll && line[ll - 1] == '\r')
				line[ll - 1] = '\0';
			memmove(c->in, nl + 1, c->inlen - ll - 1);
			c->inlen -= ll + 1;
			if (!strncmp(line, "PING ", 5)) {
				line[1] = 'O'; /* PONG with the same token */
				if (put(c, line, err, errlen))
					return ERR_IO;
				continue;
			}
			if (!strncmp(line, "ERROR ", 6)) {
				err_set(err, errlen, "IRC: %s", line);
				return ERR_CLOSED;
			}
			if (want && want(c, line, arg))
				return 0;
		}
		if (c->inlen == sizeof(c->in)) {
			err_set(err, errlen, "IRC: a line over %zu bytes", sizeof(c->in));
			return ERR_PROTO;
		}
		if (atomic_load(c->env->stop)) {
			err_set(err, errlen, "stopping");
			return ERR_CLOSED;
		}
		pr = poll(&p, 1, left > 200 ? 200 : (int)left);
		if (pr < 0 && errno != EINTR) {
			err_set(err, errlen, "IRC: poll: %s", strerror(errno));
			return ERR_IO;
		}
		if (pr > 0) {
			r = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, 0);
			if (r <= 0) {
				err_set(err, errlen, "IRC: the server closed the connection");
				return ERR_CLOSED;
			}
			c->inlen += (size_t)r;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = wait_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			if (!wait_ms)
				return 0;
			err_set(err, errlen, "IRC: no answer within %d s", IRC_WAIT_S);
			return ERR_TIMEOUT;
		}
	}
}

/* The numeric reply of a line (":server 001 nick :Welcome"), or 0. */
static int numeric(const char *line)
{
	const char *sp = line[0] == ':' ? strchr(line, ' ') : NULL;
	if (!sp || strlen(sp) < 5 || sp[4] != ' ' || sp[1] < '0' || sp[1] > '9')
		return 0;
	return (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
}

struct reg_state {
	bool welcomed, taken, refused;
	char msg[256];
};

static bool on_register(struct irc *c, const char *line, void *arg)
{
	struct reg_state *s = arg;
	int n = numeric(line);

	(void)c;
	if (n == 1)
		s->welcomed = true;
	else if (n == 433) /* nick in use */
		s->taken = true;
	else if (n == 464 || n == 465) { /* bad password, banned */
		s->refused = true;
		snprintf(s->msg, sizeof(s->msg), "%s", line);
	}
	return s->welcomed || s->taken || s->refused;
}

static bool on_join(struct irc *c, const char *line, void *arg)
{
	int n = numeric(line);
	int *st = arg;

	(void)c;
	if (n == 366) /* end of NAMES: joined */
		*st = 1;
	else if (n >= 400 && n < 600 && n != 433)
		*st = -n;
	return *st != 0;
}

static int irc_connect(struct irc *c, char *err, size_t errlen)
{
	const struct events_config *cfg = c->env->cfg;
	char host[256], *port, line[600];
	struct addrinfo hints, *res = NULL, *ai;
	struct reg_state rs;
	int rc, joined = 0, tries;

	snprintf(host, sizeof(host), "%s", cfg->irc_server);
	port = strrchr(host, ':');
	if (port)
		*port++ = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port && *port ? port : "6667", &hints, &res))) {
		err_set(err, errlen, "IRC: %s: %s", cfg->irc_server, gai_strerror(rc));
		return ERR_IO;
	}
	for (ai = res; ai && c->fd < 0; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (c->fd >= 0 && connect(c->fd, ai->ai_addr, ai->ai_addrlen)) {
			close(c->fd);
			c->fd = -1;
		}
	}
	freeaddrinfo(res);
	if (c->fd < 0) {
		err_set(err, errlen, "IRC: cannot connect to %s", cfg->irc_server);
		return ERR_IO;
	}
	snprintf(c->nick, sizeof(c->nick), "%s", cfg->irc_nick);
	if (cfg->irc_password) {
		snprintf(line, sizeof(line), "PASS %s", cfg->irc_password);
		if (put(c, line, err, errlen))
			return ERR_IO;
	}
	for (tries = 0; tries < 5; tries++) {
		memset(&rs, 0, sizeof(rs));
		snprintf(line, sizeof(line), "NICK %s", c->nick);
		if (put(c, line, err, errlen))
			return ERR_IO;
		if (!tries) {
			snprintf(line, sizeof(line), "USER %s 0 * :vigil event notifier", cfg->irc_nick);
			if (put(c, line, err, errlen))
				return ERR_IO;
		}
		if ((rc = read_until(c, on_register, &rs, IRC_WAIT_S * 1000L, err, errlen)))
			return rc;
		if (rs.refused) {
			err_set(err, errlen, "IRC: refused: %s", rs.msg);
			return ERR_IO;
		}
		if (rs.welcomed)
			break;
		/* The nick is taken (an earlier connection not yet gone): another. */
		if (strlen(c->nick) + 2 < sizeof(c->nick))
			strncat(c->nick, "_", sizeof(c->nick) - strlen(c->nick) - 1);
	}
	if (!rs.welcomed) {
		err_set(err, errlen, "IRC: nick '%s' and its variants are taken", cfg->irc_nick);
		return ERR_IO;
	}
	snprintf(line, sizeof(line), "JOIN %s", cfg->irc_channel);
	if (put(c, line, err, errlen) || (rc = read_until(c, on_join, &joined, IRC_WAIT_S * 1000L, err, errlen)))
		return ERR_IO;
	if (joined < 0) {
		err_set(err, errlen, "IRC: cannot join %s (reply %d)", cfg->irc_channel, -joined);
		return ERR_IO;
	}
	log_info("irc: joined %s on %s as %s", cfg->irc_channel, cfg->irc_server, c->nick);
	return 0;
}

static int irc_send(void *ctx, const struct events_event *ev, bool *confirmed, char *err, size_t errlen)
{
	struct irc *c = ctx;
	char *text, line[IRC_LINE_MAX + 1];
	int rc;

	*confirmed = false;
	if (c->fd < 0 && (rc = irc_connect(c, err, errlen)))
		return rc;
	/* Answer PINGs and notice a closed connection between lines. */
	if ((rc = read_until(c, NULL, NULL, 0, err, errlen)))
		return rc;
	text = events__line(c->env->base_url, ev);
	if (!text) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	snprintf(line, sizeof(line), "PRIVMSG %s :%s", c->env->cfg->irc_channel, text);
	free(text);
	rc = put(c, line, err, errlen);
	if (!rc)
		c->pending = true;
	return rc;
}

struct pong_wait {
	char token[32];
};

static bool on_pong(struct irc *c, const char *line, void *arg)
{
	const struct pong_wait *w = arg;
	const char *t = strstr(line, " PONG ");

	(void)c;
	return t && strstr(t, w->token);
}

static int irc_flush(void *ctx, char *err, size_t errlen)
{
	struct irc *c = ctx;
	struct pong_wait w;
	char line[64];

	if (!c->pending)
		return 0;
	snprintf(w.token, sizeof(w.token), "vigil-%u", ++c->pings);
	snprintf(line, sizeof(line), "PING :%s", w.token);
	if (put(c, line, err, errlen) || read_until(c, on_pong, &w, IRC_WAIT_S * 1000L, err, errlen))
		return ERR_IO;
	c->pending = false;
	return 0;
}

/* Between events: answer the server's PINGs, or it drops an idle notifier. */
static void irc_idle(void *ctx)
{
	struct irc *c = ctx;
	char err[256];

	if (c->fd >= 0 && read_until(c, NULL, NULL, 0, err, sizeof(err))) {
		log_debug("irc: %s; connecting again with the next event", err);
		irc_reset(c);
	}
}

static void irc_close(void *ctx)
{
	struct irc *c = ctx;
	char err[64];

	if (c->fd >= 0)
		(void)put(c, "QUIT :vigil stops", err, sizeof(err)); /* a courtesy: the socket closes anyway */
	irc_reset(c);
	free(c);
}

const struct events_sink_ops events__irc_ops = {
	"irc", "build.done", irc_open, irc_send, irc_flush, irc_idle, irc_reset, irc_close,
};
