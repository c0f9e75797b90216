/* sql/zklock--1.2--1.3.sql: version 1.3 adds the server's cumulative
 * statistics (with zklock in shared_preload_libraries), in the style of
 * pg_stat_database. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.3'" to load this file. \quit

CREATE FUNCTION zk_stat(
    OUT acquired bigint,
    OUT refused bigint,
    OUT waits bigint,
    OUT wait_time double precision,
    OUT timeouts bigint,
    OUT canceled bigint,
    OUT deadlocks bigint,
    OUT failed bigint,
    OUT sessions_opened bigint,
    OUT sessions_expired bigint,
    OUT locks_lost bigint,
    OUT requests bigint,
    OUT request_time double precision,
    OUT releases_pending bigint,
    OUT releases_failed bigint,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'zk_stat'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION zk_stat() IS
'this server''s cumulative zklock statistics since stats_reset (needs zklock in shared_preload_libraries); times in milliseconds';

CREATE VIEW zk_stat AS SELECT * FROM zk_stat();
COMMENT ON VIEW zk_stat IS
'this server''s cumulative zklock statistics: one row';
GRANT SELECT ON zk_stat TO PUBLIC;

CREATE FUNCTION zk_stat_acquisitions(
    OUT kind text,
    OUT mode text,
    OUT scope text,
    OUT acquired bigint,
    OUT refused bigint,
    OUT waits bigint,
    OUT wait_time double precision,
    OUT timeouts bigint,
    OUT canceled bigint,
    OUT deadlocks bigint,
    OUT failed bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_stat_acquisitions'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION zk_stat_acquisitions() IS
'this server''s cumulative zklock acquisitions by kind, mode and scope, and how they ended; wait_time in milliseconds';

CREATE VIEW zk_stat_acquisitions AS SELECT * FROM zk_stat_acquisitions();
COMMENT ON VIEW zk_stat_acquisitions IS
'this server''s cumulative zklock acquisitions by kind, mode and scope';
GRANT SELECT ON zk_stat_acquisitions TO PUBLIC;

CREATE FUNCTION zk_stat_histogram(
    OUT histogram text,
    OUT le double precision,
    OUT count bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_stat_histogram'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION zk_stat_histogram() IS
'histograms of wait times (''wait'') and ZooKeeper request latencies (''request''): for each bucket, its upper bound in milliseconds and the cumulative count, as Prometheus histograms';

CREATE VIEW zk_stat_histogram AS SELECT * FROM zk_stat_histogram();
COMMENT ON VIEW zk_stat_histogram IS
'histograms of zklock wait times and ZooKeeper request latencies, cumulative by upper bound';
GRANT SELECT ON zk_stat_histogram TO PUBLIC;

CREATE FUNCTION zk_stat_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'zk_stat_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION zk_stat_reset() IS
'zeroes this server''s zklock statistics and sets stats_reset';
-- as pg_stat_reset: superusers, and whom they grant it to
REVOKE EXECUTE ON FUNCTION zk_stat_reset() FROM PUBLIC;
