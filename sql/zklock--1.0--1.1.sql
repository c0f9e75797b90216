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
