/* SPDX-License-Identifier: MIT */
/* test_file.c - util/file's tree helpers: removing a tree removes what is
 * below it, links included, never what a link points to; counting a
 * directory's bytes on disk, with and without what lies below it. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "util/file.h"
#include "util/path.h"

static char *at(const char *rel)
{
	return path_join(unit_tmpdir(), rel);
}

TEST(file_remove_tree_removes_below_never_through_links)
{
	char *top = at("t"), *sub = at("t/a/b"), *f = at("t/a/b/f"), *g = at("t/g"), *keep = at("keep"),
	     *kf = at("keep/precious"), *lnk = at("t/a/outside");

	CHECK_INT(file_mkdir_p(sub, 0700), 0);
	CHECK_INT(file_mkdir_p(keep, 0700), 0);
	CHECK_INT(file_write_all(f, "x", 1), 0);
	CHECK_INT(file_write_all(g, "y", 1), 0);
	CHECK_INT(file_write_all(kf, "z", 1), 0);
	CHECK(symlink(keep, lnk) == 0);
	CHECK_INT(file_remove_tree(top), 0);
	CHECK(!file_is_dir(top));
	CHECK(file_exists(kf)); /* the link went, not what it pointed to */
	CHECK_INT(file_remove_tree(top), 0); /* missing: nothing to do */
	CHECK_INT(file_remove_tree(kf), 0);  /* a plain file */
	CHECK(!file_exists(kf));
	free(top);
	free(sub);
	free(f);
	free(g);
	free(keep);
	free(kf);
	free(lnk);
}

TEST(file_disk_bytes_counts_blocks_recursive_or_not)
{
	char *d = at("d"), *sub = at("d/s"), *a = at("d/a"), *b = at("d/s/b"), *data = calloc(1, 100000);
	long long top, all;

	CHECK_INT(file_mkdir_p(sub, 0700), 0);
	CHECK_INT(file_write_all(a, data, 100000), 0);
	CHECK_INT(file_write_all(b, data, 100000), 0);
	top = file_disk_bytes(d, false);
	all = file_disk_bytes(d, true);
	CHECK(top >= 100000 && top < 200000);
	CHECK(all >= 2 * top - 8192 && all > top);
	CHECK_INT(file_disk_bytes(a, true), 0); /* not a directory */
	free(d);
	free(sub);
	free(a);
	free(b);
	free(data);
}
