/* SPDX-License-Identifier: MIT */
/* frame.h - captured screens: a normalised image with its capture number,
 * time and the rows it shares with the frame before. Frames are shared,
 * immutable and reference counted; a producer recycles their buffers
 * through a frame pool. Producers (vm/vnc.c) and consumers (the video,
 * the runner) meet here, so neither includes the other. */
#ifndef VIGIL_FRAME_H
#define VIGIL_FRAME_H

#include <stdint.h>
#include "image/image.h"

struct frame_pool;

/* One captured screen. img is normalised to the producer's xres x yres;
 * fb_w/fb_h is the guest framebuffer size it came from. Take a reference
 * to keep one, drop it with frame_unref. */
struct frame {
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
	struct frame_pool *pool; /* where the buffers go back; NULL: freed */
};

/* Released frames of the pool's size kept for reuse. */
#define FRAME_POOL_LEN 2

void frame_ref(struct frame *f);
/* Drop a reference: at zero the frame goes back to its pool, or is freed
 * with its image. NULL-safe. Any thread. */
void frame_unref(struct frame *f);

/* A frame holding img (ownership taken: freed with the frame), refs 1,
 * every other field zero, no pool. NULL on OOM (img is then freed). */
struct frame *frame_from_image(struct image *img);

/* A pool of w x h frame buffers for one producer: a fresh 2.4 MB
 * allocation per frame means page faults and zeroing in the kernel every
 * time. The producer and every frame it lent share the pool, since a frame
 * may outlive its producer. NULL on OOM. */
struct frame_pool *frame_pool_new(int w, int h);
/* A frame of the pool's size with refs 1 and every other field zero; its
 * pixels are whatever an earlier frame left: the caller writes them all.
 * NULL on OOM. Any thread. */
struct frame *frame_pool_get(struct frame_pool *p);
/* The producer lets go: buffers kept are freed, frames still out free
 * theirs when released. NULL-safe. */
void frame_pool_close(struct frame_pool *p);

#endif
