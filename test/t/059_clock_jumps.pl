# The wall clock of a PostgreSQL server jumps forward and back by an hour
# while its backends hold locks and leases and wait for locks: nothing of
# zklock's depends on it.
#
# Server A runs with a fake clock (ZkFaults' pg_with_fake_clock: Debian's
# libfaketime preloaded into the postmaster, the wall clock's offset read
# from a file that fake_clock_set rewrites, the monotonic clocks left
# alone); server B, the ZooKeeper server and this script keep the real
# time.
#
# - The fake clock does what it should: A's now() and clock_timestamp()
#   jump by an hour, forward and back, while CLOCK_MONOTONIC does not (the
#   length of A's ZooKeeper connection, zk_session().connected_for, which
#   zklock measures on the monotonic clock, moves on by seconds, not by an
#   hour).
# - No lock is lost or granted by a jump: a session lock, a transaction
#   lock and two leases (one of them taken in the open transaction) stay
#   held across a jump forward and one back, in A's zk_locks (the locks)
#   and as ZooKeeper's queues show them from B (all four) (B's zk_try_lock fails on each);
#   the statement the transaction runs meanwhile is not cancelled, and its
#   COMMIT succeeds.
# - No lease is lost or kept on the local wall clock alone: an hour
#   forward, far past its ttl on A's wall clock, a lease is renewed, and
#   its new expiry is the ZooKeeper server's (about now + ttl in real
#   time, not an hour on); an hour back, a lease whose ttl passed in real
#   time cancels the statement of the transaction that took it (08006,
#   within ttl + 3 s of the grant, measured here), and a session-level
#   lease whose ttl passed cannot be renewed (55000) and goes to B.
# - No false deadlock: a wait that lasts many deadlock_timeouts across both
#   jumps ends with the lock, not with 40P01; a real deadlock whose waits
#   see the clock jump forward is found (one 40P01); and a deadlock that
#   only A's check can find is found within deadlock_timeout + 4 s
#   whether A's clock jumps forward or back during its deadlock_timeout.
# - lock_timeout ends a wait at its time, measured on this script's
#   monotonic clock, whether the clock jumps forward or back during the
#   wait: not before lock_timeout, and within lock_timeout + 4 s.
#
# How each clock is used, and why a jump cannot grant, lose or keep a
# lock, is in doc/internals.md ("Clocks").
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep clock_gettime CLOCK_MONOTONIC);
use ZkTest;
use ZkFaults;

my $hour = 3600;
my $zk = zk_standalone();
my $conf = "deadlock_timeout = '200ms'\nzklock.session_timeout = '4s'\n";
my $na = pg_with_fake_clock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

# this script's monotonic clock, in seconds
sub mono { return clock_gettime(CLOCK_MONOTONIC); }

# A's wall clock minus the real one, in seconds, read by session S
sub offset_of
{
	my ($s, $expr) = @_;
	my $t0 = time();
	my $v = $s->query_safe("SELECT extract(epoch FROM $expr)");
	return $v - ($t0 + time()) / 2;
}

# the length of S's ZooKeeper connection, in seconds (monotonic, in zklock)
sub connected_for
{
	my ($s) = @_;
	return $s->query_safe('SELECT extract(epoch FROM connected_for) FROM zk_session()');
}

# --- 1. the fake clock: the wall clock jumps, the monotonic one does not
my $s = verbose_session($na);
$s->query_safe(q{SELECT zk_lock('/clk/session')});
my $c0 = connected_for($s);
cmp_ok(abs(offset_of($s, 'clock_timestamp()')), '<', 5, 'A\'s clock starts at the real time');
fake_clock_set($na, $hour);
my $fwd = offset_of($s, 'clock_timestamp()');
ok(abs($fwd - $hour) < 5, sprintf('an hour forward: clock_timestamp() is %.1f s ahead', $fwd));
my $fwd_now = offset_of($s, 'now()');
ok(abs($fwd_now - $hour) < 5, sprintf('an hour forward: now() is %.1f s ahead', $fwd_now));
my $c1 = connected_for($s);
ok($c1 >= $c0 && $c1 - $c0 < 30,
	sprintf('an hour forward: CLOCK_MONOTONIC did not jump (connected_for %.1f s, then %.1f s)',
		$c0, $c1));
fake_clock_set($na, -$hour);
my $back = offset_of($s, 'clock_timestamp()');
ok(abs($back + $hour) < 5, sprintf('an hour back: clock_timestamp() is %.1f s behind', -$back));
my $c2 = connected_for($s);
ok($c2 >= $c1 && $c2 - $c0 < 30,
	sprintf('an hour back: CLOCK_MONOTONIC did not jump (connected_for %.1f s)', $c2));
fake_clock_set($na, 0);

# --- 2. locks and leases held across both jumps
my @held = ('/clk/session', '/clk/lease', '/clk/xact', '/clk/xlease');
my $lease = $s->query_safe(q{SELECT zk_lease_lock('/clk/lease', '30 s')});
my $t = verbose_session($na);
$t->query_safe('BEGIN');
$t->query_safe(q{SELECT zk_xact_lock('/clk/xact')});
$t->query_safe(q{SELECT zk_lease_lock('/clk/xlease', '20 s')});
my $sb = verbose_session($nb);
my $held_list = join(', ', map { "'$_'" } @held);

# the granted nodes of the four paths, as ZooKeeper shows them to B
sub granted_from_b
{
	return $nb->safe_psql('postgres',
		"SELECT string_agg(p || ':' || cluster_name, ',' ORDER BY p)
		 FROM unnest(ARRAY[$held_list]) AS p, LATERAL zk_lock_queue(p) WHERE granted");
}
my $granted = join(',', map { "$_:a" } sort @held);
is(granted_from_b(), $granted, 'before: B sees the four holds of A');

for my $jump ([ 'an hour forward', $hour ], [ 'an hour back', -$hour ])
{
	my ($name, $secs) = @$jump;
	fake_clock_set($na, $secs);
	my ($out, $err) = bg_query($t, 'SELECT pg_sleep(1.5)');
	is($err, '', "$name: the transaction's statement is not cancelled");
	# (a lease is held by its TTL node, not by a backend: zk_locks does
	# not list it)
	is($s->query_safe(q{SELECT string_agg(path || ':' || scope, ',') FROM zk_locks}),
		'/clk/session:session', "$name: A's zk_locks still shows the session lock");
	is($t->query_safe(q{SELECT string_agg(path || ':' || scope, ',') FROM zk_locks}),
		'/clk/xact:transaction', "$name: and the transaction lock");
	is(granted_from_b(), $granted, "$name: ZooKeeper still has the four holds of A");
	is($sb->query_safe(
			"SELECT string_agg(zk_try_lock(p)::text, ',') FROM unnest(ARRAY[$held_list]) AS p"),
		'false,false,false,false', "$name: B cannot take any of them");
	# renewed an hour away from its expiry on A's clock: held, and its
	# new expiry is the ZooKeeper server's
	($out, $err) = bg_query($s,
		"SELECT extract(epoch FROM zk_lease_renew('/clk/lease', $lease))");
	is($err, '', "$name: the lease is renewed");
	my $in = ($out || 0) - time();
	ok($in > 20 && $in < 40,
		sprintf('%s: its new expiry is the server\'s now + 30 s (%.1f s from the real now)',
			$name, $in));
}
fake_clock_set($na, 0);
my ($out, $err) = bg_query($t, 'COMMIT');
is($err, '', 'the transaction that held a lock and a lease across both jumps commits');
$s->query_safe(q{SELECT zk_lease_unlock('/clk/lease', } . $lease . ')');
$s->query_safe(q{SELECT zk_unlock_all()});
$sb->query_safe(q{SELECT zk_lease_unlock('/clk/xlease', fencing_token)
	FROM zk_lock_queue('/clk/xlease') WHERE granted});

# --- 3. an hour back does not keep a lease past its ttl
{
	fake_clock_set($na, 0);
	$t->query_safe('BEGIN');
	my $t0 = mono();
	$t->query_safe(q{SELECT zk_lease_lock('/clk/short', '3 s')});
	fake_clock_set($na, -$hour);
	($out, $err) = bg_query($t, 'SELECT pg_sleep(30)');
	my $secs = mono() - $t0;
	error_is($err, '08006', qr{ZooKeeper lease on lock "/clk/short" ran out},
		'an hour back: the lease\'s ttl runs out all the same, and the statement is cancelled (08006)');
	ok($secs < 3 + 3, sprintf('an hour back: within ttl + 3 s of the grant (%.2f s)', $secs));
	figure(lease_ttl_cancel_after_backward_jump_ms => int($secs * 1000));
	$t->query_safe('ROLLBACK');

	my $tok = $s->query_safe(q{SELECT zk_lease_lock('/clk/short2', '3 s')});
	$t0 = mono();
	usleep(100_000) while mono() - $t0 < 4;
	($out, $err) = bg_query($s, "SELECT zk_lease_renew('/clk/short2', $tok)");
	error_is($err, '55000', qr{ZooKeeper lease \d+ on lock "/clk/short2" has run out|no ZooKeeper lease with token},
		'an hour back: a lease past its ttl in real time cannot be renewed (55000)');
	($out, $err) = bg_query($sb, q{SET lock_timeout = '10s'; SELECT zk_lease_lock('/clk/short2', '3 s') > 0});
	is($out, 't', 'an hour back: and B takes the lock');
	fake_clock_set($na, 0);
}

# --- 4. waits across both jumps, past many deadlock_timeouts
{
	$sb->query_safe(q{SELECT zk_lock('/clk/w')});
	my $w = verbose_session($na);
	bg_begin($w, q{SELECT zk_lock('/clk/w') > 0}, 'w_done');
	ok(wait_queue_len($nb, '/clk/w', 2, 10, 'A waits'), 'A waits for B\'s lock');
	fake_clock_set($na, $hour);
	usleep(1_000_000);
	fake_clock_set($na, -$hour);
	usleep(1_000_000);
	fake_clock_set($na, 0);
	usleep(500_000);
	ok(!bg_done($w, 'w_done'), 'after both jumps, A still waits (nothing ended the wait)');
	$sb->query_safe(q{SELECT zk_unlock('/clk/w')});
	($out, $err) = bg_finish($w, 'w_done');
	is($out, 't', 'A gets the lock when B releases it');
	unlike($err, qr/40P01/, 'no false deadlock (40P01) across the jumps');
	$w->query_safe(q{SELECT zk_unlock_all()});

	# a real deadlock, its waits seeing the clock jump forward: found
	$w->query_safe(q{SELECT zk_lock('/clk/d1')});
	$sb->query_safe(q{SELECT zk_lock('/clk/d2')});
	bg_begin($w, q{SELECT zk_lock('/clk/d2') > 0}, 'd_a');
	ok(wait_queue_len($na, '/clk/d2', 2, 10, 'A waits for d2'), 'deadlock: A waits for B');
	fake_clock_set($na, $hour);
	my $t0 = mono();
	bg_begin($sb, q{SELECT zk_lock('/clk/d1') > 0}, 'd_b');
	# the victim's session locks go with zk_unlock_all, then the other wait ends
	wait_for(sub { bg_done($w, 'd_a') || bg_done($sb, 'd_b') }, 60, 'a deadlock victim');
	my $secs = mono() - $t0;
	my @order = bg_done($w, 'd_a') ? ([ $w, 'd_a' ], [ $sb, 'd_b' ]) : ([ $sb, 'd_b' ], [ $w, 'd_a' ]);
	my @errs;
	for my $o (@order)
	{
		my ($o_out, $o_err) = bg_finish(@$o);
		push @errs, $o_err;
		$o->[0]->query_safe(q{SELECT zk_unlock_all()});
	}
	is(scalar(grep { /40P01/ } @errs), 1,
		sprintf('a real deadlock across a jump forward is found: one 40P01 (after %.1f s)', $secs));
	fake_clock_set($na, 0);
	$w->quit;
}

# a real deadlock that only A's check can find: B waits first (its own
# check, after its deadlock_timeout, finds no cycle), then A closes the
# cycle, and A's clock jumps during A's deadlock_timeout (2 s here): A's
# check still comes, and finds it
my %deadlock_ms;
for my $jump ([ 'forward', $hour ], [ 'back', -$hour ])
{
	my ($name, $secs) = @$jump;
	my $w = verbose_session($na);
	my $wpid = $w->query_safe('SELECT pg_backend_pid()');
	$w->query_safe(q{SET deadlock_timeout = '2s'});
	$w->query_safe(q{SELECT zk_lock('/clk/e1')});
	$sb->query_safe(q{SELECT zk_lock('/clk/e2')});
	bg_begin($sb, q{SELECT zk_lock('/clk/e1') > 0}, 'e_b');
	wait_queue_len($na, '/clk/e1', 2, 10, 'B waits for A');
	my $t0 = mono();
	usleep(50_000) while mono() - $t0 < 1;    # B's deadlock_timeout passes
	bg_begin($w, q{SELECT zk_lock('/clk/e2') > 0}, 'e_a');
	$t0 = mono();
	wait_queue_len($na, '/clk/e2', 2, 10, 'A waits for B');
	fake_clock_set($na, $secs);
	my $found = wait_for(sub { bg_done($w, 'e_a') }, 2 + 20, 'A to find the deadlock');
	my $dt = mono() - $t0;
	$deadlock_ms{$name} = int($dt * 1000);
	$na->safe_psql('postgres', "SELECT pg_cancel_backend($wpid)") unless $found;
	my ($o, $e) = bg_finish($w, 'e_a');
	error_is($e, '40P01', qr/deadlock detected/,
		"a deadlock only A finds, A's clock jumps $name during deadlock_timeout: 40P01");
	ok($dt < 2 + 4, sprintf('  found %.1f s after A began to wait (deadlock_timeout 2 s)', $dt));
	$w->query_safe(q{SELECT zk_unlock_all()});
	fake_clock_set($na, 0);
	bg_finish($sb, 'e_b');
	$sb->query_safe(q{SELECT zk_unlock_all()});
	$w->quit;
}
figure(
	deadlock_found_forward_jump_ms => $deadlock_ms{forward},
	deadlock_found_backward_jump_ms => $deadlock_ms{back});

# --- 5. lock_timeout ends a wait at its time, across a jump either way
my %lock_timeout_ms;
for my $jump ([ 'forward', $hour ], [ 'backward', -$hour ])
{
	my ($name, $secs) = @$jump;
	my $lt = 4;
	$sb->query_safe(q{SELECT zk_lock('/clk/t')});
	my $w = verbose_session($na);
	$w->query_safe("SET lock_timeout = '${lt}s'");
	my $wpid = $w->query_safe('SELECT pg_backend_pid()');
	my $t0 = mono();
	bg_begin($w, q{SELECT zk_lock('/clk/t')}, 't_done');
	wait_queue_len($nb, '/clk/t', 2, 10, 'A waits');
	usleep(50_000) while mono() - $t0 < 1;
	fake_clock_set($na, $secs);
	my $ended = wait_for(sub { bg_done($w, 't_done') }, $lt + 20, "the wait ($name jump)");
	my $elapsed = mono() - $t0;
	$na->safe_psql('postgres', "SELECT pg_cancel_backend($wpid)") unless $ended;
	($out, $err) = bg_finish($w, 't_done');
	$lock_timeout_ms{$name} = int($elapsed * 1000);
	error_is($err, '55P03', qr/canceling statement due to lock timeout\nDETAIL:  Waiting for ZooKeeper lock "\/clk\/t"/,
		"lock_timeout, clock jumps $name during the wait: 55P03");
	ok($elapsed >= $lt && $elapsed < $lt + 4,
		sprintf('lock_timeout %d s, clock jumps %s: the wait ends after %.2f s', $lt, $name, $elapsed));
	fake_clock_set($na, 0);
	$sb->query_safe(q{SELECT zk_unlock('/clk/t')});
	$w->quit;
}
figure(
	lock_timeout_4s_forward_jump_ms => $lock_timeout_ms{forward},
	lock_timeout_4s_backward_jump_ms => $lock_timeout_ms{backward});

$_->quit for ($s, $t, $sb);
$na->stop;
$nb->stop;
done_testing();
