--
-- setup: load zklock and the helpers the other regression tests use.
--
CREATE EXTENSION zklock;

-- Loading the extension opens no ZooKeeper session.
SELECT state, session_id, locks_held FROM zk_session();

-- Run a statement; return its SQLSTATE, message and detail instead of
-- failing, so that one line shows every part of an error.
CREATE FUNCTION zk_test_error(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN detail <> '' THEN ' | ' || detail ELSE '' END;
END
$$;

-- Wait (at most 10 s) until the queue of a path holds n nodes, and return
-- the count seen.  Releases are sent in the background, so another
-- session may look before the server has applied them.
CREATE FUNCTION zk_test_queue_len(lock_path text, n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	c int;
BEGIN
	FOR i IN 1..1000 LOOP
		SELECT count(*) INTO c FROM zk_lock_queue(lock_path);
		EXIT WHEN c = n;
		PERFORM pg_sleep(0.01);
	END LOOP;
	RETURN c;
END
$$;
