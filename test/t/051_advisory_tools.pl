# The SQL that real tools send for their advisory locks, unmodified, through
# two PostgreSQL servers whose database has search_path = zk_advisory,
# pg_catalog, ...: the locks hold across the servers.
#
# - golang-migrate v4, database/postgres/postgres.go: Lock
#   "SELECT pg_advisory_lock($1)", Unlock "SELECT pg_advisory_unlock($1)",
#   $1 the lock id of database.GenerateAdvisoryLockId: two migrators on two
#   servers never run at once.
# - Flyway, flyway-database-postgresql, PostgreSQLAdvisoryLockTemplate.java:
#   "SELECT pg_try_advisory_xact_lock(<lockNum>)" (transactional, the
#   default), "SELECT pg_try_advisory_lock(<lockNum>)" and
#   "SELECT pg_advisory_unlock(<lockNum>)".
# - Rails ActiveRecord, postgresql_adapter.rb: get_advisory_lock
#   "SELECT pg_try_advisory_lock(#{lock_id})", release_advisory_lock
#   "SELECT pg_advisory_unlock(#{lock_id})", the migrator's lock_id
#   2053462845 * Zlib.crc32(database name).
# - good_job, README "Optimize queues": the job selection query, which
#   locks rows with pg_try_advisory_lock in a WHERE clause: each job goes
#   to exactly one worker across the servers.
# - que (que-rb): workers release with "SELECT pg_advisory_unlock_all()".
#   Its job-locking query (pg_try_advisory_lock on the job id in a recursive
#   CTE) is MODELLED here on que's, not copied from que 1.x.
# - A churn of (int, int) and (bigint) keys, shared and exclusive, session
#   and transaction locks, blocking and try, on both servers: no two
#   workers ever held a key in conflicting modes at once, and no node is
#   left behind.
# Liquibase (a lock table) and Oban (its Postgres peer uses a table) take
# no advisory lock, and need no test.
use strict;
use warnings;

use lib 'lib';
use Compress::Zlib qw(crc32);
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my @nodes = (pg_with_zklock('a', $zk), pg_with_zklock('b', $zk));
my ($na, $nb) = @nodes;
for my $n (@nodes)
{
	$n->safe_psql('postgres',
		q{ALTER DATABASE postgres SET search_path = zk_advisory, pg_catalog, "$user", public});
}

# --- golang-migrate v4: database.GenerateAdvisoryLockId(databaseName,
# schemaName, tableName): crc32 (IEEE) of the names joined by NUL, database
# name last, times the salt 1486364155, as a uint32
my $migrate_id =
  (crc32(join("\0", 'public', 'schema_migrations', 'postgres')) * 1486364155)
  % 4294967296;
note "golang-migrate lock id: $migrate_id";
for my $n (@nodes)
{
	$n->safe_psql('postgres',
		'CREATE TABLE migration_runs (server text, t0 timestamptz, t1 timestamptz)');
}
my @migrators;
for my $i (0, 1)
{
	my $n = $nodes[$i];
	my $s = $n->background_psql('postgres', on_error_stop => 1);
	# the statements as postgres.go sends them: $1 a parameter
	$s->query_safe(q{PREPARE migrate_lock AS SELECT pg_advisory_lock($1)});
	$s->query_safe(q{PREPARE migrate_unlock AS SELECT pg_advisory_unlock($1)});
	my $sql = '';
	for (1 .. 15)
	{
		$sql .= qq{EXECUTE migrate_lock('$migrate_id');
			INSERT INTO migration_runs SELECT '@{[ $n->name ]}', clock_timestamp(), NULL;
			SELECT pg_sleep(0.02);
			UPDATE migration_runs SET t1 = clock_timestamp() WHERE t1 IS NULL;
			EXECUTE migrate_unlock('$migrate_id');
		};
	}
	bg_begin($s, $sql, "migrator_done_$i");
	push @migrators, $s;
}
for my $i (0, 1)
{
	my (undef, $err) = bg_finish($migrators[$i], "migrator_done_$i");
	is($err, '', "golang-migrate: migrator $i ran 15 times without an error");
	$migrators[$i]->quit;
}
my @runs;
for my $n (@nodes)
{
	push @runs, map { [ split /\|/ ] } split /\n/,
	  $n->safe_psql('postgres',
		q{SELECT server, extract(epoch FROM t0), extract(epoch FROM t1) FROM migration_runs});
}
is(scalar(@runs), 30, 'golang-migrate: 30 runs recorded');
my $overlaps = 0;
for my $x (@runs)
{
	for my $y (@runs)
	{
		$overlaps++
		  if $x->[0] lt $y->[0] && $x->[1] < $y->[2] && $y->[1] < $x->[2];
	}
}
is($overlaps, 0, 'golang-migrate: two migrators on two servers never ran at once');

# --- Flyway: lockNum as PostgreSQLAdvisoryLockTemplate makes it, its
# LOCK_MAGIC_NUM ("Flywa") plus a discriminator (here an arbitrary one;
# Flyway's is derived from the schema history table)
my $lock_num = (0x46 << 40) + (0x6C << 32) + (0x79 << 24) + (0x77 << 16) + (0x61 << 8) + 12345;
{
	my $sa = $na->background_psql('postgres');
	$sa->query_safe('BEGIN');
	is($sa->query_safe("SELECT pg_try_advisory_xact_lock($lock_num)"), 't',
		'Flyway (transactional): A gets the lock');
	my $sb = $nb->background_psql('postgres');
	$sb->query_safe('BEGIN');
	is($sb->query_safe("SELECT pg_try_advisory_xact_lock($lock_num)"), 'f',
		'Flyway (transactional): B does not while A\'s transaction lasts');
	$sb->query_safe('ROLLBACK');
	$sa->query_safe('COMMIT');
	$sb->query_safe('BEGIN');
	is($sb->query_safe("SELECT pg_try_advisory_xact_lock($lock_num)"), 't',
		'Flyway (transactional): B gets it once A committed');
	$sb->query_safe('COMMIT');

	is($sa->query_safe("SELECT pg_try_advisory_lock($lock_num)"), 't',
		'Flyway (session): A gets the lock');
	is($sb->query_safe("SELECT pg_try_advisory_lock($lock_num)"), 'f',
		'Flyway (session): B does not');
	is($sa->query_safe("SELECT pg_advisory_unlock($lock_num)"), 't',
		'Flyway (session): A releases it');
	is($sb->query_safe("SELECT pg_try_advisory_lock($lock_num)"), 't',
		'Flyway (session): then B gets it');
	is($sb->query_safe("SELECT pg_advisory_unlock($lock_num)"), 't',
		'Flyway (session): and releases it');
	$sa->quit;
	$sb->quit;
}

# --- Rails: the migrator's lock id, 2053462845 * Zlib.crc32(database name)
my $rails_id = Math::BigInt->new(2053462845)->bmul(crc32('postgres'))->bstr;
note "Rails migrator lock id: $rails_id";
{
	my $sa = $na->background_psql('postgres');
	my $sb = $nb->background_psql('postgres');
	is($sa->query_safe("SELECT pg_try_advisory_lock($rails_id)"), 't',
		'Rails: A\'s migrator gets the lock');
	is($sb->query_safe("SELECT pg_try_advisory_lock($rails_id)"), 'f',
		'Rails: B\'s migrator does not (ConcurrentMigrationError)');
	is($sa->query_safe("SELECT pg_advisory_unlock($rails_id)"), 't',
		'Rails: A releases it');
	is($sb->query_safe("SELECT pg_try_advisory_lock($rails_id)"), 't',
		'Rails: then B gets it');
	$sb->query_safe("SELECT pg_advisory_unlock($rails_id)");
	$sa->quit;
	$sb->quit;
}

# --- good_job: the same 40 jobs on both servers; two workers per server run
# good_job's selection query until it finds nothing.  A worker keeps the
# lock of every job it took (a session lock, as good_job holds it while it
# performs the job) and marks the job finished in its own database.
my $njobs = 40;
for my $n (@nodes)
{
	$n->safe_psql('postgres', qq{
		CREATE TABLE good_jobs (id serial PRIMARY KEY, active_job_id uuid NOT NULL,
			scheduled_at timestamptz, finished_at timestamptz, priority int,
			created_at timestamptz NOT NULL);
		INSERT INTO good_jobs (active_job_id, scheduled_at, priority, created_at)
			SELECT md5('job' || i)::uuid, CASE WHEN i % 2 = 0 THEN now() - interval '1 s' END,
				i % 3, '2026-01-01'::timestamptz + i * interval '1 s'
			FROM generate_series(1, $njobs) i;
		CREATE TABLE taken (worker text, active_job_id uuid);});
}
my $good_job_query = q{SELECT * FROM good_jobs WHERE id IN (WITH rows AS MATERIALIZED (SELECT id, active_job_id FROM good_jobs WHERE (scheduled_at <= NOW() OR scheduled_at IS NULL) AND finished_at IS NULL ORDER BY priority DESC NULLS LAST, created_at ASC) SELECT id FROM rows WHERE pg_try_advisory_lock(('x' || substr(md5('good_jobs' || '-' || active_job_id::text), 1, 16))::bit(64)::bigint) LIMIT 1)};
{
	my @workers;
	for my $i (0 .. 3)
	{
		my $n = $nodes[ $i % 2 ];
		my $s = $n->background_psql('postgres');
		push @workers, [ $s, "w$i" ];
	}
	my %active = map { $_->[1] => 1 } @workers;
	while (%active)
	{
		for my $w (@workers)
		{
			my ($s, $name) = @$w;
			next unless $active{$name};
			# the query as good_job sends it; its second column is active_job_id
			my $row = $s->query_safe($good_job_query);
			my $id = $row eq '' ? '' : (split /\|/, $row)[1];
			$s->query_safe(qq{INSERT INTO taken VALUES ('$name', '$id')}) if $id ne '';
			if ($id eq '')
			{
				delete $active{$name};
				next;
			}
			$s->query_safe(qq{UPDATE good_jobs SET finished_at = now() WHERE active_job_id = '$id'});
		}
	}
	my (%count, $total);
	for my $n (@nodes)
	{
		for my $id (split /\n/, $n->safe_psql('postgres', 'SELECT active_job_id FROM taken'))
		{
			$count{$id}++;
			$total++;
		}
	}
	is(scalar(keys %count), $njobs, 'good_job: every job was taken');
	is($total, $njobs, 'good_job: each exactly once, across four workers on two servers');
	my %by_server = map { $_->name => $_->safe_psql('postgres', 'SELECT count(*) FROM taken') } @nodes;
	note "good_job: jobs per server: " . join(', ', map { "$_ $by_server{$_}" } sort keys %by_server);
	my $held_now = 0;
	$held_now += $_->[0]->query_safe(
		q{SELECT count(*) FROM zk_locks WHERE path LIKE '/pg_advisory/postgres/%'})
	  for @workers;
	is($held_now, $njobs,
		'good_job: the workers hold one lock per job taken, none more');

	# --- que: a worker's "SELECT pg_advisory_unlock_all()" lets the jobs go
	$_->[0]->query_safe('SELECT pg_advisory_unlock_all()') for @workers;
	my $held = 0;
	for my $w (@workers)
	{
		$held += $w->[0]->query_safe('SELECT count(*) FROM zk_locks');
	}
	is($held, 0, 'que: pg_advisory_unlock_all releases every job lock');
	$_->[0]->quit for @workers;
}

# que's job lock, modelled on que's recursive CTE (not copied from que 1.x):
# walk the jobs in order, try each job id's lock, stop at the first taken
my $que_lock = q{
WITH RECURSIVE jobs AS (
  SELECT (j).*, pg_try_advisory_lock((j).id) AS locked
  FROM (SELECT j FROM que_jobs AS j ORDER BY priority, run_at, id LIMIT 1) AS t1
  UNION ALL (
    SELECT (j).*, pg_try_advisory_lock((j).id) AS locked
    FROM (
      SELECT (SELECT j FROM que_jobs AS j
              WHERE (priority, run_at, id) > (jobs.priority, jobs.run_at, jobs.id)
              ORDER BY priority, run_at, id LIMIT 1) AS j
      FROM jobs WHERE jobs.id IS NOT NULL LIMIT 1
    ) AS t1
  )
)
SELECT id FROM jobs WHERE locked LIMIT 1};
for my $n (@nodes)
{
	$n->safe_psql('postgres', q{
		CREATE TABLE que_jobs (priority smallint, run_at timestamptz, id bigint PRIMARY KEY);
		INSERT INTO que_jobs SELECT 100, '2026-01-01', i FROM generate_series(1, 3) i;});
}
{
	my $qa = $na->background_psql('postgres');
	my $qb = $nb->background_psql('postgres');
	is($qa->query_safe($que_lock), '1', 'que: A\'s worker locks job 1');
	is($qb->query_safe($que_lock), '2', 'que: B\'s worker skips it and locks job 2');
	is($qa->query_safe($que_lock), '1', 'que: A\'s worker, asking again, gets its own job 1 again (stacked)');
	$qa->query_safe('SELECT pg_advisory_unlock_all()');
	is($qb->query_safe($que_lock), '1',
		'que: after A\'s pg_advisory_unlock_all, B\'s worker gets job 1');
	$qb->query_safe('SELECT pg_advisory_unlock_all()');
	$qa->quit;
	$qb->quit;
}

# --- churn: (bigint) and (int, int) keys mixed, on both servers
my $churn_secs = $ENV{ZKLOCK_CHURN_SECONDS} // 15;
for my $n (@nodes)
{
	$n->safe_psql('postgres', q{
CREATE TABLE held (worker text, key text, mode text, t0 timestamptz, t1 timestamptz);
CREATE PROCEDURE advchurn(secs float8, worker text) LANGUAGE plpgsql AS $$
DECLARE
	deadline timestamptz := clock_timestamp() + secs * interval '1 second';
	k int;
	pair bool;
	excl bool;
	xact bool;
	try bool;
	got bool;
	keyname text;
	t0 timestamptz;
BEGIN
	WHILE clock_timestamp() < deadline LOOP
		k := floor(random() * 3)::int;
		pair := random() < 0.5;
		excl := random() < 0.7;
		xact := random() < 0.5;
		try := random() < 0.3;
		keyname := CASE WHEN pair THEN '7,' || k ELSE k::text END;
		got := true;
		IF xact THEN
			IF try THEN
				got := CASE WHEN pair AND excl THEN pg_try_advisory_xact_lock(7, k)
							WHEN pair THEN pg_try_advisory_xact_lock_shared(7, k)
							WHEN excl THEN pg_try_advisory_xact_lock(k)
							ELSE pg_try_advisory_xact_lock_shared(k) END;
			ELSIF pair AND excl THEN PERFORM pg_advisory_xact_lock(7, k);
			ELSIF pair THEN PERFORM pg_advisory_xact_lock_shared(7, k);
			ELSIF excl THEN PERFORM pg_advisory_xact_lock(k);
			ELSE PERFORM pg_advisory_xact_lock_shared(k);
			END IF;
			IF got THEN
				t0 := clock_timestamp();
				PERFORM pg_sleep(random() * 0.01);
				INSERT INTO held VALUES (worker, keyname, CASE WHEN excl THEN 'x' ELSE 's' END,
										 t0, clock_timestamp());
			END IF;
			COMMIT;
		ELSE
			IF try THEN
				got := CASE WHEN pair AND excl THEN pg_try_advisory_lock(7, k)
							WHEN pair THEN pg_try_advisory_lock_shared(7, k)
							WHEN excl THEN pg_try_advisory_lock(k)
							ELSE pg_try_advisory_lock_shared(k) END;
			ELSIF pair AND excl THEN PERFORM pg_advisory_lock(7, k);
			ELSIF pair THEN PERFORM pg_advisory_lock_shared(7, k);
			ELSIF excl THEN PERFORM pg_advisory_lock(k);
			ELSE PERFORM pg_advisory_lock_shared(k);
			END IF;
			IF got THEN
				t0 := clock_timestamp();
				PERFORM pg_sleep(random() * 0.01);
				INSERT INTO held VALUES (worker, keyname, CASE WHEN excl THEN 'x' ELSE 's' END,
										 t0, clock_timestamp());
				PERFORM CASE WHEN pair AND excl THEN pg_advisory_unlock(7, k)
							 WHEN pair THEN pg_advisory_unlock_shared(7, k)
							 WHEN excl THEN pg_advisory_unlock(k)
							 ELSE pg_advisory_unlock_shared(k) END;
			END IF;
			COMMIT;
		END IF;
	END LOOP;
END $$;});
}
{
	my @workers;
	for my $i (0 .. 5)
	{
		my $n = $nodes[ $i % 2 ];
		my $s = $n->background_psql('postgres', timeout => $churn_secs + 120);
		bg_begin($s, "CALL advchurn($churn_secs, 'w$i')", "churn_done_$i");
		push @workers, $s;
	}
	my $errors = '';
	for my $i (0 .. 5)
	{
		my (undef, $err) = bg_finish($workers[$i], "churn_done_$i");
		$errors .= $err;
		$workers[$i]->quit;
	}
	is($errors, '', 'churn: every worker ran to the end');
	my @held;
	for my $n (@nodes)
	{
		push @held, map { [ split /\|/ ] } split /\n/,
		  $n->safe_psql('postgres',
			q{SELECT worker, key, mode, extract(epoch FROM t0), extract(epoch FROM t1) FROM held});
	}
	my %by_key;
	push @{ $by_key{ $_->[1] } }, $_ for @held;
	my $violations = 0;
	for my $list (values %by_key)
	{
		my @l = sort { $a->[3] <=> $b->[3] } @$list;
		for my $i (0 .. $#l)
		{
			for my $j ($i + 1 .. $#l)
			{
				last if $l[$j][3] >= $l[$i][4];    # starts after i ended
				next if $l[$i][0] eq $l[$j][0];
				$violations++ if $l[$i][2] eq 'x' || $l[$j][2] eq 'x';
			}
		}
	}
	note sprintf('churn: %d holds over %d keys in %d s', scalar(@held),
		scalar(keys %by_key), $churn_secs);
	cmp_ok(scalar(@held), '>', 100, 'churn: the workers held keys often');
	ok((grep { /,/ } keys %by_key) && (grep { !/,/ } keys %by_key),
		'churn: both key forms were used');
	is($violations, 0, 'churn: 0 violations (never two holders in conflicting modes)');
}
ok( wait_for(
		sub {
			$na->safe_psql('postgres',
				q{SELECT count(*) FROM zk_cluster_locks('/pg_advisory')}) eq '0';
		},
		10,
		'no advisory lock left'),
	'no node is left behind under /pg_advisory/');

done_testing();
