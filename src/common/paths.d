src/common/paths.o: src/common/paths.c \
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
 /usr/include/postgresql/15/server/mb/pg_wchar.h src/common/contender.h \
 src/common/vocabulary.h src/common/paths.h
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
/usr/include/postgresql/15/server/mb/pg_wchar.h:
src/common/contender.h:
src/common/vocabulary.h:
src/common/paths.h:
