/* SPDX-License-Identifier: MIT */
/* perl_int.h - what the two halves of the Perl runner share: perl.c (the
 * answers to the test process's commands) and perl_proc.c (the test
 * process itself: its files, its start, the message loop, its end). */
#ifndef VIGIL_PERL_INT_H
#define VIGIL_PERL_INT_H

#include <stddef.h>
#include <sys/types.h>
#include "image/frame.h"
#include "runner/core/job.h"
#include "util/buf.h"

/* One message from the test process: no image travels, so 1 MiB is ample. */
#define LIMIT_PERL_MSG (1u << 20)
/* os-autoinst's test API interface this bootstrap speaks (4.6, Debian 12). */
#define PERL_INTERFACE 34
#define PERL_FPS 24
#define PERL_POLL_MS 200
#define PERL_EXIT_GRACE_S 10.0
#define PERL_KEEP_FRAMES 32

/* scripts/embed-perl's table of src/runner/perl/, ended by a NULL name. */
struct perl_file {
	const char *name; /* "vigil_autotest.pl", "lib/tinycv.pm" */
	const unsigned char *data;
	size_t len;
};
extern const struct perl_file perl_files[];

struct perl {
	int fd;               /* our end of the socketpair, -1 closed */
	pid_t pid;            /* the test process, -1 reaped */
	int status;           /* its wait status once reaped */
	char *boot_dir;       /* workdir/perl: the unpacked bootstrap */
	struct buf in;        /* bytes read, not yet a whole line */
	int scheduled;        /* vigil_schedule came: the VM runs */
	int done;             /* tests_done came */
	int died;             /* tests_done's died */
	long running;         /* r->modules index of the module running, -1 */
	long ended;           /* the module that ended, its result not said yet, -1 */
	/* The last frames named to Perl (image refs), id = frame_base +
	 * index + 1 (frame_keep). */
	struct frame *frames[PERL_KEEP_FRAMES];
	size_t nframes;
	unsigned long frame_base;
	struct frame *ref;    /* backend_set_reference_screenshot's frame, or NULL */
};

/* {"ret": v} (v NULL: null), the answer of most commands of perl.c and
 * perl_backend.c; NULL when it cannot be made (perl_answer then ends the
 * job incomplete: an answer with a part missing would decide the test). */
json_t *perl__ret(json_t *v);
/* The frames named to Perl, let go. */
void perl__frames_release(struct perl *p);
/* Says the result of the module that ended (p->ended), if one did. */
void perl__say_ended(struct runner *r, struct perl *p);

#endif
