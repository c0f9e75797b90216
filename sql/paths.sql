--
-- paths: every kind of path zklock refuses, and some it accepts.
--
\set SHOW_CONTEXT never

SELECT zk_test_error($$SELECT zk_lock('')$$);
SELECT zk_test_error($$SELECT zk_lock('jobs/nightly')$$);
SELECT zk_test_error($$SELECT zk_lock('/')$$);
SELECT zk_test_error($$SELECT zk_lock('/jobs/')$$);
SELECT zk_test_error($$SELECT zk_lock('/jobs//nightly')$$);
SELECT zk_test_error($$SELECT zk_lock('/jobs/./nightly')$$);
SELECT zk_test_error($$SELECT zk_lock('/jobs/../../etc')$$);
SELECT zk_test_error($$SELECT zk_lock('/..')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/jobs/\001night')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/jobs/tab\there')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/jobs/line\nbreak')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/del\u007F')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/c1\u0085')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/c1\u009F/tab\t')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/private\uE000')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/emoji\U0001F600')$$);
SELECT zk_test_error($$SELECT zk_lock(E'/nonchar\uFFFE')$$);
SELECT zk_test_error($$SELECT zk_lock('/' || repeat('x', 1024))$$);
SELECT zk_test_error($$SELECT zk_lock('/a/_c_0b5e4c52-6ab4-4f0e-b3b5-6d1d2e4e0c4b-__WRIT__0000000001')$$);
SELECT zk_test_error($$SELECT zk_lock('/a/x__lock__0000000007/b')$$);
SELECT zk_test_error($$SELECT zk_lock('/a/x-lock--2147483648')$$);

-- The same checks apply to every function that takes a path.
SELECT zk_test_error($$SELECT zk_rlock('relative')$$);
SELECT zk_test_error($$SELECT zk_try_lock('/x/', 10)$$);
SELECT zk_test_error($$SELECT zk_try_rlock('//')$$);
SELECT zk_test_error($$SELECT zk_unlock('/x/..')$$);
SELECT zk_test_error($$SELECT * FROM zk_lock_queue('no-slash')$$);

-- Refused paths leave nothing behind.
SELECT count(*) AS held FROM zk_locks;

-- Accepted: longest path, dots inside names, spaces, non-ASCII, names
-- close to the markers.
SELECT zk_lock('/' || repeat('y', 1023)) > 0 AS longest;
SELECT zk_lock('/v1.2/...x/.hidden') > 0 AS dots;
SELECT zk_lock('/with space/ünïcödé/日本') > 0 AS unicode;
SELECT zk_lock('/a/__WRIT__123') > 0 AS short_suffix;
SELECT zk_lock('/a/lock-0000000001') > 0 AS no_leading_dash;
SELECT length(path), mode FROM zk_locks ORDER BY path;

-- Characters that do not print but ZooKeeper accepts: a message escapes
-- each (\xNN below U+0100, \uXXXX above), a returned value keeps it.
SELECT zk_unlock(E'/np/soft\u00ADhyphen/ls\u2028ps\u2029/zw\u200Bj\u200D/bom\uFEFF/rlo\u202E');
SELECT zk_lock(E'/np/ls\u2028') > 0 AS invisible;
SELECT path = E'/np/ls\u2028' AS kept FROM zk_locks WHERE path LIKE '/np/%';
SELECT zk_test_error($$SELECT zk_lock(E'/np/ls\u2028/x/..')$$);
SELECT zk_unlock(E'/np/ls\u2028');
SELECT count(*) AS nodes FROM zk_lock_queue('/with space/ünïcödé/日本');
SELECT zk_unlock_all();
