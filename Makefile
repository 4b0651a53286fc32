# SPDX-License-Identifier: MIT
# vigil - GNU Makefile. Sources are found by globbing src/, so adding a
# module needs no edit here. `make SAN=1` builds with ASan+UBSan into build-san/.

PKGS := libvncclient spng jansson lua5.4 libpcre2-8 libcrypto libavcodec libavformat libavutil libswscale libmicrohttpd sqlite3 libpq libcurl yaml-0.1 libarchive librabbitmq fftw3 sndfile
CC ?= gcc
SAN ?= 0
WERROR ?= 0

ifeq ($(FUZZ),1)
# libFuzzer targets (tests/fuzz/): clang with ASan+UBSan, the library
# instrumented for coverage; each target brings libFuzzer's main.
CC := clang-14
BUILD := build-fuzz
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1
else ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1
else
BUILD := build
SANFLAGS :=
OPT := -O2
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# The release, from the package's changelog (debian/changelog's first line).
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null)
CFLAGS := -std=c11 -D_GNU_SOURCE -DVIGIL_VERSION='"$(VERSION)"' $(OPT) -g $(WARN) -march=x86-64-v2 -Isrc $(PKG_CFLAGS) $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS) $(EXTRA_LDFLAGS)
# Debian 12's libwslay-dev ships no libwslay.pc: its plain -l when pkg-config knows none.
WSLAY_CFLAGS := $(shell pkg-config --cflags libwslay 2>/dev/null)
WSLAY_LIBS := $(shell pkg-config --libs libwslay 2>/dev/null || echo -lwslay)
CFLAGS += $(WSLAY_CFLAGS)
LDLIBS := $(PKG_LIBS) $(WSLAY_LIBS) -lpthread -lm

SRC := $(shell find src -name '*.c' | sort)
LIB_SRC := $(filter-out src/main.c,$(SRC))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/web.o $(BUILD)/gen/perl.o
# The web UI's files, put into the binary by scripts/embed-web (server/pages/web.c).
WEB_FILES := $(shell find web -type f ! -name '.*' 2>/dev/null | sort)
# The Perl test process's files, put into the binary by scripts/embed-perl (runner/perl/perl.c).
PERL_FILES := $(shell find src/runner/perl/embed -type f ! -name '.*' 2>/dev/null | sort)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/unit/runner.o $(BUILD)/tests/unit/alloc_fail.o
# The unit binary's allocators can be made to fail (tests/unit/alloc_fail.c).
UNIT_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/fuzz/%)
FIXTURE_SRC := $(sort $(wildcard tests/fixtures/*.c))
FIXTURES := $(FIXTURE_SRC:tests/fixtures/%.c=$(BUILD)/fixtures/%)

.PHONY: all deps images demo install check check-interop unit integration bench clean install-deps fuzz fuzz-build faults FORCE

all: $(BUILD)/vigil $(FIXTURES)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Remade each time (it is only rewritten when web/'s list of files changed);
# the object follows the files' bytes.
$(BUILD)/gen/web.S: FORCE
	@mkdir -p $(dir $@)
	@scripts/embed-web $@

$(BUILD)/gen/web.o: $(BUILD)/gen/web.S $(WEB_FILES)
	$(CC) -c $< -o $@

$(BUILD)/gen/perl.S: FORCE
	@mkdir -p $(dir $@)
	@scripts/embed-perl $@

$(BUILD)/gen/perl.o: $(BUILD)/gen/perl.S $(PERL_FILES)
	$(CC) -c $< -o $@

# Made anew each time, so an object whose source was removed leaves with it.
$(BUILD)/libvigil.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/vigil: $(BUILD)/src/main.o $(BUILD)/libvigil.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@[ "$(BUILD)" = build ] && ln -sf build/vigil vigil || true

# The unit test registry is generated from the TEST(name) markers; each name
# is followed by 1 when its body calls unit_db() or unit_db_url() (the tests
# VIGIL_TEST_DB reruns on PostgreSQL), else 0.
$(BUILD)/tests/unit/registry.h: $(UNIT_SRC)
	@mkdir -p $(dir $@)
	awk 'FNR == 1 || /^TEST\(/ { if (n != "") print n, d; n = ""; d = 0 } \
	     /^TEST\(/ { n = $$0; sub(/^TEST\(/, "", n); sub(/\).*/, "", n) } \
	     /unit_db(_url)?\(\)/ { d = 1 } END { if (n != "") print n, d }' $(UNIT_SRC) > $@.names
	{ sed 's/ .*//; s/.*/void test_&(void);/' $@.names; echo 'static const struct unit_test unit_tests[] = {'; \
	  sed 's/\(.*\) \(.*\)/\t{ "\1", test_\1, \2 },/' $@.names; echo '};'; } > $@

$(BUILD)/tests/unit/runner.o: tests/unit/runner.c $(BUILD)/tests/unit/registry.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(BUILD)/tests/unit -c $< -o $@

$(BUILD)/test_unit: $(UNIT_OBJ) $(BUILD)/libvigil.a
	$(CC) $(LDFLAGS) $(UNIT_WRAP) -o $@ $^ $(LDLIBS)

$(BUILD)/fixtures/%: tests/fixtures/%.c $(BUILD)/libvigil.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags libvncserver) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs libvncserver)

# libFuzzer targets: `make fuzz` builds them (FUZZ=1) and runs each for
# FUZZ_TIME seconds from its committed seeds (tests/fuzz/corpus/NAME);
# tests/integration/test_fuzz.sh runs a short, seeded pass in `make check`.
build-fuzz/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) build-fuzz/libvigil.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.a,$^) $(LDLIBS)

# clang's warnings are not gcc's (a v*printf wrapper without a format
# attribute, e.g. libmicrohttpd's logger): -Werror stays with the gcc builds.
fuzz-build:
	$(MAKE) FUZZ=1 WERROR=0 $(FUZZ_BIN)

FUZZ_TIME ?= 60
fuzz: fuzz-build
	tests/fuzz/run $(FUZZ_TIME)

# Issue 17's fault suite (tests/faults/faults.py, docs/hardening.md "Faults"):
# FAULT_RUNS seeded runs of each kind against real jobs; long, not in CI
# (test_fault_inject.sh runs three fixed seeds).
FAULT_RUNS ?= 50
FAULT_JOBS ?= 1
faults: all
	tests/faults/faults.py --runs $(FAULT_RUNS) --jobs $(FAULT_JOBS) --laps

install-deps:
	scripts/install-deps

# The binary, its man page, systemd units and a first /etc/vigil/vigil.conf
# (an existing one is kept). debian/rules uses this with DESTDIR.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
install: $(BUILD)/vigil
	install -D -m 0755 $(BUILD)/vigil $(DESTDIR)$(PREFIX)/bin/vigil
	install -D -m 0644 man/vigil.1 $(DESTDIR)$(PREFIX)/share/man/man1/vigil.1
	@mkdir -p $(DESTDIR)$(UNITDIR)
	for u in vigil.service vigil-worker@.service; do \
		sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/$$u.in \
			> $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	[ -e $(DESTDIR)$(SYSCONFDIR)/vigil/vigil.conf ] || \
		install -D -m 0640 dist/vigil.conf $(DESTDIR)$(SYSCONFDIR)/vigil/vigil.conf

images:
	scripts/fetch-images

# The newcomer's first command: install, build, fetch images, run the examples.
demo: install-deps
	$(MAKE) all
	scripts/fetch-images
	scripts/demo

unit: $(BUILD)/test_unit
	$(BUILD)/test_unit

# All tests: unit tests under ASan+UBSan, then the integration suites against
# real QEMU. Prints "N passed, N failed" last.
check:
	scripts/install-deps --check-only || scripts/install-deps
	$(MAKE) all
	$(MAKE) SAN=1 all build-san/test_unit
	scripts/fetch-images
	tests/run-all

# vigil beside openQA (issue 16): tests/integration/test_interop.sh alone.
check-interop: all
	scripts/install-deps --check-only || scripts/install-deps
	scripts/fetch-images
	VIGIL=$(CURDIR)/build/vigil sh tests/integration/test_interop.sh

bench: all
	bench/run

clean:
	rm -rf build build-san build-fuzz vigil

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
