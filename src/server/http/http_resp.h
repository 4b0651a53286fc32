/* SPDX-License-Identifier: MIT */
/* http_resp.h - a handler's answer (struct api_resp) as a libmicrohttpd
 * response; its release is api_resp_release (api.h). */
#ifndef VIGIL_SERVER_HTTP_RESP_H
#define VIGIL_SERVER_HTTP_RESP_H

#include <microhttpd.h>
#include "server/http/api.h"

/* The response to out with the headers every answer carries; out->raw is
 * copied, a stream or file handed over. NULL when out of memory (the
 * connection is then dropped). *status: what to send it with. */
struct MHD_Response *http_resp_make(struct api_resp *out, unsigned *status);

/* The Content-Security-Policy every page and web file is sent with: no
 * inline script or style, nothing from elsewhere. */
#define HTTP_CSP                                                                                          \
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "           \
	"media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "                 \
	"form-action 'self'; frame-ancestors 'none'"

#endif
