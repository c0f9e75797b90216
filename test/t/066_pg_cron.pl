# Scheduled jobs with pg_cron (doc/coordination.md, "Scheduled jobs with
# pg_cron"): the four recipes, run by pg_cron 1.4 (minute ticks) on two
# PostgreSQL servers sharing one ZooKeeper.  Server A runs its jobs in
# background workers (cron.use_background_workers = on), server B through
# libpq connections to itself (cron.host = its socket directory, where the
# test cluster's trust authentication lets pg_cron in): one server per
# mode, so that every recipe runs in both modes in the same ticks, with two
# servers instead of four.
#
# Every recipe's jobs are scheduled '* * * * *' on both servers, all at
# once, just before a minute boundary; the test watches two ticks (T1, T2).
#
# 1. Once per tick across the fleet: the job runs its body only if it takes
#    a lease (a TTL lock, never released) on a path naming the tick (the
#    minute, UTC); the lease outlives the minute, so a run that starts
#    after the winner's run has finished still finds it.  Two jobs: "race"
#    (both servers at once) and "late" (B's run starts 3 s after the tick,
#    after A's fast body has long finished, where a try-lock released at
#    the end of the body would let B run too).  Each tick: exactly one body
#    row fleet-wide per job; every run succeeded, the winner's says
#    "SELECT 1" (or "1 row" in connection mode) and the other's "SELECT 0"
#    ("0 rows"); in some tick the skipping run asked after the body had
#    run on the other server.
# 2. Skip while the previous run still runs: zk_try_xact_lock on the job's
#    path.  B's run at T1 takes it and holds it until T2 + 8 s (the long
#    run is on B: pg_cron 1.4's scheduler in background worker mode waits
#    for a running job before it starts others); A's runs at T1 and T2 ask
#    1 s after their start, find it held and skip ("SELECT 0", succeeded,
#    asked while the holder ran); no two bodies overlap.  B's run of T2,
#    which pg_cron starts when B's long run ends, runs.
# 3. At most N = 2 runs at once fleet-wide: three jobs per server take a
#    transaction lease of the semaphore (waiting for it), work 2 s; the
#    start and end of each body, recorded on both servers, never overlap
#    more than 2 deep, and do reach 2.
# 4. A fenced job stopped when it loses its lock: on each server a job
#    takes a lock, writes to a ledger on A through dblink (another
#    connection) fenced with zk_fence(path, token, true), then works; the
#    test deletes its node with kazoo; the run fails with zklock's
#    lost-lock error (08006, in cron.job_run_details and the server log);
#    the job's write after the cancel (its handler catches query_canceled,
#    as a "save what we have" step would) is refused by the fence (55000)
#    and never reaches the ledger.  (Its run at T2 does nothing, and
#    succeeds.)
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use POSIX qw(floor strftime);
use Test::More;
use Time::HiRes qw(time sleep);
use Time::Local qw(timegm);
use ZkTest;
use ZkHistory;

my $t_start = time();
my $zk = zk_standalone();
my $sockdir = $PostgreSQL::Test::Cluster::test_pghost;
my $common = "shared_preload_libraries = 'zklock, pg_cron'\n"
  . "cron.database_name = 'postgres'\n"
  . "max_worker_processes = 24\n"
  . "log_line_prefix = '%m [%p] %e %q%a '\n";
my $node_a = pg_with_zklock('a', $zk,
	$common . "cron.use_background_workers = on\n");
my $node_b = pg_with_zklock('b', $zk,
	$common . "cron.use_background_workers = off\ncron.host = '$sockdir'\n");
my $ledger_conn = "host=$sockdir port=" . $node_a->port . " dbname=postgres";

for my $node ($node_a, $node_b)
{
	$node->safe_psql('postgres', q{
		CREATE EXTENSION pg_cron;
		CREATE EXTENSION dblink;

		-- 1. once per tick: true if this run is the tick's one
		CREATE FUNCTION cron_once(job text) RETURNS boolean
		LANGUAGE plpgsql AS $$
		DECLARE
			tick timestamptz := date_trunc('minute', clock_timestamp());
			path text := format('/cron/once/%s/%s', job,
				to_char(tick AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MI'));
		BEGIN
			IF zk_try_lease_lock(path, '2 min') IS NULL THEN
				RAISE NOTICE 'cron_once: % at % ran elsewhere', job, tick;
				RETURN false;
			END IF;
			IF date_trunc('minute', clock_timestamp()) <> tick THEN
				RAISE NOTICE 'cron_once: % at % granted too late', job, tick;
				RETURN false;
			END IF;
			RETURN true;
		END $$;
		CREATE TABLE once_done (job text, tick timestamptz, server text, at timestamptz);
		CREATE FUNCTION report(job text) RETURNS text
		LANGUAGE sql AS $$
			INSERT INTO once_done
			VALUES (job, date_trunc('minute', now()), current_setting('cluster_name'),
			        clock_timestamp())
			RETURNING 'done'
		$$;

		-- 2. skip while the previous run still runs
		CREATE TABLE overlap_plan (long_if_before timestamptz, long_until timestamptz);
		CREATE TABLE overlap_runs (server text, started timestamptz, ended timestamptz);
		CREATE FUNCTION overlap_body() RETURNS text
		LANGUAGE plpgsql AS $$
		DECLARE
			t0 timestamptz := clock_timestamp();
			p overlap_plan;
		BEGIN
			SELECT * INTO p FROM overlap_plan;
			IF t0 < p.long_if_before THEN
				PERFORM pg_sleep_until(p.long_until);
			END IF;
			INSERT INTO overlap_runs
			VALUES (current_setting('cluster_name'), t0, clock_timestamp());
			RETURN 'done';
		END $$;

		-- 3. at most 2 at once
		CREATE TABLE export_runs (server text, job text, started timestamptz, ended timestamptz);
		CREATE FUNCTION export_body(job text) RETURNS text
		LANGUAGE plpgsql AS $$
		DECLARE t0 timestamptz;
		BEGIN
			PERFORM zk_xact_semaphore_acquire('/cron/exports', 2);
			t0 := clock_timestamp();
			PERFORM pg_sleep(2);
			INSERT INTO export_runs
			VALUES (current_setting('cluster_name'), job, t0, clock_timestamp());
			RETURN 'exported';
		END $$;

		-- 4. a fenced job, writing to the ledger on A through dblink (at
		-- the first tick only: later runs do nothing)
		CREATE TABLE fenced_plan (run_if_before timestamptz);
		CREATE PROCEDURE fenced_job(path text, ledger text)
		LANGUAGE plpgsql AS $$
		DECLARE
			token bigint;
			write text := 'BEGIN; SELECT zk_fence(%L, %s, true); '
				'INSERT INTO ledger VALUES (%L, %s, %L); COMMIT';
			code text;
			msg text;
		BEGIN
			IF clock_timestamp() >= (SELECT run_if_before FROM fenced_plan) THEN
				RETURN;
			END IF;
			token := zk_lock(path);
			PERFORM dblink_exec(ledger, format(write, path, token, path, token, 'first'));
			BEGIN
				PERFORM pg_sleep(50);		-- the work; a lost lock stops it
			EXCEPTION WHEN query_canceled THEN
				RAISE WARNING 'fenced_job %: cancelled, writing what it has', path;
			END;
			BEGIN
				PERFORM dblink_exec(ledger, format(write, path, token, path, token, 'later'));
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
				RAISE WARNING 'fenced_job %: later write refused: %: %', path, code, msg;
			END;
			PERFORM zk_unlock(path);
		END $$;
	});
}
$node_a->safe_psql('postgres', q{
	CREATE TABLE ledger (path text, token bigint, step text);
	CREATE TRIGGER fenced_a BEFORE INSERT ON ledger FOR EACH ROW
		WHEN (NEW.path = '/cron/fenced/a')
		EXECUTE FUNCTION zk_fenced('/cron/fenced/a');
	CREATE TRIGGER fenced_b BEFORE INSERT ON ledger FOR EACH ROW
		WHEN (NEW.path = '/cron/fenced/b')
		EXECUTE FUNCTION zk_fenced('/cron/fenced/b');
});

# --- the schedule: every job on both servers, just before a minute boundary

# The first tick T1 is the next minute boundary.  Jobs are scheduled at
# least 5 s away from any boundary: pg_cron may run a job scheduled just
# before a boundary at it, or not, and one scheduled in the first seconds
# after it at the boundary just passed (its scheduler looks at a minute
# only once that minute has begun).
my $into = time() - floor(time() / 60) * 60;
if ($into > 54)
{
	sleep(60 - $into + 5);
}
elsif ($into < 5)
{
	sleep(5 - $into);
}
my $t1 = (floor(time() / 60) + 1) * 60;
my $t2 = $t1 + 60;
my $t3 = $t2 + 60;
sub ts { return strftime('%Y-%m-%d %H:%M:%S+00', gmtime($_[0])); }
note('setup took ' . int(time() - $t_start) . ' s; first tick ' . ts($t1));

my %jobs = (
	a => {
		race => q{SELECT report('race') WHERE cron_once('race')},
		late => q{SELECT report('late') WHERE cron_once('late')},
	},
	b => {
		race => q{SELECT report('race') WHERE cron_once('race')},
		late => q{SELECT pg_sleep(3); SELECT report('late') WHERE cron_once('late')},
	},
);
my %jobname;    # server -> jobid -> job name
for my $name ('a', 'b')
{
	my $node = $name eq 'a' ? $node_a : $node_b;
	my $j = $jobs{$name};
	$j->{overlap} = q{SELECT overlap_body() WHERE zk_try_xact_lock('/cron/overlap')};
	$j->{overlap} = "SELECT pg_sleep(1); $j->{overlap}" if $name eq 'a';
	$j->{"export$_"} = "SELECT export_body('$name$_')" for 1 .. 3;
	$j->{fenced} = "CALL fenced_job('/cron/fenced/$name', '$ledger_conn')";
	my $sql = sprintf(
		q{INSERT INTO overlap_plan VALUES ('%s', '%s'); INSERT INTO fenced_plan VALUES ('%s');},
		$name eq 'b' ? ts($t1 + 30) : '-infinity', ts($t2 + 8), ts($t1 + 30));
	my @names = sort keys %$j;
	for my $job (@names)
	{
		my $cmd = $j->{$job};
		$cmd =~ s/'/''/g;
		$sql .= "SELECT cron.schedule('$job', '* * * * *', '$cmd');\n";
	}
	my @ids = split /\n/, $node->safe_psql('postgres', $sql);
	@{ $jobname{$name} }{@ids} = @names;
}
cmp_ok(time(), '<', $t1 - 1, 'every job scheduled before the first tick');

# the runs of server NAME, started before LIMIT, as hashes: job, status,
# msg (return_message), start and end (epoch seconds)
sub srv { return $_[0] eq 'a' ? $node_a : $node_b; }
sub runs
{
	my ($name, $limit) = @_;
	my $node = srv($name);
	my @rows = split /\n/, $node->safe_psql('postgres', qq{
		SELECT jobid, status, extract(epoch FROM start_time),
		       coalesce(extract(epoch FROM end_time), 0),
		       replace(coalesce(return_message, ''), E'\n', ' ')
		  FROM cron.job_run_details
		 WHERE start_time < to_timestamp($limit)
		 ORDER BY start_time});
	return map {
		my @f = split /\|/, $_, 5;
		+{ server => $name, job => $jobname{$name}{ $f[0] }, status => $f[1],
			start => $f[2], end => $f[3], msg => $f[4] }
	} @rows;
}

# --- 4 first: the fenced jobs lose their locks a few seconds into T1
my %fenced_deleted;
for my $name ('a', 'b')
{
	my $path = "/cron/fenced/$name";
	my $znode;
	ok( wait_for(
			sub {
				$znode = $node_a->safe_psql('postgres',
					"SELECT znode FROM zk_lock_queue('$path') WHERE granted");
				$znode ne '';
			},
			$t1 - time() + 30,
			"$path to be held"),
		"4 ($name): the fenced job holds $path");
	my $full = "/zklock$path/$znode";
	ok(wait_watched($zk, $full), "4 ($name): its holder watches its node");
	$fenced_deleted{$name} = kazoo_delete($zk, $full);
}
# the fenced runs end (the ZooKeeper deletion stops them) within the tick
for my $name ('a', 'b')
{
	ok( wait_for(
			sub {
				grep { $_->{job} eq 'fenced' && $_->{status} =~ /^(succeeded|failed)$/ }
				  runs($name, $t2);
			},
			30, 'the fenced run to end'),
		"4 ($name): the fenced run ended");
}
# --- wait for T2's runs to end, then stop everything before T3
# (the overlap job's run at T2 on the server that holds its lock starts
# only when its long run has ended: pg_cron queues it; see 2)
my @expected = qw(race late export1 export2 export3 fenced);
for my $name ('a', 'b')
{
	my $node = $name eq 'a' ? $node_a : $node_b;
	ok( wait_for(
			sub {
				my @r = grep { $_->{start} >= $t2 - 1 } runs($name, $t3);
				my %ended = map { $_->{job} => 1 }
				  grep { $_->{status} =~ /^(succeeded|failed)$/ } @r;
				!grep { !$ended{$_} } @expected;
			},
			$t3 - time() - 5, 'every job of the second tick to end'),
		$node->name . ': every job ran and ended at the second tick');
}
# the holder's overlap run queued behind its long run (see 2) may still be
# running: wait until nothing runs
for my $name ('a', 'b')
{
	my $node = $name eq 'a' ? $node_a : $node_b;
	ok( wait_for(
			sub { !grep { $_->{status} !~ /^(succeeded|failed)$/ } runs($name, $t3) },
			$t3 - time() - 2, 'no run in progress'),
		$node->name . ': no run in progress');
}
my %runs = (a => [ runs('a', $t3) ], b => [ runs('b', $t3) ]);
is(scalar(grep { $_->{start} < $t1 - 1 } map { @{ $runs{$_} } } 'a', 'b'), 0,
	'no run before the first tick');
$_->safe_psql('postgres', q{SELECT cron.unschedule(jobid) FROM cron.job})
  for ($node_a, $node_b);

# every run, for the diagnostics of any failure below
for my $name ('a', 'b')
{
	note(sprintf("%s: %s %s %.2f-%.2f %s", $name, $_->{job}, $_->{status},
			$_->{start} - $t1, $_->{end} - $t1, $_->{msg}))
	  for @{ $runs{$name} };
}

# tick of a run: 1 or 2 (the minute it started in)
sub tick_of { return 1 + floor(($_[0]->{start} - $t1) / 60); }

# --- 1. once per tick
# pg_cron's return_message for the command's one row, or none: the command
# tag in a background worker, psql-like in connection mode
my $ran_msg = qr/SELECT 1|1 row/;
my $skipped_msg = qr/SELECT 0|0 rows/;
my $late_races = 0;
my ($once_runs, $once_bodies) = (0, 0);
# every body row of both servers: [job, tick, time of the body] (epoch)
my @once_done = map { [ split /\|/ ] } map {
	split /\n/, $_->safe_psql('postgres',
		q{SELECT job, extract(epoch FROM tick), extract(epoch FROM at) FROM once_done})
} $node_a, $node_b;
for my $job ('race', 'late')
{
	my %ran;        # tick -> the runs that ran the body
	my %skipped;    # tick -> the runs that skipped it
	for my $name ('a', 'b')
	{
		my @r = grep { $_->{job} eq $job } @{ $runs{$name} };
		is(scalar(@r), 2, "1 ($job, $name): one run per tick");
		$once_runs += @r;
		for my $r (@r)
		{
			is($r->{status}, 'succeeded', "1 ($job, $name): the run succeeded")
			  or diag($r->{msg});
			like($r->{msg}, qr/^(?:$ran_msg|$skipped_msg)$/,
				"1 ($job, $name): it says whether it ran the body");
			push @{ $ran{ tick_of($r) } }, $r if $r->{msg} =~ /^$ran_msg$/;
			push @{ $skipped{ tick_of($r) } }, $r if $r->{msg} =~ /^$skipped_msg$/;
		}
	}
	for my $tick (1, 2)
	{
		is(scalar(@{ $ran{$tick} // [] }), 1,
			"1 ($job): exactly one server ran the body at tick $tick");
		my @rows = grep { $_->[0] eq $job && $_->[1] == $t1 + 60 * ($tick - 1) }
		  @once_done;
		my $rows = @rows;
		is($rows, 1, "1 ($job): one body row fleet-wide for tick $tick");
		$once_bodies += $rows;

		# the race a try-lock released at the end of the body loses: the
		# skipping run asked (B: 3 s after its start) after the body had run
		my ($win) = @{ $ran{$tick} // [] };
		my ($lose) = @{ $skipped{$tick} // [] };
		next unless $win && $lose;
		next unless @rows == 1;
		my $body_at = $rows[0][2];
		my $asked = $lose->{start} + ($lose->{server} eq 'b' && $job eq 'late' ? 3 : 0);
		$late_races++ if $body_at < $asked;
	}
}
cmp_ok($late_races, '>=', 1,
	'1: in some tick the skipping run asked after the body had run elsewhere');
figure(once_per_tick_runs => $once_runs, once_per_tick_bodies => $once_bodies,
	once_per_tick_late_races => $late_races);

# --- 2. skip while the previous run still runs
{
	my @bodies;
	for my $node ($node_a, $node_b)
	{
		push @bodies, map { [ split /\|/ ] } split /\n/, $node->safe_psql('postgres',
			qq{SELECT server, extract(epoch FROM started), extract(epoch FROM ended) FROM overlap_runs WHERE started < to_timestamp($t3)});
	}
	my ($long) = grep { $_->[2] - $_->[1] > 30 } @bodies;
	ok($long, '2: one body ran from the first tick past the second')
	  or diag(explain(\@bodies));
	$long //= [ 'none', 0, 0 ];
	my $holder = $long->[0];
	my $other = $holder eq 'a' ? 'b' : 'a';
	my @other_runs = grep { $_->{job} eq 'overlap' } @{ $runs{$other} };
	is(scalar(@other_runs), 2, "2: the other server ($other) ran the job at both ticks");
	for my $r (@other_runs)
	{
		is($r->{status}, 'succeeded', "2: ${other}'s run at tick " . tick_of($r) . ' succeeded');
		like($r->{msg}, qr/^$skipped_msg$/, "2: ${other}'s run at tick " . tick_of($r) . ' skipped the body');
		cmp_ok($r->{start} + ($other eq 'a' ? 1 : 0), '<', $long->[2],
			"2: ${other}'s run at tick " . tick_of($r) . ' asked while the long body ran');
	}
	my @holder_runs = grep { $_->{job} eq 'overlap' } @{ $runs{$holder} };
	is(scalar(grep { $_->{status} ne 'succeeded' } @holder_runs), 0,
		"2: every run of the holder ($holder) succeeded");
	my @spans = map { [ $_, @{ $bodies[$_] }[ 1, 2 ] ] } 0 .. $#bodies;
	is(scalar(@{ overlapping_holders(\@spans) }), 0,
		'2: no two bodies ran at the same time');
	figure(overlap_skipped_runs => scalar(grep { $_->{msg} =~ /^$skipped_msg$/ }
		  map { grep { $_->{job} eq 'overlap' } @{ $runs{$_} } } 'a', 'b'));
}

# --- 3. at most 2 at once
{
	my @spans;
	my $id = 0;
	for my $node ($node_a, $node_b)
	{
		push @spans, map { [ $id++, split /\|/ ] } split /\n/,
		  $node->safe_psql('postgres',
			qq{SELECT extract(epoch FROM started), extract(epoch FROM ended) FROM export_runs WHERE started < to_timestamp($t3)});
	}
	my $max = max_concurrent(\@spans);
	is(scalar(@spans), 12, '3: twelve bodies ran (3 jobs x 2 servers x 2 ticks)');
	is($max, 2, '3: at most 2 ran at once, and 2 did');
	my @bad = grep { $_->{job} =~ /^export/ && $_->{status} ne 'succeeded' }
	  map { @{ $runs{$_} } } 'a', 'b';
	is(scalar(@bad), 0, '3: every export run succeeded');
	figure(semaphore_max_concurrent_runs => $max);
}

# --- 4. the fenced job: failed with the lost-lock error, later write refused
for my $name ('a', 'b')
{
	my $node = $name eq 'a' ? $node_a : $node_b;
	my $path = "/cron/fenced/$name";
	my ($r, $r2) = sort { $a->{start} <=> $b->{start} }
	  grep { $_->{job} eq 'fenced' } @{ $runs{$name} };
	is($r2 && $r2->{status}, 'succeeded', "4 ($name): its run at tick 2 (doing nothing) succeeded");
	$r //= { status => 'none', msg => '', end => 0 };
	is($r->{status}, 'failed', "4 ($name): the fenced run failed");
	like($r->{msg}, qr/ZooKeeper lock "\Q$path\E" was lost/,
		"4 ($name): with zklock's lost-lock error");
	my $log = slurp_file($node->logfile);
	like($log, qr/ 08006 .*ERROR:  ZooKeeper lock "\Q$path\E" was lost/,
		"4 ($name): logged with SQLSTATE 08006");
	like($log, qr/WARNING:  fenced_job \Q$path\E: later write refused: 55000: fencing token \d+ no longer holds lock path "\Q$path\E"/,
		"4 ($name): its later write was refused by the fence (55000)");
	is($node_a->safe_psql('postgres',
			"SELECT string_agg(step, ',' ORDER BY step) FROM ledger WHERE path = '$path'"),
		'first', "4 ($name): the ledger holds its first write only");
	# when the run ended: its ERROR's log time (pg_cron 1.4's scheduler
	# may record end_time later, see the doc)
	if ($log =~ /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] 08006 .*ERROR:  ZooKeeper lock "\Q$path\E" was lost/m)
	{
		my ($y, $mo, $d, $h, $mi, $sec) = split /[- :]/, $1;
		my $ended = timegm(0, $mi, $h, $d, $mo - 1, $y) + $sec;
		figure("fenced_${name}_deletion_to_stop_ms" =>
			  int(($ended - $fenced_deleted{$name}) * 1000));
	}
}

figure(runtime_s => int(time() - $t_start));
done_testing();
