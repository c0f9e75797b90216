# Queue order across two servers: strict FIFO among several waiters, a
# reader queued behind a waiting writer, a writer waiting for several
# readers, readers granted together, the downgrade guard, and an
# interruptible connect while ZooKeeper is unreachable.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk);
my $b = pg_with_zklock('b', $zk);
my @servers = ($a, $b);

# "mode:granted,..." in queue order, seen from server A
sub queue_shape
{
	my ($path) = @_;
	return queue_rows($a, $path, q{mode || ':' || granted});
}

# start SQL in a new background session on a server; wait until the
# queue of $path has $n nodes (so that the order of arrival is known)
sub queue_up
{
	my ($node, $sql, $marker, $path, $n) = @_;
	my $s = $node->background_psql('postgres');
	bg_begin($s, $sql, $marker);
	wait_queue_len($a, $path, $n, 10, "$n nodes in $path")
	  or die "queue of $path never reached $n nodes";
	return $s;
}

# a little time for a wrong grant to show up, if there were one
sub settle { usleep(300_000) }

# --- strict FIFO among writers on two servers
{
	my $path = '/order/fifo';
	my $holder = $a->background_psql('postgres');
	$holder->query_safe("SELECT zk_lock('$path')");
	my @w;
	for my $i (1 .. 4)
	{
		push @w,
		  queue_up($servers[ $i % 2 ], "SELECT zk_lock('$path') > 0",
			"fifo_$i", $path, $i + 1);
	}
	is(queue_shape($path),
		'exclusive:true,exclusive:false,exclusive:false,exclusive:false,exclusive:false',
		'one holder, four waiters');

	$holder->query_safe("SELECT zk_unlock('$path')");
	for my $i (1 .. 4)
	{
		my ($out) = bg_finish($w[ $i - 1 ], "fifo_$i");
		like($out, qr/\bt\b/, "waiter $i is granted in its turn");
		settle();
		my @early = grep { bg_done($w[ $_ - 1 ], "fifo_$_") } ($i + 1 .. 4);
		is(scalar(@early), 0, "nobody behind waiter $i got the lock early");
		$w[ $i - 1 ]->query_safe("SELECT zk_unlock('$path')");
	}
	$_->quit for ($holder, @w);
}

# --- a reader queued behind a waiting writer waits for it (no starvation)
{
	my $path = '/order/no-starvation';
	my $r1 = $a->background_psql('postgres');
	$r1->query_safe("SELECT zk_rlock('$path')");
	my $w = queue_up($b, "SELECT zk_lock('$path') > 0", 'w_got', $path, 2);
	is($a->safe_psql('postgres', "SELECT zk_try_rlock('$path', 200)"),
		'f', 'a new reader does not overtake the waiting writer');
	my $r2 = queue_up($a, "SELECT zk_rlock('$path') > 0", 'r2_got', $path, 3);
	is(queue_shape($path), 'shared:true,exclusive:false,shared:false',
		'queue: reader holds, writer waits, reader waits behind it');

	$r1->query_safe("SELECT zk_unlock('$path')");
	my ($out) = bg_finish($w, 'w_got');
	like($out, qr/\bt\b/, 'the writer gets the lock when the first reader leaves');
	settle();
	ok(!bg_done($r2, 'r2_got'), 'the later reader still waits for the writer');
	$w->query_safe("SELECT zk_unlock('$path')");
	($out) = bg_finish($r2, 'r2_got');
	like($out, qr/\bt\b/, 'then the later reader gets it');
	$r2->query_safe("SELECT zk_unlock('$path')");
	$_->quit for ($r1, $w, $r2);
}

# --- a writer waits for every reader
{
	my $path = '/order/readers-first';
	my $r1 = $a->background_psql('postgres');
	my $r2 = $b->background_psql('postgres');
	$r1->query_safe("SELECT zk_rlock('$path')");
	$r2->query_safe("SELECT zk_rlock('$path')");
	my $w = queue_up($a, "SELECT zk_lock('$path') > 0", 'w_got', $path, 3);
	$r1->query_safe("SELECT zk_unlock('$path')");
	settle();
	ok(!bg_done($w, 'w_got'), 'the writer waits while one reader remains');
	$r2->query_safe("SELECT zk_unlock('$path')");
	my ($out) = bg_finish($w, 'w_got');
	like($out, qr/\bt\b/, 'the writer gets the lock after the last reader');
	$w->query_safe("SELECT zk_unlock('$path')");
	$_->quit for ($r1, $r2, $w);
}

# --- readers waiting for a writer are granted together
{
	my $path = '/order/readers-together';
	my $w = $b->background_psql('postgres');
	$w->query_safe("SELECT zk_lock('$path')");
	my $r1 = queue_up($a, "SELECT zk_rlock('$path') > 0", 'r1_got', $path, 2);
	my $r2 = queue_up($b, "SELECT zk_rlock('$path') > 0", 'r2_got', $path, 3);
	$w->query_safe("SELECT zk_unlock('$path')");
	my ($o1) = bg_finish($r1, 'r1_got');
	my ($o2) = bg_finish($r2, 'r2_got');
	ok($o1 =~ /\bt\b/ && $o2 =~ /\bt\b/, 'both readers get the lock');
	is(queue_shape($path), 'shared:true,shared:true', 'and hold it together');
	$_->query_safe("SELECT zk_unlock('$path')") for ($r1, $r2);
	$_->quit for ($w, $r1, $r2);
}

# --- downgrade: a writer queued meanwhile cannot get in while we still read
{
	my $path = '/order/downgrade';
	my $d = $a->background_psql('postgres');
	$d->query_safe("SELECT zk_lock('$path')");
	my $w = queue_up($b, "SELECT zk_lock('$path') > 0", 'w_got', $path, 2);
	$d->query_safe("SELECT zk_rlock('$path')");
	is(queue_len($a, $path), 3, 'the read node joins the queue behind the waiter');
	$d->query_safe("SELECT zk_unlock('$path')");
	is($d->query_safe("SELECT string_agg(mode, ',') FROM zk_locks"),
		'shared', 'after unlock only the shared hold is left');
	settle();
	ok(!bg_done($w, 'w_got'),
		'the waiting writer is not granted while the downgraded reader reads');
	is(queue_shape($path), 'exclusive:true,exclusive:false,shared:true',
		'the write node stays as a guard in front of the waiter');
	$d->query_safe("SELECT zk_unlock('$path')");
	my ($out) = bg_finish($w, 'w_got');
	like($out, qr/\bt\b/, 'the writer gets the lock when the read hold ends');
	is(queue_shape($path), 'exclusive:true', 'and the guard is gone');
	$w->query_safe("SELECT zk_unlock('$path')");
	$_->quit for ($d, $w);
}

# --- connecting while ZooKeeper is unreachable can be cancelled at once
{
	my $s = $a->background_psql('postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');
	$s->query_safe("SET zklock.hosts = '127.0.0.1:1'");
	$s->query_safe("SET zklock.connect_timeout = '60s'");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	bg_begin($s, "SELECT zk_lock('/order/unreachable')", 'conn_done');
	usleep(300_000);
	my $t0 = time();
	$a->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my ($out, $err) = bg_finish($s, 'conn_done');
	my $ms = 1000 * (time() - $t0);
	error_is($err, '57014', qr/canceling statement due to user request/,
		'a connect in progress is cancelled: 57014');
	cmp_ok($ms, '<', 1000, sprintf('promptly (%.0f ms)', $ms));
	is($s->query_safe('SELECT state FROM zk_session()'),
		'closed', 'and leaves no half-open session');
	$s->quit;
}

# --- nothing is left behind
ok( wait_queues_empty(
		$b,
		[
			'/order/fifo', '/order/no-starvation', '/order/readers-first',
			'/order/readers-together', '/order/downgrade'
		],
		10,
		'empty queues'),
	'no queue node is left');

$a->stop;
$b->stop;
done_testing();
