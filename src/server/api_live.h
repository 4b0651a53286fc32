/* SPDX-License-Identifier: MIT */
/* api_live.h - the live view's part of a worker's status post. */
#ifndef VIGIL_API_LIVE_H
#define VIGIL_API_LIVE_H

#include <jansson.h>
#include "server/api.h"

/* For POST jobs/<id>/status: store status.screen.png as the live frame
 * while someone watches and set reply.live (true: send frames). */
void api_live_status(struct api_req *req, const json_t *status, json_t *reply);

#endif
