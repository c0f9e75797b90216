# One kind of recipe per path, double barrier members that go without
# leaving, and connection settings set back while locks are held; against
# a real ZooKeeper server and a real PostgreSQL server.
#
# - A path in use by one kind (a lock held, a semaphore permit held, a
#   double barrier member inside) refuses every other kind with 22023
#   naming both kinds, by code: semaphores, double barriers, the three
#   barrier functions, locks, shared locks, lock sets and leases; nothing
#   is left behind by a refused call (the path's children are as before,
#   also the "locks" and "leases" nodes a refused semaphore needed), and
#   zk_cluster_locks shows the path as the one kind's.
#   Leases and lock sets on a lock's path are the same kind: they queue.
# - What is not excluded (doc/guarantees.md): a lock taken on a raised
#   barrier, whose node has no children to tell, is granted; while it is
#   held the barrier functions refuse the path, and once it is gone the
#   barrier reads as down (the lock's write emptied its data) until raised
#   again.
# - What a barrier is (doc/reference.md, "Barriers"): a lock path's parent
#   ("/k/bp" of a lock "/k/bp/child") is no barrier: wait is true, remove
#   false and leaves it, set 55000 while the lock's nodes are below; an
#   empty node with empty data that has had a child is no barrier either,
#   and set replaces it with a node with zklock's barrier data.  A node
#   with other data (Curator's address) that has had a child is a barrier.
# - The uncontended zk_lock/zk_unlock cycle costs the requests it did
#   before the check: one write to take, one to release (mntr's
#   zk_packets_received over 100 cycles, less the pings of the sessions).
# - A double barrier member that exits (pg_terminate_backend) or runs
#   DISCARD ALL without leaving leaves as a leave would: its node goes, and
#   the round's "ready" with it when it was the last of its round (the
#   path is then free for another kind); one that goes while another
#   member is inside leaves "ready" to that member, whose leave then
#   returns at once and removes it.
# - A connection setting changed by the end of a SET LOCAL while locks are
#   held: SET back to the value the session was opened with is allowed
#   (the same session, its locks kept), SET to a third value is still
#   refused (55000).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

if (my $why = kazoo_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
my $a = pg_with_zklock('a', $zk);

# the children of a znode, sorted, comma-separated; 'none' if it does not
# exist
sub kids
{
	my ($znode) = @_;
	return kazoo_run($zk,
		"print(','.join(sorted(c.get_children('$znode'))) if c.exists('$znode') else 'none')"
	);
}

# is a node empty, or gone (a container the server reaped)?
sub empty_or_gone
{
	my $k = kids($_[0]);
	return $k eq '' || $k eq 'none';
}

# the expected 22023 of kind ASKED on PATH, which kind FOUND uses
sub refused_is
{
	my ($err, $path, $found, $asked, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return error_is($err, '22023',
		qr/ZooKeeper path "\Q$path\E" is used by a \Q$found\E, not a \Q$asked\E\nDETAIL:  A path is used by one kind of recipe at a time; the children of its node are a \Q$found\E's, and this call asks for a \Q$asked\E\.\nHINT:  Use another path for the \Q$asked\E, or wait until every user of the \Q$found\E is gone\./,
		$name);
}

my $h = verbose_session($a);    # holds one kind at a time
my $s = verbose_session($a);    # asks for the others
my ($out, $err);

# every call of another kind than FOUND on PATH is refused
sub refuse_all
{
	my ($path, $found, @calls) = @_;
	my $held = $s->query_safe(q{SELECT count(*) FROM zk_locks});
	for my $c (@calls)
	{
		my ($asked, $sql) = @$c;
		($out, $err) = bg_query($s, $sql);
		refused_is($err, $path, $found, $asked,
			"$found on $path: $sql is refused (22023) naming both kinds");
	}
	is($s->query_safe(q{SELECT count(*) FROM zk_locks}), $held,
		"$found on $path: the refused calls hold nothing");
	is($s->query_safe("SELECT string_agg(DISTINCT kind, ',') FROM zk_cluster_locks WHERE path = '$path'"),
		$found,
		"$found on $path: zk_cluster_locks shows the path as the $found's alone");
}

my @semaphore = (
	[ 'semaphore', "SELECT zk_semaphore_acquire('PATH', 1)" ],
	[ 'semaphore', "SELECT zk_try_semaphore_acquire('PATH', 2, 100)" ]);
my @double_barrier =
  ([ 'double barrier', "SELECT zk_double_barrier_enter('PATH', 1)" ]);
my @barrier = (
	[ 'barrier', "SELECT zk_barrier_set('PATH')" ],
	[ 'barrier', "SELECT zk_barrier_wait('PATH', 300)" ],
	[ 'barrier', "SELECT zk_barrier_remove('PATH')" ]);
my @lock = (
	[ 'lock', "SELECT zk_lock('PATH')" ],
	[ 'lock', "SELECT zk_try_rlock('PATH', 100)" ],
	[ 'lock', "SELECT zk_try_lock(ARRAY['/k/other', 'PATH'], 100)" ],
	[ 'lock', "SELECT zk_try_lease_lock('PATH', '1 min', 100)" ]);

sub on_path
{
	my ($path, @calls) = @_;
	return map { [ $_->[0], $_->[1] =~ s/PATH/$path/gr ] } @calls;
}

# =====================================================================
# A lock held
# =====================================================================
$h->query_safe(q{SELECT zk_lock('/k/lock')});
my $before = kids('/zklock/k/lock');
like($before, qr/^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/, 'the lock node holds the lock\'s queue node');
refuse_all('/k/lock', 'lock',
	on_path('/k/lock', @semaphore, @double_barrier, @barrier));
is(kids('/zklock/k/lock'), $before,
	'nothing is left on the lock\'s path (no "locks" or "leases" of the refused semaphore)');

# leases and lock sets share the lock's queue: they wait in it
($out, $err) = bg_query($s, q{SELECT zk_try_lease_lock('/k/lock', '1 min', 100) IS NULL});
is("$out|$err", 't|', 'a lease on the lock\'s path queues behind it (not granted, no error)');
($out, $err) = bg_query($s, q{SELECT zk_try_lock(ARRAY['/k/other', '/k/lock'], 100)});
is("$out|$err", 'f|', 'a lock set with the lock\'s path queues behind it');
$h->query_safe(q{SELECT zk_unlock('/k/lock')});

# =====================================================================
# A semaphore permit held
# =====================================================================
$h->query_safe(q{SELECT zk_semaphore_acquire('/k/sem', 2)});
# (its "locks" node, empty once the permit is granted, is a container the
# server may reap at any time)
sub sem_kids { return kids('/zklock/k/sem') =~ s/,?\blocks\b//r; }
is(sem_kids(), 'leases', 'the semaphore node has its "leases" node');
refuse_all('/k/sem', 'semaphore',
	on_path('/k/sem', @lock, @double_barrier, @barrier));
is(sem_kids(), 'leases', 'nothing is left on the semaphore\'s path');
is($s->query_safe(q{SELECT zk_try_semaphore_acquire('/k/sem', 2)}), 't',
	'the semaphore itself still admits its second holder');
$s->query_safe(q{SELECT zk_semaphore_release('/k/sem')});
$h->query_safe(q{SELECT zk_semaphore_release('/k/sem')});

# =====================================================================
# A double barrier member inside
# =====================================================================
is($h->query_safe(q{SELECT zk_double_barrier_enter('/k/db', 1)}), 't',
	'a member enters a double barrier of one');
$before = kids('/zklock/k/db');
like($before, qr/^[0-9a-f-]{36},ready$/, 'its node is a participant and "ready"');
refuse_all('/k/db', 'double barrier',
	on_path('/k/db', @lock, @semaphore, @barrier));
is(kids('/zklock/k/db'), $before, 'nothing is left on the double barrier\'s path');
is($h->query_safe(q{SELECT zk_double_barrier_leave('/k/db', 1000)}), 't',
	'the member leaves');
ok(empty_or_gone('/zklock/k/db'), 'and the path is empty');
is($s->query_safe(q{SELECT zk_try_lock('/k/db')}), 't',
	'another kind may use the path once the double barrier is left');
$s->query_safe(q{SELECT zk_unlock('/k/db')});

# =====================================================================
# A barrier up: not seen by a lock (documented)
# =====================================================================
is($h->query_safe(q{SELECT zk_barrier_set('/k/bar')}), 't', 'a barrier is raised');
is($s->query_safe(q{SELECT zk_try_lock('/k/bar')}), 't',
	'a lock on the raised barrier\'s path is granted: a barrier node has no children to tell');
refuse_all('/k/bar', 'lock', on_path('/k/bar', @barrier));
$s->query_safe(q{SELECT zk_unlock('/k/bar')});
# the lock's write emptied the node's data, and the node has had a child:
# no barrier's node any more (doc/reference.md, "Barriers")
is($h->query_safe(q{SELECT zk_barrier_wait('/k/bar', 0)}), 't',
	'once the lock is gone the barrier reads as down (the lock emptied its data)');
is($h->query_safe(q{SELECT zk_barrier_set('/k/bar')}), 't', 'and is raised again by set');
is($h->query_safe(q{SELECT zk_barrier_remove('/k/bar')}), 't', 'and removed by its remove');

# =====================================================================
# A lock path's parent is no barrier (doc/reference.md, "Barriers")
# =====================================================================
$h->query_safe(q{SELECT zk_lock('/k/bp/child')});
is(kids('/zklock/k/bp'), 'child', 'a lock /k/bp/child: its lock node is below /zklock/k/bp');
is($s->query_safe(q{SELECT zk_barrier_wait('/k/bp', 0)}), 't',
	'zk_barrier_wait on the lock\'s parent path: true (no barrier is up)');
is($s->query_safe(q{SELECT zk_barrier_remove('/k/bp')}), 'f',
	'zk_barrier_remove on it: false (not up), no error');
is(kids('/zklock/k/bp'), 'child', 'and the lock\'s parent node is left alone');
($out, $err) = bg_query($s, q{SELECT zk_barrier_set('/k/bp')});
error_is($err, '55000',
	qr/ZooKeeper barrier "\/k\/bp" cannot be raised while paths below it are in use\nDETAIL:  The node "\/zklock\/k\/bp" was made to hold the nodes of paths below "\/k\/bp"/,
	'zk_barrier_set on it: 55000, naming the node and the paths below');
is($h->query_safe(q{SELECT count(*) FROM zk_locks WHERE path = '/k/bp/child'}), '1',
	'and the lock below is still held');
$h->query_safe(q{SELECT zk_unlock('/k/bp/child')});

# a node with empty data that has had children and has none (a lock node
# left empty, made here as a persistent node so that ZooKeeper does not
# reap it during the checks) is no barrier either; set replaces it
sub node_of
{
	my ($znode) = @_;
	return kazoo_run($zk,
		"d, st = c.get('$znode'); print('%r %d' % (d, st.cversion))");
}
kazoo_run($zk, q{
c.create('/zklock/k/e/x', b'', makepath=True)
c.delete('/zklock/k/e/x')
});
is(node_of('/zklock/k/e'), "b'' 2", 'an empty node /zklock/k/e that had a child');
is($s->query_safe(q{SELECT zk_barrier_wait('/k/e', 0)}), 't', 'wait: not up');
is($s->query_safe(q{SELECT zk_barrier_remove('/k/e')}), 'f', 'remove: false, not up');
is(node_of('/zklock/k/e'), "b'' 2", 'remove leaves the node alone');
is($s->query_safe(q{SELECT zk_barrier_set('/k/e')}), 't',
	'set: true, the barrier is raised');
is(node_of('/zklock/k/e'), "b'zklock barrier' 0", 'by a new node with zklock\'s barrier data');
is($s->query_safe(q{SELECT zk_barrier_wait('/k/e', 100)}), 'f', 'up for wait');
is($s->query_safe(q{SELECT zk_barrier_remove('/k/e')}), 't', 'remove: true');
is(kids('/zklock/k/e'), 'none', 'the node is gone');

# a foreign barrier with data (Curator writes its address) stays a barrier
# after a path below it was used
kazoo_run($zk, q{
c.create('/zklock/k/cb', b'10.1.2.3', makepath=True)
c.create('/zklock/k/cb/x')
c.delete('/zklock/k/cb/x')
});
is($s->query_safe(q{SELECT zk_barrier_wait('/k/cb', 100)}), 'f',
	'a barrier with an address as data, which had a child: up');
is($s->query_safe(q{SELECT zk_barrier_set('/k/cb')}), 'f', 'set: up already');
is($s->query_safe(q{SELECT zk_barrier_remove('/k/cb')}), 't', 'remove: true');

# =====================================================================
# The uncontended lock costs no request more
# =====================================================================
{
	my $n = 100;
	sub packets { return zk_mntr($port)->{zk_packets_received}; }
	$s->query_safe(q{SELECT zk_lock('/cost/p'), zk_unlock('/cost/p')});
	my $r0 = packets();
	$s->query_safe(
		"DO \$\$BEGIN FOR i IN 1 .. $n LOOP
		   PERFORM zk_lock('/cost/p'); PERFORM zk_unlock('/cost/p');
		 END LOOP; END\$\$");
	my $r1 = packets();
	my $per = ($r1 - $r0) / $n;
	note("uncontended zk_lock + zk_unlock: " . ($r1 - $r0) . " packets for $n cycles");
	figure(uncontended_cycle_requests => sprintf('%.2f', $per));
	# two sessions ping every third of their 10 s timeout: a few pings at most
	cmp_ok($r1 - $r0, '>=', 2 * $n, "the $n cycles were made");
	cmp_ok($r1 - $r0, '<=', 2 * $n + 6,
		'an uncontended zk_lock + zk_unlock is two requests: one write to take, one to release');
}

# =====================================================================
# Double barrier members that go without leaving
# =====================================================================
sub terminate
{
	my ($session) = @_;
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	$a->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	eval { $session->quit };
	return $pid;
}

{
	my $m = verbose_session($a);
	is($m->query_safe(q{SELECT zk_double_barrier_enter('/k/gone', 1)}), 't',
		'a member enters a double barrier of one');
	like(kids('/zklock/k/gone'), qr/^[0-9a-f-]{36},ready$/, 'its node and "ready"');
	terminate($m);
	ok( wait_for(sub { empty_or_gone('/zklock/k/gone') },
			30, 'the terminated member to depart'),
		'a terminated member departs: its node and "ready" are gone');
	is($s->query_safe(q{SELECT zk_try_lock('/k/gone')}), 't',
		'and the path is free for another kind');
	$s->query_safe(q{SELECT zk_unlock('/k/gone')});
}

{
	my $m = verbose_session($a);
	is($m->query_safe(q{SELECT zk_double_barrier_enter('/k/disc', 1)}), 't',
		'a member enters another double barrier of one');
	($out, $err) = bg_query($m, 'DISCARD ALL');
	is($err, '', 'DISCARD ALL');
	ok(empty_or_gone('/zklock/k/disc'),
		'DISCARD ALL departs at once: its node and "ready" are gone');
	is($m->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'no membership is left');
	$m->quit;
}

{
	my $m1 = verbose_session($a);
	my $m2 = verbose_session($a);
	bg_begin($m1, q{SELECT zk_double_barrier_enter('/k/two', 2)}, 'm1_in');
	ok(wait_for(sub { kids('/zklock/k/two') =~ /^[0-9a-f-]{36}$/ }, 30,
			'the first member to wait'),
		'the first member waits in the double barrier of two');
	is($m2->query_safe(q{SELECT zk_double_barrier_enter('/k/two', 2)}), 't',
		'the second enters');
	($out, $err) = bg_finish($m1, 'm1_in');
	is("$out|$err", 't|', 'and so does the first');
	terminate($m2);
	ok(wait_for(sub { kids('/zklock/k/two') =~ /^[0-9a-f-]{36},ready$/ }, 30,
			'the terminated member to depart'),
		'a member that goes while another is inside leaves "ready" to it');
	is($m1->query_safe(q{SELECT zk_double_barrier_leave('/k/two', 5000)}), 't',
		'the other member\'s leave returns at once');
	ok(empty_or_gone('/zklock/k/two'), 'and removes "ready"');
	$m1->quit;
}

# =====================================================================
# A connection setting set back while locks are held
# =====================================================================
{
	my $c = verbose_session($a);
	$c->query_safe('BEGIN');
	$c->query_safe(q{SET LOCAL zklock.session_timeout = '4s'});
	$c->query_safe(q{SELECT zk_lock('/set/a')});
	my $sid = $c->query_safe('SELECT session_id FROM zk_session()');
	$c->query_safe('COMMIT');
	($out, $err) = bg_query($c, q{SELECT zk_lock('/set/b')});
	error_is($err, '55000',
		qr/cannot switch to a new ZooKeeper session while this backend holds ZooKeeper locks\n(?:.*\n)*HINT:  Set the changed setting back to the value this session was opened with/,
		'the SET LOCAL over, the next call is 55000 with a HINT to set it back');
	($out, $err) = bg_query($c, q{SET zklock.session_timeout = '5s'});
	error_is($err, '55000',
		qr/parameter "zklock.session_timeout" cannot be changed while this backend holds ZooKeeper locks/,
		'a SET to a third value is refused (55000)');
	($out, $err) = bg_query($c, q{SET zklock.session_timeout = '4s'});
	is($err, '', 'a SET back to the value the session was opened with is allowed while locks are held');
	($out, $err) = bg_query($c, q{SELECT zk_lock('/set/b') > 0});
	is("$out|$err", 't|', 'and the next call takes its lock');
	is($c->query_safe('SELECT session_id FROM zk_session()'), $sid,
		'in the same session');
	is($c->query_safe(q{SELECT string_agg(path, ',' ORDER BY path) FROM zk_locks}),
		'/set/a,/set/b', 'which kept its locks');
	$c->query_safe(q{SELECT zk_unlock_all()});
	$c->quit;
}

$_->quit for ($h, $s);
done_testing();
