# SPDX-License-Identifier: MIT
# 40-review.sh - the review suite's jobs (sourced by fixture.sh before the
# worker starts), in a scenario of their own (distribution web-review: the
# web-fail one whose near-miss check takes its tag from NEARMISS_TAG): a
# good run that checks grub-menu, then a failing run with RETRY=1 and a
# bug reference; its retry fails the same way and carries the reference
# over. Three short GRUB runs.
RV="$DATA/tests/web-review"
mkdir -p "$RV"
cp -r "$DATA/tests/web-fail/." "$RV/"
sed 's/"web-fail"/"web-review"/' "$DATA/tests/web-fail/vars.json" > "$RV/vars.json"
cat > "$RV/tests/nearmiss.lua" <<'LUA'
-- The near miss, or with NEARMISS_TAG=grub-menu a check that passes.
return {
   run = function()
      assert_screen(get_var("NEARMISS_TAG", "web-nearmiss"), 3)
   end,
}
LUA
cli -X POST jobs TEST=web-review DISTRI=web-review VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=1 \
	NEARMISS_TAG=grub-menu > /dev/null
REVIEWED=$(cli -X POST jobs TEST=web-review DISTRI=web-review VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=2 \
	RETRY=1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
cli -X POST "jobs/$REVIEWED/comments" 'text=bsc#4242 the menu moved' > /dev/null
