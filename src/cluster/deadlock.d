src/cluster/deadlock.o: src/cluster/deadlock.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgstat.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h \
 /opt/pgh6/usr/include/postgresql/15/server/postmaster/pgarch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_status.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/libpq/pqcomm.h \
 /opt/pgh6/usr/include/postgresql/15/server/miscadmin.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/attnum.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/wait_event.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h \
 src/cluster/deadlock.h src/common/vocabulary.h \
 src/common/text_encoding.h src/cluster/wait_record.h \
 src/common/node_formats.h src/client/client.h src/common/clock.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h
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
/opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h:
/opt/pgh6/usr/include/postgresql/15/server/pgstat.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h:
/opt/pgh6/usr/include/postgresql/15/server/postmaster/pgarch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_status.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/libpq/pqcomm.h:
/opt/pgh6/usr/include/postgresql/15/server/miscadmin.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h:
/opt/pgh6/usr/include/postgresql/15/server/access/attnum.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/wait_event.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h:
src/cluster/deadlock.h:
src/common/vocabulary.h:
src/common/text_encoding.h:
src/cluster/wait_record.h:
src/common/node_formats.h:
src/client/client.h:
src/common/clock.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
