--
-- contexts: a request that zklock refuses at once from what the backend
-- holds, before any ZooKeeper call, carries the CONTEXT line of the
-- operation, as the errors raised while it talks to ZooKeeper do.
--
\set SHOW_CONTEXT never

-- SQLSTATE, message and the zklock lines ("while ...") of the context
CREATE FUNCTION zk_test_context(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	cxt text;
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS cxt = PG_EXCEPTION_CONTEXT;
	RETURN SQLSTATE || ': ' || SQLERRM || ' | ' ||
		coalesce((SELECT string_agg(l, ' / ')
				  FROM regexp_split_to_table(cxt, E'\n') AS l
				  WHERE l LIKE 'while %'), 'no CONTEXT line');
END
$$;

-- shared to exclusive
SELECT zk_rlock('/cx/u') > 0 AS shared;
SELECT zk_test_context($$SELECT zk_lock('/cx/u')$$);
SELECT zk_test_context($$SELECT zk_try_lock('/cx/u')$$);

-- a lease on a lock the backend holds
SELECT zk_test_context($$SELECT zk_lease_lock('/cx/u', '30 s')$$);

-- a semaphore limit that differs from the backend's own permit's
SELECT zk_semaphore_acquire('/cx/s', 2) > 0 AS permit;
SELECT zk_test_context($$SELECT zk_semaphore_acquire('/cx/s', 3)$$);

-- zk_lease_renew's token errors: no such lease, another lock's lease
SELECT zk_lease_lock('/cx/l', '30 s') AS t \gset
SELECT zk_test_context($$SELECT zk_lease_renew('/cx/l', 123456789)$$);
SELECT regexp_replace(zk_test_context(format($$SELECT zk_lease_renew('/cx/m', %s)$$, :t)),
					  'token [0-9]+', 'token N') AS other_lock;
SELECT zk_lease_unlock('/cx/l', :t);

-- a second entry into a double barrier
SELECT zk_double_barrier_enter('/cx/db', 1);
SELECT zk_test_context($$SELECT zk_double_barrier_enter('/cx/db', 1)$$);
SELECT zk_double_barrier_leave('/cx/db');

-- an argument refused before zklock works on a path has none
SELECT zk_test_context($$SELECT zk_lock('cx')$$);

SELECT zk_unlock_all();
