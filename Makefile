# jobq: PGXS build of the extension, plus the client in client/.
#
#   make                 build the extension and the client
#   make install         install both (the extension into pg_config's dirs)
#   make installcheck    pg_regress + isolation + TAP against a temp instance
#   WERROR=1 make        warnings are errors (CI builds this way)

EXTENSION  = jobq
MODULE_big = jobq
OBJS = \
	extension/jobq.o \
	extension/plans.o \
	extension/validate.o \
	extension/queues.o \
	extension/queue_cache.o \
	extension/enqueue.o \
	extension/insert_job.o \
	extension/claim.o \
	extension/pop.o \
	extension/ack.o \
	extension/sweep.o \
	extension/admin.o \
	extension/inspect.o \
	extension/wait.o \
	extension/relay.o \
	extension/sweeper.o

DATA = $(wildcard extension/jobq--*.sql)
PGFILEDESC = "jobq - job queue with leases and fencing tokens"

# Tests share one database, in this order (see sql/).
REGRESS = $(shell cat test/regress_schedule)
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=test/jobq.conf
ISOLATION = $(shell cat test/isolation_schedule)
ISOLATION_OPTS = --temp-instance=./tmp_check_iso --temp-config=test/jobq.conf
TAP_TESTS = 1

PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
ifeq ($(WERROR),1)
PG_CFLAGS += -Werror
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The client (libjobq, jobq-worker, jobq) has a plain Makefile of its own.
# NO_CLIENT=1 builds and installs the extension alone.
ifndef NO_CLIENT
all: client-all
install: client-install
clean: client-clean
endif

client-all:
	$(MAKE) -C client WERROR=$(WERROR)
client-install:
	$(MAKE) -C client install
client-clean:
	$(MAKE) -C client clean

# Version drift is a build error: the control file, the newest version a
# script reaches (an install script's or an upgrade script's target) and the
# changelog must agree, and a released install script never changes: each
# one is compared with the checksum it had when it was released (RELEASED:
# version:sha256; 0.1.0 was released at commit 6791787).
RELEASED = 0.1.0:7cb5d9cd9e69cd9d179df6c16e325961798f73930c8d945ea61d1f7366b049d2
checkver:
	@ctl=$$(sed -n "s/^default_version = '\(.*\)'/\1/p" jobq.control); \
	newest=$$(ls extension/jobq--*.sql | sed -n 's/.*jobq--\([0-9.]*--\)\{0,1\}\([0-9.]*\)\.sql$$/\2/p' | sort -V | tail -1); \
	log=$$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md | head -1); \
	if [ "$$ctl" != "$$newest" ] || [ "$$ctl" != "$$log" ]; then \
		echo "version drift: jobq.control=$$ctl newest script=$$newest CHANGELOG=$$log"; exit 1; \
	fi; \
	for r in $(RELEASED); do \
		v=$${r%%:*}; sum=$${r#*:}; \
		echo "$$sum  extension/jobq--$$v.sql" | sha256sum --status -c - || \
			{ echo "extension/jobq--$$v.sql differs from release $$v: released scripts never change"; exit 1; }; \
	done; \
	echo "version $$ctl consistent"

.PHONY: client-all client-install client-clean checkver
