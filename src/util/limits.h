/* SPDX-License-Identifier: MIT */
/* limits.h - the named size limits (bytes, pixels) that bound buffers and
 * file reads across the run side; each module's own limits live in its
 * header. */
#ifndef VIGIL_UTIL_LIMITS_H
#define VIGIL_UTIL_LIMITS_H

#define LIMIT_NEEDLE_JSON   (1u << 20)
#define LIMIT_VARS_JSON     (4u << 20)
#define LIMIT_QMP_MSG       (16u << 20)
#define LIMIT_PNG_FILE      (64u << 20)
#define LIMIT_LUA_FILE      (4u << 20)
#define LIMIT_SERIAL_LOG    (256u << 20)
#define LIMIT_IMAGE_PIXELS  (16384u * 16384u)
/* A VM's screen over VNC: up to 8K UHD (7680x4320, 133 MB as the
 * framebuffer's RGBX); a ServerInit or DesktopSize past it is refused
 * (a 1800x65535 screen from a broken server cost 471 MB and 40 s). */
#define LIMIT_VNC_PIXELS    (7680u * 4320u)

#endif
