src/client/jobs.o: src/client/jobs.c \
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
 /usr/include/postgresql/15/server/lib/ilist.h \
 /usr/include/postgresql/15/server/storage/ipc.h \
 /usr/include/postgresql/15/server/utils/memutils.h \
 /usr/include/postgresql/15/server/nodes/memnodes.h \
 /usr/include/postgresql/15/server/nodes/nodes.h src/client/bridge.h \
 src/client/client.h src/common/clock.h src/client/jobs.h \
 src/client/request.h src/client/session.h src/client/wait.h \
 src/common/vocabulary.h
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
/usr/include/postgresql/15/server/lib/ilist.h:
/usr/include/postgresql/15/server/storage/ipc.h:
/usr/include/postgresql/15/server/utils/memutils.h:
/usr/include/postgresql/15/server/nodes/memnodes.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
src/client/bridge.h:
src/client/client.h:
src/common/clock.h:
src/client/jobs.h:
src/client/request.h:
src/client/session.h:
src/client/wait.h:
src/common/vocabulary.h:
