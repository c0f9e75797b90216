src/recipes/path_memory.o: src/recipes/path_memory.c \
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
 /usr/include/postgresql/15/server/common/hashfn.h \
 /usr/include/postgresql/15/server/utils/hsearch.h \
 /usr/include/postgresql/15/server/utils/memutils.h \
 /usr/include/postgresql/15/server/nodes/memnodes.h \
 /usr/include/postgresql/15/server/nodes/nodes.h \
 src/recipes/path_memory.h src/common/vocabulary.h
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
/usr/include/postgresql/15/server/common/hashfn.h:
/usr/include/postgresql/15/server/utils/hsearch.h:
/usr/include/postgresql/15/server/utils/memutils.h:
/usr/include/postgresql/15/server/nodes/memnodes.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
src/recipes/path_memory.h:
src/common/vocabulary.h:
