# Arca — build, test, install. `make test` is the one command CI runs.
PREFIX      ?= /usr/local
DESTDIR     ?=
SWIFT       ?= swift
CONFIG      ?= release
BINDIR      := $(DESTDIR)$(PREFIX)/bin
SBINDIR     := $(DESTDIR)$(PREFIX)/sbin
MANDIR      := $(DESTDIR)$(PREFIX)/share/man
# PAM modules go to the multiarch security/ directory that libpam searches.
PAMDIR      ?= $(DESTDIR)$(shell pkg-config --variable=libdir pam 2>/dev/null || echo /lib/x86_64-linux-gnu)/security
UNITDIR     ?= $(DESTDIR)/etc/systemd/system
# arca-secretd: a systemd user unit and the session bus's activation file.
USERUNITDIR ?= $(DESTDIR)$(PREFIX)/lib/systemd/user
DBUSSVCDIR  ?= $(DESTDIR)$(PREFIX)/share/dbus-1/services
# Not org.freedesktop.secrets.service: gnome-keyring's package owns that path in the same
# directory (/usr/share/dbus-1/services), and dpkg refuses two packages with one file.
DBUSSVCFILE := org.freedesktop.secrets.arca.service
PAMCONFDIR  ?= $(DESTDIR)/usr/share/pam-configs
BUILD       := .build/$(CONFIG)

# Every Debian package the build and the tests need. Keep in sync with README.
DEPS := pkg-config libsodium-dev libkeyutils-dev keyutils libpam0g-dev libsqlite3-dev sqlite3 \
        libsystemd-dev libgcrypt20-dev libpam-wrapper pamtester dbus python3-dbus man-db util-linux procps \
        libpam-gnome-keyring gnome-keyring libsecret-tools hyperfine pass gnupg python3-gi gir1.2-secret-1 \
        debhelper dpkg-dev lintian strace etcd-server etcd-client openssl syncthing patchelf

.PHONY: all deps build products test lint format unit integration fuzz install install-files install-strip uninstall deb bench clean

all: build

# Installs only what is missing; runs `apt-get update` only when something is.
deps:
	@missing=$$(for p in $(DEPS); do \
	    dpkg-query -W -f='$${db:Status-Status}\n' $$p 2>/dev/null | grep -qx installed || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "deps: installing$$(echo $$missing | sed 's/^/ /')"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "deps: all installed"; fi

build: deps
	$(SWIFT) build -c $(CONFIG)

# ONLY=<filter> runs one test: `make test ONLY=ParserTests` builds and runs only the swift
# tests the filter matches (a regular expression over Module.Suite/test); `make integration
# ONLY=35` runs only the integration scripts whose name contains 35 (35-pam-arcad.sh).
ONLY ?=

ifeq ($(ONLY),)
test: deps build unit integration fuzz
else
test: deps unit
endif

# Only what is installed (and packaged): the two executables, the PAM module, and
# arca-secretd once Package.swift declares it. debian/rules builds with this.
PRODUCTS := arcad arca arca-fleetd arca-sync pam_arca $(if $(shell grep -l '"arca-secretd"' Package.swift 2>/dev/null),arca-secretd)
products:
	@set -e; for p in $(PRODUCTS); do $(SWIFT) build -c $(CONFIG) --product $$p; done

# The toolchain's swift-format with the checked-in .swift-format (4-space indent, 120
# columns); any finding fails. `make format` rewrites the tree in place.
LINT_PATHS := Package.swift Sources Tests bench Examples
lint:
	$(SWIFT) format lint --strict --parallel --recursive $(LINT_PATHS)

format:
	$(SWIFT) format format --in-place --parallel --recursive $(LINT_PATHS)

# Suites whose type ends in TimingTests hold a stopwatch: they run alone, after the parallel run.
unit:
	$(SWIFT) build --build-tests
ifeq ($(ONLY),)
	$(SWIFT) test --skip-build --skip 'TimingTests'
	$(SWIFT) test --skip-build --no-parallel --filter 'TimingTests'
else
	$(SWIFT) test --skip-build $(if $(findstring Timing,$(ONLY)),--no-parallel) --filter '$(ONLY)'
endif

# Integration scripts run as root against the built binaries, in name order.
integration:
	@set -e; ran=0; for t in Tests/integration/*$(basename $(notdir $(ONLY)))*.sh; do \
	    [ -e "$$t" ] || continue; echo "== $$t"; ran=1; \
	    ARCA_BUILD=$(CURDIR)/$(BUILD) bash "$$t"; done; \
	if [ $$ran = 0 ]; then echo "integration: no script matches ONLY=$(ONLY)" >&2; exit 2; fi

# A short bounded libFuzzer run of each fuzz target (FUZZ_SECONDS each, default 20).
fuzz:
	bash fuzz/run.sh

install: build
	@$(MAKE) --no-print-directory install-files
	@$(MAKE) --no-print-directory install-strip
	@# On a live system, start arcad: socket-activated under systemd, else by hand.
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	    systemctl daemon-reload && systemctl enable --now arcad.socket && echo "arcad: socket enabled and listening"; \
	elif [ -z "$(DESTDIR)" ]; then \
	    echo "arcad installed; no systemd here: start it with '$(PREFIX)/sbin/arcad' (see arcad(8))"; fi

# The files alone, from an existing build (BUILD=DIR to take them from elsewhere): debian/rules
# runs this with DESTDIR=debian/tmp PREFIX=/usr and Debian's unit and PAM directories.
# The module is prepared in the build tree first (a missing patchelf stops here, before anything is
# installed), then installed under a temporary name and renamed into place: a login that loads
# pam_arca.so meanwhile maps the old file or the new one, never one being rewritten (patchelf,
# strip and install all write an existing file in place, on the inode a loader may have mapped).
PATCHELF ?= patchelf
install-files:
	@command -v $(PATCHELF) >/dev/null || { echo "make install-files: $(PATCHELF) is missing (make deps" \
	    "installs patchelf): it removes pam_arca.so's RUNPATH and libm. Nothing was installed." >&2; exit 1; }
	@# No RUNPATH and no libm.so.6 in the installed module (pam/prepare-install.sh says why).
	PATCHELF=$(PATCHELF) bash pam/prepare-install.sh $(BUILD)/libpam_arca.so $(BUILD)/pam_arca.so.install
	install -d -m 0755 $(BINDIR) $(SBINDIR) $(PAMDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 $(MANDIR)/man8
	install -m 0755 $(BUILD)/arca $(BINDIR)/arca
	install -m 0755 $(BUILD)/arcad $(SBINDIR)/arcad
	install -m 0755 $(BUILD)/arca-fleetd $(SBINDIR)/arca-fleetd
	install -m 0755 $(BUILD)/arca-secretd $(BINDIR)/arca-secretd
	install -m 0755 $(BUILD)/arca-sync $(BINDIR)/arca-sync
	install -d -m 0755 $(USERUNITDIR) $(DBUSSVCDIR)
	sed 's|/usr/local/bin/arca-secretd|$(PREFIX)/bin/arca-secretd|' systemd/user/arca-secretd.service \
	    >$(USERUNITDIR)/arca-secretd.service
	sed 's|/usr/local/bin/arca-secretd|$(PREFIX)/bin/arca-secretd|' systemd/user/org.freedesktop.secrets.service \
	    >$(DBUSSVCDIR)/$(DBUSSVCFILE)
	chmod 0644 $(USERUNITDIR)/arca-secretd.service $(DBUSSVCDIR)/$(DBUSSVCFILE)
	sed 's|/usr/local/bin/arca-sync|$(PREFIX)/bin/arca-sync|' systemd/user/arca-sync.service \
	    >$(USERUNITDIR)/arca-sync.service && chmod 0644 $(USERUNITDIR)/arca-sync.service
	install -m 0644 $(BUILD)/pam_arca.so.install $(PAMDIR)/.pam_arca.so.new
	mv -f $(PAMDIR)/.pam_arca.so.new $(PAMDIR)/pam_arca.so
	rm -f $(BUILD)/pam_arca.so.install
	for f in man/*.[1-8]; do [ -e "$$f" ] || continue; \
	    install -m 0644 "$$f" $(MANDIR)/man$${f##*.}/; done
	install -d -m 0755 $(UNITDIR)
	sed 's|/usr/local/sbin/arcad|$(PREFIX)/sbin/arcad|' systemd/arcad.service >$(UNITDIR)/arcad.service
	install -m 0644 systemd/arcad.socket $(UNITDIR)/arcad.socket
	sed 's|/usr/local/sbin/arca-fleetd|$(PREFIX)/sbin/arca-fleetd|' systemd/arca-fleetd.service \
	    >$(UNITDIR)/arca-fleetd.service
	chmod 0644 $(UNITDIR)/arcad.service $(UNITDIR)/arca-fleetd.service
	if [ -f pam/pam-configs/arca ]; then install -d -m 0755 $(PAMCONFDIR) && \
	    install -m 0644 pam/pam-configs/arca $(PAMCONFDIR)/arca; fi
	install -d -m 0700 $(DESTDIR)/var/lib/arca

# make install strips what it installed (arca 12.6 -> 7.5 MiB, arcad 13.4 -> 7.2, pam_arca.so
# 9.8 -> 5.9, arca-secretd 10.6 -> 6.4); the debug info stays in the build tree, in
# $(BUILD)/NAME.debug, which each stripped file names in its .gnu_debuglink (gdb finds it with
# `set debug-file-directory`, or `symbol-file`). debian/rules runs install-files only:
# dh_strip strips there and puts the debug info in the -dbgsym packages. Each stripped copy is
# written beside the installed file and renamed over it (strip alone rewrites it in place).
STRIPPED := arca:$(BINDIR)/arca arcad:$(SBINDIR)/arcad arca-secretd:$(BINDIR)/arca-secretd \
            libpam_arca.so:$(PAMDIR)/pam_arca.so
install-strip:
	@set -e; for pair in $(STRIPPED); do \
	    src=$(BUILD)/$${pair%%:*}; dst=$${pair#*:}; new=$$(dirname "$$dst")/.$$(basename "$$dst").new; \
	    objcopy --only-keep-debug "$$src" "$$src.debug"; \
	    strip --strip-unneeded --remove-section=.comment -o "$$new" "$$dst"; \
	    objcopy --add-gnu-debuglink="$$src.debug" "$$new"; \
	    chmod "$$(stat -c %a "$$dst")" "$$new"; mv -f "$$new" "$$dst"; \
	    echo "stripped $$dst: $$(stat -c %s "$$src") -> $$(stat -c %s "$$dst") bytes (debug info: $$src.debug)"; \
	done

uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	    systemctl disable --now arcad.socket arcad.service 2>/dev/null || true; fi
	rm -f $(BINDIR)/arca $(SBINDIR)/arcad $(SBINDIR)/arca-fleetd $(PAMDIR)/pam_arca.so $(PAMCONFDIR)/arca
	rm -f $(BINDIR)/arca-secretd $(USERUNITDIR)/arca-secretd.service $(DBUSSVCDIR)/$(DBUSSVCFILE)
	rm -f $(BINDIR)/arca-sync $(USERUNITDIR)/arca-sync.service
	for f in man/*.[1-8]; do [ -e "$$f" ] || continue; rm -f $(MANDIR)/man$${f##*.}/$$(basename $$f); done
	for f in systemd/*.service systemd/*.socket; do [ -e "$$f" ] || continue; rm -f $(UNITDIR)/$$(basename $$f); done

# Debian packages (README, "Debian packages") of the committed tree (HEAD, exported with git
# archive: the work tree is never touched), built by dpkg-buildpackage in a temporary
# directory; the .deb files land in DEBDIR. ARCA_PREBUILT=.build/release packages an existing
# release build instead of building again (make test does, so Swift is built once);
# DEB_VERSION=V adds a changelog entry for version V first (a rebuild, an upgrade test).
DEBDIR       ?= $(CURDIR)/.build/deb
ARCA_PREBUILT ?=
DEB_VERSION  ?=
deb: deps
	@git rev-parse --verify -q HEAD >/dev/null || { echo "make deb: needs a git checkout (it packages HEAD)" >&2; exit 1; }
	@git diff --quiet HEAD || echo "make deb: note: uncommitted changes are not packaged (it packages HEAD)" >&2
	@set -e; tmp=$$(mktemp -d /tmp/arca-deb.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	git archive --prefix=arca/ HEAD | tar -x -C "$$tmp"; cd "$$tmp/arca"; \
	if [ -n "$(DEB_VERSION)" ]; then \
	    { printf 'arca (%s) unstable; urgency=medium\n\n  * Rebuild of %s.\n\n -- %s  %s\n\n' "$(DEB_VERSION)" \
	        "$$(git -C $(CURDIR) rev-parse --short HEAD)" "$$(dpkg-parsechangelog -S Maintainer)" "$$(date -R)"; \
	      cat debian/changelog; } >debian/changelog.new && mv debian/changelog.new debian/changelog; fi; \
	ARCA_PREBUILT=$(if $(ARCA_PREBUILT),$(abspath $(ARCA_PREBUILT))) dpkg-buildpackage -b --no-sign; \
	mkdir -p $(DEBDIR); find "$$tmp" -maxdepth 1 -type f -exec mv -t $(DEBDIR) {} +; \
	ls -l $(DEBDIR)

# Each bench/NAME runs in one go: bench/NAME/run.sh if present, else the bench-NAME executable.
bench: deps
	@set -e; for d in bench/*/; do n=$$(basename $$d); echo "== bench $$n"; \
	    if [ -x $$d/run.sh ]; then $$d/run.sh; else $(SWIFT) run -c release bench-$$n; fi; done

clean:
	rm -rf .build
