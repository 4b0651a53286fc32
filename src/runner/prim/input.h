/* SPDX-License-Identifier: MIT */
/* input.h - keys, typing and the pointer, the input primitives both front
 * ends use: key syms held and released over VNC, text typed (key by key on
 * the screen, written on a serial terminal), the pointer moved, keys held.
 * Nothing raises: 0, or a negative code with err set (the job's reason
 * when it must end, runner__aborted). */
#ifndef VIGIL_RUNNER_INPUT_H
#define VIGIL_RUNNER_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include "runner/core/job.h"

/* Presses syms[0..n) in order, holds them hold seconds, releases them in
 * reverse. A VNC failure marks the VM dead (runner__vm_dead). */
int input_keysyms(struct runner *r, const uint32_t *syms, size_t n, double hold, char *err, size_t errlen);
/* Types len bytes of text, interval seconds a key: on a serial terminal
 * (r->console) written to it, else as keys (a character without a key is
 * skipped with a warning). */
int input_type(struct runner *r, const char *text, size_t len, double interval, char *err, size_t errlen);
/* Holds (down) or releases the keys of a key name ("ctrl-alt-f2"); the
 * serial terminal has none (ERR_BADSTATE). A progress line each. */
int input_hold_key(struct runner *r, const char *name, int down, char *err, size_t errlen);
/* A pointer event at x,y with the button mask (1 left, 2 middle, 4 right). */
int input_pointer(struct runner *r, int x, int y, int mask, char *err, size_t errlen);
/* mouse_set: the pointer to x,y (r->mouse_x/y), moved aside first when it
 * is there already so the guest sees a movement. */
int input_mouse_set(struct runner *r, int x, int y, char *err, size_t errlen);
/* mouse_hide: the pointer to the bottom right corner less off. */
int input_mouse_hide(struct runner *r, int off, char *err, size_t errlen);

#endif
