src/common/stats.o: src/common/stats.c \
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
 /usr/include/postgresql/15/server/pgtime.h \
 /usr/include/postgresql/15/server/port/atomics.h \
 /usr/include/postgresql/15/server/port/atomics/arch-x86.h \
 /usr/include/postgresql/15/server/port/atomics/generic-gcc.h \
 /usr/include/postgresql/15/server/port/atomics/fallback.h \
 /usr/include/postgresql/15/server/port/atomics/generic.h \
 /usr/include/postgresql/15/server/storage/backendid.h \
 /usr/include/postgresql/15/server/storage/ipc.h \
 /usr/include/postgresql/15/server/storage/lwlock.h \
 /usr/include/postgresql/15/server/storage/proclist_types.h \
 /usr/include/postgresql/15/server/storage/lwlocknames.h \
 /usr/include/postgresql/15/server/storage/shmem.h \
 /usr/include/postgresql/15/server/utils/hsearch.h \
 /usr/include/postgresql/15/server/utils/timestamp.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/fmgr.h \
 /usr/include/postgresql/15/server/pgtime.h src/common/stats.h \
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
/usr/include/postgresql/15/server/miscadmin.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
/usr/include/postgresql/15/server/port/atomics.h:
/usr/include/postgresql/15/server/port/atomics/arch-x86.h:
/usr/include/postgresql/15/server/port/atomics/generic-gcc.h:
/usr/include/postgresql/15/server/port/atomics/fallback.h:
/usr/include/postgresql/15/server/port/atomics/generic.h:
/usr/include/postgresql/15/server/storage/backendid.h:
/usr/include/postgresql/15/server/storage/ipc.h:
/usr/include/postgresql/15/server/storage/lwlock.h:
/usr/include/postgresql/15/server/storage/proclist_types.h:
/usr/include/postgresql/15/server/storage/lwlocknames.h:
/usr/include/postgresql/15/server/storage/shmem.h:
/usr/include/postgresql/15/server/utils/hsearch.h:
/usr/include/postgresql/15/server/utils/timestamp.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/fmgr.h:
/usr/include/postgresql/15/server/pgtime.h:
src/common/stats.h:
src/common/vocabulary.h:
