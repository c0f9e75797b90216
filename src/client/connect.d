src/client/connect.o: src/client/connect.c \
 /opt/pgh6/usr/include/postgresql/15/server/postgres.h \
 /opt/pgh6/usr/include/postgresql/15/server/c.h \
 /opt/pgh6/usr/include/postgresql/15/server/postgres_ext.h \
 /opt/pgh6/usr/include/postgresql/15/server/pg_config_ext.h \
 /opt/pgh6/usr/include/postgresql/15/server/pg_config.h \
 /opt/pgh6/usr/include/postgresql/15/server/pg_config_manual.h \
 /opt/pgh6/usr/include/postgresql/15/server/pg_config_os.h \
 /opt/pgh6/usr/include/postgresql/15/server/port.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/elog.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/errcodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h \
 /opt/pgh6/usr/include/postgresql/15/server/miscadmin.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/fd.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/ipc.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 src/client/jobs.h src/client/request.h src/client/wait.h \
 src/client/session.h src/client/bridge.h src/client/client.h \
 src/common/clock.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 src/client/credentials.h src/common/operation_context.h \
 src/common/stats.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 src/common/vocabulary.h
/opt/pgh6/usr/include/postgresql/15/server/postgres.h:
/opt/pgh6/usr/include/postgresql/15/server/c.h:
/opt/pgh6/usr/include/postgresql/15/server/postgres_ext.h:
/opt/pgh6/usr/include/postgresql/15/server/pg_config_ext.h:
/opt/pgh6/usr/include/postgresql/15/server/pg_config.h:
/opt/pgh6/usr/include/postgresql/15/server/pg_config_manual.h:
/opt/pgh6/usr/include/postgresql/15/server/pg_config_os.h:
/opt/pgh6/usr/include/postgresql/15/server/port.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/elog.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/errcodes.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h:
/opt/pgh6/usr/include/postgresql/15/server/miscadmin.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/fd.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/ipc.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
src/client/jobs.h:
src/client/request.h:
src/client/wait.h:
src/client/session.h:
src/client/bridge.h:
src/client/client.h:
src/common/clock.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
src/client/credentials.h:
src/common/operation_context.h:
src/common/stats.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
src/common/vocabulary.h:
