/* SPDX-License-Identifier: MIT */
/* test_casedir.c - CASEDIR as a git repository: which values are git,
 * and clones of a real local repository by branch, by commit and
 * without a ref, plus a clear error for a repository that is not there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "worker/casedir.h"

TEST(casedir_git_values)
{
	CHECK(casedir_is_git("https://github.com/os-autoinst/os-autoinst-distri-opensuse.git#master"));
	CHECK(casedir_is_git("https://example.org/distri"));
	CHECK(casedir_is_git("file:///srv/distri#v1"));
	CHECK(casedir_is_git("git@github.com:me/distri"));
	CHECK(casedir_is_git("distri.git"));
	CHECK(!casedir_is_git("/var/lib/openqa/tests/opensuse"));
	CHECK(!casedir_is_git("tests/opensuse"));
	CHECK(!casedir_is_git(""));
	CHECK(!casedir_is_git(NULL));
}

static char *read_line(const char *path)
{
	static char line[256];
	FILE *f = fopen(path, "r");

	line[0] = '\0';
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return line;
}

TEST(casedir_clone_refs)
{
	const char *t = unit_tmpdir();
	char url[600], dest[600], file[700], why[1024] = "", commit[64];

	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "git init -q -b main %s/repo && cd %s/repo && echo one > main.lua && git add main.lua && "
		 "git -c user.name=t -c user.email=t@t commit -q -m one && git branch old && echo two > main.lua && "
		 "git -c user.name=t -c user.email=t@t commit -q -am two && git rev-parse HEAD~1 > %s/first", t, t, t);
	if (system(cmd) != 0)
		FAIL("command failed: %s", cmd);
	snprintf(file, sizeof(file), "%s/first", t);
	snprintf(commit, sizeof(commit), "%s", read_line(file));
	commit[strcspn(commit, "\n")] = '\0';
	/* No ref: the default branch. */
	snprintf(url, sizeof(url), "file://%s/repo", t);
	snprintf(dest, sizeof(dest), "%s/c1", t);
	CHECK_INT(casedir_clone(url, dest, why, sizeof(why)), 0);
	snprintf(file, sizeof(file), "%s/main.lua", dest);
	CHECK_STR(read_line(file), "two\n");
	/* A branch. */
	snprintf(url, sizeof(url), "file://%s/repo#old", t);
	snprintf(dest, sizeof(dest), "%s/c2", t);
	CHECK_INT(casedir_clone(url, dest, why, sizeof(why)), 0);
	snprintf(file, sizeof(file), "%s/main.lua", dest);
	CHECK_STR(read_line(file), "one\n");
	/* A commit. */
	snprintf(url, sizeof(url), "file://%s/repo#%s", t, commit);
	snprintf(dest, sizeof(dest), "%s/c3", t);
	CHECK_INT(casedir_clone(url, dest, why, sizeof(why)), 0);
	snprintf(file, sizeof(file), "%s/main.lua", dest);
	CHECK_STR(read_line(file), "one\n");
	/* Nothing there: git's reason in one line. */
	snprintf(url, sizeof(url), "file://%s/nosuch.git", t);
	snprintf(dest, sizeof(dest), "%s/c4", t);
	CHECK(casedir_clone(url, dest, why, sizeof(why)) < 0);
	CHECK(strstr(why, "cloning CASEDIR") && strstr(why, "nosuch.git"));
	CHECK(!strchr(why, '\n'));
	CHECK(access(dest, F_OK) != 0);
	/* An option smuggled in as a ref is refused. */
	snprintf(url, sizeof(url), "file://%s/repo#--upload-pack=x", t);
	CHECK(casedir_clone(url, dest, why, sizeof(why)) < 0);
}
