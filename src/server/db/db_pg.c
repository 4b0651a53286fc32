/* SPDX-License-Identifier: MIT */
/* db_pg.c - PostgreSQL behind the db.h interface, through libpq: the
 * dialect's half of the database module (db.c dispatches here when the
 * target is a postgresql:// URL). Callers' '?' and '?N' placeholders become
 * $n; each SQL text is prepared once per connection under its own name and
 * run with text parameters, PostgreSQL inferring their types from the
 * statement (a parameter it cannot place is retried as text). Results are
 * read whole. A write inside a transaction runs under a savepoint so that a
 * constraint violation fails that statement only, as in SQLite. db_begin
 * is a plain BEGIN (READ COMMITTED): transactions of several servers write
 * at once, each row's writers in turn; db_begin_serial adds a database-wide
 * transaction advisory lock, as SQLite's BEGIN IMMEDIATE, for the changes
 * that read and then write across rows (the scheduler's assignments);
 * db_lock_row is SELECT ... FOR UPDATE. */
#define LOG_MODULE "db"
#include <ctype.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/db/db_int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

/* Prepared texts kept per connection; beyond it a text is prepared for each use. */
#define DBPG_QUERIES 512
/* Parameters of one statement: the job list binds a batch of 500 ids (jobs.c). */
#define DBPG_MAX_PARAMS 512
/* The advisory lock every transaction holds (any number: one per database). */
#define DBPG_TX_LOCK "7264353"
#define OID_TEXT 25
#define OID_INT8 20

struct pgquery {
	char *sql;   /* the caller's text */
	char *text;  /* with $n placeholders */
	uint32_t hash;
	int nparams;
	bool write;  /* INSERT/UPDATE/DELETE: runs under a savepoint in a transaction */
	char *hint;  /* the caller's parameter types (db_prepare's), NULL if none */
	char name[16];
	bool prepared; /* on this connection (false again after a reconnect) */
};

struct pgstmt {
	struct db_stmt base; /* first: a struct db_stmt * is a struct pgstmt * */
	struct dbpg *pg;
	struct pgquery *q;
	struct pgquery tmp; /* when the cache is full */
	char *vals[DBPG_MAX_PARAMS];
	PGresult *res;
	int row, nrows;
	bool executed;
	bool whole;  /* no savepoint: its failure fails the transaction (db_exec_whole) */
	int64_t changes;
};

struct dbpg {
	PGconn *c;
	struct pgquery q[DBPG_QUERIES];
	size_t nq;
	unsigned next_name;
	int64_t changes;   /* rows changed by this connection, for db_change_stamp */
	char last_table[64]; /* of the last INSERT INTO, for db_last_id */
	char errmsg[512];
	char state[6];   /* SQLSTATE of the last failed statement, "" if none */
	int version;
};

bool db__is_pg(const char *target)
{
	return target && (!strncmp(target, "postgresql://", 13) || !strncmp(target, "postgres://", 11));
}

static uint32_t sql_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void set_err(struct dbpg *pg, const char *msg)
{
	snprintf(pg->errmsg, sizeof(pg->errmsg), "%s", msg ? msg : "unknown error");
	pg->errmsg[strcspn(pg->errmsg, "\n")] = '\0';
}

/* '?' and '?N' outside quotes and comments become $n ('?' is one more than
 * the largest number so far, as in SQLite). A new string or NULL. */
static char *convert(const char *sql, int *nparams)
{
	size_t len = strlen(sql), o = 0, i;
	char *out = malloc(len * 4 + 1);
	int max = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		char c = sql[i];
		if (c == '\'' || c == '"') {
			char q = c;
			out[o++] = sql[i++];
			while (i < len && sql[i] != q)
				out[o++] = sql[i++];
			if (i < len)
				out[o++] = sql[i];
			continue;
		}
		if (c == '-' && sql[i + 1] == '-') {
			while (i < len && sql[i] != '\n')
				out[o++] = sql[i++];
			if (i < len)
				out[o++] = sql[i];
			continue;
		}
		if (c != '?') {
			out[o++] = c;
			continue;
		}
		if (isdigit((unsigned char)sql[i + 1])) {
			int n = 0;
			while (isdigit((unsigned char)sql[i + 1]) && n < 1000)
				n = n * 10 + (sql[++i] - '0');
			if (n > max)
				max = n;
			o += (size_t)snprintf(out + o, 8, "$%d", n);
		} else {
			o += (size_t)snprintf(out + o, 8, "$%d", ++max);
		}
	}
	out[o] = '\0';
	*nparams = max;
	return out;
}

static bool is_write(const char *sql)
{
	static const char *const verbs[] = { "INSERT", "UPDATE", "DELETE", "WITH" };
	size_t i;

	while (isspace((unsigned char)*sql) || *sql == '(')
		sql++;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		size_t n = strlen(verbs[i]);
		if (!strncasecmp(sql, verbs[i], n) && !isalnum((unsigned char)sql[n]))
			return i < 3 || strstr(sql, "INSERT ") || strstr(sql, "UPDATE ") || strstr(sql, "DELETE ");
	}
	return false;
}

static int query_init(struct pgquery *q, const char *sql)
{
	memset(q, 0, sizeof(*q));
	if (!(q->sql = strdup(sql)) || !(q->text = convert(sql, &q->nparams))) {
		free(q->sql);
		q->sql = NULL;
		return ERR_NOMEM;
	}
	q->hash = sql_hash(sql);
	q->write = is_write(sql);
	return 0;
}

static void query_release(struct pgquery *q)
{
	free(q->hint);
	free(q->sql);
	free(q->text);
	memset(q, 0, sizeof(*q));
}

/* PQprepare, giving text to each parameter PostgreSQL cannot type from
 * the statement ("could not determine data type of parameter $2"). */
static int prepare_named(struct dbpg *pg, const char *name, const char *text, int nparams, const char *hint)
{
	Oid types[DBPG_MAX_PARAMS] = { 0 };
	bool hinted = false;
	/* A failed prepare aborts the transaction it runs in: try under a savepoint. */
	bool sp = PQtransactionStatus(pg->c) == PQTRANS_INTRANS;
	int tries;

	if (sp && db__pg_exec_plain(pg, "SAVEPOINT vigil_prep"))
		return ERR_IO;
	for (tries = 0; tries <= nparams + 1; tries++) {
		PGresult *r = PQprepare(pg->c, name, text, nparams, types);
		const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
		const char *d;
		long n;

		if (r && PQresultStatus(r) == PGRES_COMMAND_OK) {
			PQclear(r);
			if (sp)
				(void)db__pg_exec_plain(pg, "RELEASE SAVEPOINT vigil_prep");
			return 0;
		}
		set_err(pg, r ? PQresultErrorMessage(r) : PQerrorMessage(pg->c));
		if (sp) {
			PGresult *rb = PQexec(pg->c, "ROLLBACK TO SAVEPOINT vigil_prep");
			PQclear(rb);
		}
		/* "operator does not exist: bigint = text": a parameter typed text
		 * from its context ("SELECT ?") meets an integer; the caller bound
		 * integers there (types hint), so they are bigint. */
		if (state && (!strcmp(state, "42883") || !strcmp(state, "42804")) && hint && !hinted) {
			int i;
			for (i = 0; hint[i] && i < nparams; i++)
				if (hint[i] == 'i' || hint[i] == 'I')
					types[i] = OID_INT8;
			hinted = true;
			PQclear(r);
			continue;
		}
		if (!state || strcmp(state, "42P18") || !(d = strchr(pg->errmsg, '$')) ||
		    (n = strtol(d + 1, NULL, 10)) < 1 || n > nparams || types[n - 1]) {
			PQclear(r);
			log_err("cannot prepare '%s': %s", text, pg->errmsg);
			if (sp)
				PQclear(PQexec(pg->c, "RELEASE SAVEPOINT vigil_prep"));
			return ERR_IO;
		}
		PQclear(r);
		types[n - 1] = OID_TEXT;
	}
	if (sp)
		PQclear(PQexec(pg->c, "RELEASE SAVEPOINT vigil_prep"));
	return ERR_IO;
}

static void reconnect_if_lost(struct dbpg *pg);

/* prepare_named, once more on a new connection when the server was lost
 * (outside a transaction). */
static int prepare_or_reconnect(struct dbpg *pg, struct pgquery *q)
{
	bool idle = PQtransactionStatus(pg->c) == PQTRANS_IDLE;
	int rc = prepare_named(pg, q->name, q->text, q->nparams, q->hint);

	if (rc && idle && PQstatus(pg->c) == CONNECTION_BAD) {
		reconnect_if_lost(pg);
		if (PQstatus(pg->c) == CONNECTION_OK)
			rc = prepare_named(pg, q->name, q->text, q->nparams, q->hint);
	}
	return rc;
}

static struct pgquery *query_get(struct dbpg *pg, const char *sql, const char *hint, struct pgquery *tmp)
{
	uint32_t h = sql_hash(sql);
	struct pgquery *q;
	size_t i;

	for (i = 0; i < pg->nq; i++) {
		q = &pg->q[i];
		if (q->hash == h && !strcmp(q->sql, sql)) {
			if (!q->prepared && prepare_or_reconnect(pg, q))
				return NULL;
			q->prepared = true;
			return q;
		}
	}
	q = pg->nq < DBPG_QUERIES ? &pg->q[pg->nq] : tmp;
	if (query_init(q, sql))
		return NULL;
	if (hint && !(q->hint = strdup(hint))) {
		query_release(q);
		return NULL;
	}
	if (q->nparams > DBPG_MAX_PARAMS) {
		log_err("'%s': more than %d parameters", sql, DBPG_MAX_PARAMS);
		query_release(q);
		return NULL;
	}
	/* Beyond the cache: a name of its own, deallocated at finalize. */
	snprintf(q->name, sizeof(q->name), "%s%u", q == tmp ? "t" : "v", pg->next_name++);
	if (prepare_or_reconnect(pg, q)) {
		query_release(q);
		return NULL;
	}
	q->prepared = true;
	if (q != tmp)
		pg->nq++;
	return q;
}

/* A connection the server lost (PostgreSQL restarted, a network cut) is
 * made again before the next statement; the statement that met the loss
 * failed, later ones run. */
static void reconnect_if_lost(struct dbpg *pg)
{
	size_t i;

	if (PQstatus(pg->c) != CONNECTION_BAD)
		return;
	log_warn("connection to PostgreSQL lost: reconnecting");
	PQreset(pg->c);
	if (PQstatus(pg->c) != CONNECTION_OK) {
		set_err(pg, PQerrorMessage(pg->c));
		log_err("cannot reconnect to PostgreSQL: %s", pg->errmsg);
		return;
	}
	for (i = 0; i < pg->nq; i++)
		pg->q[i].prepared = false;
	(void)db__pg_exec_plain(pg, "SET TIME ZONE 'UTC'");
}

int db__pg_prepare(struct db *db, struct dbpg *pg, struct db_stmt **out, const char *sql, const char *types, va_list ap)
{
	struct pgstmt *ps = calloc(1, sizeof(*ps));
	int i, rc = 0;

	*out = NULL;
	if (!ps)
		return ERR_NOMEM;
	reconnect_if_lost(pg);
	ps->base.db = db;
	ps->pg = pg;
	if (!(ps->q = query_get(pg, sql, types, &ps->tmp))) {
		free(ps);
		return ERR_IO;
	}
	for (i = 0; types && types[i] && !rc; i++) {
		char num[24];
		int64_t v;
		switch (types[i]) {
		case 't':
			rc = db__pg_bind_text(&ps->base, i + 1, va_arg(ap, const char *));
			break;
		case 'i':
		case 'I':
			v = va_arg(ap, int64_t);
			snprintf(num, sizeof(num), "%lld", (long long)v);
			rc = db__pg_bind_text(&ps->base, i + 1, types[i] == 'I' && !v ? NULL : num);
			break;
		case 'n':
			rc = db__pg_bind_text(&ps->base, i + 1, NULL);
			break;
		default:
			rc = ERR_INVALID;
		}
	}
	if (rc) {
		log_err("cannot bind parameters of '%s'", sql);
		db__pg_finalize(&ps->base);
		return ERR_IO;
	}
	*out = &ps->base;
	return 0;
}

int db__pg_bind_text(struct db_stmt *st, int idx, const char *s)
{
	struct pgstmt *ps = (struct pgstmt *)st;

	if (idx < 1 || idx > ps->q->nparams)
		return ERR_INVALID;
	free(ps->vals[idx - 1]);
	ps->vals[idx - 1] = NULL;
	if (s && !(ps->vals[idx - 1] = strdup(s)))
		return ERR_NOMEM;
	return 0;
}

static PGresult *exec_simple(struct dbpg *pg, const char *sql, ExecStatusType want)
{
	PGresult *r = PQexec(pg->c, sql);

	if (r && PQresultStatus(r) == want)
		return r;
	set_err(pg, r ? PQresultErrorMessage(r) : PQerrorMessage(pg->c));
	PQclear(r);
	return NULL;
}

int db__pg_exec_plain(struct dbpg *pg, const char *sql)
{
	PGresult *r = PQexec(pg->c, sql);
	ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;

	if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) {
		PQclear(r);
		return 0;
	}
	set_err(pg, r ? PQresultErrorMessage(r) : PQerrorMessage(pg->c));
	log_err("'%.60s': %s", sql, pg->errmsg);
	PQclear(r);
	return ERR_IO;
}

static int execute(struct pgstmt *ps)
{
	struct dbpg *pg = ps->pg;
	bool sp = ps->q->write && !ps->whole && PQtransactionStatus(pg->c) == PQTRANS_INTRANS;
	bool idle = PQtransactionStatus(pg->c) == PQTRANS_IDLE;
	const char *state;
	bool constraint;
	ExecStatusType s;

	ps->executed = true;
	pg->state[0] = '\0';
	if (sp && db__pg_exec_plain(pg, "SAVEPOINT vigil_stmt"))
		return ERR_IO;
	ps->res = PQexecPrepared(pg->c, ps->q->name, ps->q->nparams, (const char *const *)ps->vals, NULL, NULL, 0);
	s = ps->res ? PQresultStatus(ps->res) : PGRES_FATAL_ERROR;
	/* A read outside a transaction that found the connection gone runs
	 * again on a new one (a write is not repeated: it may have committed). */
	if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK && PQstatus(pg->c) == CONNECTION_BAD && !ps->q->write &&
	    idle) {
		PQclear(ps->res);
		ps->res = NULL;
		reconnect_if_lost(pg);
		if (PQstatus(pg->c) == CONNECTION_OK &&
		    (ps->q->prepared || !prepare_named(pg, ps->q->name, ps->q->text, ps->q->nparams, ps->q->hint))) {
			ps->q->prepared = true;
			ps->res = PQexecPrepared(pg->c, ps->q->name, ps->q->nparams, (const char *const *)ps->vals, NULL,
						 NULL, 0);
		}
		s = ps->res ? PQresultStatus(ps->res) : PGRES_FATAL_ERROR;
	}
	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK) {
		const char *t = ps->q->sql;
		size_t n;
		while (isspace((unsigned char)*t))
			t++;
		if (!strncasecmp(t, "INSERT INTO ", 12)) {
			t += 12;
			n = strspn(t, "abcdefghijklmnopqrstuvwxyz_0123456789");
			snprintf(pg->last_table, sizeof(pg->last_table), "%.*s", (int)n, t);
		}
		ps->nrows = PQntuples(ps->res);
		ps->changes = strtoll(PQcmdTuples(ps->res), NULL, 10);
		if (ps->q->write)
			pg->changes += ps->changes;
		if (sp)
			(void)db__pg_exec_plain(pg, "RELEASE SAVEPOINT vigil_stmt");
		return 0;
	}
	set_err(pg, ps->res ? PQresultErrorMessage(ps->res) : PQerrorMessage(pg->c));
	/* The SQLSTATE lives in the result: read it before the result is freed. */
	state = ps->res ? PQresultErrorField(ps->res, PG_DIAG_SQLSTATE) : NULL;
	snprintf(pg->state, sizeof(pg->state), "%s", state ? state : "");
	constraint = state && !strncmp(state, "23", 2);
	if (sp)
		(void)db__pg_exec_plain(pg, "ROLLBACK TO SAVEPOINT vigil_stmt; RELEASE SAVEPOINT vigil_stmt");
	PQclear(ps->res);
	ps->res = NULL;
	if (constraint)
		return ERR_INVALID;
	if (db__pg_conflict(pg))
		log_warn("statement '%s' lost to a concurrent transaction: %s", ps->q->sql, pg->errmsg);
	else
		log_err("statement '%s' failed: %s", ps->q->sql, pg->errmsg);
	return ERR_IO;
}

int db__pg_step(struct db_stmt *st)
{
	struct pgstmt *ps = (struct pgstmt *)st;
	int rc;

	if (!ps->executed) {
		if ((rc = execute(ps)))
			return rc;
		ps->row = -1;
	}
	if (!ps->res)
		return ERR_IO;
	if (ps->row + 1 < ps->nrows) {
		ps->row++;
		return 1;
	}
	ps->row = ps->nrows;
	return 0;
}

const char *db__pg_col_text(struct db_stmt *st, int col)
{
	struct pgstmt *ps = (struct pgstmt *)st;

	if (!ps->res || ps->row < 0 || ps->row >= ps->nrows || col < 0 || col >= PQnfields(ps->res) ||
	    PQgetisnull(ps->res, ps->row, col))
		return NULL;
	return PQgetvalue(ps->res, ps->row, col);
}

bool db__pg_col_null(struct db_stmt *st, int col)
{
	return !db__pg_col_text(st, col);
}

void db__pg_finalize(struct db_stmt *st)
{
	struct pgstmt *ps = (struct pgstmt *)st;
	int i;

	if (!ps)
		return;
	for (i = 0; i < DBPG_MAX_PARAMS; i++)
		free(ps->vals[i]);
	PQclear(ps->res);
	if (ps->q == &ps->tmp) {
		char sql[40];
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", ps->tmp.name);
		PQclear(PQexec(ps->pg->c, sql));
		query_release(&ps->tmp);
	}
	free(ps);
}

int64_t db__pg_stmt_changes(struct db_stmt *st)
{
	return ((struct pgstmt *)st)->changes;
}

void db__pg_stmt_whole(struct db_stmt *st)
{
	((struct pgstmt *)st)->whole = true;
}

/* The snapshot (next transaction id and those in progress) moves with
 * every transaction that writes, on any connection; its hash stands for
 * SQLite's data_version. */
int db__pg_change_stamp(struct dbpg *pg, int64_t stamp[2])
{
	uint64_t h = 1469598103934665603ull;
	const char *s;
	PGresult *r;

	reconnect_if_lost(pg);
	r = exec_simple(pg, "SELECT pg_current_snapshot()::text", PGRES_TUPLES_OK);
	if (!r && PQstatus(pg->c) == CONNECTION_BAD) {
		reconnect_if_lost(pg);
		r = exec_simple(pg, "SELECT pg_current_snapshot()::text", PGRES_TUPLES_OK);
	}

	if (!r || PQntuples(r) != 1)
		goto fail;
	for (s = PQgetvalue(r, 0, 0); *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	PQclear(r);
	stamp[0] = (int64_t)(h >> 1);
	stamp[1] = pg->changes;
	return 0;
fail:
	PQclear(r);
	return ERR_IO;
}

/* The id the last INSERT INTO gave its table: currval of that table's
 * id sequence, which a trigger inserting elsewhere (the event outbox) does
 * not move as it moves lastval(). */
int64_t db__pg_last_id(struct dbpg *pg)
{
	const char *const v[1] = { pg->last_table };
	PGresult *r = NULL;
	int64_t id = 0;

	if (pg->last_table[0]) {
		/* currval fails when this session gave the table no id (an INSERT
		 * with its own): in a transaction, that failure alone is undone. */
		bool tx = PQtransactionStatus(pg->c) == PQTRANS_INTRANS, ok;
		if (tx)
			PQclear(PQexec(pg->c, "SAVEPOINT vigil_id"));
		r = PQexecParams(pg->c, "SELECT currval(pg_get_serial_sequence($1, 'id'))", 1, NULL, v, NULL, NULL, 0);
		ok = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
		if (ok)
			id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		if (tx)
			PQclear(PQexec(pg->c, ok ? "RELEASE SAVEPOINT vigil_id" :
						   "ROLLBACK TO SAVEPOINT vigil_id; RELEASE SAVEPOINT vigil_id"));
		if (ok)
			return id;
	}
	r = exec_simple(pg, "SELECT lastval()", PGRES_TUPLES_OK);

	if (r && PQntuples(r) == 1)
		id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return id;
}

/* The generic plan (parameters unbound) of sql, EXPLAIN's lines trimmed
 * and joined by "; ". */
int db__pg_plan(struct dbpg *pg, const char *sql, char *buf, size_t len)
{
	struct pgquery q;
	PGresult *r = NULL;
	char *ex = NULL;
	size_t used = 0, el;
	int i, rc = ERR_IO;

	if (len)
		buf[0] = '\0';
	if (query_init(&q, sql))
		return ERR_NOMEM;
	if (db__pg_exec_plain(pg, "SET plan_cache_mode = force_generic_plan") ||
	    prepare_named(pg, "vigil_plan", q.text, q.nparams, NULL))
		goto out;
	el = 64 + (size_t)q.nparams * 6;
	if (!(ex = malloc(el)))
		goto dealloc;
	used = (size_t)snprintf(ex, el, "EXPLAIN EXECUTE vigil_plan");
	for (i = 0; i < q.nparams; i++)
		used += (size_t)snprintf(ex + used, el - used, "%sNULL", i ? ", " : "(");
	snprintf(ex + used, el - used, "%s", q.nparams ? ")" : "");
	used = 0;
	if (!(r = exec_simple(pg, ex, PGRES_TUPLES_OK)))
		goto dealloc;
	for (i = 0; i < PQntuples(r); i++) {
		const char *d = PQgetvalue(r, i, 0);
		int n;
		while (*d == ' ' || *d == '-' || *d == '>')
			d++;
		n = snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? "; " : "", d);
		if (n > 0)
			used = used + (size_t)n < len ? used + (size_t)n : len;
	}
	rc = 0;
dealloc:
	(void)db__pg_exec_plain(pg, "DEALLOCATE vigil_plan");
out:
	(void)db__pg_exec_plain(pg, "RESET plan_cache_mode");
	PQclear(r);
	free(ex);
	query_release(&q);
	return rc;
}

const char *db__pg_errmsg(struct dbpg *pg)
{
	return pg->errmsg;
}

int db__pg_begin(struct dbpg *pg, bool serial)
{
	reconnect_if_lost(pg);
	pg->state[0] = '\0';
	return db__pg_exec_plain(pg, serial ? "BEGIN; SELECT pg_advisory_xact_lock(" DBPG_TX_LOCK ")" : "BEGIN");
}

bool db__pg_conflict(struct dbpg *pg)
{
	/* serialization_failure, deadlock_detected */
	return !strcmp(pg->state, "40001") || !strcmp(pg->state, "40P01");
}

int db__pg_commit(struct dbpg *pg)
{
	return db__pg_exec_plain(pg, "COMMIT");
}

void db__pg_rollback(struct dbpg *pg)
{
	PGresult *r = PQexec(pg->c, "ROLLBACK");

	PQclear(r);
}

int db__pg_schema_version(struct dbpg *pg)
{
	return pg->version;
}

/* The numbered migrations of db__migrations_pg, one transaction each,
 * under a session advisory lock so that servers starting together on a
 * new database migrate it once. */
static int migrate(struct dbpg *pg, char *err, size_t errlen)
{
	PGresult *r = NULL;
	int64_t v = 0;
	size_t i;
	char ins[96];

	if (db__pg_exec_plain(pg, "SELECT pg_advisory_lock(" DBPG_TX_LOCK "1)"))
		goto fail;
	if (db__pg_exec_plain(pg, "SET client_min_messages = warning; "
				  "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"))
		goto fail_unlock;
	if (!(r = exec_simple(pg, "SELECT COALESCE(MAX(version), 0) FROM schema_version", PGRES_TUPLES_OK)))
		goto fail_unlock;
	v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	for (i = 0; i < db__migrations_pg_count; i++) {
		const struct db_migration *m = &db__migrations_pg[i];
		if (m->version <= v)
			continue;
		snprintf(ins, sizeof(ins), "INSERT INTO schema_version (version) VALUES (%d)", m->version);
		if (db__pg_exec_plain(pg, "BEGIN") || db__pg_exec_plain(pg, m->sql) || db__pg_exec_plain(pg, ins) ||
		    db__pg_exec_plain(pg, "COMMIT")) {
			db__pg_rollback(pg);
			snprintf(err, errlen, "migration %d failed: %s", m->version, pg->errmsg);
			(void)db__pg_exec_plain(pg, "SELECT pg_advisory_unlock(" DBPG_TX_LOCK "1)");
			return ERR_IO;
		}
		v = m->version;
		log_info("database migrated to version %d", m->version);
	}
	(void)db__pg_exec_plain(pg, "SELECT pg_advisory_unlock(" DBPG_TX_LOCK "1)");
	pg->version = (int)v;
	return 0;
fail_unlock:
	(void)db__pg_exec_plain(pg, "SELECT pg_advisory_unlock(" DBPG_TX_LOCK "1)");
fail:
	snprintf(err, errlen, "cannot read or migrate the schema: %s", pg->errmsg);
	return ERR_IO;
}

int db__pg_open(struct dbpg **out, const char *url, char *err, size_t errlen)
{
	struct dbpg *pg = calloc(1, sizeof(*pg));
	int rc = ERR_IO;

	*out = NULL;
	if (!pg)
		return ERR_NOMEM;
	pg->c = PQconnectdb(url);
	if (!pg->c || PQstatus(pg->c) != CONNECTION_OK) {
		snprintf(err, errlen, "cannot connect to '%s': %s", url,
			 pg->c ? PQerrorMessage(pg->c) : "out of memory");
		err[strcspn(err, "\n")] = '\0';
		goto out;
	}
	if (db__pg_exec_plain(pg, "SET TIME ZONE 'UTC'")) {
		snprintf(err, errlen, "cannot configure '%s': %s", url, pg->errmsg);
		goto out;
	}
	rc = migrate(pg, err, errlen);
out:
	if (rc) {
		db__pg_free(pg);
		return rc;
	}
	*out = pg;
	return 0;
}

void db__pg_free(struct dbpg *pg)
{
	size_t i;

	if (!pg)
		return;
	for (i = 0; i < pg->nq; i++)
		query_release(&pg->q[i]);
	PQfinish(pg->c);
	free(pg);
}
