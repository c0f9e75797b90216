# Locks on fresh paths: lock nodes that ZooKeeper's container reaper has
# removed (or that never existed), on two PostgreSQL servers.
#
# ZooKeeper gives every transaction the next zxid, and a lock's fencing
# token is the zxid of the transaction that created its node, so "token -
# zxid before the call" counts the transactions up to and including ours:
# 1 when the lock cost one write.  Other writers (the reaper) only add, so
# the smallest count over several tries is the cost of the lock.
#
# - A lock on a fresh path costs two writes (its lock node's create, sent
#   just before the queue node's multi), a lock set of 10 eleven, a
#   semaphore four (its node, locks, leases, and the multi).
# - A hot path costs one write per lock once its node is known to exist.
# - Wrong guesses both ways are corrected: a path that exists but this
#   backend has never seen (held elsewhere), and a known path (or a known
#   set of paths) that was reaped since, at one more round trip; nothing is
#   left behind and the lock is right.
# - The reaper races: two backends on two servers take one path in turns,
#   with pauses around the reaper's interval (1 s here), and each grant is
#   alone with a token above the last one's.
# - A fresh semaphore records its limit in the node it creates.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use List::Util qw(min);
use ZkTest;

my $zk = zk_standalone();
my $na = pg_with_zklock('a', $zk);
my $nb = pg_with_zklock('b', $zk);

# the server's last zxid
sub zxid
{
	my $srvr = zk_4lw($zk->{ports}[0], 'srvr');
	$srvr =~ /^Zxid: (0x[0-9a-f]+)/m or die "no Zxid in srvr: $srvr";
	return hex($1);
}

# does node PATH (a full ZooKeeper path) exist?
sub exists_node
{
	my ($path) = @_;
	return kazoo_run($zk, "print(c.exists('$path') is not None)") eq 'True';
}

# the transactions a statement's token counts (see the header); STMT
# returns the token
sub writes
{
	my ($s, $stmt) = @_;
	my $before = zxid();
	my $token = $s->query_safe($stmt);
	return $token - $before;
}

my $sa = verbose_session($na);
my $sb = verbose_session($nb);

# a parent that stays: the fresh paths' lock nodes go, their parent not
$sb->query_safe(q{SELECT zk_lock('/fresh/keep')});

# --- one lock per fresh path: one write
{
	my @w;
	for my $i (1 .. 8)
	{
		push @w, writes($sa, "SELECT zk_lock('/fresh/one/$i')");
		$sa->query_safe("SELECT zk_unlock('/fresh/one/$i')");
	}
	is(min(@w), 2, 'a lock whose lock node is missing costs two writes')
	  or diag("writes: @w");
}

# --- a hot path: one write per lock once known
{
	# the zxids a statement spans count every transaction of the server,
	# the reaper's deletes too: let it take the lock nodes above (and then
	# their parents) first
	ok( wait_for(
			sub {
				!exists_node('/zklock/fresh/one');
			},
			20,
			'the reaper done with the fresh paths'),
		'the fresh paths\' lock nodes are reaped before the hot path is counted');
	my @w;
	for my $i (1 .. 12)
	{
		push @w, writes($sa, q{SELECT zk_lock('/fresh/hot')});
		$sa->query_safe(q{SELECT zk_unlock('/fresh/hot')});
	}
	my @sorted = sort { $a <=> $b } @w;
	is($sorted[6], 1, 'a path locked over and over: one write per lock (median)')
	  or diag("writes: @w");
}

# --- a wrong "missing": the path is held on the other server, and this
# backend has only met missing lock nodes lately
{
	$sb->query_safe(q{SELECT zk_lock('/fresh/held')});
	for my $i (1 .. 3)
	{
		$sa->query_safe("SELECT zk_lock('/fresh/teach/$i')");
		$sa->query_safe("SELECT zk_unlock('/fresh/teach/$i')");
	}
	my ($out) = bg_query($sa, q{SELECT zk_try_lock('/fresh/held', 300)});
	is($out, 'f', 'a try on a path held elsewhere, guessed missing: false');
	is(queue_len($na, '/fresh/held'), 1, 'and only the holder is queued');

	bg_begin($sa, q{SELECT zk_lock('/fresh/held') > 0 AS got}, 'held_done');
	ok(wait_queue_len($nb, '/fresh/held', 2, 10, 'queued'), 'a lock then waits');
	$sb->query_safe(q{SELECT zk_unlock('/fresh/held')});
	my ($got) = bg_finish($sa, 'held_done');
	is($got, 't', 'and is granted when the holder unlocks');
	is(queue_rows($na, '/fresh/held', q{cluster_name || ':' || granted}),
		'a:true', 'one node, granted');
	$sa->query_safe(q{SELECT zk_unlock('/fresh/held')});
}

# --- a wrong "there": a known path reaped since costs the refused multi
# (its transaction), then the lock node's create and the multi again
{
	my @w;
	for my $rep (1 .. 3)
	{
		for (1 .. 4)
		{
			$sa->query_safe(q{SELECT zk_lock('/fresh/known')});
			$sa->query_safe(q{SELECT zk_unlock('/fresh/known')});
		}
		wait_for(sub { !exists_node('/zklock/fresh/known') }, 10, 'reaped')
		  or last;
		push @w, writes($sa, q{SELECT zk_lock('/fresh/known')});
		is(queue_rows($nb, '/fresh/known', q{cluster_name || ':' || granted}),
			'a:true', "a known path, reaped since, is locked with one node ($rep)");
		$sa->query_safe(q{SELECT zk_unlock('/fresh/known')});
	}
	is(min(@w), 3, 'and it costs three writes: the refused multi, the lock node, the multi')
	  or diag("writes: @w");
}

# --- lock sets
{
	my @w;
	for my $i (1 .. 5)
	{
		my $arr = 'ARRAY[' . join(', ', map { "'/fresh/set/s${i}p$_'" } 1 .. 10) . ']';
		push @w, writes($sa, "SELECT zk_lock($arr)");
		$sa->query_safe("SELECT zk_unlock($arr)");
	}
	is(min(@w), 11, 'a set of 10 locks on fresh paths costs eleven writes')
	  or diag("writes: @w");

	# a set with one member held on the other server, the rest fresh
	my @paths = map { "/fresh/mixed/p$_" } 1 .. 6;
	my $arr = 'ARRAY[' . join(', ', map { "'$_'" } @paths) . ']';
	$sb->query_safe(q{SELECT zk_lock('/fresh/mixed/p4')});
	bg_begin($sa, "SELECT zk_lock($arr) > 0 AS got", 'mixed_done');
	ok(wait_queue_len($nb, '/fresh/mixed/p4', 2, 10, 'set queued'),
		'a set with a held member waits');
	is(join('', map { queue_len($nb, $_) } @paths), '111211',
		'with one node in every queue');
	$sb->query_safe(q{SELECT zk_unlock('/fresh/mixed/p4')});
	my ($got) = bg_finish($sa, 'mixed_done');
	is($got, 't', 'and is granted once it is free');
	$sa->query_safe("SELECT zk_unlock($arr)");
	ok(wait_queues_empty($nb, \@paths, 10, 'set released'), 'nothing left');
}

# --- a known set whose lock nodes the reaper took: the refused multi names
# one, the set then makes all five at once (one more round trip, not five)
{
	my $arr = 'ARRAY[' . join(', ', map { "'/fresh/kset/p$_'" } 1 .. 5) . ']';
	my @w;
	# the writes are counted by zxids, which every transaction of the
	# server takes: another session's lock below /fresh/kset keeps that
	# parent from being reaped meanwhile, and the count starts once the
	# reaper is done (no transaction for longer than its interval)
	$sb->query_safe(q{SELECT zk_lock('/fresh/kset/keep')});
	for my $rep (1 .. 2)
	{
		for (1 .. 4)
		{
			$sa->query_safe("SELECT zk_lock($arr)");
			$sa->query_safe("SELECT zk_unlock($arr)");
		}
		wait_for(sub { !exists_node('/zklock/fresh/kset/p5') && !exists_node('/zklock/fresh/kset/p1') },
			10, 'set reaped')
		  or last;
		my $z = zxid();
		wait_for(
			sub {
				usleep(1_500_000);
				my $now = zxid();
				my $quiet = $now == $z;
				$z = $now;
				return $quiet;
			},
			30, 'the reaper done')
		  or last;
		push @w, writes($sa, "SELECT zk_lock($arr)");
		is(join('', map { queue_len($nb, "/fresh/kset/p$_") } 1 .. 5), '11111',
			"a known set, reaped since, is locked with one node per path ($rep)");
		$sa->query_safe("SELECT zk_unlock($arr)");
	}
	is("@w", '7 7', 'and it costs seven writes each time: the refused multi, five lock nodes, the multi');
	$sb->query_safe(q{SELECT zk_unlock('/fresh/kset/keep')});
}

# --- semaphores
{
	my @w;
	for my $i (1 .. 5)
	{
		push @w, writes($sa, "SELECT zk_semaphore_acquire('/fresh/sem$i', 3)");
		$sa->query_safe("SELECT zk_semaphore_release('/fresh/sem$i')");
	}
	is(min(@w), 4, 'a lease of a fresh semaphore costs four writes')
	  or diag("writes: @w");

	$sa->query_safe(q{SELECT zk_semaphore_acquire('/fresh/semlimit', 3)});
	is(kazoo_run($zk, "print(c.get('/zklock/fresh/semlimit')[0].decode())"),
		'{"max_leases":3}', 'the fresh semaphore records its limit');
	my ($out, $err) = bg_query($sb,
		q{SELECT zk_semaphore_acquire('/fresh/semlimit', 2)});
	error_is($err, '22023', qr/ZooKeeper semaphore "\/fresh\/semlimit" admits 3 permits, not 2/,
		'a different limit is refused: 22023');
	$sa->query_safe(q{SELECT zk_semaphore_release('/fresh/semlimit')});
}

# --- the reaper races: one path in turns on two servers, with pauses
# around the reaper's interval, both backends' guesses mixed up
{
	my $last = 0;
	my $ok = 1;
	my @pause_ms = (0, 300, 900, 1000, 1100, 1500, 50, 2100, 950, 1050);
	for my $round (0 .. 19)
	{
		my ($s, $node, $name) = $round % 2 ? ($sb, $nb, 'b') : ($sa, $na, 'a');
		usleep($pause_ms[$round % @pause_ms] * 1000);
		my $token = $s->query_safe(q{SELECT zk_lock('/fresh/race')});
		my $queue = queue_rows($node, '/fresh/race', q{cluster_name || ':' || granted});
		if ($token <= $last || $queue ne "$name:true")
		{
			diag("round $round: token $token after $last, queue $queue");
			$ok = 0;
		}
		$last = $token;
		$s->query_safe(q{SELECT zk_unlock('/fresh/race')});
	}
	ok($ok, '20 turns across the reaper: each grant alone, tokens increasing');
	ok(wait_queues_empty($na, ['/fresh/race'], 10, 'race over'), 'nothing left');
}

$sb->query_safe(q{SELECT zk_unlock('/fresh/keep')});
$sa->quit;
$sb->quit;
done_testing();
