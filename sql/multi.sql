--
-- multi: several locks taken at once (zk_lock(text[]) and family): one
-- ZooKeeper transaction, one token, stacking, duplicates, bad input.
--
\set SHOW_CONTEXT never

-- One transaction creates every node: they share one czxid, the token.
SELECT zk_lock(ARRAY['/mu/a', '/mu/b', '/mu/c']) AS token \gset
SELECT path, mode, scope, hold_count, fencing_token = :token AS same_token
FROM zk_locks ORDER BY path;
SELECT count(DISTINCT fencing_token) AS tokens FROM zk_locks;

-- Paths held already stack; a path given twice is two holds.
SELECT zk_lock(ARRAY['/mu/a', '/mu/d', '/mu/d']) > :token AS newer_token;
SELECT path, hold_count FROM zk_locks ORDER BY path;
SELECT count(*) AS nodes FROM zk_lock_queue('/mu/d');
-- Everything held: the newest token of the set, no new node.
SELECT zk_lock(ARRAY['/mu/a', '/mu/b']) = :token AS held_token;

-- One hold of each is released; false and a WARNING for a path not held.
SELECT zk_unlock(ARRAY['/mu/a', '/mu/a', '/mu/a', '/mu/b', '/mu/c']);
SELECT zk_unlock(ARRAY['/mu/d', '/mu/d', '/mu/none']);
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/mu/a');

-- Shared sets, and a shared set next to an exclusive hold (downgrade).
SELECT zk_lock('/mu/a') > 0 AS writer;
SELECT zk_rlock(ARRAY['/mu/a', '/mu/b']) > 0 AS readers;
SELECT path, mode, hold_count FROM zk_locks ORDER BY path, mode;
SELECT zk_unlock_all();

-- The upgrade rule holds inside a set: nothing is taken.
SELECT zk_rlock('/mu/a') > 0 AS reader;
SELECT zk_test_error($$SELECT zk_lock(ARRAY['/mu/b', '/mu/a'])$$);
SELECT path, mode FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/mu/b');
SELECT zk_unlock_all();

-- Transaction scope: released at COMMIT and by ROLLBACK TO SAVEPOINT.
BEGIN;
SELECT zk_xact_lock(ARRAY['/mu/x', '/mu/y']) > 0 AS locked;
SAVEPOINT s;
SELECT zk_xact_rlock(ARRAY['/mu/r1', '/mu/r2']) > 0 AS locked;
SELECT zk_try_xact_lock(ARRAY['/mu/t1', '/mu/t2'], 100) AS locked;
SELECT zk_try_xact_rlock(ARRAY['/mu/t3']) AS locked;
SELECT count(*) AS held FROM zk_locks;
ROLLBACK TO SAVEPOINT s;
SELECT path, scope FROM zk_locks ORDER BY path;
COMMIT;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/mu/x');

-- try forms without contention.
SELECT zk_try_lock(ARRAY['/mu/a', '/mu/b']) AS locked;
SELECT zk_try_rlock(ARRAY['/mu/c'], 10) AS locked;
SELECT zk_unlock_all();

-- Bad input: empty array, NULL element, a bad path, too many paths,
-- negative wait.  Nothing is left behind.
SELECT zk_test_error($$SELECT zk_lock(ARRAY[]::text[])$$);
SELECT zk_test_error($$SELECT zk_xact_rlock('{}'::text[])$$);
SELECT zk_test_error($$SELECT zk_lock(ARRAY['/mu/a', NULL])$$);
SELECT zk_test_error($$SELECT zk_unlock(ARRAY[NULL::text])$$);
SELECT zk_test_error($$SELECT zk_lock(ARRAY['/mu/a', 'mu/b'])$$);
SELECT zk_test_error($$SELECT zk_lock(ARRAY['/mu/a', '/mu/../b'])$$);
SELECT zk_test_error($$SELECT zk_lock(array(SELECT '/mu/n' || g FROM generate_series(1, 201) g))$$);
SELECT zk_test_error($$SELECT zk_try_lock(ARRAY['/mu/a'], -1)$$);
SELECT zk_lock(NULL::text[]) IS NULL AS strict;
-- a shared set in mutex node style; more locks than the backend may hold
SET zklock.exclusive_node_style = 'mutex';
SELECT zk_test_error($$SELECT zk_rlock(ARRAY['/mu/a', '/mu/b'])$$);
RESET zklock.exclusive_node_style;
SET zklock.max_locks_per_backend = 2;
SELECT zk_lock('/mu/held') > 0 AS one_held;
SELECT zk_test_error($$SELECT zk_lock(ARRAY['/mu/a', '/mu/b'])$$);
SELECT zk_lock(ARRAY['/mu/held', '/mu/a']) > 0 AS fits_with_stacking;
SELECT zk_unlock_all();
RESET zklock.max_locks_per_backend;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/mu/a');

-- 200 paths is allowed, in one transaction.
SELECT zk_lock(array(SELECT '/mu/n' || g FROM generate_series(1, 200) g)) > 0 AS locked;
SELECT count(*) AS held, count(DISTINCT fencing_token) AS tokens FROM zk_locks;
SELECT zk_unlock(array(SELECT '/mu/n' || g FROM generate_series(1, 200) g));
SELECT count(*) AS held FROM zk_locks;
