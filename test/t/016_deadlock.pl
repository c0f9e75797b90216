# Cluster-wide deadlock detection across PostgreSQL servers.
#
# - A 2-cycle across two servers (exclusive, session locks) and a 3-cycle
#   over both servers mixing shared and exclusive, session and transaction
#   locks: exactly one member gets 40P01 "deadlock detected", with a DETAIL
#   naming every member (server, pid, lock, mode, who blocks it); it is
#   counted in pg_stat_database.deadlocks; the others get their locks once
#   the victim's transaction is gone; no queue node and no published wait
#   is left behind.
# - No false positives: a long holder with waiters, a chain without a
#   cycle, a cycle broken (by a try's timeout) before deadlock_timeout, and
#   20 s of churn in which backends on both servers take several locks
#   in one global order with deadlock_timeout = 100ms: zero 40P01.  Each
#   of them shows that the checks ran: log_lock_waits' "still waiting",
#   which a waiter logs right after its deadlock check, is in the log.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
# (errors with their SQLSTATE, in psql and in the server log; "still
# waiting" logged after each deadlock check)
my $conf = "deadlock_timeout = '200ms'\nmax_connections = 30\n"
  . "log_error_verbosity = verbose\nlog_lock_waits = on\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

sub records { return published_waits($zk); }

# still_waiting(NODE, OFFSET): how many "still waiting" messages NODE's
# log has after byte OFFSET
sub still_waiting
{
	my ($node, $offset) = @_;
	my @m = substr(slurp_file($node->logfile), $offset)
	  =~ /still waiting for ZooKeeper/g;
	return scalar @m;
}

sub deadlocks
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()');
}

sub queue_empty
{
	my @paths = @_;
	return wait_queues_empty($na, \@paths, 10, 'empty queues');
}

# --- a 2-cycle across two servers
{
	my $sa = verbose_session($na);
	my $sb = verbose_session($nb);
	my $pid_a = $sa->query_safe('SELECT pg_backend_pid()');
	my $pid_b = $sb->query_safe('SELECT pg_backend_pid()');
	my $dl_b_before = deadlocks($nb);
	$sa->query_safe(q{SELECT zk_lock('/dl2/a')});
	$sb->query_safe(q{SELECT zk_lock('/dl2/b')});
	bg_begin($sa, q{SELECT zk_lock('/dl2/b') > 0 AS got}, 'a_done');
	ok(wait_queue_len($na, '/dl2/b', 2, 10, 'A queued'), '2-cycle: A waits for B');
	my $t0 = time();
	bg_begin($sb, q{SELECT zk_lock('/dl2/a') > 0 AS got}, 'b_done');
	my ($out_b, $err_b) = bg_finish($sb, 'b_done');
	my $ms = 1000 * (time() - $t0);
	error_is($err_b, '40P01', qr/deadlock detected\n/,
		'2-cycle: B, which waited last, gets 40P01');
	like(
		$err_b,
		qr/DETAIL:  Process $pid_b on server "b" waits for exclusive ZooKeeper lock "\/dl2\/a"; blocked by process $pid_a on server "a"\.\n\s*Process $pid_a on server "a" waits for exclusive ZooKeeper lock "\/dl2\/b"; blocked by process $pid_b on server "b"\./,
		'2-cycle: the DETAIL names each member, its server, its lock and who blocks it');
	note(sprintf('2-cycle across two servers: 40P01 after %.0f ms (deadlock_timeout 200 ms)', $ms));
	figure(cycle2_ms => sprintf('%.0f', $ms));
	cmp_ok($ms, '<', 200 + 1000, '2-cycle: reported soon after deadlock_timeout');
	ok(!bg_done($sa, 'a_done'), 'A still waits: the victim keeps its session locks');
	# (a backend sends its statistics when idle, at most once a second)
	$sb->query_safe('SELECT pg_stat_force_next_flush()');
	ok(wait_for(sub { deadlocks($nb) - $dl_b_before == 1 }, 10, 'statistics'),
		'2-cycle: counted in pg_stat_database.deadlocks');
	ok(slurp_file($nb->logfile) =~ /ERROR:  40P01: deadlock detected/,
		"2-cycle: the victim's server log has the error, 40P01");
	$sb->query_safe(q{SELECT zk_unlock_all()});
	my ($out_a, $err_a) = bg_finish($sa, 'a_done');
	like($out_a, qr/\bt\b/, '2-cycle: A gets its lock once the victim releases');
	unlike($err_a, qr/deadlock/, '2-cycle: and A saw no 40P01: exactly one victim');
	$sa->query_safe(q{SELECT zk_unlock_all()});
	ok(queue_empty('/dl2/a', '/dl2/b'), '2-cycle: no queue node is left');
	ok(wait_for(sub { records() eq '0' }, 10, 'records'), '2-cycle: no published wait is left');
	$_->quit for ($sa, $sb);
}

# --- a 3-cycle over both servers, shared and exclusive, session and
#     transaction locks: A (server a) holds /dl3/a exclusively, B (server
#     b) holds /dl3/b shared, C (server a) holds /dl3/c in a transaction;
#     A asks /dl3/b exclusive, B asks /dl3/c shared, C asks /dl3/a shared.
{
	my $sa = verbose_session($na);
	my $sb = verbose_session($nb);
	my $sc = verbose_session($na);
	$sa->query_safe(q{SELECT zk_lock('/dl3/a')});
	$sb->query_safe(q{SELECT zk_rlock('/dl3/b')});
	$sc->query_safe('BEGIN');
	$sc->query_safe(q{SELECT zk_xact_lock('/dl3/c')});
	bg_begin($sa, q{SELECT zk_lock('/dl3/b') > 0 AS got}, 'a3');
	ok(wait_queue_len($na, '/dl3/b', 2, 10, 'A queued'), '3-cycle: A waits for B');
	bg_begin($sb, q{SELECT zk_rlock('/dl3/c') > 0 AS got}, 'b3');
	ok(wait_queue_len($na, '/dl3/c', 2, 10, 'B queued'), '3-cycle: B waits for C');
	# A and B publish their waits (past deadlock_timeout) before C waits
	ok(wait_for(sub { records() >= 2 }, 10, 'A and B published'),
		'3-cycle: A and B have published their waits');
	bg_begin($sc, q{SELECT zk_rlock('/dl3/a') > 0 AS got}, 'c3');
	my ($out_c, $err_c) = bg_finish($sc, 'c3');
	error_is($err_c, '40P01', qr/deadlock detected\n/, '3-cycle: C, which waited last, gets 40P01');
	my @lines = $err_c =~ /(Process \d+ on server "\w" waits for \w+ ZooKeeper lock "[^"]+")/g;
	is(scalar(@lines), 3, '3-cycle: the DETAIL names three members');
	like($err_c, qr/waits for shared ZooKeeper lock "\/dl3\/a"/, '3-cycle: with the modes they wait in');
	$sc->query_safe('ROLLBACK');
	my ($out_b, $err_b) = bg_finish($sb, 'b3');
	like($out_b, qr/\bt\b/, "3-cycle: B gets its lock once the victim's transaction is gone");
	$sb->query_safe(q{SELECT zk_unlock('/dl3/b')});
	my ($out_a, $err_a) = bg_finish($sa, 'a3');
	like($out_a, qr/\bt\b/, '3-cycle: and A gets its lock once B releases');
	unlike($err_a . $err_b, qr/deadlock/, '3-cycle: exactly one victim');
	$_->query_safe(q{SELECT zk_unlock_all()}) for ($sa, $sb);
	ok(queue_empty('/dl3/a', '/dl3/b', '/dl3/c'), '3-cycle: no queue node is left');
	ok(wait_for(sub { records() eq '0' }, 10, 'records'), '3-cycle: no published wait is left');
	$_->quit for ($sa, $sb, $sc);
}

# --- no false positives
{
	my $h = verbose_session($na);
	my @wn = map { $_ % 2 ? $nb : $na } 1 .. 3;
	my @w = map { verbose_session($_) } @wn;
	my @wpid = map { $_->query_safe('SELECT pg_backend_pid()') } @w;
	my @off = map { -s $_->logfile } @wn;

	# a long holder with waiters
	$h->query_safe(q{SELECT zk_lock('/fp/long')});
	# (each releases at once, so that either may be granted first)
	bg_begin($w[$_], q{SELECT zk_lock('/fp/long') > 0 AND zk_unlock('/fp/long') AS got},
		"long$_")
	  for 0 .. 1;
	ok(wait_queue_len($na, '/fp/long', 3, 10, 'waiters'), 'a holder with two waiters');
	ok(deadlock_checked($wn[$_], $wpid[$_], $off[$_]), "long holder: waiter $_ checked for a deadlock")
	  for 0 .. 1;
	ok(!bg_done($w[$_], "long$_"), "waiter $_ still waits, no 40P01") for 0 .. 1;
	$h->query_safe(q{SELECT zk_unlock('/fp/long')});
	for (0 .. 1)
	{
		my ($o, $e) = bg_finish($w[$_], "long$_");
		like($o, qr/\bt\b/, "long holder: waiter $_ gets the lock");
		unlike($e, qr/deadlock/, "long holder: waiter $_ saw no 40P01");
	}

	# a chain without a cycle: w0 holds 1, waits 2 (w1); w1 waits 3 (h)
	@off = map { -s $_->logfile } @wn;
	$h->query_safe(q{SELECT zk_lock('/fp/3')});
	$w[1]->query_safe(q{SELECT zk_lock('/fp/2')});
	$w[0]->query_safe(q{SELECT zk_lock('/fp/1')});
	bg_begin($w[1], q{SELECT zk_lock('/fp/3') > 0}, 'chain1');
	bg_begin($w[0], q{SELECT zk_lock('/fp/2') > 0}, 'chain0');
	ok(wait_queue_len($na, '/fp/2', 2, 10, 'chain'), 'a chain of two waits');
	ok(deadlock_checked($wn[$_], $wpid[$_], $off[$_]), "chain: waiter $_ checked for a deadlock")
	  for 0 .. 1;
	ok(!bg_done($w[0], 'chain0') && !bg_done($w[1], 'chain1'), 'the chain waits, no 40P01');
	$h->query_safe(q{SELECT zk_unlock('/fp/3')});
	my ($o1, $e1) = bg_finish($w[1], 'chain1');
	$w[1]->query_safe(q{SELECT zk_unlock_all()});
	my ($o0, $e0) = bg_finish($w[0], 'chain0');
	unlike($e0 . $e1, qr/deadlock/, 'and it unwinds without 40P01');
	$w[0]->query_safe(q{SELECT zk_unlock_all()});

	# a cycle that breaks before deadlock_timeout: w0's try gives up first
	@off = map { -s $_->logfile } @wn;
	$w[0]->query_safe(q{SELECT zk_lock('/fp/x')});
	$w[1]->query_safe(q{SELECT zk_lock('/fp/y')});
	bg_begin($w[0], q{SELECT zk_try_lock('/fp/y', 150)}, 'try0');
	usleep(20_000);
	bg_begin($w[1], q{SELECT zk_lock('/fp/x') > 0}, 'wait1');
	my ($ot, $et) = bg_finish($w[0], 'try0');
	like($ot, qr/\bf\b/, "the try's timeout breaks the cycle");
	ok(deadlock_checked($wn[1], $wpid[1], $off[1]), 'the remaining waiter checked for a deadlock');
	ok(!bg_done($w[1], 'wait1'), 'the remaining waiter keeps waiting: no 40P01');
	$w[0]->query_safe(q{SELECT zk_unlock_all()});
	my ($ow, $ew) = bg_finish($w[1], 'wait1');
	like($ow, qr/\bt\b/, 'and gets the lock');
	unlike($et . $ew, qr/deadlock/, 'no 40P01 for a cycle broken in time');
	$w[1]->query_safe(q{SELECT zk_unlock_all()});
	ok(wait_for(sub { records() eq '0' }, 10, 'records'), 'no published wait is left');
	$_->quit for ($h, @w);
}

# --- churn: several locks in one global order, deadlock_timeout 100ms
my $churn_s = $ENV{ZKLOCK_DEADLOCK_CHURN_SECONDS} // 20;
for my $n ($na, $nb)
{
	$n->safe_psql(
		'postgres', q{
CREATE PROCEDURE churn(seconds int, INOUT deadlocks int DEFAULT 0,
					   INOUT rounds int DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
	stop timestamptz := clock_timestamp() + make_interval(secs => seconds);
	p text;
BEGIN
	SET deadlock_timeout = '100ms';
	WHILE clock_timestamp() < stop LOOP
		BEGIN
			-- a random subset of five paths, always taken in sorted order
			FOR p IN SELECT '/churn/' || i FROM generate_series(1, 5) i
					 WHERE random() < 0.5 ORDER BY 1 LOOP
				PERFORM zk_xact_lock(p);
			END LOOP;
			PERFORM pg_sleep(random() * 0.05);
		EXCEPTION WHEN deadlock_detected THEN
			deadlocks := deadlocks + 1;
		END;
		rounds := rounds + 1;
		COMMIT;
	END LOOP;
END $$});
}
my @churn_off = map { -s $_->logfile } $na, $nb;
my @churners = map { verbose_session($_ % 2 ? $nb : $na) } 1 .. 8;
bg_begin($churners[$_], "CALL churn($churn_s)", "churn$_") for 0 .. 7;
my ($total_dl, $total_rounds) = (0, 0);
for (0 .. 7)
{
	my ($o, $e) = bg_finish($churners[$_], "churn$_");
	if ($o =~ /(\d+)\s*\|\s*(\d+)/)
	{
		$total_dl += $1;
		$total_rounds += $2;
	}
	else
	{
		fail("churn $_ finished: $o $e");
	}
}
note("churn: $total_rounds transactions in $churn_s s on 8 backends, $total_dl deadlocks reported");
figure(churn_transactions => $total_rounds, churn_deadlocks => $total_dl,
	churn_seconds => $churn_s);
cmp_ok($total_rounds, '>', 100, 'the churn ran');
my $churn_checks = still_waiting($na, $churn_off[0]) + still_waiting($nb, $churn_off[1]);
note("churn: $churn_checks waits passed deadlock_timeout and were checked");
cmp_ok($churn_checks, '>', 0, 'the churn\'s waits were checked for deadlocks');
is($total_dl, 0, 'locks taken in one global order never report a deadlock');
ok(queue_empty(map { "/churn/$_" } 1 .. 5), 'no queue node is left after the churn');
ok(wait_for(sub { records() eq '0' }, 10, 'records'), 'no published wait is left after the churn');
$_->quit for @churners;

$na->stop;
$nb->stop;
done_testing();
