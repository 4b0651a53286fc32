/* SPDX-License-Identifier: MIT */
/* events_amqp.c - the AMQP sink (librabbitmq), as openQA's AMQP plugin:
 * each event is published to a topic exchange (default "pubsub") with the
 * routing key PREFIX.openqa.KIND ("suse.openqa.job.done") and openQA's
 * event data as the JSON body, persistent; publisher confirms (the
 * broker's basic.ack) make a batch count as delivered. Owns one
 * connection and channel 1. */
#define LOG_MODULE "events"
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include "server/events/events_int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define AMQP_WAIT_S 30 /* for the connection, each reply, and the confirms of a batch */

struct amqp {
	const struct events_env *env;
	amqp_connection_state_t conn;
	uint64_t published, acked; /* delivery tags of this channel */
};

static int am_open(void **ctx, const struct events_env *env, char *err, size_t errlen)
{
	struct amqp *a = calloc(1, sizeof(*a));

	if (!a) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	a->env = env;
	*ctx = a;
	return 0;
}

static void am_reset(void *ctx)
{
	struct amqp *a = ctx;

	if (a->conn)
		amqp_destroy_connection(a->conn); /* closes the socket without the close handshake */
	a->conn = NULL;
	a->published = a->acked = 0;
}

/* An error text for a failed RPC. */
static void rpc_error(amqp_rpc_reply_t r, const char *what, char *err, size_t errlen)
{
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION)
		err_set(err, errlen, "AMQP: %s: %s", what, amqp_error_string2(r.library_error));
	else if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
		const amqp_connection_close_t *m = r.reply.decoded;
		err_set(err, errlen, "AMQP: %s: the broker closed the connection: %.*s", what, (int)m->reply_text.len,
			(const char *)m->reply_text.bytes);
	} else if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
		const amqp_channel_close_t *m = r.reply.decoded;
		err_set(err, errlen, "AMQP: %s: the broker closed the channel: %.*s", what, (int)m->reply_text.len,
			(const char *)m->reply_text.bytes);
	} else {
		err_set(err, errlen, "AMQP: %s failed", what);
	}
}

static int am_connect(struct amqp *a, char *err, size_t errlen)
{
	const struct events_config *cfg = a->env->cfg;
	struct amqp_connection_info ci;
	struct timeval tv = { AMQP_WAIT_S, 0 };
	amqp_socket_t *sock;
	amqp_rpc_reply_t r;
	char *url = strdup(cfg->amqp_url);

	if (!url) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	amqp_default_connection_info(&ci);
	if (amqp_parse_url(url, &ci) != AMQP_STATUS_OK) {
		err_set(err, errlen, "AMQP: cannot parse the url '%s'", cfg->amqp_url);
		free(url);
		return ERR_INVALID;
	}
	/* "amqp://host/" names the vhost "" to librabbitmq; openQA's default URL means "/" by it. */
	if (!ci.vhost || !*ci.vhost)
		ci.vhost = "/";
	a->conn = amqp_new_connection();
	sock = a->conn ? amqp_tcp_socket_new(a->conn) : NULL;
	if (!sock) {
		err_set(err, errlen, "out of memory");
		goto fail;
	}
	if (amqp_socket_open_noblock(sock, ci.host, ci.port, &tv) != AMQP_STATUS_OK) {
		err_set(err, errlen, "AMQP: cannot connect to %s:%d", ci.host, ci.port);
		goto fail;
	}
	(void)amqp_set_rpc_timeout(a->conn, &tv);
	r = amqp_login(a->conn, ci.vhost, 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, ci.user, ci.password);
	if (r.reply_type != AMQP_RESPONSE_NORMAL) {
		rpc_error(r, "login", err, errlen);
		goto fail;
	}
	amqp_channel_open(a->conn, 1);
	if ((r = amqp_get_rpc_reply(a->conn)).reply_type != AMQP_RESPONSE_NORMAL) {
		rpc_error(r, "channel.open", err, errlen);
		goto fail;
	}
	amqp_exchange_declare(a->conn, 1, amqp_cstring_bytes(cfg->amqp_exchange), amqp_cstring_bytes("topic"), 0, 1, 0,
			      0, amqp_empty_table);
	if ((r = amqp_get_rpc_reply(a->conn)).reply_type != AMQP_RESPONSE_NORMAL) {
		rpc_error(r, "exchange.declare", err, errlen);
		goto fail;
	}
	amqp_confirm_select(a->conn, 1);
	if ((r = amqp_get_rpc_reply(a->conn)).reply_type != AMQP_RESPONSE_NORMAL) {
		rpc_error(r, "confirm.select", err, errlen);
		goto fail;
	}
	a->published = a->acked = 0;
	free(url);
	log_info("amqp: connected to %s:%d, exchange '%s'", ci.host, ci.port, cfg->amqp_exchange);
	return 0;
fail:
	free(url);
	am_reset(a);
	return ERR_IO;
}

static int am_send(void *ctx, const struct events_event *ev, bool *confirmed, char *err, size_t errlen)
{
	struct amqp *a = ctx;
	const struct events_config *cfg = a->env->cfg;
	amqp_basic_properties_t props;
	char key[128], id[32], *body;
	int rc;

	*confirmed = false;
	if (!a->conn && (rc = am_connect(a, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s%sopenqa.%s", cfg->amqp_prefix, cfg->amqp_prefix[0] ? "." : "", ev->kind);
	snprintf(id, sizeof(id), "%lld", (long long)ev->id);
	body = json_dumps(ev->data, JSON_COMPACT | JSON_SORT_KEYS);
	if (!body) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	memset(&props, 0, sizeof(props));
	props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG;
	props.content_type = amqp_cstring_bytes("application/json");
	props.delivery_mode = 2; /* persistent */
	props.message_id = amqp_cstring_bytes(id);
	rc = amqp_basic_publish(a->conn, 1, amqp_cstring_bytes(cfg->amqp_exchange), amqp_cstring_bytes(key), 0, 0,
				&props, amqp_cstring_bytes(body));
	free(body);
	if (rc != AMQP_STATUS_OK) {
		err_set(err, errlen, "AMQP: publish %s: %s", key, amqp_error_string2(rc));
		return ERR_IO;
	}
	a->published++;
	return 0;
}

/* Wait until the broker acknowledged every message published. */
static int am_flush(void *ctx, char *err, size_t errlen)
{
	struct amqp *a = ctx;
	struct timeval tv = { 0, 200000 };
	long waited_ms = 0;

	while (a->conn && a->acked < a->published) {
		amqp_frame_t f;
		int rc = amqp_simple_wait_frame_noblock(a->conn, &f, &tv);
		if (rc == AMQP_STATUS_TIMEOUT) {
			waited_ms += 200;
			if (atomic_load(a->env->stop) || waited_ms >= AMQP_WAIT_S * 1000L) {
				err_set(err, errlen, "AMQP: %llu of %llu messages not confirmed within %d s",
					(unsigned long long)(a->published - a->acked), (unsigned long long)a->published,
					AMQP_WAIT_S);
				return ERR_TIMEOUT;
			}
			continue;
		}
		if (rc != AMQP_STATUS_OK) {
			err_set(err, errlen, "AMQP: waiting for confirms: %s", amqp_error_string2(rc));
			return ERR_IO;
		}
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		if (f.payload.method.id == AMQP_BASIC_ACK_METHOD) {
			const amqp_basic_ack_t *m = f.payload.method.decoded;
			if (m->delivery_tag > a->acked)
				a->acked = m->delivery_tag; /* multiple or not: tags come in order */
		} else if (f.payload.method.id == AMQP_BASIC_NACK_METHOD) {
			err_set(err, errlen, "AMQP: the broker refused message %llu",
				(unsigned long long)((const amqp_basic_nack_t *)f.payload.method.decoded)->delivery_tag);
			return ERR_IO;
		} else if (f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
			   f.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD) {
			err_set(err, errlen, "AMQP: the broker closed the %s",
				f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ? "channel" : "connection");
			return ERR_CLOSED;
		}
	}
	return 0;
}

static void am_close(void *ctx)
{
	struct amqp *a = ctx;

	if (a->conn) {
		struct timeval tv = { 2, 0 }; /* a broker that is gone must not hold the server's stop */
		(void)amqp_set_rpc_timeout(a->conn, &tv);
		(void)amqp_channel_close(a->conn, 1, AMQP_REPLY_SUCCESS);
		(void)amqp_connection_close(a->conn, AMQP_REPLY_SUCCESS);
	}
	am_reset(a);
	free(a);
}

const struct events_sink_ops events__amqp_ops = {
	"amqp", NULL, am_open, am_send, am_flush, NULL, am_reset, am_close,
};
