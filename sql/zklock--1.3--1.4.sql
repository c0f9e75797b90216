/* sql/zklock--1.3--1.4.sql: version 1.4.
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
