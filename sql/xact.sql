--
-- xact: transaction-scoped locks, savepoints, PREPARE, and their mix with
-- session locks.
--
\set SHOW_CONTEXT never

-- Released at COMMIT; stacked with a session hold on the same node.
BEGIN;
SELECT zk_xact_lock('/x/a') > 0 AS locked;
SELECT zk_xact_lock('/x/a') > 0 AS stacked;
SELECT zk_lock('/x/a') > 0 AS session_too;
SELECT path, mode, scope, hold_count FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/a');
SELECT (SELECT fencing_token FROM zk_locks WHERE scope = 'session') =
       (SELECT fencing_token FROM zk_locks WHERE scope = 'transaction') AS one_token;
COMMIT;
SELECT path, mode, scope, hold_count FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/a');
SELECT zk_unlock('/x/a');
SELECT count(*) AS nodes FROM zk_lock_queue('/x/a');

-- Released at ROLLBACK, and at the end of an aborted transaction.
BEGIN;
SELECT zk_xact_rlock('/x/b') > 0 AS locked;
ROLLBACK;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/b');
BEGIN;
SELECT zk_xact_lock('/x/b') > 0 AS locked;
SELECT 1 / 0;
COMMIT;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/b');

-- Outside a transaction block, the statement is the transaction.
SELECT zk_xact_lock('/x/auto') > 0 AS locked;
SELECT count(*) AS held FROM zk_locks;

-- zk_unlock does not release transaction holds.
BEGIN;
SELECT zk_try_xact_lock('/x/c');
SELECT zk_unlock('/x/c');
SELECT path, scope, hold_count FROM zk_locks;
COMMIT;
SELECT count(*) AS held FROM zk_locks;

-- Savepoints: ROLLBACK TO releases what the subtransaction took,
-- RELEASE hands its holds to the parent.
BEGIN;
SELECT zk_xact_lock('/x/s1') > 0 AS locked;
SAVEPOINT sp;
SELECT zk_xact_lock('/x/s2') > 0 AS locked;
SELECT zk_xact_lock('/x/s1') > 0 AS stacked;
SELECT path, hold_count FROM zk_locks ORDER BY path;
ROLLBACK TO SAVEPOINT sp;
SELECT path, hold_count FROM zk_locks ORDER BY path;
SELECT count(*) AS s2_nodes FROM zk_lock_queue('/x/s2');
SAVEPOINT sp2;
SELECT zk_xact_lock('/x/s3') > 0 AS locked;
SAVEPOINT sp3;
SELECT zk_xact_lock('/x/s3') > 0 AS stacked;
RELEASE SAVEPOINT sp3;
RELEASE SAVEPOINT sp2;
SELECT path, hold_count FROM zk_locks ORDER BY path;
SAVEPOINT sp4;
SAVEPOINT sp5;
SELECT zk_xact_lock('/x/s4') > 0 AS locked;
RELEASE SAVEPOINT sp5;
ROLLBACK TO SAVEPOINT sp4;
SELECT path, hold_count FROM zk_locks ORDER BY path;
COMMIT;
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/s1');

-- A PL/pgSQL exception block is a subtransaction too.
BEGIN;
DO $$
BEGIN
	BEGIN
		PERFORM zk_xact_lock('/x/e1');
		RAISE EXCEPTION 'boom';
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE 'caught: %', SQLERRM;
	END;
	BEGIN
		PERFORM zk_xact_lock('/x/e2');
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE 'not reached';
	END;
END
$$;
SELECT path, scope FROM zk_locks;
SELECT count(*) AS e1_nodes FROM zk_lock_queue('/x/e1');
COMMIT;
SELECT count(*) AS held FROM zk_locks;

-- A session lock taken in a rolled-back subtransaction stays, like
-- pg_advisory_lock.
BEGIN;
SAVEPOINT s;
SELECT zk_lock('/x/sess') > 0 AS locked;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT path, scope FROM zk_locks;
SELECT zk_unlock('/x/sess');

-- Upgrade and downgrade work the same with transaction scope.
BEGIN;
SELECT zk_xact_rlock('/x/u') > 0 AS shared;
SELECT zk_test_error($$SELECT zk_xact_lock('/x/u')$$);
ROLLBACK;
BEGIN;
SELECT zk_xact_lock('/x/d') > 0 AS exclusive;
SELECT zk_xact_rlock('/x/d') > 0 AS shared_too;
SELECT path, mode, scope FROM zk_locks ORDER BY mode;
COMMIT;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/d');

-- PREPARE TRANSACTION is refused while transaction locks are held.
BEGIN;
SELECT zk_xact_lock('/x/p') > 0 AS locked;
PREPARE TRANSACTION 'zklock_test';
SELECT count(*) AS held FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/x/p');
-- With only a session lock, zklock does not object (the server then
-- refuses it here because max_prepared_transactions is 0).
SELECT zk_lock('/x/p-session') > 0 AS locked;
BEGIN;
CREATE TABLE zk_prep_dummy ();
PREPARE TRANSACTION 'zklock_test';
SELECT zk_unlock('/x/p-session');
SELECT count(*) AS dummy_tables FROM pg_class WHERE relname = 'zk_prep_dummy';

-- A transaction that holds locks commits once the session is known alive
-- (the default); with zklock.verify_on_commit, once the server confirmed
-- every held node too.
SHOW zklock.verify_on_commit;
SHOW zklock.synchronous_release;
CREATE TABLE zk_xact_work (id int);
BEGIN;
SELECT zk_xact_lock('/x/v') > 0 AS locked;
INSERT INTO zk_xact_work VALUES (1);
COMMIT;
SET zklock.verify_on_commit = on;
BEGIN;
SELECT zk_xact_lock('/x/v') > 0 AS locked;
INSERT INTO zk_xact_work VALUES (2);
COMMIT;
RESET zklock.verify_on_commit;
-- a COMMIT that releases in the background
SET zklock.synchronous_release = off;
BEGIN;
SELECT zk_xact_lock('/x/v') > 0 AS locked;
COMMIT;
RESET zklock.synchronous_release;
SELECT count(*) AS rows FROM zk_xact_work;
DROP TABLE zk_xact_work;

-- try variants with a wait, in a transaction
BEGIN;
SELECT zk_try_xact_lock('/x/t', 100), zk_try_xact_rlock('/x/t2', 100);
SELECT path, mode, scope FROM zk_locks ORDER BY path;
COMMIT;
SELECT count(*) AS held FROM zk_locks;
