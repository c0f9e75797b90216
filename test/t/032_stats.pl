# Cumulative statistics (zk_stat, zk_stat_acquisitions, zk_stat_histogram,
# zk_stat_reset) on a server that preloads zklock.
#
# A scripted workload on three backends, whose every acquisition, wait,
# refusal, timeout, cancel, deadlock and expiry is tallied here as it
# happens; the views must show exactly the tallies, per kind, mode and
# scope and in total.  Then a reset zeroes them, and only a superuser may
# reset.  (Without preloading, the functions' ERROR is tested by
# pg_regress, sql/stats.sql.)  Prometheus's postgres_exporter, with the
# custom queries of doc/postgres_exporter.yaml, exports the same numbers.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;
use Time::HiRes qw(usleep);
use HTTP::Tiny;

my $zk = zk_standalone();
my $node = pg_with_zklock('stat', $zk,
	"shared_preload_libraries = 'zklock'\ndeadlock_timeout = '200ms'\n");

sub stat_row
{
	my ($cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM zk_stat");
}

$node->safe_psql('postgres', 'SELECT zk_stat_reset()');
is(stat_row('acquired, waits, sessions_opened, requests'), '0|0|0|0',
	'after a reset every counter is zero');

my $a = verbose_session($node);
my $b = verbose_session($node);
my $c = verbose_session($node);
# one backend watches the queues (a new backend per look would open a
# ZooKeeper session each time)
my $obs = verbose_session($node);

sub queued
{
	my ($path, $n, $what) = @_;
	return wait_for(
		sub { $obs->query_safe("SELECT count(*) FROM zk_lock_queue('$path')") eq $n },
		10, $what);
}
my $bpid = $b->query_safe('SELECT pg_backend_pid()');
my $cpid = $c->query_safe('SELECT pg_backend_pid()');

# tallies: "kind|mode|scope" => acquired, and the totals
my %acq;
my ($refused, $waits, $timeouts, $canceled, $deadlocks) = (0, 0, 0, 0, 0);

# --- acquisitions of every kind, none waiting
for (1 .. 3)
{
	$a->query_safe(q{SELECT zk_lock('/st/a')});
	$a->query_safe(q{SELECT zk_unlock('/st/a')});
	$acq{'lock|exclusive|session'}++;
}
$a->query_safe(q{BEGIN; SELECT zk_xact_lock('/st/x'); COMMIT});
$acq{'lock|exclusive|transaction'}++;
$a->query_safe(q{SELECT zk_rlock('/st/r'); SELECT zk_unlock('/st/r')});
$acq{'lock|shared|session'}++;
$a->query_safe(q{SELECT zk_lock(ARRAY['/st/m1', '/st/m2']); SELECT zk_unlock(ARRAY['/st/m1', '/st/m2'])});
$acq{'lock set|exclusive|session'}++;
$a->query_safe(q{SELECT zk_semaphore_acquire('/st/sem', 2); SELECT zk_semaphore_release('/st/sem')});
$acq{'semaphore|lease|session'}++;
$a->query_safe(q{SELECT zk_lock('/st/a'); SELECT zk_lock('/st/a'); SELECT zk_unlock('/st/a'); SELECT zk_unlock('/st/a')});
$acq{'lock|exclusive|session'} += 2;    # a stacked hold is an acquisition too
is(stat_row('waits, refused'), '0|0', 'no wait and no refusal yet');

# --- refusals: a try at once, and a try that waits 300 ms
$a->query_safe(q{SELECT zk_lock('/st/h')});
$acq{'lock|exclusive|session'}++;
is($b->query_safe(q{SELECT zk_try_lock('/st/h')}), 'f', 'B: a try is refused');
$refused++;
is(stat_row('waits'), '0', 'a try with wait_ms = 0 does not count as a wait');
is($b->query_safe(q{SELECT zk_try_lock('/st/h', 300)}), 'f', 'B: a try with wait_ms is refused');
$refused++;
$waits++;

# --- a wait that ends in a grant: B waits, A releases after ~500 ms
bg_begin($b, q{SELECT zk_lock('/st/h') > 0 AS got}, 'b_got');
ok(queued('/st/h', 2, 'B queued'), 'B waits for A');
usleep(500_000);
$a->query_safe(q{SELECT zk_unlock('/st/h')});
my ($out) = bg_finish($b, 'b_got');
like($out, qr/\bt\b/, 'B gets the lock once A releases it');
$acq{'lock|exclusive|session'}++;
$waits++;
$b->query_safe(q{SELECT zk_unlock('/st/h')});
cmp_ok(stat_row('wait_time'), '>=', 500 + 300,
	'wait_time counts both waits (at least 300 + 500 ms)');

# --- two lock timeouts
$a->query_safe(q{SELECT zk_lock('/st/h')});
$acq{'lock|exclusive|session'}++;
for (1 .. 2)
{
	my (undef, $err) = bg_query($b,
		q{SET lock_timeout = '200ms'; SELECT zk_lock('/st/h'); RESET lock_timeout});
	like($err, qr/ERROR:  55P03: canceling statement due to lock timeout/, "B: lock timeout $_ (55P03)");
	$timeouts++;
	$waits++;
}

# --- a cancel
bg_begin($b, q{SELECT zk_lock('/st/h') > 0 AS got}, 'b_cancel');
ok(queued('/st/h', 2, 'B queued'), 'B waits again');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($bpid)");
(undef, my $err) = bg_finish($b, 'b_cancel');
like($err, qr/ERROR:  57014: canceling statement due to user request/, 'B: canceled (57014)');
$canceled++;
$waits++;
$a->query_safe(q{SELECT zk_unlock('/st/h')});

# --- a deadlock: A holds /st/d1 and waits for /st/d2, B holds /st/d2 and
# asks for /st/d1.  The victim is the waiter whose check finds the cycle,
# the one that published its wait last: B, whose deadlock_timeout is the
# longer (with equal ones, a loaded machine can fire A's timer after B's)
$a->query_safe(q{SELECT zk_lock('/st/d1')});
$b->query_safe(q{SELECT zk_lock('/st/d2')});
$acq{'lock|exclusive|session'} += 2;
bg_begin($a, q{SELECT zk_lock('/st/d2') > 0 AS got}, 'a_got');
ok(queued('/st/d2', 2, 'A queued'), 'A waits for B');
(undef, $err) = bg_query($b,
	q{SET deadlock_timeout = '2s'; SELECT zk_lock('/st/d1'); RESET deadlock_timeout});
like($err, qr/ERROR:  40P01: deadlock detected/, 'B: deadlock (40P01)');
$b->query_safe(q{RESET deadlock_timeout});
$deadlocks++;
$waits++;
$b->query_safe(q{SELECT zk_unlock_all()});
($out) = bg_finish($a, 'a_got');
like($out, qr/\bt\b/, 'A gets the lock once B released it');
$acq{'lock|exclusive|session'}++;
$waits++;
$a->query_safe(q{SELECT zk_unlock_all()});

# --- an expiry: C holds two locks and is frozen past its session timeout;
# A waits for one of them and gets it when the session expired
$c->query_safe(q{SET zklock.session_timeout = '2s'});
$c->query_safe(q{SELECT zk_lock('/st/c1'); SELECT zk_rlock('/st/c2')});
$acq{'lock|exclusive|session'}++;
$acq{'lock|shared|session'}++;
bg_begin($a, q{SELECT zk_lock('/st/c1') > 0 AS got}, 'a_c1');
ok(queued('/st/c1', 2, 'A queued'), 'A waits for C');
kill 'STOP', $cpid;
($out) = bg_finish($a, 'a_c1');
kill 'CONT', $cpid;
like($out, qr/\bt\b/, "A gets C's lock once C's session expired");
$acq{'lock|exclusive|session'}++;
$waits++;
(undef, $err) = bg_query($c, q{SELECT 1});
like($err, qr/ERROR:  08006: ZooKeeper session expired: 2 locks were lost/,
	'C is told it lost its two locks (08006)');
# (the ERROR may have cancelled the statement; the next one forgets the
# locks and closes the expired session, counting both)
$c->query_safe(q{SELECT 2});
$a->query_safe(q{SELECT zk_unlock_all()});

# --- the views against the tallies
my $acquired = 0;
$acquired += $_ for values %acq;
is(stat_row('acquired, refused, waits, timeouts, canceled, deadlocks, failed'),
	"$acquired|$refused|$waits|$timeouts|$canceled|$deadlocks|0",
	"zk_stat: $acquired acquired, $refused refused, $waits waits, $timeouts timeouts, $canceled canceled, $deadlocks deadlock");
is(stat_row('sessions_opened, sessions_expired, locks_lost'), '4|1|2',
	'zk_stat: four sessions opened (A, B, C, the observer), one expired with its two locks');
is(stat_row('releases_failed'), '0', 'zk_stat: no release failed');
ok(wait_for(sub { stat_row('releases_pending') eq '0' }, 10, 'releases confirmed'),
	'zk_stat: no release pending once the backends are idle');

my $rows = $node->safe_psql('postgres',
	q{SELECT kind || '|' || mode || '|' || scope || '=' || acquired
	  FROM zk_stat_acquisitions WHERE acquired > 0 ORDER BY 1});
my $want = join("\n", map { "$_=$acq{$_}" } sort keys %acq);
is($rows, $want, 'zk_stat_acquisitions: every kind, mode and scope as tallied');
is($node->safe_psql('postgres',
		q{SELECT refused || '|' || waits || '|' || timeouts || '|' || canceled || '|' || deadlocks
		  FROM zk_stat_acquisitions WHERE kind = 'lock' AND mode = 'exclusive' AND scope = 'session'}),
	"$refused|$waits|$timeouts|$canceled|$deadlocks",
	'zk_stat_acquisitions: the refusals, waits and errors were all exclusive session locks');
is($node->safe_psql('postgres', q{SELECT count(*) FROM zk_stat_acquisitions}), '12',
	'zk_stat_acquisitions: one row per kind, mode and scope that exists');

# histograms: cumulative, ending with the totals
is($node->safe_psql('postgres',
		q{SELECT max(count) FILTER (WHERE le = 'Infinity') FROM zk_stat_histogram WHERE histogram = 'wait'}),
	"$waits", 'zk_stat_histogram: the wait histogram counts every wait');
is($node->safe_psql('postgres',
		q{SELECT max(count) FILTER (WHERE le = 'Infinity') = (SELECT requests FROM zk_stat)
		  FROM zk_stat_histogram WHERE histogram = 'request'}),
	't', 'zk_stat_histogram: the request histogram counts every request');
is($node->safe_psql('postgres',
		q{SELECT bool_and(count >= coalesce(prev, 0)) FROM
		  (SELECT count, lag(count) OVER (PARTITION BY histogram ORDER BY le) AS prev
		     FROM zk_stat_histogram) h}),
	't', 'zk_stat_histogram: counts are cumulative');
cmp_ok(stat_row('requests'), '>', $acquired, 'zk_stat: ZooKeeper requests were counted');
cmp_ok(stat_row('request_time'), '>', 0, 'zk_stat: and their time');

# --- Prometheus's postgres_exporter with doc/postgres_exporter.yaml
# scrapes the same numbers
{
	my $root = repo_root();
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $dsn = 'host=' . $node->host . ' port=' . $node->port
	  . ' dbname=postgres sslmode=disable';
	local $ENV{DATA_SOURCE_NAME} = $dsn;
	my ($eout, $eerr) = ('', '');
	my $exporter = IPC::Run::start(
		[ 'prometheus-postgres-exporter', "--web.listen-address=127.0.0.1:$port",
		  "--extend.query-path=$root/doc/postgres_exporter.yaml",
		  '--disable-default-metrics', '--disable-settings-metrics' ],
		'>', \$eout, '2>', \$eerr);
	my $metrics = '';
	wait_for(
		sub {
			my $r = HTTP::Tiny->new->get("http://127.0.0.1:$port/metrics");
			$metrics = $r->{success} ? $r->{content} : '';
			return $metrics =~ /^zklock_acquired\{/m;
		},
		20, 'the exporter');
	$exporter->kill_kill;
	my %m;
	for my $line (split /\n/, $metrics)
	{
		next if $line =~ /^#/;
		$m{$1} = $2 if $line =~ /^(zklock\S*?)(?:\{[^}]*\})? (\S+)$/
		  && $line !~ /\{[^}]*(kind|histogram)=/;
		$m{"$1|$2"} = $3
		  if $line =~ /^(zklock_latency_microseconds_count)\{histogram="(\w+)"[^}]*\} (\S+)$/;
	}
	is(join('|', map { $m{$_} // 'missing' } qw(zklock_acquired zklock_refused zklock_waits zklock_timeouts zklock_canceled zklock_deadlocks zklock_sessions_expired zklock_locks_lost)),
		"$acquired|$refused|$waits|$timeouts|$canceled|$deadlocks|1|2",
		'postgres_exporter exports the counters')
	  or diag($eerr);
	is($m{'zklock_latency_microseconds_count|wait'} // 'missing', $waits,
		'and the wait histogram');
	like($metrics,
		qr/^zklock_acquisitions_acquired\{kind="lock",mode="exclusive",scope="session",[^}]*\} $acq{'lock|exclusive|session'}$/m,
		'and the acquisitions by kind, mode and scope');
}

# --- reset
my $before = stat_row('stats_reset');
$node->safe_psql('postgres', q{CREATE ROLE plain LOGIN});
my ($rc, $o, $e) = $node->psql('postgres', 'SET ROLE plain; SELECT zk_stat_reset()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($e, qr/ERROR:  42501: permission denied for function zk_stat_reset/,
	'a role that is not a superuser may not reset (42501)');
is($node->safe_psql('postgres', q{SET ROLE plain; SELECT acquired > 0 FROM zk_stat}), 't',
	'but may read the statistics');
$node->safe_psql('postgres', 'SELECT zk_stat_reset()');
is(stat_row('acquired, refused, waits, timeouts, canceled, deadlocks, sessions_opened, sessions_expired, locks_lost, requests'),
	'0|0|0|0|0|0|0|0|0|0', 'zk_stat_reset zeroes every counter');
is($node->safe_psql('postgres', q{SELECT sum(count) FROM zk_stat_histogram}), '0',
	'and the histograms');
is(stat_row("stats_reset > '$before'"), 't', 'and moves stats_reset');

$a->quit;
$b->quit;
$c->quit;
$obs->quit;
done_testing();
