src/common/text_encoding.o: src/common/text_encoding.c \
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
 /usr/include/postgresql/15/server/access/xact.h \
 /usr/include/postgresql/15/server/access/transam.h \
 /usr/include/postgresql/15/server/access/xlogdefs.h \
 /usr/include/postgresql/15/server/access/xlogreader.h \
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
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/lib/stringinfo.h \
 /usr/include/postgresql/15/server/nodes/pg_list.h \
 /usr/include/postgresql/15/server/nodes/nodes.h \
 /usr/include/postgresql/15/server/storage/sinval.h \
 /usr/include/postgresql/15/server/catalog/namespace.h \
 /usr/include/postgresql/15/server/nodes/primnodes.h \
 /usr/include/postgresql/15/server/access/attnum.h \
 /usr/include/postgresql/15/server/nodes/bitmapset.h \
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
 /usr/include/postgresql/15/server/fmgr.h \
 /usr/include/postgresql/15/server/pgtime.h \
 /usr/include/postgresql/15/server/mb/pg_wchar.h \
 /usr/include/postgresql/15/server/utils/memutils.h \
 /usr/include/postgresql/15/server/nodes/memnodes.h \
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
/usr/include/postgresql/15/server/access/xact.h:
/usr/include/postgresql/15/server/access/transam.h:
/usr/include/postgresql/15/server/access/xlogdefs.h:
/usr/include/postgresql/15/server/access/xlogreader.h:
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
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/lib/stringinfo.h:
/usr/include/postgresql/15/server/nodes/pg_list.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
/usr/include/postgresql/15/server/storage/sinval.h:
/usr/include/postgresql/15/server/catalog/namespace.h:
/usr/include/postgresql/15/server/nodes/primnodes.h:
/usr/include/postgresql/15/server/access/attnum.h:
/usr/include/postgresql/15/server/nodes/bitmapset.h:
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
/usr/include/postgresql/15/server/fmgr.h:
/usr/include/postgresql/15/server/pgtime.h:
/usr/include/postgresql/15/server/mb/pg_wchar.h:
/usr/include/postgresql/15/server/utils/memutils.h:
/usr/include/postgresql/15/server/nodes/memnodes.h:
src/common/text_encoding.h:
