--
-- errors: settings and an unreachable ZooKeeper.
--
\set SHOW_CONTEXT never

-- Nobody listens on port 1: 08001 after zklock.connect_timeout.
SET zklock.hosts = '127.0.0.1:1';
SET zklock.connect_timeout = 300;
SELECT zk_test_error($$SELECT zk_lock('/err/a')$$);
SELECT zk_test_error($$SELECT zk_try_lock('/err/a')$$);
SELECT zk_test_error($$SELECT * FROM zk_lock_queue('/err/a')$$);
SELECT state FROM zk_session();

-- A host list that is not host:port pairs is refused when set.
SELECT zk_test_error($$SET zklock.hosts = 'not a host list'$$);
SELECT zk_test_error($$SET zklock.hosts = ''$$);
SELECT zk_test_error($$SET zklock.hosts = '127.0.0.1:2181,'$$);
SELECT zk_test_error($$SET zklock.hosts = '127.0.0.1'$$);
SELECT zk_test_error($$SET zklock.hosts = '127.0.0.1:0'$$);
SELECT zk_test_error($$SET zklock.hosts = '127.0.0.1:2181/chroot'$$);
SHOW zklock.hosts;
-- A host that does not resolve fails when a session opens.
SET zklock.hosts = 'no-such-host.invalid:2181';
SELECT zk_test_error($$SELECT zk_lock('/err/a')$$);
RESET zklock.hosts;
RESET zklock.connect_timeout;

-- Back to the real server.
SELECT zk_lock('/err/held') > 0 AS locked;

-- While locks are held, the session's settings cannot change; the error
-- never repeats the value (zklock.auth's is a secret).
SELECT zk_test_error($$SET zklock.hosts = '127.0.0.1:2'$$);
SELECT zk_test_error($$SET zklock.root = '/elsewhere'$$);
SELECT zk_test_error($$SET zklock.session_timeout = '20s'$$);
SELECT zk_test_error($$SET zklock.auth = 'user:secret'$$);
SELECT zk_test_error($$SET zklock.auth_file = '/elsewhere/secret'$$);
SELECT zk_test_error($$SELECT set_config('zklock.root', '/elsewhere', false)$$);
-- ... but setting the same value is fine, and so are the user settings.
SELECT zk_test_error($$SET zklock.root = '/zklock'$$);
SET zklock.connect_timeout = '2s';
SET zklock.verify_on_commit = on;
RESET zklock.verify_on_commit;
SET zklock.synchronous_release = off;
RESET zklock.synchronous_release;
SELECT zk_unlock_all();

-- RESET passes no check: under held locks, the next call refuses to switch
-- sessions.
SET zklock.session_timeout = '20s';
SELECT zk_lock('/err/held') > 0 AS locked;
RESET zklock.session_timeout;
SELECT zk_test_error($$SELECT zk_try_lock('/err/other')$$);
SELECT zk_unlock_all();

-- Without locks they change, and the next call uses them.
SET zklock.root = '/zklock-errors-test';
SELECT zk_lock('/err/rooted') > 0 AS locked;
SELECT znode LIKE '/zklock-errors-test/err/rooted/%' AS under_new_root FROM zk_locks;
SELECT zk_unlock_all();
RESET zklock.root;

-- Malformed settings.
SELECT zk_test_error($$SET zklock.root = 'relative'$$);
SELECT zk_test_error($$SET zklock.root = '/trailing/'$$);
SELECT zk_test_error($$SET zklock.root = '/a/../b'$$);
SET zklock.auth = 'no-colon';
SELECT zk_test_error($$SELECT zk_lock('/err/a')$$);
RESET zklock.auth;
SELECT zk_test_error($$SET zklock.session_timeout = 10$$);
SELECT zk_test_error($$SET zklock.max_locks_per_backend = 0$$);
SELECT zk_test_error($$SET zklock.nonexistent = 1$$);

-- Settings that choose where the backend connects are superuser-only.
CREATE ROLE zklock_plain_user;
SET ROLE zklock_plain_user;
SELECT zk_test_error($$SET zklock.hosts = '10.0.0.1:2181'$$);
SELECT zk_test_error($$SET zklock.root = '/other'$$);
SELECT zk_test_error($$SET zklock.session_timeout = '30s'$$);
SELECT zk_test_error($$SET zklock.auth = 'a:b'$$);
SELECT zk_test_error($$SET zklock.max_locks_per_backend = 5$$);
SELECT zk_test_error($$SELECT set_config('zklock.hosts', '10.0.0.1:2181', false)$$);
SET zklock.connect_timeout = '1s';
SHOW zklock.auth;
RESET ROLE;
DROP ROLE zklock_plain_user;
