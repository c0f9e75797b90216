src/sql/views.o: src/sql/views.c \
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
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/funcapi.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/attnum.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/executor.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/execdesc.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/execnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupconvert.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/attmap.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/htup.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/itemptr.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/block.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/off.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/itemid.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/htup_details.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/transam.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/tupmacs.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/pg_type_d.h \
 /opt/pgh6/usr/include/postgresql/15/server/common/int.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/bufpage.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/item.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/sysattr.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/buf.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/instrument.h \
 /opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/pairingheap.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/params.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/plannodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/sdir.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/stratnum.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/lockoptions.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/parsenodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/primnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/value.h \
 /opt/pgh6/usr/include/postgresql/15/server/partitioning/partdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/tidbitmap.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/dsa.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/dsm.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/dsm_impl.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/condition_variable.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/spin.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/s_lock.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/queryenvironment.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/reltrigger.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/sharedtuplestore.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/fd.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sharedfileset.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/fileset.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/snapshot.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/sortsupport.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/tuplesort.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/itup.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/tuplestore.h \
 /opt/pgh6/usr/include/postgresql/15/server/lib/simplehash.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_bitutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/dest.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtag.h \
 /opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtaglist.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h \
 /opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h \
 /opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h \
 /opt/pgh6/usr/include/postgresql/15/server/fmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/miscadmin.h \
 /opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgstat.h \
 /opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h \
 /opt/pgh6/usr/include/postgresql/15/server/postmaster/pgarch.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_status.h \
 /opt/pgh6/usr/include/postgresql/15/server/libpq/pqcomm.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/wait_event.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/proc.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/clog.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h \
 /opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h \
 /opt/pgh6/usr/include/postgresql/15/server/common/relpath.h \
 /opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sync.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/latch.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lock.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lockdefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h \
 /opt/pgh6/usr/include/postgresql/15/server/pgtime.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/pg_sema.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/procarray.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/standby.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/procsignal.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/standbydefs.h \
 /opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/builtins.h \
 /opt/pgh6/usr/include/postgresql/15/server/utils/fmgrprotos.h \
 src/common/paths.h src/holds/holds.h \
 /opt/pgh6/usr/include/postgresql/15/server/access/xact.h \
 src/client/client.h src/common/clock.h src/cluster/view.h \
 src/common/vocabulary.h src/common/node_data.h src/common/node_formats.h \
 src/sql/arguments.h src/common/text_encoding.h
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
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/funcapi.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h:
/opt/pgh6/usr/include/postgresql/15/server/access/attnum.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/genbki.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_attribute_d.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/pg_list.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/nodes.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/executor.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/execdesc.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/execnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupconvert.h:
/opt/pgh6/usr/include/postgresql/15/server/access/attmap.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupdesc.h:
/opt/pgh6/usr/include/postgresql/15/server/access/htup.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/itemptr.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/block.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/off.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/itemid.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h:
/opt/pgh6/usr/include/postgresql/15/server/access/htup_details.h:
/opt/pgh6/usr/include/postgresql/15/server/access/transam.h:
/opt/pgh6/usr/include/postgresql/15/server/access/tupmacs.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/pg_type_d.h:
/opt/pgh6/usr/include/postgresql/15/server/common/int.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/bufpage.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/item.h:
/opt/pgh6/usr/include/postgresql/15/server/access/sysattr.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/buf.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/bitmapset.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/instrument.h:
/opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/ilist.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/pairingheap.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/stringinfo.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/params.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/plannodes.h:
/opt/pgh6/usr/include/postgresql/15/server/access/sdir.h:
/opt/pgh6/usr/include/postgresql/15/server/access/stratnum.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/lockoptions.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/parsenodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/primnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/value.h:
/opt/pgh6/usr/include/postgresql/15/server/partitioning/partdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/tidbitmap.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/dsa.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/arch-x86.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic-gcc.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/fallback.h:
/opt/pgh6/usr/include/postgresql/15/server/port/atomics/generic.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/dsm.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/dsm_impl.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/condition_variable.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/proclist_types.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/spin.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/s_lock.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/hsearch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/queryenvironment.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/reltrigger.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/sharedtuplestore.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/fd.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sharedfileset.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/fileset.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/snapshot.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/sortsupport.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/tuplesort.h:
/opt/pgh6/usr/include/postgresql/15/server/access/itup.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/tuplestore.h:
/opt/pgh6/usr/include/postgresql/15/server/lib/simplehash.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_bitutils.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/dest.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtag.h:
/opt/pgh6/usr/include/postgresql/15/server/tcop/cmdtaglist.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/memutils.h:
/opt/pgh6/usr/include/postgresql/15/server/nodes/memnodes.h:
/opt/pgh6/usr/include/postgresql/15/server/executor/tuptable.h:
/opt/pgh6/usr/include/postgresql/15/server/fmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/miscadmin.h:
/opt/pgh6/usr/include/postgresql/15/server/datatype/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
/opt/pgh6/usr/include/postgresql/15/server/pgstat.h:
/opt/pgh6/usr/include/postgresql/15/server/portability/instr_time.h:
/opt/pgh6/usr/include/postgresql/15/server/postmaster/pgarch.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_status.h:
/opt/pgh6/usr/include/postgresql/15/server/libpq/pqcomm.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/backend_progress.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/relcache.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/wait_event.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/proc.h:
/opt/pgh6/usr/include/postgresql/15/server/access/clog.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogreader.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xlogrecord.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgr.h:
/opt/pgh6/usr/include/postgresql/15/server/access/rmgrlist.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_crc32c.h:
/opt/pgh6/usr/include/postgresql/15/server/port/pg_bswap.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/relfilenode.h:
/opt/pgh6/usr/include/postgresql/15/server/common/relpath.h:
/opt/pgh6/usr/include/postgresql/15/server/catalog/catversion.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/backendid.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sync.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/latch.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lock.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lockdefs.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlock.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/lwlocknames.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/shmem.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/timestamp.h:
/opt/pgh6/usr/include/postgresql/15/server/pgtime.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/pg_sema.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/procarray.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/standby.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/procsignal.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/standbydefs.h:
/opt/pgh6/usr/include/postgresql/15/server/storage/sinval.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/builtins.h:
/opt/pgh6/usr/include/postgresql/15/server/utils/fmgrprotos.h:
src/common/paths.h:
src/holds/holds.h:
/opt/pgh6/usr/include/postgresql/15/server/access/xact.h:
src/client/client.h:
src/common/clock.h:
src/cluster/view.h:
src/common/vocabulary.h:
src/common/node_data.h:
src/common/node_formats.h:
src/sql/arguments.h:
src/common/text_encoding.h:
