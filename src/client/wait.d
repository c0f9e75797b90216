src/client/wait.o: src/client/wait.c \
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
 /usr/include/postgresql/15/server/pgstat.h \
 /usr/include/postgresql/15/server/portability/instr_time.h \
 /usr/include/postgresql/15/server/postmaster/pgarch.h \
 /usr/include/postgresql/15/server/utils/backend_progress.h \
 /usr/include/postgresql/15/server/utils/backend_status.h \
 /usr/include/postgresql/15/server/datatype/timestamp.h \
 /usr/include/postgresql/15/server/libpq/pqcomm.h \
 /usr/include/postgresql/15/server/utils/backend_progress.h \
 /usr/include/postgresql/15/server/utils/relcache.h \
 /usr/include/postgresql/15/server/access/tupdesc.h \
 /usr/include/postgresql/15/server/access/attnum.h \
 /usr/include/postgresql/15/server/access/xlogdefs.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /usr/include/postgresql/15/server/catalog/genbki.h \
 /usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /usr/include/postgresql/15/server/nodes/pg_list.h \
 /usr/include/postgresql/15/server/nodes/nodes.h \
 /usr/include/postgresql/15/server/nodes/bitmapset.h \
 /usr/include/postgresql/15/server/utils/wait_event.h \
 /usr/include/postgresql/15/server/storage/latch.h src/client/bridge.h \
 src/client/client.h src/common/clock.h \
 /usr/include/postgresql/15/server/lib/ilist.h src/client/session.h \
 src/client/wait.h src/common/vocabulary.h
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
/usr/include/postgresql/15/server/pgstat.h:
/usr/include/postgresql/15/server/portability/instr_time.h:
/usr/include/postgresql/15/server/postmaster/pgarch.h:
/usr/include/postgresql/15/server/utils/backend_progress.h:
/usr/include/postgresql/15/server/utils/backend_status.h:
/usr/include/postgresql/15/server/datatype/timestamp.h:
/usr/include/postgresql/15/server/libpq/pqcomm.h:
/usr/include/postgresql/15/server/utils/backend_progress.h:
/usr/include/postgresql/15/server/utils/relcache.h:
/usr/include/postgresql/15/server/access/tupdesc.h:
/usr/include/postgresql/15/server/access/attnum.h:
/usr/include/postgresql/15/server/access/xlogdefs.h:
/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/usr/include/postgresql/15/server/catalog/genbki.h:
/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/usr/include/postgresql/15/server/nodes/pg_list.h:
/usr/include/postgresql/15/server/nodes/nodes.h:
/usr/include/postgresql/15/server/nodes/bitmapset.h:
/usr/include/postgresql/15/server/utils/wait_event.h:
/usr/include/postgresql/15/server/storage/latch.h:
src/client/bridge.h:
src/client/client.h:
src/common/clock.h:
/usr/include/postgresql/15/server/lib/ilist.h:
src/client/session.h:
src/client/wait.h:
src/common/vocabulary.h:
