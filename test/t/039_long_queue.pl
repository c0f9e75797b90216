# A long queue waits past deadlock_timeout: what the deadlock checks cost,
# shown with ZooKeeper's own counters.
#
# 32 waiters (16 backends on each of two servers, deadlock_timeout =
# 200ms) queue on one path behind a holder, which keeps the lock 4 s after
# every waiter is seen waiting in zklock, and on until ZooKeeper is quiet
# again.  Each waiter publishes its wait and checks for a cycle through the
# others.  Then:
# - the checks are over within 30 s: a second with no more requests than
#   pings explain;
# - the ZooKeeper requests from the first waiter's zk_lock to the end of the
#   hold (mntr's zk_packets_received, the waiters' own joins included),
#   less the pings the sessions may send meanwhile, stay under 12 n: a
#   waiter's join costs about 5 requests and its check, which reads the
#   holder and leaves out the waiters ahead of it, about 4; a check that
#   reads the owner and the record of every node ahead costs about 2 k for
#   the k-th waiter, n² for the queue (38 n here), and one that follows
#   every path through the queue 2^k;
# - every waiter had published its wait (the checks did run) and was in
#   the queue;
# - after the holder's release, every waiter (releasing as soon as it is
#   granted) is granted, in the order of the queue, with fencing tokens
#   that only increase;
# - no queue node, no published wait and no ephemeral node is left.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $n = 32;
my $hold_s = 4;
my $per_waiter = 12;
my $path = '/longq/x';

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
my $conf = "deadlock_timeout = '200ms'\nmax_connections = " . ($n / 2 + 20) . "\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

sub requests { return zk_mntr($port)->{zk_packets_received}; }

# published waits (the records of deadlock detection)
sub records
{
	return kazoo_run($zk,
		"print(len(c.get_children('/zklock.waits')) if c.exists('/zklock.waits') else 0)");
}

# the pids of a server's backends that wait in zklock in their zk_lock
# (pg_stat_activity: no request to ZooKeeper)
sub waiting_pids
{
	my ($node) = @_;
	return split /\n/,
	  $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE state = 'active'
		 AND wait_event_type = 'Extension' AND query LIKE '%zk_lock(''$path'')%'");
}

my $holder = $na->background_psql('postgres');
$holder->query_safe("SELECT zk_lock('$path')");

# the waiters, each with its ZooKeeper session open (by a read of another
# path) before anything is counted; a waiter is named "server:pid"
my (@w, @who, %index);
for my $i (0 .. $n - 1)
{
	my $node = $i % 2 ? $nb : $na;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->query_safe("SELECT count(*) FROM zk_lock_queue('/longq/warm')");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	push @w, $s;
	push @who, $node->name . ":$pid";
	$index{ $who[-1] } = $i;
}

# --- the wait
my $r0 = requests();
my $t0 = time();
# (OFFSET 0: the grant's time is read after zk_lock returned; the release
# comes after it)
bg_begin($w[$_],
	"SELECT t.token, extract(epoch FROM clock_timestamp())
	 FROM (SELECT zk_lock('$path') AS token OFFSET 0) t;
	 SELECT zk_unlock('$path')",
	"lq_$_")
  for 0 .. $n - 1;
my %seen;
ok( wait_for(
		sub {
			for my $node ($na, $nb)
			{
				$seen{ $node->name . ":$_" } = 1 for waiting_pids($node);
			}
			return scalar(grep { $seen{$_} } @who) == $n;
		},
		60,
		'every waiter waiting in zklock'),
	"all $n waiters wait in zklock");
my $t_queued = time();

# held hold_s more seconds, and on (at most 30 s) until the checks are
# over: a second, begun past deadlock_timeout, with no more requests than
# pings explain (each session pings every third of its 10 s timeout);
# ZooKeeper's requests sampled every 500 ms
my $quiet_rps = $n / 2 + 10;
my ($prev_t, $prev_r) = ($t0, $r0);
my ($quiet_at, @profile);
for (;;)
{
	usleep(500_000);
	my ($t, $r) = (time(), requests());
	push @profile, sprintf('%.1fs:%d', $t - $t0, $r - $r0);
	if ($t - $prev_t >= 1)
	{
		$quiet_at //= $prev_t
		  if ($r - $prev_r) / ($t - $prev_t) <= $quiet_rps
		  && $prev_t >= $t_queued + 0.2;
		($prev_t, $prev_r) = ($t, $r);
	}
	last if $t - $t_queued >= $hold_s && (defined $quiet_at || $t - $t_queued >= 30);
}
my $r1 = requests();
my $wait_s = time() - $t0;
my $during = $r1 - $r0;
note(sprintf('requests during the wait: %d in %.1f s (%.2f n²; queued in %.1f s)',
		$during, $wait_s, $during / ($n * $n), $t_queued - $t0));
note('requests since the first zk_lock, sampled: ' . join(' ', @profile));
ok(defined $quiet_at,
	"the deadlock checks are over: ZooKeeper gets no more than pings within 30 s");
note(sprintf('quiet from %.1f s after the first zk_lock', $quiet_at - $t0))
  if defined $quiet_at;
# pings: each of the n + 2 sessions at most once a third of its 10 s timeout
my $pings = int(($n + 2) * $wait_s / 3) + 1;
note(sprintf('less %d pings: %.1f n', $pings, ($during - $pings) / $n));
figure(requests_per_waiter => sprintf('%.1f', ($during - $pings) / $n));
cmp_ok($during - $pings, '<', $per_waiter * $n,
	"ZooKeeper requests while $n waiters wait past deadlock_timeout, less pings, stay under $per_waiter n: linear");

is(records(), $n, 'every waiter published its wait (each checked for a deadlock)');
my @queue = split /\n/,
  $na->safe_psql('postgres',
	"SELECT cluster_name || ':' || pid FROM zk_lock_queue('$path') ORDER BY position");
my $holder_who = 'a:' . $holder->query_safe('SELECT pg_backend_pid()');
is(shift(@queue) // '', $holder_who, 'the holder is first in the queue');
is_deeply([ sort @queue ], [ sort @who ], "and the $n waiters are all behind it");

# --- the drain: each waiter releases as soon as it is granted
my $t_rel = time();
$holder->query_safe("SELECT zk_unlock('$path')");
my $drained = wait_for(
	sub {
		return scalar(grep { bg_done($w[$_], "lq_$_") } 0 .. $n - 1) == $n;
	},
	60,
	'every waiter granted and released');
ok($drained, "every waiter is granted once the holder releases");
note(sprintf('drained in %.0f ms', 1000 * (time() - $t_rel)));

my (@grants, $errors);
$errors = '';
for my $i (0 .. $n - 1)
{
	if (!bg_done($w[$i], "lq_$i"))
	{
		# still waiting: ended, so that the test ends
		my $node = $who[$i] =~ /^a:/ ? $na : $nb;
		my ($pid) = $who[$i] =~ /:(\d+)$/;
		$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
		next;
	}
	my ($out, $err) = bg_finish($w[$i], "lq_$i");
	$errors .= $err;
	my ($token, $at) = $out =~ /^(\d+)\|([\d.]+)$/m;
	push @grants, { who => $who[$i], token => $token, at => $at } if defined $at;
}
is($errors, '', 'no waiter got an error');
@grants = sort { $a->{at} <=> $b->{at} } @grants;
is_deeply([ map { $_->{who} } @grants ], \@queue,
	'the waiters are granted in the order of the queue');
my $rising = grep { $grants[$_]{token} > $grants[ $_ - 1 ]{token} } 1 .. $#grants;
is($rising, $n - 1, 'each grant has a larger fencing token than the one before');

# --- nothing left
ok(wait_queues_empty($na, [$path], 10, 'empty queue'), 'no queue node is left');
ok(wait_for(sub { records() eq '0' }, 10, 'no records'), 'no published wait is left');
ok(wait_for(sub { zk_mntr($port)->{zk_ephemerals_count} == 0 }, 10, 'no ephemerals'),
	'no ephemeral node is left (every session still open)');

$_->quit for ($holder, @w);
$na->stop;
$nb->stop;
done_testing();
