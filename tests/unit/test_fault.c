/* SPDX-License-Identifier: MIT */
/* test_fault.c - the disk-full hook (VIGIL_FAULT_ENOSPC, util/fault.h) in
 * the util file helpers and the database, and what the database layer
 * says when a write fails for want of space: the cause (not "cannot
 * rollback"), nothing of the transaction kept. Each test runs in its own
 * process, so each sets the variable before the hook first reads it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "server/db/db.h"
#include "util/buf.h"
#include "util/fault.h"
#include "util/file.h"

TEST(fault_enospc_budget_per_pattern)
{
	char a[512], b[512];

	setenv("VIGIL_FAULT_ENOSPC", "*/full/*:10", 1);
	CHECK(fault_enospc_armed());
	snprintf(a, sizeof(a), "%s/full/x", unit_tmpdir());
	snprintf(b, sizeof(b), "%s/other/x", unit_tmpdir());
	CHECK_INT(fault_enospc_allow(b, 1000), 1000); /* not matched: no limit */
	CHECK_INT(fault_enospc_allow(a, 4), 4);
	CHECK_INT(fault_enospc_allow(a, 10), 6);      /* cut short at the budget */
	CHECK_INT(fault_enospc_allow(a, 1), 0);
	CHECK_INT(fault_enospc_allow(b, 5), 5);
}

TEST(fault_enospc_malformed_is_ignored)
{
	setenv("VIGIL_FAULT_ENOSPC", "nobytes", 1);
	CHECK(!fault_enospc_armed());
	CHECK_INT(fault_enospc_allow("/x", 7), 7);
}

TEST(fault_enospc_in_file_write_all)
{
	char dir[512], path[600];
	struct buf b;

	snprintf(dir, sizeof(dir), "%s/full", unit_tmpdir());
	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/f.json", dir);
	setenv("VIGIL_FAULT_ENOSPC", "*/full/*:5", 1);
	CHECK_INT(file_write_all(path, "0123456789", 10), -ENOSPC);
	/* Atomic: neither the file nor its temporary copy is left. */
	CHECK(!file_exists(path));
	buf_init(&b, 1 << 20);
	CHECK(file_read_all(path, &b) < 0);
	buf_release(&b);
}

TEST(fault_enospc_database_says_full_and_keeps_nothing)
{
	char path[512], err[256];
	struct db *db = NULL;
	int64_t n = -1;
	int rc, i;

	snprintf(path, sizeof(path), "%s/vigil.db", unit_tmpdir());
	/* Enough for the schema, not for a large transaction after it. */
	setenv("VIGIL_FAULT_ENOSPC", "*/vigil.db*:4000000", 1);
	CHECK_INT(db_open(&db, path, err, sizeof(err)), 0);
	CHECK(db_exec(db, "CREATE TABLE t (x TEXT)", NULL) >= 0);
	CHECK_INT(db_exec(db, "INSERT INTO t (x) VALUES ('kept')", NULL), 1);
	db_clear_error(db);
	CHECK(!db_disk_full(db));
	CHECK_INT(db_begin(db), 0);
	rc = 0;
	for (i = 0; i < 20000 && rc >= 0; i++)
		rc = db_exec(db, "INSERT INTO t (x) VALUES (?)", "t",
			     "0123456789012345678901234567890123456789012345678901234567890123456789"
			     "0123456789012345678901234567890123456789012345678901234567890123456789"
			     "0123456789012345678901234567890123456789012345678901234567890123456789"
			     "0123456789012345678901234567890123456789012345678901234567890123456789"
			     "0123456789012345678901234567890123456789012345678901234567890123456789");
	if (rc >= 0)
		rc = db_commit(db);
	CHECK(rc < 0);
	CHECK(db_disk_full(db));
	db_rollback(db);
	/* The cause, not the rollback's own complaint. */
	CHECK(strstr(db_errmsg(db), "full") != NULL);
	CHECK(strstr(db_errmsg(db), "rollback") == NULL);
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM t", NULL), 0);
	CHECK_INT(n, 1);
	db_clear_error(db);
	CHECK(!db_disk_full(db));
	db_free(db);
}

TEST(fault_enospc_database_open_says_disk_full)
{
	char path[512], err[256] = "";
	struct db *db = NULL;

	snprintf(path, sizeof(path), "%s/vigil.db", unit_tmpdir());
	setenv("VIGIL_FAULT_ENOSPC", "*/vigil.db*:0", 1);
	CHECK_INT(db_open(&db, path, err, sizeof(err)), -ENOSPC);
	CHECK(db == NULL);
	CHECK(strstr(err, "is full") != NULL);
	CHECK(strstr(err, path) != NULL);
}
