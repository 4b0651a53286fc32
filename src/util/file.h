/* SPDX-License-Identifier: MIT */
/* file.h - whole files: read into a bounded buffer, write atomically, test
 * for a regular file or a directory, create a directory path, remove a
 * tree, count what a directory holds, hash what a file holds. */
#ifndef VIGIL_UTIL_FILE_H
#define VIGIL_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include "util/buf.h"

/* Read a whole file into b (limit b->max). 0, -errno or ERR_TOO_BIG. */
int file_read_all(const char *path, struct buf *b);
/* Write data to path atomically (temp file + rename). 0 or -errno. */
int file_write_all(const char *path, const void *data, size_t len);
/* True for an existing regular file / directory (symbolic links followed). */
bool file_exists(const char *path);
bool file_is_dir(const char *path);
/* mkdir -p; 0 or -errno. */
int file_mkdir_p(const char *path, unsigned mode);
/* Whether the existing directory dir, every symbolic link resolved, lies
 * in root (also resolved): a link planted below root that points out of it
 * makes a write there land outside. 0, ERR_INVALID (outside) or -errno. */
int file_dir_within(const char *root, const char *dir);
/* rm -rf path: a directory with everything below it (symbolic links
 * removed, never followed), or a file. 0 (also when path is missing),
 * -errno of the first failure (the rest is still tried), or ERR_NOMEM. */
int file_remove_tree(const char *path);
/* What the regular files in dir hold on disk (blocks, so sparse and qcow2
 * files count what they take), below it too when recursive; links not
 * followed. 0 for a missing dir. */
long long file_disk_bytes(const char *dir, bool recursive);

/* The digests file_hash makes; FILE_HASH_MAX: the longest, in bytes. */
enum file_hash_alg { FILE_HASH_MD5, FILE_HASH_SHA256 };
#define FILE_HASH_MAX 32
struct evp_md_ctx_st; /* OpenSSL's EVP_MD_CTX */
/* Add what fd holds, from its offset to its end, to ctx (an EVP_MD_CTX the
 * caller initialised and finishes: several files and names in one digest).
 * 0, -errno of a read (EINTR is read again) or ERR_NOMEM. */
int file_hash_update(struct evp_md_ctx_st *ctx, int fd);
/* The alg digest of what fd holds from its offset into md (*len bytes).
 * 0, -errno or ERR_NOMEM. */
int file_hash_fd(int fd, enum file_hash_alg alg, unsigned char md[FILE_HASH_MAX], unsigned *len);
/* The same for the file at path. */
int file_hash(const char *path, enum file_hash_alg alg, unsigned char md[FILE_HASH_MAX], unsigned *len);
/* md's len bytes as lowercase hex into hex (2 * len + 1 bytes). */
void file_hash_hex(const unsigned char *md, unsigned len, char *hex);

#endif
