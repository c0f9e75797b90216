-- bench/contend.sql: the contention phase (bench/run.sh), pgbench -c 4 on
-- each server: every client loops lock + unlock on the one path
SELECT zk_lock('/bench/contend');
SELECT zk_unlock('/bench/contend');
