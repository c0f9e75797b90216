--
-- barrier: barriers, double barriers and the LeaderLatch node style, on
-- one server.  (Several servers, Curator and kazoo are in the TAP tests.)
--
\set SHOW_CONTEXT never

-- A barrier is up while its node exists.
SELECT zk_barrier_wait('/barrier/a', 0) AS down_before;
SELECT zk_barrier_set('/barrier/a') AS raised, zk_barrier_set('/barrier/a') AS raised_again;
SELECT zk_barrier_wait('/barrier/a', 0) AS down_now, zk_barrier_wait('/barrier/a', 100) AS down_after_100ms;
-- a wait as long as needed is bounded by lock_timeout and statement_timeout
SET lock_timeout = '100ms';
SELECT zk_test_error($$SELECT zk_barrier_wait('/barrier/a')$$);
RESET lock_timeout;
SET statement_timeout = '100ms';
SELECT zk_test_error($$SELECT zk_barrier_wait('/barrier/a')$$);
RESET statement_timeout;
SELECT zk_barrier_remove('/barrier/a') AS removed, zk_barrier_remove('/barrier/a') AS removed_again;
SELECT zk_barrier_wait('/barrier/a') AS down;

-- A barrier is a node without children: a lock's node is not one, and the
-- barrier functions refuse a path a lock uses (one kind per path).
SELECT zk_lock('/barrier/l') > 0 AS locked;
SELECT zk_test_error($$SELECT zk_barrier_set('/barrier/l')$$);
SELECT zk_test_error($$SELECT zk_barrier_remove('/barrier/l')$$);
SELECT zk_unlock('/barrier/l');

-- A lock path's parent is no barrier's node (a barrier's node never had a
-- child, or has a barrier's data): not up, not removed, and not raised
-- while the lock's nodes are below it (55000).
SELECT zk_lock('/barrier/p/child') > 0 AS locked;
SELECT zk_barrier_wait('/barrier/p', 0) AS down, zk_barrier_remove('/barrier/p') AS removed;
SELECT zk_test_error($$SELECT zk_barrier_set('/barrier/p')$$);
SELECT zk_unlock('/barrier/p/child');

-- A double barrier of one member opens at once; its membership is held.
SELECT zk_double_barrier_enter('/barrier/d', 1) AS entered;
SELECT path, mode, scope, hold_count, znode ~ '/zklock/barrier/d/[0-9a-f-]{36}$' AS uuid_node
FROM zk_locks;
SELECT path, kind, mode, holders FROM zk_cluster_locks('/barrier/d');
-- one membership per backend and barrier
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/d', 1)$$);
-- zk_unlock_all does not leave double barriers
SELECT zk_unlock_all();
SELECT count(*) AS memberships FROM zk_locks;
SELECT zk_double_barrier_leave('/barrier/d') AS left;
SELECT count(*) AS memberships FROM zk_locks;
-- leaving again, or without entering: a warning and false
SELECT zk_double_barrier_leave('/barrier/d') AS left_again;
SELECT zk_double_barrier_leave('/barrier/never', 100) AS never_entered;

-- Alone among two: false after wait_ms, and nothing left.
SELECT zk_double_barrier_enter('/barrier/two', 2, 100) AS entered;
SELECT count(*) AS memberships FROM zk_locks;
SELECT count(*) AS participants FROM zk_cluster_locks('/barrier/two');
-- a try (0 ms) likewise
SELECT zk_double_barrier_enter('/barrier/two', 2, 0) AS entered;
-- lock_timeout ends a wait without wait_ms (55P03), nothing left
SET lock_timeout = '100ms';
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/two', 2)$$);
RESET lock_timeout;
SELECT count(*) AS participants FROM zk_cluster_locks('/barrier/two');

-- DISCARD ALL leaves double barriers, as it releases session locks.
SELECT zk_double_barrier_enter('/barrier/d', 1) AS entered;
DISCARD ALL;
SELECT count(*) AS memberships FROM zk_locks;
SELECT count(*) AS participants FROM zk_cluster_locks('/barrier/d');

-- Bad input: strict functions return NULL for NULL and do nothing; the
-- rest is refused with its SQLSTATE.
SELECT zk_barrier_set(NULL) IS NULL AS a, zk_barrier_wait('/barrier/n', NULL) IS NULL AS b,
	zk_double_barrier_enter('/barrier/n', NULL) IS NULL AS c,
	zk_double_barrier_enter(NULL, 2) IS NULL AS d,
	zk_double_barrier_leave('/barrier/n', NULL) IS NULL AS e;
SELECT zk_test_error($$SELECT zk_barrier_set('barrier/x')$$);
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/x/', 2)$$);
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/x', 0)$$);
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/x', -3, 10)$$);
SELECT zk_test_error($$SELECT zk_double_barrier_enter('/barrier/x', 2, -1)$$);
SELECT zk_test_error($$SELECT zk_double_barrier_leave('/barrier/x', -1)$$);
SELECT zk_test_error($$SELECT zk_barrier_wait('/barrier/x', -1)$$);
SELECT count(*) AS memberships FROM zk_locks;
SELECT count(*) AS nodes FROM zk_cluster_locks('/barrier');

-- The LeaderLatch node style: exclusive locks queue as Curator LeaderLatch
-- participants; there are no readers.
SET zklock.exclusive_node_style = 'latch';
SELECT zk_lock('/barrier/leader') > 0 AS leads;
SELECT position, mode, granted, znode ~ '^_c_[0-9a-f-]{36}-latch-[0-9]{10}$' AS latch_node
FROM zk_lock_queue('/barrier/leader');
SELECT zk_test_error($$SELECT zk_rlock('/barrier/leader2')$$);
SELECT zk_unlock('/barrier/leader');
RESET zklock.exclusive_node_style;
