-- SPDX-License-Identifier: MIT
-- db_migrate_events.pg.sql - migration 15 (the event outbox, events.c) for PostgreSQL:
-- the same tables and triggers as the SQLite list in db_migrate.c, written for
-- PostgreSQL (plpgsql trigger functions, json_build_object, IS NOT DISTINCT FROM).
-- Not built: it goes into the PostgreSQL migration list as version 15 when that
-- list exists. Checked by hand on PostgreSQL 15 against the SQLite column names
-- (the same events, payloads and counts as tests/unit/test_events.c).
CREATE TABLE events (id BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, job_id BIGINT, payload TEXT NOT NULL, t_created TEXT NOT NULL);
CREATE TABLE event_sinks (name TEXT PRIMARY KEY, last_id BIGINT NOT NULL DEFAULT 0);
CREATE FUNCTION events_job_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
 IF EXISTS (SELECT 1 FROM event_sinks) THEN
  INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.create', NEW.id,
   json_build_object('id', NEW.id, 'state', NEW.state, 'group_id', NEW.group_id, 'BUILD', NEW.build,
   'TEST', NEW.test, 'ARCH', NEW.arch, 'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor,
   'DISTRI', NEW.distri, 'VERSION', NEW.version, 'priority', NEW.priority,
   'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build
    AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading')))::text, NEW.t_created);
 END IF;
 RETURN NULL;
END $$;
CREATE TRIGGER events_job_create AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION events_job_create();
CREATE FUNCTION events_job_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
 IF NOT EXISTS (SELECT 1 FROM event_sinks) THEN
  RETURN NULL;
 END IF;
 IF NEW.state = 'running' AND OLD.state <> 'running' THEN
  INSERT INTO events (kind, job_id, payload, t_created) VALUES ('job.start', NEW.id,
   json_build_object('id', NEW.id, 'group_id', NEW.group_id, 'BUILD', NEW.build, 'TEST', NEW.test,
   'ARCH', NEW.arch, 'MACHINE', NEW.machine, 'FLAVOR', NEW.flavor, 'DISTRI', NEW.distri,
   'VERSION', NEW.version, 'worker_id', NEW.assigned_worker_id)::text, NEW.t_updated);
 ELSIF NEW.state IN ('done', 'cancelled') AND OLD.state NOT IN ('done', 'cancelled') THEN
  INSERT INTO events (kind, job_id, payload, t_created) VALUES
   (CASE NEW.state WHEN 'done' THEN 'job.done' ELSE 'job.cancel' END, NEW.id,
   json_build_object('id', NEW.id, 'result', NEW.result, 'reason', NEW.reason, 'group_id', NEW.group_id,
   'BUILD', NEW.build, 'TEST', NEW.test, 'ARCH', NEW.arch, 'MACHINE', NEW.machine,
   'FLAVOR', NEW.flavor, 'DISTRI', NEW.distri, 'VERSION', NEW.version,
   'remaining', (SELECT COUNT(*) FROM jobs j WHERE j.build = NEW.build
    AND j.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading')))::text, NEW.t_updated);
  INSERT INTO events (kind, job_id, payload, t_created)
   SELECT 'build.done', NEW.id, json_build_object('BUILD', NEW.build, 'group_id', NEW.group_id,
   'group', (SELECT g.name FROM job_groups g WHERE g.id = NEW.group_id),
   'DISTRI', NEW.distri, 'VERSION', NEW.version, 'total', COUNT(*),
   'passed', SUM(CASE WHEN j.result = 'passed' THEN 1 ELSE 0 END),
   'softfailed', SUM(CASE WHEN j.result = 'softfailed' THEN 1 ELSE 0 END),
   'failed', SUM(CASE WHEN j.result = 'failed' THEN 1 ELSE 0 END),
   'incomplete', SUM(CASE WHEN j.result IN ('incomplete', 'timeout_exceeded', 'parallel_failed') THEN 1 ELSE 0 END),
   'other', SUM(CASE WHEN j.result NOT IN ('passed', 'softfailed', 'failed', 'incomplete', 'timeout_exceeded',
    'parallel_failed') THEN 1 ELSE 0 END))::text, NEW.t_updated
   FROM jobs j WHERE j.build = NEW.build AND j.group_id IS NOT DISTINCT FROM NEW.group_id AND j.clone_id IS NULL
   AND NEW.build <> '' AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.build = NEW.build
    AND p.group_id IS NOT DISTINCT FROM NEW.group_id
    AND p.state IN ('scheduled', 'assigned', 'setup', 'running', 'uploading'))
   GROUP BY j.build;
 END IF;
 RETURN NULL;
END $$;
CREATE TRIGGER events_job_state AFTER UPDATE OF state ON jobs FOR EACH ROW EXECUTE FUNCTION events_job_state();
CREATE FUNCTION events_comment_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
 IF EXISTS (SELECT 1 FROM event_sinks) THEN
  INSERT INTO events (kind, job_id, payload, t_created) VALUES ('comment.create', NEW.job_id,
   json_build_object('id', NEW.id, 'job_id', NEW.job_id, 'group_id', NEW.group_id, 'user', NEW.user_name,
   'text', NEW.text, 'created', NEW.t_created || 'Z', 'updated', NEW.t_updated || 'Z')::text, NEW.t_created);
 END IF;
 RETURN NULL;
END $$;
CREATE TRIGGER events_comment_create AFTER INSERT ON comments FOR EACH ROW EXECUTE FUNCTION events_comment_create();
