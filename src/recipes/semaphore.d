src/recipes/semaphore.o: src/recipes/semaphore.c \
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
 /usr/include/postgresql/15/server/mb/pg_wchar.h \
 /usr/include/postgresql/15/server/miscadmin.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/pgtime.h src/common/contender.h \
 src/common/vocabulary.h src/cluster/deadlock.h src/cluster/wait_record.h \
 src/common/node_formats.h src/client/client.h src/common/clock.h \
 /usr/include/postgresql/15/server/lib/ilist.h \
 src/recipes/deadlock_timer.h src/recipes/attempt.h \
 /usr/include/postgresql/15/server/utils/palloc.h src/common/node_data.h \
 src/common/operation_context.h src/recipes/path_memory.h \
 src/recipes/semaphore.h src/common/text_encoding.h
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
/usr/include/postgresql/15/server/mb/pg_wchar.h:
/usr/include/postgresql/15/server/miscadmin.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
src/common/contender.h:
src/common/vocabulary.h:
src/cluster/deadlock.h:
src/cluster/wait_record.h:
src/common/node_formats.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
src/recipes/deadlock_timer.h:
src/recipes/attempt.h:
/usr/include/postgresql/15/server/utils/palloc.h:
src/common/node_data.h:
src/common/operation_context.h:
src/recipes/path_memory.h:
src/recipes/semaphore.h:
src/common/text_encoding.h:
