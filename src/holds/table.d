src/holds/table.o: src/holds/table.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/access/xact.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/transam.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h \
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
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 src/common/contender.h src/common/vocabulary.h src/recipes/attempt.h \
 src/client/client.h src/common/clock.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h \
 src/holds/holds.h src/cluster/view.h src/holds/internal.h \
 src/common/text_encoding.h
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
/opt/pgh6/usr/include/postgresql/15/server/access/xact.h:
/opt/pgh6/usr/include/postgresql/15/server/access/transam.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h:
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
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
src/common/contender.h:
src/common/vocabulary.h:
src/recipes/attempt.h:
src/client/client.h:
src/common/clock.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h:
src/holds/holds.h:
src/cluster/view.h:
src/holds/internal.h:
src/common/text_encoding.h:
