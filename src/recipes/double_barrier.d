src/recipes/double_barrier.o: src/recipes/double_barrier.c \
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
 /usr/include/postgresql/15/server/lib/stringinfo.h \
 /usr/include/postgresql/15/server/nodes/pg_list.h \
 /usr/include/postgresql/15/server/nodes/nodes.h \
 /usr/include/postgresql/15/server/nodes/value.h \
 /usr/include/postgresql/15/server/miscadmin.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/pgtime.h \
 /usr/include/postgresql/15/server/utils/json.h src/recipes/barrier.h \
 src/common/vocabulary.h src/common/contender.h src/recipes/attempt.h \
 src/client/client.h src/common/clock.h \
 /usr/include/postgresql/15/server/lib/ilist.h \
 /usr/include/postgresql/15/server/utils/palloc.h src/common/node_data.h \
 src/common/node_formats.h src/common/operation_context.h \
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
/usr/include/postgresql/15/server/lib/stringinfo.h:
/usr/include/postgresql/15/server/nodes/pg_list.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
/usr/include/postgresql/15/server/nodes/value.h:
/usr/include/postgresql/15/server/miscadmin.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
/usr/include/postgresql/15/server/utils/json.h:
src/recipes/barrier.h:
src/common/vocabulary.h:
src/common/contender.h:
src/recipes/attempt.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
/usr/include/postgresql/15/server/utils/palloc.h:
src/common/node_data.h:
src/common/node_formats.h:
src/common/operation_context.h:
src/common/text_encoding.h:
