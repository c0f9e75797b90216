src/sql/functions.o: src/sql/functions.c \
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
 /usr/include/postgresql/15/server/catalog/pg_type.h \
 /usr/include/postgresql/15/server/catalog/genbki.h \
 /usr/include/postgresql/15/server/catalog/objectaddress.h \
 /usr/include/postgresql/15/server/access/htup.h \
 /usr/include/postgresql/15/server/storage/itemptr.h \
 /usr/include/postgresql/15/server/storage/block.h \
 /usr/include/postgresql/15/server/storage/off.h \
 /usr/include/postgresql/15/server/storage/itemid.h \
 /usr/include/postgresql/15/server/nodes/parsenodes.h \
 /usr/include/postgresql/15/server/nodes/bitmapset.h \
 /usr/include/postgresql/15/server/nodes/lockoptions.h \
 /usr/include/postgresql/15/server/nodes/primnodes.h \
 /usr/include/postgresql/15/server/access/attnum.h \
 /usr/include/postgresql/15/server/nodes/pg_list.h \
 /usr/include/postgresql/15/server/nodes/nodes.h \
 /usr/include/postgresql/15/server/nodes/value.h \
 /usr/include/postgresql/15/server/partitioning/partdefs.h \
 /usr/include/postgresql/15/server/storage/lockdefs.h \
 /usr/include/postgresql/15/server/utils/relcache.h \
 /usr/include/postgresql/15/server/access/tupdesc.h \
 /usr/include/postgresql/15/server/access/xlogdefs.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /usr/include/postgresql/15/server/catalog/pg_type_d.h \
 /usr/include/postgresql/15/server/common/int.h \
 /usr/include/postgresql/15/server/fmgr.h \
 /usr/include/postgresql/15/server/utils/array.h \
 /usr/include/postgresql/15/server/utils/expandeddatum.h \
 /usr/include/postgresql/15/server/utils/builtins.h \
 /usr/include/postgresql/15/server/utils/fmgrprotos.h \
 /usr/include/postgresql/15/server/utils/lsyscache.h \
 /usr/include/postgresql/15/server/utils/timestamp.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/pgtime.h src/common/paths.h \
 src/holds/holds.h /usr/include/postgresql/15/server/access/xact.h \
 /usr/include/postgresql/15/server/access/transam.h \
 /usr/include/postgresql/15/server/access/xlogreader.h \
 /usr/include/postgresql/15/server/access/xlogrecord.h \
 /usr/include/postgresql/15/server/access/rmgr.h \
 /usr/include/postgresql/15/server/access/rmgrlist.h \
 /usr/include/postgresql/15/server/port/pg_crc32c.h \
 /usr/include/postgresql/15/server/port/pg_bswap.h \
 /usr/include/postgresql/15/server/storage/relfilenode.h \
 /usr/include/postgresql/15/server/common/relpath.h \
 /usr/include/postgresql/15/server/catalog/catversion.h \
 /usr/include/postgresql/15/server/storage/backendid.h \
 /usr/include/postgresql/15/server/storage/buf.h \
 /usr/include/postgresql/15/server/lib/stringinfo.h \
 /usr/include/postgresql/15/server/storage/sinval.h src/client/client.h \
 src/common/clock.h /usr/include/postgresql/15/server/lib/ilist.h \
 src/cluster/view.h src/common/vocabulary.h src/sql/arguments.h
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
/usr/include/postgresql/15/server/catalog/pg_type.h:
/usr/include/postgresql/15/server/catalog/genbki.h:
/usr/include/postgresql/15/server/catalog/objectaddress.h:
/usr/include/postgresql/15/server/access/htup.h:
/usr/include/postgresql/15/server/storage/itemptr.h:
/usr/include/postgresql/15/server/storage/block.h:
/usr/include/postgresql/15/server/storage/off.h:
/usr/include/postgresql/15/server/storage/itemid.h:
/usr/include/postgresql/15/server/nodes/parsenodes.h:
/usr/include/postgresql/15/server/nodes/bitmapset.h:
/usr/include/postgresql/15/server/nodes/lockoptions.h:
/usr/include/postgresql/15/server/nodes/primnodes.h:
/usr/include/postgresql/15/server/access/attnum.h:
/usr/include/postgresql/15/server/nodes/pg_list.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
/usr/include/postgresql/15/server/nodes/value.h:
/usr/include/postgresql/15/server/partitioning/partdefs.h:
/usr/include/postgresql/15/server/storage/lockdefs.h:
/usr/include/postgresql/15/server/utils/relcache.h:
/usr/include/postgresql/15/server/access/tupdesc.h:
/usr/include/postgresql/15/server/access/xlogdefs.h:
/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/usr/include/postgresql/15/server/catalog/pg_type_d.h:
/usr/include/postgresql/15/server/common/int.h:
/usr/include/postgresql/15/server/fmgr.h:
/usr/include/postgresql/15/server/utils/array.h:
/usr/include/postgresql/15/server/utils/expandeddatum.h:
/usr/include/postgresql/15/server/utils/builtins.h:
/usr/include/postgresql/15/server/utils/fmgrprotos.h:
/usr/include/postgresql/15/server/utils/lsyscache.h:
/usr/include/postgresql/15/server/utils/timestamp.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
src/common/paths.h:
src/holds/holds.h:
/usr/include/postgresql/15/server/access/xact.h:
/usr/include/postgresql/15/server/access/transam.h:
/usr/include/postgresql/15/server/access/xlogreader.h:
/usr/include/postgresql/15/server/access/xlogrecord.h:
/usr/include/postgresql/15/server/access/rmgr.h:
/usr/include/postgresql/15/server/access/rmgrlist.h:
/usr/include/postgresql/15/server/port/pg_crc32c.h:
/usr/include/postgresql/15/server/port/pg_bswap.h:
/usr/include/postgresql/15/server/storage/relfilenode.h:
/usr/include/postgresql/15/server/common/relpath.h:
/usr/include/postgresql/15/server/catalog/catversion.h:
/usr/include/postgresql/15/server/storage/backendid.h:
/usr/include/postgresql/15/server/storage/buf.h:
/usr/include/postgresql/15/server/lib/stringinfo.h:
/usr/include/postgresql/15/server/storage/sinval.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
src/cluster/view.h:
src/common/vocabulary.h:
src/sql/arguments.h:
