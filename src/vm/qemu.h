/* SPDX-License-Identifier: MIT */
/* qemu.h - the QEMU process: its command line built from job settings (a
 * pure function), scratch qcow2 overlays, spawning with output captured to
 * the log, stopping (QMP quit, SIGTERM, SIGKILL; always reaped), the reason
 * it died, and the per-host KVM probe (accel.c). Sockets for QMP, VNC and
 * the serial port live in the job's work directory. */
#ifndef VIGIL_QEMU_H
#define VIGIL_QEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "util/buf.h"

struct qmp;

/* UEFI=1's firmware when UEFI_PFLASH_CODE is unset: Debian's ovmf package,
 * the 4 MiB code and its matching variables. */
#define QEMU_OVMF_CODE "/usr/share/OVMF/OVMF_CODE_4M.fd"
#define QEMU_OVMF_VARS "/usr/share/OVMF/OVMF_VARS_4M.fd"
/* The run's copy of the UEFI variables in the workdir (a qcow2 overlay). */
#define QEMU_PFLASH_VARS_FILE "pflash-vars-overlay.qcow2"
/* NICTYPE=tap: the UDP port of the cluster's multicast group when
 * NICMCAST_PORT is unset (vigil serve sets it to its own port). */
#define QEMU_NET_MCAST_PORT "21100"

/* Settings lookup: the value of key, or NULL when unset. Borrowed; must
 * stay valid until the call that received it returns. */
typedef const char *(*qemu_get_fn)(void *ctx, const char *key);

/* A qcow2 file to create before QEMU starts: an overlay over backing (in
 * backing_fmt, or detected with `qemu-img info` when NULL), or, when
 * backing is NULL, a blank disk of size (e.g. "10G"). */
struct qemu_overlay {
	char *path;
	char *backing;
	char *backing_fmt;
	char *size;
};

/* Everything needed to start one VM. Filled by qemu_cmd_build, released by
 * qemu_cmd_release. All strings owned. */
struct qemu_cmd {
	char **argv;            /* NULL-terminated; argv[0] is the binary */
	size_t argc, cap;
	struct qemu_overlay *overlays;
	size_t noverlays;
	char *vnc_path, *qmp_path, *serial_path; /* sockets in the workdir */
	char *virtio_path;        /* VIRTIO_CONSOLE=1: the virtconsole's socket, else NULL */
	char *tpm_dir, *tpm_sock; /* QEMUTPM: swtpm's state and socket, or NULL */
	bool tpm2;                /* QEMUTPM_VER 2.0 (the default) */
	bool tpm_own;             /* the socket is the run's (in the workdir) */
	int xres, yres;
};

/* 1 when NICTYPE=user's guest cannot reach the host (NICTYPE_USER_OPTIONS
 * unset, vigil's restrict=on, or naming restrict=on): the command server
 * is then forwarded to QEMU_HOST_IP (the runner sets it). */
int qemu_user_net_restricted(qemu_get_fn get, void *ctx);

/* Build the QEMU command line from settings (no side effects), with
 * os-autoinst's meanings (docs/qemu-vars.md has the table):
 *   QEMU (binary: a path, or NAME -> qemu-system-NAME; default
 *   qemu-system-x86_64), -accel ACCEL (always explicit), QEMURAM (1024),
 *   QEMUCPUS (1) with QEMUSOCKETS/QEMUDIES/QEMUCLUSTERS/QEMUCORES/
 *   QEMUTHREADS, QEMUMACHINE, QEMUCPU, QEMU_VIDEO_DEVICE or QEMUVGA (std,
 *   virtio, qxl, cirrus or a device; EDID-capable devices get XRES/YRES,
 *   default 1024x768) with QEMU_VIDEO_DEVICE_OPTIONS, NICTYPE ("user":
 *   -nic user,model=NICMODEL,mac=NICMAC,NICTYPE_USER_OPTIONS or
 *   restrict=on, with a guestfwd of QEMU_HOST_IP:QEMUPORT+1 to the command
 *   server through `vigil cmdsrv-connect` when restricted; "tap": -nic
 *   socket on the multicast group of NICVLAN, NICMCAST_PORT and
 *   NICMCAST_LOCALADDR, or with NICNET=relay a stream netdev to the relay
 *   hub at 127.0.0.1:NICRELAY_PORT; else -nic none), QEMU_VIRTIO_RNG (1), QEMU_SMBIOS,
 *   HDD_1..HDD_n and NUMDISKS (1)/HDDSIZEGB(_n) (overlays hdN-overlay.qcow2,
 *   blank disks for missing HDD_n, on HDDMODEL_n or HDDMODEL, default
 *   virtio-blk-pci), ISO (cd0-overlay.qcow2 on CDMODEL, default ide-cd; a
 *   usb-storage stick with USBBOOT) and ISO_n (cdN), BOOTFROM/
 *   BOOT_HDD_IMAGE (bootindex=0, and -boot order= without UEFI; -boot
 *   once=d when a CD is there), UEFI with UEFI_PFLASH_CODE/_VARS (pflash
 *   overlays; defaults QEMU_OVMF_CODE/QEMU_OVMF_VARS), QEMUTPM with
 *   QEMUTPM_PATH_PREFIX/QEMUTPM_VER (tpm_* below), BIOS (without UEFI),
 *   KERNEL/INITRD/APPEND, QEMU_APPEND (os-autoinst's form: "-" added to
 *   the first word of each part; last). Plus -no-shutdown -S -display
 *   none, VNC/QMP/serial unix sockets in workdir and a USB tablet.
 *   Relative paths are made absolute.
 * accel is "kvm" or "tcg" (see qemu_accel_select). 0, ERR_INVALID (bad
 * setting; err names it) or ERR_NOMEM; cmd is released on error. */
int qemu_cmd_build(qemu_get_fn get, void *ctx, const char *workdir, const char *accel,
		   struct qemu_cmd *cmd, char *err, size_t errlen);
void qemu_cmd_release(struct qemu_cmd *cmd);

/* Append one argument to cmd's argv (e.g. "-loadvm" NAME). 0 or ERR_NOMEM. */
int qemu_cmd_append(struct qemu_cmd *cmd, const char *arg);

/* The command line as one shell-quoted line (for logs). New string. */
char *qemu_cmd_string(const struct qemu_cmd *cmd);

/* Create cmd's overlays and blank disks with qemu-img (replacing old
 * files). 0 or a negative code; err has qemu-img's message. */
int qemu_prepare_disks(const struct qemu_cmd *cmd, char *err, size_t errlen);

/* PUBLISH_PFLASH_VARS: the run's UEFI variables (QEMU_PFLASH_VARS_FILE in
 * workdir) flattened with qemu-img convert into the qcow2 file dest, for a
 * chained job's UEFI_PFLASH_VARS. QEMU must have stopped. 0 or a negative
 * code; err says why. */
int qemu_publish_pflash_vars(const char *workdir, const char *dest, char *err, size_t errlen);

/* Backend variables of os-autoinst's qemu backend (backend_vars.asciidoc)
 * that vigil does not support, set in the settings: their names, separated
 * by ", ", into buf (empty when none). Test variables are never named. */
void qemu_unsupported_vars(qemu_get_fn get, void *ctx, char *buf, size_t len);

struct qemu;

/* Spawn QEMU (cmd.argv; disks must be prepared; stale sockets are removed
 * first). With cmd.tpm_sock, a swtpm child serves it first unless the
 * socket already exists (a TPM someone else runs); it ends with QEMU. Its stdout/stderr lines go to log_info as "qemu: ...". The child
 * stays in our process group and gets PR_SET_PDEATHSIG(SIGKILL); that
 * signal fires when the *thread* that forked exits, so call this from a
 * thread that lives as long as the VM (e.g. main). *out is the caller's
 * (qemu_free). 0 or -errno; err says what. */
int qemu_start(const struct qemu_cmd *cmd, struct qemu **out, char *err, size_t errlen);

/* Stop QEMU: QMP quit (if qmp is not NULL), then SIGTERM, then SIGKILL,
 * each after a short wait; always reaped on return. No-op if it already
 * exited. */
void qemu_stop(struct qemu *q, struct qmp *qmp);

/* Whether the process still runs (reaps it if it exited). */
bool qemu_running(struct qemu *q);

pid_t qemu_pid(const struct qemu *q);

/* Whether the process is stopped (SIGSTOP, SIGTSTP, a tracer): it makes
 * no progress, answers neither QMP nor VNC, until it is continued. */
bool qemu_stopped(const struct qemu *q);

/* Seconds QEMU has waited for a CPU so far: the run_delay of its thread
 * that waited longest (util/proc.c), never less than an earlier answer
 * (threads come and go). 0 where the kernel does not say. The runner's
 * clock leaves this time out, so that a timeout counts time the VM could
 * run, not time a busy host kept it waiting. */
double qemu_starved(struct qemu *q);
/* The clock QMP's waits on q run on (vm/qmp.h): monotonic time less
 * qemu_starved, and q's exit. q must outlive the QMP connection. */
struct qmp_clock;
void qemu_qmp_clock(struct qemu *q, struct qmp_clock *out);

/* Why QEMU is no longer running: "qemu exited with status 1" or "qemu was
 * killed by signal 9", then its last output lines. Empty while running. */
void qemu_exit_reason(struct qemu *q, char *buf, size_t len);

/* Stop (as qemu_stop without QMP) if still running, then free. NULL-safe. */
void qemu_free(struct qemu *q);

/* accel.c: "kvm" or "tcg" for this host. Order: env VIGIL_ACCEL=kvm|tcg;
 * setting QEMU_NO_KVM=1 -> tcg; no usable /dev/kvm -> tcg; else the KVM
 * probe's answer, cached in cache_dir/kvm-probe keyed by the QEMU version
 * and kernel release (cache_dir NULL: ~/.cache/vigil). Never fails. */
const char *qemu_accel_select(const char *qemu_bin, qemu_get_fn get, void *ctx,
			      const char *cache_dir);

/* Boot a 512-byte sector that writes 0x21 to isa-debug-exit under accel
 * ("kvm" or "tcg") and check QEMU exits 67 = (0x21 << 1) | 1 within
 * timeout_ms: the guest made real progress. *works set; 0, or a negative
 * code when the probe could not even run (err says why). */
int qemu_accel_probe(const char *qemu_bin, const char *accel, int timeout_ms,
		     bool *works, char *err, size_t errlen);

#endif
