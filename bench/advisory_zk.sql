-- bench/advisory_zk.sql: the uncontended cycle through zklock's own
-- functions, on a path as long as an advisory key's (bench/advisory.sh)
SELECT zk_lock('/pg_advisory/postgres/4242');
SELECT zk_unlock('/pg_advisory/postgres/4242');
