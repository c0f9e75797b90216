/* zklock--1.0.sql: cluster-wide advisory locks backed by Apache ZooKeeper */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION zklock" to load this file. \quit

-- Session-scoped locks: held until released or the backend exits.

CREATE FUNCTION zk_lock(path text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock(text) IS
'takes the cluster-wide exclusive lock on path, waiting as long as needed; returns the fencing token';

CREATE FUNCTION zk_rlock(path text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_rlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_rlock(text) IS
'takes the cluster-wide shared lock on path, waiting as long as needed; returns the fencing token';

CREATE FUNCTION zk_try_lock(path text, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_lock(text, int) IS
'takes the cluster-wide exclusive lock on path if it can within wait_ms milliseconds; false otherwise';

CREATE FUNCTION zk_try_rlock(path text, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_rlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_rlock(text, int) IS
'takes the cluster-wide shared lock on path if it can within wait_ms milliseconds; false otherwise';

CREATE FUNCTION zk_unlock(path text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_unlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_unlock(text) IS
'releases one session hold on path (the exclusive one if held); false and a warning if none is held';

CREATE FUNCTION zk_unlock_all()
RETURNS void
AS 'MODULE_PATHNAME', 'zk_unlock_all'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_unlock_all() IS
'releases every session lock held by this backend';

-- Transaction-scoped locks: released at COMMIT or ROLLBACK.

CREATE FUNCTION zk_xact_lock(path text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_xact_lock(text) IS
'takes the cluster-wide exclusive lock on path until the end of the transaction; returns the fencing token';

CREATE FUNCTION zk_xact_rlock(path text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_xact_rlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_xact_rlock(text) IS
'takes the cluster-wide shared lock on path until the end of the transaction; returns the fencing token';

CREATE FUNCTION zk_try_xact_lock(path text, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_xact_lock(text, int) IS
'takes the exclusive lock on path until the end of the transaction if it can within wait_ms milliseconds';

CREATE FUNCTION zk_try_xact_rlock(path text, wait_ms int DEFAULT 0)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_try_xact_rlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_try_xact_rlock(text, int) IS
'takes the shared lock on path until the end of the transaction if it can within wait_ms milliseconds';

-- Inspection.

CREATE FUNCTION zk_locks(
    OUT path text,
    OUT mode text,
    OUT scope text,
    OUT hold_count int,
    OUT znode text,
    OUT fencing_token bigint,
    OUT acquired_at timestamptz,
    OUT waited interval)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_locks'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_locks() IS
'the ZooKeeper locks held by this backend, one row per path, mode and scope';

CREATE VIEW zk_locks AS SELECT * FROM zk_locks();
COMMENT ON VIEW zk_locks IS
'the ZooKeeper locks held by this backend, one row per path, mode and scope';
-- Like pg_advisory_lock, the functions are executable by PUBLIC (the
-- default for functions); the view follows them.  doc/security.md
-- shows how to restrict zklock to a role.
GRANT SELECT ON zk_locks TO PUBLIC;

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
    OUT data text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'zk_lock_queue'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_lock_queue(text) IS
'the whole cluster''s queue for path, in order, with each node''s owner';

CREATE FUNCTION zk_session(
    OUT state text,
    OUT session_id text,
    OUT server text,
    OUT timeout_ms int,
    OUT locks_held int,
    OUT connected_for interval,
    OUT releases_pending int,
    OUT releases_failed bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'zk_session'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_session() IS
'this backend''s ZooKeeper session: state, id, server, negotiated timeout, locks held';
