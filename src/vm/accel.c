/* SPDX-License-Identifier: MIT */
/* accel.c - choosing KVM or TCG: a probe guest must make real progress
 * under KVM (an open /dev/kvm is not enough: nested KVM can hang guests).
 * The answer is cached per QEMU version and kernel release. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#define LOG_MODULE "accel"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "vm/qemu.h"
#include "util/banned.h" /* last: after every system header */

#define PROBE_EXIT 67 /* isa-debug-exit: (0x21 << 1) | 1 */
#define PROBE_TIMEOUT_MS 10000

int qemu_accel_probe(const char *qemu_bin, const char *accel, int timeout_ms,
		     bool *works, char *err, size_t errlen)
{
	/* A boot sector that does what guests need and nested KVM can fail at
	 * (measured here: the trivial "out; hlt" sector and a timer-interrupt
	 * wait both pass under a KVM that hangs every Linux kernel in its
	 * long-mode decompressor): identity-map 2 MiB with 2 MiB pages, enter
	 * long mode, add to every qword of a 1 MiB buffer 64 times, then write
	 * 0x21 to isa-debug-exit (port 0xf4). TCG runs it in ~0.1 s. Assembled
	 * with GNU as from: cli; zero 0x1000-0x3fff; PML4[0]=0x2003,
	 * PDPT[0]=0x3003, PD[0]=0x83; lgdt; CR4.PAE; CR3=0x1000; EFER.LME;
	 * CR0.PG|PE; ljmp 0x08:lm; lm: ds=ss=0x10; for edx=64..1: for each
	 * qword q in [1 MiB, 2 MiB): q += rdx; mov al,0x21; out 0xf4,al; hlt.
	 * GDT: null, 0x00209a0000000000, 0x0000920000000000. */
	static const unsigned char code[] = {
	0xfa, 0x31, 0xc0, 0x8e, 0xd8, 0x8e, 0xc0, 0x8e, 0xd0, 0xbc, 0x00, 0x7c,
	0x66, 0xbf, 0x00, 0x10, 0x00, 0x00, 0x66, 0x31, 0xc0, 0x66, 0xb9, 0x00,
	0x0c, 0x00, 0x00, 0x67, 0x66, 0xf3, 0xab, 0x66, 0xc7, 0x06, 0x00, 0x10,
	0x03, 0x20, 0x00, 0x00, 0x66, 0xc7, 0x06, 0x00, 0x20, 0x03, 0x30, 0x00,
	0x00, 0x66, 0xc7, 0x06, 0x00, 0x30, 0x83, 0x00, 0x00, 0x00, 0x66, 0x0f,
	0x01, 0x16, 0xc0, 0x7c, 0x0f, 0x20, 0xe0, 0x66, 0x83, 0xc8, 0x20, 0x0f,
	0x22, 0xe0, 0x66, 0xb8, 0x00, 0x10, 0x00, 0x00, 0x0f, 0x22, 0xd8, 0x66,
	0xb9, 0x80, 0x00, 0x00, 0xc0, 0x0f, 0x32, 0x66, 0x0d, 0x00, 0x01, 0x00,
	0x00, 0x0f, 0x30, 0x0f, 0x20, 0xc0, 0x66, 0x0d, 0x01, 0x00, 0x00, 0x80,
	0x0f, 0x22, 0xc0, 0x66, 0xea, 0x77, 0x7c, 0x00, 0x00, 0x08, 0x00, 0xb8,
	0x10, 0x00, 0x00, 0x00, 0x8e, 0xd8, 0x8e, 0xd0, 0xba, 0x40, 0x00, 0x00,
	0x00, 0x48, 0xc7, 0xc7, 0x00, 0x00, 0x10, 0x00, 0xb9, 0x00, 0x00, 0x02,
	0x00, 0x48, 0x01, 0x17, 0x48, 0x83, 0xc7, 0x08, 0xff, 0xc9, 0x75, 0xf5,
	0xff, 0xca, 0x75, 0xe5, 0xb0, 0x21, 0xe6, 0xf4, 0xfa, 0xf4, 0xeb, 0xfd,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x9a, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x92, 0x00, 0x00,
	0x17, 0x00, 0xa8, 0x7c,
	};
	unsigned char sector[512] = { 0 };
	char dir[] = "/tmp/vigil-accel-XXXXXX", *img = NULL, *drive = NULL;
	char *argv[] = { (char *)qemu_bin, "-accel", (char *)accel, "-nodefaults",
			 "-display", "none", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
			 "-drive", NULL, NULL };
	struct buf out;
	int status, rc;

	*works = false;
	buf_init(&out, 64 * 1024);
	memcpy(sector, code, sizeof(code));
	sector[510] = 0x55;
	sector[511] = 0xaa;
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "cannot create a directory for the kvm probe: %s", strerror(errno));
		buf_release(&out);
		return -errno;
	}
	img = path_join(dir, "probe.img");
	if (!img || asprintf(&drive, "file=%s,format=raw", img) < 0) {
		drive = NULL;
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_write_all(img, sector, sizeof(sector))) < 0) {
		snprintf(err, errlen, "cannot write the probe image '%s': %s", img, err_str(rc));
		goto out;
	}
	argv[9] = drive;
	rc = proc_run(argv, timeout_ms, &status, &out);
	if (rc == ERR_TIMEOUT) {
		log_info("%s probe: no progress within %d ms", accel, timeout_ms);
		rc = 0;
	} else if (rc < 0) {
		snprintf(err, errlen, "cannot run '%s' for the %s probe: %s", qemu_bin, accel, err_str(rc));
	} else {
		*works = WIFEXITED(status) && WEXITSTATUS(status) == PROBE_EXIT;
		if (!*works)
			log_info("%s probe: qemu ended with wait status %d: %s", accel, status,
				 out.data ? out.data : "");
	}
out:
	if (img)
		(void)unlink(img);
	(void)rmdir(dir);
	free(img);
	free(drive);
	buf_release(&out);
	return rc;
}

/* "QEMU emulator version ...\n<kernel release>" identifies a probe result. */
static char *probe_key(const char *qemu_bin)
{
	char *argv[] = { (char *)qemu_bin, "-version", NULL };
	struct utsname u;
	struct buf out;
	char *key = NULL;
	int status;

	buf_init(&out, 64 * 1024);
	if (proc_run(argv, 10000, &status, &out) == 0 && out.data && uname(&u) == 0) {
		size_t n = strcspn(out.data, "\n");

		if (asprintf(&key, "%.*s\n%s\n", (int)n, out.data, u.release) < 0)
			key = NULL;
	}
	buf_release(&out);
	return key;
}

const char *qemu_accel_select(const char *qemu_bin, qemu_get_fn get, void *ctx,
			      const char *cache_dir)
{
	const char *env = getenv("VIGIL_ACCEL"), *v, *answer = "tcg";
	char *dir = NULL, *path = NULL, *key = NULL, errbuf[256];
	struct buf cached;
	bool works = false;

	if (env && (!strcmp(env, "kvm") || !strcmp(env, "tcg")))
		return !strcmp(env, "kvm") ? "kvm" : "tcg";
	if (get && (v = get(ctx, "QEMU_NO_KVM")) && *v && strcmp(v, "0"))
		return "tcg";
	if (access("/dev/kvm", R_OK | W_OK) != 0)
		return "tcg";
	buf_init(&cached, 4096);
	if (cache_dir) {
		dir = strdup(cache_dir);
	} else if (getenv("HOME")) {
		char *c = path_join(getenv("HOME"), ".cache");

		dir = c ? path_join(c, "vigil") : NULL;
		free(c);
	}
	key = probe_key(qemu_bin);
	if (dir && key) {
		path = path_join(dir, "kvm-probe");
		if (path && file_read_all(path, &cached) == 0 && cached.data &&
		    str_starts_with(cached.data, key)) {
			const char *ans = cached.data + strlen(key);

			answer = str_starts_with(ans, "kvm") ? "kvm" : "tcg";
			log_debug("kvm probe cached in '%s': %s", path, answer);
			goto out;
		}
	}
	if (qemu_accel_probe(qemu_bin, "kvm", PROBE_TIMEOUT_MS, &works, errbuf, sizeof(errbuf)) < 0) {
		log_warn("kvm probe failed, using tcg: %s", errbuf);
		goto out; /* not cached: the failure may be passing */
	}
	answer = works ? "kvm" : "tcg";
	log_info("kvm probe: %s", works ? "kvm works" : "kvm makes no progress, using tcg");
	if (path) {
		struct buf text;

		buf_init(&text, 4096);
		if (file_mkdir_p(dir, 0755) < 0 || buf_printf(&text, "%s%s\n", key, answer) < 0 ||
		    file_write_all(path, text.data, text.len) < 0)
			log_warn("cannot cache the kvm probe answer in '%s'", path);
		buf_release(&text);
	}
out:
	buf_release(&cached);
	free(dir);
	free(path);
	free(key);
	return answer;
}
