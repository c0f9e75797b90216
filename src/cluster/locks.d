src/cluster/locks.o: src/cluster/locks.c \
 /usr/include/postgresql/15/server/postgres.h \
 /usr/include/postgresql/15/server/c.h \
 /usr/include/postgresql/15/server/postgres_ext.h \
 /usr/include/postgresql/15/server/pg_config_ext.h \
 /usr/include/postgresql/15/server/pg_config.h \
 /usr/include/postgresql/15/server/pg_config_manual.h \
 /usr/include/postgresql/15/server/pg_config_os.h \
 /usr/include/postgresql/15/server/port.h \
 /usr/include/postgresql/15/server/utils/elog.h \
 /usr/include/postgresql/15/server/utils/errcodes.h \
 /usr/include/postgresql/15/server/utils/palloc.h \
 /usr/include/postgresql/15/server/utils/memutils.h \
 /usr/include/postgresql/15/server/nodes/memnodes.h \
 /usr/include/postgresql/15/server/nodes/nodes.h src/cluster/scan.h \
 /usr/include/postgresql/15/server/lib/ilist.h \
 /usr/include/postgresql/15/server/utils/palloc.h src/common/contender.h \
 src/common/vocabulary.h src/client/client.h src/common/clock.h \
 src/cluster/view.h src/common/operation_context.h \
 src/common/text_encoding.h
/usr/include/postgresql/15/server/postgres.h:
/usr/include/postgresql/15/server/c.h:
/usr/include/postgresql/15/server/postgres_ext.h:
/usr/include/postgresql/15/server/pg_config_ext.h:
/usr/include/postgresql/15/server/pg_config.h:
/usr/include/postgresql/15/server/pg_config_manual.h:
/usr/include/postgresql/15/server/pg_config_os.h:
/usr/include/postgresql/15/server/port.h:
/usr/include/postgresql/15/server/utils/elog.h:
/usr/include/postgresql/15/server/utils/errcodes.h:
/usr/include/postgresql/15/server/utils/palloc.h:
/usr/include/postgresql/15/server/utils/memutils.h:
/usr/include/postgresql/15/server/nodes/memnodes.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
src/cluster/scan.h:
/usr/include/postgresql/15/server/lib/ilist.h:
/usr/include/postgresql/15/server/utils/palloc.h:
src/common/contender.h:
src/common/vocabulary.h:
src/client/client.h:
src/common/clock.h:
src/cluster/view.h:
src/common/operation_context.h:
src/common/text_encoding.h:
