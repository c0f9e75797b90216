# Two PostgreSQL servers on one standalone ZooKeeper: a lock taken on one
# blocks the other; a release, a terminated holder and a SIGKILLed holder
# each hand the lock over, the last only once ZooKeeper expires the dead
# backend's session.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk);
# B recovers from the SIGKILL below by a crash restart
my $b = pg_with_zklock('b', $zk, "restart_after_crash = on\n");

# --- a lock taken on one server blocks the other
my $ha = $a->background_psql('postgres');
$ha->query_safe(q{SELECT zk_lock('/jobs/nightly')});

is($b->safe_psql('postgres', q{SELECT zk_try_lock('/jobs/nightly')}),
	'f', 'B cannot take the lock A holds');
is($b->safe_psql('postgres', q{SELECT zk_try_rlock('/jobs/nightly', 200)}),
	'f', 'nor the shared lock, after waiting 200 ms');

my $hb = $b->background_psql('postgres');
$hb->query_safe(q{SET application_name = 'b_waiter'});
bg_begin($hb, q{SELECT zk_lock('/jobs/nightly') > 0 AS got}, 'b_got_it');

ok(wait_queue_len($b, '/jobs/nightly', 2, 10, "B's node in the queue"),
	"B's waiter is queued");
is( $b->safe_psql(
		'postgres',
		q{SELECT wait_event_type FROM pg_stat_activity WHERE application_name = 'b_waiter'}),
	'Extension',
	'a waiting backend shows wait_event_type Extension');
is( queue_rows($b, '/jobs/nightly', q{cluster_name || ':' || mode || ':' || granted}),
	'a:exclusive:true,b:exclusive:false',
	"B sees A's holder first in the queue, itself waiting");
ok(!bg_done($hb, 'b_got_it'), 'B is still waiting');

my $t0 = time();
$ha->query_safe(q{SELECT zk_unlock('/jobs/nightly')});
my ($out) = bg_finish($hb, 'b_got_it');
my $handoff_ms = 1000 * (time() - $t0);
like($out, qr/\bt\b/, 'B gets the lock once A releases it');
note(sprintf("release-to-acquire handoff across servers: %.1f ms", $handoff_ms));
figure(handoff_ms => sprintf('%.1f', $handoff_ms));
cmp_ok($handoff_ms, '<', 2000, 'the handoff takes well under a second or two');

# --- pg_terminate_backend of the holder frees the lock at once
my $holder_pid = $hb->query_safe(q{SELECT pg_backend_pid()});
bg_begin($ha, q{SELECT zk_lock('/jobs/nightly') > 0 AS got}, 'a_got_it');
ok(wait_queue_len($a, '/jobs/nightly', 2, 10, "A's node in the queue"),
	'A waits for B');
$t0 = time();
$b->safe_psql('postgres', "SELECT pg_terminate_backend($holder_pid)");
($out) = bg_finish($ha, 'a_got_it');
my $terminate_ms = 1000 * (time() - $t0);
like($out, qr/\bt\b/, 'A gets the lock when B\'s holder is terminated');
note(sprintf("terminate-to-acquire handoff: %.1f ms (session timeout 10 s)",
		$terminate_ms));
figure(terminate_ms => sprintf('%.1f', $terminate_ms));
cmp_ok($terminate_ms, '<', 3000,
	'well under the session timeout: the session was closed at exit');
$hb->quit;
$ha->query_safe(q{SELECT zk_unlock('/jobs/nightly')});

# --- SIGKILL of the holder: the lock goes when the session expires
my $hk = $b->background_psql('postgres');
$hk->query_safe(q{SET zklock.session_timeout = '3s'});
$hk->query_safe(q{SELECT zk_lock('/jobs/killed')});
is($hk->query_safe(q{SELECT timeout_ms FROM zk_session()}),
	'3000', 'the holder negotiated a 3 s session');
my $killed_pid = $hk->query_safe(q{SELECT pg_backend_pid()});

bg_begin($ha, q{SELECT zk_lock('/jobs/killed') > 0 AS got}, 'a_got_killed');
ok(wait_queue_len($a, '/jobs/killed', 2, 10, "A's node in the queue"),
	'A waits for the holder on B');
$t0 = time();
kill 'KILL', $killed_pid;
($out) = bg_finish($ha, 'a_got_killed');
my $kill_ms = 1000 * (time() - $t0);
like($out, qr/\bt\b/, 'A gets the lock after the killed holder\'s session expires');
note(sprintf("SIGKILL-to-acquire handoff: %.1f ms (session timeout 3 s)", $kill_ms));
figure(sigkill_ms => sprintf('%.0f', $kill_ms));
cmp_ok($kill_ms, '>', 1500, 'not before the session could expire');
cmp_ok($kill_ms, '<', 9000, 'but soon after the session timeout');
$ha->query_safe(q{SELECT zk_unlock('/jobs/killed')});

# B's postmaster restarts after a backend's SIGKILL; wait for it.
ok( wait_for(sub { $b->safe_psql('postgres', 'SELECT 1') eq '1' }, 30,
		'B to accept connections again'),
	'B is back after the crash restart');
eval { $hk->quit };

# --- nothing is left behind
$ha->quit;
ok(wait_queues_empty($b, [ '/jobs/nightly', '/jobs/killed' ], 10, 'empty queues'),
	'no queue node is left once every holder is gone');

$a->stop;
$b->stop;
done_testing();
