--
-- privileges: who may take locks, and who may decide where zklock connects.
--
\set SHOW_CONTEXT never
CREATE ROLE zk_plain;
CREATE ROLE zk_worker;
GRANT CREATE ON SCHEMA public TO zk_plain;

-- By default, like pg_advisory_lock, every role may use zklock.
SET ROLE zk_plain;
SELECT zk_try_lock('/priv/a');
SELECT path, mode FROM zk_locks;
SELECT count(*) AS nodes FROM zk_lock_queue('/priv/a');
SELECT state FROM zk_session();
SELECT zk_unlock('/priv/a');

-- A plain role cannot choose where the backend connects or what it may
-- create: not with SET, set_config or a function's SET clause.
SELECT zk_test_error($$CREATE FUNCTION plain_f() RETURNS int LANGUAGE sql
	SET zklock.hosts = '10.1.1.1:2181' AS 'SELECT 1'$$);
SELECT zk_test_error($$CREATE FUNCTION plain_g() RETURNS int LANGUAGE sql
	SET zklock.root = '/elsewhere' AS 'SELECT 1'$$);
SELECT zk_test_error($$CREATE FUNCTION plain_h() RETURNS int LANGUAGE sql
	SET zklock.max_locks_per_backend = 100000 AS 'SELECT 1'$$);
SELECT zk_test_error($$CREATE FUNCTION plain_i() RETURNS int LANGUAGE sql
	SET zklock.session_timeout = '1h' AS 'SELECT 1'$$);
SELECT zk_test_error($$CREATE FUNCTION plain_j() RETURNS int LANGUAGE sql
	SET zklock.auth = 'a:b' AS 'SELECT 1'$$);
-- the settings a user may change
CREATE FUNCTION plain_ok() RETURNS boolean LANGUAGE sql
	SET zklock.connect_timeout = '1s' SET zklock.verify_on_commit = off
	AS $$ SELECT zk_try_lock('/priv/b') AND zk_unlock('/priv/b') $$;
SELECT plain_ok();
DROP FUNCTION plain_ok();
RESET ROLE;

-- A superuser may delegate a setting through a SECURITY DEFINER function.
CREATE FUNCTION big_batch() RETURNS bigint LANGUAGE sql SECURITY DEFINER
	SET zklock.max_locks_per_backend = 3
	AS $$ SELECT count(*) FILTER (WHERE zk_try_lock('/priv/batch/' || i))
	      FROM generate_series(1, 5) i $$;
GRANT EXECUTE ON FUNCTION big_batch() TO zk_plain;
SET ROLE zk_plain;
SELECT zk_test_error('SELECT big_batch()');
-- (session locks are not transactional: the three taken stay held)
SELECT count(*) AS held FROM zk_locks;
SELECT zk_unlock_all();
RESET ROLE;
DROP FUNCTION big_batch();

-- An administrator restricts taking locks to one role, as security.md
-- shows: the inspection functions and views stay public.
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN
		SELECT p.oid FROM pg_proc p
		JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
		JOIN pg_extension e ON e.oid = d.refobjid
		WHERE d.deptype = 'e' AND e.extname = 'zklock'
		  AND p.proname NOT IN ('zk_locks', 'zk_lock_queue', 'zk_cluster_locks',
		                        'zk_blocking_pids', 'zk_session', 'zk_stat',
		                        'zk_stat_acquisitions', 'zk_stat_histogram',
		                        'zk_stat_reset', 'zk_revoke')
	LOOP
		EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO zk_worker', f);
	END LOOP;
END
$$;
SET ROLE zk_plain;
SELECT zk_test_error($$SELECT zk_lock('/priv/c')$$);
SELECT zk_test_error($$SELECT zk_try_xact_rlock('/priv/c')$$);
SELECT zk_test_error($$SELECT zk_semaphore_acquire('/priv/s', 2)$$);
SELECT count(*) AS my_locks FROM zk_locks;
SELECT count(*) AS queued FROM zk_lock_queue('/priv/c');
SELECT count(*) AS cluster_locks FROM zk_cluster_locks('/priv');
SELECT state <> '' AS has_state FROM zk_session();
RESET ROLE;
SET ROLE zk_worker;
SELECT zk_lock('/priv/c') > 0 AS locked;
SELECT path FROM zk_locks;
SELECT zk_unlock('/priv/c');
RESET ROLE;

-- Back to the default, and clean up.
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN
		SELECT p.oid FROM pg_proc p
		JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
		JOIN pg_extension e ON e.oid = d.refobjid
		WHERE d.deptype = 'e' AND e.extname = 'zklock'
		  AND p.proname NOT IN ('zk_locks', 'zk_lock_queue', 'zk_cluster_locks',
		                        'zk_blocking_pids', 'zk_session', 'zk_stat',
		                        'zk_stat_acquisitions', 'zk_stat_histogram',
		                        'zk_stat_reset', 'zk_revoke')
	LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', f);
		EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM zk_worker', f);
	END LOOP;
END
$$;
-- zk_revoke acts on other servers' holders: not executable by PUBLIC
SELECT has_function_privilege('public', 'zk_revoke(text, boolean)', 'EXECUTE') AS public_may_revoke,
       has_function_privilege('zk_plain', 'zk_revoke(text, boolean)', 'EXECUTE') AS plain_may_revoke,
       has_function_privilege('public', 'zk_revoke_requested(text)', 'EXECUTE') AS public_may_ask;
SET ROLE zk_plain;
SELECT zk_test_error($$SELECT zk_revoke('/priv/c')$$);
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM zk_plain;
DROP ROLE zk_plain;
DROP ROLE zk_worker;
