/* SPDX-License-Identifier: MIT */
/* vnc.h - VNC client for QEMU's display (libvncclient over a unix socket).
 * A capture thread owns the connection: it applies updates and turns every
 * complete, changed framebuffer update into a frame normalised to XRES x YRES
 * (image_normalise), numbered and timestamped, kept in a bounded queue and
 * handed to frame listeners. Only the rows the server updated are converted;
 * frame buffers are recycled through a small pool. Input (keys, pointer) is
 * safe from any thread.
 * Lossless encodings only (raw, zrle), 32 bpp, no remote cursor. */
#ifndef VIGIL_VNC_H
#define VIGIL_VNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "image/image.h"

struct vnc;
struct vnc__pool;

/* One captured screen. img is normalised to the connection's xres x yres;
 * fb_w/fb_h is the guest framebuffer size it came from. Frames are shared
 * and immutable: take a reference to keep one, drop it with vnc_frame_unref. */
struct vnc_frame {
	struct image *img;
	uint64_t seq;   /* 1, 2, 3... in capture order; no two frames share one */
	double t;       /* time_mono() when the update completed */
	int fb_w, fb_h;
	/* Rows at the top and at the bottom of img that are identical to the
	 * frame numbered seq - 1 (same size); 0 and 0 when unknown. Only rows
	 * [same_top, img->h - same_bottom) changed: consumers such as the
	 * video convert just those. */
	int same_top, same_bottom;
	int refs;       /* atomic; use the functions below */
	struct vnc__pool *pool; /* vnc.c's: where the buffers go back; NULL: freed */
};

/* Default and largest number of frames the checker queue holds. */
#define VNC_QUEUE_DEFAULT 32
#define VNC_QUEUE_MAX 256
/* Frames kept while no check is pending (vnc_set_watch off): only the
 * newest. Every check starts from the newest frame; a wait for a change
 * from an older frame still sees the newest one since. Each kept frame
 * costs 2.4 MB at 1024x768. */
#define VNC_IDLE_QUEUE 1
/* While watching, a no-op client message is sent at least this often. */
#define VNC_NUDGE_MS 80

/* Called on the capture thread for every new frame (borrowed: take a
 * reference to keep it). Must not block for long nor call vnc_close. */
typedef void (*vnc_frame_fn)(void *ctx, struct vnc_frame *frame);

/* Connect to the VNC server listening on the unix socket path (retrying
 * for up to timeout_ms while it is absent or refuses), negotiate 32 bpp
 * and lossless encodings, and start the capture thread. Frames are
 * normalised to xres x yres. *out is the caller's (vnc_close).
 * Errors: ERR_TIMEOUT (never connected), ERR_NOMEM, -errno; err says why. */
int vnc_connect(const char *path, int xres, int yres, int timeout_ms,
		struct vnc **out, char *err, size_t errlen);

/* Stop the capture thread, close the connection, drop every queued frame
 * (frames referenced elsewhere stay valid). NULL-safe. */
void vnc_close(struct vnc *v);

/* false once the connection dropped (QEMU died, protocol error); the reason
 * is then copied into err by vnc_error. */
bool vnc_alive(struct vnc *v);
void vnc_error(struct vnc *v, char *err, size_t errlen);

void vnc_frame_ref(struct vnc_frame *f);
void vnc_frame_unref(struct vnc_frame *f); /* frees at zero; NULL-safe */

/* The newest frame, referenced (caller unrefs), or NULL before the first. */
struct vnc_frame *vnc_latest(struct vnc *v);

/* The oldest queued frame with seq > after_seq, referenced, waiting up to
 * timeout_ms for one to arrive. A consumer looping with after_seq = the
 * last seq it got sees every changed frame while watching (vnc_set_watch;
 * VNC_IDLE_QUEUE frames otherwise), unless the queue overflowed:
 * then a gap in seq shows it (and the drop was logged). The newest frame is
 * never dropped. Queued frames with seq <= after_seq are released: the
 * consumer has moved past them (so they are not reported as dropped).
 * 0, ERR_TIMEOUT, or ERR_CLOSED (connection gone and no such frame left). */
int vnc_next_frame(struct vnc *v, uint64_t after_seq, int timeout_ms,
		   struct vnc_frame **out);

/* Queue length (1..VNC_QUEUE_MAX; default VNC_QUEUE_DEFAULT). */
void vnc_set_queue_len(struct vnc *v, int len);

/* Register a listener (at most 4); 0 or ERR_TOO_BIG. Listeners cannot be
 * removed; they live as long as the connection. */
int vnc_add_listener(struct vnc *v, vnc_frame_fn fn, void *ctx);

/* While on (a screen check is pending), keep QEMU scanning the display at
 * its fastest rate by sending an empty ClientCutText every VNC_NUDGE_MS:
 * QEMU's refresh timer backs off to 3 s on an idle screen and only client
 * messages of type > 3 reset it. Frame drops are logged as warnings while
 * on, at debug level while off (nobody consumes the queue then). */
void vnc_set_watch(struct vnc *v, bool on);

/* Key press (down=1) or release (down=0) of an X11 keysym.
 * 0, ERR_CLOSED, ERR_IO. */
int vnc_send_key(struct vnc *v, uint32_t keysym, int down);

/* Absolute pointer event at (x, y) in xres x yres coordinates, mapped as the
 * normalisation maps the framebuffer: identical or smaller framebuffers
 * (pasted top-left) use the same coordinates, clamped to the framebuffer;
 * larger ones are scaled. buttons: bit 0 left, 1 middle, 2 right, 3/4
 * wheel. 0, ERR_CLOSED, ERR_IO. */
int vnc_send_pointer(struct vnc *v, int x, int y, int buttons);

/* Size of the guest framebuffer now (0x0 before the handshake). */
void vnc_fb_size(struct vnc *v, int *w, int *h);

#endif
