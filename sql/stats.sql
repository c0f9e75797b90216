--
-- stats: without zklock in shared_preload_libraries (as in this test's
-- server) the statistics are not kept, and every function says so instead
-- of showing zeros.  The counting itself is tested on a server that
-- preloads zklock (test/t/032_stats.pl).
--
\set SHOW_CONTEXT never

SELECT zk_test_error($$SELECT * FROM zk_stat$$);
SELECT zk_test_error($$SELECT * FROM zk_stat_acquisitions$$);
SELECT zk_test_error($$SELECT * FROM zk_stat_histogram$$);
SELECT zk_test_error($$SELECT zk_stat_reset()$$);

-- the reset is for superusers (as pg_stat_reset), the views for everyone
SELECT has_function_privilege('public', 'zk_stat_reset()', 'EXECUTE') AS public_may_reset,
       has_table_privilege('public', 'zk_stat', 'SELECT') AS public_may_read;
