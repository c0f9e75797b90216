src/sql/discard.o: src/sql/discard.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/nodes/parsenodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/lockoptions.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/primnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/attnum.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/value.h \
 /opt/pgh6/usr/include/postgresql/15/server/partitioning/partdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/utility.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtag.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtaglist.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/tcopprot.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/params.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/plannodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/sdir.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/stratnum.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/procsignal.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/guc.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/dest.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/htup.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/itemptr.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/block.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/off.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/itemid.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/htup_details.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/transam.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupmacs.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_type_d.h \
 /opt/pgh6/usr/include/postgresql/15/server/common/int.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/bufpage.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/item.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/sysattr.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/buf.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/array.h \
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/expandeddatum.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/queryenvironment.h \
 src/sql/discard.h src/holds/holds.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xact.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h \
 /opt/pgh6/usr/include/postgresql/15/server/common/relpath.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h \
 src/client/client.h src/common/clock.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 src/cluster/view.h src/common/vocabulary.h
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
/opt/pgh6/usr/include/postgresql/15/server/nodes/parsenodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/lockoptions.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/primnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/access/attnum.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/value.h:
/opt/pgh6/usr/include/postgresql/15/server/partitioning/partdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/utility.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtag.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtaglist.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/tcopprot.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/params.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/plannodes.h:
/opt/pgh6/usr/include/postgresql/15/server/access/sdir.h:
/opt/pgh6/usr/include/postgresql/15/server/access/stratnum.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/procsignal.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/guc.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/dest.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h:
/opt/pgh6/usr/include/postgresql/15/server/access/htup.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/itemptr.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/block.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/off.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/itemid.h:
/opt/pgh6/usr/include/postgresql/15/server/access/htup_details.h:
/opt/pgh6/usr/include/postgresql/15/server/access/transam.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupmacs.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_type_d.h:
/opt/pgh6/usr/include/postgresql/15/server/common/int.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/bufpage.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/item.h:
/opt/pgh6/usr/include/postgresql/15/server/access/sysattr.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/buf.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/array.h:
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/expandeddatum.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/queryenvironment.h:
src/sql/discard.h:
src/holds/holds.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xact.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h:
/opt/pgh6/usr/include/postgresql/15/server/common/relpath.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h:
src/client/client.h:
src/common/clock.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
src/cluster/view.h:
src/common/vocabulary.h:
