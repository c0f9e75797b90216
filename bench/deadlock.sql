-- deadlock.sql: the benchmark's deadlock phase (bench/run.sh), run on
-- server 2 with dblink connections to server 1.
--
-- bench_deadlock(conn, members, reps) builds a cycle of 'members' waits
-- across the two servers, reps times: members 1 .. members-1 are backends
-- of server 1 (through dblink), member i holding path i and waiting for
-- path i+1; this backend holds path 'members' and, last, waits for path 1.
-- The remote members start waiting 50 ms earlier, so they publish their
-- waits first and this backend, publishing last, is usually the victim.
-- Returns one figure per repetition: milliseconds from deadlock_timeout
-- (counted from the start of the waiting call) to the 40P01, or "remote"
-- when a remote member was the victim (on a busy machine its check can
-- run last): this backend then waits for a member that no longer waits,
-- and its lock_timeout (10 s) ends that repetition.  Then the chain is
-- unwound.

CREATE EXTENSION IF NOT EXISTS dblink;

CREATE OR REPLACE PROCEDURE bench_deadlock(conn text, members int, reps int,
										   INOUT results text DEFAULT '')
LANGUAGE plpgsql AS $$
DECLARE
	p		text;
	t0		timestamptz;
	t1		timestamptz;
	timeout_ms float8;
	ms		text[] := '{}';
BEGIN
	PERFORM set_config('deadlock_timeout', '100ms', false);
	PERFORM set_config('lock_timeout', '10s', false);
	timeout_ms := 100;
	FOR r IN 1 .. reps LOOP
		p := '/bench/deadlock/' || members || '/' || r || '/';
		FOR i IN 1 .. members - 1 LOOP
			PERFORM dblink_connect('m' || i,
				conn || ' options=''-c deadlock_timeout=100ms''');
			PERFORM * FROM dblink('m' || i, format('SELECT zk_lock(%L)', p || i))
				AS x(token bigint);
		END LOOP;
		PERFORM zk_lock(p || members);
		FOR i IN 1 .. members - 1 LOOP
			PERFORM dblink_send_query('m' || i,
				format('SELECT zk_lock(%L)', p || (i + 1)));
		END LOOP;
		PERFORM pg_sleep(0.05);
		t0 := clock_timestamp();
		t1 := NULL;
		BEGIN
			PERFORM zk_lock(p || 1);
		EXCEPTION WHEN deadlock_detected THEN
			t1 := clock_timestamp();
		WHEN lock_not_available THEN
			NULL;
		END;
		IF t1 IS NOT NULL THEN
			ms := ms || (extract(epoch FROM t1 - t0) * 1000 - timeout_ms)::text;
		ELSE
			ms := ms || 'remote'::text;
		END IF;
		-- unwind: the last remote member gets our path, and so on down
		PERFORM zk_unlock_all();
		FOR i IN REVERSE members - 1 .. 1 LOOP
			PERFORM * FROM dblink_get_result('m' || i, false) AS x(token bigint);
			PERFORM * FROM dblink_get_result('m' || i, false) AS x(token bigint);
			PERFORM * FROM dblink('m' || i, 'SELECT zk_unlock_all()') AS x(v text);
			PERFORM dblink_disconnect('m' || i);
		END LOOP;
	END LOOP;
	results := array_to_string(ms, ' ');
END $$;
