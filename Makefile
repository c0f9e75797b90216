# zklock: cluster-wide advisory locks for PostgreSQL, backed by ZooKeeper.
#
#   make && make install          build and install (PGXS)
#   test/run-tests.sh             the whole test suite (see README.md)

EXTENSION = zklock
MODULE_big = zklock
# src/ has a folder per layer (test/check_layers.py says which, and checks
# that every include points down); headers live beside their sources and
# are included as "layer/name.h"
OBJS = $(patsubst %.c,%.o,$(wildcard src/*/*.c))
DATA = sql/zklock--1.0.sql sql/zklock--1.0--1.1.sql sql/zklock--1.1--1.2.sql sql/zklock--1.2--1.3.sql sql/zklock--1.3--1.4.sql sql/zklock--1.4--1.5.sql
PGFILEDESC = "zklock - cluster-wide advisory locks backed by Apache ZooKeeper"

# As pg_cron: -Wextra, but callbacks have parameters they do not use.
PG_CPPFLAGS = -Isrc -Wall -Wextra -Wno-unused-parameter
# Rebuild what includes a changed header (PGXS tracks headers only when
# PostgreSQL itself was configured with --enable-depend).
# (In PG_CFLAGS: only the compiler that makes the objects reads it.)
PG_CFLAGS = -MMD -MP
EXTRA_CLEAN = $(OBJS:.o=.d)
SHLIB_LINK = -lzookeeper_mt

# pg_regress tests (sql/, expected/) and isolation specs (specs/) need a
# running ZooKeeper; test/run-tests.sh starts one and runs them with
# "make installcheck".
REGRESS = setup api paths errors xact multi privileges lease barrier contexts stats
ISOLATION = blocking readers cancel timeouts deadlock semaphore
ISOLATION_OPTS = --load-extension=zklock

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

-include $(OBJS:.o=.d)
