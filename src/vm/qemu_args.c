/* SPDX-License-Identifier: MIT */
/* qemu_args.c - QEMU's command line from job settings: a pure function
 * (no files touched, no processes run) so it is unit-testable. Disk
 * overlays are only listed here; qemu.c creates them. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
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

/* A boolean setting as os-autoinst reads it (Perl's truth): unset, "" and
 * "0" are false. */
static bool is_on(const char *v)
{
	return v && *v && strcmp(v, "0");
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

/* One disk or CD: a qcow2 overlay in the workdir over backing (or a blank
 * disk of size), a -drive without a device and the -device that shows it. */
static int add_drive(struct qemu_cmd *c, const char *wd, const char *id, const char *backing,
		     const char *backing_fmt, const char *size, const char *model,
		     const char *serial, bool boot, bool cdrom)
{
	char name[64], *path;
	int rc;

	snprintf(name, sizeof(name), "%s-overlay.qcow2", id);
	path = path_join(wd, name);
	if (!path)
		return ERR_NOMEM;
	if ((rc = add_overlay(c, path, backing, backing_fmt, backing ? NULL : size)) < 0 ||
	    (rc = add(c, "-drive")) < 0 ||
	    (rc = addf(c, "id=%s,if=none,%sformat=qcow2,file=%s%s", id, cdrom ? "media=cdrom," : "",
		       path, cdrom ? "" : ",cache=unsafe,discard=unmap")) < 0 ||
	    (rc = add(c, "-device")) < 0 ||
	    (rc = addf(c, "%s,drive=%s,id=%s-device%s%s%s", model, id, id, serial ? ",serial=" : "",
		       serial ? serial : "", boot ? ",bootindex=0" : "")) < 0)
		return rc;
	return 0;
}

/* BOOTFROM (c, disk, d, cdrom) with BOOT_HDD_IMAGE meaning c: 'c', 'd' or
 * 0 for the firmware's own order. */
static int boot_from(qemu_get_fn get, void *ctx, char *out, char *err, size_t errlen)
{
	const char *v = get(ctx, "BOOTFROM");

	*out = 0;
	if (!v || !*v)
		v = get(ctx, "BOOT_HDD_IMAGE") && is_on(get(ctx, "BOOT_HDD_IMAGE")) ? "c" : NULL;
	if (!v)
		return 0;
	if (!strcmp(v, "c") || !strcmp(v, "disk"))
		*out = 'c';
	else if (!strcmp(v, "d") || !strcmp(v, "cdrom"))
		*out = 'd';
	else {
		snprintf(err, errlen, "BOOTFROM='%s' is not supported (use c, disk, d or cdrom)", v);
		return ERR_INVALID;
	}
	return 0;
}

static bool is_scsi(const char *model)
{
	return str_starts_with(model, "scsi-");
}

/* HDD_1..HDD_n and NUMDISKS (default 1): overlays over the given images or
 * blank disks of HDDSIZEGB(_n), on HDDMODEL_n or HDDMODEL. */
static int add_disks(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *workdir,
		     char boot, char *err, size_t errlen)
{
	const char *model = get_or(get, ctx, "HDDMODEL", "virtio-blk-pci");
	long numdisks, size_gb;
	int n, last = 0, rc;
	char key[32];

	if ((rc = check_plain("HDDMODEL", model, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "NUMDISKS", 1, 0, QEMU_MAX_DISKS, &numdisks, err, errlen)) < 0 ||
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
		const char *hdd, *m, *serial;
		char id[16], size[32];
		long gb;

		snprintf(key, sizeof(key), "HDD_%d", n);
		hdd = get(ctx, key);
		snprintf(key, sizeof(key), "HDDMODEL_%d", n);
		m = get_or(get, ctx, key, model);
		if ((rc = check_plain(key, m, err, errlen)) < 0)
			return rc;
		snprintf(key, sizeof(key), "HDDSIZEGB_%d", n);
		if ((rc = get_int(get, ctx, key, size_gb, 1, 1 << 20, &gb, err, errlen)) < 0)
			return rc;
		snprintf(id, sizeof(id), "hd%d", n - 1);
		snprintf(key, sizeof(key), "HDDSERIAL_%d", n);
		serial = get_or(get, ctx, key, id);
		if ((rc = check_plain(key, serial, err, errlen)) < 0)
			return rc;
		snprintf(size, sizeof(size), "%ldG", gb);
		if ((rc = add_drive(c, workdir, id, hdd && *hdd ? hdd : NULL, NULL, size, m, serial,
				    n == 1 && boot == 'c', false)) < 0)
			return rc;
	}
	return 0;
}

/* ISO (cd0, or a USB stick with USBBOOT) and ISO_1..ISO_n (cdN) on
 * CDMODEL, as os-autoinst; overlays keep the images untouched. *ncd
 * counts CD drives. */
static int add_cdroms(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *wd, char boot,
		      int *ncd, char *err, size_t errlen)
{
	const char *model = get_or(get, ctx, "CDMODEL", "ide-cd"), *iso = get(ctx, "ISO");
	bool first = true;
	int n, rc;

	*ncd = 0;
	if ((rc = check_plain("CDMODEL", model, err, errlen)) < 0)
		return rc;
	if (iso && *iso) {
		if (get(ctx, "USBBOOT") && is_on(get(ctx, "USBBOOT")))
			rc = add_drive(c, wd, "usbstick", iso, "raw", NULL, "usb-storage", NULL,
				       boot != 'c', false);
		else {
			rc = add_drive(c, wd, "cd0", iso, "raw", NULL, model, "cd0", boot == 'd', true);
			++*ncd;
		}
		if (rc < 0)
			return rc;
	}
	for (n = 1; n <= QEMU_MAX_DISKS; n++) {
		char key[32], id[16];
		const char *v;

		snprintf(key, sizeof(key), "ISO_%d", n);
		if (!(v = get(ctx, key)) || !*v)
			continue;
		snprintf(id, sizeof(id), "cd%d", n);
		if ((rc = add_drive(c, wd, id, v, "raw", NULL, model, id,
				    first && boot == 'd' && !(iso && *iso), true)) < 0)
			return rc;
		first = false;
		++*ncd;
	}
	return 0;
}

/* The file UEFI_PFLASH_CODE names for UEFI_PFLASH_VARS when it is unset:
 * "code" becomes "vars" in the file name, in the same case. New string. */
static char *vars_for_code(const char *code)
{
	const char *base = strrchr(code, '/');
	char *v = strdup(code), *p;

	if (!v)
		return NULL;
	base = base ? v + (base - code) : v;
	if ((p = strstr(base, "CODE")))
		memcpy(p, "VARS", 4);
	else if ((p = strstr(base, "code")))
		memcpy(p, "vars", 4);
	return v;
}

/* UEFI=1: OVMF on two pflash drives (code read-only, unit 0; vars, unit 1),
 * each a qcow2 overlay in the workdir, so the given files never change and
 * savevm works; the vars overlay is the run's copy (PUBLISH_PFLASH_VARS). */
static int add_pflash(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *wd,
		      char *err, size_t errlen)
{
	const char *code = get(ctx, "UEFI_PFLASH_CODE"), *vars = get(ctx, "UEFI_PFLASH_VARS");
	const char *qemu = get(ctx, "QEMU");
	char *dvars = NULL, *cpath, *vpath;
	int rc;

	if (!code || !*code) {
		if (qemu && *qemu && !str_ends_with(qemu, "x86_64")) {
			snprintf(err, errlen, "UEFI=1 on '%s': set UEFI_PFLASH_CODE and UEFI_PFLASH_VARS "
				 "(the default OVMF files are for x86_64)", qemu);
			return ERR_INVALID;
		}
		code = QEMU_OVMF_CODE;
		vars = vars && *vars ? vars : QEMU_OVMF_VARS;
	}
	if (!vars || !*vars) {
		if (!(dvars = vars_for_code(code)))
			return ERR_NOMEM;
		if (!strcmp(dvars, code)) {
			snprintf(err, errlen, "UEFI_PFLASH_CODE='%s' has no 'code' in its name to find "
				 "its variables by: set UEFI_PFLASH_VARS", code);
			free(dvars);
			return ERR_INVALID;
		}
		vars = dvars;
	}
	/* add_overlay owns each path from the call on, even when it fails. */
	cpath = path_join(wd, "pflash-code-overlay.qcow2");
	if (!cpath || (rc = add_overlay(c, cpath, code, NULL, NULL)) < 0) {
		rc = ERR_NOMEM;
		goto out;
	}
	vpath = path_join(wd, QEMU_PFLASH_VARS_FILE);
	if (!vpath || (rc = add_overlay(c, vpath, vars, NULL, NULL)) < 0) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = add(c, "-drive")) < 0 ||
	    (rc = addf(c, "id=pflash-code,if=pflash,format=qcow2,file=%s,unit=0,readonly=on", cpath)) < 0 ||
	    (rc = add(c, "-drive")) < 0 ||
	    (rc = addf(c, "id=pflash-vars,if=pflash,format=qcow2,file=%s,unit=1", vpath)) < 0)
		goto out;
	rc = 0;
out:
	free(dvars);
	return rc;
}

/* QEMUTPM: a TPM emulator (swtpm) on a unix socket, as os-autoinst. With
 * QEMUTPM_PATH_PREFIX, the socket is PREFIX<N>/swtpm-sock (N is QEMUTPM,
 * or WORKER_INSTANCE for "instance"); else the run's own in the workdir,
 * whose files are removed with the disks. */
static int add_tpm(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *wd,
		   const char *qemu_bin, char *err, size_t errlen)
{
	const char *tpm = get(ctx, "QEMUTPM"), *prefix = get(ctx, "QEMUTPM_PATH_PREFIX");
	const char *ver = get_or(get, ctx, "QEMUTPM_VER", "2.0");
	int rc;

	if (!tpm || !*tpm)
		return 0;
	if (strcmp(ver, "2.0") && strcmp(ver, "1.2")) {
		snprintf(err, errlen, "QEMUTPM_VER='%s' must be 2.0 or 1.2", ver);
		return ERR_INVALID;
	}
	c->tpm2 = !strcmp(ver, "2.0");
	if (prefix && *prefix) {
		const char *n = !strcmp(tpm, "instance") ? get_or(get, ctx, "WORKER_INSTANCE", "0") : tpm;

		if (strchr(n, '/')) {
			snprintf(err, errlen, "QEMUTPM='%s' must not contain '/'", n);
			return ERR_INVALID;
		}
		if (asprintf(&c->tpm_dir, "%s%s", prefix, n) < 0) {
			c->tpm_dir = NULL;
			return ERR_NOMEM;
		}
	} else if (!(c->tpm_dir = strdup(wd))) {
		return ERR_NOMEM;
	} else {
		c->tpm_own = true;
	}
	if (!(c->tpm_sock = path_join(c->tpm_dir, "swtpm-sock")))
		return ERR_NOMEM;
	if ((rc = check_plain("QEMUTPM_PATH_PREFIX", c->tpm_sock, err, errlen)) < 0 ||
	    (rc = add(c, "-chardev")) < 0 || (rc = addf(c, "socket,id=chrtpm,path=%s", c->tpm_sock)) < 0 ||
	    (rc = add(c, "-tpmdev")) < 0 || (rc = add(c, "emulator,id=tpm0,chardev=chrtpm")) < 0 ||
	    (rc = add(c, "-device")) < 0 ||
	    (rc = add(c, str_ends_with(qemu_bin, "aarch64") ? "tpm-tis-device,tpmdev=tpm0"
							    : "tpm-tis,tpmdev=tpm0")) < 0)
		return rc;
	return 0;
}

/* The video device: QEMU_VIDEO_DEVICE, else QEMUVGA (os-autoinst's names
 * std, virtio, qxl, cirrus, or a QEMU device name), else VGA. */
static const char *video_device(qemu_get_fn get, void *ctx)
{
	static const char *const alias[][2] = { { "std", "VGA" }, { "virtio", "virtio-vga" },
		{ "qxl", "qxl-vga" }, { "cirrus", "cirrus-vga" } };
	const char *v = get(ctx, "QEMU_VIDEO_DEVICE");
	size_t i;

	if (v && *v)
		return v;
	v = get_or(get, ctx, "QEMUVGA", "VGA");
	for (i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(v, alias[i][0]))
			return alias[i][1];
	return v;
}

/* -smp QEMUCPUS with QEMUSOCKETS, QEMUDIES, QEMUCLUSTERS, QEMUCORES and
 * QEMUTHREADS as its topology, as os-autoinst. */
static int add_smp(struct qemu_cmd *c, qemu_get_fn get, void *ctx, char *err, size_t errlen)
{
	static const char *const keys[] = { "QEMUSOCKETS", "QEMUDIES", "QEMUCLUSTERS", "QEMUCORES",
		"QEMUTHREADS" };
	struct buf b;
	long cpus, n;
	size_t i;
	int rc;

	if ((rc = get_int(get, ctx, "QEMUCPUS", 1, 1, 1024, &cpus, err, errlen)) < 0)
		return rc;
	buf_init(&b, 512);
	buf_printf(&b, "%ld", cpus);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = get(ctx, keys[i]);
		char lower[16];
		size_t j;

		if (!v || !*v)
			continue;
		if ((rc = get_int(get, ctx, keys[i], 1, 1, 1024, &n, err, errlen)) < 0)
			goto out;
		for (j = 0; keys[i][4 + j] && j < sizeof(lower) - 1; j++)
			lower[j] = (char)(keys[i][4 + j] - 'A' + 'a');
		lower[j] = '\0';
		buf_printf(&b, ",%s=%ld", lower, n);
	}
	rc = b.data ? add(c, "-smp") : ERR_NOMEM;
	if (rc == 0)
		rc = add(c, b.data);
out:
	buf_release(&b);
	return rc;
}

/* os-autoinst's sound card (backend::qemu, QEMU 4.2 and later): the
 * audiodev snd0 that start_audiocapture's wavcapture records, of backend
 * QEMU_AUDIOBACKEND (default none: nothing is played on the host), and
 * the device QEMU_AUDIODEV (default intel-hda, with its hda-output codec)
 * playing into it. The PC speaker is not connected unless QEMU_APPEND
 * says so ("machine pcspk-audiodev=snd0"), as in os-autoinst. */
static int add_audio(struct qemu_cmd *c, qemu_get_fn get, void *ctx)
{
	const char *dev = get_or(get, ctx, "QEMU_AUDIODEV", "intel-hda");
	const char *backend = get_or(get, ctx, "QEMU_AUDIOBACKEND", "none");
	int rc;

	/* both may carry QEMU options after a comma, as in os-autoinst */
	if ((rc = add(c, "-audiodev")) < 0 || (rc = addf(c, "%s,id=snd0", backend)) < 0)
		return rc;
	if (!strcmp(dev, "intel-hda")) {
		if ((rc = add(c, "-device")) < 0 || (rc = add(c, "intel-hda")) < 0)
			return rc;
		dev = "hda-output";
	}
	if ((rc = add(c, "-device")) < 0 || (rc = addf(c, "%s,audiodev=snd0", dev)) < 0)
		return rc;
	return 0;
}

/* QEMU_APPEND in os-autoinst's form: split at " -", each part split at
 * spaces, its first word an option that gets its '-' (kept if present). */
static int add_append(struct qemu_cmd *c, const char *v)
{
	bool first = true;
	int rc;

	while (*v) {
		size_t n;
		char *word;

		while (*v == ' ')
			v++;
		n = strcspn(v, " ");
		if (!n)
			break;
		word = strndup(v, n);
		if (!word)
			return ERR_NOMEM;
		rc = first && *word != '-' ? addf(c, "-%s", word) : add(c, word);
		free(word);
		if (rc < 0)
			return rc;
		v += n;
		/* The next word starts a new option when " -" comes before it. */
		first = v[0] == ' ' && v[1] == '-';
	}
	return 0;
}

/* A firmware or kernel file: relative BIOS names are under /usr/share/qemu
 * as in os-autoinst; others relative to the current directory. */
static int add_file_opt(struct qemu_cmd *c, const char *opt, const char *v, bool qemu_share)
{
	char *abs = qemu_share && *v != '/' ? path_join("/usr/share/qemu", v) : path_abs(v);
	int rc = abs ? add(c, opt) : ERR_NOMEM;

	if (rc == 0)
		rc = add(c, abs);
	free(abs);
	return rc;
}

int qemu_user_net_restricted(qemu_get_fn get, void *ctx)
{
	const char *opts = get(ctx, "NICTYPE_USER_OPTIONS");

	return !opts || !*opts || strstr(opts, "restrict=on") || strstr(opts, "restrict=yes") ||
	       strstr(opts, "restrict=y,") || str_ends_with(opts, "restrict=y");
}

/* NICTYPE=tap, openQA's network of a parallel cluster, without a tap
 * device, bridge or root: QEMU's socket netdev on the multicast group
 * 239.255.H.L (NICVLAN's two low bytes) at UDP port NICMCAST_PORT
 * (default QEMU_NET_MCAST_PORT), sent and joined on the interface of
 * NICMCAST_LOCALADDR (default 127.0.0.1: the VMs of one host; a host's
 * address reaches the other hosts of a network that carries multicast).
 * Every VM of one NICVLAN shares one Ethernet segment.
 * NICNET=relay instead (across hosts whose network carries no multicast):
 * QEMU's stream netdev to the job's relay hub on 127.0.0.1:NICRELAY_PORT
 * (vigil worker starts the hub and sets the port; worker/nethub.h), which
 * forwards the frames to the other members' hubs over TCP. */
static int add_tap_nic(struct qemu_cmd *c, qemu_get_fn get, void *ctx, char *err, size_t errlen)
{
	const char *vlan = get(ctx, "NICVLAN"), *port = get_or(get, ctx, "NICMCAST_PORT", QEMU_NET_MCAST_PORT);
	const char *local = get_or(get, ctx, "NICMCAST_LOCALADDR", "127.0.0.1"), *net = get(ctx, "NICNET");
	bool relay = net && !strcmp(net, "relay");
	const char *model = get_or(get, ctx, "NICMODEL", "virtio-net-pci");
	const char *mac = get_or(get, ctx, "NICMAC", "52:54:00:12:34:56");
	long n, p;

	if (!vlan || !*vlan) {
		snprintf(err, errlen, "NICTYPE=tap needs NICVLAN (vigil serve sets it for a job's parallel cluster;"
			 " with vigil run give the same number to the VMs of one network)");
		return ERR_INVALID;
	}
	if (str_to_long(vlan, &n) || n < 0) {
		snprintf(err, errlen, "NICVLAN='%s' is not one network number (vigil's VMs have one NIC)", vlan);
		return ERR_INVALID;
	}
	if (net && *net && strcmp(net, "mcast") && strcmp(net, "relay")) {
		snprintf(err, errlen, "NICNET='%s': expected mcast (the default) or relay", net);
		return ERR_INVALID;
	}
	if (relay) {
		port = get(ctx, "NICRELAY_PORT");
		if (!port || !*port) {
			snprintf(err, errlen, "NICNET=relay needs NICRELAY_PORT (vigil worker sets it: the port of the"
				 " job's relay hub on 127.0.0.1)");
			return ERR_INVALID;
		}
		if (str_to_long(port, &p) || p < 1 || p > 65535) {
			snprintf(err, errlen, "NICRELAY_PORT='%s' is not a port number", port);
			return ERR_INVALID;
		}
	} else if (str_to_long(port, &p) || p < 1 || p > 65535) {
		snprintf(err, errlen, "NICMCAST_PORT='%s' is not a port number", port);
		return ERR_INVALID;
	}
	if (!strcmp(model, "virtio-net"))
		model = "virtio-net-pci";
	if (check_plain("NICMODEL", model, err, errlen) < 0 || check_plain("NICMAC", mac, err, errlen) < 0 ||
	    check_plain("NICMCAST_LOCALADDR", local, err, errlen) < 0)
		return ERR_INVALID;
	if (relay) {
		/* -nic takes no stream netdev in QEMU 7.2: -netdev and -device. */
		if (add(c, "-netdev") < 0 ||
		    addf(c, "stream,id=qanet0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=%ld", p) < 0 ||
		    add(c, "-device") < 0 || addf(c, "%s,netdev=qanet0,mac=%s", model, mac) < 0)
			return ERR_NOMEM;
		return 0;
	}
	if (add(c, "-nic") < 0 ||
	    addf(c, "socket,id=qanet0,model=%s,mac=%s,mcast=239.255.%ld.%ld:%ld,localaddr=%s", model, mac,
		 (n >> 8) & 255, n & 255, p, local) < 0)
		return ERR_NOMEM;
	return 0;
}

/* The command server (runner/srv/cmdsrv.c) on 127.0.0.1:QEMUPORT+1: a
 * restricted guest cannot reach the host, so QEMU forwards
 * QEMU_HOST_IP:PORT to it through `vigil cmdsrv-connect PORT`, one process
 * per connection. fwd gets ",guestfwd=..." or stays "" (no QEMUPORT, or an
 * unrestricted net that reaches the host at 10.0.2.2 itself). */
static int cmdsrv_forward(qemu_get_fn get, void *ctx, char *fwd, size_t len, char *err, size_t errlen)
{
	const char *qp = get(ctx, "QEMUPORT"), *ip = get_or(get, ctx, "QEMU_HOST_IP", "10.0.2.2");
	char exe[PATH_MAX];
	ssize_t n;
	long port;

	if (!qp || !*qp || !qemu_user_net_restricted(get, ctx))
		return 0;
	if (str_to_long(qp, &port) || port < 1 || port > 65534) {
		snprintf(err, errlen, "QEMUPORT='%s' is not a port number", qp);
		return ERR_INVALID;
	}
	if (check_plain("QEMU_HOST_IP", ip, err, errlen) < 0)
		return ERR_INVALID;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return 0;
	exe[n] = '\0';
	/* QEMU splits the command on spaces and the option on commas. */
	if (strpbrk(exe, " ,'\"\\")) {
		log_warn("vigil's path '%s' has a space or comma: no guest forwarding to the command server", exe);
		return 0;
	}
	if ((size_t)snprintf(fwd, len, ",guestfwd=tcp:%s:%ld-cmd:%s cmdsrv-connect %ld", ip, port + 1, exe,
			     port + 1) >= len)
		fwd[0] = '\0';
	return 0;
}

/* The QEMU binary (QEMU: a path, an architecture, or x86_64) and the
 * video device, first as os-autoinst has it: EDID-capable devices get the
 * resolution, then QEMU_VIDEO_DEVICE_OPTIONS. */
static int add_binary_video(struct qemu_cmd *c, qemu_get_fn get, void *ctx, long xres, long yres, char *err,
			    size_t errlen)
{
	const char *qemu = get(ctx, "QEMU"), *vga, *v;
	int rc;

	if (!qemu || !*qemu)
		rc = add(c, "qemu-system-x86_64");
	else if (strchr(qemu, '/'))
		rc = add(c, qemu);
	else
		rc = addf(c, "qemu-system-%s", qemu);
	if (rc < 0)
		return rc;
	vga = video_device(get, ctx);
	v = get(ctx, "QEMU_VIDEO_DEVICE_OPTIONS");
	if ((rc = check_plain("QEMUVGA", vga, err, errlen)) < 0 || (rc = add(c, "-device")) < 0)
		return rc;
	if (edid_capable(vga))
		return addf(c, "%s,edid=on,xres=%ld,yres=%ld%s%s", vga, xres, yres, v && *v ? "," : "",
			    v && *v ? v : "");
	return addf(c, "%s%s%s", vga, v && *v ? "," : "", v && *v ? v : "");
}

/* The network card NICTYPE names: user (restricted unless
 * NICTYPE_USER_OPTIONS, the command server forwarded), tap, or none. */
static int add_nic(struct qemu_cmd *c, qemu_get_fn get, void *ctx, char *err, size_t errlen)
{
	const char *v = get(ctx, "NICTYPE");
	int rc;

	if (v && !strcmp(v, "user")) {
		const char *opts = get(ctx, "NICTYPE_USER_OPTIONS");
		const char *model = get_or(get, ctx, "NICMODEL", "virtio-net-pci");
		const char *mac = get_or(get, ctx, "NICMAC", "52:54:00:12:34:56");
		char fwd[PATH_MAX + 128] = "";

		/* os-autoinst's default NICMODEL is the -device alias "virtio-net"
		 * (its vars.json carries it), which -nic's model list names
		 * virtio-net-pci. */
		if (!strcmp(model, "virtio-net"))
			model = "virtio-net-pci";
		if ((rc = check_plain("NICMODEL", model, err, errlen)) < 0 ||
		    (rc = check_plain("NICMAC", mac, err, errlen)) < 0 ||
		    (rc = cmdsrv_forward(get, ctx, fwd, sizeof(fwd), err, errlen)) < 0 ||
		    (rc = add(c, "-nic")) < 0)
			return rc;
		return addf(c, "user,id=qanet0,model=%s,mac=%s,%s%s", model, mac, opts && *opts ? opts : "restrict=on",
			    fwd);
	}
	if (v && !strcmp(v, "tap"))
		return add_tap_nic(c, get, ctx, err, errlen);
	if (v && *v && strcmp(v, "none")) {
		snprintf(err, errlen, "NICTYPE='%s' is not supported (use user, tap or none)", v);
		return ERR_INVALID;
	}
	if ((rc = add(c, "-nic")) < 0)
		return rc;
	return add(c, "none");
}

/* How vigil drives the VM: stopped at start and on shutdown, no display,
 * VNC, QMP and the serial port on sockets in the work directory, a USB
 * tablet for absolute pointing. */
static int add_control(struct qemu_cmd *c)
{
	int rc;

	if ((rc = add(c, "-no-shutdown")) < 0 || (rc = add(c, "-S")) < 0 ||
	    (rc = add(c, "-display")) < 0 || (rc = add(c, "none")) < 0 ||
	    (rc = add(c, "-vnc")) < 0 || (rc = addf(c, "unix:%s", c->vnc_path)) < 0 ||
	    (rc = add(c, "-qmp")) < 0 ||
	    (rc = addf(c, "unix:%s,server=on,wait=off", c->qmp_path)) < 0 ||
	    (rc = add(c, "-chardev")) < 0 ||
	    (rc = addf(c, "socket,id=serial0,path=%s,server=on,wait=off", c->serial_path)) < 0 ||
	    (rc = add(c, "-serial")) < 0 || (rc = add(c, "chardev:serial0")) < 0 ||
	    (rc = add(c, "-device")) < 0 || (rc = add(c, "qemu-xhci")) < 0 ||
	    (rc = add(c, "-device")) < 0)
		return rc;
	return add(c, "usb-tablet");
}

/* The SCSI controller scsi-hd and scsi-cd need (SCSICONTROLLER), and with
 * VIRTIO_CONSOLE=1 os-autoinst's virtconsole (the guest's hvc0) on a
 * socket of its own, for the virtio-terminal console. */
static int add_controllers(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *wd)
{
	const char *hm = get_or(get, ctx, "HDDMODEL", ""), *cm = get_or(get, ctx, "CDMODEL", ""), *v;
	int rc;

	if ((is_scsi(hm) || is_scsi(cm)) &&
	    ((rc = add(c, "-device")) < 0 ||
	     (rc = addf(c, "%s,id=scsi0", get_or(get, ctx, "SCSICONTROLLER", "virtio-scsi-pci"))) < 0))
		return rc;
	if (!(v = get(ctx, "VIRTIO_CONSOLE")) || !is_on(v))
		return 0;
	if (!(c->virtio_path = path_join(wd, "virtio_console.sock")))
		return ERR_NOMEM;
	if ((rc = add(c, "-device")) < 0 || (rc = add(c, "virtio-serial")) < 0 || (rc = add(c, "-chardev")) < 0 ||
	    (rc = addf(c, "socket,id=virtio_console,path=%s,server=on,wait=off", c->virtio_path)) < 0 ||
	    (rc = add(c, "-device")) < 0)
		return rc;
	return add(c, "virtconsole,chardev=virtio_console,name=org.openqa.console.virtio_console");
}

/* A scratch qcow2 without a device: every VM has a writable
 * snapshot-capable disk for the VM state of savevm/loadvm. */
static int add_scratch(struct qemu_cmd *c, const char *wd)
{
	char *path = path_join(wd, "scratch.qcow2");
	int rc;

	if (!path)
		return ERR_NOMEM;
	if ((rc = add_overlay(c, path, NULL, NULL, "1G")) < 0 || (rc = add(c, "-drive")) < 0)
		return rc;
	return addf(c, "id=scratch,if=none,format=qcow2,file=%s,cache=unsafe", path);
}

/* What the VM boots: UEFI's pflash (OVMF boots by bootindex; it has no
 * -boot order), else the boot order, a CD once, BIOS; then KERNEL,
 * INITRD, APPEND and QEMU_APPEND. */
static int add_boot(struct qemu_cmd *c, qemu_get_fn get, void *ctx, const char *wd, char boot, int ncd,
		    char *err, size_t errlen)
{
	const char *v;
	int rc = 0;

	if (is_on(get(ctx, "UEFI"))) {
		if ((rc = add_pflash(c, get, ctx, wd, err, errlen)) < 0)
			return rc;
	} else {
		if (boot && ((rc = add(c, "-boot")) < 0 || (rc = addf(c, "order=%c", boot)) < 0))
			return rc;
		if (!boot && ncd && ((rc = add(c, "-boot")) < 0 || (rc = add(c, "once=d")) < 0))
			return rc;
		if ((v = get(ctx, "BIOS")) && *v && (rc = add_file_opt(c, "-bios", v, true)) < 0)
			return rc;
	}
	if ((v = get(ctx, "KERNEL")) && *v && (rc = add_file_opt(c, "-kernel", v, false)) < 0)
		return rc;
	if ((v = get(ctx, "INITRD")) && *v && (rc = add_file_opt(c, "-initrd", v, false)) < 0)
		return rc;
	if ((v = get(ctx, "APPEND")) && *v && ((rc = add(c, "-append")) < 0 || (rc = add(c, v)) < 0))
		return rc;
	if ((v = get(ctx, "QEMU_APPEND")) && *v && (rc = add_append(c, v)) < 0)
		return rc;
	return 0;
}

int qemu_cmd_build(qemu_get_fn get, void *ctx, const char *workdir, const char *accel,
		   struct qemu_cmd *c, char *err, size_t errlen)
{
	const char *v;
	char *wd = NULL, boot = 0;
	long ram, xres, yres;
	int rc, ncd = 0;

	memset(c, 0, sizeof(*c));
	if (strcmp(accel, "kvm") && strcmp(accel, "tcg")) {
		snprintf(err, errlen, "accelerator '%s' is neither kvm nor tcg", accel);
		return ERR_INVALID;
	}
	wd = path_abs(workdir);
	if (!wd)
		return ERR_NOMEM;
	if ((rc = get_int(get, ctx, "QEMURAM", 1024, 16, 1 << 24, &ram, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "XRES", 1024, 16, 16384, &xres, err, errlen)) < 0 ||
	    (rc = get_int(get, ctx, "YRES", 768, 16, 16384, &yres, err, errlen)) < 0 ||
	    (rc = boot_from(get, ctx, &boot, err, errlen)) < 0)
		goto out;
	c->xres = (int)xres;
	c->yres = (int)yres;
	rc = ERR_NOMEM;
	c->vnc_path = path_join(wd, "vnc.sock");
	c->qmp_path = path_join(wd, "qmp.sock");
	c->serial_path = path_join(wd, "serial.sock");
	if (!c->vnc_path || !c->qmp_path || !c->serial_path)
		goto out;
	if ((rc = add_binary_video(c, get, ctx, xres, yres, err, errlen)) < 0)
		goto out;
	if ((rc = add(c, "-accel")) < 0 || (rc = add(c, accel)) < 0 ||
	    (rc = add(c, "-m")) < 0 || (rc = addf(c, "%ld", ram)) < 0 ||
	    (rc = add_smp(c, get, ctx, err, errlen)) < 0)
		goto out;
	if ((v = get(ctx, "QEMUMACHINE")) && *v &&
	    ((rc = add(c, "-machine")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	if ((v = get(ctx, "QEMUCPU")) && *v &&
	    ((rc = add(c, "-cpu")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	if ((rc = add_nic(c, get, ctx, err, errlen)) < 0)
		goto out;
	/* After the NIC, as os-autoinst, so that virtio-net stays eth0. */
	v = get(ctx, "QEMU_VIRTIO_RNG");
	if ((!v || !*v || is_on(v)) &&
	    ((rc = add(c, "-object")) < 0 || (rc = add(c, "rng-random,filename=/dev/urandom,id=rng0")) < 0 ||
	     (rc = add(c, "-device")) < 0 || (rc = add(c, "virtio-rng-pci,rng=rng0")) < 0))
		goto out;
	if ((v = get(ctx, "QEMU_SMBIOS")) && *v &&
	    ((rc = add(c, "-smbios")) < 0 || (rc = add(c, v)) < 0))
		goto out;
	if ((rc = add_tpm(c, get, ctx, wd, c->argv[0], err, errlen)) < 0 || (rc = add_control(c)) < 0 ||
	    (rc = add_audio(c, get, ctx)) < 0 || (rc = add_controllers(c, get, ctx, wd)) < 0 ||
	    (rc = add_disks(c, get, ctx, wd, boot, err, errlen)) < 0 || (rc = add_scratch(c, wd)) < 0 ||
	    (rc = add_cdroms(c, get, ctx, wd, boot, &ncd, err, errlen)) < 0 ||
	    (rc = add_boot(c, get, ctx, wd, boot, ncd, err, errlen)) < 0)
		goto out;
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
	free(c->virtio_path);
	free(c->tpm_dir);
	free(c->tpm_sock);
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

/* os-autoinst's qemu backend variables (backend_vars.asciidoc, QEMU
 * section) that vigil does not support: named in a warning at start. A
 * name ending in "_n" stands for NAME_1..NAME_9. One row per variable so
 * that docs/qemu-vars.md can list them from here. */
static const struct {
	const char *name, *why;
} unsupported[] = {
	{ "ATACONTROLLER", "no AHCI controller is added" },
	{ "BOOT_MENU", "no firmware boot menu" },
	{ "BOOT_MENU_TIMEOUT", "no firmware boot menu" },
	{ "DELAYED_START", "the VM always starts at once" },
	{ "HDDNUMQUEUES_n", "NVMe queues are QEMU's default" },
	{ "LAPTOP", "no DMI tables are shipped" },
	{ "MULTIPATH", "no multipath disks" },
	{ "PATHCNT", "no multipath disks" },
	{ "NBF", "no iSCSI network boot" },
	{ "OFFLINE_SUT", "vigil's VMs have no network unless NICTYPE=user or tap" },
	{ "OFW", "no Open Firmware (ppc, sparc)" },
	{ "OVS_DEBUG", "no Open vSwitch: NICTYPE=tap is QEMU socket multicast" },
	{ "PXEBOOT", "no network boot" },
	{ "QEMU_SOUNDHW", "os-autoinst too ignores it on QEMU 4.2 and later: use QEMU_AUDIODEV" },
	{ "QEMU_BALLOON_TARGET", "no balloon device" },
	{ "QEMU_BALLOON_TIMEOUT", "no balloon device" },
	{ "QEMU_ENABLE_SMBD", "no samba share" },
	{ "QEMU_HUGE_PAGES_PATH", "no huge pages" },
	{ "QEMU_NO_FDC_SET", "QEMU's default floppy controller stays" },
	{ "QEMU_NO_TABLET", "the USB tablet is always there" },
	{ "QEMU_NUMA", "no NUMA nodes" },
	{ "QEMU_ONLY_EXEC", "vigil always connects to the VM" },
	{ "QEMU_OVERRIDE_VIDEO_DEVICE_AARCH64", "deprecated: set QEMU_VIDEO_DEVICE=VGA" },
	{ "RAIDLEVEL", "no RAID disk sets" },
	{ "TAPDEV", "NICTYPE=tap is QEMU socket multicast, no tap device" },
	{ "TAPSCRIPT", "NICTYPE=tap is QEMU socket multicast, no tap device" },
	{ "TAPDOWNSCRIPT", "NICTYPE=tap is QEMU socket multicast, no tap device" },
	{ "UEFI_BIOS", "deprecated: use UEFI_PFLASH_CODE" },
	{ "UEFI_PFLASH", "deprecated: use UEFI_PFLASH_CODE and UEFI_PFLASH_VARS" },
	{ "USBSIZEGB", "the USB stick has the ISO's size" },
	{ "VDE_PORT", "only user networking" },
	{ "VDE_SOCKETDIR", "only user networking" },
	{ "VDE_USE_SLIRP", "only user networking" },
	{ "VNCKB", "keys are sent as en-us keysyms" },
};

void qemu_unsupported_vars(qemu_get_fn get, void *ctx, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		const char *name = unsupported[i].name;
		size_t nlen = strlen(name);
		int n, from = 0, to = 0;

		if (str_ends_with(name, "_n")) {
			nlen -= 1;
			from = 1;
			to = 9;
		}
		for (n = from; n <= to; n++) {
			char key[64];
			const char *v;
			int w;

			if (n)
				snprintf(key, sizeof(key), "%.*s%d", (int)nlen, name, n);
			else
				snprintf(key, sizeof(key), "%s", name);
			if (!(v = get(ctx, key)) || !*v || used >= len)
				continue;
			w = snprintf(buf + used, len - used, "%s%s (%s)", used ? ", " : "", key,
				     unsupported[i].why);
			used = w < 0 || (size_t)w >= len - used ? len : used + (size_t)w;
		}
	}
}
