#!/bin/sh
# SPDX-License-Identifier: MIT
# test_client.sh - `vigil client` against `vigil serve` on a free local
# port (no worker: jobs only change state through the API): client.conf
# lookup, schedule, list, show, clone, cancel, restart and their errors;
# comments and bug references through the real openqa-cli and the python
# client; YAML job templates posted with openqa-cli, then a build that
# creates exactly the jobs the YAML describes; bad YAML answered 400 with
# the line.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"
SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "$SERVER_PID" ] && wait "$SERVER_PID"; SERVER_PID=; }
trap stop_server EXIT INT TERM

new_keys operator
start_server
SERVER_PID=$SPID
check "server answers" curl -sf "$URL/api/v1/jobs"

# A private HOME and OPENQA_CONFIG, so the machine's /etc/openqa plays no part
# unless a test says so: openqa-cli finds [127.0.0.1], vigil client too.
mkdir -p "$TMP/home/.config/openqa" "$TMP/cfg"
printf '[127.0.0.1]\nkey = %s\nsecret = %s\n[127.0.0.1:%s]\nkey = %s\nsecret = %s\n' "$KEY" "$SECRET" "$PORT" "$KEY" "$SECRET" \
	> "$TMP/home/.config/openqa/client.conf"
export HOME="$TMP/home"
unset OPENQA_CONFIG OPENQA_API_KEY OPENQA_API_SECRET
cli() { openqa-cli api --host "$URL" "$@"; }
vc() { $VIGIL client --host "$URL" "$@"; }

# --- setup through the API: one product, two machines, three suites, a group
cli -X POST machines name=64bit backend=qemu > /dev/null
cli -X POST machines name=uefi backend=qemu 'settings[UEFI]=1' > /dev/null
cli -X POST products distri=vigil version=1 flavor=DVD arch=x86_64 > /dev/null
for s in boot shell desktop; do cli -X POST test_suites name=$s > /dev/null; done
cli -X POST job_groups name=vigil-yaml > "$TMP/g.json"
check "job group created" [ "$(json_get "$TMP/g.json" 'j["id"]')" = 1 ]

# --- client.conf lookup
vc schedule DISTRI=vigil VERSION=1 FLAVOR=DVD ARCH=x86_64 BUILD=1 > "$TMP/s0.out" 2> "$TMP/s0.err"
check "schedule signed with the key from ~/.config/openqa/client.conf ([host] section), no templates yet: exit 1" [ $? -eq 1 ]
check "schedule without templates: the server's reason" grep -q "HTTP 404: no templates found for vigil-DVD-x86_64" "$TMP/s0.err"
printf '[%s]\nkey = %s\nsecret = %s\n' "$URL" "$OPKEY" "$OPSECRET" > "$TMP/cfg/client.conf"
OPENQA_CONFIG=$TMP/cfg vc comment 1 hello > "$TMP/c0.out" 2> "$TMP/c0.err"
check "OPENQA_CONFIG's client.conf ([URL] section) comes first" grep -q "job 1 not found" "$TMP/c0.err"
printf '[elsewhere]\nkey = X\nsecret = Y\n' > "$TMP/other.conf"
vc --client-conf "$TMP/other.conf" cancel 1 > /dev/null 2> "$TMP/c1.err"
check "--client-conf without a matching section: exit 2" [ $? -eq 2 ]
check "--client-conf without a matching section: names the section looked for" grep -q "no section \[127.0.0.1:$PORT\]" "$TMP/c1.err"
vc --client-conf "$TMP/nonexistent.conf" list > /dev/null 2> "$TMP/c2.err"
check "--client-conf with a missing file names it" grep -q "nonexistent.conf" "$TMP/c2.err"
HOME=$TMP/nohome vc --apikey "$OPKEY" --apisecret WRONGSECRET0000 cancel 1 > /dev/null 2> "$TMP/c3.err"
check "a wrong secret: refused, explained" grep -q "refused" "$TMP/c3.err"
HOME=$TMP/nohome vc cancel 1 > /dev/null 2> "$TMP/c4.err"
check "no key anywhere: a write is not sent, the reason is given" grep -q "no API key" "$TMP/c4.err"

# --- YAML job templates through the real openqa-cli
cat > "$TMP/t.yaml" <<'YAML'
products:
  vigil-1-DVD-x86_64:
    distri: vigil
    flavor: DVD
    version: 1
defaults:
  x86_64:
    machine: 64bit
    priority: 40
    settings:
      FROM_DEFAULTS: d
scenarios:
  x86_64:
    vigil-1-DVD-x86_64:
      - boot
      - shell:
          machine: [64bit, uefi]
          priority: 70
          settings:
            FOO: bar
      - desktop_big:
          testsuite: desktop
          settings: {QEMURAM: '4096'}
YAML
cli -X POST job_templates_scheduling/1 template="$(cat "$TMP/t.yaml")" > "$TMP/y.json"
check "YAML posted: 4 templates" [ "$(json_get "$TMP/y.json" 'j["job_group_id"], len(j["ids"])')" = "1 4" ]
cli job_templates > "$TMP/jt.json"
check "job templates made from the YAML" \
	[ "$(json_get "$TMP/jt.json" 'sorted((t["test_suite"]["name"], t["machine"]["name"], t["prio"], t["name"]) for t in j["JobTemplates"])')" = \
	  "[('boot', '64bit', 40, ''), ('desktop', '64bit', 40, 'desktop_big'), ('shell', '64bit', 70, ''), ('shell', 'uefi', 70, '')]" ]
curl -s "$URL/api/v1/job_templates_scheduling/1" > "$TMP/got.yaml"
# (openqa-cli's "$(cat)" drops the final newline; the YAML is kept as posted.)
check "GET returns the posted YAML" [ "$(cat "$TMP/got.yaml")" = "$(cat "$TMP/t.yaml")" ]
curl -s "$URL/api/v1/job_templates_scheduling/vigil-yaml" > "$TMP/got2.yaml"
check "GET by group name" [ "$(cat "$TMP/got2.yaml")" = "$(cat "$TMP/t.yaml")" ]
cli job_templates_scheduling/1 > "$TMP/got.json"
check "openqa-cli (Accept: application/json) gets the YAML as a JSON string" \
	[ "$(json_get "$TMP/got.json" 'j.splitlines()[0]')" = "products:" ]
cli -X POST job_groups name="it's empty" > /dev/null
curl -s "$URL/api/v1/job_templates_scheduling" > "$TMP/all.yaml"
check "GET all groups: a YAML mapping of group name to document" \
	[ "$($PY -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); print(sorted(d), yaml.safe_load(d["vigil-yaml"])["defaults"]["x86_64"]["priority"], d["it'"'"'s empty"])' "$TMP/all.yaml")" = \
	  "[\"it's empty\", 'vigil-yaml'] 40 products: {}
scenarios: {}" ]
cli -X POST job_templates_scheduling/1 template="$(cat "$TMP/t.yaml")" preview=1 expand=1 > "$TMP/pv.json"
check "preview + expand: the expanded document, nothing changed" \
	[ "$(json_get "$TMP/pv.json" 'j["preview"], "FROM_DEFAULTS: d" in j["result"]')" = "1 True" ]

# A build creates exactly the YAML's jobs with the merged settings.
vc schedule DISTRI=vigil VERSION=1 FLAVOR=DVD ARCH=x86_64 BUILD=2 > "$TMP/s1.out"
check "schedule prints 4 job ids" [ "$(wc -l < "$TMP/s1.out")" = 4 ]
vc --json list --build 2 > "$TMP/l2.json"
check "the YAML's jobs, names and priorities" \
	[ "$(json_get "$TMP/l2.json" 'sorted((x["name"], x["priority"]) for x in j["jobs"])')" = \
	  "[('vigil-1-DVD-x86_64-Build2-boot@64bit', 40), ('vigil-1-DVD-x86_64-Build2-desktop_big@64bit', 40), ('vigil-1-DVD-x86_64-Build2-shell@64bit', 70), ('vigil-1-DVD-x86_64-Build2-shell@uefi', 70)]" ]
check "template settings reach the job (defaults and the scenario's)" \
	[ "$(json_get "$TMP/l2.json" '[(x["settings"].get("FOO"), x["settings"].get("FROM_DEFAULTS"), x["settings"].get("QEMURAM"), x["settings"].get("UEFI")) for x in j["jobs"] if x["name"].endswith("shell@uefi") or x["name"].endswith("big@64bit")]')" = \
	  "[(None, 'd', '4096', None), ('bar', 'd', None, '1')]" ]

# Bad YAML: 400, the line named, the group's templates unchanged.
printf 'products:\n  p: {distri: d, flavor: f, version: 1}\nscenarios:\n  x86_64:\n    p:\n      - boot:\n          machne: 64bit\n' > "$TMP/bad1.yaml"
cli -X POST job_templates_scheduling/1 template="$(cat "$TMP/bad1.yaml")" > "$TMP/bad1.json" 2>&1
check "schema error: HTTP 400" grep -q "400 Bad Request" "$TMP/bad1.json"
check "schema error: 400 naming line and key" grep -q '"line 7, column 11: /scenarios/x86_64/p/0/boot/machne: unknown key' "$TMP/bad1.json"
cli -X POST job_templates_scheduling/1 template="$(printf 'products: {\nscenarios: [\n')" > "$TMP/bad2.json" 2>&1
check "YAML syntax error: 400 with the line" grep -q '"line 3, column 1: invalid YAML' "$TMP/bad2.json"
cli -X POST job_templates_scheduling/1 template="$(sed 's/64bit, uefi/64bit, nosuch/' "$TMP/t.yaml")" > "$TMP/bad3.json" 2>&1
check "unknown machine: 400 naming it and the line" grep -q "line 16: Machine 'nosuch' is invalid" "$TMP/bad3.json"
cli job_templates > "$TMP/jt2.json"
check "rejected posts changed nothing" cmp -s "$TMP/jt.json" "$TMP/jt2.json"
ocli() { openqa-cli api --host "$URL" --apikey "$OPKEY" --apisecret "$OPSECRET" "$@"; }
ocli -X POST job_templates_scheduling/1 template="$(cat "$TMP/t.yaml")" > "$TMP/op.json" 2>&1
check "YAML post needs an admin key" grep -q "Administrator level required" "$TMP/op.json"
cli -X POST job_templates_scheduling/1 template="$(cat "$TMP/t.yaml")" reference="old text" > "$TMP/ref.json" 2>&1
check "reference that is not the current YAML: Template was modified" grep -q "Template was modified" "$TMP/ref.json"

cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=boot distri=vigil version=1 flavor=DVD arch=x86_64 > "$TMP/jtman.json" 2>&1
check "a YAML group's templates are not changed one by one" grep -q "must be updated through the YAML template" "$TMP/jtman.json"

# A group made template by template gets a YAML written from its rows;
# posting that document back keeps the same templates.
cli -X POST job_groups name=manual default_priority=45 > "$TMP/g3.json"
G3=$(json_get "$TMP/g3.json" 'j["id"]')
cli -X POST job_templates group_id=$G3 machine_name=uefi test_suite_name=boot distri=vigil version=1 flavor=DVD arch=x86_64 name=boot_uefi prio=45 > /dev/null
cli -X POST job_templates group_id=$G3 machine_name=uefi test_suite_name=desktop distri=vigil version=1 flavor=DVD arch=x86_64 prio=20 > "$TMP/jt3.json"
curl -s "$URL/api/v1/job_templates_scheduling/$G3" > "$TMP/g3.yaml"
check "YAML written from the rows: defaults, custom name, priority" \
	[ "$($PY -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); print(d["defaults"], d["scenarios"]["x86_64"]["vigil-1-DVD-x86_64"])' "$TMP/g3.yaml")" = \
	  "{'x86_64': {'machine': 'uefi', 'priority': 45}} [{'boot_uefi': {'testsuite': 'boot'}}, {'desktop': {'priority': 20}}]" ]
cli job_templates > "$TMP/jt3a.json"
cli -X POST job_templates_scheduling/$G3 template="$(cat "$TMP/g3.yaml")" > "$TMP/g3post.json"
cli job_templates > "$TMP/jt3b.json"
check "the written YAML posted back keeps the same templates" \
	[ "$(json_get "$TMP/g3post.json" 'sorted(j["ids"])')" = "$(json_get "$TMP/jt3a.json" 'sorted(t["id"] for t in j["JobTemplates"] if t["group_id"] == '"$G3"')')" ]
check "... with the same priorities" cmp -s "$TMP/jt3a.json" "$TMP/jt3b.json"
cli -X POST job_templates_scheduling name=manual template="$(cat "$TMP/g3.yaml")" > "$TMP/g3name.json"
check "POST by group name (name=, no id in the path)" [ "$(json_get "$TMP/g3name.json" 'j["job_group_id"], len(j["ids"])')" = "$G3 2" ]
cli -X POST job_templates_scheduling name=nosuchgroup template="$(cat "$TMP/g3.yaml")" > "$TMP/g3bad.json" 2>&1
check "POST for an unknown group name: 400" grep -q "Job group nosuchgroup not found" "$TMP/g3bad.json"

# "testsuite: null": a named template on openQA's empty test suite "-".
cli -X POST job_templates_scheduling/2 template="$(printf 'products:\n  p: {distri: vigil, flavor: DVD, version: "1"}\nscenarios:\n  x86_64:\n    p:\n      - only_settings:\n          testsuite: null\n          machine: 64bit\n          settings: {A: "1", B: "2"}\n')" > "$TMP/null.json"
cli job_templates > "$TMP/jt5.json"
check "testsuite: null makes a template on the empty test suite" \
	[ "$(json_get "$TMP/jt5.json" '[(t["name"], t["test_suite"]["name"]) for t in j["JobTemplates"] if t["group_id"] == 2]')" = "[('only_settings', '-')]" ]

# Replacing the document drops the templates it no longer names.
sed '/- shell:/,/FOO: bar/d' "$TMP/t.yaml" > "$TMP/t2.yaml"
cli -X POST job_templates_scheduling/1 template="$(cat "$TMP/t2.yaml")" > "$TMP/y2.json"
check "second post: 2 templates, the change reported" \
	[ "$(json_get "$TMP/y2.json" 'len(j["ids"]), "-      - shell:" in j["changes"]')" = "2 True" ]
cli job_templates > "$TMP/jt4.json"
check "... and the dropped scenarios' templates are gone" \
	[ "$(json_get "$TMP/jt4.json" 'sorted(t["test_suite"]["name"] for t in j["JobTemplates"] if t["group_id"] == 1)')" = "['boot', 'desktop']" ]

# --- jobs via vigil client
vc list > "$TMP/list.txt"
check "list: a table with a header and 4 jobs" [ "$(grep -c scheduled "$TMP/list.txt")" = 4 ]
check "list: header" grep -q "^ID *STATE *RESULT *PRIO *NAME" "$TMP/list.txt"
vc list --state done > "$TMP/none.txt" 2>&1
check "list with a filter that matches nothing" grep -q "no jobs" "$TMP/none.txt"
vc --json list test=shell machine=uefi > "$TMP/lkv.json"
check "list with KEY=VALUE filters" [ "$(json_get "$TMP/lkv.json" '[x["name"] for x in j["jobs"]]')" = "['vigil-1-DVD-x86_64-Build2-shell@uefi']" ]
vc list --limit 0 > /dev/null 2>&1
check "list --limit 0: usage error" [ $? -eq 2 ]
FIRST=$(head -1 "$TMP/s1.out")
vc show "$FIRST" > "$TMP/show.txt"
check "show: name, state, settings" sh -c "grep -q '^job $FIRST: vigil-1-DVD-x86_64-Build2-' '$TMP/show.txt' && grep -q '  state *scheduled' '$TMP/show.txt' && grep -q '^  DISTRI=vigil' '$TMP/show.txt'"
vc show "$URL/tests/$FIRST" > "$TMP/showurl.txt"
check "show takes a job's URL too" grep -q "^job $FIRST: " "$TMP/showurl.txt"
vc show 999 > /dev/null 2> "$TMP/show404.err"
check "show unknown job exits 1" [ $? -eq 1 ]
check "show unknown job: 'job 999 not found'" grep -qx 'vigil client: job 999 not found' "$TMP/show404.err"
vc show abc > /dev/null 2>&1
check "show abc: usage error 2" [ $? -eq 2 ]

vc clone "$FIRST" BUILD=99 EXTRA=x > "$TMP/clone.out"
CLONE=$(cat "$TMP/clone.out")
cli "jobs/$CLONE" > "$TMP/clone.json"
cli "jobs/$FIRST" > "$TMP/first.json"
check "clone: new job, same settings plus overrides" \
	[ "$(json_get "$TMP/clone.json" 'j["job"]["settings"]["BUILD"], j["job"]["settings"]["EXTRA"], j["job"]["settings"]["CLONED_FROM"].endswith("/tests/'"$FIRST"'"), j["job"]["priority"], j["job"]["group_id"]')" = \
	  "99 x True $(json_get "$TMP/first.json" 'j["job"]["priority"], j["job"]["group_id"]')" ]
check "clone: the original is untouched (clone is not restart)" [ "$(json_get "$TMP/first.json" 'j["job"]["clone_id"], j["job"]["state"]')" = "None scheduled" ]
vc clone "$FIRST" "bad key=1" > /dev/null 2> "$TMP/clone2.err"
check "clone with a bad setting: usage error naming it" grep -q "setting name 'bad key'" "$TMP/clone2.err"
vc clone 999 > /dev/null 2> "$TMP/clone3.err"
check "clone unknown job: job 999 not found" grep -q "job 999 not found" "$TMP/clone3.err"

vc cancel "$CLONE" > "$TMP/cancel.out"
check "cancel: said so" grep -q "job $CLONE cancelled" "$TMP/cancel.out"
check "cancel: visible through the API" [ "$(curl -s "$URL/api/v1/jobs/$CLONE" | $PY -c 'import json,sys; j=json.load(sys.stdin)["job"]; print(j["state"], j["result"])')" = "cancelled user_cancelled" ]
vc cancel 999 > /dev/null 2> "$TMP/cancel404.err"
check "cancel unknown job: job 999 not found" grep -q "job 999 not found" "$TMP/cancel404.err"

SECOND=$(sed -n 2p "$TMP/s1.out")
vc restart "$SECOND" > "$TMP/restart.out"
NEW=$(cat "$TMP/restart.out")
check "restart prints the new job id" [ "$(curl -s "$URL/api/v1/jobs/$SECOND" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["clone_id"])')" = "$NEW" ]
vc restart 999 > /dev/null 2> "$TMP/restart404.err"
check "restart unknown job: job 999 not found" grep -q "job 999 not found" "$TMP/restart404.err"
$VIGIL client --host http://127.0.0.1:1 list > /dev/null 2> "$TMP/unreach.err"
check "unreachable server: exit 1" [ $? -eq 1 ]
check "unreachable server: says so" grep -q "cannot reach http://127.0.0.1:1" "$TMP/unreach.err"
vc schedule DISTRI=vigil > /dev/null 2> "$TMP/sched.err"
check "schedule without the product: names what is missing" grep -q "missing VERSION, FLAVOR, ARCH" "$TMP/sched.err"
vc schedule NOTASETTING > /dev/null 2> "$TMP/sched2.err"
check "schedule with a bad argument: expected KEY=VALUE" grep -q "expected KEY=VALUE" "$TMP/sched2.err"
vc frobnicate > /dev/null 2>&1
check "unknown command: exit 2" [ $? -eq 2 ]

# --- comments through the real openqa-cli and the python client
cli -X POST "jobs/$FIRST/comments" text='bsc#1234 flaky, see https://github.com/os-autoinst/openQA/issues/966' > "$TMP/cm.json"
CID=$(json_get "$TMP/cm.json" 'j["id"]')
check "comment created" [ -n "$CID" ]
cli "jobs/$FIRST/comments" > "$TMP/cml.json"
check "comment listed with bugrefs, URL shortened" \
	[ "$(json_get "$TMP/cml.json" 'j[0]["text"], j[0]["bugrefs"]')" = \
	  "bsc#1234 flaky, see gh#os-autoinst/openQA#966 ['bsc#1234', 'gh#os-autoinst/openQA#966']" ]
check "comment: openQA's fields and time format" \
	[ "$(json_get "$TMP/cml.json" 'sorted(j[0]), len(j[0]["created"].split()) == 3 and j[0]["created"].endswith("+0000")')" = \
	  "['bugrefs', 'created', 'id', 'renderedMarkdown', 'text', 'updated', 'userName'] True" ]
cli -X PUT "jobs/$FIRST/comments/$CID" text='poo#77 fixed' > /dev/null
cli "jobs/$FIRST/comments/$CID" > "$TMP/cm1.json"
check "comment updated by its author" [ "$(json_get "$TMP/cm1.json" 'j["text"], j["bugrefs"]')" = "poo#77 fixed ['poo#77']" ]
ocli -X PUT "jobs/$FIRST/comments/$CID" text='hijack' > "$TMP/cm403.json" 2>&1
check "another key may not edit it: 403 must be author" grep -q "must be author" "$TMP/cm403.json"
ocli -X DELETE "jobs/$FIRST/comments/$CID" > "$TMP/cmdel.json" 2>&1
check "deleting needs an admin" grep -q "Administrator level required" "$TMP/cmdel.json"
cli -X POST jobs/999/comments text=x > "$TMP/cm404.json" 2>&1
check "comment on an unknown job: 404" sh -c 'grep -q "404 Not Found" "$1" && grep -q "Job 999 does not exist" "$1"' sh "$TMP/cm404.json"
cli -X POST "jobs/$FIRST/comments" text='   ' > "$TMP/cmempty.json" 2>&1
check "blank comment: 400" grep -q "text invalid" "$TMP/cmempty.json"
vc comment "$FIRST" "boo#5 from vigil client" > "$TMP/vcc.out"
vc show "$FIRST" > "$TMP/show2.txt"
check "vigil client comment, shown by show" grep -q "boo#5 from vigil client" "$TMP/show2.txt"
cli -X POST groups/1/comments text='tag:2:important gh#a/b#1' > /dev/null
cli groups/1/comments > "$TMP/gc.json"
check "group comments" [ "$(json_get "$TMP/gc.json" 'j[0]["bugrefs"]')" = "['gh#a/b#1']" ]
cli -X POST comments text='poo#8 on many' job_id=$FIRST job_id=999 > "$TMP/many.json" 2>&1
check "comments on many jobs: one created, the unknown job failed, 400" \
	sh -c 'grep -q "400 Bad Request" "$1" && grep -q "\"failed\":\[{\"job_id\":\"999\"}\]" "$1" && grep -q "\"created\":\[{\"id\":" "$1"' sh "$TMP/many.json"
MANY=$(sed -n 's/.*"created":\[{"id":\([0-9]*\).*/\1/p' "$TMP/many.json")
cli -X DELETE comments id=$MANY > "$TMP/delmany.json"
check "comments deleted by id" [ "$(json_get "$TMP/delmany.json" 'j["deleted"]')" = 1 ]

# label:force_result on a finished job sets its result; such a comment stays.
cli -X POST "jobs/$FIRST/comments" text='label:force_result:softfailed:bsc#99' > "$TMP/fr0.json" 2>&1
check "force_result on an unfinished job: 400" grep -q "force_result only allowed on finished jobs" "$TMP/fr0.json"
cli -X POST "jobs/$CLONE/comments" text='label:force_result:bogus' > "$TMP/fr1.json" 2>&1
check "force_result with an unknown result: 400" grep -q "Invalid result 'bogus'" "$TMP/fr1.json"
cli -X POST "jobs/$CLONE/comments" text='label:force_result:softfailed:bsc#99 known issue' > "$TMP/fr2.json"
check "force_result on a cancelled job sets the result" [ "$(cli "jobs/$CLONE" | $PY -c 'import json,sys; j=json.load(sys.stdin)["job"]; print(j["state"], j["result"])')" = "done softfailed" ]
cli -X DELETE "jobs/$CLONE/comments/$(json_get "$TMP/fr2.json" 'j["id"]')" > "$TMP/fr3.json" 2>&1
check "a force_result comment cannot be deleted" grep -q "deleting not allowed" "$TMP/fr3.json"
cli -X DELETE "jobs/$FIRST/comments/$CID" > /dev/null
check "comment deleted by an admin" [ "$(cli "jobs/$FIRST/comments" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ]
$PY - "$PORT" "$FIRST" > "$TMP/py.out" 2>&1 <<'PYEOF'
import sys
from openqa_client.client import OpenQA_Client
c = OpenQA_Client(server="127.0.0.1:%s" % sys.argv[1], scheme="http")
r = c.openqa_request("POST", "jobs/%s/comments" % sys.argv[2], data={"text": "bnc#9 via python"})
print("id", r["id"])
print("refs", [x["bugrefs"] for x in c.openqa_request("GET", "jobs/%s/comments" % sys.argv[2])])
y = c.openqa_request("GET", "job_templates_scheduling/1")
print("yaml", sorted(y["products"]))
PYEOF
check "python client: comment with bugrefs" grep -q "^refs \[\['boo#5'\], \['bnc#9'\]\]" "$TMP/py.out"
check "python client: YAML templates parsed" grep -q "^yaml \['vigil-1-DVD-x86_64'\]" "$TMP/py.out"

stop_server
finish
