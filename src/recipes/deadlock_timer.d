src/recipes/deadlock_timer.o: src/recipes/deadlock_timer.c \
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
 /usr/include/postgresql/15/server/storage/latch.h \
 /usr/include/postgresql/15/server/storage/proc.h \
 /usr/include/postgresql/15/server/access/clog.h \
 /usr/include/postgresql/15/server/access/xlogreader.h \
 /usr/include/postgresql/15/server/access/transam.h \
 /usr/include/postgresql/15/server/access/xlogdefs.h \
 /usr/include/postgresql/15/server/access/xlogrecord.h \
 /usr/include/postgresql/15/server/access/rmgr.h \
 /usr/include/postgresql/15/server/access/rmgrlist.h \
 /usr/include/postgresql/15/server/port/pg_crc32c.h \
 /usr/include/postgresql/15/server/port/pg_bswap.h \
 /usr/include/postgresql/15/server/storage/block.h \
 /usr/include/postgresql/15/server/storage/relfilenode.h \
 /usr/include/postgresql/15/server/common/relpath.h \
 /usr/include/postgresql/15/server/catalog/catversion.h \
 /usr/include/postgresql/15/server/storage/backendid.h \
 /usr/include/postgresql/15/server/storage/buf.h \
 /usr/include/postgresql/15/server/storage/sync.h \
 /usr/include/postgresql/15/server/lib/stringinfo.h \
 /usr/include/postgresql/15/server/lib/ilist.h \
 /usr/include/postgresql/15/server/storage/lock.h \
 /usr/include/postgresql/15/server/storage/lockdefs.h \
 /usr/include/postgresql/15/server/storage/lwlock.h \
 /usr/include/postgresql/15/server/port/atomics.h \
 /usr/include/postgresql/15/server/port/atomics/arch-x86.h \
 /usr/include/postgresql/15/server/port/atomics/generic-gcc.h \
 /usr/include/postgresql/15/server/port/atomics/fallback.h \
 /usr/include/postgresql/15/server/port/atomics/generic.h \
 /usr/include/postgresql/15/server/storage/proclist_types.h \
 /usr/include/postgresql/15/server/storage/lwlocknames.h \
 /usr/include/postgresql/15/server/storage/shmem.h \
 /usr/include/postgresql/15/server/utils/hsearch.h \
 /usr/include/postgresql/15/server/utils/timestamp.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/fmgr.h \
 /usr/include/postgresql/15/server/pgtime.h \
 /usr/include/postgresql/15/server/storage/pg_sema.h \
 /usr/include/postgresql/15/server/utils/timeout.h \
 src/recipes/deadlock_timer.h src/client/client.h src/common/clock.h
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
/usr/include/postgresql/15/server/storage/latch.h:
/usr/include/postgresql/15/server/storage/proc.h:
/usr/include/postgresql/15/server/access/clog.h:
/usr/include/postgresql/15/server/access/xlogreader.h:
/usr/include/postgresql/15/server/access/transam.h:
/usr/include/postgresql/15/server/access/xlogdefs.h:
/usr/include/postgresql/15/server/access/xlogrecord.h:
/usr/include/postgresql/15/server/access/rmgr.h:
/usr/include/postgresql/15/server/access/rmgrlist.h:
/usr/include/postgresql/15/server/port/pg_crc32c.h:
/usr/include/postgresql/15/server/port/pg_bswap.h:
/usr/include/postgresql/15/server/storage/block.h:
/usr/include/postgresql/15/server/storage/relfilenode.h:
/usr/include/postgresql/15/server/common/relpath.h:
/usr/include/postgresql/15/server/catalog/catversion.h:
/usr/include/postgresql/15/server/storage/backendid.h:
/usr/include/postgresql/15/server/storage/buf.h:
/usr/include/postgresql/15/server/storage/sync.h:
/usr/include/postgresql/15/server/lib/stringinfo.h:
/usr/include/postgresql/15/server/lib/ilist.h:
/usr/include/postgresql/15/server/storage/lock.h:
/usr/include/postgresql/15/server/storage/lockdefs.h:
/usr/include/postgresql/15/server/storage/lwlock.h:
/usr/include/postgresql/15/server/port/atomics.h:
/usr/include/postgresql/15/server/port/atomics/arch-x86.h:
/usr/include/postgresql/15/server/port/atomics/generic-gcc.h:
/usr/include/postgresql/15/server/port/atomics/fallback.h:
/usr/include/postgresql/15/server/port/atomics/generic.h:
/usr/include/postgresql/15/server/storage/proclist_types.h:
/usr/include/postgresql/15/server/storage/lwlocknames.h:
/usr/include/postgresql/15/server/storage/shmem.h:
/usr/include/postgresql/15/server/utils/hsearch.h:
/usr/include/postgresql/15/server/utils/timestamp.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/fmgr.h:
/usr/include/postgresql/15/server/pgtime.h:
/usr/include/postgresql/15/server/storage/pg_sema.h:
/usr/include/postgresql/15/server/utils/timeout.h:
src/recipes/deadlock_timer.h:
src/client/client.h:
src/common/clock.h:
