/* SPDX-License-Identifier: MIT */
/* qemu_args.c - QEMU's command line from job settings: a pure function
 * (no files touched, no processes run) so it is unit-testable. Disk
 * overlays are only listed here; qemu.c creates them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/path.h"
#include "util/str.h"
#include "vm/qemu.h"
#include "util/banned.h" /* last: after every system header */

#define QEMU_MAX_DISKS 16

static int add(struct qemu_cmd *c, const char *s)
{
	char *copy;

	if (c->argc + 2 > c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		char **n = realloc(c->argv, ncap * sizeof(*n));

		if (!n)
			return ERR_NOMEM;
		c->argv = n;
		c->cap = ncap;
	}
	copy = strdup(s);
	if (!copy)
		return ERR_NOMEM;
	c->argv[c->argc++] = copy;
	c->argv[c->argc] = NULL;
	return 0;
}

static int addf(struct qemu_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int addf(struct qemu_cmd *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return ERR_NOMEM;
	rc = add(c, s);
	free(s);
	return rc;
}

static int add_overlay(struct qemu_cmd *c, char *path, const char *backing,
		       const char *fmt, const char *size)
{
	struct qemu_overlay *n = realloc(c->overlays, (c->noverlays + 1) * sizeof(*n));
	struct qemu_overlay *o;

	if (!n) {
		free(path);
		return ERR_NOMEM;
	}
	c->overlays = n;
	o = &c->overlays[c->noverlays++];
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->backing = backing ? path_abs(backing) : NULL;
	o->backing_fmt = fmt ? strdup(fmt) : NULL;
	o->size = size ? strdup(size) : NULL;
	if ((backing && !o->backing) || (fmt && !o->backing_fmt) || (size && !o->size))
		return ERR_NOMEM;
	return 0;
}

static const char *get_or(qemu_get_fn get, void *ctx, const char *key, const char *def)
{
	const char *v = get(ctx, key);

	return v && *v ? v : def;
}

static int get_int(qemu_get_fn get, void *ctx, const char *key, long def, long min,
		   long max, long *out, char *err, size_t errlen)
{
	const char *v = get(ctx, key);

	*out = def;
	if (!v || !*v)
		return 0;
	if (str_to_long(v, out) < 0 || *out < min || *out > max) {
		snprintf(err, errlen, "setting %s='%s' must be a number from %ld to %ld",
			 key, v, min, max);
		return ERR_INVALID;
	}
	return 0;
}

static bool edid_capable(const char *dev)
{
	static const char *const devs[] = { "VGA", "virtio-vga", "virtio-vga-gl",
		"virtio-gpu-pci", "bochs-display", "virtio-gpu" };
	size_t i;

	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (!strcmp(dev, devs[i]))
			return true;
	return false;
}

/* Settings become single QEMU option values: refuse commas that would
 * smuggle in further sub-options. */
static int check_plain(const char *key, const char *v, char *err, size_t errlen)
{
	if (v && strchr(v, ',')) {
		snprintf(err, errlen, "setting %s='%s' must not contain a comma", key, v);
		return ERR_INVALID;
	}
	return 0;
}

static int add_disks(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *workdir,
		     char *err, size_t errlen)
{
	const char *model = get_or(get, ctx, "HDDMODEL", "virtio-blk-pci");
	long numdisks, size_gb;
	int n, last = 0, rc;
	char key[32];

	if ((rc = check_plain("HDDMODEL", model, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "NUMDISKS", 0, 0, QEMU_MAX_DISKS, &numdisks, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "HDDSIZEGB", 10, 1, 1 << 20, &size_gb, err, errlen)) < 0)
		return rc;
	for (n = 1; n <= QEMU_MAX_DISKS; n++) {
		snprintf(key, sizeof(key), "HDD_%d", n);
		if (get(ctx, key) && *get(ctx, key))
			last = n;
	}
	if (numdisks < last)
		numdisks = last;
	for (n = 1; n <= numdisks; n++) {
		const char *hdd;
		char name[32], size[32], *path;

		snprintf(key, sizeof(key), "HDD_%d", n);
		hdd = get(ctx, key);
		snprintf(name, sizeof(name), "hd%d-overlay.qcow2", n - 1);
		snprintf(size, sizeof(size), "%ldG", size_gb);
		path = path_join(workdir, name);
		if (!path)
			return ERR_NOMEM;
		if ((rc = add_overlay(c, path, hdd && *hdd ? hdd : NULL, NULL,
				      hdd && *hdd ? NULL : size)) < 0 ||
		    (rc = add(c, "-drive")) < 0 ||
		    (rc = addf(c, "id=hd%d,if=none,format=qcow2,file=%s,cache=unsafe,discard=unmap",
			       n - 1, path)) < 0 ||
		    (rc = add(c, "-device")) < 0 ||
		    (rc = addf(c, "%s,drive=hd%d,id=hd%d-device,serial=hd%d", model, n - 1, n - 1, n - 1)) < 0)
			return rc;
	}
	return 0;
}

int qemu_cmd_build(qemu_get_fn get, void *ctx, const char *workdir, const char *accel,
		   struct qemu_cmd *c, char *err, size_t errlen)
{
	const char *qemu = get(ctx, "QEMU"), *vga, *v;
	char *wd = NULL;
	long ram, cpus, xres, yres;
	int rc;

	memset(c, 0, sizeof(*c));
	if (strcmp(accel, "kvm") && strcmp(accel, "tcg")) {
		snprintf(err, errlen, "accelerator '%s' is neither kvm nor tcg", accel);
		return ERR_INVALID;
	}
	wd = path_abs(workdir);
	if (!wd)
		return ERR_NOMEM;
	if ((rc = get_int(get, ctx, "QEMURAM", 1024, 16, 1 << 24, &ram, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "QEMUCPUS", 1, 1, 1024, &cpus, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "XRES", 1024, 16, 16384, &xres, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "YRES", 768, 16, 16384, &yres, err, errlen)) < 0)
		goto out;
	c->xres = (int)xres;
	c->yres = (int)yres;
	rc = ERR_NOMEM;
	c->vnc_path = path_join(wd, "vnc.sock");
	c->qmp_path = path_join(wd, "qmp.sock");
	c->serial_path = path_join(wd, "serial.sock");
	if (!c->vnc_path || !c->qmp_path || !c->serial_path)
		goto out;
	if (!qemu || !*qemu)
		rc = add(c, "qemu-system-x86_64");
	else if (strchr(qemu, '/'))
		rc = add(c, qemu);
	else
		rc = addf(c, "qemu-system-%s", qemu);
	if (rc < 0)
		goto out;
	vga = get_or(get, ctx, "QEMUVGA", "VGA");
	if ((rc = check_plain("QEMUVGA", vga, err, errlen)) < 0)
		goto out;
	/* The video device first, as os-autoinst does. */
	if ((rc = add(c, "-device")) < 0 ||
	    (rc = edid_capable(vga) ? addf(c, "%s,edid=on,xres=%ld,yres=%ld", vga, xres, yres)
				    : add(c, vga)) < 0 ||
	    (rc = add(c, "-accel")) < 0 || (rc = add(c, accel)) < 0 ||
	    (rc = add(c, "-m")) < 0 || (rc = addf(c, "%ld", ram)) < 0 ||
	    (rc = add(c, "-smp")) < 0 || (rc = addf(c, "%ld", cpus)) < 0)
		goto out;
	if ((v = get(ctx, "QEMUMACHINE")) && *v &&
	    ((rc = add(c, "-machine")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	if ((v = get(ctx, "QEMUCPU")) && *v &&
	    ((rc = add(c, "-cpu")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	v = get(ctx, "NICTYPE");
	if (v && !strcmp(v, "user")) {
		const char *opts = get(ctx, "NICTYPE_USER_OPTIONS");
		const char *model = get_or(get, ctx, "NICMODEL", "virtio-net-pci");

		if ((rc = check_plain("NICMODEL", model, err, errlen)) < 0 ||
		    (rc = add(c, "-nic")) < 0 ||
		    (rc = addf(c, "user,model=%s,%s", model, opts && *opts ? opts : "restrict=on")) < 0)
			goto out;
	} else if (v && *v && strcmp(v, "none")) {
		snprintf(err, errlen, "NICTYPE='%s' is not supported (use user or none)", v);
		rc = ERR_INVALID;
		goto out;
	} else if ((rc = add(c, "-nic")) < 0 || (rc = add(c, "none")) < 0) {
		goto out;
	}
	if ((rc = add(c, "-no-shutdown")) < 0 || (rc = add(c, "-S")) < 0 ||
	    (rc = add(c, "-display")) < 0 || (rc = add(c, "none")) < 0 ||
	    (rc = add(c, "-vnc")) < 0 || (rc = addf(c, "unix:%s", c->vnc_path)) < 0 ||
	    (rc = add(c, "-qmp")) < 0 ||
	    (rc = addf(c, "unix:%s,server=on,wait=off", c->qmp_path)) < 0 ||
	    (rc = add(c, "-chardev")) < 0 ||
	    (rc = addf(c, "socket,id=serial0,path=%s,server=on,wait=off", c->serial_path)) < 0 ||
	    (rc = add(c, "-serial")) < 0 || (rc = add(c, "chardev:serial0")) < 0 ||
	    (rc = add(c, "-device")) < 0 || (rc = add(c, "qemu-xhci")) < 0 ||
	    (rc = add(c, "-device")) < 0 || (rc = add(c, "usb-tablet")) < 0)
		goto out;
	if ((rc = add_disks(c, get, ctx, wd, err, errlen)) < 0)
		goto out;
	{
		/* A scratch qcow2 without a device: every VM has a writable
		 * snapshot-capable disk for the VM state of savevm/loadvm. */
		char *path = path_join(wd, "scratch.qcow2");

		if (!path) {
			rc = ERR_NOMEM;
			goto out;
		}
		if ((rc = add_overlay(c, path, NULL, NULL, "1G")) < 0 ||
		    (rc = add(c, "-drive")) < 0 ||
		    (rc = addf(c, "id=scratch,if=none,format=qcow2,file=%s,cache=unsafe", path)) < 0)
			goto out;
	}
	if ((v = get(ctx, "ISO")) && *v) {
		char *path = path_join(wd, "cd0-overlay.qcow2");

		if (!path) {
			rc = ERR_NOMEM;
			goto out;
		}
		if ((rc = add_overlay(c, path, v, "raw", NULL)) < 0 ||
		    (rc = add(c, "-drive")) < 0 ||
		    (rc = addf(c, "id=cd0,if=none,media=cdrom,format=qcow2,file=%s", path)) < 0 ||
		    (rc = add(c, "-device")) < 0 || (rc = add(c, "ide-cd,drive=cd0,id=cd0-device")) < 0 ||
		    (rc = add(c, "-boot")) < 0 || (rc = add(c, "once=d")) < 0)
			goto out;
	}
	if ((v = get(ctx, "KERNEL")) && *v) {
		char *abs = path_abs(v);

		rc = abs ? add(c, "-kernel") : ERR_NOMEM;
		if (rc == 0)
			rc = add(c, abs);
		free(abs);
		if (rc < 0)
			goto out;
	}
	if ((v = get(ctx, "INITRD")) && *v) {
		char *abs = path_abs(v);

		rc = abs ? add(c, "-initrd") : ERR_NOMEM;
		if (rc == 0)
			rc = add(c, abs);
		free(abs);
		if (rc < 0)
			goto out;
	}
	if ((v = get(ctx, "APPEND")) && *v &&
	    ((rc = add(c, "-append")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	if ((v = get(ctx, "QEMU_APPEND")) && *v) {
		const char *p = v;

		while (*p) {
			size_t n;
			char *word;

			while (*p == ' ')
				p++;
			n = strcspn(p, " ");
			if (!n)
				break;
			word = strndup(p, n);
			rc = word ? add(c, word) : ERR_NOMEM;
			free(word);
			if (rc < 0)
				goto out;
			p += n;
		}
	}
	rc = 0;
out:
	free(wd);
	if (rc < 0)
		qemu_cmd_release(c);
	return rc;
}

void qemu_cmd_release(struct qemu_cmd *c)
{
	size_t i;

	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	for (i = 0; i < c->noverlays; i++) {
		free(c->overlays[i].path);
		free(c->overlays[i].backing);
		free(c->overlays[i].backing_fmt);
		free(c->overlays[i].size);
	}
	free(c->overlays);
	free(c->vnc_path);
	free(c->qmp_path);
	free(c->serial_path);
	memset(c, 0, sizeof(*c));
}

char *qemu_cmd_string(const struct qemu_cmd *c)
{
	struct buf b;
	size_t i;

	buf_init(&b, 1u << 20);
	for (i = 0; i < c->argc; i++) {
		const char *a = c->argv[i], *p;

		if (i)
			buf_puts(&b, " ");
		if (*a && !a[strcspn(a, " \t\n'\"\\$`*?[]{}();&|<>!#~")]) {
			buf_puts(&b, a);
			continue;
		}
		buf_puts(&b, "'");
		for (p = a; *p; p++)
			if (*p == '\'')
				buf_puts(&b, "'\\''");
			else
				buf_append(&b, p, 1);
		buf_puts(&b, "'");
	}
	if (!b.data)
		return strdup("");
	return buf_steal(&b);
}

int qemu_cmd_append(struct qemu_cmd *c, const char *arg)
{
	return add(c, arg) < 0 ? ERR_NOMEM : 0;
}
