/* SPDX-License-Identifier: MIT */
/* db_fault.c - the database's side of VIGIL_FAULT_ENOSPC (util/fault.h): a
 * SQLite VFS over the default one whose writes (database, WAL, journal)
 * ask fault_enospc_allow first and answer SQLITE_FULL where it strikes, as
 * the unix VFS does on a full disk. Installed as the default VFS by
 * db_open only while the variable is set; everything else is forwarded. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "util/fault.h"
#include "util/banned.h" /* last: after every system header */

/* Our file: the methods SQLite calls, the path, then the real file. */
struct ffile {
	sqlite3_file base;
	const char *path;          /* SQLite's, valid while the file is open */
	const sqlite3_io_methods *real_methods;
	sqlite3_file *real;        /* FFILE_SIZE bytes after the start */
};

/* Our part of a file, rounded up so that the real file after it is aligned. */
#define FFILE_SIZE ((sizeof(struct ffile) + 15) / 16 * 16)

static sqlite3_vfs fault_vfs;
static sqlite3_vfs *real_vfs;

#define REAL(f) (((struct ffile *)(f))->real)
#define METHODS(f) (((struct ffile *)(f))->real_methods)

static int f_close(sqlite3_file *f)
{
	return METHODS(f)->xClose(REAL(f));
}

static int f_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
	return METHODS(f)->xRead(REAL(f), p, n, off);
}

static int f_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	if (n > 0 && fault_enospc_allow(((struct ffile *)f)->path, (size_t)n) < (size_t)n)
		return SQLITE_FULL;
	return METHODS(f)->xWrite(REAL(f), p, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return METHODS(f)->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
	return METHODS(f)->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return METHODS(f)->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int l)
{
	return METHODS(f)->xLock(REAL(f), l);
}

static int f_unlock(sqlite3_file *f, int l)
{
	return METHODS(f)->xUnlock(REAL(f), l);
}

static int f_reserved(sqlite3_file *f, int *out)
{
	return METHODS(f)->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
	return METHODS(f)->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
	return METHODS(f)->xSectorSize(REAL(f));
}

static int f_device(sqlite3_file *f)
{
	return METHODS(f)->xDeviceCharacteristics(REAL(f));
}

static int f_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
	return METHODS(f)->xShmMap(REAL(f), pg, sz, extend, pp);
}

static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return METHODS(f)->xShmLock(REAL(f), off, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
	METHODS(f)->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int del)
{
	return METHODS(f)->xShmUnmap(REAL(f), del);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	return METHODS(f)->xFetch(REAL(f), off, n, pp);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return METHODS(f)->xUnfetch(REAL(f), off, p);
}

/* Version 3 methods; those the real file lacks are left out (NULL) by
 * f_open choosing the matching table. */
static const sqlite3_io_methods methods3 = {
	3, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved, f_control,
	f_sector, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch, f_unfetch,
};
static const sqlite3_io_methods methods2 = {
	2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved, f_control,
	f_sector, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, NULL, NULL,
};
static const sqlite3_io_methods methods1 = {
	1, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved, f_control,
	f_sector, f_device, NULL, NULL, NULL, NULL, NULL, NULL,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
	struct ffile *ff = (struct ffile *)f;
	int rc;

	(void)vfs;
	memset(ff, 0, sizeof(*ff));
	ff->real = (sqlite3_file *)((char *)ff + FFILE_SIZE);
	ff->path = name;
	rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out_flags);
	if (ff->real->pMethods) {
		ff->real_methods = ff->real->pMethods;
		ff->base.pMethods = ff->real_methods->iVersion >= 3 ? &methods3 :
				    ff->real_methods->iVersion == 2 ? &methods2 : &methods1;
	}
	return rc;
}

static void install(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	if (!real_vfs)
		return;
	fault_vfs = *real_vfs;
	fault_vfs.zName = "vigil-fault";
	fault_vfs.pNext = NULL;
	fault_vfs.szOsFile = (int)FFILE_SIZE + real_vfs->szOsFile;
	fault_vfs.xOpen = f_open;
	(void)sqlite3_vfs_register(&fault_vfs, 1);
}

void db__fault_vfs_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (fault_enospc_armed())
		pthread_once(&once, install);
}
