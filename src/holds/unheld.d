src/holds/unheld.o: src/holds/unheld.c \
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
 /usr/include/postgresql/15/server/utils/palloc.h src/recipes/barrier.h \
 src/common/vocabulary.h src/cluster/view.h src/recipes/lease.h \
 src/recipes/attempt.h src/client/client.h src/common/clock.h \
 /usr/include/postgresql/15/server/lib/ilist.h src/common/contender.h \
 /usr/include/postgresql/15/server/utils/palloc.h src/holds/holds.h \
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
 /usr/include/postgresql/15/server/storage/sinval.h src/holds/internal.h \
 /usr/include/postgresql/15/server/utils/hsearch.h \
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
src/recipes/barrier.h:
src/common/vocabulary.h:
src/cluster/view.h:
src/recipes/lease.h:
src/recipes/attempt.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
src/common/contender.h:
/usr/include/postgresql/15/server/utils/palloc.h:
src/holds/holds.h:
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
src/holds/internal.h:
/usr/include/postgresql/15/server/utils/hsearch.h:
src/common/text_encoding.h:
