src/cluster/blockers.o: src/cluster/blockers.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h \
 src/cluster/scan.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h \
 src/common/contender.h src/common/vocabulary.h src/client/client.h \
 src/common/clock.h src/cluster/view.h src/common/node_data.h \
 src/common/node_formats.h src/common/operation_context.h
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
/opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h:
src/cluster/scan.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h:
src/common/contender.h:
src/common/vocabulary.h:
src/client/client.h:
src/common/clock.h:
src/cluster/view.h:
src/common/node_data.h:
src/common/node_formats.h:
src/common/operation_context.h:
