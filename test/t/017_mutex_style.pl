# zklock.exclusive_node_style = 'mutex': zk_lock and the real Apache
# Curator InterProcessMutex wait in one queue, in both directions.
#
# - zklock's exclusive nodes are named _c_<uuid>-lock-<seq>, like Curator's
#   InterProcessMutex nodes, so each side sees the other's nodes: a Curator
#   holder blocks zk_lock and hands over to it, and a zklock holder blocks
#   Curator and hands over to it.
# - A dying holder on either side hands the lock over: Curator's process
#   halted (its session expires), a zklock backend terminated.
# - Stacking, the fencing token and zk_lock_queue work as in the default
#   style; a queue of mutex-style nodes alone draws no warning.
# - A shared lock in that style is refused with 22023; the setting can be
#   set per transaction (SET LOCAL).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

if (my $why = curator_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $pg = pg_with_zklock('a', $zk, "zklock.exclusive_node_style = 'mutex'\n");

my $c = curator_client('curator_mutex', $zk, '/zklock/mx/a', 2000);
like($c->{ready}, qr/^ready /, 'the Curator client is connected');

sub sql { return $pg->safe_psql('postgres', $_[0]); }

my $s = $pg->background_psql('postgres', on_error_stop => 0);
is($s->query_safe('SHOW zklock.exclusive_node_style'), 'mutex', 'the style is set');

# --- Curator holds, zk_lock waits, then gets it
is(client_ask($c, 'mutex 5000'), 'acquired mutex', 'Curator takes its InterProcessMutex');
is(sql(q{SELECT zk_try_lock('/mx/a')}), 'f', 'zk_try_lock fails while Curator holds it');
bg_begin($s, q{SELECT zk_lock('/mx/a') > 0 AS got}, 'got_a');
ok(wait_queue_len($pg, '/mx/a', 2, 15, 'queued'), 'zk_lock queues behind Curator');
is( sql(
		q{SELECT string_agg(format('%s:%s:%s', position, mode, granted), ',' ORDER BY position)
		  FROM zk_lock_queue('/mx/a')}),
	'1:exclusive:t,2:exclusive:f',
	'the queue: Curator holding, zklock waiting');
like(sql(q{SELECT znode FROM zk_lock_queue('/mx/a') WHERE position = 2}),
	qr/^_c_[0-9a-f-]{36}-lock-[0-9]{10}$/, "zklock's node is named like InterProcessMutex's");
is(client_ask($c, 'release mutex'), 'released mutex', 'Curator releases');
my ($out, $err) = bg_finish($s, 'got_a');
like($out, qr/\bt\b/, 'zk_lock gets the lock');
is($err, '', 'with no warning: a queue of mutex nodes is one queue');

# --- zklock holds, Curator waits, then gets it
is(client_ask($c, 'mutex 300'), 'timeout mutex', 'Curator cannot take it while zklock holds it');
client_queues($c, 'mutex', $pg, '/mx/a', 2, 'Curator waits',
	"Curator's waiter is queued");
$s->query_safe(q{SELECT zk_unlock('/mx/a')});
is(client_next($c), 'acquired mutex', 'Curator gets it once zk_unlock returned');
is(client_ask($c, 'release mutex'), 'released mutex', 'and releases it');

# --- stacking and the fencing token, as in the default style
my $t1 = $s->query_safe(q{SELECT zk_lock('/mx/a')});
my $t2 = $s->query_safe(q{SELECT zk_lock('/mx/a')});
is($t2, $t1, 'a stacked zk_lock returns the same token');
is(sql(q{SELECT fencing_token FROM zk_lock_queue('/mx/a')}), $t1, "the token is the node's czxid");
is($s->query_safe(q{SELECT hold_count FROM zk_locks}), '2', 'two holds');
$s->query_safe(q{SELECT zk_unlock('/mx/a')});
is(client_ask($c, 'mutex 200'), 'timeout mutex', 'one unlock of two: still held');
$s->query_safe(q{SELECT zk_unlock('/mx/a')});
is(client_ask($c, 'mutex 2000'), 'acquired mutex', 'the second unlock releases it');

# --- a dying Curator holder hands over once its session expires
bg_begin($s, q{SELECT zk_lock('/mx/a') > 0 AS got}, 'after_die');
ok(wait_queue_len($pg, '/mx/a', 2, 15, 'queued'), 'zk_lock waits for the Curator holder');
my $t0 = time();
client_send($c, 'die');
($out, $err) = bg_finish($s, 'after_die');
like($out, qr/\bt\b/, 'zk_lock gets the lock after the halted Curator holder\'s session expired');
my $handover = time() - $t0;
note(sprintf('halted Curator holder -> zk_lock: %.0f ms (session timeout 2 s)', 1000 * $handover));
figure(curator_halted_ms => sprintf('%.0f', 1000 * $handover));
# the server expires a session between two thirds of its timeout (the
# client's last heartbeat) and the timeout plus a tick after it halted
cmp_ok($handover, '>=', 1.2, 'not before the session could have expired (>= 1.2 s of 2 s)');
cmp_ok($handover, '<', 2 + 4, 'and soon after it did (< 6 s)');

# --- a terminated zklock holder hands over to a Curator waiter
my $c2 = curator_client('curator_mutex2', $zk, '/zklock/mx/a', 10000);
client_queues($c2, 'mutex', $pg, '/mx/a', 2, 'Curator waits for the zklock holder',
	"Curator's waiter is queued behind the holder");
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$t0 = time();
sql("SELECT pg_terminate_backend($pid)");
is(client_next($c2), 'acquired mutex', 'Curator gets it once the holder is terminated');
note(sprintf('terminated zklock holder -> Curator: %.0f ms', 1000 * (time() - $t0)));
figure(zklock_terminated_ms => sprintf('%.0f', 1000 * (time() - $t0)));
is(client_ask($c2, 'release mutex'), 'released mutex', 'and releases it');

# --- shared locks are refused in this style; SET LOCAL per transaction
my $t = $pg->background_psql('postgres', on_error_stop => 0);
$t->query_safe('\set VERBOSITY verbose');
($out, $err) = bg_query($t, q{SELECT zk_rlock('/mx/r')});
error_is($err, '22023', qr/shared ZooKeeper locks are not available with zklock.exclusive_node_style = 'mutex'/,
	'a shared lock in the mutex style is 22023');
$t->query_safe(q{SET zklock.exclusive_node_style = 'rwlock'});
$t->query_safe('BEGIN');
$t->query_safe(q{SET LOCAL zklock.exclusive_node_style = 'mutex'});
$t->query_safe(q{SELECT zk_xact_lock('/mx/local')});
like(sql(q{SELECT znode FROM zk_lock_queue('/mx/local')}), qr/-lock-[0-9]{10}$/,
	'SET LOCAL: the transaction takes a mutex-style node');
$t->query_safe('COMMIT');
$t->query_safe(q{SELECT zk_lock('/mx/local')});
like(sql(q{SELECT znode FROM zk_lock_queue('/mx/local')}), qr/-__WRIT__[0-9]{10}$/,
	'after it, the session style again');

# --- the two styles on one path: zklock warns about the mix
$s = $pg->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');
($out, $err) = bg_query($s, q{SELECT zk_try_lock('/mx/local', 100)});
warning_is($err, '01000', qr/ZooKeeper lock "\/mx\/local" is used with two node styles, "mutex" and "rwlock"\nDETAIL:  Node "[^"]*-lock-[0-9]{10}" has the mutex style and other nodes of the queue the rwlock style: another zklock backend \(zklock.exclusive_node_style\) or another client uses the other style on this path\./,
	'a mutex-style waiter behind a read/write-style node is warned of the mix (01000)');
$t->query_safe(q{SELECT zk_unlock_all()});
ok(wait_queues_empty($pg, [ '/mx/a', '/mx/r', '/mx/local' ], 10, 'empty'), 'no node is left');

is(client_ask($c2, 'close'), 'closed', 'the Curator client closes');
$_->quit for ($s, $t);
$pg->stop;
done_testing();
