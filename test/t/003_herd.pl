# Herd-free waiting, shown with ZooKeeper's own counters.
#
# Ten waiters (on two servers) queue behind one holder.  Then:
# - mntr's zk_watch_count is 21: each waiter watches the one node it waits
#   for and its own node (so that a deletion of its node by another client
#   cannot go unnoticed when it is granted on a notification, without
#   reading the queue), the holder watches its own node (for its loss,
#   once held 250 ms), and nobody sets a child watch on the lock node
#   (zk_watch_count counts data and child watches alike);
# - wchc shows that each waiter's session watches exactly those two
#   paths: the queue node just before its own, and its own (in ZooKeeper
#   3.8 wchc/wchp list data and exists watches only, hence the
#   zk_watch_count check above);
# - after the holder releases, only the first waiter is granted, the
#   watches on the released node fired, and the other nine sessions sent no
#   request at all: their last client xid (cons' lcxid, which pings do not
#   change) is unchanged.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
# (deadlock_timeout is long so that no waiter's deadlock check, a request
# of its own made once its wait has lasted that long, falls between the
# counts taken before and after the release)
my $conf = "zklock.session_timeout = '60s'\nmax_connections = 40\n"
  . "deadlock_timeout = '60s'\n";
my $a = pg_with_zklock('a', $zk, $conf);
my $b = pg_with_zklock('b', $zk, $conf);
my $path = '/herd/x';
my $lock_node = "/zklock$path";
my $n = 10;

sub queue
{
	my $rows = $a->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('$path') ORDER BY position");
	return [ split /\n/, $rows ];
}

# session id (as a number) -> last client xid, from cons
sub lcxids
{
	my %m;
	for my $line (split /\n/, zk_4lw($port, 'cons'))
	{
		$m{ hex($1) } = hex($2) if $line =~ /sid=(0x[0-9a-f]+).*lcxid=(0x[0-9a-f]+)/;
	}
	return \%m;
}

# session id (as a number) -> [watched paths], from wchc
sub watches_by_session
{
	my (%m, $sid);
	for my $line (split /\n/, zk_4lw($port, 'wchc'))
	{
		if ($line =~ /^(0x[0-9a-f]+)/) { $sid = hex($1); $m{$sid} = []; }
		elsif ($line =~ /^\s+(\S+)/ && defined $sid) { push @{ $m{$sid} }, $1; }
	}
	return \%m;
}

my $holder = $a->background_psql('postgres');
$holder->query_safe("SELECT zk_lock('$path')");

my (@w, @sid);
for my $i (1 .. $n)
{
	my $node = $i % 2 ? $b : $a;
	my $s = $node->background_psql('postgres');
	# open the session first, to learn its id
	$s->query_safe("SELECT zk_unlock('/herd/warmup-$i') FROM (SELECT zk_lock('/herd/warmup-$i')) x");
	push @sid, hex($s->query_safe('SELECT session_id FROM zk_session()'));
	bg_begin($s, "SELECT zk_lock('$path') > 0", "herd_$i");
	push @w, $s;
	wait_for(sub { scalar(@{ queue() }) == $i + 1 }, 10, "waiter $i queued")
	  or BAIL_OUT("waiter $i did not queue");
}
my $q = queue();
is(scalar(@$q), $n + 1, "one holder and $n waiters in the queue");

# --- two watches per waiter: its predecessor and its own node; and the
# holder's on its own node, which it watches for its loss once held 250 ms
# (its first waiter watches that node too)
ok(wait_for(sub { (zk_watches($zk)->{"$lock_node/$q->[0]"} // 0) >= 2 }, 10,
		'the holder to watch its node'),
	'the holder watches its own node');
my $mntr = zk_mntr($port);
is($mntr->{zk_watch_count}, 2 * $n + 1,
	"mntr: zk_watch_count is 2 x $n + 1 (no child watch on the lock node)");

my $wchc = watches_by_session();
my $right = 0;
for my $i (1 .. $n)
{
	my @watched = sort @{ $wchc->{ $sid[ $i - 1 ] } // [] };
	my @expected = sort("$lock_node/$q->[$i - 1]", "$lock_node/$q->[$i]");
	my $ok = "@watched" eq "@expected";
	$right++ if $ok;
	diag("waiter $i watches @watched, expected @expected") unless $ok;
}
is($right, $n, 'wchc: every waiter watches exactly its predecessor and its own node');

my $wchp = zk_4lw($port, 'wchp');
my @watched_paths = grep { m{^/} } split /\n/, $wchp;
is(scalar(grep { $_ eq $lock_node } @watched_paths),
	0, 'wchp: nobody watches the lock node itself');
is(scalar(grep { index($_, "$lock_node/") == 0 } @watched_paths),
	$n + 1, 'wchp: the watched paths are the queue nodes');

# --- a release wakes only the next waiter
my $before = lcxids();
$holder->query_safe("SELECT zk_unlock('$path')");
my ($out) = bg_finish($w[0], 'herd_1');
like($out, qr/\bt\b/, 'the first waiter is granted');
usleep(500_000);
my @early = grep { bg_done($w[$_], 'herd_' . ($_ + 1)) } (1 .. $n - 1);
is(scalar(@early), 0, 'nobody else is granted');
my $after = lcxids();
my @talked = grep { ($before->{ $sid[$_] } // -1) != ($after->{ $sid[$_] } // -2) }
  (1 .. $n - 1);
is(scalar(@talked), 0,
	'the other nine waiters sent no request to ZooKeeper (cons lcxid unchanged)');
note(sprintf('the granted waiter sent %d request(s) after the release',
		($after->{ $sid[0] } // 0) - ($before->{ $sid[0] } // 0)));
figure(other_waiters_requests => scalar(@talked));
my $watches_after = zk_mntr($port)->{zk_watch_count};
is($watches_after, 2 * $n - 1,
	'two watches fewer: only the watches on the released node (its holder\'s and its waiter\'s) fired');
figure(watches_before => $mntr->{zk_watch_count}, watches_after => $watches_after);

# --- the rest of the chain, in order
my $t0 = time();
for my $i (1 .. $n - 1)
{
	$w[ $i - 1 ]->query_safe("SELECT zk_unlock('$path')");
	($out) = bg_finish($w[$i], 'herd_' . ($i + 1));
	like($out, qr/\bt\b/, 'waiter ' . ($i + 1) . ' is granted next');
}
note(sprintf('%d successive handoffs in %.0f ms', $n - 1, 1000 * (time() - $t0)));
figure(chain_handoffs => $n - 1, chain_ms => sprintf('%.0f', 1000 * (time() - $t0)));
$w[ $n - 1 ]->query_safe("SELECT zk_unlock('$path')");
$_->quit for ($holder, @w);

ok( wait_for(sub { scalar(@{ queue() }) == 0 }, 10, 'empty queue'),
	'the queue is empty at the end');
ok( wait_for(sub { zk_mntr($port)->{zk_watch_count} == 0 }, 10, 'no watches'),
	'and no watch is left');

$a->stop;
$b->stop;
done_testing();
