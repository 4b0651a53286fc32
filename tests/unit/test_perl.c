/* SPDX-License-Identifier: MIT */
/* test_perl.c - runner/perl/perl.c without a VM or perl: Perl's regex strings
 * made PCRE2's, and perl_cmds[] answering the anchor transcript's
 * VM-less commands (tests/perl-spike/transcript-anchor-grub.txt) in the
 * shapes the spike recorded, with a vigil_error for the rest. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "runner/perl/perl.h"
#include "runner/core/job.h"
#include "util/file.h"
#include "util/path.h"

static void check_regex(const char *in, const char *want)
{
	char *out = perl_regex_to_pcre2(in);
	int ec;
	PCRE2_SIZE off;
	pcre2_code *re;

	CHECK_STR(out, want);
	re = pcre2_compile((PCRE2_SPTR)out, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
	if (!re)
		FAIL("'%s' does not compile in PCRE2 (error %d at %d)", out, ec, (int)off);
	pcre2_code_free(re);
	free(out);
}

TEST(perl_regex_flags_stripped)
{
	check_regex("(?^u:DU8S_-\\d+-)", "(?^:DU8S_-\\d+-)");
	check_regex("(?^aa:x)", "(?^:x)");
	check_regex("(?^ui:a+)", "(?^i:a+)");
	check_regex("(?^msix:a)", "(?^msix:a)");
	check_regex("(?^l:a)(?^d:(?^u:b))", "(?^:a)(?^:(?^:b))");
	check_regex("\\(?^u:a\\)", "\\(?^u:a\\)"); /* an escaped paren is no group */
	check_regex("plain", "plain");
}

/* The reply to one JSON line, as compact JSON (caller frees); "" when the
 * command takes no reply. */
static char *answer(struct runner *r, const char *line)
{
	json_t *msg = json_loads(line, 0, NULL), *reply = NULL;
	char *out;

	CHECK(msg);
	if (!perl_answer(r, NULL, msg, &reply)) {
		json_decref(msg);
		return strdup("");
	}
	json_decref(msg);
	out = json_dumps(reply, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(reply);
	return out;
}

#define CHECK_ANSWER(r, line, want) do { char *got_ = answer(r, line); CHECK_STR(got_, want); free(got_); } while (0)

TEST(perl_cmds_answer_the_anchor_transcript)
{
	struct runner *r = calloc(1, sizeof(*r));
	char *got;
	size_t i;

	CHECK(r);
	r->start = 0;
	CHECK_ANSWER(r, "{\"cmd\":\"vigil_hello\",\"interface\":34,\"os_autoinst\":\"/usr/lib/os-autoinst\",\"perl\":\"v5.36.0\",\"pid\":1}",
		     "{\"ret\":1}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_can_handle\",\"function\":\"snapshots\"}", "{\"ret\":{\"ret\":1}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_can_handle\",\"function\":\"audio\"}", "{\"ret\":0}");
	CHECK_ANSWER(r, "{\"cmd\":\"set_current_test\",\"full_name\":\"tests-boot\",\"name\":\"boot\"}", "{\"ret\":1}");
	CHECK_INT(r->nmodules, 1);
	CHECK_STR(r->modules[0].name, "boot");
	CHECK_ANSWER(r, "{\"cmd\":\"read_serial\",\"position\":0}", "{\"position\":0,\"serial\":\"\"}");
	CHECK_ANSWER(r, "{\"cmd\":\"is_configured_to_pause_on_timeout\",\"check\":0}", "{\"ret\":0}");
	CHECK_ANSWER(r, "{\"cmd\":\"report_timeout\",\"tags\":[\"x\"],\"msg\":\"m\",\"check\":0}", "{\"ret\":0}");
	CHECK_ANSWER(r, "{\"cmd\":\"set_current_test\"}", "{\"ret\":1}");
	CHECK_ANSWER(r, "{\"cmd\":\"tests_done\",\"completed\":1,\"died\":0}", "");
	/* a VM command before the VM, a wrong interface, an unknown command:
	 * each a vigil_error naming it, so Perl dies instead of waiting */
	got = answer(r, "{\"cmd\":\"check_screen\",\"mustmatch\":\"grub-menu\",\"timeout\":60,\"check\":0}");
	CHECK(strstr(got, "\"vigil_error\"") && strstr(got, "check_screen"));
	free(got);
	got = answer(r, "{\"cmd\":\"vigil_hello\",\"interface\":33}");
	CHECK(strstr(got, "\"vigil_error\"") && strstr(got, "interface 33"));
	free(got);
	got = answer(r, "{\"cmd\":\"backend_start_audiocapture\",\"filename\":\"a.wav\"}");
	CHECK(strstr(got, "\"vigil_error\"") && strstr(got, "'backend_start_audiocapture' before the VM runs"));
	free(got);
	got = answer(r, "{\"cmd\":\"backend_verify_image\",\"imgpath\":\"/nonexistent/x.png\",\"mustmatch\":\"t\"}");
	CHECK(strstr(got, "\"vigil_error\"") && strstr(got, "verify_image '/nonexistent/x.png'"));
	free(got);
	for (i = 0; i < r->nmodules; i++)
		results_module_release(&r->modules[i]);
	free(r->modules);
	free(r);
}

TEST(perl_distri_is_main_pm_without_main_lua)
{
	const char *d = unit_tmpdir();
	char *pm = path_join(d, "main.pm"), *lua = path_join(d, "main.lua");

	CHECK(!perl_is_distri(d));
	CHECK(file_write_all(pm, "1;\n", 3) == 0);
	CHECK(perl_is_distri(d));
	CHECK(file_write_all(lua, "\n", 1) == 0);
	CHECK(!perl_is_distri(d));
	free(pm);
	free(lua);
}

/* The console commands without a VM (perl_backend.c on console.c): the
 * table from vigil_schedule/vigil_add_console, an unsupported class
 * refused by name in {error}, activation and resets, the proxied methods
 * listed per class and an {exception} for the rest. */
TEST(perl_console_commands)
{
	struct runner *r = calloc(1, sizeof(*r));
	char *got;

	CHECK(r);
	CHECK_INT(console_set_init(&r->consoles), 0);
	CHECK_ANSWER(r, "{\"cmd\":\"vigil_add_console\",\"console\":{\"name\":\"root-console\",\"class\":\"tty-console\",\"args\":{\"tty\":2}}}",
		     "{\"ret\":1}");
	CHECK_ANSWER(r, "{\"cmd\":\"vigil_add_console\",\"console\":{\"name\":\"x3270\",\"class\":\"s3270\",\"args\":{}}}",
		     "{\"ret\":1}");
	CHECK_ANSWER(r, "{\"cmd\":\"vigil_add_console\",\"console\":{\"name\":\"log\",\"class\":\"serial-terminal\",\"args\":{\"persistent\":1}}}",
		     "{\"ret\":1}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_is_serial_terminal\"}", "{\"ret\":{\"yesorno\":0}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"root-console\"}",
		     "{\"ret\":{\"activated\":1}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"root-console\"}",
		     "{\"ret\":{\"activated\":0}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"log\"}",
		     "{\"ret\":{\"activated\":1}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_is_serial_terminal\"}", "{\"ret\":{\"yesorno\":1}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_reset_consoles\"}", "{\"ret\":0}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"log\"}",
		     "{\"ret\":{\"activated\":0}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_reset_console\",\"testapi_console\":\"log\"}", "{\"ret\":0}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"root-console\"}",
		     "{\"ret\":{\"activated\":1}}");
	got = answer(r, "{\"cmd\":\"backend_select_console\",\"testapi_console\":\"x3270\"}");
	CHECK(strstr(got, "\"error\"") && strstr(got, "console 'x3270' has class 's3270', which vigil does not support"));
	free(got);
	CHECK_STR(console_current(&r->consoles)->name, "root-console");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_proxy_console_call\",\"console\":\"root-console\",\"function\":\"console_key\",\"args\":[],\"wantarray\":0}",
		     "{\"ret\":{\"result\":\"ctrl-alt-f2\"}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_proxy_console_call\",\"console\":\"root-console\",\"function\":\"set_tty\",\"args\":[3],\"wantarray\":0}",
		     "{\"ret\":{\"result\":null}}");
	CHECK_ANSWER(r, "{\"cmd\":\"backend_proxy_console_call\",\"console\":\"root-console\",\"function\":\"console_key\",\"args\":[],\"wantarray\":1}",
		     "{\"ret\":{\"result\":[\"ctrl-alt-f3\"]}}");
	got = answer(r, "{\"cmd\":\"backend_proxy_console_call\",\"console\":\"root-console\",\"function\":\"kill_ssh\",\"args\":[],\"wantarray\":0}");
	CHECK(strstr(got, "\"exception\"") && strstr(got, "'kill_ssh'") && strstr(got, "console_key"));
	free(got);
	CHECK_ANSWER(r, "{\"cmd\":\"backend_get_last_mouse_set\"}", "{\"ret\":{\"x\":0,\"y\":0}}");
	got = answer(r, "{\"cmd\":\"backend_mouse_set\",\"x\":1,\"y\":2}");
	CHECK(strstr(got, "\"vigil_error\"") && strstr(got, "before the VM runs"));
	free(got);
	console_set_release(&r->consoles);
	free(r);
}
