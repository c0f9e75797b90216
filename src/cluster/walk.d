src/cluster/walk.o: src/cluster/walk.c \
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
 src/cluster/scan.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h \
 src/common/contender.h src/common/vocabulary.h src/client/client.h \
 src/common/clock.h
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
src/cluster/scan.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/palloc.h:
src/common/contender.h:
src/common/vocabulary.h:
src/client/client.h:
src/common/clock.h:
