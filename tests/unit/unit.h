/* SPDX-License-Identifier: MIT */
/* unit.h - the unit test framework: TEST(name) defines a test; CHECK*
 * macros abort the test (its own process) with file:line on failure. */
#ifndef VIGIL_UNIT_H
#define VIGIL_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
	int uses_db; /* its body calls unit_db() */
};

/* Must start a line: the Makefile finds tests by this marker. */
#define TEST(name) void test_##name(void); void test_##name(void)

#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CHECK(cond) do { if (!(cond)) FAIL("check failed: %s", #cond); } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_); } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) FAIL("%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)
#define CHECK_NEAR(a, b, eps) do { double a_ = (a), b_ = (b); \
	if (a_ - b_ > (eps) || b_ - a_ > (eps)) FAIL("%s == %.6f, expected %.6f", #a, a_, b_); } while (0)

/* A fresh temporary directory for the current test (removed by the runner). */
const char *unit_tmpdir(void);

/* A new vigil database in unit_tmpdir() (the test fails if it cannot be
 * opened); with VIGIL_TEST_DB=postgresql://... set, that PostgreSQL
 * database instead, emptied first (its public schema dropped), and the
 * runner runs only the tests that call unit_db(). */
struct db;
struct db *unit_db(void);
/* For a test that starts a whole server: NULL (the server's SQLite file
 * in its data directory), or with VIGIL_TEST_DB set that URL, the
 * database emptied first as for unit_db(); such a test runs on
 * PostgreSQL too. */
const char *unit_db_url(void);

#endif
