src/recipes/deadlock_timer.o: src/recipes/deadlock_timer.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/storage/latch.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/proc.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/clog.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/transam.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/block.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h \
 /opt/pgh6/usr/include/postgresql/15/server/common/relpath.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/buf.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sync.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lock.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lockdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/pg_sema.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/timeout.h \
 src/recipes/deadlock_timer.h src/client/client.h src/common/clock.h
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
/opt/pgh6/usr/include/postgresql/15/server/storage/latch.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/proc.h:
/opt/pgh6/usr/include/postgresql/15/server/access/clog.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h:
/opt/pgh6/usr/include/postgresql/15/server/access/transam.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/block.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h:
/opt/pgh6/usr/include/postgresql/15/server/common/relpath.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/buf.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sync.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lock.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lockdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/pg_sema.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/timeout.h:
src/recipes/deadlock_timer.h:
src/client/client.h:
src/common/clock.h:
