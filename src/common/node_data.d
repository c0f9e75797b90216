src/common/node_data.o: src/common/node_data.c \
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
 /usr/include/postgresql/15/server/commands/dbcommands.h \
 /usr/include/postgresql/15/server/catalog/objectaddress.h \
 /usr/include/postgresql/15/server/access/htup.h \
 /usr/include/postgresql/15/server/storage/itemptr.h \
 /usr/include/postgresql/15/server/storage/off.h \
 /usr/include/postgresql/15/server/storage/itemid.h \
 /usr/include/postgresql/15/server/nodes/parsenodes.h \
 /usr/include/postgresql/15/server/nodes/bitmapset.h \
 /usr/include/postgresql/15/server/nodes/lockoptions.h \
 /usr/include/postgresql/15/server/nodes/primnodes.h \
 /usr/include/postgresql/15/server/access/attnum.h \
 /usr/include/postgresql/15/server/nodes/value.h \
 /usr/include/postgresql/15/server/partitioning/partdefs.h \
 /usr/include/postgresql/15/server/storage/lockdefs.h \
 /usr/include/postgresql/15/server/utils/relcache.h \
 /usr/include/postgresql/15/server/access/tupdesc.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /usr/include/postgresql/15/server/catalog/genbki.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /usr/include/postgresql/15/server/parser/parse_node.h \
 /usr/include/postgresql/15/server/utils/queryenvironment.h \
 /usr/include/postgresql/15/server/mb/pg_wchar.h \
 /usr/include/postgresql/15/server/miscadmin.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/pgtime.h \
 /usr/include/postgresql/15/server/postmaster/postmaster.h \
 /usr/include/postgresql/15/server/utils/guc.h \
 /usr/include/postgresql/15/server/tcop/dest.h \
 /usr/include/postgresql/15/server/executor/tuptable.h \
 /usr/include/postgresql/15/server/access/htup_details.h \
 /usr/include/postgresql/15/server/access/tupmacs.h \
 /usr/include/postgresql/15/server/catalog/pg_type_d.h \
 /usr/include/postgresql/15/server/common/int.h \
 /usr/include/postgresql/15/server/storage/bufpage.h \
 /usr/include/postgresql/15/server/storage/item.h \
 /usr/include/postgresql/15/server/access/sysattr.h \
 /usr/include/postgresql/15/server/tcop/cmdtag.h \
 /usr/include/postgresql/15/server/tcop/cmdtaglist.h \
 /usr/include/postgresql/15/server/utils/array.h \
 /usr/include/postgresql/15/server/fmgr.h \
 /usr/include/postgresql/15/server/utils/expandeddatum.h \
 /usr/include/postgresql/15/server/utils/json.h \
 /usr/include/postgresql/15/server/utils/memutils.h \
 /usr/include/postgresql/15/server/nodes/memnodes.h \
 src/common/node_data.h src/common/node_formats.h src/common/vocabulary.h \
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
/usr/include/postgresql/15/server/commands/dbcommands.h:
/usr/include/postgresql/15/server/catalog/objectaddress.h:
/usr/include/postgresql/15/server/access/htup.h:
/usr/include/postgresql/15/server/storage/itemptr.h:
/usr/include/postgresql/15/server/storage/off.h:
/usr/include/postgresql/15/server/storage/itemid.h:
/usr/include/postgresql/15/server/nodes/parsenodes.h:
/usr/include/postgresql/15/server/nodes/bitmapset.h:
/usr/include/postgresql/15/server/nodes/lockoptions.h:
/usr/include/postgresql/15/server/nodes/primnodes.h:
/usr/include/postgresql/15/server/access/attnum.h:
/usr/include/postgresql/15/server/nodes/value.h:
/usr/include/postgresql/15/server/partitioning/partdefs.h:
/usr/include/postgresql/15/server/storage/lockdefs.h:
/usr/include/postgresql/15/server/utils/relcache.h:
/usr/include/postgresql/15/server/access/tupdesc.h:
/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/usr/include/postgresql/15/server/catalog/genbki.h:
/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/usr/include/postgresql/15/server/parser/parse_node.h:
/usr/include/postgresql/15/server/utils/queryenvironment.h:
/usr/include/postgresql/15/server/mb/pg_wchar.h:
/usr/include/postgresql/15/server/miscadmin.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/pgtime.h:
/usr/include/postgresql/15/server/postmaster/postmaster.h:
/usr/include/postgresql/15/server/utils/guc.h:
/usr/include/postgresql/15/server/tcop/dest.h:
/usr/include/postgresql/15/server/executor/tuptable.h:
/usr/include/postgresql/15/server/access/htup_details.h:
/usr/include/postgresql/15/server/access/tupmacs.h:
/usr/include/postgresql/15/server/catalog/pg_type_d.h:
/usr/include/postgresql/15/server/common/int.h:
/usr/include/postgresql/15/server/storage/bufpage.h:
/usr/include/postgresql/15/server/storage/item.h:
/usr/include/postgresql/15/server/access/sysattr.h:
/usr/include/postgresql/15/server/tcop/cmdtag.h:
/usr/include/postgresql/15/server/tcop/cmdtaglist.h:
/usr/include/postgresql/15/server/utils/array.h:
/usr/include/postgresql/15/server/fmgr.h:
/usr/include/postgresql/15/server/utils/expandeddatum.h:
/usr/include/postgresql/15/server/utils/json.h:
/usr/include/postgresql/15/server/utils/memutils.h:
/usr/include/postgresql/15/server/nodes/memnodes.h:
src/common/node_data.h:
src/common/node_formats.h:
src/common/vocabulary.h:
src/common/text_encoding.h:
