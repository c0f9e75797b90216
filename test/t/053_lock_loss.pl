# A lost hold stops its holder (zklock.on_lock_loss = cancel, the default).
#
# Each kind of loss cancels a running statement, and the ERROR names the
# lost lock with SQLSTATE 08006:
# - another client (kazoo) deletes a held node: during pg_sleep, a
#   cross-join scan, a PL/pgSQL loop (also one whose exception block catches
#   OTHERS), a procedure between its COMMITs, and COPY; the statement ends
#   within 1 s of the deletion;
# - the session expires (the backend frozen with SIGSTOP past the session
#   timeout, then woken);
# - the backend is cut off from ZooKeeper (a proxy drops every byte): the
#   statement ends once it has been out of touch past the session timeout;
# - a lease this transaction took runs out (its ttl), or its node is
#   deleted.
# Then: an idle backend gets the ERROR at its next statement (any
# statement), once; the transaction of a cancelled statement cannot
# COMMIT; zk_locks no longer lists the lost lock; the next zklock call
# works.  With on_lock_loss = error the statement runs to its end, and the
# next zklock call fails as before.
# No false cancel: the backend's own release of a watched hold, a dropped
# connection that comes back within the session timeout, a SET LOCAL
# switch of the mode.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

my $zk = zk_standalone();
# the holder reaches ZooKeeper through a proxy that can cut it off
my $proxy = tcp_proxy_start(zk => $zk->{ports}[0]);
my $hosts = "127.0.0.1:$proxy->{port}{zk}";
my $a = pg_with_zklock('a', $zk,
	"zklock.hosts = '$hosts'\nzklock.session_timeout = '2s'\n");
# a second server, straight to ZooKeeper, to look at the queues
my $b = pg_with_zklock('b', $zk);

$a->safe_psql('postgres', q{
	CREATE TABLE big AS SELECT g FROM generate_series(1, 20000) g;
	CREATE TABLE sink (n int);
	CREATE PROCEDURE tick_forever() LANGUAGE plpgsql AS $$
	BEGIN
		LOOP
			INSERT INTO sink VALUES (1);
			PERFORM pg_sleep(0.05);
			COMMIT;
		END LOOP;
	END $$;
});

# run SQL in session s in the background; delete the node of its hold on
# path once the statement runs and the node is watched; return (stderr,
# seconds from the deletion to the statement's end)
sub cancel_by_deletion
{
	my ($s, $path, $sql) = @_;
	my $node = held_node($s, $path);
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	bg_begin($s, $sql, 'stmt_done');
	ok(wait_watched($zk, $node), "the holder watches its node: $sql");
	ok(wait_active($a, $pid), "the statement runs: $sql");
	ok(!bg_done($s, 'stmt_done'), "still running before the deletion: $sql");
	my $t0 = kazoo_delete($zk, $node);
	my (undef, $err) = bg_finish($s, 'stmt_done');
	return ($err, time() - $t0);
}

my $worst_deletion = 0;

# --- 1. a held node deleted by another client, in every kind of statement
my @statements = (
	[ 'pg_sleep', q{SELECT pg_sleep(60)} ],
	[ 'a scan', q{SELECT count(*) FROM big x, big y, big z} ],
	[ 'a PL/pgSQL loop', q{DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$} ],
	[ 'a PL/pgSQL loop catching OTHERS',
		q{DO $$ BEGIN LOOP BEGIN PERFORM pg_sleep(0.01); EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$} ],
	[ 'a procedure between COMMITs', q{CALL tick_forever()} ],
	[ 'COPY', q{COPY (SELECT x.g FROM big x, big y, big z) TO '/dev/null'} ],
);
for my $st (@statements)
{
	my ($what, $sql) = @$st;
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/del')});
	my ($err, $secs) = cancel_by_deletion($s, '/loss/del', $sql);
	error_is($err, '08006',
		qr{ZooKeeper lock "/loss/del" was lost\nDETAIL:  Its node "/zklock/loss/del/[^"]+" no longer exists\. The statement was stopped because zklock\.on_lock_loss is "cancel"\.},
		"$what: cancelled with 08006 naming the lost lock");
	ok($secs < 1.0, sprintf("$what: ended %.2f s after the deletion (< 1 s)", $secs));
	$worst_deletion = $secs if $secs > $worst_deletion;
	is($s->query_safe(q{SELECT count(*) FROM zk_locks}), '0',
		"$what: zk_locks no longer lists the lost lock");
	my ($out, $err2) = bg_query($s, q{SELECT zk_lock('/loss/del') > 0});
	is($out, 't', "$what: the next zk_lock works");
	is($err2, '', "$what: and reports no second error");
	$s->query_safe(q{SELECT zk_unlock_all()});
	$s->quit;
}
figure(deletion_to_cancel_worst_ms => int($worst_deletion * 1000));

# --- 2. an idle backend gets the ERROR at its next statement, once
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/idle')});
	my $node = held_node($s, '/loss/idle');
	ok(wait_watched($zk, $node), 'idle: the holder watches its node');
	kazoo_delete($zk, $node);
	ok(wait_for(sub { queue_len($b, '/loss/idle') eq '0' }, 10, 'the node to go'),
		'idle: the node is gone');
	# (the deletion's notice was sent to the holder before kazoo had its
	# answer; a moment for the holder's client thread to take it)
	usleep(300_000);
	my ($out, $err) = bg_query($s, q{SELECT 1});
	error_is($err, '08006', qr{ZooKeeper lock "/loss/idle" was lost},
		'idle: the next statement, any statement, gets the 08006');
	($out, $err) = bg_query($s, q{SELECT 2});
	is($out, '2', 'idle: the statement after it runs');
	is($err, '', 'idle: with no second error');
	$s->quit;
}

# --- 3. a transaction whose statement was cancelled cannot COMMIT
{
	my $s = verbose_session($a);
	$s->query_safe(q{BEGIN});
	$s->query_safe(q{SELECT zk_xact_lock('/loss/xact')});
	$s->query_safe(q{INSERT INTO sink VALUES (42)});
	my ($err) = cancel_by_deletion($s, '/loss/xact', q{SELECT pg_sleep(60)});
	error_is($err, '08006', qr{ZooKeeper lock "/loss/xact" was lost},
		'transaction: the statement is cancelled');
	my ($out, $err2) = bg_query($s, q{COMMIT});
	# the statement's 08006 aborted the transaction: its COMMIT rolls back,
	# as PostgreSQL's COMMIT of a failed transaction does, with no error of
	# its own, and ends the transaction
	is($err2, '', 'transaction: its COMMIT raises nothing of its own');
	my (undef, $err3) = bg_query($s, q{ROLLBACK});
	like($err3, qr/there is no transaction in progress/,
		'transaction: the COMMIT ended the transaction');
	is($s->query_safe(q{SELECT count(*) FROM sink WHERE n = 42}), '0',
		'transaction: its COMMIT did not commit the write');
	$s->quit;
}

# --- 4. on_lock_loss = error: the statement runs on; the next call fails
{
	my $s = verbose_session($a);
	$s->query_safe(q{SET zklock.on_lock_loss = error});
	$s->query_safe(q{SELECT zk_lock('/loss/err')});
	my $node = held_node($s, '/loss/err');
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	ok(wait_watched($zk, $node), 'error mode: the node is watched');
	my $t0 = time();
	# (4 s: a loaded machine may take more than a second to start kazoo,
	# and the deletion must come before the statement's COMMIT)
	bg_begin($s, q{SELECT pg_sleep(4)}, 'err_done');
	ok(wait_active($a, $pid), 'error mode: the statement runs');
	my $deleted = kazoo_delete($zk, $node);
	ok($deleted < $t0 + 3.5, 'error mode: the node was deleted while it ran');
	my ($out, $err) = bg_finish($s, 'err_done');
	ok(time() - $t0 >= 3.9, 'error mode: the statement ran to its end');
	error_is($err, '08006', qr{ZooKeeper lock "/loss/err" was lost},
		'error mode: then its COMMIT failed naming the lost lock, as before');
	($out, $err) = bg_query($s, q{SELECT 1});
	is($err, '', 'error mode: the next statement is not refused');
	($out, $err) = bg_query($s, q{SELECT zk_lock('/loss/err') > 0});
	is($out, 't', 'error mode: the lock can be taken again');
	$s->query_safe(q{SELECT zk_unlock_all()});
	$s->quit;
}

# --- 5. no false cancel: own release, SET LOCAL
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/own')});
	$s->query_safe(q{SELECT zk_rlock('/loss/own2')});
	ok(wait_watched($zk, held_node($s, '/loss/own')) && wait_watched($zk, held_node($s, '/loss/own2')),
		'own release: both nodes are watched');
	my ($out, $err) = bg_query($s,
		q{SELECT zk_unlock('/loss/own'), zk_unlock('/loss/own2'), pg_sleep(1.5)});
	is($err, '', 'own release: the statement that released and slept is not cancelled');
	($out, $err) = bg_query($s, q{SELECT 1});
	is($err, '', 'own release: nor the next one');

	$s->query_safe(q{BEGIN});
	$s->query_safe(q{SET LOCAL zklock.on_lock_loss = error});
	$s->query_safe(q{SELECT zk_xact_lock('/loss/local')});
	$s->query_safe(q{COMMIT});
	$s->query_safe(q{SELECT zk_lock('/loss/local2')});
	ok(wait_watched($zk, held_node($s, '/loss/local2')), 'after a SET LOCAL: the node is watched');
	($out, $err) = bg_query($s, q{SELECT zk_unlock('/loss/local2'), pg_sleep(0.5)});
	is($err, '', 'after a SET LOCAL: cancel mode is back, and own releases cancel nothing');
	$s->quit;
}

# --- 6. a lease this transaction took: its ttl runs out, or its node goes
{
	my $s = verbose_session($a);
	$s->query_safe(q{BEGIN});
	$s->query_safe(q{SELECT zk_lease_lock('/loss/lease', '1.5 s')});
	my $t0 = time();
	my ($out, $err) = bg_query($s, q{SELECT pg_sleep(60)});
	my $secs = time() - $t0;
	error_is($err, '08006',
		qr{ZooKeeper lease on lock "/loss/lease" ran out\nDETAIL:  Its ttl passed since this transaction took or renewed it\. The statement was stopped},
		'lease ttl: the statement is cancelled with 08006');
	ok($secs < 1.5 + 1.0, sprintf('lease ttl: within ttl + 1 s of the grant (%.2f s)', $secs));
	figure(lease_grant_to_cancel_ms => int($secs * 1000));
	$s->query_safe(q{ROLLBACK});

	$s->query_safe(q{BEGIN});
	my $token = $s->query_safe(q{SELECT zk_lease_lock('/loss/lease2', '10 min')});
	my $node = $b->safe_psql('postgres',
		q{SELECT '/zklock/loss/lease2/' || znode FROM zk_lock_queue('/loss/lease2') LIMIT 1});
	bg_begin($s, q{SELECT pg_sleep(60)}, 'lease_done');
	ok(wait_watched($zk, $node), 'lease deleted: its node is watched');
	my $t1 = kazoo_delete($zk, $node);
	($out, $err) = bg_finish($s, 'lease_done');
	error_is($err, '08006', qr{ZooKeeper lease on lock "/loss/lease2" was lost},
		'lease deleted: the statement is cancelled with 08006');
	ok(time() - $t1 < 1.0, 'lease deleted: within 1 s of the deletion');
	$s->query_safe(q{ROLLBACK});

	# a lease released by its own backend cancels nothing
	$s->query_safe(q{BEGIN});
	$token = $s->query_safe(q{SELECT zk_lease_lock('/loss/lease3', '10 min')});
	ok(wait_watched($zk, $b->safe_psql('postgres',
				q{SELECT '/zklock/loss/lease3/' || znode FROM zk_lock_queue('/loss/lease3') LIMIT 1})),
		'own lease release: its node is watched');
	($out, $err) = bg_query($s,
		"SELECT zk_lease_unlock('/loss/lease3', $token), pg_sleep(1)");
	is($err, '', 'own lease release: nothing is cancelled');
	$s->query_safe(q{COMMIT});
	$s->quit;
}

# --- 7. the session expires: the backend frozen past the session timeout
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/exp')});
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	bg_begin($s, q{SELECT pg_sleep(60)}, 'exp_done');
	ok(wait_active($a, $pid), 'expiry: the statement runs');
	kill 'STOP', $pid;
	ok(wait_for(sub { queue_len($b, '/loss/exp') eq '0' }, 30,
			'the frozen backend\'s node to go'),
		'expiry: ZooKeeper expired the frozen backend\'s session');
	my $t0 = time();
	kill 'CONT', $pid;
	my ($out, $err) = bg_finish($s, 'exp_done');
	# the expiry, or the exists that sets its watch finding the node gone,
	# whichever the client library hears first
	error_is($err, '08006',
		qr{(ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "/loss/exp" \(exclusive, session\)|ZooKeeper lock "/loss/exp" was lost\nDETAIL:  Its node "/zklock/loss/exp/)},
		'expiry: the statement is cancelled with 08006 naming the lost lock');
	ok(time() - $t0 < 5, 'expiry: soon after the backend woke');
	# (at once, whether or not the client library has heard "expired" yet:
	# a node found gone makes the next call that holds nothing open a fresh
	# session, instead of sending a request on an expired one)
	my $err2;
	($out, $err2) = bg_query($s, q{SELECT zk_lock('/loss/exp') > 0});
	is($out, 't', 'expiry: the next zk_lock works on a new session');
	is($err2, '', 'expiry: with no second report of the loss');
	$s->quit;
}

# --- 8. cut off from ZooKeeper: out of touch past the session timeout
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/cut')});
	my $timeout = $s->query_safe(q{SELECT timeout_ms FROM zk_session()});
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	bg_begin($s, q{SELECT pg_sleep(60)}, 'cut_done');
	ok(wait_active($a, $pid), 'cut off: the statement runs');
	my $t0 = time();
	tcp_proxy_cmd($proxy, 'cut zk');
	my ($out, $err) = bg_finish($s, 'cut_done');
	my $secs = time() - $t0;
	tcp_proxy_cmd($proxy, 'heal zk');
	error_is($err, '08006',
		qr{ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "/loss/cut" \(exclusive, session\)\. No ZooKeeper server answered for longer than the session timeout\. The statement was stopped},
		'cut off: the statement is cancelled with 08006');
	# the client library notices a silent server after 2/3 of the timeout,
	# and the session has certainly expired one timeout after that
	ok($secs < $timeout / 1000 * 5 / 3 + 1,
		sprintf('cut off: within 5/3 of the session timeout (%d ms) + 1 s: %.2f s',
			$timeout, $secs));
	figure(cut_to_cancel_ms => int($secs * 1000), cut_session_timeout_ms => $timeout);
	($out, $err) = bg_query($s, q{SELECT zk_lock('/loss/cut') > 0});
	is($out, 't', 'cut off: once back, the next zk_lock works on a new session');
	$s->quit;
}

# --- 9. a dropped connection that comes back in time cancels nothing
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/loss/blip')});
	ok(wait_watched($zk, held_node($s, '/loss/blip')), 'dropped connection: the node is watched');
	my $sid = $s->query_safe(q{SELECT session_id FROM zk_session()});
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	bg_begin($s, q{SELECT pg_sleep(3)}, 'blip_done');
	ok(wait_active($a, $pid), 'dropped connection: the statement runs');
	tcp_proxy_cmd($proxy, 'reset zk');
	usleep(300_000);
	tcp_proxy_cmd($proxy, 'heal zk');
	my ($out, $err) = bg_finish($s, 'blip_done');
	is($err, '', 'dropped connection back in time: the statement ran to its end');
	is($s->query_safe(q{SELECT session_id FROM zk_session()}), $sid,
		'dropped connection back in time: the same session');
	is($s->query_safe(q{SELECT count(*) FROM zk_locks}), '1',
		'dropped connection back in time: the lock is still held');
	$s->quit;
}

done_testing();
