/* SPDX-License-Identifier: MIT */
/* api_assets.c - openQA's asset routes (Asset.pm) and the file routes that
 * hand assets out: what openqa-clone-job downloads and what workers cache.
 * The model is assets.c.
 *
 *   method path                               level     what
 *   GET    /api/v1/assets                     public    {"assets": [...]} (limit, offset)
 *   POST   /api/v1/assets                     operator  type, name of a file under factory/ → {"id"}
 *   GET    /api/v1/assets/<id>                public    the row
 *   GET    /api/v1/assets/<type>/<name>       public    the row (a file placed by hand is registered)
 *   DELETE /api/v1/assets/<id>                admin     row and file → {"count": 1}
 *   DELETE /api/v1/assets/<type>/<name>       admin     same
 *   GET    /assets/<type>/<name>              public    the file
 *   GET    /tests/<id>/asset/<type>/<name>    public    the file, when the job's settings name it
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "util/err.h"
#include "util/file.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define ASSETS_LIST_MAX_LIMIT 10000

static void assets_list(struct api_req *req, struct api_resp *out)
{
	const char *lim = params_get(&req->params, "limit"), *off = params_get(&req->params, "offset");
	long limit = ASSETS_LIST_DEFAULT, offset = 0;

	if (lim && (str_to_long(lim, &limit) || limit <= 0 || limit > ASSETS_LIST_MAX_LIMIT)) {
		api_error(out, 400, "limit '%s': expected 1..%d", lim, ASSETS_LIST_MAX_LIMIT);
		return;
	}
	if (off && (str_to_long(off, &offset) || offset < 0)) {
		api_error(out, 400, "offset '%s': expected a number >= 0", off);
		return;
	}
	api_json(out, assets_list_json(req->db, limit, offset));
}

/* 0 when type and name are acceptable, else an error set in out. */
static int check_type_name(struct api_resp *out, const char *type, const char *name)
{
	if (!asset_type_valid(type)) {
		api_error(out, 400, "Erroneous parameters (type '%s' invalid: iso, hdd, repo or other)", type ? type : "");
		return -1;
	}
	if (!asset_name_valid(name)) {
		api_error(out, 400, "Erroneous parameters (name '%s' invalid: 1..200 of [A-Za-z0-9._+@-], no leading '.')",
			  name ? name : "");
		return -1;
	}
	return 0;
}

static void asset_register(struct api_req *req, struct api_resp *out)
{
	const char *type = params_get(&req->params, "type"), *name = params_get(&req->params, "name");
	int64_t id;
	int rc;

	if (check_type_name(out, type, name))
		return;
	rc = assets_register(req->db, req->data_dir, type, name, NULL, 0, &id);
	if (rc == ERR_NOT_FOUND)
		api_error(out, 400, "Failed to register asset %s/%s: no such file under the server's factory/%s/", type,
			  name, type);
	else if (rc)
		api_error(out, 500, "cannot register asset %s/%s: %s", type, name, db_errmsg(req->db));
	else
		api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
}

static void asset_by_id(struct api_req *req, struct api_resp *out)
{
	json_t *a;
	int rc = assets_json(req->db, req->id, &a);

	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "Asset %lld does not exist", (long long)req->id);
	else if (rc)
		api_error_code(out, rc, "cannot read the asset");
	else
		api_json(out, a);
}

static void asset_by_name(struct api_req *req, struct api_resp *out)
{
	const char *type = req->arg;
	int64_t id;
	json_t *a;
	int rc;

	if (check_type_name(out, type, req->name))
		return;
	rc = assets_find(req->db, req->data_dir, type, req->name, &id);
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Asset %s/%s does not exist", type, req->name);
		return;
	}
	if (!rc)
		rc = assets_json(req->db, id, &a);
	if (rc == ERR_NOMEM) {
		api_nomem(out);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot read asset %s/%s", type, req->name);
		return;
	}
	api_json(out, a);
}

static void delete_id(struct api_req *req, struct api_resp *out, int64_t id, const char *what)
{
	int rc = assets_delete(req->db, req->data_dir, id);

	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "Asset %s does not exist", what);
	else if (rc)
		api_error(out, 500, "cannot delete asset %s: %s", what, err_str(rc));
	else
		api_json(out, json_pack("{s:i}", "count", 1));
}

static void asset_delete_id(struct api_req *req, struct api_resp *out)
{
	char what[24];

	snprintf(what, sizeof(what), "%lld", (long long)req->id);
	delete_id(req, out, req->id, what);
}

static void asset_delete_name(struct api_req *req, struct api_resp *out)
{
	const char *type = req->arg;
	char what[300];
	int64_t id;

	if (check_type_name(out, type, req->name))
		return;
	snprintf(what, sizeof(what), "%s/%s", type, req->name);
	if (assets_id(req->db, type, req->name, &id)) {
		api_error(out, 404, "Asset %s does not exist", what);
		return;
	}
	delete_id(req, out, id, what);
}

static void send_file(struct api_req *req, struct api_resp *out, const char *type)
{
	char *path = asset_path(req->data_dir, type, req->name);

	if (!path || !file_exists(path)) {
		free(path);
		api_error(out, 404, "no asset %s/%s on this server", type, req->name);
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = "application/octet-stream";
}

static void asset_file(struct api_req *req, struct api_resp *out)
{
	if (check_type_name(out, req->arg, req->name))
		return;
	send_file(req, out, req->arg);
}

/* /tests/<id>/asset/<type>/<name>: only what the job's settings name. */
static void job_asset_file(struct api_req *req, struct api_resp *out)
{
	const char *type = req->arg;
	bool named = false;

	if (check_type_name(out, type, req->name))
		return;
	if (jobs_names_asset(req->db, req->id, type, req->name, &named)) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return;
	}
	if (!named) {
		api_error(out, 404, "job %lld has no asset %s/%s", (long long)req->id, type, req->name);
		return;
	}
	send_file(req, out, type);
}

#define TYPE_ROUTES(t)                                                                   \
	{ "GET", "/api/v1/assets/" t "/*", AUTH_PUBLIC, asset_by_name, t },              \
	{ "DELETE", "/api/v1/assets/" t "/*", AUTH_ADMIN, asset_delete_name, t },        \
	{ "GET", "/assets/" t "/*", AUTH_PUBLIC, asset_file, t },                        \
	{ "GET", "/tests/#/asset/" t "/*", AUTH_PUBLIC, job_asset_file, t }

const struct api_route api_assets_routes[] = {
	{ "GET", "/api/v1/assets", AUTH_PUBLIC, assets_list, NULL },
	{ "POST", "/api/v1/assets", AUTH_OPERATOR, asset_register, NULL },
	{ "GET", "/api/v1/assets/#", AUTH_PUBLIC, asset_by_id, NULL },
	{ "DELETE", "/api/v1/assets/#", AUTH_ADMIN, asset_delete_id, NULL },
	TYPE_ROUTES("iso"),
	TYPE_ROUTES("hdd"),
	TYPE_ROUTES("repo"),
	TYPE_ROUTES("other"),
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
