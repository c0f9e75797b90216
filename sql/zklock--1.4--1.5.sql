/* sql/zklock--1.4--1.5.sql: version 1.5 adds revocation.
 *
 * zk_revoke(path, force) asks the holders of a lock path to release it, by
 * Curator's protocol (the marker "__REVOKE__" written into each holder's
 * node), or with force takes the lock from them (their nodes deleted).
 * It acts on other servers and other clients, so it is not executable by
 * PUBLIC: a superuser grants it.  zk_revoke_requested(path) tells a holder
 * whether it was asked; zk_locks shows the same in revoke_requested, and
 * zk_stat counts the holders this server's zk_revoke asked or took.
 * The semaphore functions' comments say permit, not lease.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.5'" to load this file. \quit

CREATE FUNCTION zk_revoke(path text, force boolean DEFAULT false)
RETURNS integer
AS 'MODULE_PATHNAME', 'zk_revoke'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_revoke(text, boolean) IS
'ask every holder of path to release it (Curator''s revocation marker in its node), or with force delete their nodes; returns how many holders';
REVOKE EXECUTE ON FUNCTION zk_revoke(text, boolean) FROM PUBLIC;

CREATE FUNCTION zk_revoke_requested(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_revoke_requested'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_revoke_requested(text) IS
'whether a revocation was asked of this backend''s hold on path (zk_revoke, or Curator''s Revoker)';

-- zk_locks gains revoke_requested, zk_stat revocations: made again.
DROP VIEW zk_locks;
DROP FUNCTION zk_locks();
CREATE FUNCTION zk_locks(
    OUT path text,
    OUT mode text,
    OUT scope text,
    OUT hold_count int,
    OUT znode text,
    OUT fencing_token bigint,
    OUT acquired_at timestamptz,
    OUT waited interval,
    OUT revoke_requested boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_locks'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_locks() IS
'the ZooKeeper locks held by this backend, one row per path, mode and scope';
CREATE VIEW zk_locks AS SELECT * FROM zk_locks();
COMMENT ON VIEW zk_locks IS
'the ZooKeeper locks held by this backend, one row per path, mode and scope';
GRANT SELECT ON zk_locks TO PUBLIC;

DROP VIEW zk_stat;
DROP FUNCTION zk_stat();
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
    OUT revocations bigint,
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

-- A semaphore's holders hold permits ("lease" means a TTL lease only).
COMMENT ON FUNCTION zk_semaphore_acquire(text, int) IS
'takes one permit of the semaphore at path, which admits max_leases holders cluster-wide; waits as long as needed; held until released; returns the fencing token of the permit';
COMMENT ON FUNCTION zk_try_semaphore_acquire(text, int, int) IS
'takes one permit of the semaphore at path if one is free within wait_ms ms; otherwise false, leaving nothing behind';
COMMENT ON FUNCTION zk_xact_semaphore_acquire(text, int) IS
'takes one permit of the semaphore at path until the end of the transaction; waits as long as needed; returns the fencing token of the permit';
COMMENT ON FUNCTION zk_try_xact_semaphore_acquire(text, int, int) IS
'takes one permit of the semaphore at path until the end of the transaction if one is free within wait_ms ms; otherwise false';
COMMENT ON FUNCTION zk_semaphore_release(text) IS
'releases one session hold of a permit of the semaphore at path; false and a warning if none is held';
