#!/bin/sh
# SPDX-License-Identifier: MIT
# test_testapi_more.sh - the later test API functions (testapi_vars.c,
# testapi_vm.c, testapi_module.c, the script checks of testapi_console.c, the
# mouse ones in testapi.c, wait_serial lists, script_run's options, module
# hooks and schedule variables, parse_extra_log and the upstream
# Lua module form) run for real against the shell image
# (tests/integration/distri-testapi).
. "$(dirname "$0")/lib.sh"

# --- the Lua names: docs/testapi-support.md is made from the code
# (test_docs.sh checks it is up to date); its reading of the code is the binary's
check "scripts/gen-testapi-table reads the Lua names vigil run --list-testapi prints" \
	sh -c "$VIGIL run --list-testapi | cut -f1 | sort > '$TMP/bin.txt' && scripts/gen-testapi-table --lua | cut -f1 | sort > '$TMP/gen.txt' && cmp -s '$TMP/bin.txt' '$TMP/gen.txt'"
check "--list-testapi names validate_script_output as a function" \
	sh -c "$VIGIL run --list-testapi | grep -qx 'validate_script_output	function'"
check "--list-testapi names serialdev as a variable" sh -c "$VIGIL run --list-testapi | grep -qx 'serialdev	variable'"

# --- one run of the shell image
D=tests/integration/distri-testapi
$VIGIL run $D --out "$TMP/run" --var NEEDLES_DIR="$(pwd)/examples/shell/needles" --var 'LIST=a,b;c' \
	--var PASSWORD=sekrit --var NOVIDEO=1 --var 'EXCLUDE_MODULES=excluded, dies' \
	--var QEMU_DUMP_COMPRESS_METHOD=none > "$TMP/run.out" 2>&1
rc=$?
cat "$TMP/run.out"
R=$TMP/run/testresults
mods() { json_get $R/results.json '",".join(m["name"]+"="+m["result"] for m in j["modules"])'; }
check "run: exit status 0 (softfailed)" [ $rc -eq 0 ]
check "run: module results (EXCLUDE_MODULES left two out)" [ "$(mods)" = "boot=ok,serial=ok,upstream=ok,extra=ok,1_junit=ok,t_x_tap=passed,screen=ok,forced=softfail,after=ok" ]
check "hooks: pre_run_hook, run, post_run_hook in order" \
	[ "$(json_get $TMP/run/vars.json 'j["PRE_HOOK"] + j["POST_HOOK"]')" = functionfunction ]
check "flags: no_rollback and always_rollback recorded" \
	[ "$(json_get $R/results.json '[m["flags"] for m in j["modules"] if m["name"] == "forced"][0]')" = "{'no_rollback': 1, 'always_rollback': 1}" ]
check "run: job softfailed" [ "$(json_get $R/results.json 'j["result"]')" = softfailed ]
step() { json_get $R/result-serial.json "[d['result'] for d in j['details'] if d.get('title') == '$1']"; }
check "validate_script_output: steps ok, ok (titled), fail" \
	[ "$(step validate_script_output)" = "['ok', 'fail']" -a "$(step answer)" = "['ok']" ]
txt=$(json_get $R/result-serial.json "[d['text'] for d in j['details'] if d.get('title') == 'answer'][0]")
check "validate_script_output: the step shows the script and the output" \
	sh -c "grep -q '^Script:' '$R/$txt' && grep -qx 42 '$R/$txt'"
check "wait_serial list: the step names both patterns" grep -q 'ZZ-1.b.|(?:ZZ-2' "$TMP/run.out"
check "script_run time-out: a warning only with the default die_on_timeout" sh -c \
	"! grep -q 'script_run .sleep 30. timed out: returns nil' '$TMP/run/vigil-log.txt'"
check "background_script_run: a PID" grep -qE "background_script_run 'sleep 1': PID [1-9]" "$TMP/run.out"
check "save_tmp_file: OUT/files/sub/tmp.txt" [ "$(cat "$TMP/run/files/sub/tmp.txt")" = "tmp content" ]
# (xz, the default, takes long on a busy machine: none here)
check "save_memory_dump: ulogs/mem-vm-memory-dump, QEMU's migration stream" \
	sh -c "head -c 4 '$R/ulogs/mem-vm-memory-dump' | grep -q QEVM"
check "click_lastmatch: clicked the banner" grep -q "screen: click_lastmatch: clicked left at" "$TMP/run.out"
check "assert_and_dclick: double click" grep -q "(double)" "$TMP/run.out"
check "mouse_drag: from the needle's click point" grep -qE "mouse_drag [0-9]+,[0-9]+ -> 300,300" "$TMP/run.out"
check "force_soft_failure: the dent and the forced softfail" \
	[ "$(json_get $R/result-forced.json 'j["dents"]')" = 1 ]
check "upstream form: use, a global run, lib/ by require" [ "$(json_get $TMP/run/vars.json 'j["UPSTREAM_RAN"]')" = 1 ]
check "upstream form: test_flags" \
	[ "$(json_get $R/results.json '[m["flags"] for m in j["modules"] if m["name"] == "upstream"][0]')" = "{'fatal': 1}" ]
check "parse_junit_log: the module's extra_test_results (openQA's shape)" \
	[ "$(json_get $R/result-extra.json '",".join(t["name"] + ":" + t["category"] + ":" + t["script"] for t in j["extra_test_results"])')" = "1_junit:vigil:tests/extra.lua,t_x_tap:TAP:tests/extra.lua" ]
check "parse_junit_log: the parser's result file" [ "$(json_get $R/result-1_junit.json 'j["details"][0]["title"]')" = first ]
check "parse_junit_log: the parser's text file" grep -q 'out one' $R/vigil-1_junit-1.txt
check "parse_junit_log: the uploaded file" [ -s $R/ulogs/extra-junit.xml ]
check "save_storage_drives: ulogs/drives-1-vm_disk_file.qcow2" \
	sh -c "qemu-img info $R/ulogs/drives-1-vm_disk_file.qcow2 | grep -q 'file format: qcow2'"
check "no QEMU left" eval "! qemu_left '$TMP/run/.vm'"

# --- INCLUDE_MODULES, SKIPTO (by full name) and TESTDEBUG: forced runs
# first, dies fails and ends the job, after never runs
$VIGIL run $D --out "$TMP/run2" --var NEEDLES_DIR="$(pwd)/examples/shell/needles" --var NOVIDEO=1 \
	--var 'INCLUDE_MODULES=boot,serial , forced,dies,after' --var SKIPTO=forced --var TESTDEBUG=1 > "$TMP/run2.out" 2>&1
rc=$?
cat "$TMP/run2.out"
R=$TMP/run2/testresults
check "run 2: exit status 1 (failed)" [ $rc -eq 1 ]
check "run 2: skipped before SKIPTO, stopped after the failure" \
	[ "$(mods)" = "boot=skip,serial=skip,forced=softfail,dies=fail,after=skip" ]
check "run 2: TESTDEBUG said why it stopped" grep -q "module failed with TESTDEBUG set: stopping" "$TMP/run2.out"
# --- consoles from Lua (tests/integration/distri-lua-consoles): add_console,
# activation, console objects, reset_consoles, an unsupported class
$VIGIL run tests/integration/distri-lua-consoles --out "$TMP/cons" --var NEEDLES_DIR="$(pwd)/examples/shell/needles" \
	--var NOVIDEO=1 > "$TMP/cons.out" 2>&1
rc=$?
cat "$TMP/cons.out"
check "consoles: exit status 0, every check in the module held" [ $rc -eq 0 ]
check "consoles: root-console activated twice (reset_consoles), by ctrl-alt-f2" \
	[ "$(grep -c "select_console root-console (tty-console, activated)" "$TMP/cons.out")" = 2 ]
check "consoles: the unsupported class warned about once" \
	[ "$(grep -c "console 'x3270' has class 's3270', which vigil does not support" "$TMP/cons/vigil-log.txt")" = 1 ]
finish
