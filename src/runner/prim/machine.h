/* SPDX-License-Identifier: MIT */
/* machine.h - the job's machine (QEMU and what is connected to it) and
 * its snapshots, for the schedule (runner.c) and the Perl front end. */
#ifndef VIGIL_RUNNER_PRIM_MACHINE_H
#define VIGIL_RUNNER_PRIM_MACHINE_H

#include <stddef.h>

struct runner;

/* Start QEMU (from snapshot loadvm when not NULL: its disks stay as they
 * are) and connect QMP, VNC and the serial ports into r; start the live
 * view, --explore's frames and the video, then let the VM run. 0, or
 * negative with err filled (what was started stays for machine_stop). */
int machine_start(struct runner *r, const char *loadvm, char *err, size_t errlen);
/* Take the machine down: the frame threads, VNC, the video, QEMU, QMP and
 * the serial ports, in that order. NULL-safe for each part. */
void machine_stop(struct runner *r);
/* savevm/loadvm NAME ("savevm" or "loadvm" as what). 0, or negative with
 * err filled (QEMU's text). */
int machine_snapshot(struct runner *r, const char *what, const char *name, char *err, size_t errlen);

#endif
