/* SPDX-License-Identifier: MIT */
/* fuzz_multipart.c - openQA's multipart/form-data artefact uploads as
 * oqcompat.c reads them, through the real server (fuzz_server.h): each
 * input is one POST /api/v1/jobs/1/artefact. Byte 0 is the boundary's
 * length (mod 71), then the boundary (bytes a header cannot carry become
 * '-'), then the body as it is. The multipart body is parsed before the job
 * is looked at, so job 1 need not exist. A crash, leak, sanitizer report or
 * a 500 answer fails the target. */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ctype[128] = "multipart/form-data; boundary=", err[256];
	size_t blen, off = strlen(ctype), i;
	struct buf resp;
	long status = 0;

	if (!fuzz_srv)
		fuzz_server_setup();
	if (size < 1)
		return 0;
	blen = data[0] % 71;
	if (blen > size - 1)
		blen = size - 1;
	for (i = 0; i < blen; i++)
		ctype[off + i] = data[1 + i] > 0x20 && data[1 + i] < 0x7f ? (char)data[1 + i] : '-';
	ctype[off + blen] = '\0';
	buf_init(&resp, LIMIT_HTTP_RESPONSE);
	if (http_request(&fuzz_client, "POST", "/api/v1/jobs/1/artefact", ctype, data + 1 + blen, size - 1 - blen, 60,
			 &status, &resp, err, sizeof(err)) == 0 &&
	    status == 500) {
		fprintf(stderr, "fuzz_multipart: answered %ld: %.*s\n", status, (int)(resp.len < 500 ? resp.len : 500),
			resp.data ? resp.data : "");
		abort();
	}
	buf_release(&resp);
	return 0;
}
