/* SPDX-License-Identifier: MIT */
/* test_openqa_worker.c - the worker under openQA finds the test
 * distribution as openQA's worker does (worker/openqa.c): DISTRI in the
 * share's tests/, DISTRI-VERSION when present, products/DISTRI, CASEDIR
 * given, relative and %CASEDIR% NEEDLES_DIR, and a clear error naming the
 * share when nothing is there; assets from the share's factory/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "util/file.h"
#include "util/path.h"
#include "worker/worker_int.h"

static char share[512];

static void mkfile(const char *rel)
{
	char p[1024], *slash;

	snprintf(p, sizeof(p), "%s/%s", share, rel);
	slash = strrchr(p, '/');
	*slash = '\0';
	CHECK_INT(file_mkdir_p(p, 0700), 0);
	*slash = '/';
	CHECK_INT(file_write_all(p, "x", 1), 0);
}

static void setup(struct worker *w, struct worker_config *cfg)
{
	memset(w, 0, sizeof(*w));
	memset(cfg, 0, sizeof(*cfg));
	snprintf(share, sizeof(share), "%s/share", unit_tmpdir());
	cfg->share = share;
	cfg->pool = unit_tmpdir();
	w->cfg = cfg;
}

/* openqa_distribution on settings vars; the directory it picks, relative
 * to the share ("" when it failed), with why. */
static const char *pick(struct worker *w, json_t *vars, char *why, size_t whylen)
{
	static char rel[512];
	char *dir = openqa_distribution(w, vars, why, whylen);

	rel[0] = '\0';
	if (dir)
		snprintf(rel, sizeof(rel), "%s", strncmp(dir, share, strlen(share)) ? dir : dir + strlen(share) + 1);
	free(dir);
	return rel;
}

static const char *var(json_t *vars, const char *key)
{
	const char *v = json_string_value(json_object_get(vars, key));
	return v && !strncmp(v, share, strlen(share)) ? v + strlen(share) + 1 : v;
}

TEST(openqa_distribution_default_dirs)
{
	struct worker w;
	struct worker_config cfg;
	char why[512] = "";
	json_t *vars;

	setup(&w, &cfg);
	mkfile("tests/grub/main.lua");
	mkfile("tests/grub/needles/a.json");
	vars = json_pack("{s:s}", "DISTRI", "grub");
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "tests/grub");
	CHECK_STR(var(vars, "CASEDIR"), "tests/grub");
	CHECK_STR(var(vars, "PRODUCTDIR"), "tests/grub");
	CHECK(!json_object_get(vars, "NEEDLES_DIR")); /* the runner's default: PRODUCTDIR/needles */
	json_decref(vars);

	/* DISTRI-VERSION wins when it exists; products/DISTRI holds main.pm. */
	mkfile("tests/opensuse-15/products/opensuse/main.pm");
	mkfile("tests/opensuse-15/lib/x.pm");
	vars = json_pack("{s:s,s:s}", "DISTRI", "opensuse", "VERSION", "15");
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "tests/opensuse-15/products/opensuse");
	CHECK_STR(var(vars, "CASEDIR"), "tests/opensuse-15");
	CHECK_STR(var(vars, "PRODUCTDIR"), "tests/opensuse-15/products/opensuse");
	json_decref(vars);

	/* A relative NEEDLES_DIR names the default needles; %CASEDIR% the CASEDIR's. */
	vars = json_pack("{s:s,s:s}", "DISTRI", "grub", "NEEDLES_DIR", "needles");
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "tests/grub");
	CHECK_STR(var(vars, "NEEDLES_DIR"), "tests/grub/needles");
	json_decref(vars);
	mkfile("elsewhere/distri/main.lua");
	{
		char cd[600];
		snprintf(cd, sizeof(cd), "%s/elsewhere/distri", share);
		vars = json_pack("{s:s,s:s,s:s}", "DISTRI", "grub", "CASEDIR", cd, "NEEDLES_DIR", "%CASEDIR%/needles");
	}
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "elsewhere/distri");
	CHECK_STR(var(vars, "NEEDLES_DIR"), "elsewhere/distri/needles");
	CHECK_STR(var(vars, "PRODUCTDIR"), "elsewhere/distri");
	json_decref(vars);
}

TEST(openqa_distribution_missing)
{
	struct worker w;
	struct worker_config cfg;
	char why[512] = "";
	json_t *vars;

	setup(&w, &cfg);
	vars = json_pack("{s:s}", "DISTRI", "nosuch");
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "");
	CHECK(strstr(why, "setup failure: test distribution"));
	CHECK(strstr(why, "--share"));
	json_decref(vars);
	vars = json_pack("{s:s}", "DISTRI", "../etc");
	CHECK_STR(pick(&w, vars, why, sizeof(why)), "");
	CHECK(strstr(why, "usable DISTRI ('../etc')"));
	json_decref(vars);
}

TEST(openqa_asset_from_share)
{
	struct worker w;
	struct worker_config cfg;
	char why[512] = "", *p;

	setup(&w, &cfg);
	mkfile("factory/iso/a.iso");
	p = openqa_asset(&w, 7, "iso", "a.iso", why, sizeof(why));
	CHECK(p && strstr(p, "/share/factory/iso/a.iso"));
	free(p);
}
