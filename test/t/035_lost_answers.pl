# A create whose answer was lost, for every recipe that creates queue
# nodes: the lock set (one multi for all its nodes) and the counting
# semaphore (one multi for its mutex node and its lease node).  The single
# lock's case is t/008's.
#
# The fault: a loopback proxy (python/zkproxy.py) forwards the multi to
# the server and cuts the connection before the answer can come back, so
# the server applied it and the backend never heard.  After reconnecting
# (same session) the backend must find its own nodes by the attempt's
# protection prefix before creating anything again: exactly one node per
# intent (the sequence numbers show that no second create was made), no
# orphan, the right grant; a try that gives up leaves nothing behind; a
# semaphore never has more lease nodes than holders and waiters.  The
# other fault, a multi cut before the server saw it, is one case: a set
# that must wait finds none of its nodes, creates them again, and waits
# with them.
#
# What ZooKeeper holds is read with kazoo, not through zklock.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

plan skip_all => 'kazoo is not installed' if kazoo_missing();

my $zk = zk_standalone();
my $proxy = zk_proxy($zk);
my $pport = $proxy->{port};

# A: through the proxy; B: straight to ZooKeeper
my $na = pg_with_zklock('a', $zk, "zklock.hosts = '127.0.0.1:$pport'\n");
my $nb = pg_with_zklock('b', $zk);

# children(PARENT): the names of PARENT's children under /zklock, sorted,
# comma-separated ('' when there are none or PARENT does not exist)
sub children
{
	my ($parent) = @_;
	return kazoo_run($zk, qq{p = '/zklock$parent'
print(','.join(sorted(c.get_children(p))) if c.exists(p) else '')});
}

# count(PARENT): how many children PARENT has
sub count
{
	my ($parent) = @_;
	my $c = children($parent);
	return $c eq '' ? 0 : scalar(my @k = split /,/, $c);
}

# prefix(NAME): the protection prefix "_c_<uuid>-" a node name starts with
sub prefix
{
	my ($name) = @_;
	return $name =~ m{(_c_[0-9a-f-]{36}-)} ? $1 : "(no prefix in $name)";
}

# armed(TEXT): the proxy cuts the connection after forwarding the next
# create (or multi starting with a create) whose path contains TEXT
sub armed
{
	my ($text) = @_;
	$proxy->{out} = '';
	zk_proxy_cmd($proxy, "drop-after-create $text");
	return;
}

# armed_before(TEXT): the same, but the proxy cuts the connection without
# forwarding the create: the server never sees it
sub armed_before
{
	my ($text) = @_;
	$proxy->{out} = '';
	zk_proxy_cmd($proxy, "drop-before-create $text");
	return;
}

# fired(WHEN): the path of the create the proxy cut the connection after
# ('after', the default) or before forwarding
sub fired
{
	my ($when) = @_;
	$when //= 'after';
	$proxy->{timer}->start(30);
	eval {
		pump_until($proxy->{h}, $proxy->{timer}, \$proxy->{out},
			qr/^dropped-$when-create \S+$/m);
	};
	return $proxy->{out} =~ /^dropped-$when-create (\S+)$/m ? $1 : undef;
}

# The lock nodes exist before each fault (persistent here, so that the
# container reaper cannot take them between steps): the lost multi is then
# applied by the server, and a recovery that does not find its nodes would
# leave a second set of them.
kazoo_run($zk, q{for p in ['s1', 's2', 'h1', 'h2', 'b1', 'b2', 't1', 't2', 'sem/locks', 'sem/leases',
          'full/locks', 'full/leases', 'tfull/locks', 'tfull/leases']:
    c.ensure_path('/zklock/la/' + p)});

my $s = $na->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');
my $h = $nb->background_psql('postgres', on_error_stop => 0);
$h->query_safe('\set VERBOSITY verbose');

$s->query_safe(q{SELECT zk_try_lock('/la/warm') AND zk_unlock('/la/warm')});
my $sid = $s->query_safe('SELECT session_id FROM zk_session()');

# --- a lock set on free paths
armed('/la/s1/');
is($s->query_safe(q{SELECT zk_lock(ARRAY['/la/s1', '/la/s2']) > 0}), 't',
	'a lock set whose multi answer was cut is granted');
my $cut = fired() // '';
like($cut, qr{^/zklock/la/s1/_c_}, 'the proxy cut the connection after forwarding the multi');
is(count('/la/s1') . ' ' . count('/la/s2'), '1 1', 'one node on each path');
is(prefix(children('/la/s1')), prefix($cut),
	'the one the lost multi made: no second create under another prefix');
is( $s->query_safe(q{SELECT string_agg(znode, ',' ORDER BY path) FROM zk_locks}),
	'/zklock/la/s1/' . children('/la/s1') . ',/zklock/la/s2/' . children('/la/s2'),
	'the backend holds exactly those nodes');
is($s->query_safe('SELECT session_id FROM zk_session()'), $sid, 'on the same session');
$s->query_safe(q{SELECT zk_unlock_all()});
is(children('/la/s1') . children('/la/s2'), '', 'and releases them');

# --- a lock set that must wait: queued once on each path
$h->query_safe(q{SELECT zk_lock('/la/h2')});
armed('/la/h1/');
bg_begin($s, q{SELECT zk_lock(ARRAY['/la/h1', '/la/h2']) > 0}, 'set_done');
$cut = fired() // '';
like($cut, qr{^/zklock/la/h1/}, 'a waiting set\'s multi answer is cut');
ok(wait_for(sub { count('/la/h2') == 2 }, 10, 'queued'),
	'the set is queued behind the holder');
# the set watches the holder's node once it has recovered its nodes and
# waits: only then is the count final
my $held = $h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/la/h2'});
ok(wait_for(sub { (zk_watches_by_others($zk)->{$held} // 0) >= 1 }, 10, 'set waits'),
	'the set, recovered, watches the holder\'s node');
is(count('/la/h1') . ' ' . count('/la/h2'), '1 2',
	'and stays so: one node of the set on each path, no orphan');
is(prefix(children('/la/h1')), prefix($cut), 'the node the lost multi made');
ok(!bg_done($s, 'set_done'), 'the set waits');
$h->query_safe(q{SELECT zk_unlock('/la/h2')});
my ($out, $err) = bg_finish($s, 'set_done');
like($out, qr/\bt\b/, 'and is granted once the holder releases');
is($err, '', 'without an error');
is(count('/la/h1') . ' ' . count('/la/h2'), '1 1', 'one node on each path');
is( $s->query_safe(q{SELECT string_agg(znode, ',' ORDER BY path) FROM zk_locks}),
	'/zklock/la/h1/' . children('/la/h1') . ',/zklock/la/h2/' . children('/la/h2'),
	'holding the nodes its lost multi made');
$s->query_safe(q{SELECT zk_unlock_all()});

# --- a set that must wait, whose multi never reached the server: the
#     search by prefix finds none of its nodes, the multi is sent again,
#     and the queue where the set waits is read after that, with its node
#     in it (the one read by the search has none: a wait that went by it
#     would take the node for deleted, 55000)
$h->query_safe(q{SELECT zk_lock('/la/b2')});
armed_before('/la/b1/');
bg_begin($s, q{SELECT zk_lock(ARRAY['/la/b1', '/la/b2']) > 0}, 'before_done');
$cut = fired('before') // '';
like($cut, qr{^/zklock/la/b1/}, 'a waiting set\'s multi is cut before the server');
$held = $h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/la/b2'});
ok(wait_for(sub { (zk_watches($zk)->{$held} // 0) >= 1 || bg_done($s, 'before_done') },
		10, 'set waits'),
	'the set, created again, watches the holder\'s node');
ok(!bg_done($s, 'before_done'), 'the set waits, with no error');
is(count('/la/b1') . ' ' . count('/la/b2'), '1 2',
	'one node of the set on each path, no orphan');
$h->query_safe(q{SELECT zk_unlock('/la/b2')});
($out, $err) = bg_finish($s, 'before_done');
like($out, qr/\bt\b/, 'and is granted once the holder releases');
is($err, '', 'without an error');
is( $s->query_safe(q{SELECT string_agg(znode, ',' ORDER BY path) FROM zk_locks}),
	'/zklock/la/b1/' . children('/la/b1') . ',/zklock/la/b2/' . children('/la/b2'),
	'holding one node on each path');
$s->query_safe(q{SELECT zk_unlock_all()});

# --- a try on a set that cannot be had at once leaves nothing
$h->query_safe(q{SELECT zk_lock('/la/t2')});
my $t2 = children('/la/t2');
armed('/la/t1/');
is($s->query_safe(q{SELECT zk_try_lock(ARRAY['/la/t1', '/la/t2'])}), 'f',
	'a try on a set whose multi answer was cut returns false');
ok(defined fired(), 'after the cut');
ok(wait_for(sub { count('/la/t1') == 0 && children('/la/t2') eq $t2 }, 10, 'cleanup'),
	'and its recovered nodes are deleted');
$h->query_safe(q{SELECT zk_unlock('/la/t2')});

# --- a semaphore with room: the lease the lost multi made is ours
armed('/la/sem/locks/');
is($s->query_safe(q{SELECT zk_semaphore_acquire('/la/sem', 2) > 0}), 't',
	'a semaphore acquire whose multi answer was cut gets its lease');
$cut = fired() // '';
like($cut, qr{^/zklock/la/sem/locks/_c_}, 'after the cut');
is(count('/la/sem/leases'), 1, 'one lease node');
is(prefix(children('/la/sem/leases')), prefix($cut),
	'the one the lost multi made: no second create under another prefix');
is( $s->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/la/sem'}),
	'/zklock/la/sem/leases/' . children('/la/sem/leases'),
	'and the backend holds it');
ok(wait_for(sub { children('/la/sem/locks') eq '' }, 10, 'mutex gone'),
	'the mutex node goes');
is($s->query_safe('SELECT session_id FROM zk_session()'), $sid, 'on the same session');
# a third acquirer with a limit of 2 gets the second lease: the first is
# counted once
is($h->query_safe(q{SELECT zk_try_semaphore_acquire('/la/sem', 2)}), 't',
	'another server takes the second lease');
is($nb->safe_psql('postgres', q{SELECT zk_try_semaphore_acquire('/la/sem', 2)}), 'f',
	'and no third: the lease is counted once');
$h->query_safe(q{SELECT zk_semaphore_release('/la/sem')});
$s->query_safe(q{SELECT zk_semaphore_release('/la/sem')});
is(children('/la/sem/leases'), '', 'both leases released');

# --- a semaphore that is full: the acquirer waits with one lease node
$h->query_safe(q{SELECT zk_semaphore_acquire('/la/full', 1) > 0});
armed('/la/full/locks/');
bg_begin($s, q{SELECT zk_semaphore_acquire('/la/full', 1) > 0}, 'sem_done');
$cut = fired() // '';
like($cut, qr{^/zklock/la/full/locks/_c_}, 'a waiting acquirer\'s multi answer is cut');
ok(wait_for(sub { count('/la/full/leases') == 2 }, 10, 'the lost multi\'s lease node'),
	'the holder\'s lease node and the one the lost multi made');
ok(!bg_done($s, 'sem_done'), 'the acquirer waits');
$h->query_safe(q{SELECT zk_semaphore_release('/la/full')});
($out, $err) = bg_finish($s, 'sem_done');
like($out, qr/\bt\b/, 'and gets the lease once the holder releases');
is($err, '', 'without an error');
is(count('/la/full/leases'), 1, 'one lease node in all');
is(prefix($s->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/la/full'})),
	prefix($cut), 'the one the lost multi made: it waited with it, no second create');
$s->query_safe(q{SELECT zk_semaphore_release('/la/full')});

# --- a try on a full semaphore leaves nothing
$h->query_safe(q{SELECT zk_semaphore_acquire('/la/tfull', 1) > 0});
$held = children('/la/tfull/leases');
armed('/la/tfull/locks/');
is($s->query_safe(q{SELECT zk_try_semaphore_acquire('/la/tfull', 1)}), 'f',
	'a try on a full semaphore whose multi answer was cut returns false');
ok(defined fired(), 'after the cut');
ok(wait_for(sub { children('/la/tfull/leases') eq $held && children('/la/tfull/locks') eq '' },
		10, 'cleanup'),
	'and its nodes are deleted: only the holder\'s lease is left');
$h->query_safe(q{SELECT zk_semaphore_release('/la/tfull')});

$s->quit;
$h->quit;
zk_proxy_stop($proxy);
done_testing();
