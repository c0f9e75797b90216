# Revocation: zk_revoke asks the holders of a lock path to let go (Curator's
# protocol: the marker "__REVOKE__" written into each holder's node), or with
# force takes the lock from them (their nodes deleted).
#
# - Bad input and rights: a path nobody holds gives 0; an invalid path
#   22023; NULL gives NULL; a role without the grant 42501, and the same role
#   once granted may.
# - Asking (zklock.on_revoke = ignore, the default): the holder on server A
#   learns of a revocation from server B (zk_revoke_requested, the
#   revoke_requested column of zk_locks) and keeps its lock until it
#   releases; the waiter is then granted.  The revoked node's data is the
#   marker: zk_lock_queue shows it with empty owner columns and no WARNING.
#   B logs who asked which nodes, and zk_stat counts them; log_lock_waits
#   names the revoked queue head as a holder asked to release.  Readers and a
#   semaphore's permits are each asked; a lease and a double barrier's
#   members are not, and a barrier has no holders.
# - A stranger's data in a held node is no revocation; the marker written
#   later is.
# - zklock.on_revoke = release: the holder's running statement stops with
#   08006 naming the lock as revoked, and the waiter gets the lock.
# - Force: the holder running pg_sleep is stopped (08006), the waiter on B
#   is granted within 1 s of calling zk_revoke, and after the new holder
#   fenced, the old holder's stale zk_fence is refused (55000).  A lease is
#   taken too.
# - Curator both ways: a revocable Curator mutex is asked by zk_revoke, its
#   listener is called, it releases and the zklock waiter gets the lock; a
#   zklock holder sees Curator's Revoker.attemptRevoke.
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
my $b = pg_with_zklock('b', $zk, "shared_preload_libraries = 'zklock'\n");

# a session on A that holds, one on B that waits
my $ha = verbose_session($a);
my $wb = verbose_session($b);
my $ab = verbose_session($b);		# B's administrator (superuser)

# --- bad input and rights
is($ab->query_safe(q{SELECT zk_revoke('/rv/nobody')}), '0',
	'a path nobody holds: 0');
my (undef, $err) = bg_query($ab, q{SELECT zk_revoke('rv/no-slash')});
is(error_code($err), '22023', 'an invalid path: 22023');
is($ab->query_safe(q{SELECT zk_revoke(NULL) IS NULL}), 't', 'NULL gives NULL');
is($ab->query_safe(q{SELECT zk_revoke('/rv/x', NULL) IS NULL}), 't',
	'a NULL force gives NULL');
$b->safe_psql('postgres', q{CREATE ROLE ops LOGIN});
my ($rc, $out, $stderr) = $b->psql('postgres',
	qq{\\set VERBOSITY verbose\nSELECT zk_revoke('/rv/nobody')}, extra_params => [ '-U', 'ops' ]);
is(error_code($stderr), '42501', 'a role without the grant: 42501');
$b->safe_psql('postgres',
	q{GRANT EXECUTE ON FUNCTION zk_revoke(text, boolean) TO ops});
($rc, $out, $stderr) = $b->psql('postgres',
	q{SELECT zk_revoke('/rv/nobody')}, extra_params => [ '-U', 'ops' ]);
is($out, '0', 'granted, the role may revoke');
is($ha->query_safe(q{SELECT zk_revoke_requested('/rv/nobody')}), 'f',
	'zk_revoke_requested on a path not held: false');

# --- asking a zklock holder, on_revoke = ignore
my $stat0 = $ab->query_safe(q{SELECT revocations FROM zk_stat});
$ha->query_safe(q{SELECT zk_lock('/rv/ask')});
my $node = held_node($ha, '/rv/ask');
ok(wait_watched($zk, $node), 'the holder watches its node');
bg_begin($wb, q{SELECT zk_lock('/rv/ask') > 0 AS granted}, 'wb_ask');
ok(wait_queue_len($b, '/rv/ask', 2, 15, 'the waiter queued'), 'B waits behind A');
my $log_offset = -s $b->logfile;
is($ab->query_safe(q{SELECT zk_revoke('/rv/ask')}), '1', 'one holder asked');
ok(wait_for(sub { $ha->query_safe(q{SELECT zk_revoke_requested('/rv/ask')}) eq 't' },
		10, 'the holder to learn of the request'),
	'the holder learns of the request');
is($ha->query_safe(q{SELECT revoke_requested FROM zk_locks WHERE path = '/rv/ask'}),
	't', 'zk_locks shows it');
is($ha->query_safe(q{SELECT count(*) FROM zk_locks}), '1',
	'on_revoke = ignore: the holder keeps its lock');
ok(!bg_done($wb, 'wb_ask'), 'and the waiter still waits');
# a waiter that queues behind the revoked node: log_lock_waits names the
# queue head as a holder asked to release, not as a client describing
# itself by the marker
my $w2 = verbose_session($b);
$w2->query_safe(q{SET log_lock_waits = on});
$w2->query_safe(q{SET deadlock_timeout = '200ms'});
my $w2_pid = $w2->query_safe('SELECT pg_backend_pid()');
my $wait_offset = -s $b->logfile;
bg_begin($w2, q{SELECT zk_lock('/rv/ask') > 0 AS granted}, 'w2_ask');
ok(wait_for(sub { slurp_file($b->logfile, $wait_offset) =~ /process $w2_pid still waiting/ },
		10, 'the still-waiting line'),
	'log_lock_waits: the second waiter is still waiting');
like(slurp_file($b->logfile, $wait_offset),
	qr/process $w2_pid still waiting for ZooKeeper exclusive lock "\/rv\/ask"[^\n]*\n[^\n]*DETAIL:  Queue position \d+ of \d+\. First in the queue: node "[^"]+", whose holder was asked to release it \(its data is the revocation marker\)\./,
	'and names the queue head as a holder asked to release');
my ($q) = bg_query($ab, q{SELECT coalesce(pid::text, 'none') || ',' || granted || ',' || coalesce(data, 'none')
	FROM zk_lock_queue('/rv/ask') WHERE position = 1});
is($q, "none,true,__REVOKE__",
	'zk_lock_queue: the revoked node, owner columns empty, its data the marker');
is($ab->{stderr}, '', 'and no WARNING about its data');
like(slurp_file($b->logfile, $log_offset),
	qr/LOG:  role "\w+" asked 1 holder of ZooKeeper lock "\/rv\/ask" to release it\n.*DETAIL:  Nodes given the revocation marker: "[^"]+"\./,
	"B's log names who asked, the lock and the node");
is($ab->query_safe(q{SELECT revocations FROM zk_stat}) - $stat0, 1,
	'zk_stat counts the holder asked');
$ha->query_safe(q{SELECT zk_unlock('/rv/ask')});
($out) = bg_finish($wb, 'wb_ask');
like($out, qr/t/, 'released, the waiter is granted');
$wb->query_safe(q{SELECT zk_unlock_all()});
($out) = bg_finish($w2, 'w2_ask');
like($out, qr/t/, 'then the second waiter');
$w2->query_safe(q{SELECT zk_unlock_all()});
$w2->quit;

# --- a stranger's data is no revocation; the marker later is
$ha->query_safe(q{SELECT zk_lock('/rv/stranger')});
$node = held_node($ha, '/rv/stranger');
ok(wait_watched($zk, $node), 'the holder watches its node');
kazoo_run($zk, "c.set('$node', b'hello \\xff' * 1000)");
usleep(300_000);
is($ha->query_safe(q{SELECT zk_revoke_requested('/rv/stranger')}), 'f',
	"a stranger's data is no revocation");
is($ha->query_safe(q{SELECT count(*) FROM zk_locks WHERE NOT revoke_requested}), '1',
	'the holder keeps its lock and zk_locks works');
kazoo_run($zk, "c.set('$node', b'__REVOKE__')");
ok(wait_for(sub { $ha->query_safe(q{SELECT zk_revoke_requested('/rv/stranger')}) eq 't' },
		10, 'the marker'),
	'the marker written by another client is a revocation');
$ha->query_safe(q{SELECT zk_unlock_all()});

# --- readers, permits, a lease and a double barrier's members
$ha->query_safe(q{SELECT zk_rlock('/rv/readers')});
$wb->query_safe(q{SELECT zk_rlock('/rv/readers')});
is($ab->query_safe(q{SELECT zk_revoke('/rv/readers')}), '2', 'both readers asked');
ok(wait_for(sub { $wb->query_safe(q{SELECT zk_revoke_requested('/rv/readers')}) eq 't' },
		10, 'the reader on B'),
	'the reader on B learns of it');
ok(wait_for(sub { $ha->query_safe(q{SELECT zk_revoke_requested('/rv/readers')}) eq 't' },
		10, 'the reader on A'),
	'the reader on A learns of it');
$ha->query_safe(q{SELECT zk_semaphore_acquire('/rv/sem', 3)});
$wb->query_safe(q{SELECT zk_semaphore_acquire('/rv/sem', 3)});
# (an acquirer deletes its mutex node in the background once its permit is
# granted; until that delete is applied, the scan counts its permit as one
# waiting for the count, and zk_revoke would not ask it)
ok(wait_for(sub { $ab->query_safe(q{SELECT coalesce(max(waiters), -1) FROM zk_cluster_locks('/rv/sem')}) eq '0' },
		10, 'no acquirer of /rv/sem left waiting in the scan'),
	'the scan sees both permits held');
is($ab->query_safe(q{SELECT zk_revoke('/rv/sem')}), '2', "both permits asked");
ok(wait_for(sub { $ha->query_safe(q{SELECT zk_revoke_requested('/rv/sem')}) eq 't' },
		10, 'the permit on A'),
	'the permit holder on A learns of it');
$ha->query_safe(q{SELECT zk_unlock_all()});
$wb->query_safe(q{SELECT zk_unlock_all()});
my $token = $ha->query_safe(q{SELECT zk_lease_lock('/rv/lease', '1 min')});
is($ab->query_safe(q{SELECT zk_revoke('/rv/lease')}), '0',
	'a lease is not asked (nobody listens to it)');
$ab->query_safe(q{SELECT zk_double_barrier_enter('/rv/db', 1)});
is($ab->query_safe(q{SELECT zk_revoke('/rv/db')}) . ','
	  . $ab->query_safe(q{SELECT zk_revoke('/rv/db', force => true)}),
	'0,0', "a double barrier's members: neither asked nor taken");
$ab->query_safe(q{SELECT zk_double_barrier_leave('/rv/db')});
$ab->query_safe(q{SELECT zk_barrier_set('/rv/barrier')});
is($ab->query_safe(q{SELECT zk_revoke('/rv/barrier', force => true)}) . ','
	  . $ab->query_safe(q{SELECT zk_barrier_remove('/rv/barrier')}),
	'0,t', 'a barrier has no holders: 0, and it stays up until removed');
is($ab->query_safe(q{SELECT zk_revoke('/rv/lease', force => true)}), '1',
	'force takes a lease');
(undef, $err) = bg_query($ha, qq{SELECT zk_lease_renew('/rv/lease', $token)});
is(error_code($err), '55000', 'and the lease is gone: renewing it fails');

# --- on_revoke = release: the running statement stops, the waiter gets in
$ha->query_safe(q{SET zklock.on_revoke = release});
$ha->query_safe(q{SELECT zk_lock('/rv/release')});
$node = held_node($ha, '/rv/release');
ok(wait_watched($zk, $node), 'the holder watches its node');
bg_begin($wb, q{SELECT zk_lock('/rv/release') > 0 AS granted}, 'wb_rel');
ok(wait_queue_len($b, '/rv/release', 2, 15, 'the waiter queued'), 'B waits');
bg_begin($ha, q{SELECT pg_sleep(60)}, 'ha_rel');
my $t0 = time();
is($ab->query_safe(q{SELECT zk_revoke('/rv/release')}), '1', 'one holder asked');
(undef, $err) = bg_finish($ha, 'ha_rel');
my $stop_ms = int((time() - $t0) * 1000);
error_is($err, '08006',
	qr{ZooKeeper lock "/rv/release" was revoked\nDETAIL:  A revocation was asked of its node "/zklock/rv/release/[^"]+", which was deleted because zklock\.on_revoke is "release"\.},
	'on_revoke = release: the statement stops with 08006, the lock named as revoked');
ok($stop_ms < 2000, "within 2 s of zk_revoke's call ($stop_ms ms)");
($out) = bg_finish($wb, 'wb_rel');
like($out, qr/t/, 'the waiter is granted');
is($ha->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'the holder holds nothing');
$ha->query_safe(q{RESET zklock.on_revoke});
$wb->query_safe(q{SELECT zk_unlock_all()});

# --- force: the holder is stopped, the waiter granted at once, the fence
$a->safe_psql('postgres', q{CREATE TABLE ledger (who text)});
$token = $ha->query_safe(q{SELECT zk_lock('/rv/force')});
$node = held_node($ha, '/rv/force');
ok(wait_watched($zk, $node), 'the holder watches its node');
bg_begin($wb, q{SELECT zk_lock('/rv/force')}, 'wb_force');
ok(wait_queue_len($b, '/rv/force', 2, 15, 'the waiter queued'), 'B waits');
bg_begin($ha, q{SELECT pg_sleep(60)}, 'ha_force');
$t0 = time();
is($ab->query_safe(q{SELECT zk_revoke('/rv/force', force => true)}), '1',
	'force: one holder taken');
my ($new_token) = bg_finish($wb, 'wb_force');
my $grant_ms = int((time() - $t0) * 1000);
ok($grant_ms < 1000, "the waiter is granted within 1 s of zk_revoke's call ($grant_ms ms)");
(undef, $err) = bg_finish($ha, 'ha_force');
error_is($err, '08006', qr{ZooKeeper lock "/rv/force" was lost},
	'the holder running pg_sleep is stopped with 08006');
# each write in one statement with its fence
$a->safe_psql('postgres',
	"INSERT INTO ledger SELECT 'new' FROM zk_fence('/rv/force', $new_token)");
(undef, $err) = bg_query($ha,
	"INSERT INTO ledger SELECT 'old' FROM zk_fence('/rv/force', $token)");
is(error_code($err), '55000', "the old holder's stale zk_fence is refused");
is($a->safe_psql('postgres', q{SELECT string_agg(who, ',') FROM ledger}), 'new',
	'only the new holder wrote');
$wb->query_safe(q{SELECT zk_unlock_all()});
figure(force_grant_ms => $grant_ms, release_stop_ms => $stop_ms);

# --- Curator, both ways
SKIP:
{
	my $why = curator_missing();
	skip "Curator: $why", 6 if $why;
	my $c = curator_client('curator', $zk, '/zklock/rv/curator');
	is(client_ask($c, 'revocable'), 'revocable', 'Curator: locks made revocable');
	is(client_ask($c, 'mutex'), 'acquired mutex', 'Curator holds its mutex');
	bg_begin($wb, q{SELECT zk_lock('/rv/curator') > 0}, 'wb_cur');
	ok(wait_queue_len($b, '/rv/curator', 2, 15, 'the zklock waiter queued'),
		'a zklock waiter queues behind Curator');
	is($ab->query_safe(q{SELECT zk_revoke('/rv/curator')}), '1',
		'zk_revoke asks the Curator holder');
	is(client_next($c, 15), 'revoke requested mutex',
		"Curator's revocation listener is called");
	is(client_ask($c, 'release mutex'), 'released mutex', 'Curator releases');
	($out) = bg_finish($wb, 'wb_cur');
	like($out, qr/t/, 'the zklock waiter is granted');
	$wb->query_safe(q{SELECT zk_unlock_all()});

	$ha->query_safe(q{SELECT zk_lock('/rv/by-curator')});
	$node = held_node($ha, '/rv/by-curator');
	is(client_ask($c, "revoke $node"), 'revoke sent',
		"Curator's Revoker.attemptRevoke on the zklock holder's node");
	ok(wait_for(sub { $ha->query_safe(q{SELECT zk_revoke_requested('/rv/by-curator')}) eq 't' },
			10, "the zklock holder to see Curator's request"),
		"the zklock holder sees Curator's request");
	$ha->query_safe(q{SELECT zk_unlock_all()});
	client_ask($c, 'close');
}

$ha->quit;
$wb->quit;
$ab->quit;
done_testing();
