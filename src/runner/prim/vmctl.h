/* SPDX-License-Identifier: MIT */
/* vmctl.h - the VM controlled over QMP, primitives both front ends use
 * (Lua's testapi_vm.c, Perl's backend_* commands). Each checks that the
 * job may go on first (runner__aborted) and returns 0 or a negative code
 * with err set, naming what failed. */
#ifndef VIGIL_RUNNER_VMCTL_H
#define VIGIL_RUNNER_VMCTL_H

#include <jansson.h>
#include <stddef.h>
#include "runner/core/job.h"

/* One QMP command cmd (args borrowed, may be NULL); what names it in the
 * progress line and the error ("freeze_vm": "stop", "resume_vm": "cont"). */
int vmctl_qmp(struct runner *r, const char *what, const char *cmd, json_t *args, char *err, size_t errlen);
/* eject_cd: the CD drive id ("cd0") ejected, force when locked. */
int vmctl_eject_cd(struct runner *r, const char *id, int force, char *err, size_t errlen);
/* power: "on" (cont), "off" (quit; QEMU's exit is expected then), "acpi"
 * (system_powerdown), "reset"; ERR_INVALID for another action. */
int vmctl_power(struct runner *r, const char *action, char *err, size_t errlen);
/* save_storage_drives: disks first..last (1-based) as
 * ulogs/<name>-<n>-vm_disk_file.qcow2 (qemu-img, compressed unless
 * QEMU_COMPRESS_QCOW2=0), the VM stopped meanwhile. */
int vmctl_save_drives(struct runner *r, const char *name, long first, long last, char *err, size_t errlen);
/* switch_network: the NIC link's state (set_link). */
int vmctl_switch_network(struct runner *r, const char *link, int up, char *err, size_t errlen);
/* save_memory_dump: the VM's state as QEMU's migration stream in
 * testresults/ulogs/<name>-vm-memory-dump, compressed with
 * QEMU_DUMP_COMPRESS_METHOD (xz by default, bzip2, or "none"); the VM
 * runs on after it if it ran before. */
int vmctl_memory_dump(struct runner *r, const char *name, char *err, size_t errlen);

#endif
