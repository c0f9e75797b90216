-- bench/advisory_pg.sql: the same cycle as PostgreSQL's advisory-lock
-- functions, resolved to zk_advisory by the role's search_path
-- (bench/advisory.sh)
SELECT pg_advisory_lock(4242);
SELECT pg_advisory_unlock(4242);
