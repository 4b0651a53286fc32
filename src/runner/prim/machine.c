/* SPDX-License-Identifier: MIT */
/* machine.c - the job's machine: QEMU started with QMP, VNC, the serial
 * ports, the live view, --explore's frames and the video attached, taken
 * down in the order that cannot hang, and its snapshots (savevm/loadvm).
 * Owns none of them: they live in struct runner until machine_stop. */
#define LOG_MODULE "runner"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/job.h"
#include "runner/prim/explore.h"
#include "runner/prim/liveview.h"
#include "runner/prim/machine.h"
#include "util/err.h"
#include "util/log.h"
#include "util/path.h"
#include "util/time.h"
#include "video/video.h"
#include "vm/qemu.h"
#include "vm/qmp.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

int machine_start(struct runner *r, const char *loadvm, char *err, size_t errlen)
{
	struct qemu_cmd cmd;
	const char *accel;
	char status[32], *line;
	int rc;

	{
		char unsup[1024];

		qemu_unsupported_vars(vars_get_cb, &r->vars, unsup, sizeof(unsup));
		if (unsup[0])
			log_warn("os-autoinst backend variables that vigil does not support: %s", unsup);
	}
	/* Build once to learn the binary, then choose the accelerator for it. */
	rc = qemu_cmd_build(vars_get_cb, &r->vars, r->workdir, "tcg", &cmd, err, errlen);
	if (rc)
		return rc;
	accel = qemu_accel_select(cmd.argv[0], vars_get_cb, &r->vars, NULL);
	if (strcmp(accel, "tcg")) {
		qemu_cmd_release(&cmd);
		rc = qemu_cmd_build(vars_get_cb, &r->vars, r->workdir, accel, &cmd, err, errlen);
		if (rc)
			return rc;
	}
	if (loadvm && (qemu_cmd_append(&cmd, "-loadvm") || qemu_cmd_append(&cmd, loadvm))) {
		rc = ERR_NOMEM;
		goto out;
	}
	line = qemu_cmd_string(&cmd);
	log_info("starting QEMU: %s", line ? line : cmd.argv[0]);
	free(line);
	/* Resuming keeps the disks that hold the snapshot. */
	rc = loadvm ? 0 : qemu_prepare_disks(&cmd, err, errlen);
	if (!rc)
		rc = qemu_start(&cmd, &r->qemu, err, errlen);
	if (rc)
		goto out;
	r->steps.t0 = time_mono();
	{
		/* QEMU's own time: a QEMU starved by a busy host (a -loadvm's
		 * handshake took over 10 s under load) is not a dead one */
		struct qmp_clock clock;
		qemu_qmp_clock(r->qemu, &clock);
		rc = qmp_connect_clock(cmd.qmp_path, 10000, &clock, &r->qmp, err, errlen);
	}
	if (rc)
		goto out;
	{
		char *log_path = path_join(r->out_dir, "serial0.txt");
		rc = log_path ? serial_open(cmd.serial_path, log_path, 10000, &r->serial, err, errlen)
			      : ERR_NOMEM;
		free(log_path);
	}
	if (!rc && cmd.virtio_path) {
		char *log_path = path_join(r->out_dir, "virtio_console.log");
		rc = log_path ? serial_open(cmd.virtio_path, log_path, 10000, &r->virtio, err, errlen) : ERR_NOMEM;
		free(log_path);
	}
	if (rc)
		goto out;
	rc = vnc_connect(cmd.vnc_path, r->xres, r->yres, 10000, &r->vnc, err, errlen);
	if (rc)
		goto out;
	if (liveview_start(r->vnc, r->out_dir, &r->liveview))
		log_warn("no live view frames: cannot start their thread");
	if (r->explore_on) {
		char *edir = path_join(r->out_dir, "explore");
		int erc = edir ? explore_start(r->vnc, edir, r->steps.t0, &r->explore) : ERR_NOMEM;
		if (erc)
			log_warn("--explore: cannot save frames in '%s': %s", edir ? edir : "explore", err_str(erc));
		free(edir);
	}
	if (!vars_get_bool(&r->vars, "NOVIDEO", 0)) {
		char *vpath = path_join(r->out_dir, "video.webm"), verr[512];
		/* The video's time 0 is QEMU's start, as every step's frametime. */
		if (vpath && video_open(vpath, r->xres, r->yres, r->steps.t0, &r->video, verr, sizeof(verr)) == 0)
			vnc_add_listener(r->vnc, video_frame_listener, r->video);
		else
			log_warn("no video: %s", vpath ? verr : "out of memory");
		free(vpath);
	}
	rc = qmp_command(r->qmp, "cont", NULL, NULL, err, errlen);
	if (rc)
		goto out;
	if (qmp_query_status(r->qmp, status, sizeof(status), err, errlen) == 0)
		log_info("VM status after cont: %s", status);
out:
	qemu_cmd_release(&cmd);
	return rc;
}

void machine_stop(struct runner *r)
{
	liveview_stop(r->liveview);
	r->liveview = NULL;
	explore_detach(r->explore);
	/* A stopped QEMU reads nothing: the capture thread would wait in a
	 * write to its VNC socket for ever. It goes first (its QMP does not
	 * answer either), so the socket closes. */
	if (r->qemu && qemu_stopped(r->qemu)) {
		log_warn("qemu (pid %lld) is stopped: ending it before its VNC connection", (long long)qemu_pid(r->qemu));
		qemu_stop(r->qemu, NULL);
	}
	/* The capture thread feeds the video: close VNC before the video. */
	if (r->vnc)
		vnc_close(r->vnc);
	r->vnc = NULL;
	if (r->explore) {
		long n = explore_stop(r->explore);
		printf("explore: %ld distinct frames in %s/explore\n", n, r->out_dir);
		log_info("explore: %ld distinct frames saved", n);
		r->explore = NULL;
	}
	if (r->video) {
		struct video_stats st;
		if (video_close_stats(r->video, time_mono(), &st))
			log_err("video.webm could not be finished");
		log_info("video: %llu frames (%llu dropped), %.1f s, %llu KiB, encoder CPU %.2f s",
			 (unsigned long long)st.frames, (unsigned long long)st.dropped, st.duration_s,
			 (unsigned long long)(st.bytes / 1024), st.cpu_s);
		r->video = NULL;
	}
	if (r->qemu)
		qemu_stop(r->qemu, r->qmp);
	if (r->qmp)
		qmp_close(r->qmp);
	r->qmp = NULL;
	if (r->serial)
		serial_close(r->serial);
	r->serial = NULL;
	serial_close(r->virtio);
	r->virtio = NULL;
	if (r->qemu) {
		r->starved = qemu_starved(r->qemu);
		if (r->starved >= 1)
			log_info("QEMU waited %.1f s for a CPU (a busy host): the test's timeouts did not count that time",
				 r->starved);
		qemu_free(r->qemu);
	}
	r->qemu = NULL;
}

int machine_snapshot(struct runner *r, const char *what, const char *name, char *err, size_t errlen)
{
	char line[300];

	snprintf(line, sizeof(line), "%s %s", what, name);
	return qmp_hmp(r->qmp, line, err, errlen);
}
