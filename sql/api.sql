--
-- api: the session-scoped API on one server.
--
\set SHOW_CONTEXT never

-- A first lock opens the session and returns a positive fencing token.
SELECT zk_lock('/api/a') > 0 AS token_positive;
SELECT state, locks_held FROM zk_session();

-- Stacking: the same token, one node, two holds.
SELECT zk_lock('/api/a') = (SELECT fencing_token FROM zk_locks WHERE path = '/api/a')
	AS same_token;
SELECT path, mode, scope, hold_count,
	znode LIKE '/zklock/api/a/\_c\_%-\_\_WRIT\_\_%' AS znode_named_like_curator,
	acquired_at <= now() AS acquired_before_now, waited >= '0' AS waited_ok
FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/api/a');

-- Released as many times as taken; the node goes with the last hold.
SELECT zk_unlock('/api/a');
SELECT hold_count FROM zk_locks;
SELECT zk_unlock('/api/a');
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/api/a');

-- Unlocking what is not held: a warning and false.
SELECT zk_unlock('/api/a');
SELECT zk_unlock('/api/never-taken');

-- Each grant gets a larger fencing token.
SELECT zk_lock('/api/t') AS first_token \gset
SELECT zk_unlock('/api/t');
SELECT zk_lock('/api/t') > :first_token AS token_increases;
SELECT zk_unlock('/api/t');

-- Shared locks stack as well.
SELECT zk_rlock('/api/r') > 0 AS got_shared;
SELECT zk_try_rlock('/api/r');
SELECT path, mode, scope, hold_count FROM zk_locks;

-- Upgrade from shared to exclusive is an error, never a hang.
SELECT zk_test_error($$SELECT zk_lock('/api/r')$$);
SELECT zk_test_error($$SELECT zk_try_lock('/api/r', 100)$$);
SELECT zk_unlock_all();
SELECT count(*) AS held FROM zk_locks;

-- Downgrade: write, read, then unlock releases the write hold.
SELECT zk_lock('/api/d') > 0 AS got_exclusive;
SELECT zk_rlock('/api/d') > 0 AS got_shared_too;
SELECT path, mode, hold_count FROM zk_locks;
SELECT position, mode, granted FROM zk_lock_queue('/api/d');
SELECT zk_unlock('/api/d');
SELECT path, mode, hold_count FROM zk_locks;
SELECT position, mode, granted FROM zk_lock_queue('/api/d');
SELECT zk_test_error($$SELECT zk_lock('/api/d')$$);
SELECT zk_unlock('/api/d');
SELECT count(*) AS nodes FROM zk_lock_queue('/api/d');

-- Try functions: free locks are taken at once, with or without a wait.
SELECT zk_try_lock('/api/try');
SELECT zk_try_lock('/api/try', 50);
SELECT zk_try_rlock('/api/try-shared', 50);
SELECT path, mode, hold_count FROM zk_locks;
SELECT zk_unlock_all();
SELECT zk_test_error($$SELECT zk_try_lock('/api/try', -1)$$);
SELECT zk_test_error($$SELECT zk_try_rlock('/api/try', -5)$$);

-- NULL in, NULL out (the functions are strict).
SELECT zk_lock(NULL) IS NULL AS a, zk_rlock(NULL) IS NULL AS b,
	zk_try_lock(NULL) IS NULL AS c, zk_try_lock('/api/n', NULL) IS NULL AS d,
	zk_unlock(NULL) IS NULL AS e;
SELECT count(*) AS held FROM zk_locks;

-- zklock.max_locks_per_backend counts distinct locks, not holds.
SET zklock.max_locks_per_backend = 2;
SELECT zk_lock('/api/m1') > 0 AS m1, zk_lock('/api/m2') > 0 AS m2;
SELECT zk_lock('/api/m1') > 0 AS m1_again;
SELECT zk_test_error($$SELECT zk_lock('/api/m3')$$);
SELECT zk_test_error($$SELECT zk_try_rlock('/api/m3')$$);
SELECT zk_unlock_all();
SELECT count(*) AS nodes FROM zk_lock_queue('/api/m3');
RESET zklock.max_locks_per_backend;

-- Many lock/unlock cycles leave nothing behind.
SELECT count(*) FILTER (WHERE zk_lock('/api/cycle') > 0 AND zk_unlock('/api/cycle'))
	AS cycles FROM generate_series(1, 200);
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/api/cycle');

-- Every function is volatile, parallel unsafe and commented, and strict
-- but the lease functions, for which a NULL argument is an ERROR (a NULL
-- from zk_try_lease_lock means "not granted").
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel,
	obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'zklock'
ORDER BY p.proname, p.pronargs;
