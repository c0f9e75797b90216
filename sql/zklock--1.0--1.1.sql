/* sql/zklock--1.0--1.1.sql: version 1.1 adds atomic multi-locks,
 * counting semaphores and cluster-wide inspection. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.1'" to load this file. \quit

-- Atomic multi-locks.

-- Semaphores.

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
