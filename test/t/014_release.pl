# Releases are linearizable: once a release returns, a lock attempt that
# starts afterwards on another server finds the lock free.
#
# Two PostgreSQL servers on one ZooKeeper hand one lock back and forth, 200
# times for each way of releasing it: zk_unlock, COMMIT, ROLLBACK,
# ROLLBACK TO SAVEPOINT and zk_unlock_all.  Each time, the side that just
# released hands over to the other, which must get the lock with a try
# that does not wait (zk_try_*, wait_ms 0): any release still on its way
# to ZooKeeper would make that try return false.  The checking try is
# itself a transaction lock released by its autocommit COMMIT, so the next
# round's first try checks the COMMIT release too.
#
# Then the same handoffs with no gap at all: a procedure on server A
# releases the lock and at once asks server B, through dblink, to take it.
# Server A reaches ZooKeeper through a proxy that holds each of its
# requests a few milliseconds, as a network between hosts would: with
# synchronous release every check finds the lock free; in the background
# mode the checks overtake the deletes, which shows that the check can
# fail.
#
# With zklock.synchronous_release = off the release is sent in the
# background: it must still be visible within a second.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $proxy = zk_proxy($zk);
my $na = pg_with_zklock('a', $zk, "zklock.hosts = '127.0.0.1:$proxy->{port}'\n");
my $nb = pg_with_zklock('b', $zk);

my %s = (
	a => $na->background_psql('postgres'),
	b => $nb->background_psql('postgres'));
$s{$_}->query_safe(q{SELECT zk_try_lock('/rel/warmup'), zk_unlock('/rel/warmup')})
  for qw(a b);

# Each way of releasing: how to take the lock (a try that must succeed),
# how to release it, and what to run after the other side checked.
my @routes = (
	{
		name => 'zk_unlock',
		take => [q{SELECT zk_try_lock('/rel/p')}],
		release => [q{SELECT zk_unlock('/rel/p')}],
		after => [],
	},
	{
		name => 'COMMIT',
		take => [ 'BEGIN', q{SELECT zk_try_xact_lock('/rel/p')} ],
		release => ['COMMIT'],
		after => [],
	},
	{
		name => 'ROLLBACK',
		take => [ 'BEGIN', q{SELECT zk_try_xact_lock('/rel/p')} ],
		release => ['ROLLBACK'],
		after => [],
	},
	{
		name => 'ROLLBACK TO SAVEPOINT',
		take => [ 'BEGIN', 'SAVEPOINT sp', q{SELECT zk_try_xact_lock('/rel/p')} ],
		release => ['ROLLBACK TO SAVEPOINT sp'],
		after => ['COMMIT'],    # the transaction went on meanwhile
	},
	{
		name => 'zk_unlock_all',
		take => [
			q{SELECT zk_try_lock('/rel/p') AND zk_try_lock('/rel/q') AND zk_try_xact_lock('/rel/r')}
		],
		release => [q{SELECT zk_unlock_all()}],
		after => [],
	});

# run a list of statements; returns the last one's output
sub run_all
{
	my ($sess, $stmts) = @_;
	my $out = '';
	$out = $sess->query_safe($_) for @$stmts;
	return $out;
}

my $rounds = 200;
# handoffs with synchronous release, and how many the other server missed
my ($sync_handoffs, $sync_misses) = (0, 0);
for my $route (@routes)
{
	my ($take_failures, $check_failures) = (0, 0);
	my $t0 = time();
	for my $i (1 .. $rounds)
	{
		my ($me, $other) = $i % 2 ? ('a', 'b') : ('b', 'a');
		$take_failures++ if run_all($s{$me}, $route->{take}) ne 't';
		run_all($s{$me}, $route->{release});
		# the other server, right after the release returned
		my $got = $s{$other}->query_safe(
			$route->{name} eq 'zk_unlock_all'
			? q{SELECT zk_try_xact_lock('/rel/p') AND zk_try_xact_lock('/rel/q')}
			: q{SELECT zk_try_xact_lock('/rel/p')});
		$check_failures++ if $got ne 't';
		run_all($s{$me}, $route->{after});
	}
	is($check_failures, 0,
		"$route->{name}: the other server always finds the lock free right after the release ($rounds handoffs)"
	);
	is($take_failures, 0,
		"$route->{name}: and so does the next taker after that server's COMMIT released its check"
	);
	note(sprintf("%s: %d handoffs in %.1f s", $route->{name}, $rounds, time() - $t0));
	$sync_misses += $check_failures;
	$sync_handoffs += $rounds;
}

is( $na->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/rel/p')})
	  + $na->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/rel/q')})
	  + $na->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/rel/r')}),
	0, 'no queue node is left');

# --- the same, with no gap at all: the check on the other server runs in
# the same procedure, through dblink, the moment the release returns, and
# server A's requests take 3 ms to reach ZooKeeper.
$_->safe_psql('postgres', 'CREATE EXTENSION dblink') for ($na, $nb);
my $bconn = 'host=' . $nb->host . ' port=' . $nb->port . ' dbname=postgres';
$na->safe_psql(
	'postgres', qq{
CREATE PROCEDURE handoffs(route text, n int, INOUT missed int DEFAULT 0)
LANGUAGE plpgsql AS \$proc\$
DECLARE
	got boolean;
BEGIN
	PERFORM dblink_connect('b', '$bconn');
	FOR i IN 1 .. n LOOP
		IF route = 'unlock' THEN
			PERFORM zk_lock('/rel/tight');
			PERFORM zk_unlock('/rel/tight');
		ELSIF route = 'commit' THEN
			PERFORM zk_xact_lock('/rel/tight');
			COMMIT;
		ELSIF route = 'rollback' THEN
			PERFORM zk_xact_lock('/rel/tight');
			ROLLBACK;
		ELSE	-- a subtransaction that takes the lock and fails
			BEGIN
				PERFORM zk_xact_lock('/rel/tight');
				RAISE EXCEPTION 'roll back';
			EXCEPTION WHEN raise_exception THEN NULL;
			END;
		END IF;
		SELECT t INTO got
		  FROM dblink('b', \$q\$SELECT zk_try_xact_lock('/rel/tight')\$q\$) AS r(t boolean);
		IF NOT got THEN
			missed := missed + 1;
		END IF;
	END LOOP;
	PERFORM dblink_disconnect('b');
END
\$proc\$});

my %missed;
my @tight = ('unlock', 'commit', 'rollback', 'subtransaction');
zk_proxy_cmd($proxy, 'delay 3');
for my $mode ('off', 'on')
{
	for my $route (@tight)
	{
		$missed{$mode}{$route} = $na->safe_psql('postgres',
			"SET zklock.synchronous_release = $mode; CALL handoffs('$route', "
			  . ($mode eq 'on' ? $rounds : 50) . ")");
	}
}
zk_proxy_cmd($proxy, 'delay 0');
for my $route (@tight)
{
	is($missed{on}{$route}, 0,
		"$route, checked from the same procedure: the other server finds the lock free every time ($rounds handoffs)"
	);
}
my $missed_off = 0;
$missed_off += $missed{off}{$_} for @tight;
note('background release, checked from the same procedure: the lock was still held in '
	  . join(', ', map { "$missed{off}{$_} of 50 ($_)" } @tight));
$sync_misses += $missed{on}{$_} for @tight;
$sync_handoffs += $rounds * @tight;
figure(sync_handoffs => $sync_handoffs, sync_misses => $sync_misses,
	background_missed => join(', ', map { "$missed{off}{$_} of 50 ($_)" } @tight));
cmp_ok($missed_off, '>', 0,
	'in the background mode the same check catches releases still on their way (so it can fail)');

# --- background release: visible within a second
$s{a}->query_safe('SET zklock.synchronous_release = off');
my ($late, $worst) = (0, 0);
for my $i (1 .. 20)
{
	$s{a}->query_safe(q{SELECT zk_lock('/rel/async')});
	$s{a}->query_safe(q{SELECT zk_unlock('/rel/async')});
	my $t0 = time();
	my $first = $s{b}->query_safe(q{SELECT zk_try_xact_lock('/rel/async')});
	$late++ if $first ne 't';
	if ($first ne 't')
	{
		wait_for(sub { $s{b}->query_safe(q{SELECT zk_try_xact_lock('/rel/async')}) eq 't' },
			5, 'the background release');
	}
	my $ms = 1000 * (time() - $t0);
	$worst = $ms if $ms > $worst;
}
cmp_ok($worst, '<', 1000,
	'with synchronous_release off, the release is visible within a second');
note(sprintf(
		"background release: %d of 20 immediate tries found the lock still held; worst %.1f ms",
		$late, $worst));
is($s{a}->query_safe('SELECT releases_pending FROM zk_session()'), '0',
	'and the background release is confirmed');

# --- SET LOCAL: per transaction
$s{a}->query_safe('RESET zklock.synchronous_release');
is($s{a}->query_safe('SHOW zklock.synchronous_release'), 'on', 'synchronous is the default');
$s{a}->query_safe('BEGIN');
$s{a}->query_safe('SET LOCAL zklock.synchronous_release = off');
$s{a}->query_safe(q{SELECT zk_xact_lock('/rel/local')});
$s{a}->query_safe('COMMIT');
is($s{a}->query_safe('SHOW zklock.synchronous_release'), 'on',
	'SET LOCAL lasts for the transaction only');
ok( wait_for(
		sub { $nb->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/rel/local')}) eq '0' },
		5, 'the background release of the SET LOCAL transaction'),
	'and its COMMIT released the lock in the background');

$s{$_}->quit for qw(a b);
zk_proxy_stop($proxy);
$na->stop;
$nb->stop;
done_testing();
