/* sql/zklock--1.0--1.1.sql: version 1.1 adds atomic multi-locks,
 * counting semaphores and cluster-wide inspection. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.1'" to load this file. \quit

-- Atomic multi-locks: every queue node of the set in one ZooKeeper
-- transaction.

CREATE FUNCTION zk_lock(paths text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_lock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock(text[]) IS
'exclusive locks on every path of the array, taken at once (one ZooKeeper transaction) and held until released; returns the set''s fencing token';

CREATE FUNCTION zk_rlock(paths text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_rlock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_rlock(text[]) IS
'shared locks on every path of the array, taken at once (one ZooKeeper transaction) and held until released; returns the set''s fencing token';

CREATE FUNCTION zk_try_lock(paths text[], wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_lock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_lock(text[], int) IS
'exclusive locks on every path of the array if all can be had within wait_ms ms; otherwise false, leaving nothing behind';

CREATE FUNCTION zk_try_rlock(paths text[], wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_rlock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_rlock(text[], int) IS
'shared locks on every path of the array if all can be had within wait_ms ms; otherwise false, leaving nothing behind';

CREATE FUNCTION zk_xact_lock(paths text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_xact_lock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_xact_lock(text[]) IS
'exclusive locks on every path of the array, taken at once, released at the end of the transaction; returns the set''s fencing token';

CREATE FUNCTION zk_xact_rlock(paths text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_xact_rlock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_xact_rlock(text[]) IS
'shared locks on every path of the array, taken at once, released at the end of the transaction; returns the set''s fencing token';

CREATE FUNCTION zk_try_xact_lock(paths text[], wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_xact_lock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_xact_lock(text[], int) IS
'transaction-scoped exclusive locks on every path of the array if all can be had within wait_ms ms; otherwise false, leaving nothing behind';

CREATE FUNCTION zk_try_xact_rlock(paths text[], wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_xact_rlock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_xact_rlock(text[], int) IS
'transaction-scoped shared locks on every path of the array if all can be had within wait_ms ms; otherwise false, leaving nothing behind';

CREATE FUNCTION zk_unlock(paths text[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_unlock_array'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_unlock(text[]) IS
'releases one session hold on each path of the array, in one round trip; false and a warning if any was not held';

-- Counting semaphores, laid out like Curator's InterProcessSemaphoreV2.

CREATE FUNCTION zk_semaphore_acquire(path text, max_leases int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_semaphore_acquire'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_semaphore_acquire(text, int) IS
'takes one lease of the semaphore at path, which admits max_leases holders cluster-wide; waits as long as needed; held until released; returns the fencing token of the lease';

CREATE FUNCTION zk_try_semaphore_acquire(path text, max_leases int, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_semaphore_acquire'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_semaphore_acquire(text, int, int) IS
'takes one lease of the semaphore at path if one is free within wait_ms ms; otherwise false, leaving nothing behind';

CREATE FUNCTION zk_xact_semaphore_acquire(path text, max_leases int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_xact_semaphore_acquire'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_xact_semaphore_acquire(text, int) IS
'takes one lease of the semaphore at path until the end of the transaction; waits as long as needed; returns the fencing token of the lease';

CREATE FUNCTION zk_try_xact_semaphore_acquire(path text, max_leases int, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_xact_semaphore_acquire'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_xact_semaphore_acquire(text, int, int) IS
'takes one lease of the semaphore at path until the end of the transaction if one is free within wait_ms ms; otherwise false';

CREATE FUNCTION zk_semaphore_release(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_semaphore_release'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_semaphore_release(text) IS
'releases one session hold of the lease of the semaphore at path; false and a warning if none is held';

-- Cluster-wide inspection.

CREATE FUNCTION zk_cluster_locks(
    prefix text DEFAULT '/',
    OUT path text,
    OUT kind text,
    OUT mode text,
    OUT holders int,
    OUT waiters int,
    OUT oldest_wait_start timestamptz,
    OUT fencing_token bigint,
    OUT created_at timestamptz,
    OUT znode text,
    OUT cluster_name text,
    OUT host text,
    OUT port int,
    OUT pid int,
    OUT database text,
    OUT user_name text,
    OUT application_name text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_cluster_locks'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_cluster_locks(text) IS
'every lock path with a queue under prefix, across the whole ensemble: one row per holder, with the counts of holders and waiters';

CREATE VIEW zk_cluster_locks AS SELECT * FROM zk_cluster_locks();
COMMENT ON VIEW zk_cluster_locks IS
'every lock path with a queue under zklock.root, across the whole ensemble: one row per holder';
GRANT SELECT ON zk_cluster_locks TO PUBLIC;

CREATE FUNCTION zk_blocking_pids(
    pid int,
    OUT path text,
    OUT waiter_znode text,
    OUT blocker_znode text,
    OUT blocker_mode text,
    OUT blocker_granted boolean,
    OUT cluster_name text,
    OUT host text,
    OUT port int,
    OUT blocker_pid int,
    OUT database text,
    OUT user_name text,
    OUT application_name text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_blocking_pids'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_blocking_pids(int) IS
'for a backend of this server waiting for a ZooKeeper lock: the queue nodes, on any server, that block it';

CREATE FUNCTION zk_lock_queue(
    path text,
    max_rows int,
    OUT "position" int,
    OUT znode text,
    OUT mode text,
    OUT granted boolean,
    OUT fencing_token bigint,
    OUT created_at timestamptz,
    OUT cluster_name text,
    OUT host text,
    OUT port int,
    OUT pid int,
    OUT database text,
    OUT user_name text,
    OUT application_name text,
    OUT data text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_lock_queue'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock_queue(text, int) IS
'the first max_rows nodes of the whole cluster''s queue for path, in order, reading node data for those only';
