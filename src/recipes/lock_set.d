src/recipes/lock_set.o: src/recipes/lock_set.c \
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
 /usr/include/postgresql/15/server/miscadmin.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/pgtime.h src/recipes/attempt.h \
 src/client/client.h src/common/clock.h \
 /usr/include/postgresql/15/server/lib/ilist.h src/common/contender.h \
 src/common/vocabulary.h /usr/include/postgresql/15/server/utils/palloc.h \
 src/recipes/lock_set.h src/common/operation_context.h \
 src/recipes/path_memory.h
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
/usr/include/postgresql/15/server/miscadmin.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
src/recipes/attempt.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
src/common/contender.h:
src/common/vocabulary.h:
/usr/include/postgresql/15/server/utils/palloc.h:
src/recipes/lock_set.h:
src/common/operation_context.h:
src/recipes/path_memory.h:
