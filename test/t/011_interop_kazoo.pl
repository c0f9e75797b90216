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
use ZkInterop;
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

# the kazoo client as ZkInterop's checks see it: its Lock (with zklock's
# names as extra patterns) and its ReadLock
my $kazoo = {
	pg => $pg,
	h1 => $h1,
	h2 => $h2,
	c => $k1,
	who => 'kazoo',
	data => 'kazoo-one',
	write => 'lock',
	read => 'rlock',
	lock => 'its Lock',
	rlock => 'ReadLock',
	write_node => '^[0-9a-f]{32}__lock__[0-9]{10}$',
};

# --- kazoo's Lock (with zklock's names as extra patterns) excludes zklock
peer_write_excludes_zklock($kazoo, '/kz/w');

# --- zklock's write lock excludes kazoo's Lock, not a plain one
is(client_ask($k1, 'lock 300'), 'timeout lock',
	"kazoo's Lock times out while zklock holds the lock");
queue_is($pg, '/kz/w', '1:exclusive:t:a',
	'the timed-out kazoo attempt left no node behind');
is(client_ask($k1, 'plainlock 2000'), 'acquired plainlock',
	'a kazoo Lock without extra_lock_patterns does not see zklock (why they are needed)');
is(client_ask($k1, 'release plainlock'), 'released plainlock',
	'kazoo releases the plain Lock');

peer_waits_for_zklock($kazoo, '/kz/w');

# --- kazoo's ReadLock shares with zk_rlock and excludes zk_lock
peer_reads_with_zklock($kazoo, '/kz/r');
is( sql(
		q{SELECT znode ~ '^[0-9a-f]{32}__rlock__[0-9]{10}$', mode, granted, data
		  FROM zk_lock_queue('/kz/r') WHERE cluster_name IS NULL}),
	't|shared|t|kazoo-one',
	"zk_lock_queue shows kazoo's ReadLock node as a granted shared holder");
peer_reader_excludes_zklock_writer($kazoo, '/kz/r');

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
client_queues($k1, 'wlock', $pg, '/kz/x', 2,
	'kazoo waits for its WriteLock', "kazoo's WriteLock queues behind the zklock reader");
queue_is($pg, '/kz/x', '1:shared:t:a,2:exclusive:f:kazoo-one',
	'the queue: zklock reader holding, kazoo writer waiting');
my $t0 = time();
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
peer_writer_queues_between_readers($kazoo, '/kz/q');
peer_writer_granted_before_reader($kazoo, '/kz/q');

# --- a kazoo holder that closes its session: handoff at once
my $k2 = kazoo_client('kazoo2', $zk, '/zklock/kz/d', 4, 'kazoo-two');
is(granted_timeout($k2->{ready}), '4000', 'kazoo2 has a 4 s session');
peer_holder_closes($kazoo, $k2, 'kazoo2', '/kz/d', 4);
client_stop($k2);

# --- a kazoo holder that exits without releasing (os._exit): handoff when
# its session expires
my $k3 = kazoo_client('kazoo3', $zk, '/zklock/kz/k', 3, 'kazoo-three');
is(granted_timeout($k3->{ready}), '3000', 'kazoo3 has a 3 s session');
peer_holder_dies(
	$kazoo, $k3, 'kazoo3', '/kz/k', 3, 'os._exit',
	sub {
		is(client_ask($k3, 'die'), 'dying', 'kazoo3 exits without releasing');
		ok(wait_for(sub { !client_alive($k3) }, 10, 'kazoo3 to exit'),
			'kazoo3 is gone');
	});
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
	client_queues($c, 'write', $pg, '/kz/all', 2,
		'Curator asks for the write lock', 'Curator queues second');
	client_queues($k1, 'lock', $pg, '/kz/all', 3, 'kazoo asks for its Lock',
		'kazoo queues third');
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
	my ($out) = bg_finish($h2, 'h2_got_all');
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
	foreign_holder_is($pg, '/kz/all', '^[0-9a-f]{32}__WRIT__[0-9]{10}$', 'kazoo-one',
		'the failed try left nothing behind',
		'zk_lock_queue shows it as an exclusive holder');
	is(client_ask($k1, 'release writlock'), 'released writlock',
		'kazoo releases');
	is(client_ask($c, 'write 3000'), 'acquired write',
		'then Curator gets the write lock');
	is(client_ask($c, 'close'), 'closed', 'the Curator client closes');
	client_stop($c);
}

# --- nothing is left behind
peer_close($kazoo, [ map { "/kz/$_" } qw(w r x q d k all) ]);

client_stop($k1);
$pg->stop;
done_testing();
