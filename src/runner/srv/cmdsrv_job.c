/* SPDX-License-Identifier: MIT */
/* cmdsrv_job.c - the command server (cmdsrv.c) for one job: started when
 * the VM has user networking or developer mode's WebSocket is asked, with
 * the job's token, directories and variables; its port published in the
 * variables and OUT/cmdsrv_port. Registers the hook that keeps its copy
 * of the variables current (r->hooks.vars_changed). */
#include <stdlib.h>
#include <string.h>
#include "runner/core/job.h"
#include "runner/perl/perl.h"
#include "runner/srv/cmdsrv.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "vm/qemu.h"
#include "util/banned.h" /* last: after every system header */

/* Lets the server's /vars see what the test set (Lua's set_var). */
static void sync_vars(struct runner *r)
{
	if (r->cmdsrv && cmdsrv_set_vars(r->cmdsrv, r->vars.obj))
		log_warn("command server: cannot copy the vars (out of memory)");
}

int cmdsrv_job_start(struct runner *r)
{
	const char *token = vars_get(&r->vars, "JOBTOKEN"), *casedir = vars_get(&r->vars, "CASEDIR");
	const char *nictype = vars_get(&r->vars, "NICTYPE");
	char tok[17], err[256] = "", port[16], *abs = NULL, *vf = NULL, *pf = NULL;
	struct cmdsrv_conf c = { 0 };
	int rc;

	/* DEVELOPER_MODE_WS (vigil worker under openQA sets it): the
	 * developer-mode WebSocket for openQA's livehandler, on every address
	 * as os-autoinst's. */
	int dev_ws = vars_get_bool(&r->vars, "DEVELOPER_MODE_WS", 0);

	/* No network and no developer WebSocket, no server: nothing could reach it. */
	if ((!nictype || strcmp(nictype, "user")) && !dev_ws)
		return 0;
	if (!token || !*token) {
		if ((rc = cmdsrv_make_token(tok, sizeof(tok))) || (rc = vars_set(&r->vars, "JOBTOKEN", tok)))
			goto out;
		token = tok;
	}
	abs = path_abs(casedir ? casedir : r->distri_dir);
	vf = perl_is_distri(r->distri_dir) ? path_join(r->out_dir, "vars.json") : NULL;
	c.token = token;
	c.casedir = abs ? abs : r->distri_dir;
	c.out_dir = r->out_dir;
	c.assetdir = vars_get(&r->vars, "ASSETDIR");
	c.vars_file = vf; /* Perl's vars: as bmwqemu::load_vars reads them */
	c.listen_any = dev_ws;
	if ((rc = cmdsrv_start(&c, &r->cmdsrv, err, sizeof(err))))
		goto out;
	/* os-autoinst's names: the guest reaches QEMU_HOST_IP:QEMUPORT+1. */
	snprintf(port, sizeof(port), "%u", cmdsrv_port(r->cmdsrv) - 1);
	if ((rc = vars_set(&r->vars, "QEMUPORT", port)))
		goto out;
	if (!vars_get(&r->vars, "QEMU_HOST_IP") && qemu_user_net_restricted(vars_get_cb, &r->vars) &&
	    (rc = vars_set(&r->vars, "QEMU_HOST_IP", CMDSRV_GUEST_IP)))
		goto out;
	if ((rc = cmdsrv_set_vars(r->cmdsrv, r->vars.obj)))
		goto out;
	if (r->devmode)
		cmdsrv_set_devmode(r->cmdsrv, r->devmode);
	r->hooks.vars_changed = sync_vars;
	/* The port, for the worker's status (openQA's cmd_srv_url). */
	if ((pf = path_join(r->out_dir, CMDSRV_PORT_FILE))) {
		snprintf(port, sizeof(port), "%u\n", cmdsrv_port(r->cmdsrv));
		if (file_write_all(pf, port, strlen(port)))
			log_warn("cannot write '%s'", pf);
	}
out:
	if (rc) {
		log_warn("no command server: %s", *err ? err : err_str(rc));
		cmdsrv_free(r->cmdsrv);
		r->cmdsrv = NULL;
	}
	free(abs);
	free(vf);
	free(pf);
	return rc;
}
