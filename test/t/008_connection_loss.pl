# Connection loss at the worst moments, through a loopback proxy
# (python/zkproxy.py) that parses the ZooKeeper protocol and cuts the
# connection right after forwarding a create (the server makes the node,
# the client never hears of it) or right before.
#
# After reconnecting (same session), the backend must find its own node by
# its per-attempt prefix instead of creating a second one: one node, no
# orphan; the lock is granted, or the wait goes on.  A release sent while
# ZooKeeper cannot be reached is delivered when it can; a wait cancelled
# while the connection is down leaves nothing behind either.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();

# the proxy, driven through its stdin
my $proxy = zk_proxy($zk);
my $pport = $proxy->{port};

sub proxy
{
	my ($cmd) = @_;
	zk_proxy_cmd($proxy, $cmd);
	return;
}

sub proxy_fired
{
	my ($what) = @_;
	$proxy->{h}->pump_nb;
	return $proxy->{out} =~ /^dropped-$what-create (\S+)$/m ? $1 : undef;
}

# A: every backend goes through the proxy; B: straight to ZooKeeper
my $na = pg_with_zklock('a', $zk, "zklock.hosts = '127.0.0.1:$pport'\n");
my $nb = pg_with_zklock('b', $zk);

# "cluster:granted,..." in queue order, seen from server B
sub queue_grants
{
	my ($path) = @_;
	return queue_rows($nb, $path, q{cluster_name || ':' || granted});
}

# --- a create whose reply was lost, on a free lock
my $s = $na->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');    # errors with their SQLSTATE
$s->query_safe(q{SELECT zk_try_lock('/cl/warmup')});    # open the session first
$s->query_safe(q{SELECT zk_unlock('/cl/warmup')});
my $sid = $s->query_safe('SELECT session_id FROM zk_session()');
proxy('drop-after-create /cl/free/');
is($s->query_safe(q{SELECT zk_lock('/cl/free') > 0}), 't',
	'a lock whose create reply was cut is granted');
ok(defined proxy_fired('after'), 'the proxy did cut the connection after the create');
is(queue_grants('/cl/free'), 'a:true', 'exactly one node: the one the lost create made');
is( $s->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/cl/free'}),
	'/zklock/cl/free/'
	  . $nb->safe_psql('postgres', q{SELECT znode FROM zk_lock_queue('/cl/free')}),
	'and the backend holds that very node');
like($nb->safe_psql('postgres', q{SELECT znode FROM zk_lock_queue('/cl/free')}),
	qr/__WRIT__0000000000$/, 'no second create was made (first sequence number)');
is($s->query_safe('SELECT session_id FROM zk_session()'), $sid,
	'on the same session');
$s->query_safe(q{SELECT zk_unlock('/cl/free')});
$proxy->{out} = '';

# --- a create that never reached the server
proxy('drop-before-create /cl/before/');
is($s->query_safe(q{SELECT zk_lock('/cl/before') > 0}), 't',
	'a lock whose create was lost on the way is granted');
ok(defined proxy_fired('before'), 'the proxy did cut the connection before the create');
is(queue_grants('/cl/before'), 'a:true', 'exactly one node');
$s->query_safe(q{SELECT zk_unlock('/cl/before')});
$proxy->{out} = '';

# --- the same while another server holds the lock: the wait goes on
my $h = $nb->background_psql('postgres');
$h->query_safe(q{SELECT zk_lock('/cl/held')});
proxy('drop-after-create /cl/held/');
bg_begin($s, q{SELECT zk_lock('/cl/held') > 0}, 'held_got');
ok(wait_for(sub { defined proxy_fired('after') }, 10, 'the cut'),
	'the waiter\'s create reply was cut');
ok(wait_for(sub { queue_grants('/cl/held') eq 'b:true,a:false' }, 10, 'queue'),
	'the waiter is queued once, behind the holder');
usleep(300_000);
is(queue_grants('/cl/held'), 'b:true,a:false', 'and stays so: no orphan, no duplicate');
ok(!bg_done($s, 'held_got'), 'the wait goes on');
$h->query_safe(q{SELECT zk_unlock('/cl/held')});
my ($out) = bg_finish($s, 'held_got');
like($out, qr/\bt\b/, 'and ends with the lock when the holder releases');
is(queue_grants('/cl/held'), 'a:true', 'holding the node it recovered');
$s->query_safe(q{SELECT zk_unlock('/cl/held')});
$proxy->{out} = '';

# --- a create that never reached the server while another server holds
#     the lock: the search by prefix finds no node of ours but reads a
#     queue (the holder's node), the create is sent again, and the queue
#     the waiter goes by must be read after that create, with its node in
#     it: the one read before has no node of ours, which would say that
#     the node "disappeared" (55000) although nobody touched it
$h->query_safe(q{SELECT zk_lock('/cl/heldbefore')});
proxy('drop-before-create /cl/heldbefore/');
bg_begin($s, q{SELECT zk_lock('/cl/heldbefore') > 0}, 'heldbefore_got');
ok(wait_for(sub { defined proxy_fired('before') }, 10, 'the cut'),
	'the waiter\'s create was cut before it reached the server');
ok(wait_for(sub { queue_grants('/cl/heldbefore') eq 'b:true,a:false' || bg_done($s, 'heldbefore_got') },
		10, 'queue'),
	'the waiter queues behind the holder (or ends)');
my $held_node = $h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/cl/heldbefore'});
ok(wait_for(sub { (zk_watches($zk)->{$held_node} // 0) >= 1 || bg_done($s, 'heldbefore_got') },
		10, 'the wait'),
	'and waits: it watches the holder\'s node');
ok(!bg_done($s, 'heldbefore_got'), 'the wait goes on, with no error');
is(queue_grants('/cl/heldbefore'), 'b:true,a:false', 'queued once, no orphan');
$h->query_safe(q{SELECT zk_unlock('/cl/heldbefore')});
($out, my $before_err) = bg_finish($s, 'heldbefore_got');
like($out, qr/\bt\b/, 'and ends with the lock when the holder releases');
is($before_err, '', 'without an error');
is(queue_grants('/cl/heldbefore'), 'a:true', 'holding the one node it made');
$s->query_safe(q{SELECT zk_unlock('/cl/heldbefore')});
$proxy->{out} = '';

# --- a try whose create reply was cut returns false and leaves nothing
$h->query_safe(q{SELECT zk_lock('/cl/try')});
proxy('drop-after-create /cl/try/');
is($s->query_safe(q{SELECT zk_try_lock('/cl/try')}), 'f',
	'a try that lost its create reply returns false');
ok(defined proxy_fired('after'), 'after the cut');
ok(wait_for(sub { queue_grants('/cl/try') eq 'b:true' }, 10, 'cleanup'),
	'and its recovered node is deleted');
$h->query_safe(q{SELECT zk_unlock('/cl/try')});
$proxy->{out} = '';

# --- a release while ZooKeeper is unreachable waits for the connection up
#     to zklock.connect_timeout, says it is not confirmed, and is
#     delivered once ZooKeeper can be reached
$s->query_safe(q{SET zklock.connect_timeout = '1s'});
$s->query_safe(q{SELECT zk_lock('/cl/release')});
proxy('down');
my $t0 = time();
my ($res, $err) = bg_query($s, q{SELECT zk_unlock('/cl/release')});
my $ms = 1000 * (time() - $t0);
is($res, 't', 'zk_unlock returns true while ZooKeeper cannot be reached');
warning_is($err, '08006', qr/release of 1 ZooKeeper lock is not yet confirmed/,
	'with a WARNING (08006) that the release is not yet confirmed');
cmp_ok($ms, '>=', 900, 'after waiting for the connection');
cmp_ok($ms, '<', 3000, 'about zklock.connect_timeout, no longer');
note(sprintf('unconfirmed zk_unlock returned after %.0f ms (connect_timeout 1 s)', $ms));
figure(unconfirmed_unlock_ms => sprintf('%.0f', $ms));
is(queue_grants('/cl/release'), 'a:true', 'the node is still there meanwhile');
is($s->query_safe('SELECT releases_pending FROM zk_session()'), '1',
	'and the release is pending');
proxy('up');
ok(wait_for(sub { queue_grants('/cl/release') eq '' }, 15, 'delivery'),
	'once ZooKeeper is reachable again the node is gone');
is($s->query_safe('SELECT releases_pending || state FROM zk_session()'), '0connected',
	'the release is confirmed, the session kept');

# --- COMMIT, where PostgreSQL holds interrupts, waits no longer than that
$na->safe_psql('postgres', 'CREATE TABLE committed (x int)');
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/cl/commit')});
$s->query_safe('INSERT INTO committed VALUES (1)');
proxy('down');
$t0 = time();
($res, $err) = bg_query($s, 'COMMIT');
$ms = 1000 * (time() - $t0);
unlike($err, qr/ERROR/, 'a COMMIT whose lock was fresh commits though ZooKeeper is unreachable');
warning_is($err, '08006', qr/release of 1 ZooKeeper lock is not yet confirmed/,
	'and warns (08006) that releasing its lock is not yet confirmed');
cmp_ok($ms, '<', 3000, 'after at most about zklock.connect_timeout');
note(sprintf('COMMIT with an unreachable ZooKeeper returned after %.0f ms', $ms));
figure(unreachable_commit_ms => sprintf('%.0f', $ms));
is($na->safe_psql('postgres', 'SELECT count(*) FROM committed'), '1',
	'what it wrote is committed');
proxy('up');
ok(wait_for(sub { queue_grants('/cl/commit') eq '' }, 15, 'delivery'),
	'and the lock goes once ZooKeeper is reachable again');

# --- a zk_unlock cancelled while it waits: the lock is released all the same
$s->query_safe(q{SET zklock.connect_timeout = '60s'});
$s->query_safe(q{SELECT zk_lock('/cl/unlock-cancel')});
my $spid = $s->query_safe('SELECT pg_backend_pid()');
proxy('down');
bg_begin($s, q{SELECT zk_unlock('/cl/unlock-cancel')}, 'unlock_cancel_done');
usleep(300_000);
ok(!bg_done($s, 'unlock_cancel_done'), 'zk_unlock waits for the connection');
$na->safe_psql('postgres', "SELECT pg_cancel_backend($spid)");
my $o;
($o, $err) = bg_finish($s, 'unlock_cancel_done');
error_is($err, '57014', qr/canceling statement due to user request/, 'a cancel ends its wait: 57014');
is($s->query_safe('SELECT count(*) FROM zk_locks'), '0',
	'the lock is released on the backend\'s side');
proxy('up');
ok(wait_for(sub { queue_grants('/cl/unlock-cancel') eq '' }, 15, 'delivery'),
	'and its node goes once ZooKeeper is reachable again');
$s->query_safe('RESET zklock.connect_timeout');

# --- a wait cancelled while the connection is down leaves nothing behind
$h->query_safe(q{SELECT zk_lock('/cl/cancel')});
proxy('down');
bg_begin($s, q{SELECT zk_lock('/cl/cancel')}, 'cancel_done');
usleep(300_000);
$na->safe_psql('postgres', "SELECT pg_cancel_backend($spid)");
($o, $err) = bg_finish($s, 'cancel_done');
error_is($err, '57014', qr/canceling statement due to user request/, 'the wait is cancelled: 57014');
proxy('up');
usleep(500_000);
ok(wait_for(sub { queue_grants('/cl/cancel') eq 'b:true' }, 15, 'queue'),
	'and no node of the cancelled attempt is left');
is($s->query_safe('SELECT count(*) FROM zk_locks'), '0', 'nothing is held');
$h->query_safe(q{SELECT zk_unlock('/cl/cancel')});

$s->quit;
$h->quit;
zk_proxy_stop($proxy);
$na->stop;
$nb->stop;
done_testing();
