# zklock and kazoo (and Curator) wait in one queue on the same ZooKeeper
# path.
#
# A real kazoo client (test/python/kazoo_client.py, Debian's kazoo 2.8) and
# PostgreSQL backends take locks on one lock node: kazoo's Lock with
# extra_lock_patterns=["__WRIT__", "__READ__"] against zk_lock and zk_rlock
# in both directions (and a plain Lock, which does not see zklock), ReadLock
# and WriteLock against zklock's shared lock, a kazoo writer queued between
# two zklock readers, kazoo holders that close their session or exit without
# releasing, and what zk_lock_queue shows of kazoo's nodes.  The last part
# puts zklock, Curator and kazoo in one queue, and shows what it takes for
# Curator to see kazoo's nodes.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

if (my $why = kazoo_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $pg = pg_with_zklock('a', $zk);

my $k1 = kazoo_client('kazoo1', $zk, '/zklock/kz/w', 10, 'kazoo-one');
like($k1->{ready}, qr/^ready session=0x[0-9a-f]+ /, 'the kazoo client is connected');

sub sql { return $pg->safe_psql('postgres', $_[0]); }

# the session timeout ZooKeeper granted a client, from "cons"
sub granted_timeout
{
	my ($ready) = @_;
	my ($sid) = ($ready // '') =~ /session=(0x[0-9a-f]+)/ or return '?';
	my ($to) = zk_4lw($zk->{ports}[0], 'cons') =~ /sid=\Q$sid\E,.*?\bto=(\d+)/;
	return $to // '?';
}

my $h1 = $pg->background_psql('postgres');
my $h2 = $pg->background_psql('postgres');

# --- kazoo's Lock (with zklock's names as extra patterns) excludes zklock
is(client_ask($k1, 'lock 5000'), 'acquired lock', 'kazoo takes its Lock');
is(sql(q{SELECT zk_try_lock('/kz/w')}),
	'f', 'zk_try_lock fails while kazoo holds the lock');
is(sql(q{SELECT zk_try_rlock('/kz/w', 200)}),
	'f', 'so does zk_try_rlock, after waiting 200 ms');
queue_is($pg, '/kz/w', '1:exclusive:t:kazoo-one',
	'the failed tries left nothing behind');
is( sql(
		q{SELECT znode ~ '^[0-9a-f]{32}__lock__[0-9]{10}$', mode, granted, data,
		         cluster_name IS NULL AND pid IS NULL
		  FROM zk_lock_queue('/kz/w')}),
	't|exclusive|t|kazoo-one|t',
	"zk_lock_queue shows kazoo's node: exclusive, granted, kazoo's identifier as data"
);

bg_begin($h1, q{SELECT zk_lock('/kz/w') > 0 AS got}, 'h1_got_w');
ok(wait_queue_len($pg, '/kz/w', 2, 15, 'zk_lock queued behind kazoo'),
	'zk_lock queues behind kazoo');
queue_is($pg, '/kz/w', '1:exclusive:t:kazoo-one,2:exclusive:f:a',
	'the queue: kazoo holding, zklock waiting');
ok(!bg_done($h1, 'h1_got_w'), 'zk_lock is still waiting');

my $t0 = time();
is(client_ask($k1, 'release lock'), 'released lock', 'kazoo releases');
my ($out) = bg_finish($h1, 'h1_got_w');
my $ms = 1000 * (time() - $t0);
like($out, qr/^t$/m, 'zk_lock gets the lock once kazoo released it');
note(sprintf('kazoo release -> zk_lock handoff: %.1f ms', $ms));

# --- zklock's write lock excludes kazoo's Lock, not a plain one
is(client_ask($k1, 'lock 300'), 'timeout lock',
	"kazoo's Lock times out while zklock holds the lock");
queue_is($pg, '/kz/w', '1:exclusive:t:a',
	'the timed-out kazoo attempt left no node behind');
is(client_ask($k1, 'plainlock 2000'), 'acquired plainlock',
	'a kazoo Lock without extra_lock_patterns does not see zklock (why they are needed)');
is(client_ask($k1, 'release plainlock'), 'released plainlock',
	'kazoo releases the plain Lock');

client_send($k1, 'lock');
is(client_next($k1), 'acquiring lock', 'kazoo waits for its Lock');
ok(wait_queue_len($pg, '/kz/w', 2, 15, 'kazoo queued behind zklock'),
	'kazoo queues behind zklock');
queue_is($pg, '/kz/w', '1:exclusive:t:a,2:exclusive:f:kazoo-one',
	'the queue: zklock holding, kazoo waiting');
is(client_poll($k1), undef, 'kazoo is still waiting');

$t0 = time();
$h1->query_safe(q{SELECT zk_unlock('/kz/w')});
is(client_next($k1, 10), 'acquired lock',
	'kazoo gets its Lock once zklock released it');
note(sprintf('zk_unlock -> kazoo handoff: %.1f ms', 1000 * (time() - $t0)));
is(client_ask($k1, 'release lock'), 'released lock', 'kazoo releases');

# --- kazoo's ReadLock shares with zk_rlock and excludes zk_lock
is(client_ask($k1, 'path /zklock/kz/r'), 'path /zklock/kz/r',
	'kazoo client switches to /kz/r');
$h1->query_safe(q{SELECT zk_rlock('/kz/r')});
is(client_ask($k1, 'rlock 3000'), 'acquired rlock',
	"kazoo's ReadLock shares with zklock's read lock (zklock first)");
is(sql(q{SELECT zk_try_rlock('/kz/r')}), 't', 'another zklock reader gets in too');
is( sql(
		q{SELECT znode ~ '^[0-9a-f]{32}__rlock__[0-9]{10}$', mode, granted, data
		  FROM zk_lock_queue('/kz/r') WHERE cluster_name IS NULL}),
	't|shared|t|kazoo-one',
	"zk_lock_queue shows kazoo's ReadLock node as a granted shared holder");
is(sql(q{SELECT zk_try_lock('/kz/r', 200)}), 'f', 'a zklock writer cannot get in');
$h1->query_safe(q{SELECT zk_unlock('/kz/r')});
queue_is($pg, '/kz/r', '1:shared:t:kazoo-one', 'the kazoo reader remains');
is(sql(q{SELECT zk_try_rlock('/kz/r', 2000)}),
	't', "zk_rlock shares with kazoo's ReadLock (kazoo first)");
is(sql(q{SELECT zk_try_lock('/kz/r')}),
	'f', 'zk_try_lock fails while kazoo holds the ReadLock');
is(client_ask($k1, 'release rlock'), 'released rlock', 'kazoo releases');

$h1->query_safe(q{SELECT zk_lock('/kz/r')});
is(client_ask($k1, 'rlock 300'), 'timeout rlock',
	"kazoo's ReadLock times out while zklock holds the write lock");
$h1->query_safe(q{SELECT zk_unlock('/kz/r')});

# --- kazoo's WriteLock excludes zk_rlock and is excluded by it
is(client_ask($k1, 'path /zklock/kz/x'), 'path /zklock/kz/x',
	'kazoo client switches to /kz/x');
$h1->query_safe(q{SELECT zk_rlock('/kz/x')});
is(client_ask($k1, 'wlock 300'), 'timeout wlock',
	"kazoo's WriteLock times out while zklock holds the read lock");
client_send($k1, 'wlock');
is(client_next($k1), 'acquiring wlock', 'kazoo waits for its WriteLock');
ok(wait_queue_len($pg, '/kz/x', 2, 15, 'kazoo WriteLock queued'),
	"kazoo's WriteLock queues behind the zklock reader");
queue_is($pg, '/kz/x', '1:shared:t:a,2:exclusive:f:kazoo-one',
	'the queue: zklock reader holding, kazoo writer waiting');
$t0 = time();
$h1->query_safe(q{SELECT zk_unlock('/kz/x')});
is(client_next($k1, 10), 'acquired wlock',
	'kazoo gets its WriteLock once the zklock reader left');
note(sprintf('zk_unlock -> kazoo WriteLock handoff: %.1f ms',
		1000 * (time() - $t0)));
is(sql(q{SELECT zk_try_rlock('/kz/x')}),
	'f', "zk_try_rlock fails while kazoo holds the WriteLock");
is(sql(q{SELECT zk_try_lock('/kz/x')}), 'f', 'so does zk_try_lock');
is(client_ask($k1, 'release wlock'), 'released wlock', 'kazoo releases');

# --- a kazoo writer queued between two zklock readers: FIFO
is(client_ask($k1, 'path /zklock/kz/q'), 'path /zklock/kz/q',
	'kazoo client switches to /kz/q');
$h1->query_safe(q{SELECT zk_rlock('/kz/q')});
client_send($k1, 'lock');
is(client_next($k1), 'acquiring lock', 'kazoo asks for its Lock');
ok(wait_queue_len($pg, '/kz/q', 2, 15, 'kazoo writer queued'),
	'the kazoo writer queues behind the zklock reader');
is( sql(
		q{SELECT position, mode, granted, data FROM zk_lock_queue('/kz/q')
		  WHERE znode LIKE '%\_\_lock\_\_%'}),
	'2|exclusive|f|kazoo-one',
	'zk_lock_queue: the kazoo node, exclusive, waiting in position 2');
is(sql(q{SELECT zk_try_rlock('/kz/q')}),
	'f', 'a later zklock reader does not overtake the kazoo writer');
is(sql(q{SELECT zk_try_rlock('/kz/q', 300)}), 'f', 'not even after 300 ms');
queue_is($pg, '/kz/q', '1:shared:t:a,2:exclusive:f:kazoo-one',
	'the failed tries left nothing behind');

bg_begin($h2, q{SELECT zk_rlock('/kz/q') > 0 AS got}, 'h2_got_q');
ok(wait_queue_len($pg, '/kz/q', 3, 15, 'second zklock reader queued'),
	'the second zklock reader queues behind the kazoo writer');
$h1->query_safe(q{SELECT zk_unlock('/kz/q')});
is(client_next($k1, 10), 'acquired lock',
	'the kazoo writer gets the lock when the first reader leaves');
ok(!bg_done($h2, 'h2_got_q'), 'the second reader still waits');
queue_is($pg, '/kz/q', '1:exclusive:t:kazoo-one,2:shared:f:a',
	'the queue: kazoo writer holding, zklock reader waiting');
is(client_ask($k1, 'release lock'), 'released lock', 'the kazoo writer releases');
($out) = bg_finish($h2, 'h2_got_q');
like($out, qr/^t$/m, 'then the second zklock reader gets the lock');
$h2->query_safe(q{SELECT zk_unlock('/kz/q')});

# --- a kazoo holder that closes its session: handoff at once
my $k2 = kazoo_client('kazoo2', $zk, '/zklock/kz/d', 4, 'kazoo-two');
is(granted_timeout($k2->{ready}), '4000', 'kazoo2 has a 4 s session');
is(client_ask($k2, 'lock 3000'), 'acquired lock', 'kazoo2 holds the lock');
bg_begin($h1, q{SELECT zk_lock('/kz/d') > 0 AS got}, 'h1_got_d');
ok(wait_queue_len($pg, '/kz/d', 2, 15, 'zk_lock queued behind kazoo2'),
	'zk_lock waits for kazoo2');
$t0 = time();
is(client_ask($k2, 'close'), 'closed', 'kazoo2 stops and closes its client');
($out) = bg_finish($h1, 'h1_got_d');
$ms = 1000 * (time() - $t0);
like($out, qr/^t$/m, 'zk_lock gets the lock when the kazoo session closes');
note(sprintf('kazoo close -> zk_lock handoff: %.1f ms (session timeout 4 s)',
		$ms));
cmp_ok($ms, '<', 2000,
	'well before the session could have expired: the close deleted the node');
$h1->query_safe(q{SELECT zk_unlock('/kz/d')});
client_stop($k2);

# --- a kazoo holder that exits without releasing (os._exit): handoff when
# its session expires
my $k3 = kazoo_client('kazoo3', $zk, '/zklock/kz/k', 3, 'kazoo-three');
is(granted_timeout($k3->{ready}), '3000', 'kazoo3 has a 3 s session');
is(client_ask($k3, 'lock 3000'), 'acquired lock', 'kazoo3 holds the lock');
bg_begin($h1, q{SELECT zk_lock('/kz/k') > 0 AS got}, 'h1_got_k');
ok(wait_queue_len($pg, '/kz/k', 2, 15, 'zk_lock queued behind kazoo3'),
	'zk_lock waits for kazoo3');
$t0 = time();
is(client_ask($k3, 'die'), 'dying', 'kazoo3 exits without releasing');
ok(wait_for(sub { !client_alive($k3) }, 10, 'kazoo3 to exit'), 'kazoo3 is gone');
($out) = bg_finish($h1, 'h1_got_k');
$ms = 1000 * (time() - $t0);
like($out, qr/^t$/m,
	"zk_lock gets the lock after the dead client's session expired");
note(sprintf('kazoo os._exit -> zk_lock handoff: %.1f ms (session timeout 3 s)',
		$ms));
cmp_ok($ms, '>', 1500, 'not before the session could expire');
cmp_ok($ms, '<', 9000, 'but soon after the session timeout');
$h1->query_safe(q{SELECT zk_unlock('/kz/k')});
client_stop($k3);

# --- zklock, Curator and kazoo in one queue
SKIP:
{
	my $why = curator_missing();
	skip "Curator: $why", 28 if $why;

	my $c = curator_client('curator', $zk, '/zklock/kz/all', 10000);
	like($c->{ready}, qr/^ready addr=/, 'a Curator client is connected');
	my ($addr) = ($c->{ready} // '') =~ /addr=(\S+)/;
	$addr //= '?';
	is(client_ask($k1, 'path /zklock/kz/all'), 'path /zklock/kz/all',
		'kazoo client switches to /kz/all');

	# zklock writer, Curator writer, kazoo Lock, zklock reader: strict FIFO
	$h1->query_safe(q{SELECT zk_lock('/kz/all')});
	client_send($c, 'write');
	is(client_next($c), 'acquiring write', 'Curator asks for the write lock');
	ok(wait_queue_len($pg, '/kz/all', 2, 15, 'Curator queued'), 'Curator queues second');
	client_send($k1, 'lock');
	is(client_next($k1), 'acquiring lock', 'kazoo asks for its Lock');
	ok(wait_queue_len($pg, '/kz/all', 3, 15, 'kazoo queued'), 'kazoo queues third');
	bg_begin($h2, q{SELECT zk_rlock('/kz/all') > 0 AS got}, 'h2_got_all');
	ok(wait_queue_len($pg, '/kz/all', 4, 15, 'zklock reader queued'),
		'a zklock reader queues fourth');
	queue_is($pg, '/kz/all',
		"1:exclusive:t:a,2:exclusive:f:$addr,3:exclusive:f:kazoo-one,4:shared:f:a",
		'zk_lock_queue: zklock, Curator, kazoo, zklock');

	$h1->query_safe(q{SELECT zk_unlock('/kz/all')});
	is(client_next($c, 10), 'acquired write', 'zklock -> Curator');
	ok(!defined client_poll($k1) && !bg_done($h2, 'h2_got_all'),
		'kazoo and the zklock reader still wait');
	is(client_ask($c, 'release write'), 'released write', 'Curator releases');
	is(client_next($k1, 10), 'acquired lock', 'Curator -> kazoo');
	ok(!bg_done($h2, 'h2_got_all'), 'the zklock reader still waits');
	is(client_ask($k1, 'release lock'), 'released lock', 'kazoo releases');
	($out) = bg_finish($h2, 'h2_got_all');
	like($out, qr/^t$/m, 'kazoo -> zklock reader');
	$h2->query_safe(q{SELECT zk_unlock('/kz/all')});

	# Curator does not know kazoo's "__lock__" nodes: its write lock sorts
	# them after its own and its readers wait only for "__WRIT__" nodes, so
	# a stock kazoo holder must not be followed by a Curator contender.  A
	# Lock subclass that names its nodes "__WRIT__" is seen by all three.
	is(client_ask($k1, 'lock 3000'), 'acquired lock', 'kazoo holds its Lock');
	is(client_ask($c, 'write 1000'), 'acquired write',
		"INCOMPATIBLE, as documented: Curator's write lock ignores a kazoo __lock__ holder"
	);
	is(client_ask($c, 'release write'), 'released write', 'Curator releases');
	is(client_ask($k1, 'release lock'), 'released lock', 'kazoo releases');

	is(client_ask($k1, 'writlock 3000'), 'acquired writlock',
		'kazoo holds a Lock whose nodes are named __WRIT__');
	is(client_ask($c, 'write 300'), 'timeout write',
		"Curator's write lock waits for it");
	is(client_ask($c, 'read 300'), 'timeout read',
		"so does Curator's read lock");
	is(sql(q{SELECT zk_try_rlock('/kz/all')}), 'f', 'and zklock');
	queue_is($pg, '/kz/all', '1:exclusive:t:kazoo-one',
		'the failed try left nothing behind');
	is( sql(
			q{SELECT znode ~ '^[0-9a-f]{32}__WRIT__[0-9]{10}$', mode, granted, data
			  FROM zk_lock_queue('/kz/all')}),
		't|exclusive|t|kazoo-one',
		'zk_lock_queue shows it as an exclusive holder');
	is(client_ask($k1, 'release writlock'), 'released writlock',
		'kazoo releases');
	is(client_ask($c, 'write 3000'), 'acquired write',
		'then Curator gets the write lock');
	is(client_ask($c, 'close'), 'closed', 'the Curator client closes');
	client_stop($c);
}

# --- nothing is left behind
is(client_ask($k1, 'close'), 'closed', 'the kazoo client closes');
$h1->quit;
$h2->quit;
ok( wait_queues_empty(
		$pg,
		[ '/kz/w', '/kz/r', '/kz/x', '/kz/q', '/kz/d', '/kz/k', '/kz/all' ],
		10,
		'empty queues'),
	'no queue node is left');

client_stop($k1);
$pg->stop;
done_testing();
