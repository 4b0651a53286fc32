/* SPDX-License-Identifier: MIT */
/* livestream.c - server-sent event streams of the live view (see
 * livestream.h). Each watched job keeps its newest events as shared,
 * reference-counted texts (frame, status, end) and a tail of the runner
 * output; each stream remembers which of them its client has. The I/O
 * thread's content reader copies the next one out, or suspends the
 * connection when there is none; publishing resumes the job's suspended
 * streams. Every field below is guarded by the hub's lock. */
#define LOG_MODULE "live"
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "server/api/livestream.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* What the reader asks libmicrohttpd for per call. */
#define LIVESTREAM_BLOCK (32u << 10)

/* An event's text, shared by the streams sending it. */
struct blob {
	int refs;
	size_t len;
	char data[];
};

struct stream;

/* A text channel's newest output: its last len bytes (whole lines) of
 * end bytes ever published. */
struct text_ch {
	char *buf;
	size_t len;
	uint64_t end;
};

enum { CH_LOG, CH_SERIAL, CH_COUNT }; /* events "log" and "serial" */
static const char *const ch_event[CH_COUNT] = { "log", "serial" };

struct job {
	int64_t id;
	struct job *next;
	struct stream *streams;
	struct blob *frame;       /* the newest frame event */
	uint64_t frame_ver;
	json_t *status;           /* everything known, merged */
	struct blob *status_ev;
	uint64_t status_ver;
	struct text_ch text[CH_COUNT]; /* the runner's output; the guest's serial output */
	struct blob *end_ev;      /* set once the job is over */
};

struct stream {
	struct livestream *hub;
	struct job *job;
	struct stream *next, *prev;  /* the job's */
	struct MHD_Connection *con;
	uint64_t client;
	bool suspended;   /* by the reader; resumed by whoever publishes */
	bool started;     /* the retry hint went out */
	bool heartbeat;   /* a comment is due */
	bool end_sent;
	bool gone;        /* the client closed its end: close ours */
	uint64_t frame_ver, status_ver, text_pos[CH_COUNT]; /* what the client has */
	double last_write;                       /* monotonic */
	struct blob *cur;                        /* being sent, from off */
	size_t off;
};

struct livestream {
	pthread_mutex_t lock;
	struct job *jobs;
	size_t nstreams;
	bool closing;
};

static struct blob *blob_new(size_t len)
{
	struct blob *b = malloc(sizeof(*b) + len + 1);

	if (b) {
		b->refs = 1;
		b->len = len;
		b->data[len] = '\0';
	}
	return b;
}

/* A blob holding "event: NAME\ndata: DATA\n\n"; NULL on OOM. */
static struct blob *blob_event(const char *name, const char *data)
{
	size_t n = strlen(name) + strlen(data) + sizeof("event: \ndata: \n\n");
	struct blob *b = blob_new(n - 1);

	if (b)
		snprintf(b->data, n, "event: %s\ndata: %s\n\n", name, data);
	return b;
}

static void blob_unref(struct blob *b)
{
	if (b && --b->refs == 0)
		free(b);
}

static struct blob *blob_ref(struct blob *b)
{
	b->refs++;
	return b;
}

int livestream_new(struct livestream **out)
{
	struct livestream *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return ERR_NOMEM;
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

static void job_free(struct job *j)
{
	blob_unref(j->frame);
	blob_unref(j->status_ev);
	blob_unref(j->end_ev);
	json_decref(j->status);
	for (int c = 0; c < CH_COUNT; c++)
		free(j->text[c].buf);
	free(j);
}

void livestream_free(struct livestream *h)
{
	struct job *j, *next;

	if (!h)
		return;
	for (j = h->jobs; j; j = next) {
		next = j->next;
		job_free(j);
	}
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* Resume the suspended streams of j (all jobs when j is NULL). */
static void wake(struct livestream *h, struct job *j)
{
	struct job *k;
	struct stream *s;

	for (k = j ? j : h->jobs; k; k = j ? NULL : k->next)
		for (s = k->streams; s; s = s->next)
			if (s->suspended) {
				s->suspended = false;
				MHD_resume_connection(s->con);
			}
}

void livestream_close(struct livestream *h)
{
	pthread_mutex_lock(&h->lock);
	h->closing = true;
	wake(h, NULL);
	pthread_mutex_unlock(&h->lock);
}

static struct job *job_find(struct livestream *h, int64_t id)
{
	struct job *j;

	for (j = h->jobs; j && j->id != id; j = j->next)
		;
	return j;
}

/* A JSON string of text; bytes that are not UTF-8 (a cut character)
 * become '?'. NULL on OOM. */
static json_t *text_json(const char *text, size_t len)
{
	json_t *t = json_stringn(text, len);
	char *copy;
	size_t i;

	if (t || !(copy = malloc(len + 1)))
		return t;
	for (i = 0; i < len; i++)
		copy[i] = (unsigned char)text[i] >= 0x80 || !text[i] ? '?' : text[i];
	t = json_stringn(copy, len);
	free(copy);
	return t;
}

/* The next event s's client lacks, referenced; NULL when none. */
static struct blob *next_event(struct stream *s)
{
	struct job *j = s->job;
	struct blob *b;

	if (!s->started) {
		s->started = true;
		if ((b = blob_new(32)))
			b->len = (size_t)snprintf(b->data, 32, "retry: %d\n\n", LIVESTREAM_RETRY_MS);
		return b;
	}
	if (j->status_ev && s->status_ver != j->status_ver) {
		s->status_ver = j->status_ver;
		return blob_ref(j->status_ev);
	}
	for (int c = 0; c < CH_COUNT; c++) {
		struct text_ch *ch = &j->text[c];
		if (s->text_pos[c] < ch->end) {
			size_t have = s->text_pos[c] + ch->len < ch->end ? ch->len : (size_t)(ch->end - s->text_pos[c]);
			json_t *t = text_json(ch->buf + ch->len - have, have);
			char *text = t ? json_dumps(t, JSON_ENCODE_ANY) : NULL;
			b = text ? blob_event(ch_event[c], text) : NULL;
			json_decref(t);
			free(text);
			s->text_pos[c] = ch->end;
			if (b)
				return b;
		}
	}
	if (j->frame && s->frame_ver != j->frame_ver) {
		s->frame_ver = j->frame_ver;
		return blob_ref(j->frame);
	}
	if (j->end_ev && !s->end_sent) {
		s->end_sent = true;
		return blob_ref(j->end_ev);
	}
	if (s->heartbeat) {
		s->heartbeat = false;
		if ((b = blob_new(16)))
			b->len = (size_t)snprintf(b->data, 16, ": keep-alive\n\n");
		return b;
	}
	return NULL;
}

/* libmicrohttpd's content reader, on the I/O thread. */
static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	struct livestream *h = s->hub;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&h->lock);
	if (h->closing) {
		pthread_mutex_unlock(&h->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (s->gone) {
		/* The end marker goes nowhere; libmicrohttpd then drops the
		 * connection (an error return would be logged as ours). */
		pthread_mutex_unlock(&h->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (!s->cur) {
		s->cur = next_event(s);
		s->off = 0;
	}
	if (!s->cur) {
		if (s->end_sent) {
			pthread_mutex_unlock(&h->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		/* Nothing to send: off the I/O loop until something is
		 * published (wake); under the lock, so no wake comes between. */
		MHD_suspend_connection(s->con);
		s->suspended = true;
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	n = s->cur->len - s->off;
	if (n > max)
		n = max;
	memcpy(buf, s->cur->data + s->off, n);
	s->off += n;
	if (s->off == s->cur->len) {
		blob_unref(s->cur);
		s->cur = NULL;
	}
	s->last_write = time_mono();
	pthread_mutex_unlock(&h->lock);
	return (ssize_t)n;
}

/* libmicrohttpd's free callback: the response is gone with its request
 * (the client left, or the stream ended). */
static void stream_free(void *cls)
{
	struct stream *s = cls;
	struct livestream *h = s->hub;
	struct job *j = s->job, **pj;

	pthread_mutex_lock(&h->lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		j->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	h->nstreams--;
	blob_unref(s->cur);
	if (!j->streams) {
		for (pj = &h->jobs; *pj != j; pj = &(*pj)->next)
			;
		*pj = j->next;
		job_free(j);
	}
	pthread_mutex_unlock(&h->lock);
	free(s);
}

int livestream_open(struct livestream *h, int64_t job, uint64_t client, struct MHD_Connection *con,
		    struct MHD_Response **resp)
{
	struct stream *s = calloc(1, sizeof(*s)), *o;
	struct job *j = NULL, *k;
	size_t mine = 0;
	int rc = 0;

	*resp = NULL;
	if (!s)
		return ERR_NOMEM;
	pthread_mutex_lock(&h->lock);
	for (k = h->jobs; k; k = k->next)
		for (o = k->streams; o; o = o->next)
			mine += o->client == client;
	if (h->closing || h->nstreams >= LIVESTREAM_MAX)
		rc = ERR_BADSTATE;
	else if (mine >= LIVESTREAM_PER_CLIENT)
		rc = ERR_TOO_BIG;
	if (!rc && !(j = job_find(h, job))) {
		if ((j = calloc(1, sizeof(*j)))) {
			j->id = job;
			j->next = h->jobs;
			h->jobs = j;
		} else {
			rc = ERR_NOMEM;
		}
	}
	if (!rc) {
		*resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, LIVESTREAM_BLOCK, reader, s, stream_free);
		if (!*resp)
			rc = ERR_NOMEM;
	}
	if (rc) {
		if (j && !j->streams && rc == ERR_NOMEM) {
			h->jobs = j->next; /* the one just added, first in the list */
			job_free(j);
		}
		pthread_mutex_unlock(&h->lock);
		free(s);
		return rc;
	}
	s->hub = h;
	s->job = j;
	s->con = con;
	s->client = client;
	s->last_write = time_mono();
	s->next = j->streams;
	if (j->streams)
		j->streams->prev = s;
	j->streams = s;
	/* Only the newest output to a new viewer. */
	for (int c = 0; c < CH_COUNT; c++)
		s->text_pos[c] = j->text[c].end - j->text[c].len;
	h->nstreams++;
	pthread_mutex_unlock(&h->lock);
	MHD_add_response_header(*resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(*resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(*resp, "X-Accel-Buffering", "no");
	return 0;
}

bool livestream_watched(struct livestream *h, int64_t job)
{
	bool on;

	pthread_mutex_lock(&h->lock);
	on = job_find(h, job) != NULL;
	pthread_mutex_unlock(&h->lock);
	return on;
}

size_t livestream_viewers(struct livestream *h, int64_t job)
{
	struct job *j;
	struct stream *s;
	size_t n = 0;

	pthread_mutex_lock(&h->lock);
	if ((j = job_find(h, job)))
		for (s = j->streams; s; s = s->next)
			n++;
	pthread_mutex_unlock(&h->lock);
	return n;
}

bool livestream_has_frame(struct livestream *h, int64_t job)
{
	struct job *j;
	bool has;

	pthread_mutex_lock(&h->lock);
	has = (j = job_find(h, job)) && j->frame;
	pthread_mutex_unlock(&h->lock);
	return has;
}

size_t livestream_jobs(struct livestream *h, int64_t *ids, size_t max)
{
	struct job *j;
	size_t n = 0;

	pthread_mutex_lock(&h->lock);
	for (j = h->jobs; j && n < max; j = j->next)
		ids[n++] = j->id;
	pthread_mutex_unlock(&h->lock);
	return n;
}

static bool is_base64(const char *s, size_t len)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
	size_t i;

	for (i = 0; i < len; i++)
		if (!s[i] || !strchr(alphabet, s[i]))
			return false;
	return len > 0;
}

void livestream_frame(struct livestream *h, int64_t job, uint64_t seq, int64_t t, int64_t w, const char *b64,
		      size_t len)
{
	char head[160];
	static const char tail[] = "\"}\n\n";
	struct blob *b;
	struct job *j;
	int hl;

	if (!is_base64(b64, len) || !livestream_watched(h, job))
		return;
	/* Built outside the lock: a frame is some hundred kilobytes. */
	hl = snprintf(head, sizeof(head),
		      "event: frame\ndata: {\"n\":%llu,\"t\":%lld,\"w\":%lld,\"src\":\"data:image/png;base64,",
		      (unsigned long long)seq, (long long)t, (long long)w);
	if (hl < 0 || (size_t)hl >= sizeof(head) || !(b = blob_new((size_t)hl + len + sizeof(tail) - 1)))
		return;
	memcpy(b->data, head, (size_t)hl);
	memcpy(b->data + hl, b64, len);
	memcpy(b->data + hl + len, tail, sizeof(tail));
	pthread_mutex_lock(&h->lock);
	if ((j = job_find(h, job))) {
		blob_unref(j->frame);
		j->frame = b;
		j->frame_ver++;
		wake(h, j);
	} else {
		blob_unref(b);
	}
	pthread_mutex_unlock(&h->lock);
}

void livestream_status(struct livestream *h, int64_t job, const json_t *fields)
{
	struct job *j;
	char *text;

	pthread_mutex_lock(&h->lock);
	if (!(j = job_find(h, job)) || !json_is_object(fields)) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (!j->status && !(j->status = json_pack("{s:I}", "job_id", (json_int_t)job))) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (j->status_ev) {
		/* Unchanged: nothing to send. */
		const char *k;
		json_t *v;
		bool same = true;
		json_object_foreach((json_t *)fields, k, v)
			same = same && json_equal(json_object_get(j->status, k), v);
		if (same) {
			pthread_mutex_unlock(&h->lock);
			return;
		}
	}
	/* A field that could not be taken: not sent part-updated (the next
	 * status, unlike this one, then counts as changed and is sent whole). */
	text = json_object_update(j->status, (json_t *)fields) ? NULL : json_dumps(j->status, JSON_COMPACT);
	if (text) {
		struct blob *b = blob_event("status", text);
		if (b) {
			blob_unref(j->status_ev);
			j->status_ev = b;
			j->status_ver++;
			wake(h, j);
		}
	}
	free(text);
	pthread_mutex_unlock(&h->lock);
}

static void text_publish(struct livestream *h, int64_t job, int c, const char *text, size_t len)
{
	struct text_ch *ch;
	struct job *j;

	if (len == 0)
		return;
	pthread_mutex_lock(&h->lock);
	if (!(j = job_find(h, job))) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	ch = &j->text[c];
	if (!ch->buf && !(ch->buf = malloc(LIVESTREAM_LOG_KEEP))) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (len >= LIVESTREAM_LOG_KEEP) {
		text += len - LIVESTREAM_LOG_KEEP / 2;
		len = LIVESTREAM_LOG_KEEP / 2;
	}
	if (ch->len + len > LIVESTREAM_LOG_KEEP) {
		/* Drop the oldest lines: keep whole lines after the cut. */
		size_t cut = ch->len + len - LIVESTREAM_LOG_KEEP;
		char *nl = memchr(ch->buf + cut, '\n', ch->len - cut);
		cut = nl ? (size_t)(nl + 1 - ch->buf) : ch->len;
		memmove(ch->buf, ch->buf + cut, ch->len - cut);
		ch->len -= cut;
	}
	memcpy(ch->buf + ch->len, text, len);
	ch->len += len;
	ch->end += len;
	wake(h, j);
	pthread_mutex_unlock(&h->lock);
}

void livestream_log(struct livestream *h, int64_t job, const char *text, size_t len)
{
	text_publish(h, job, CH_LOG, text, len);
}

void livestream_serial(struct livestream *h, int64_t job, const char *text, size_t len)
{
	text_publish(h, job, CH_SERIAL, text, len);
}

void livestream_end(struct livestream *h, int64_t job, const json_t *fields)
{
	struct job *j;
	char *text = json_dumps(fields, JSON_COMPACT);

	pthread_mutex_lock(&h->lock);
	if (text && (j = job_find(h, job)) && !j->end_ev && (j->end_ev = blob_event("end", text)))
		wake(h, j);
	pthread_mutex_unlock(&h->lock);
	free(text);
}

/* Whether the client of a suspended stream closed its end: an event
 * stream's client sends nothing after its request, so a readable socket
 * means end of file (or an error). */
static bool departed(struct stream *s)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(s->con, MHD_CONNECTION_INFO_CONNECTION_FD);
	char c;
	ssize_t n;

	if (!ci)
		return false;
	n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void livestream_sweep(struct livestream *h, double now)
{
	struct job *j;
	struct stream *s;

	pthread_mutex_lock(&h->lock);
	for (j = h->jobs; j; j = j->next)
		for (s = j->streams; s; s = s->next) {
			if (now - s->last_write >= LIVESTREAM_HEARTBEAT_S)
				s->heartbeat = true;
			if (s->suspended && departed(s))
				s->gone = true;
			if (s->suspended && (s->heartbeat || s->gone)) {
				s->suspended = false;
				MHD_resume_connection(s->con);
			}
		}
	pthread_mutex_unlock(&h->lock);
}
