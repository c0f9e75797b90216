# Atomic multi-lock across two PostgreSQL servers.
#
# - Atomicity: the nodes of a set share one czxid, the token returned.
# - All or none: a try that cannot have every lock returns false and, by
#   the time it returns, has left no node in any queue; a waiting set is
#   granted only once its last lock is free.
# - Cancel and lock_timeout while a set waits leave nothing behind.
# - Deadlock detection sees a set's wait: a cycle between a set and a
#   single lock on the other server is reported once (40P01).
# - Churn: backends on both servers take random permutations of
#   overlapping sets (exclusive and shared, session and transaction
#   scope), recording when they held what; afterwards: no two holders in
#   conflict ever overlapped, no 40P01, no lock_timeout, no node left.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $conf = "deadlock_timeout = '200ms'\nmax_connections = 30\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

# the tokens of the nodes in the queues of PATHS, as server B sees them
sub tokens
{
	my @paths = @_;
	my $list = join(', ', map { "'$_'" } @paths);
	return $nb->safe_psql('postgres',
		"SELECT string_agg(DISTINCT fencing_token::text, ',') FROM unnest(ARRAY[$list]) p, LATERAL zk_lock_queue(p)");
}

my @set = ('/ml/a', '/ml/b', '/ml/c');
my $arr = "ARRAY['/ml/a', '/ml/b', '/ml/c']";

# --- atomicity: one transaction, one token
{
	my $s = verbose_session($na);
	my $token = $s->query_safe("SELECT zk_lock($arr)");
	is(tokens(@set), $token, 'the three nodes share one czxid: the token returned');
	is(queue_len($nb, '/ml/b'), 1, 'one node per path');
	$s->quit;
	ok(wait_queues_empty($nb, \@set, 10, 'released'), 'released when the backend exits');
}

# --- all or none, waiting, cancel, lock_timeout
{
	my $sa = verbose_session($na);
	my $sb = verbose_session($nb);
	my $pid_a = $sa->query_safe('SELECT pg_backend_pid()');
	$sb->query_safe(q{SELECT zk_lock('/ml/b')});

	my ($out, $err) = bg_query($sa, "SELECT zk_try_lock($arr, 300)");
	is($out, 'f', 'try of a set with one member held elsewhere: false');
	is(queue_len($nb, '/ml/a') . queue_len($nb, '/ml/b') . queue_len($nb, '/ml/c'),
		'010', 'and no node of the set is left, as soon as it returned');
	($out) = bg_query($sa, "SELECT zk_try_xact_rlock($arr)");
	is($out, 'f', 'same for a shared transaction set without waiting');

	bg_begin($sa, "SELECT zk_lock($arr) > 0 AS got", 'set_done');
	ok(wait_queue_len($nb, '/ml/b', 2, 10, 'set queued'), 'a set waits behind the holder');
	is(queue_len($nb, '/ml/a') . queue_len($nb, '/ml/c'), '11',
		'its nodes are in every queue at once');
	usleep(300_000);
	ok(!bg_done($sa, 'set_done'), 'the set is not granted while one member is held');
	$sb->query_safe(q{SELECT zk_unlock('/ml/b')});
	($out, $err) = bg_finish($sa, 'set_done');
	like($out, qr/^t$/m, 'granted once the last member is free');
	is($sa->query_safe("SELECT count(*) FROM zk_locks"), 3, 'it holds the three locks');
	$sa->query_safe("SELECT zk_unlock($arr)");
	ok(wait_queues_empty($nb, \@set, 10, 'released'), 'zk_unlock(text[]) releases all');

	# cancel while waiting
	$sb->query_safe(q{SELECT zk_lock('/ml/c')});
	bg_begin($sa, "SELECT zk_lock($arr)", 'cancel_done');
	ok(wait_queue_len($nb, '/ml/c', 2, 10, 'set queued'), 'cancel: the set waits');
	$na->safe_psql('postgres', "SELECT pg_cancel_backend($pid_a)");
	($out, $err) = bg_finish($sa, 'cancel_done');
	error_is($err, '57014', qr/canceling statement due to user request/, 'cancel ends the wait with 57014');
	is(queue_len($nb, '/ml/a') . queue_len($nb, '/ml/b') . queue_len($nb, '/ml/c'), '001',
		'cancel leaves no node of the set behind');

	# lock_timeout
	($out, $err) = bg_query($sa, "SET lock_timeout = '300ms'; SELECT zk_xact_lock($arr)");
	error_is($err, '55P03', qr/canceling statement due to lock timeout/, 'lock_timeout: 55P03');
	$sa->query_safe("RESET lock_timeout");
	ok(wait_for(sub { queue_len($nb, '/ml/a') . queue_len($nb, '/ml/b') . queue_len($nb, '/ml/c') eq '001' },
		5, 'timeout cleanup'), 'lock_timeout leaves no node of the set behind');

	# another client deletes one of the set's nodes while the set waits:
	# at the handoff (as for a single lock) the wait ends with 55000
	# instead of a grant, and the set's other nodes go too
	bg_begin($sa, "SELECT zk_lock($arr)", 'gone_done');
	ok(wait_queue_len($nb, '/ml/c', 2, 10, 'set queued'), 'the set waits again behind /ml/c');
	my $mine = $nb->safe_psql('postgres',
		q{SELECT znode FROM zk_lock_queue('/ml/c') WHERE position = 2});
	kazoo_run($zk, "c.delete('/zklock/ml/c/$mine')");
	$sb->query_safe(q{SELECT zk_unlock('/ml/c')});
	($out, $err) = bg_finish($sa, 'gone_done');
	error_is($err, '55000', qr/ZooKeeper queue node "\/zklock\/ml\/c\/\Q$mine\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for lock "\/ml\/c"/,
		'a set whose node another client deleted fails with 55000');
	ok(wait_for(sub { queue_len($nb, '/ml/a') . queue_len($nb, '/ml/b') . queue_len($nb, '/ml/c') eq '000' },
		5, 'gone cleanup'), 'and leaves none of its other nodes behind');
	$sb->query_safe(q{SELECT zk_unlock_all()});
	$sa->quit;
	$sb->quit;
}

# --- a deadlock between a set and a single lock, across servers
{
	my $sa = verbose_session($na);
	my $sb = verbose_session($nb);
	my $pid_a = $sa->query_safe('SELECT pg_backend_pid()');
	my $pid_b = $sb->query_safe('SELECT pg_backend_pid()');
	$sa->query_safe(q{SELECT zk_lock('/mld/1')});
	$sb->query_safe(q{SELECT zk_lock('/mld/2')});
	bg_begin($sa, q{SELECT zk_lock(ARRAY['/mld/3', '/mld/2']) > 0 AS got}, 'a_done');
	ok(wait_queue_len($nb, '/mld/2', 2, 10, 'A queued'), 'deadlock: the set of A waits for B');
	bg_begin($sb, q{SELECT zk_lock('/mld/1') > 0 AS got}, 'b_done');
	my ($out_b, $err_b) = bg_finish($sb, 'b_done');
	error_is(
		$err_b, '40P01',
		qr/deadlock detected\nDETAIL:  Process $pid_b on server "b" waits for exclusive ZooKeeper lock "\/mld\/1"; blocked by process $pid_a on server "a"\.\n\s*Process $pid_a on server "a" waits for exclusive ZooKeeper lock "\/mld\/2"; blocked by process $pid_b on server "b"\./,
		'a cycle through a set is reported once (40P01), naming the set member that waits');
	$sb->quit;    # its session locks go with it
	my ($out_a, $err_a) = bg_finish($sa, 'a_done');
	like($out_a, qr/^t$/m, 'the set gets its locks once the victim is gone');
	$sa->quit;
	ok(wait_queues_empty($na, [ '/mld/1', '/mld/2', '/mld/3' ], 10, 'empty'),
		'nothing left');
}

# --- churn: random permutations of overlapping sets on both servers
my $secs = $ENV{ZKLOCK_MULTI_CHURN_SECONDS} // 20;
for my $node ($na, $nb)
{
	$node->safe_psql('postgres', q{
CREATE TABLE held (path text, mode text, t0 float8, t1 float8, pid int);
CREATE TABLE outcome (pid int, what text);
CREATE PROCEDURE churn(secs float8) LANGUAGE plpgsql AS $$
DECLARE
	pool text[] := ARRAY['/mc/1', '/mc/2', '/mc/3', '/mc/4', '/mc/5'];
	t_end float8 := extract(epoch FROM clock_timestamp()) + secs;
	paths text[];
	shared boolean;
	xact boolean;
	got boolean;
	t0 float8;
	t1 float8;
BEGIN
	SET lock_timeout = '20s';
	WHILE extract(epoch FROM clock_timestamp()) < t_end LOOP
		SELECT array_agg(p ORDER BY random()) INTO paths
		FROM (SELECT p FROM unnest(pool) p ORDER BY random()
			  LIMIT 2 + floor(random() * 3)::int) s;
		shared := random() < 0.3;
		xact := random() < 0.5;
		BEGIN
			IF random() < 0.2 THEN
				IF shared THEN got := zk_try_rlock(paths, 20);
				ELSE got := zk_try_lock(paths, 20); END IF;
				xact := false;
			ELSIF xact AND shared THEN got := zk_xact_rlock(paths) > 0;
			ELSIF xact THEN got := zk_xact_lock(paths) > 0;
			ELSIF shared THEN got := zk_rlock(paths) > 0;
			ELSE got := zk_lock(paths) > 0;
			END IF;
		EXCEPTION WHEN OTHERS THEN
			INSERT INTO outcome VALUES (pg_backend_pid(), SQLSTATE || ' ' || SQLERRM);
			COMMIT;
			CONTINUE;
		END;
		IF NOT got THEN
			INSERT INTO outcome VALUES (pg_backend_pid(), 'try failed');
			COMMIT;
			CONTINUE;
		END IF;
		t0 := extract(epoch FROM clock_timestamp());
		PERFORM pg_sleep(random() * 0.01);
		t1 := extract(epoch FROM clock_timestamp());
		INSERT INTO held SELECT p, CASE WHEN shared THEN 's' ELSE 'x' END, t0, t1,
			pg_backend_pid() FROM unnest(paths) p;
		INSERT INTO outcome VALUES (pg_backend_pid(), 'granted');
		IF NOT xact THEN
			PERFORM zk_unlock(paths);
		END IF;
		COMMIT;		-- releases the transaction sets
	END LOOP;
END
$$;
});
}
my %outcomes = churn_run([ $na, $na, $na, $nb, $nb, $nb ], $secs);

my @held;
for my $node ($na, $nb)
{
	for my $row (split /\n/, $node->safe_psql('postgres', 'SELECT path, mode, t0, t1, pid FROM held'))
	{
		push @held, [ split /\|/, $row ];
		$held[-1][4] .= $node->name;
	}
}
my $violations = 0;
my %by_path;
push @{ $by_path{ $_->[0] } }, $_ for @held;
for my $list (values %by_path)
{
	my @l = sort { $a->[2] <=> $b->[2] } @$list;
	for my $i (0 .. $#l)
	{
		for (my $j = $i + 1; $j <= $#l && $l[$j][2] < $l[$i][3]; $j++)
		{
			next if $l[$i][1] eq 's' && $l[$j][1] eq 's';
			$violations++;
			diag("overlap on $l[$i][0]: @{$l[$i]} / @{$l[$j]}") if $violations <= 5;
		}
	}
}
# outcomes_matching(REGEX): how many attempts ended in an outcome REGEX matches
sub outcomes_matching
{
	my ($re) = @_;
	my $n = 0;
	$n += $outcomes{$_} for grep { $_ =~ $re } keys %outcomes;
	return $n;
}
note('churn outcomes: ' . join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes));
figure(
	granted => $outcomes{granted} // 0,
	violations => $violations,
	deadlocks => outcomes_matching(qr/^40P01 /),
	lock_timeouts => outcomes_matching(qr/^55P03 /),
	tries_failed => $outcomes{'try failed'} // 0,
	seconds => $secs);
cmp_ok($outcomes{granted} // 0, '>', 100, 'churn: many sets granted');
is($violations, 0, 'churn: no two conflicting holders ever overlapped');
my @bad = grep { $_ ne 'granted' && $_ ne 'try failed' } keys %outcomes;
is(join('; ', @bad), '', 'churn: no deadlock (40P01), no lock_timeout, no other error');
ok(wait_queues_empty($na, [ map { "/mc/$_" } 1 .. 5 ], 10, 'empty'),
	'churn: no node left in any queue');

done_testing();
