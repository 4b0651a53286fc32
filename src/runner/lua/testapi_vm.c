/* SPDX-License-Identifier: MIT */
/* testapi_vm.c - VM control in the Lua test API: freeze_vm, resume_vm,
 * power, eject_cd, save_memory_dump, save_storage_drives and
 * switch_network, each over prim/vmctl.c's primitive (which Perl's
 * backend_* commands share). */
#define LOG_MODULE "testapi"
#include <stdio.h>
#include "runner/core/vars.h"
#include "runner/lua/testapi.h"
#include "runner/prim/vmctl.h"
#include "util/banned.h" /* last: after every system header */

static int l_freeze_vm(lua_State *L)
{
	char err[512];

	if (vmctl_qmp(testapi_runner(L), "freeze_vm", "stop", NULL, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

static int l_resume_vm(lua_State *L)
{
	char err[512];

	if (vmctl_qmp(testapi_runner(L), "resume_vm", "cont", NULL, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

/* power(action): on, off, acpi, reset. */
static int l_power(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *action = luaL_checkstring(L, 1);
	char err[512];

	if (vmctl_power(r, action, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

/* eject_cd({id="cd0", force=false}) */
static int l_eject_cd(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *id = testapi_opt_string(L, 1, "id", "cd0");
	int force = testapi_opt_bool(L, 1, "force", 0);
	char err[512];

	if (vmctl_eject_cd(r, id, force, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

/* save_memory_dump({filename=module}) (vmctl_memory_dump). */
static int l_save_memory_dump(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	const char *name = testapi_opt_string(L, 1, "filename", m ? m->name : "job");
	char err[512];

	if (vmctl_memory_dump(r, name, err, sizeof(err)))
		return luaL_error(L, "save_memory_dump failed: %s", err);
	return 0;
}

/* save_storage_drives(filename=<module>): each of the NUMDISKS disks as
 * ulogs/<filename>-<n>-vm_disk_file.qcow2 (vmctl_save_drives). */
static int l_save_storage_drives(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	const char *name = luaL_optstring(L, 1, m ? m->name : "job");
	char err[512];

	testapi_check_abort(L, r);
	if (vmctl_save_drives(r, name, 1, vars_get_long(&r->vars, "NUMDISKS", 1), err, sizeof(err)))
		return luaL_error(L, "save_storage_drives failed: %s", err);
	return 0;
}

/* switch_network({network_enabled=true, network_link_name="qanet0"}) */
static int l_switch_network(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	int up = testapi_opt_bool(L, 1, "network_enabled", 1);
	const char *link = testapi_opt_string(L, 1, "network_link_name", "qanet0");
	char err[256];

	testapi_check_abort(L, r);
	if (vmctl_switch_network(r, link, up, err, sizeof(err)))
		return luaL_error(L, "switch_network %s: %s", link, err);
	return 0;
}

static const luaL_Reg vm_api[] = {
	{ "freeze_vm", l_freeze_vm },
	{ "resume_vm", l_resume_vm },
	{ "power", l_power },
	{ "eject_cd", l_eject_cd },
	{ "save_memory_dump", l_save_memory_dump },
	{ "save_storage_drives", l_save_storage_drives },
	{ "switch_network", l_switch_network },
	{ NULL, NULL },
};

void testapi_register_vm(lua_State *L)
{
	lua_pushglobaltable(L);
	luaL_setfuncs(L, vm_api, 0);
	lua_pop(L, 1);
}
