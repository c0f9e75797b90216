/* sql/zklock--1.1--1.2.sql: version 1.2 adds leases (locks held by a
 * ZooKeeper TTL node, which outlive a connection) and shows them in the
 * inspection functions, and barriers and double barriers. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.2'" to load this file. \quit

-- Leases.  Not strict: a NULL argument is an ERROR (22004), since
-- zk_try_lease_lock's NULL result means "not granted".

CREATE FUNCTION zk_lease_lock(path text, ttl interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_lease_lock'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lease_lock(text, interval) IS
'exclusive lock held by a lease until released or until ttl after its grant or last renewal, whatever becomes of this backend; waits as long as needed; returns the fencing token, which names the lease';

CREATE FUNCTION zk_try_lease_lock(path text, ttl interval, wait_ms int DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_try_lease_lock'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_lease_lock(text, interval, int) IS
'a lease on path for ttl if it can be had within wait_ms ms: its fencing token; otherwise NULL, leaving nothing behind';

CREATE FUNCTION zk_lease_renew(path text, token bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'zk_lease_renew'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lease_renew(text, bigint) IS
'renews the lease token on path, from any backend: its ttl runs again from now; returns the new expiry; an error if the lease is gone';

CREATE FUNCTION zk_lease_unlock(path text, token bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_lease_unlock'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lease_unlock(text, bigint) IS
'releases the lease token on path, from any backend; false and a warning if that lease does not hold the lock';

-- The inspection functions show a lease's expiry.  Their result types
-- change, so they (and the view over one) are made again.

DROP VIEW zk_cluster_locks;
DROP FUNCTION zk_cluster_locks(text);
DROP FUNCTION zk_lock_queue(text);
DROP FUNCTION zk_lock_queue(text, int);

CREATE FUNCTION zk_lock_queue(
    path text,
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
    OUT data text,
    OUT lease_expires_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_lock_queue'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock_queue(text) IS
'the whole cluster''s queue for path, in order, with each node''s owner and, for a granted lease, its expiry';

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
    OUT data text,
    OUT lease_expires_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_lock_queue'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock_queue(text, int) IS
'the first max_rows nodes of the whole cluster''s queue for path, in order, reading node data for those only';

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
    OUT application_name text,
    OUT lease_expires_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_cluster_locks'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_cluster_locks(text) IS
'every lock path with a queue under prefix, across the whole ensemble: one row per holder (a lease with its expiry), with the counts of holders and waiters';

CREATE VIEW zk_cluster_locks AS SELECT * FROM zk_cluster_locks();
COMMENT ON VIEW zk_cluster_locks IS
'every lock path with a queue under zklock.root, across the whole ensemble: one row per holder';
GRANT SELECT ON zk_cluster_locks TO PUBLIC;

-- Barriers (Curator DistributedBarrier) and double barriers (Curator
-- DistributedDoubleBarrier).  Strict: the forms without wait_ms wait as
-- long as needed.

CREATE FUNCTION zk_barrier_set(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_barrier_set'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_barrier_set(text) IS
'raises the barrier at path; true if this call raised it, false if it was up';

CREATE FUNCTION zk_barrier_remove(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_barrier_remove'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_barrier_remove(text) IS
'removes the barrier at path; true if this call removed it, false if it was not up';

CREATE FUNCTION zk_barrier_wait(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_barrier_wait'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_barrier_wait(text) IS
'waits as long as needed until the barrier at path is down; true';

CREATE FUNCTION zk_barrier_wait(path text, wait_ms int)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_barrier_wait'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_barrier_wait(text, int) IS
'waits at most wait_ms ms until the barrier at path is down; true once it is, false if it is still up';

CREATE FUNCTION zk_double_barrier_enter(path text, members int)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_double_barrier_enter'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_double_barrier_enter(text, int) IS
'enters the double barrier at path and waits as long as needed until members participants have entered; true';

CREATE FUNCTION zk_double_barrier_enter(path text, members int, wait_ms int)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_double_barrier_enter'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_double_barrier_enter(text, int, int) IS
'enters the double barrier at path; true once members participants have entered, false after wait_ms ms, with this participant gone';

CREATE FUNCTION zk_double_barrier_leave(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_double_barrier_leave'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_double_barrier_leave(text) IS
'leaves the double barrier at path and waits as long as needed until every participant has left; true';

CREATE FUNCTION zk_double_barrier_leave(path text, wait_ms int)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_double_barrier_leave'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_double_barrier_leave(text, int) IS
'leaves the double barrier at path; true once every participant has left, false after wait_ms ms (this participant is gone either way)';
