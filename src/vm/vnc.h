/* SPDX-License-Identifier: MIT */
/* vnc.h - VNC client for QEMU's display (libvncclient over a unix socket).
 * A capture thread owns the connection: it applies updates and turns every
 * complete, changed framebuffer update into a frame normalised to XRES x YRES
 * (image_normalise), numbered and timestamped, kept in a bounded queue and
 * handed to frame listeners. Only the rows the server updated are converted;
 * frame buffers are recycled through a frame pool (image/frame.h). Input
 * (keys, pointer) is safe from any thread.
 * Lossless encodings only (raw, zrle), 32 bpp, no remote cursor. */
#ifndef VIGIL_VNC_H
#define VIGIL_VNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "image/frame.h"

struct vnc;

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
typedef void (*vnc_frame_fn)(void *ctx, struct frame *frame);

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

/* The newest frame, referenced (caller unrefs), or NULL before the first. */
struct frame *vnc_latest(struct vnc *v);

/* The oldest queued frame with seq > after_seq, referenced, waiting up to
 * timeout_ms for one to arrive. A consumer looping with after_seq = the
 * last seq it got sees every changed frame while watching (vnc_set_watch;
 * VNC_IDLE_QUEUE frames otherwise), unless the queue overflowed:
 * then a gap in seq shows it (and the drop was logged). The newest frame is
 * never dropped. Queued frames with seq <= after_seq are released: the
 * consumer has moved past them (so they are not reported as dropped).
 * 0, ERR_TIMEOUT, or ERR_CLOSED (connection gone and no such frame left). */
int vnc_next_frame(struct vnc *v, uint64_t after_seq, int timeout_ms,
		   struct frame **out);

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

/* Reset QEMU's display refresh timer once (the nudge above, from any
 * thread): a change drawn within the next ~30 ms reaches VNC without
 * QEMU's idle back-off. For the live view, which is no check. */
void vnc_nudge(struct vnc *v);

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
