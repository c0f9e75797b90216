/* sql/zklock--1.3--1.4.sql: version 1.4.
 *
 * New objects: the schema zk_advisory, with PostgreSQL's advisory-lock
 * functions (same names, arguments and results as pg_catalog's), taken
 * cluster-wide through zklock (src/sql/advisory.c).
 *
 * Error codes that tell applications the right thing (the library's
 * behaviour, whatever the version of the SQL objects):
 *  - an upgrade from a shared to an exclusive lock, and a lease on a lock
 *    the backend holds, raise 55000 (object not in prerequisite state):
 *    no retry can succeed.  They raised 55P03 (lock not available), which
 *    applications take for "retry later";
 *  - an error ZooKeeper returns that is not about the connection raises
 *    58000 (system error), with ZooKeeper's own name for it, its code and
 *    the client library's text in the DETAIL.  It raised 38000.
 * Applications that caught 55P03 for the upgrade, or 38000, should catch
 * 55000 and 58000.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.4'" to load this file. \quit

-- Fencing at the resource ---------------------------------------------------
--
-- The database a lock holder writes to keeps, for each lock path, the
-- largest fencing token it has accepted, and refuses older ones.  The table
-- is written only through zk_fence (SECURITY DEFINER, owned by the
-- extension's owner, with a fixed search_path); anyone may read it.
-- pg_dump keeps its rows.

CREATE TABLE zk_fence_tokens (
	path text PRIMARY KEY,
	token bigint NOT NULL CHECK (token > 0)
);
COMMENT ON TABLE zk_fence_tokens IS
'the largest fencing token accepted by zk_fence for each lock path, in this database';
SELECT pg_catalog.pg_extension_config_dump('zk_fence_tokens', '');
REVOKE ALL ON zk_fence_tokens FROM PUBLIC;
GRANT SELECT ON zk_fence_tokens TO PUBLIC;

CREATE FUNCTION zk_fence(path text, token bigint, verify boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_fence_token'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION zk_fence(text, bigint, boolean) IS
'refuse a fencing token older than the largest accepted for the path here, else record it (transactional); with verify, also check in ZooKeeper that the token holds the lock';

CREATE FUNCTION zk_fence(path text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'zk_fence_own'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION zk_fence(text) IS
'zk_fence with the token of this backend''s own exclusive lock on the path';

CREATE FUNCTION zk_fenced()
RETURNS trigger
AS 'MODULE_PATHNAME', 'zk_fenced'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION zk_fenced() IS
'trigger (BEFORE INSERT OR UPDATE OR DELETE; argument: the lock path): refuse the write unless this transaction passed zk_fence for the path';

-- PostgreSQL's advisory-lock functions, cluster-wide (src/sql/advisory.c):
-- same names, arguments, results and semantics as pg_catalog's, for
-- applications that set search_path = zk_advisory, pg_catalog, ...
CREATE SCHEMA zk_advisory;
COMMENT ON SCHEMA zk_advisory IS
'PostgreSQL''s advisory-lock functions, cluster-wide through zklock: name it before pg_catalog in search_path';
GRANT USAGE ON SCHEMA zk_advisory TO PUBLIC;

CREATE FUNCTION zk_advisory.pg_advisory_lock(bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_lock(bigint) IS
'takes an exclusive cluster-wide advisory lock on the key, waiting as long as needed (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_lock(integer, integer)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_lock(integer, integer) IS
'takes an exclusive cluster-wide advisory lock on the key, waiting as long as needed ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_lock_shared(bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_lock_shared(bigint) IS
'takes a shared cluster-wide advisory lock on the key, waiting as long as needed (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_lock_shared(integer, integer)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_lock_shared(integer, integer) IS
'takes a shared cluster-wide advisory lock on the key, waiting as long as needed ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_unlock(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_unlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_unlock(bigint) IS
'releases one session hold of the exclusive cluster-wide advisory lock on the key; false and a WARNING if not held (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_unlock(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_unlock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_unlock(integer, integer) IS
'releases one session hold of the exclusive cluster-wide advisory lock on the key; false and a WARNING if not held ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_unlock_shared(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_unlock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_unlock_shared(bigint) IS
'releases one session hold of the shared cluster-wide advisory lock on the key; false and a WARNING if not held (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_unlock_shared(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_unlock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_unlock_shared(integer, integer) IS
'releases one session hold of the shared cluster-wide advisory lock on the key; false and a WARNING if not held ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_xact_lock(bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_xact_lock(bigint) IS
'takes an exclusive cluster-wide advisory lock on the key until the end of the transaction (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_xact_lock(integer, integer)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_xact_lock(integer, integer) IS
'takes an exclusive cluster-wide advisory lock on the key until the end of the transaction ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_xact_lock_shared(bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_xact_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_xact_lock_shared(bigint) IS
'takes a shared cluster-wide advisory lock on the key until the end of the transaction (bigint key)';

CREATE FUNCTION zk_advisory.pg_advisory_xact_lock_shared(integer, integer)
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_xact_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_xact_lock_shared(integer, integer) IS
'takes a shared cluster-wide advisory lock on the key until the end of the transaction ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_lock(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_lock(bigint) IS
'takes an exclusive cluster-wide advisory lock on the key if it is free at once; returns whether it did (bigint key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_lock(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_lock(integer, integer) IS
'takes an exclusive cluster-wide advisory lock on the key if it is free at once; returns whether it did ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_lock_shared(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_lock_shared(bigint) IS
'takes a shared cluster-wide advisory lock on the key if it is free at once; returns whether it did (bigint key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_lock_shared(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_lock_shared(integer, integer) IS
'takes a shared cluster-wide advisory lock on the key if it is free at once; returns whether it did ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_xact_lock(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_xact_lock(bigint) IS
'takes an exclusive cluster-wide advisory lock on the key until the end of the transaction if it is free at once; returns whether it did (bigint key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_xact_lock(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_xact_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_xact_lock(integer, integer) IS
'takes an exclusive cluster-wide advisory lock on the key until the end of the transaction if it is free at once; returns whether it did ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_xact_lock_shared(bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_xact_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_xact_lock_shared(bigint) IS
'takes a shared cluster-wide advisory lock on the key until the end of the transaction if it is free at once; returns whether it did (bigint key)';

CREATE FUNCTION zk_advisory.pg_try_advisory_xact_lock_shared(integer, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'zk_advisory_try_xact_lock_shared'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_try_advisory_xact_lock_shared(integer, integer) IS
'takes a shared cluster-wide advisory lock on the key until the end of the transaction if it is free at once; returns whether it did ((int, int) key)';

CREATE FUNCTION zk_advisory.pg_advisory_unlock_all()
RETURNS void
AS 'MODULE_PATHNAME', 'zk_advisory_unlock_all'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION zk_advisory.pg_advisory_unlock_all() IS
'releases every session-level cluster-wide advisory lock of this backend';
