--
-- lease: locks held by a ZooKeeper TTL node, and DISCARD ALL, on one
-- server.  (Several servers, PgBouncer and expiry under load are in the
-- TAP tests.)
--
\set SHOW_CONTEXT never

-- An SQLSTATE alone, for errors whose text names a token.
CREATE FUNCTION zk_test_sqlstate(stmt text) RETURNS text
LANGUAGE sql AS $$ SELECT left(zk_test_error(stmt), 5) $$;

-- A free lock: granted at once, the token names the lease.
SELECT zk_lease_lock('/lease/a', '30 s') AS t \gset
SELECT :t > 0 AS token_positive;
-- it belongs to no backend: not in zk_locks
SELECT count(*) AS held FROM zk_locks;
-- the queue shows it as a granted exclusive node with its expiry
SELECT position, mode, granted,
	lease_expires_at BETWEEN now() + '25 s' AND now() + '35 s' AS expires_in_ttl,
	data::json->>'scope' AS scope, data::json->>'ttl_ms' AS ttl_ms,
	znode LIKE '\_c\_%-\_\_WRIT\_\_%' AS named_like_curator
FROM zk_lock_queue('/lease/a');
SELECT path, kind, mode, holders, waiters, fencing_token = :t AS same_token,
	lease_expires_at IS NOT NULL AS lease
FROM zk_cluster_locks('/lease/a');

-- A lease and a session lock exclude each other, both ways.
SELECT zk_try_lock('/lease/a');
SELECT zk_try_rlock('/lease/a', 100);
SELECT zk_try_lease_lock('/lease/a', '30 s') IS NULL AS second_lease_refused;
SELECT zk_try_lease_lock('/lease/a', '30 s', 100) IS NULL AS refused_after_100ms;
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/a');
SELECT zk_lock('/lease/s') > 0 AS got_session_lock;

-- A backend that holds a lock cannot take a lease on it: it would wait
-- for itself.
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/s', '1 min')$$);
SELECT zk_test_error($$SELECT zk_try_lease_lock('/lease/s', '1 min')$$);
SELECT zk_unlock('/lease/s');

-- Renewal, from this backend or any other, returns the new expiry.
SELECT zk_lease_renew('/lease/a', :t) BETWEEN now() + '25 s' AND now() + '35 s'
	AS renewed;
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/a');

-- zk_unlock_all and DISCARD ALL leave leases alone.
SELECT zk_unlock_all();
DISCARD ALL;
SELECT zk_try_lock('/lease/a');

-- Release: true once; false and a warning after (whose text, naming
-- the token, is shown for a constant token below).
SELECT zk_lease_unlock('/lease/a', :t);
SET client_min_messages = error;
SELECT zk_lease_unlock('/lease/a', :t);
RESET client_min_messages;
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/a');
SELECT zk_try_lock('/lease/a');
SELECT zk_unlock('/lease/a');

-- A released lease cannot be renewed: ERROR, nothing taken again.
SELECT zk_test_sqlstate(format($$SELECT zk_lease_renew('/lease/a', %s)$$, :t))
	AS renew_released;
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/a');

-- Tokens increase from grant to grant.
SELECT zk_lease_lock('/lease/a', '1 min') AS t2 \gset
SELECT :t2 > :t AS token_increases;
SELECT zk_lease_lock('/lease/b', '1 min') AS tb \gset
-- a token of another lock, known to this backend: named so
SELECT zk_test_error(format($$SELECT zk_lease_renew('/lease/a', %s)$$, :tb))
	LIKE '22023: ZooKeeper lease token % belongs to lock "/lease/b", not "/lease/a"'
	AS other_path;
SET client_min_messages = error;
SELECT zk_lease_unlock('/lease/a', :tb) AS unlock_other_path;
RESET client_min_messages;
SELECT zk_lease_unlock('/lease/b', :tb);
SELECT zk_lease_unlock('/lease/a', :t2);

-- Bad input: each its SQLSTATE, nothing left behind.
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', NULL)$$);
SELECT zk_test_error($$SELECT zk_lease_lock(NULL, '1 min')$$);
SELECT zk_test_error($$SELECT zk_try_lease_lock('/lease/c', '1 min', NULL)$$);
SELECT zk_test_error($$SELECT zk_lease_renew('/lease/c', NULL)$$);
SELECT zk_test_error($$SELECT zk_lease_unlock('/lease/c', NULL)$$);
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', '0 s')$$);
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', '-1 min')$$);
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', '1 day -24 hours')$$);
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', '40 years')$$);
SELECT zk_test_error($$SELECT zk_lease_lock('/lease/c', '178000000 years')$$);
SELECT zk_test_error($$SELECT zk_try_lease_lock('/lease/c', '1 min', -1)$$);
SELECT zk_test_error($$SELECT zk_lease_lock('lease/c', '1 min')$$);
SELECT zk_test_error($$SELECT zk_lease_renew('/lease/c', 0)$$);
SELECT zk_test_error($$SELECT zk_lease_renew('/lease/c', -7)$$);
SELECT zk_test_error($$SELECT zk_lease_renew('/lease/c', 123456789)$$);
SELECT zk_test_error($$SELECT zk_lease_unlock('/lease/c', -7)$$);
SELECT zk_lease_unlock('/lease/c', 123456789);
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/c');

-- The ttl counts a month as 30 days; sub-millisecond rounds up.
SELECT zk_lease_lock('/lease/m', '1 month') AS tm \gset
SELECT data::json->>'ttl_ms' AS ttl_ms FROM zk_lock_queue('/lease/m');
SELECT zk_lease_unlock('/lease/m', :tm);
BEGIN;
-- (its ttl runs out at once: the statements go on, zklock.on_lock_loss = error)
SET LOCAL zklock.on_lock_loss = error;
SELECT zk_lease_lock('/lease/m', '0.5 ms') AS tm \gset
SELECT data::json->>'ttl_ms' AS ttl_ms FROM zk_lock_queue('/lease/m');
-- (ZooKeeper's reaper may have removed the expired node already: the
-- release then warns that no lease holds the lock, and a COMMIT would
-- refuse, so warnings are not shown and the transaction rolls back)
SET LOCAL client_min_messages = error;
SELECT zk_lease_unlock('/lease/m', :tm) IS NOT NULL AS answered;
ROLLBACK;

-- A transaction that took a lease cannot COMMIT once its ttl may have
-- run out.  Taking a lease is not undone by ROLLBACK: the lease is there
-- until released or expired.  (With zklock.on_lock_loss = cancel, the
-- default, the pg_sleep itself would be cancelled when the ttl runs out.)
\set VERBOSITY terse
BEGIN;
SET LOCAL zklock.on_lock_loss = error;
SELECT zk_lease_lock('/lease/x', '300 ms') AS tx \gset
SELECT pg_sleep(0.4);
COMMIT;
\set VERBOSITY default
-- (ZooKeeper's reaper may have removed the expired node already; the
-- release then warns that no lease holds the lock: warnings are not shown)
SET client_min_messages = error;
SELECT zk_lease_unlock('/lease/x', :tx) IS NOT NULL AS answered;
RESET client_min_messages;
-- one released in the same transaction is not checked
BEGIN;
SELECT zk_lease_lock('/lease/x', '300 ms') AS tx \gset
SELECT zk_lease_unlock('/lease/x', :tx);
SELECT pg_sleep(0.4);
COMMIT;
-- nor is one the transaction only released
SELECT zk_lease_lock('/lease/x', '1 min') AS tx \gset
BEGIN;
SELECT zk_lease_renew('/lease/x', :tx) > now() AS renewed;
COMMIT;
BEGIN;
SELECT zk_lease_unlock('/lease/x', :tx);
COMMIT;
-- with zklock.verify_on_commit the node is confirmed at COMMIT
SET zklock.verify_on_commit = on;
BEGIN;
SELECT zk_lease_lock('/lease/x', '1 min') AS tx \gset
COMMIT;
RESET zklock.verify_on_commit;
SELECT zk_lease_unlock('/lease/x', :tx);
SELECT count(*) AS nodes FROM zk_lock_queue('/lease/x');

-- DISCARD ALL releases every session hold, stacked or not: locks, shared
-- locks, lock sets, semaphore leases.
SELECT zk_lock('/discard/w') > 0, zk_lock('/discard/w') > 0,
	zk_rlock('/discard/r') > 0,
	zk_lock(ARRAY['/discard/s1', '/discard/s2']) > 0,
	zk_semaphore_acquire('/discard/sem', 2) > 0;
SELECT path, mode, scope, hold_count FROM zk_locks ORDER BY path, mode;
DISCARD ALL;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes
FROM unnest(ARRAY['/discard/w', '/discard/r', '/discard/s1', '/discard/s2']) AS p,
	LATERAL zk_lock_queue(p);
SELECT count(*) AS semaphore_holders FROM zk_cluster_locks('/discard/sem');

-- A DISCARD ALL that fails releases nothing; the other forms release
-- nothing either.
SELECT zk_lock('/discard/w') > 0 AS got;
BEGIN;
DISCARD ALL;
ROLLBACK;
DISCARD PLANS;
DISCARD SEQUENCES;
DISCARD TEMP;
SELECT path, hold_count FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/discard/w');

-- A setting DISCARD ALL resets under held locks and a live session: the
-- locks are released, and the next call opens a session with the reset
-- setting.
SELECT zk_unlock_all();
SET zklock.session_timeout = '4s';
SELECT zk_lock('/discard/w') > 0 AS got;
SELECT timeout_ms, locks_held FROM zk_session();
DISCARD ALL;
SELECT count(*) AS nodes FROM zk_lock_queue('/discard/w');
SELECT timeout_ms <> 4000 AS new_session, locks_held FROM zk_session();
SET zklock.root = '/zklock_other';
SELECT zk_lock('/discard/w') > 0 AS got_under_other_root;
DISCARD ALL;
SHOW zklock.root;
SET zklock.root = '/zklock_other';
SELECT count(*) AS nodes FROM zk_lock_queue('/discard/w');
RESET zklock.root;
SELECT count(*) AS held FROM zk_locks;

-- RESET ALL (unlike SET) bypasses the settings' checks: a root changed
-- that way under held locks is refused at the next lock, and the locks
-- held are still released where they are.
SET zklock.root = '/zklock_other';
SELECT zk_lock('/discard/w') > 0 AS got_under_other_root;
RESET ALL;
SELECT zk_test_error($$SELECT zk_lock('/discard/v')$$);
SELECT zk_unlock_all();
SET zklock.root = '/zklock_other';
SELECT count(*) AS nodes FROM zk_lock_queue('/discard/w');
RESET zklock.root;
SELECT zk_lock('/discard/v') > 0 AS got_under_default_root;
SELECT zk_unlock_all();
