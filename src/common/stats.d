src/common/stats.o: src/common/stats.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/ipc.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h src/common/stats.h \
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
/opt/pgh6/usr/include/postgresql/15/server/port/atomics.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/ipc.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
src/common/stats.h:
src/common/vocabulary.h:
