-- bench/contend.sql: the contention and queue phases (bench/run.sh),
-- pgbench -c N on each server: every client loops lock + unlock on the one
-- path
SELECT zk_lock('/bench/contend');
SELECT zk_unlock('/bench/contend');
