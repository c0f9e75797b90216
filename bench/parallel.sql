-- bench/parallel.sql: the parallel phase (bench/run.sh), pgbench -c 4 on
-- each server (-D s=1 or 2): every client loops lock + unlock on a path of
-- its own
SELECT zk_lock('/bench/par/' || :s || '_' || :client_id);
SELECT zk_unlock('/bench/par/' || :s || '_' || :client_id);
