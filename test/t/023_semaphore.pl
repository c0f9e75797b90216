# Counting semaphores across two PostgreSQL servers and the real Apache
# Curator InterProcessSemaphoreV2 / InterProcessSemaphoreMutex.
#
# - Layout: <root><path>/locks (a mutex queue) and <root><path>/leases
#   (_c_<uuid>-lease-<seq>); the limit is recorded on the semaphore node
#   and a different one is refused with 22023 naming both.
# - At most max_leases holders across both servers; a try returns false
#   and leaves nothing; waiters are served first come, first served;
#   cancel, lock_timeout and terminate leave nothing behind.
# - Only the acquirer at the head waits on the lease count: the others
#   wait in the mutex queue.
# - Curator both ways: its leases count against zklock's limit and
#   zklock's against Curator's; a dying holder on either side hands over.
# - A cycle through a one-lease semaphore is reported as a deadlock.
# - Churn on two servers: the number of simultaneous holders never
#   exceeds the limit (and reaches it).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

if (my $why = curator_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $conf = "deadlock_timeout = '200ms'\nmax_connections = 30\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

# children of a znode, as kazoo sees them (sorted, comma-separated)
sub children
{
	my ($znode) = @_;
	# the node may be reaped (a container) at any moment: gone is empty
	return kazoo_run($zk,
		"from kazoo.exceptions import NoNodeError\n"
		  . "try:\n    print(','.join(sorted(c.get_children('$znode'))))\n"
		  . "except NoNodeError:\n    print('')");
}

sub nchildren
{
	my ($znode) = @_;
	my $c = children($znode);
	return $c eq '' ? 0 : scalar(split /,/, $c);
}

# --- layout, limit, try
my $s1 = verbose_session($na);
my $s2 = verbose_session($nb);
my $s3 = verbose_session($na);
my $t1 = $s1->query_safe(q{SELECT zk_semaphore_acquire('/sem/x', 2)});
like(children('/zklock/sem/x/leases'), qr/^_c_[0-9a-f-]{36}-lease-[0-9]{10}$/,
	'one lease node, named like InterProcessSemaphoreV2 leases');
is(kazoo_run($zk, "print(c.get('/zklock/sem/x')[0].decode())"), '{"max_leases":2}',
	'the limit is recorded on the semaphore node');
is(children('/zklock/sem/x/locks'), '', 'the mutex node is gone once the lease is held');
is($s1->query_safe(q{SELECT mode || ' ' || scope || ' ' || hold_count FROM zk_locks}),
	'lease session 1', 'zk_locks lists the lease');
is($s1->query_safe(q{SELECT fencing_token FROM zk_locks}), $t1, 'with the token returned');
is($s1->query_safe(q{SELECT zk_semaphore_acquire('/sem/x', 2)}), $t1, 'acquiring again stacks');

my ($out, $err) = bg_query($s2, q{SELECT zk_semaphore_acquire('/sem/x', 3)});
error_is($err, '22023', qr/ZooKeeper semaphore "\/sem\/x" admits 2 permits, not 3\nDETAIL:  The semaphore's node records max_leases = 2; this call asked for max_leases = 3\./,
	'another server asking for a different limit gets 22023 naming both');
($out, $err) = bg_query($s2, q{SELECT zk_semaphore_acquire('/sem/x', 0)});
error_is($err, '22023', qr/max_leases must be at least 1, not 0/, 'max_leases < 1 is refused: 22023');
is(nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks'), '10',
	'refused acquires leave nothing behind');

$s2->query_safe('BEGIN');
$s2->query_safe(q{SELECT zk_xact_semaphore_acquire('/sem/x', 2)});
is($s3->query_safe(q{SELECT zk_try_semaphore_acquire('/sem/x', 2)}), 'f',
	'a third holder is refused: the limit holds across servers');
is($s3->query_safe(q{SELECT zk_try_xact_semaphore_acquire('/sem/x', 2, 200)}), 'f',
	'also after waiting 200 ms');
is(nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks'), '20',
	'the failed tries left no lease and no mutex node');

# --- waiting: only the head watches the count; FIFO; release hands over
my $s4 = verbose_session($nb);
my $s5 = verbose_session($na);
my $pid3 = $s3->query_safe('SELECT pg_backend_pid()');
my $pid4 = $s4->query_safe('SELECT pg_backend_pid()');
bg_begin($s3, q{SELECT zk_semaphore_acquire('/sem/x', 2) > 0}, 'w1');
ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 1 }, 10, 'w1 queued'), 'first waiter holds the mutex');
bg_begin($s4, q{SELECT zk_semaphore_acquire('/sem/x', 2) > 0}, 'w2');
ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 2 }, 10, 'w2 queued'), 'second waiter queues in the mutex');
bg_begin($s5, q{SELECT zk_semaphore_acquire('/sem/x', 2) > 0}, 'w3');
ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 3 }, 10, 'w3 queued'), 'third waiter queues in the mutex');
is(nchildren('/zklock/sem/x/leases'), 3, 'only the head has made a lease node (and waits on the count)');
# ZooKeeper 3.8's wchp lists data watches only (the head's child watch on
# the leases node is not shown): the waiters behind the head each watch
# the mutex node before them and their own, and nobody watches a lease.
my %watchers = %{ zk_watches($zk) };
my %foreign = %{ zk_watches_by_others($zk) };
my $lock_watches = 0;
my $lease_watches = 0;
for my $p (keys %watchers)
{
	$lock_watches += $watchers{$p} if $p =~ m{^/zklock/sem/x/locks/};
}
# (a holder watches its own lease node for its loss: not a waiter's watch)
for my $p (keys %foreign)
{
	$lease_watches += $foreign{$p} if $p =~ m{^/zklock/sem/x/leases/};
}
is($lock_watches, 4, 'the two waiters behind the head watch their predecessor and their own node');
is($lease_watches, 0, 'no waiter watches a lease holder');

# the cluster-wide view and the blockers of a semaphore waiter
my $rows = $na->safe_psql('postgres',
	q{SELECT string_agg(format('%s %s %s %s', path, kind, mode, cluster_name), ',' ORDER BY cluster_name, pid)
	  FROM zk_cluster_locks('/sem/x') WHERE pid IN (SELECT pid FROM zk_cluster_locks('/sem/x'))});
like($rows, qr{^/sem/x semaphore lease a,.*/sem/x semaphore lease b}, 'zk_cluster_locks lists the leases of both servers as kind semaphore');
is($na->safe_psql('postgres', q{SELECT DISTINCT waiters FROM zk_cluster_locks('/sem/x')}), '3',
	'and the three acquirers waiting in the mutex queue');
is($na->safe_psql('postgres', qq{SELECT DISTINCT holders::text || ' ' || (SELECT count(*) FROM zk_cluster_locks('/sem/x') WHERE pid = $pid3) FROM zk_cluster_locks('/sem/x')}),
	'2 0', 'the lease the first acquirer wrote while it waits for the count is not shown as held');
is($nb->safe_psql('postgres',
	"SELECT string_agg(DISTINCT format('%s %s', cluster_name, blocker_pid), ',') FROM zk_blocking_pids($pid4)"),
	"a $pid3", 'the second acquirer is blocked by the first, which holds the mutex');

$s2->query_safe('COMMIT');
($out) = bg_finish($s3, 'w1');
like($out, qr/^t$/m, 'COMMIT of a transaction lease hands over to the first waiter');
usleep(200_000);
ok(!bg_done($s4, 'w2') && !bg_done($s5, 'w3'), 'the others still wait');
$s1->query_safe(q{SELECT zk_semaphore_release('/sem/x')});
usleep(200_000);
ok(!bg_done($s4, 'w2'), 'one release of two stacked holds keeps the lease');
$s1->query_safe(q{SELECT zk_semaphore_release('/sem/x')});
($out) = bg_finish($s4, 'w2');
like($out, qr/^t$/m, 'the second waiter (other server) comes second');
ok(!bg_done($s5, 'w3'), 'the third still waits');
($out, $err) = bg_query($s1, q{SELECT zk_semaphore_release('/sem/x')});
warning_is($err, '01000', qr/you don't own a session permit of ZooKeeper semaphore "\/sem\/x"/,
	'releasing a lease not held: WARNING (01000)');
is($out, 'f', 'and false');
$s3->query_safe(q{SELECT zk_unlock_all()});
($out) = bg_finish($s5, 'w3');
like($out, qr/^t$/m, 'zk_unlock_all releases leases too: the third waiter gets one');

# --- cancel, lock_timeout, terminate while waiting leave nothing behind
my $pid1 = $s1->query_safe('SELECT pg_backend_pid()');
bg_begin($s1, q{SELECT zk_semaphore_acquire('/sem/x', 2)}, 'c1');
ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 1 }, 10, 'queued'), 'a waiter');
$na->safe_psql('postgres', "SELECT pg_cancel_backend($pid1)");
($out, $err) = bg_finish($s1, 'c1');
error_is($err, '57014', qr/canceling statement due to user request/, 'cancel ends the wait: 57014');
is(nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks'), '20', 'cancel leaves nothing behind');
($out, $err) = bg_query($s1, q{SET lock_timeout = '300ms'; SELECT zk_semaphore_acquire('/sem/x', 2)});
error_is($err, '55P03', qr/canceling statement due to lock timeout\nDETAIL:  Waiting for ZooKeeper semaphore "\/sem\/x"\./,
	'lock_timeout: 55P03');
ok(wait_for(sub { nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks') eq '20' }, 5, 'clean'),
	'lock_timeout leaves nothing behind');
$s1->query_safe('RESET lock_timeout');
# an acquirer that times out in the mutex queue, behind the one that
# counts, names the semaphore too (the queue is the semaphore's)
{
	my $q = verbose_session($nb);
	bg_begin($s1, q{SELECT zk_semaphore_acquire('/sem/x', 2)}, 'q1');
	ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 1 }, 10, 'counting'),
		'one acquirer counts, holding the mutex');
	($out, $err) = bg_query($q, q{SET lock_timeout = '300ms'; SELECT zk_semaphore_acquire('/sem/x', 2)});
	error_is($err, '55P03', qr/canceling statement due to lock timeout\nDETAIL:  Waiting for ZooKeeper semaphore "\/sem\/x"\./,
		'lock_timeout in the mutex queue: 55P03 naming the semaphore, not a lock');
	$na->safe_psql('postgres', "SELECT pg_cancel_backend($pid1)");
	bg_finish($s1, 'q1');
	ok(wait_for(sub { nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks') eq '20' }, 5, 'clean'),
		'both leave nothing behind');
	$q->quit;
}
bg_begin($s1, q{SELECT zk_semaphore_acquire('/sem/x', 2)}, 't1');
ok(wait_for(sub { nchildren('/zklock/sem/x/locks') == 1 }, 10, 'queued'), 'a waiter again');
$na->safe_psql('postgres', "SELECT pg_terminate_backend($pid1)");
ok(wait_for(sub { nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks') eq '20' }, 10, 'clean'),
	'terminate leaves nothing behind');

# another client deletes the permit node of the acquirer waiting for the
# count: its session confirmed alive, 55000 naming the permit node, and its
# mutex node goes too
bg_begin($s3, q{SELECT zk_semaphore_acquire('/sem/x', 2)}, 'g1');
ok(wait_for(sub { nchildren('/zklock/sem/x/leases') == 3 }, 10, 'head lease'), 'the head acquirer made its lease');
my ($newest) = (split /,/, kazoo_run($zk,
	"print(','.join(sorted(c.get_children('/zklock/sem/x/leases'), key=lambda n: n[-10:])))"))[-1];
kazoo_run($zk, "c.delete('/zklock/sem/x/leases/$newest')");
($out, $err) = bg_finish($s3, 'g1');
error_is($err, '55000', qr/ZooKeeper semaphore permit node "\/zklock\/sem\/x\/leases\/\Q$newest\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for semaphore "\/sem\/x"/,
	'a waiter whose permit node another client deleted fails with 55000, naming the permit node');
ok(wait_for(sub { nchildren('/zklock/sem/x/leases') . nchildren('/zklock/sem/x/locks') eq '20' }, 5, 'clean'),
	'and leaves nothing behind');
$s4->query_safe(q{SELECT zk_unlock_all()});
$s5->query_safe(q{SELECT zk_unlock_all()});

# --- Curator InterProcessSemaphoreV2 and zklock count against one limit
my $c = curator_client('curator_sem', $zk, '/zklock/sem/c', 2000);
like($c->{ready}, qr/^ready /, 'the Curator client is connected');
is(client_ask($c, 'sem 2 5000'), 'acquired sem', 'Curator takes a lease');
is(client_ask($c, 'sem 2 5000'), 'acquired sem', 'and a second one');
is($s4->query_safe(q{SELECT zk_try_semaphore_acquire('/sem/c', 2, 200)}), 'f',
	'zklock cannot take a third');
bg_begin($s4, q{SELECT zk_semaphore_acquire('/sem/c', 2) > 0}, 'cz');
ok(wait_for(sub { nchildren('/zklock/sem/c/locks') == 1 }, 10, 'queued'), 'zklock waits');
is(client_ask($c, 'semrelease'), 'released sem', 'Curator returns a lease');
($out) = bg_finish($s4, 'cz');
like($out, qr/^t$/m, 'zklock gets it');
is(client_ask($c, 'sem 2 300'), 'timeout sem', 'Curator cannot take a third: zklock holds one');
client_send($c, 'sem 2');
is(client_next($c), 'acquiring sem', 'Curator waits');
ok(wait_for(sub { nchildren('/zklock/sem/c/locks') == 1 }, 10, 'queued'), "Curator's acquirer holds the mutex");
$s4->query_safe(q{SELECT zk_semaphore_release('/sem/c')});
is(client_next($c), 'acquired sem', 'Curator gets the lease zklock released');
bg_begin($s5, q{SELECT zk_semaphore_acquire('/sem/c', 2) > 0}, 'die');
ok(wait_for(sub { nchildren('/zklock/sem/c/locks') == 1 }, 10, 'queued'), 'zklock waits for the Curator holders');
my $t0 = time();
client_send($c, 'die');
($out) = bg_finish($s5, 'die');
like($out, qr/^t$/m, 'a halted Curator holder hands over once its session expired');
note(sprintf('halted Curator holder -> zklock: %.0f ms (session timeout 2 s)', 1000 * (time() - $t0)));
figure(curator_halted_ms => sprintf('%.0f', 1000 * (time() - $t0)));
$s5->query_safe(q{SELECT zk_unlock_all()});

# InterProcessSemaphoreMutex (one lease) against zk_semaphore_acquire(path, 1)
my $m = curator_client('curator_semmutex', $zk, '/zklock/sem/m', 10000);
my $s6 = verbose_session($nb);
my $pid6 = $s6->query_safe('SELECT pg_backend_pid()');
$s6->query_safe(q{SELECT zk_semaphore_acquire('/sem/m', 1)});
is(client_ask($m, 'semmutex 300'), 'timeout semmutex', 'InterProcessSemaphoreMutex waits for a zklock holder');
client_send($m, 'semmutex');
is(client_next($m), 'acquiring semmutex', 'Curator waits');
ok( wait_for(
		sub {
			$nb->safe_psql('postgres',
				q{SELECT coalesce(sum(waiters), 0) FROM zk_cluster_locks('/sem/m')}) eq '1';
		},
		10, 'Curator queued'),
	"Curator's waiter is queued behind the zklock holder");
$nb->safe_psql('postgres', "SELECT pg_terminate_backend($pid6)");
is(client_next($m), 'acquired semmutex', 'a terminated zklock holder hands over to Curator');
is($s5->query_safe(q{SELECT zk_try_semaphore_acquire('/sem/m', 1, 200)}), 'f',
	'zklock cannot take it while the Curator SemaphoreMutex holds it');
is(client_ask($m, 'semmutexrelease'), 'released semmutex', 'Curator releases');
is($s5->query_safe(q{SELECT zk_try_semaphore_acquire('/sem/m', 1, 2000)}), 't', 'zklock takes it');
$s5->query_safe(q{SELECT zk_unlock_all()});
client_ask($m, 'close');

# --- a deadlock through a one-lease semaphore
{
	my $da = verbose_session($na);
	my $db = verbose_session($nb);
	my $pa = $da->query_safe('SELECT pg_backend_pid()');
	my $pb = $db->query_safe('SELECT pg_backend_pid()');
	$da->query_safe(q{SELECT zk_semaphore_acquire('/sem/d', 1)});
	$db->query_safe(q{SELECT zk_lock('/sem/l')});
	bg_begin($da, q{SELECT zk_lock('/sem/l') > 0}, 'da');
	ok(wait_queue_len($nb, '/sem/l', 2, 10, 'queued'), 'deadlock: A waits for the lock B holds');
	bg_begin($db, q{SELECT zk_semaphore_acquire('/sem/d', 1) > 0}, 'db');
	my ($o, $e) = bg_finish($db, 'db');
	error_is(
		$e, '40P01',
		qr/deadlock detected\nDETAIL:  Process $pb on server "b" waits for a permit of ZooKeeper semaphore "\/sem\/d"; blocked by process $pa on server "a"\.\n\s*Process $pa on server "a" waits for exclusive ZooKeeper lock "\/sem\/l"; blocked by process $pb on server "b"\./,
		'the cycle through the semaphore is reported (40P01), naming the lease wait');
	$db->quit;
	($o) = bg_finish($da, 'da');
	like($o, qr/^t$/m, 'A gets its lock once the victim is gone');
	$da->quit;
	ok(wait_for(sub { nchildren('/zklock/sem/d/leases') + nchildren('/zklock/sem/d/locks') == 0 }, 10, 'clean'),
		'nothing left of the semaphore');
}

# --- churn: never more than the limit at once
my $secs = $ENV{ZKLOCK_SEMAPHORE_CHURN_SECONDS} // 15;
for my $node ($na, $nb)
{
	$node->safe_psql('postgres', q{
CREATE TABLE held (t0 float8, t1 float8);
CREATE TABLE outcome (what text);
CREATE PROCEDURE churn(secs float8) LANGUAGE plpgsql AS $$
DECLARE
	t_end float8 := extract(epoch FROM clock_timestamp()) + secs;
	r float8;
	got boolean;
	xact boolean;
	t0 float8;
BEGIN
	SET lock_timeout = '20s';
	WHILE extract(epoch FROM clock_timestamp()) < t_end LOOP
		r := random();
		xact := r < 0.4;
		BEGIN
			IF r < 0.2 THEN got := zk_try_semaphore_acquire('/sem/churn', 3, 20); xact := false;
			ELSIF xact THEN got := zk_xact_semaphore_acquire('/sem/churn', 3) > 0;
			ELSE got := zk_semaphore_acquire('/sem/churn', 3) > 0;
			END IF;
		EXCEPTION WHEN OTHERS THEN
			INSERT INTO outcome VALUES (SQLSTATE || ' ' || SQLERRM);
			COMMIT;
			CONTINUE;
		END;
		IF NOT got THEN
			INSERT INTO outcome VALUES ('try failed');
			COMMIT;
			CONTINUE;
		END IF;
		t0 := extract(epoch FROM clock_timestamp());
		PERFORM pg_sleep(random() * 0.02);
		INSERT INTO held VALUES (t0, extract(epoch FROM clock_timestamp()));
		INSERT INTO outcome VALUES ('granted');
		IF NOT xact THEN
			PERFORM zk_semaphore_release('/sem/churn');
		END IF;
		COMMIT;
	END LOOP;
END
$$;
});
}
my %outcomes = churn_run([ $na, $na, $na, $nb, $nb, $nb ], $secs);
my @events;
for my $node ($na, $nb)
{
	for my $row (split /\n/, $node->safe_psql('postgres', 'SELECT t0, t1 FROM held'))
	{
		my ($a, $b) = split /\|/, $row;
		push @events, [ $a, 1 ], [ $b, -1 ];
	}
}
my ($cur, $max) = (0, 0);
for my $e (sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @events)
{
	$cur += $e->[1];
	$max = $cur if $cur > $max;
}
note('semaphore churn outcomes: ' . join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes)
	  . "; most holders at once: $max");
figure(granted => $outcomes{granted} // 0, max_holders => $max,
	tries_failed => $outcomes{'try failed'} // 0, seconds => $secs);
cmp_ok($outcomes{granted} // 0, '>', 100, 'churn: many leases granted');
is($max, 3, 'churn: never more than 3 holders at once, and 3 reached');
my @bad = grep { $_ ne 'granted' && $_ ne 'try failed' } keys %outcomes;
is(join('; ', @bad), '', 'churn: no deadlock, no lock_timeout, no other error');
ok(wait_for(sub { nchildren('/zklock/sem/churn/leases') + nchildren('/zklock/sem/churn/locks') == 0 }, 10, 'clean'),
	'churn: nothing left');

done_testing();
