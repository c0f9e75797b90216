src/common/clock.o: src/common/clock.c \
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
src/common/clock.h:
