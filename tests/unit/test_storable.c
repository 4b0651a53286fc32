/* SPDX-License-Identifier: MIT */
/* test_storable.c - Perl Storable records (net/storable.c): a chunk record
 * as openQA 4.6's worker sends it (bytes made here by OpenQA::File's
 * serialize under Debian's perl: native order, a blessed Mojo::File
 * behind an overload reference), refusals with their byte offsets, and
 * nfreeze's bytes for a hash as perl -MStorable=nfreeze writes them. */
#include <string.h>
#include "unit.h"
#include "net/storable.h"
#include "util/err.h"

/* OpenQA::File->new(file => "/tmp/oq-s.bin")->split(6), first chunk,
 * prepare'd and serialize'd; the file holds "hello chunk". */
static const unsigned char chunk_rec[] = {
	0x04, 0x0b, 0x08, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x04, 0x08, 0x08, 0x08, 0x03, 0x08, 0x00,
	0x00, 0x00, 0x08, 0x82, 0x05, 0x00, 0x00, 0x00, 0x74, 0x6f, 0x74, 0x61, 0x6c, 0x08, 0x86, 0x03, 0x00, 0x00,
	0x00, 0x65, 0x6e, 0x64, 0x08, 0x80, 0x05, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x72, 0x74, 0x14, 0x11, 0x0a,
	0x4d, 0x6f, 0x6a, 0x6f, 0x3a, 0x3a, 0x46, 0x69, 0x6c, 0x65, 0x0a, 0x0d, 0x2f, 0x74, 0x6d, 0x70, 0x2f, 0x6f,
	0x71, 0x2d, 0x73, 0x2e, 0x62, 0x69, 0x6e, 0x04, 0x00, 0x00, 0x00, 0x66, 0x69, 0x6c, 0x65, 0x0a, 0x0c, 0x36,
	0x38, 0x36, 0x35, 0x36, 0x63, 0x36, 0x63, 0x36, 0x66, 0x32, 0x30, 0x07, 0x00, 0x00, 0x00, 0x63, 0x6f, 0x6e,
	0x74, 0x65, 0x6e, 0x74, 0x0a, 0x2b, 0x38, 0x56, 0x51, 0x2f, 0x56, 0x4f, 0x73, 0x6f, 0x7a, 0x63, 0x73, 0x6f,
	0x73, 0x72, 0x52, 0x64, 0x54, 0x74, 0x30, 0x4e, 0x72, 0x73, 0x5a, 0x33, 0x61, 0x45, 0x64, 0x68, 0x72, 0x7a,
	0x4f, 0x6b, 0x75, 0x49, 0x6d, 0x66, 0x4e, 0x47, 0x72, 0x68, 0x52, 0x71, 0x67, 0x0b, 0x00, 0x00, 0x00, 0x74,
	0x6f, 0x74, 0x61, 0x6c, 0x5f, 0x63, 0x6b, 0x73, 0x75, 0x6d, 0x0a, 0x1b, 0x78, 0x4e, 0x68, 0x78, 0x72, 0x52,
	0x4f, 0x74, 0x41, 0x50, 0x33, 0x70, 0x70, 0x37, 0x74, 0x2f, 0x39, 0x2b, 0x30, 0x6c, 0x51, 0x36, 0x37, 0x46,
	0x51, 0x6b, 0x45, 0x05, 0x00, 0x00, 0x00, 0x63, 0x6b, 0x73, 0x75, 0x6d, 0x08, 0x81, 0x05, 0x00, 0x00, 0x00,
	0x69, 0x6e, 0x64, 0x65, 0x78,
};

TEST(storable_thaw_openqa_chunk)
{
	char msg[160] = "";
	json_t *j = NULL;

	CHECK_INT(storable_thaw(chunk_rec, sizeof(chunk_rec), &j, msg, sizeof(msg)), 0);
	CHECK(json_is_object(j));
	CHECK_INT(json_integer_value(json_object_get(j, "index")), 1);
	CHECK_INT(json_integer_value(json_object_get(j, "total")), 2);
	CHECK_INT(json_integer_value(json_object_get(j, "start")), 0);
	CHECK_INT(json_integer_value(json_object_get(j, "end")), 6);
	CHECK_STR(json_string_value(json_object_get(j, "content")), "68656c6c6f20");
	CHECK_STR(json_string_value(json_object_get(j, "file")), "/tmp/oq-s.bin");
	CHECK_STR(json_string_value(json_object_get(j, "cksum")), "xNhxrROtAP3pp7t/9+0lQ67FQkE");
	CHECK_STR(json_string_value(json_object_get(j, "total_cksum")), "8VQ/VOsozcsosrRdTt0NrsZ3aEdhrzOkuImfNGrhRqg");
	json_decref(j);
}

TEST(storable_thaw_refusals)
{
	unsigned char bad[sizeof(chunk_rec)];
	char msg[160] = "";
	json_t *j = NULL;

	/* Cut short anywhere: truncated, never a crash. */
	for (size_t n = 0; n < sizeof(chunk_rec); n++) {
		CHECK_INT(storable_thaw(chunk_rec, n, &j, msg, sizeof(msg)), ERR_PROTO);
		CHECK(j == NULL);
	}
	CHECK(strstr(msg, "truncated") != NULL);
	/* Another architecture's native order. */
	memcpy(bad, chunk_rec, sizeof(bad));
	bad[3] = '8';
	CHECK_INT(storable_thaw(bad, sizeof(bad), &j, msg, sizeof(msg)), ERR_PROTO);
	CHECK(strstr(msg, "another architecture") != NULL);
	/* A type byte it does not read, named with its offset. */
	memcpy(bad, chunk_rec, sizeof(bad));
	bad[20] = 0x1a; /* SX_CODE in place of the first value */
	CHECK_INT(storable_thaw(bad, sizeof(bad), &j, msg, sizeof(msg)), ERR_PROTO);
	CHECK_STR(msg, "Storable record: item type 26 (not read) at byte 20");
	/* Trailing bytes. */
	{
		static const unsigned char two[] = { 0x05, 0x0b, 0x08, 0x81, 0x08 };
		CHECK_INT(storable_thaw(two, sizeof(two), &j, msg, sizeof(msg)), ERR_PROTO);
		CHECK(strstr(msg, "bytes after") != NULL);
	}
	/* A hash that claims more entries than the record holds. */
	{
		static const unsigned char big[] = { 0x05, 0x0b, 0x03, 0x7f, 0xff, 0xff, 0xff, 0x08, 0x81 };
		CHECK_INT(storable_thaw(big, sizeof(big), &j, msg, sizeof(msg)), ERR_PROTO);
	}
	/* Binary (not UTF-8) strings are refused. */
	{
		static const unsigned char bin[] = { 0x05, 0x0b, 0x0a, 0x02, 0xff, 0xfe };
		CHECK_INT(storable_thaw(bin, sizeof(bin), &j, msg, sizeof(msg)), ERR_PROTO);
		CHECK(strstr(msg, "UTF-8") != NULL);
	}
}

TEST(storable_nfreeze_hash_bytes)
{
	/* perl -MStorable=nfreeze -e 'print nfreeze({...})' with one key each. */
	static const unsigned char kv[] = { 0x05, 0x0b, 0x03, 0, 0, 0, 1, 0x0a, 0x01, 'v', 0, 0, 0, 1, 'k' };
	static const unsigned char n1m[] = { 0x05, 0x0b, 0x03, 0, 0, 0, 1, 0x09, 0x00, 0x0f, 0x42, 0x40, 0, 0, 0, 1, 'n' };
	static const unsigned char neg[] = { 0x05, 0x0b, 0x03, 0, 0, 0, 1, 0x08, 0x7d, 0, 0, 0, 1, 'n' };
	static const unsigned char big[] = { 0x05, 0x0b, 0x03, 0, 0, 0, 1, 0x0a, 0x0b, '1', '0', '0', '0', '0',
					     '0', '0', '0', '0', '0', '0', 0, 0, 0, 1, 'n' };
	struct buf b;
	json_t *j;

	buf_init(&b, 1 << 20);
	j = json_pack("{s:s}", "k", "v");
	CHECK_INT(storable_nfreeze_hash(j, &b), 0);
	CHECK(b.len == sizeof(kv) && !memcmp(b.data, kv, sizeof(kv)));
	json_decref(j);
	buf_reset(&b);
	j = json_pack("{s:I}", "n", (json_int_t)1000000);
	CHECK_INT(storable_nfreeze_hash(j, &b), 0);
	CHECK(b.len == sizeof(n1m) && !memcmp(b.data, n1m, sizeof(n1m)));
	json_decref(j);
	buf_reset(&b);
	j = json_pack("{s:i}", "n", -3);
	CHECK_INT(storable_nfreeze_hash(j, &b), 0);
	CHECK(b.len == sizeof(neg) && !memcmp(b.data, neg, sizeof(neg)));
	json_decref(j);
	buf_reset(&b);
	j = json_pack("{s:I}", "n", (json_int_t)10000000000LL);
	CHECK_INT(storable_nfreeze_hash(j, &b), 0);
	CHECK(b.len == sizeof(big) && !memcmp(b.data, big, sizeof(big)));
	json_decref(j);
	/* A value of another type is refused. */
	j = json_pack("{s:[]}", "a");
	CHECK_INT(storable_nfreeze_hash(j, &b), ERR_INVALID);
	json_decref(j);
	buf_release(&b);
}

TEST(storable_nfreeze_thaw_round_trip)
{
	char long_text[700], msg[160];
	json_t *j, *back = NULL;
	struct buf b;

	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	j = json_pack("{s:s,s:I,s:i,s:I,s:n,s:s}", "content", long_text, "end", (json_int_t)3000000, "index", 3, "neg",
		      (json_int_t)-40000, "none", "file", "/x/y.qcow2");
	buf_init(&b, 1 << 20);
	CHECK_INT(storable_nfreeze_hash(j, &b), 0);
	CHECK_INT(storable_thaw(b.data, b.len, &back, msg, sizeof(msg)), 0);
	CHECK(json_equal(j, back));
	json_decref(j);
	json_decref(back);
	buf_release(&b);
}
