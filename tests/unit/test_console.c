/* SPDX-License-Identifier: MIT */
/* test_console.c - the console model (runner/core/console.c): the implicit sut,
 * activation and resets, unsupported classes refused by name. */
#include <string.h>
#include "unit.h"
#include "runner/core/console.h"
#include "util/err.h"

TEST(console_sut_and_activation)
{
	struct console_set cs;
	char err[256] = "";
	int act = -1;
	json_t *args = json_pack("{s:i}", "tty", 2);

	CHECK_INT(console_set_init(&cs), 0);
	CHECK_STR(console_current(&cs)->name, "sut");
	CHECK_INT(console_current(&cs)->cls, CONSOLE_VNC_BASE);
	CHECK_INT(console_is_serial(console_current(&cs)), 0);
	/* sut is active from the start: selecting it activates nothing */
	CHECK_INT(console_select(&cs, "sut", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 0);
	CHECK_INT(console_add(&cs, "root-console", "tty-console", args), 0);
	json_decref(args);
	CHECK_INT(console_tty(console_find(&cs, "root-console")), 2);
	CHECK_INT(console_select(&cs, "root-console", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1);
	CHECK_STR(console_current(&cs)->name, "root-console");
	CHECK_INT(console_select(&cs, "root-console", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 0);
	CHECK_INT(console_reset(&cs, "root-console"), 0);
	CHECK_INT(console_select(&cs, "root-console", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1);
	CHECK_INT(console_reset(&cs, "nope"), ERR_NOT_FOUND);
	console_set_release(&cs);
}

TEST(console_reset_all_keeps_persistent)
{
	struct console_set cs;
	char err[256];
	int act;
	json_t *pers = json_pack("{s:b}", "persistent", 1);

	CHECK_INT(console_set_init(&cs), 0);
	CHECK_INT(console_add(&cs, "log", "serial-terminal", pers), 0);
	CHECK_INT(console_add(&cs, "root-virtio-terminal", "virtio-terminal", NULL), 0);
	json_decref(pers);
	CHECK_INT(console_select(&cs, "log", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1);
	CHECK_INT(console_is_serial(console_current(&cs)), 1);
	CHECK_INT(console_select(&cs, "root-virtio-terminal", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1);
	console_reset_all(&cs);
	CHECK_INT(console_select(&cs, "log", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 0); /* persistent */
	CHECK_INT(console_select(&cs, "root-virtio-terminal", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1);
	CHECK_INT(console_select(&cs, "sut", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 1); /* sut too, as backend::baseclass resets every console */
	/* re-declaring keeps the state */
	CHECK_INT(console_add(&cs, "sut", "vnc-base", NULL), 0);
	CHECK_INT(console_select(&cs, "sut", &act, err, sizeof(err)), 0);
	CHECK_INT(act, 0);
	console_set_release(&cs);
}

TEST(console_unsupported_class)
{
	struct console_set cs;
	char err[256] = "";
	int act = -1;

	CHECK_INT(console_set_init(&cs), 0);
	CHECK_INT(console_add(&cs, "x3270", "s3270", NULL), 1);
	CHECK_INT(console_add(&cs, "", "s3270", NULL), ERR_INVALID);
	CHECK_INT(console_select(&cs, "x3270", &act, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "console 'x3270' has class 's3270'") != NULL);
	CHECK(strstr(err, CONSOLE_SUPPORTED) != NULL);
	CHECK_STR(console_current(&cs)->name, "sut"); /* unchanged */
	CHECK_INT(console_select(&cs, "ghost", &act, err, sizeof(err)), ERR_NOT_FOUND);
	CHECK(strstr(err, "'ghost'") != NULL);
	CHECK_INT(console_class_of("tty-console"), CONSOLE_TTY);
	CHECK_INT(console_class_of(NULL), CONSOLE_OTHER);
	console_set_release(&cs);
}
