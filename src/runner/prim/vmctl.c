/* SPDX-License-Identifier: MIT */
/* vmctl.c - the VM controlled over QMP for both front ends: stopped and
 * resumed, power actions, CDs ejected, a NIC's link switched, the disks
 * copied out (qemu-img) and the memory dumped (QEMU's migration into a
 * file, compressed). Raises nothing: 0 or a negative code with err set. */
#define LOG_MODULE "vmctl"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/vars.h"
#include "runner/prim/vmctl.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

int vmctl_qmp(struct runner *r, const char *what, const char *cmd, json_t *args, char *err, size_t errlen)
{
	char why[256];
	int rc;

	if (runner__aborted(r))
		return runner__fail(r, ERR_BADSTATE, err, errlen);
	rc = qmp_command(r->qmp, cmd, args, NULL, why, sizeof(why));
	if (rc) {
		err_set(err, errlen, "%s failed: %s", what, why);
		return rc;
	}
	runner__progress(r, "%s", what);
	return 0;
}

int vmctl_eject_cd(struct runner *r, const char *id, int force, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s, s:b}", "id", id, "force", force);
	int rc = args ? vmctl_qmp(r, "eject_cd", "eject", args, err, errlen) : ERR_NOMEM;

	json_decref(args);
	return rc;
}

int vmctl_power(struct runner *r, const char *action, char *err, size_t errlen)
{
	const char *cmd;
	char why[256];
	int rc;

	if (!strcmp(action, "acpi"))
		cmd = "system_powerdown";
	else if (!strcmp(action, "reset"))
		cmd = "system_reset";
	else if (!strcmp(action, "off"))
		cmd = "quit";
	else if (!strcmp(action, "on"))
		cmd = "cont";
	else {
		err_set(err, errlen, "power: unknown action '%s' (on, off, acpi, reset)", action);
		return ERR_INVALID;
	}
	if (runner__aborted(r))
		return runner__fail(r, ERR_BADSTATE, err, errlen);
	rc = qmp_command(r->qmp, cmd, NULL, NULL, why, sizeof(why));
	runner__progress(r, "power %s", action);
	if (!strcmp(action, "off")) {
		/* QEMU may close the socket before it answers */
		r->expect_exit = 1;
		return 0;
	}
	if (rc)
		err_set(err, errlen, "power %s failed: %s", action, why);
	return rc;
}

/* The image file QEMU has for drive id (query-block), copied into buf. */
static int drive_file(struct runner *r, const char *id, char *buf, size_t len, char *err, size_t errlen)
{
	json_t *ret = NULL, *d;
	size_t i;
	int rc = qmp_command(r->qmp, "query-block", NULL, &ret, err, errlen);

	if (rc)
		return rc;
	rc = ERR_NOT_FOUND;
	snprintf(err, errlen, "no drive '%s'", id);
	json_array_foreach(ret, i, d) {
		const char *dev = json_string_value(json_object_get(d, "device"));
		const char *file = json_string_value(json_object_get(json_object_get(d, "inserted"), "file"));
		if (dev && file && !strcmp(dev, id)) {
			snprintf(buf, len, "%s", file);
			rc = 0;
			break;
		}
	}
	json_decref(ret);
	return rc;
}

int vmctl_save_drives(struct runner *r, const char *name, long first, long last, char *err, size_t errlen)
{
	int compress = vars_get_bool(&r->vars, "QEMU_COMPRESS_QCOW2", 1), was_running, rc;
	char status[64], file[4096], dst[512], *dir = path_join(r->testresults, "ulogs"), *path = NULL;
	long i;

	err[0] = '\0';
	if (!*name || strchr(name, '/') || strlen(name) > 200) {
		snprintf(err, errlen, "'%s' is not a file name", name);
		free(dir);
		return ERR_INVALID;
	}
	rc = dir ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
	if (!rc)
		rc = qmp_query_status(r->qmp, status, sizeof(status), err, errlen);
	was_running = !rc && !strcmp(status, "running");
	if (was_running)
		rc = qmp_command(r->qmp, "stop", NULL, NULL, err, errlen);
	for (i = first; !rc && i <= last; i++) {
		char id[32];
		int st = 0;
		snprintf(id, sizeof(id), "hd%ld", i - 1);
		rc = drive_file(r, id, file, sizeof(file), err, errlen);
		snprintf(dst, sizeof(dst), "%s-%ld-vm_disk_file.qcow2", name, i);
		free(path);
		path = rc ? NULL : path_join(dir, dst);
		if (!rc && !path)
			rc = ERR_NOMEM;
		if (!rc) {
			/* -U: QEMU holds the image's lock; the VM is stopped, so it is consistent. */
			char *argv[] = { (char *)"qemu-img", (char *)"convert", (char *)"-U", (char *)"-O",
					 (char *)"qcow2", (char *)"-c", file, path, NULL };
			if (!compress) { /* drop -c */
				argv[5] = file;
				argv[6] = path;
				argv[7] = NULL;
			}
			rc = proc_run(argv, (int)(3600 * 1000 * r->timeout_scale), &st, NULL);
			if (!rc && st) {
				snprintf(err, errlen, "qemu-img convert of disk %ld failed", i);
				rc = ERR_IO;
			}
		}
		if (!rc)
			runner__progress(r, "save_storage_drives: disk %ld -> ulogs/%s", i, dst);
	}
	if (was_running && qmp_command(r->qmp, "cont", NULL, NULL, rc ? file : err, rc ? sizeof(file) : errlen) &&
	    !rc)
		rc = ERR_IO;
	if (rc && !err[0])
		snprintf(err, errlen, "%s", err_str(rc));
	free(dir);
	free(path);
	return rc;
}

int vmctl_switch_network(struct runner *r, const char *link, int up, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s,s:b}", "name", link, "up", up);
	int rc = args ? qmp_command(r->qmp, "set_link", args, NULL, err, errlen) : ERR_NOMEM;

	json_decref(args);
	if (rc == ERR_NOMEM)
		snprintf(err, errlen, "%s", err_str(rc));
	if (!rc)
		runner__progress(r, "switch_network %s: %s", link, up ? "up" : "down");
	return rc;
}

/* save_memory_dump's wait for the migration: at most 600 s (scaled) of
 * runner__clock, so a busy host does not fail it. */
int vmctl_memory_dump(struct runner *r, const char *name, char *err, size_t errlen)
{
	const char *method = vars_get(&r->vars, "QEMU_DUMP_COMPRESS_METHOD");
	double deadline = runner__clock(r) + 600 * r->timeout_scale;
	char status[64], err2[256], *dir, *path = NULL, *file = NULL;
	json_t *ret = NULL;
	int was_running, rc;
	struct buf uri;

	err[0] = '\0';
	if (runner__aborted(r))
		return runner__fail(r, ERR_BADSTATE, err, errlen);
	dir = path_join(r->testresults, "ulogs");
	buf_init(&uri, 8192);
	file = malloc(strlen(name) + sizeof("-vm-memory-dump"));
	if (file)
		snprintf(file, strlen(name) + sizeof("-vm-memory-dump"), "%s-vm-memory-dump", name);
	path = dir && file ? path_join(dir, file) : NULL;
	rc = path ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
	if (!rc && (strchr(path, '\'') || strchr(name, '/')))
		rc = ERR_INVALID;
	if (!rc)
		rc = buf_printf(&uri, "exec:cat > '%s'", path);
	if (!rc)
		rc = qmp_query_status(r->qmp, status, sizeof(status), err, errlen);
	was_running = !rc && !strcmp(status, "running");
	/* QEMU's default of 32 MiB/s would take a minute for 2 GiB: as fast as
	 * it goes unless QEMU_MAX_BANDWIDTH (bytes/s) says otherwise. */
	if (!rc) {
		json_t *a = json_pack("{s:I}", "max-bandwidth",
				      (json_int_t)vars_get_double(&r->vars, "QEMU_MAX_BANDWIDTH", 1e12));
		rc = qmp_command(r->qmp, "migrate-set-parameters", a, NULL, err, errlen);
		json_decref(a); /* qmp_command borrows its arguments */
	}
	if (!rc) {
		json_t *a = json_pack("{s:s}", "uri", uri.data);
		rc = qmp_command(r->qmp, "migrate", a, NULL, err, errlen);
		json_decref(a);
	}
	while (!rc) {
		const char *st;
		json_decref(ret);
		ret = NULL;
		rc = qmp_command(r->qmp, "query-migrate", NULL, &ret, err, errlen);
		st = rc ? NULL : json_string_value(json_object_get(ret, "status"));
		if (st && !strcmp(st, "completed"))
			break;
		if (st && !strcmp(st, "failed")) {
			snprintf(err, errlen, "the migration failed");
			rc = ERR_IO;
		} else if (!rc && runner__clock(r) > deadline) {
			snprintf(err, errlen, "the migration did not end in time");
			rc = ERR_TIMEOUT;
		} else if (!rc) {
			time_sleep_ms(100);
		}
	}
	json_decref(ret);
	if (was_running && qmp_command(r->qmp, "cont", NULL, NULL, err2, sizeof(err2)) && !rc) {
		snprintf(err, errlen, "%s", err2);
		rc = ERR_IO;
	}
	if (!rc && (!method || strcmp(method, "none"))) {
		const char *prog = method && *method ? method : "xz";
		char level[8];
		char *argv[] = { (char *)prog, (char *)"-f", level, path, NULL, NULL };
		snprintf(level, sizeof(level), "-%ld", vars_get_long(&r->vars, "QEMU_COMPRESS_LEVEL", 6) % 10);
		if (!strcmp(prog, "xz")) { /* every core, as os-autoinst's -T */
			argv[3] = (char *)"-T0";
			argv[4] = path;
		}
		int st = 0;
		if (strcmp(prog, "xz") && strcmp(prog, "bzip2"))
			log_warn("save_memory_dump: unknown QEMU_DUMP_COMPRESS_METHOD '%s': left uncompressed", prog);
		else if (proc_run(argv, (int)(600 * 1000 * r->timeout_scale), &st, NULL) || st)
			log_warn("save_memory_dump: %s failed: the dump stays uncompressed", prog);
	}
	runner__progress(r, "save_memory_dump %s: %s", file ? file : name, rc ? (err[0] ? err : err_str(rc)) : "saved");
	buf_release(&uri);
	free(dir);
	free(path);
	free(file);
	if (rc && !err[0])
		snprintf(err, errlen, "%s", err_str(rc));
	return rc;
}
