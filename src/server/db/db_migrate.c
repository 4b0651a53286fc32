/* SPDX-License-Identifier: MIT */
/* db_migrate.c - the numbered schema migrations, SQLite dialect. Append new
 * versions; never edit one that has shipped. A PostgreSQL list will sit
 * beside this one with the same numbers and tables. */
#include <stddef.h>
#include "server/db/db.h"
#include "util/banned.h" /* last: after every system header */

const struct db_migration db__migrations_sqlite[] = {
	{ 1,
	  "CREATE TABLE api_keys ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " key TEXT NOT NULL UNIQUE,"
	  " secret TEXT NOT NULL,"
	  " is_admin INTEGER NOT NULL DEFAULT 0,"
	  " is_operator INTEGER NOT NULL DEFAULT 1,"
	  " t_expiration TEXT,"
	  " t_created TEXT NOT NULL);"
	  "CREATE TABLE machines ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " name TEXT NOT NULL UNIQUE,"
	  " backend TEXT NOT NULL,"
	  " description TEXT);"
	  "CREATE TABLE products ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " distri TEXT NOT NULL, version TEXT NOT NULL, flavor TEXT NOT NULL, arch TEXT NOT NULL,"
	  " description TEXT,"
	  " UNIQUE (distri, version, flavor, arch));"
	  "CREATE TABLE test_suites ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " name TEXT NOT NULL UNIQUE,"
	  " description TEXT);"
	  /* One settings table for the three admin tables; kind is 'machine',
	   * 'product' or 'test_suite'. */
	  "CREATE TABLE table_settings ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " kind TEXT NOT NULL, owner_id INTEGER NOT NULL,"
	  " key TEXT NOT NULL, value TEXT NOT NULL,"
	  " UNIQUE (kind, owner_id, key));"
	  "CREATE TABLE job_groups ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " name TEXT NOT NULL UNIQUE,"
	  " parent_id INTEGER,"
	  " default_priority INTEGER NOT NULL DEFAULT 50,"
	  " sort_order INTEGER,"
	  " description TEXT,"
	  " t_created TEXT NOT NULL);"
	  "CREATE TABLE job_templates ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,"
	  " machine_id INTEGER NOT NULL REFERENCES machines(id) ON DELETE CASCADE,"
	  " test_suite_id INTEGER NOT NULL REFERENCES test_suites(id) ON DELETE CASCADE,"
	  " group_id INTEGER NOT NULL REFERENCES job_groups(id) ON DELETE CASCADE,"
	  " prio INTEGER,"
	  " name TEXT NOT NULL DEFAULT '',"
	  " description TEXT NOT NULL DEFAULT '',"
	  " t_created TEXT NOT NULL,"
	  " UNIQUE (product_id, machine_id, test_suite_id, name));"
	  "CREATE TABLE job_template_settings ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " job_template_id INTEGER NOT NULL REFERENCES job_templates(id) ON DELETE CASCADE,"
	  " key TEXT NOT NULL, value TEXT NOT NULL);"
	  "CREATE TABLE scheduled_products ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " distri TEXT, version TEXT, flavor TEXT, arch TEXT, build TEXT, iso TEXT,"
	  " status TEXT NOT NULL,"
	  " settings TEXT NOT NULL,"
	  " results TEXT,"
	  " t_created TEXT NOT NULL, t_updated TEXT NOT NULL);"
	  "CREATE TABLE jobs ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " priority INTEGER NOT NULL DEFAULT 50,"
	  " state TEXT NOT NULL DEFAULT 'scheduled',"
	  " result TEXT NOT NULL DEFAULT 'none',"
	  " reason TEXT,"
	  " clone_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
	  " blocked_by_id INTEGER,"
	  " group_id INTEGER REFERENCES job_groups(id) ON DELETE SET NULL,"
	  " scheduled_product_id INTEGER REFERENCES scheduled_products(id) ON DELETE SET NULL,"
	  " assigned_worker_id INTEGER,"
	  " test TEXT NOT NULL,"
	  " distri TEXT NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '',"
	  " flavor TEXT NOT NULL DEFAULT '', arch TEXT NOT NULL DEFAULT '',"
	  " build TEXT NOT NULL DEFAULT '', machine TEXT NOT NULL DEFAULT '',"
	  " t_started TEXT, t_finished TEXT,"
	  " t_created TEXT NOT NULL, t_updated TEXT NOT NULL);"
	  "CREATE INDEX jobs_state ON jobs (state, priority, id);"
	  "CREATE INDEX jobs_clone ON jobs (clone_id);"
	  "CREATE INDEX jobs_scenario ON jobs (distri, version, flavor, arch, test, machine);"
	  "CREATE TABLE job_settings ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	  " key TEXT NOT NULL, value TEXT NOT NULL);"
	  "CREATE INDEX job_settings_job ON job_settings (job_id);"
	  "CREATE INDEX job_settings_kv ON job_settings (key, value);"
	  "CREATE TABLE job_dependencies ("
	  " parent_job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	  " child_job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	  " dependency INTEGER NOT NULL,"
	  " PRIMARY KEY (parent_job_id, child_job_id, dependency));" },
	{ 2,
	  /* Workers by (host, instance); t_seen_s is the epoch second of the
	   * last request, what the lost-worker check compares. */
	  "CREATE TABLE workers ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " host TEXT NOT NULL, instance INTEGER NOT NULL,"
	  " worker_class TEXT NOT NULL,"
	  " job_id INTEGER,"
	  " error TEXT,"
	  " t_seen TEXT, t_seen_s INTEGER NOT NULL DEFAULT 0,"
	  " t_created TEXT NOT NULL,"
	  " UNIQUE (host, instance));"
	  "CREATE TABLE job_modules ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	  " name TEXT NOT NULL, category TEXT NOT NULL DEFAULT '', script TEXT NOT NULL DEFAULT '',"
	  " result TEXT NOT NULL DEFAULT 'none',"
	  " milestone INTEGER NOT NULL DEFAULT 0, important INTEGER NOT NULL DEFAULT 0,"
	  " fatal INTEGER NOT NULL DEFAULT 0,"
	  " UNIQUE (job_id, name));"
	  "CREATE INDEX jobs_worker ON jobs (assigned_worker_id, state);" },
	{ 3,
	  /* Files under DATA/factory/<type>/<name>; mtime_s and size tell a
	   * worker's cache when a file changed, checksum (sha256) is set for
	   * uploads, hashed while they arrive. */
	  "CREATE TABLE assets ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " type TEXT NOT NULL, name TEXT NOT NULL,"
	  " size INTEGER, mtime_s INTEGER NOT NULL DEFAULT 0, checksum TEXT,"
	  " last_use_job_id INTEGER, fixed INTEGER NOT NULL DEFAULT 0,"
	  " t_created TEXT NOT NULL, t_updated TEXT NOT NULL,"
	  " UNIQUE (type, name));"
	  "CREATE INDEX job_dependencies_child ON job_dependencies (child_job_id);" },
	{ 4,
	  /* Comments on jobs or job groups (exactly one of job_id, group_id);
	   * api_key is the key that wrote it (only its author may edit it),
	   * user_name what the API shows as userName. A group's YAML job
	   * templates are kept as posted, as openQA keeps them. */
	  "CREATE TABLE comments ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " job_id INTEGER REFERENCES jobs(id) ON DELETE CASCADE,"
	  " group_id INTEGER REFERENCES job_groups(id) ON DELETE CASCADE,"
	  " text TEXT NOT NULL,"
	  " user_name TEXT NOT NULL, api_key TEXT,"
	  " t_created TEXT NOT NULL, t_updated TEXT NOT NULL);"
	  "CREATE INDEX comments_job ON comments (job_id);"
	  "CREATE INDEX comments_group ON comments (group_id);"
	  "ALTER TABLE job_groups ADD COLUMN template TEXT;" },
	{ 5,
	  /* Needles by (DISTRI, name): the job and module that last matched
	   * them and that last had them among the candidates (needles.c).
	   * Times never known are '' so each order runs on one index. */
	  "CREATE TABLE needles ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " distri TEXT NOT NULL, name TEXT NOT NULL, file TEXT,"
	  " last_seen_job_id INTEGER, last_seen_module TEXT, last_seen_step INTEGER,"
	  " last_seen_time TEXT NOT NULL DEFAULT '',"
	  " last_matched_job_id INTEGER, last_matched_module TEXT, last_matched_step INTEGER,"
	  " last_matched_time TEXT NOT NULL DEFAULT '',"
	  " UNIQUE (distri, name));"
	  "CREATE INDEX needles_matched ON needles (last_matched_time, id);"
	  "CREATE INDEX needles_seen ON needles (last_seen_time, id);"
	  "CREATE INDEX needles_name ON needles (name, id);" },
	{ 6,
	  /* People who sign in (users.c): role is 'admin', 'operator' or
	   * 'user'; password a PBKDF2 hash text, NULL for a user another
	   * provider vouches for (provider 'local' today; an OpenID Connect
	   * provider later, with the subject in external_id). Browser sessions
	   * keep only the sha256 of their cookie token. API keys may belong to
	   * a user (NULL: made by 'vigil apikey new'). The audit log (audit.c):
	   * who changed what; detail is a JSON object. */
	  "CREATE TABLE users ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " name TEXT NOT NULL UNIQUE,"
	  " role TEXT NOT NULL DEFAULT 'user',"
	  " password TEXT,"
	  " provider TEXT NOT NULL DEFAULT 'local',"
	  " external_id TEXT,"
	  " t_created TEXT NOT NULL, t_updated TEXT NOT NULL,"
	  " UNIQUE (provider, external_id));"
	  "CREATE TABLE sessions ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " token_hash TEXT NOT NULL UNIQUE,"
	  " user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
	  " csrf TEXT NOT NULL,"
	  " expires_s INTEGER NOT NULL,"
	  " t_created TEXT NOT NULL);"
	  "CREATE INDEX sessions_user ON sessions (user_id);"
	  "ALTER TABLE api_keys ADD COLUMN user_id INTEGER REFERENCES users(id) ON DELETE CASCADE;"
	  "CREATE INDEX api_keys_user ON api_keys (user_id);"
	  "CREATE TABLE audit_events ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " t_created TEXT NOT NULL,"
	  " actor TEXT NOT NULL,"
	  " event TEXT NOT NULL,"
	  " detail TEXT NOT NULL);" },
	{ 7,
	  /* The lists (joblist.c, builds.c): one index per filter column
	   * ending in id, so a page of one filter is a range scan of page
	   * size, newest first; result and test also order the list (key
	   * ascending, newest first within a key: id DESC). A group's builds
	   * newest first without reading the table (jobs_list_group covers
	   * them), a build's jobs in a group for its counts. needs_review: the job failed
	   * and every failure was a near miss (results.json, set at set_done). */
	  "ALTER TABLE jobs ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0;"
	  "CREATE INDEX jobs_list_state ON jobs (state, id);"
	  "CREATE INDEX jobs_list_result ON jobs (result, id DESC);"
	  "CREATE INDEX jobs_list_test ON jobs (test, id DESC);"
	  "CREATE INDEX jobs_list_distri ON jobs (lower(distri), id);"
	  "CREATE INDEX jobs_list_version ON jobs (version, id);"
	  "CREATE INDEX jobs_list_flavor ON jobs (flavor, id);"
	  "CREATE INDEX jobs_list_arch ON jobs (arch, id);"
	  "CREATE INDEX jobs_list_build ON jobs (build, id);"
	  "CREATE INDEX jobs_list_machine ON jobs (machine, id);"
	  "CREATE INDEX jobs_list_group ON jobs (group_id, id, build, version);"
	  "CREATE INDEX jobs_group_build ON jobs (group_id, build, version);" },
	{ 8,
	  /* The user who wrote a comment (signed in, or through their own API
	   * key): they may edit it from a page or with any of their keys. */
	  "ALTER TABLE comments ADD COLUMN user_id INTEGER REFERENCES users(id) ON DELETE SET NULL;" },
	{ 9,
	  /* Re-run from a milestone (rerun.c): a job made by rerun_from
	   * resumes at module resume_from from the kept disks of job
	   * resume_job_id; while resume_worker_id is set only that worker gets
	   * it, until resume_deadline (epoch s). worker_snapshots: the jobs
	   * whose disks a worker said it keeps, as of its last work poll. */
	  "ALTER TABLE jobs ADD COLUMN resume_from TEXT;"
	  "ALTER TABLE jobs ADD COLUMN resume_job_id INTEGER;"
	  "ALTER TABLE jobs ADD COLUMN resume_worker_id INTEGER;"
	  "ALTER TABLE jobs ADD COLUMN resume_deadline INTEGER;"
	  "CREATE TABLE worker_snapshots ("
	  " worker_id INTEGER NOT NULL REFERENCES workers(id) ON DELETE CASCADE,"
	  " job_id INTEGER NOT NULL,"
	  " PRIMARY KEY (worker_id, job_id));" },
	{ 10,
	  /* The review queue (review.c): review_todo is 1 while a finished job
	   * needs a look (failed, or failed modules) and no comment holds a bug
	   * reference or a label; a page of the queue, newest first, is a range
	   * of the partial index (the equalities make the planner prefer it to
	   * jobs_clone); a retried (cloned) job drops out by its clone_id.
	   * Carry-over of bug references per group, as openQA's. */
	  "ALTER TABLE jobs ADD COLUMN review_todo INTEGER NOT NULL DEFAULT 0;"
	  "CREATE INDEX jobs_review ON jobs (review_todo, clone_id, id) WHERE review_todo = 1;"
	  "ALTER TABLE job_groups ADD COLUMN carry_over_bugrefs INTEGER NOT NULL DEFAULT 1;"
	  /* Jobs done before: a comment with a '#' or a label counts as a
	   * review here (review.c tells bug references exactly from now on). */
	  "UPDATE jobs SET review_todo = 1 WHERE state = 'done' AND (result IN ('failed', 'incomplete',"
	  " 'timeout_exceeded') OR EXISTS (SELECT 1 FROM job_modules m WHERE m.job_id = jobs.id"
	  " AND m.result = 'failed')) AND result <> 'passed' AND NOT EXISTS (SELECT 1 FROM comments c"
	  " WHERE c.job_id = jobs.id AND (c.text LIKE '%#%' OR c.text LIKE '%label:%'));" },
	{ 11,
	  /* lockapi (locks.c): the token a job's test process signs its lock
	   * calls with (X-API-JobToken, issued when a worker takes the job),
	   * and openQA's job_locks: a mutex or barrier named per owning job;
	   * locked_by is the locking job's id (mutex) or the comma-separated
	   * ids that reached a barrier of count tasks. */
	  "CREATE TABLE job_tokens ("
	  " job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,"
	  " token TEXT NOT NULL UNIQUE);"
	  "CREATE TABLE job_locks ("
	  " id INTEGER PRIMARY KEY,"
	  " name TEXT NOT NULL,"
	  " owner INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	  " locked_by TEXT,"
	  " count INTEGER NOT NULL DEFAULT 1,"
	  " UNIQUE (name, owner));" },
	{ 12,
	  /* Signatures (auth.c): a key may refuse openQA's legacy scheme;
	   * scheme-2 nonces seen, per key, until their time leaves the window
	   * (t_expires, epoch s); the key a worker registered with (worker
	   * routes act only for it). */
	  "ALTER TABLE api_keys ADD COLUMN refuse_legacy INTEGER NOT NULL DEFAULT 0;"
	  "CREATE TABLE api_nonces ("
	  " key TEXT NOT NULL,"
	  " nonce TEXT NOT NULL,"
	  " t_expires INTEGER NOT NULL,"
	  " PRIMARY KEY (key, nonce));"
	  "CREATE INDEX api_nonces_expiry ON api_nonces (t_expires);"
	  "ALTER TABLE workers ADD COLUMN api_key TEXT;" },
	{ 13,
	  /* What a worker said of its host at registration (openQA's worker
	   * capabilities, shown as its CPU_ARCH and MEM_MAX properties):
	   * uname's machine and MemTotal in MiB; NULL when it said nothing. */
	  "ALTER TABLE workers ADD COLUMN cpu_arch TEXT;"
	  "ALTER TABLE workers ADD COLUMN mem_max INTEGER;" },
	{ 14,
	  /* sched.c: openQA's starvation protection of parallel clusters. The
	   * priority bonus a scheduled job has gained because its cluster
	   * found too few free workers (sorted by priority - sched_bonus;
	   * reset when the cluster is assigned; 0 in a clone). */
	  "ALTER TABLE jobs ADD COLUMN sched_bonus INTEGER NOT NULL DEFAULT 0;" },
	{ 15,
	  /* The event outbox (events.c): triggers write one row per event in
	   * the transaction of the change itself, for every path that makes
	   * it (API, worker protocol, cascades, another process), and only
	   * while some sink is configured (a row in event_sinks). payload is
	   * the event's JSON as it stood at the change; event_sinks keeps
	   * how far each sink (irc, webhook, amqp) has delivered, so a sink
	   * or the server that restarts goes on from there. */
	  "CREATE TABLE events ("
	  " id INTEGER PRIMARY KEY AUTOINCREMENT,"
	  " kind TEXT NOT NULL,"
	  " job_id INTEGER,"
	  " payload TEXT NOT NULL,"
	  " t_created TEXT NOT NULL);"
	  "CREATE TABLE event_sinks ("
	  " name TEXT PRIMARY KEY,"
	  " last_id INTEGER NOT NULL DEFAULT 0);"
	  "CREATE TRIGGER events_job_create AFTER INSERT ON jobs"
	  " WHEN EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.create', NEW.id,"
	  "  json_object('id', NEW.id, 'state', NEW.state, 'group_id', NEW.group_id, 'BUILD', NEW.build,"
	  "  'TEST', NEW.test, 'ARCH', NEW.arch, 'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor,"
	  "  'DISTRI', NEW.distri, 'VERSION', NEW.version, 'priority', NEW.priority,"
	  "  'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build"
	  "   AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))), NEW.t_created);"
	  " END;"
	  "CREATE TRIGGER events_job_start AFTER UPDATE OF state ON jobs"
	  " WHEN NEW.state = 'running' AND OLD.state <> 'running' AND EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.start', NEW.id,"
	  "  json_object('id', NEW.id, 'group_id', NEW.group_id, 'BUILD', NEW.build, 'TEST', NEW.test,"
	  "  'ARCH', NEW.arch, 'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor, 'DISTRI', NEW.distri,"
	  "  'VERSION', NEW.version, 'worker_id', NEW.assigned_worker_id), NEW.t_updated);"
	  " END;"
	  /* done or cancelled: job.done (openQA's job_done) or job.cancel; then,
	   * when no job of the same build and group is pending any more, one
	   * build.done with the counts of the build's latest jobs (not
	   * restarted ones). */
	  "CREATE TRIGGER events_job_finish AFTER UPDATE OF state ON jobs"
	  " WHEN NEW.state IN ('done', 'cancelled') AND OLD.state NOT IN ('done', 'cancelled')"
	  " AND EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES"
	  "  (CASE NEW.state WHEN 'done' THEN 'job.done' ELSE 'job.cancel' END, NEW.id,"
	  "  json_object('id', NEW.id, 'result', NEW.result, 'reason', NEW.reason, 'group_id', NEW.group_id,"
	  "  'BUILD', NEW.build, 'TEST', NEW.test, 'ARCH', NEW.arch, 'MACHINE', NEW.machine,"
	  "  'FLAVOR', NEW.flavor, 'DISTRI', NEW.distri, 'VERSION', NEW.version,"
	  "  'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build"
	  "   AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))), NEW.t_updated);"
	  " INSERT INTO events (kind, job_id, payload, t_created)"
	  "  SELECT 'build.done', NEW.id, json_object('BUILD', NEW.build, 'group_id', NEW.group_id,"
	  "  'group', (SELECT g.name FROM job_groups g WHERE g.id = NEW.group_id),"
	  "  'DISTRI', NEW.distri, 'VERSION', NEW.version,"
	  "  'total', COUNT(*),"
	  "  'passed', SUM(j.result = 'passed'), 'softfailed', SUM(j.result = 'softfailed'),"
	  "  'failed', SUM(j.result = 'failed'),"
	  "  'incomplete', SUM(j.result IN ('incomplete', 'timeout_exceeded', 'parallel_failed')),"
	  "  'other', SUM(j.result NOT IN ('passed', 'softfailed', 'failed', 'incomplete', 'timeout_exceeded',"
	  "   'parallel_failed'))), NEW.t_updated"
	  "  FROM jobs j WHERE j.build = NEW.build AND j.group_id IS NEW.group_id AND j.clone_id IS NULL"
	  "  AND NEW.build <> '' AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.build = NEW.build"
	  "   AND p.group_id IS NEW.group_id"
	  "   AND p.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))"
	  "  GROUP BY j.build;"
	  " END;"
	  "CREATE TRIGGER events_comment_create AFTER INSERT ON comments"
	  " WHEN EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('comment.create', NEW.job_id,"
	  "  json_object('id', NEW.id, 'job_id', NEW.job_id, 'group_id', NEW.group_id, 'user', NEW.user_name,"
	  "  'text', NEW.text, 'created', NEW.t_created || 'Z', 'updated', NEW.t_updated || 'Z'), NEW.t_created);"
	  " END;" },
	{ 16,
	  /* Retention (retention.c), openQA's names: per group how long logs
	   * and results of finished jobs are kept (important builds apart) and
	   * how much its assets may take; NULL is the server's default. A job
	   * whose logs were removed keeps its results with logs_present 0. */
	  "ALTER TABLE job_groups ADD COLUMN keep_logs_in_days INTEGER;"
	  "ALTER TABLE job_groups ADD COLUMN keep_important_logs_in_days INTEGER;"
	  "ALTER TABLE job_groups ADD COLUMN keep_results_in_days INTEGER;"
	  "ALTER TABLE job_groups ADD COLUMN keep_important_results_in_days INTEGER;"
	  "ALTER TABLE job_groups ADD COLUMN size_limit_gb INTEGER;"
	  "ALTER TABLE jobs ADD COLUMN logs_present INTEGER NOT NULL DEFAULT 1;"
	  "CREATE INDEX jobs_finished ON jobs (group_id, t_finished);" },
	{ 17,
	  /* openQA's other events (events.c), written as migration 15's are:
	   * job.restart when a job gets its clone (result: the old id and the
	   * new one), job.update_result when a job's result changes and its
	   * state does not (a force_result label on a finished job, a running
	   * job marked parallel_failed), job.delete, comment.update (the text)
	   * and comment.delete. A deleted row's event is stamped with the
	   * current time. */
	  "CREATE TRIGGER events_job_restart AFTER UPDATE OF clone_id ON jobs"
	  " WHEN OLD.clone_id IS NULL AND NEW.clone_id IS NOT NULL AND EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.restart', NEW.id,"
	  "  json_object('id', NEW.id, 'result', json_object(CAST(NEW.id AS TEXT), NEW.clone_id),"
	  "  'group_id', NEW.group_id, 'BUILD', NEW.build, 'TEST', NEW.test, 'ARCH', NEW.arch,"
	  "  'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor, 'DISTRI', NEW.distri, 'VERSION', NEW.version,"
	  "  'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build"
	  "   AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))), NEW.t_updated);"
	  " END;"
	  "CREATE TRIGGER events_job_update_result AFTER UPDATE OF result ON jobs"
	  " WHEN NEW.result IS NOT OLD.result AND NEW.state = OLD.state AND EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.update_result', NEW.id,"
	  "  json_object('id', NEW.id, 'result', NEW.result, 'group_id', NEW.group_id, 'BUILD', NEW.build,"
	  "  'TEST', NEW.test, 'ARCH', NEW.arch, 'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor,"
	  "  'DISTRI', NEW.distri, 'VERSION', NEW.version,"
	  "  'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build"
	  "   AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))), NEW.t_updated);"
	  " END;"
	  "CREATE TRIGGER events_job_delete AFTER DELETE ON jobs"
	  " WHEN EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.delete', OLD.id,"
	  "  json_object('id', OLD.id, 'result', OLD.result, 'group_id', OLD.group_id, 'BUILD', OLD.build,"
	  "  'TEST', OLD.test, 'ARCH', OLD.arch, 'MACHINE', OLD.machine, 'FLAVOR', OLD.flavor,"
	  "  'DISTRI', OLD.distri, 'VERSION', OLD.version,"
	  "  'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = OLD.build"
	  "   AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))),"
	  "  strftime('%Y-%m-%dT%H:%M:%S', 'now'));"
	  " END;"
	  "CREATE TRIGGER events_comment_update AFTER UPDATE OF text ON comments"
	  " WHEN NEW.text IS NOT OLD.text AND EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('comment.update', NEW.job_id,"
	  "  json_object('id', NEW.id, 'job_id', NEW.job_id, 'group_id', NEW.group_id, 'user', NEW.user_name,"
	  "  'text', NEW.text, 'created', NEW.t_created || 'Z', 'updated', NEW.t_updated || 'Z'), NEW.t_updated);"
	  " END;"
	  "CREATE TRIGGER events_comment_delete AFTER DELETE ON comments"
	  " WHEN EXISTS (SELECT 1 FROM event_sinks) BEGIN"
	  " INSERT INTO events (kind, job_id, payload, t_created) VALUES ('comment.delete', OLD.job_id,"
	  "  json_object('id', OLD.id, 'job_id', OLD.job_id, 'group_id', OLD.group_id, 'user', OLD.user_name),"
	  "  strftime('%Y-%m-%dT%H:%M:%S', 'now'));"
	  " END;" },
	{ 19,
	  /* The relay network (NICNET=relay, locks.c): each parallel
	   * cluster's secret, keyed by the cluster's first job, that its hubs
	   * prove to each other (worker/nethub.c); handed only to the
	   * cluster's jobs, never a job setting. */
	  "CREATE TABLE relay_secrets ("
	  " job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,"
	  " secret TEXT NOT NULL);" },
	{ 20,
	  /* The scheduler's reads, each an index range however many jobs are
	   * scheduled (docs/database.md, "The scheduler at scale"): the
	   * scheduled jobs in the order they are offered (priority less the
	   * cluster bonus, then id), and the re-runs pinned to a worker. */
	  "CREATE INDEX jobs_sched ON jobs (state, (priority - sched_bonus), id);"
	  "CREATE INDEX jobs_pinned ON jobs (state, resume_worker_id) WHERE resume_worker_id IS NOT NULL;" },
};

const size_t db__migrations_sqlite_count = sizeof(db__migrations_sqlite) / sizeof(db__migrations_sqlite[0]);
