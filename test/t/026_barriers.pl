# Barriers, double barriers and LeaderLatch participants, on two
# PostgreSQL servers, with the real Curator and kazoo recipes on the same
# nodes.
#
# - Barrier (Curator DistributedBarrier / kazoo Barrier layout): the
#   return values of set and remove; zk_barrier_wait with wait_ms is false
#   while the barrier is up; waiters on both servers (each watching the
#   node, none polling) are released by a zk_barrier_remove from a third
#   backend and by Curator's removeBarrier(); Curator's waitOnBarrier and
#   kazoo's Barrier.wait are released by zk_barrier_remove, and
#   zk_barrier_wait by kazoo's remove; a wait ends with lock_timeout
#   (55P03), statement_timeout and pg_cancel_backend, the backend usable
#   after each; a held lock's path is no barrier: set and remove are
#   refused (22023, naming both kinds).
# - Double barrier (Curator DistributedDoubleBarrier layout): three SQL
#   members on two servers and a Curator member (members = 4) enter
#   together (nobody before the last arrives) and leave together (nobody
#   before the last leaves), with a SQL member last and then with Curator
#   last; zk_locks and zk_cluster_locks show the memberships; a member
#   whose wait_ms runs out leaves no node and is not counted by a later
#   arrival; a member arriving once the round has begun gets 55000; a
#   leave whose wait_ms runs out is false, its node gone; cancel and
#   lock_timeout during enter leave no node; entering twice is 55000,
#   leaving without entering a WARNING and false; a "ready" node of a round
#   that still has a participant makes enter fail with 55000 without
#   leaving a node, one whose round has nobody left (another client made
#   it, or its members could not leave) is cleared by the next arrival;
#   zk_unlock_all keeps a membership and DISCARD ALL ends it as a leave
#   would (the round's "ready" goes with its last member); 30 rounds of
#   three members in a loop on one path all succeed, every round's enters
#   and leaves overlapping as a double barrier's must; a member that exits
#   has left at once, a SIGKILLed one once its session has expired (and
#   not before).
# - zklock.exclusive_node_style = 'latch': a SQL backend and a Curator
#   LeaderLatch elect one leader, whoever came first (both ways; the SQL
#   leader hands over by zk_unlock and by exiting, Curator's by close());
#   zk_lock_queue shows both -latch- nodes; shared locks are 22023.
# - Bad input: NULL arguments (the functions are strict: NULL, nothing
#   done, no node made), a bad path, members < 1 and a negative wait_ms
#   (22023), the backend usable after each and nothing left.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(max min);
use Time::HiRes qw(time usleep);
use ZkTest;

if (my $why = curator_missing() // kazoo_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $conf = "zklock.session_timeout = '3s'\nmax_connections = 30\n";
my $na = pg_with_zklock('a', $zk, $conf);
# B recovers from the SIGKILL of a member (the last section) by a crash
# restart
my $nb = pg_with_zklock('b', $zk, $conf . "restart_after_crash = on\n");

# a background session whose errors carry their SQLSTATE
# a kazoo client that only looks at nodes
my $kz = kazoo_client('kazoo_inspect', $zk, '/zklock', 10);
like($kz->{ready}, qr/^ready /, 'the kazoo client is connected');

# the children of a znode, sorted, comma-separated; undef if it does not
# exist
sub kids
{
	my ($znode) = @_;
	my $r = client_ask($kz, "path $znode");
	die "kazoo inspector: " . ($r // 'no answer') unless ($r // '') eq "path $znode";
	$r = client_ask($kz, 'nodes') // 'no answer';
	return undef if $r =~ /^error NoNodeError/;
	die "kazoo inspector: $r" unless $r =~ s/^nodes ?//;
	return $r;
}

# the participant nodes of a double barrier (its children but "ready")
sub participants
{
	my ($znode) = @_;
	my $k = kids($znode) // '';
	return grep { $_ ne '' && $_ ne 'ready' } split /,/, $k;
}

# how many sessions watch a znode (wchp: data watches, which an exists on
# an existing node sets)
sub watchers
{
	my ($znode) = @_;
	return zk_watches($zk)->{$znode} // 0;
}

sub ms_since { return sprintf('%.0f', 1000 * (time() - $_[0])); }

my ($out, $err, $t0);

# =====================================================================
# Bad input
# =====================================================================
my $s1 = verbose_session($na);
($out, $err) = bg_query($s1,
	q{SELECT zk_barrier_set(NULL) IS NULL, zk_barrier_remove(NULL) IS NULL,
	         zk_barrier_wait(NULL) IS NULL, zk_barrier_wait(NULL, 100) IS NULL,
	         zk_barrier_wait('/bn/w', NULL) IS NULL});
is("$out|$err", 't|t|t|t|t|',
	'barrier functions with a NULL argument return NULL (strict), without a message');
($out, $err) = bg_query($s1,
	q{SELECT zk_double_barrier_enter(NULL, 2) IS NULL,
	         zk_double_barrier_enter('/bn/d', NULL) IS NULL,
	         zk_double_barrier_enter('/bn/d', 2, NULL) IS NULL,
	         zk_double_barrier_enter(NULL, 1, 0) IS NULL,
	         zk_double_barrier_leave(NULL) IS NULL,
	         zk_double_barrier_leave('/bn/d', NULL) IS NULL});
is("$out|$err", 't|t|t|t|t|t|',
	'double barrier functions with a NULL argument return NULL, without a WARNING');
is(kids('/zklock/bn'), undef, 'and no node was made');
is($s1->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'no membership either');

for my $call (
	q{zk_barrier_set('nosl')},
	q{zk_barrier_remove('/bn//x')},
	q{zk_barrier_wait('/bn/x/', 100)},
	q{zk_double_barrier_enter('', 2)},
	q{zk_double_barrier_leave('/bn/../x')})
{
	($out, $err) = bg_query($s1, "SELECT $call");
	error_is($err, '22023', qr/invalid ZooKeeper lock path/, "$call: 22023");
	is($s1->query_safe('SELECT 1'), '1', 'the backend is usable after it');
}
for my $m (0, -1)
{
	($out, $err) = bg_query($s1, "SELECT zk_double_barrier_enter('/bn/d', $m, 100)");
	error_is($err, '22023', qr/members must be at least 1, not $m/,
		"members = $m: 22023");
	is($s1->query_safe('SELECT 1'), '1', 'the backend is usable after it');
}
for my $call (
	q{zk_barrier_wait('/bn/w', -1)},
	q{zk_double_barrier_enter('/bn/d', 2, -5)},
	q{zk_double_barrier_leave('/bn/d', -1)})
{
	($out, $err) = bg_query($s1, "SELECT $call");
	error_is($err, '22023', qr/wait_ms must not be negative/, "$call: 22023");
	is($s1->query_safe('SELECT 1'), '1', 'the backend is usable after it');
}
is(kids('/zklock/bn'), undef, 'no node was made by the refused calls');
is($s1->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'and no membership');

# =====================================================================
# Barrier
# =====================================================================
is($s1->query_safe(q{SELECT zk_barrier_set('/b/x')}), 't', 'zk_barrier_set raises the barrier: true');
is(kids('/zklock/b/x'), '', 'the barrier is the node <root><path>, without children');
is($nb->safe_psql('postgres', q{SELECT zk_barrier_set('/b/x')}), 'f',
	'raising it again (other server): false');
is($nb->safe_psql('postgres', q{SELECT zk_barrier_wait('/b/nothing')}), 't',
	'waiting on a barrier that is not up: true at once');
$t0 = time();
is($s1->query_safe(q{SELECT zk_barrier_wait('/b/x', 300)}), 'f',
	'zk_barrier_wait(path, 300) while it is up: false');
my $ms = ms_since($t0);
cmp_ok($ms, '>=', 290, "after the 300 ms ($ms ms)");

# waiters on both servers, released by zk_barrier_remove from a third backend
my $wa = verbose_session($na);
my $wb = verbose_session($nb);
# (a timed-out wait may leave its watch behind: count the new ones)
my $w0 = watchers('/zklock/b/x');
bg_begin($wa, q{SELECT zk_barrier_wait('/b/x')}, 'bw_a');
bg_begin($wb, q{SELECT zk_barrier_wait('/b/x', 20000)}, 'bw_b');
ok(wait_for(sub { watchers('/zklock/b/x') == $w0 + 2 }, 10, 'watches on /zklock/b/x'),
	'both waiters watch the barrier node');
usleep(200_000);
ok(!bg_done($wa, 'bw_a') && !bg_done($wb, 'bw_b'), 'they wait while it is up');
$t0 = time();
is($s1->query_safe(q{SELECT zk_barrier_remove('/b/x')}), 't',
	'zk_barrier_remove from a third backend: true');
($out) = bg_finish($wa, 'bw_a');
is($out, 't', 'the waiter on A is released: true');
($out) = bg_finish($wb, 'bw_b');
is($out, 't', 'the waiter on B (wait_ms 20000) is released: true');
note('zk_barrier_remove -> both zk_barrier_wait returned: ' . ms_since($t0) . ' ms');
figure(remove_sql_waiters_ms => ms_since($t0));
is($na->safe_psql('postgres', q{SELECT zk_barrier_remove('/b/x')}), 'f',
	'removing it again: false');
is(kids('/zklock/b/x'), undef, 'the barrier node is gone');
# a released waiter's last exists (which found no node) leaves a watch for
# the node's creation, as Curator's and kazoo's waits do
note('watches left on the removed barrier node: ' . watchers('/zklock/b/x'));

# Curator's removeBarrier releases zklock's waiters
my $cu = curator_client('curator', $zk, '/zklock/b/c', 10000);
like($cu->{ready}, qr/^ready /, 'the Curator client is connected');
is($s1->query_safe(q{SELECT zk_barrier_set('/b/c')}), 't', 'zklock raises /b/c');
$w0 = watchers('/zklock/b/c');
bg_begin($wa, q{SELECT zk_barrier_wait('/b/c')}, 'bc_a');
bg_begin($wb, q{SELECT zk_barrier_wait('/b/c')}, 'bc_b');
ok(wait_for(sub { watchers('/zklock/b/c') == $w0 + 2 }, 10, 'watches on /zklock/b/c'),
	'two zklock waiters, on A and B');
$t0 = time();
is(client_ask($cu, 'barrierremove'), 'barrier removed', "Curator's removeBarrier()");
($out) = bg_finish($wa, 'bc_a');
my ($out2) = bg_finish($wb, 'bc_b');
is("$out $out2", 't t', 'releases the zklock waiters on both servers');
note('Curator removeBarrier -> both zk_barrier_wait returned: ' . ms_since($t0) . ' ms');

# Curator's waitOnBarrier is released by zk_barrier_remove
is(client_ask($cu, 'barrierset'), 'barrier set', "Curator's setBarrier()");
is($s1->query_safe(q{SELECT zk_barrier_set('/b/c')}), 'f',
	'zklock sees the barrier Curator raised: set is false');
is($s1->query_safe(q{SELECT zk_barrier_wait('/b/c', 100)}), 'f',
	'and zk_barrier_wait(path, 100) is false');
$w0 = watchers('/zklock/b/c');
client_send($cu, 'barrierwait');
is(client_next($cu), 'acquiring barrier', "Curator's waitOnBarrier() waits");
ok(wait_for(sub { watchers('/zklock/b/c') == $w0 + 1 }, 10, 'Curator watch'),
	'Curator watches the node');
usleep(200_000);
is(client_poll($cu), undef, 'Curator is still waiting');
$t0 = time();
is($wb->query_safe(q{SELECT zk_barrier_remove('/b/c')}), 't', 'zk_barrier_remove (B)');
is(client_next($cu, 10), 'barrier down', "releases Curator's waitOnBarrier");
note('zk_barrier_remove -> Curator waitOnBarrier returned: ' . ms_since($t0) . ' ms');
figure(remove_curator_ms => ms_since($t0));
is(client_ask($cu, 'barrierwait 100'), 'barrier down', 'Curator: the barrier is down');

# kazoo's Barrier both ways
my $kb = kazoo_client('kazoo_barrier', $zk, '/zklock/b/k', 10);
like($kb->{ready}, qr/^ready /, 'the kazoo barrier client is connected');
is(client_ask($kb, 'barriercreate'), 'barrier created', "kazoo's Barrier.create()");
is($s1->query_safe(q{SELECT zk_barrier_set('/b/k')}), 'f', 'zklock sees it up');
my $ww = verbose_session($na);
$w0 = watchers('/zklock/b/k');
bg_begin($ww, q{SELECT zk_barrier_wait('/b/k')}, 'bk');
ok(wait_for(sub { watchers('/zklock/b/k') == $w0 + 1 }, 10, 'watch on /zklock/b/k'),
	'zk_barrier_wait waits');
$t0 = time();
is(client_ask($kb, 'barrierremove'), 'barrier removed', "kazoo's Barrier.remove()");
($out) = bg_finish($ww, 'bk');
is($out, 't', 'releases zk_barrier_wait');
note('kazoo remove -> zk_barrier_wait returned: ' . ms_since($t0) . ' ms');
is($s1->query_safe(q{SELECT zk_barrier_set('/b/k')}), 't', 'zklock raises it again');
$w0 = watchers('/zklock/b/k');
client_send($kb, 'barrierwait 20000');
is(client_next($kb), 'acquiring barrier', "kazoo's Barrier.wait() waits");
ok(wait_for(sub { watchers('/zklock/b/k') == $w0 + 1 }, 10, 'kazoo watch'), 'kazoo watches the node');
usleep(200_000);
is(client_poll($kb), undef, 'kazoo is still waiting');
$t0 = time();
is($s1->query_safe(q{SELECT zk_barrier_remove('/b/k')}), 't', 'zk_barrier_remove');
is(client_next($kb, 10), 'barrier down', "releases kazoo's wait");
note('zk_barrier_remove -> kazoo Barrier.wait returned: ' . ms_since($t0) . ' ms');
figure(remove_kazoo_ms => ms_since($t0));
is(client_ask($kb, 'barrierremove'), 'barrier not up', 'kazoo: nothing left to remove');

# ends of a wait: lock_timeout, statement_timeout, cancel
is($s1->query_safe(q{SELECT zk_barrier_set('/b/t')}), 't', 'a barrier /b/t');
my $pw = $ww->query_safe('SELECT pg_backend_pid()');
$w0 = watchers('/zklock/b/t');
bg_begin($ww, q{SELECT zk_barrier_wait('/b/t')}, 'bt');
ok(wait_for(sub { watchers('/zklock/b/t') == $w0 + 1 }, 10, 'watch on /zklock/b/t'), 'a waiter');
$na->safe_psql('postgres', "SELECT pg_cancel_backend($pw)");
($out, $err) = bg_finish($ww, 'bt');
error_is($err, '57014', qr/canceling statement due to user request/,
	'pg_cancel_backend ends the wait');
is($ww->query_safe('SELECT 1'), '1', 'the backend is usable after the cancel');
$t0 = time();
($out, $err) = bg_query($ww, q{SET lock_timeout = '300ms'; SELECT zk_barrier_wait('/b/t')});
$ms = ms_since($t0);
error_is($err, '55P03',
	qr/canceling statement due to lock timeout\nDETAIL:  Waiting for ZooKeeper barrier "\/b\/t"\./,
	"lock_timeout ends a wait without wait_ms: 55P03 ($ms ms)");
cmp_ok($ms, '>=', 290, 'not before lock_timeout');
is($ww->query_safe('RESET lock_timeout; SELECT 1'), '1', 'the backend is usable after it');
($out, $err) = bg_query($ww, q{SET statement_timeout = '300ms'; SELECT zk_barrier_wait('/b/t')});
error_is($err, '57014', qr/canceling statement due to statement timeout/,
	'statement_timeout ends the wait');
is($ww->query_safe('RESET statement_timeout; SELECT 1'), '1', 'the backend is usable after it');
is(kids('/zklock/b/t'), '', 'the barrier is still up, without children');

# a lock's node is no barrier
$s1->query_safe(q{SELECT zk_lock('/b/l')});
($out, $err) = bg_query($ww, q{SELECT zk_barrier_set('/b/l')});
error_is($err, '22023', qr/ZooKeeper path "\/b\/l" is used by a lock, not a barrier/,
	"raising a barrier on a held lock's path is refused: 22023");
($out, $err) = bg_query($ww, q{SELECT zk_barrier_remove('/b/l')});
error_is($err, '22023', qr/ZooKeeper path "\/b\/l" is used by a lock, not a barrier/,
	"a lock's node cannot be removed as a barrier: 22023");
$s1->query_safe(q{SELECT zk_unlock('/b/l')});
is($s1->query_safe(q{SELECT zk_barrier_remove('/b/t')}), 't', '/b/t removed');

# =====================================================================
# LeaderLatch
# =====================================================================
my $latch_re = qr/^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-[0-9]{10}$/;
my $l1 = verbose_session($na);
$l1->query_safe(q{SET zklock.exclusive_node_style = 'latch'});
cmp_ok($l1->query_safe(q{SELECT zk_lock('/latch/x')}), '>', 0, 'SQL first: zk_lock in latch style');
is(client_ask($cu, 'path /zklock/latch/x'), 'path /zklock/latch/x', 'Curator on the same node');
is(client_ask($cu, 'latch curator-latch'), 'latch started', 'a Curator LeaderLatch starts');
ok(wait_queue_len($na, '/latch/x', 2, 10, 'latch queued'), "Curator's participant node is there");
my $q = $na->safe_psql('postgres',
	q{SELECT string_agg(format('%s|%s|%s|%s|%s', position, znode, mode, granted,
	                           coalesce(cluster_name, data)), E'\n' ORDER BY position)
	  FROM zk_lock_queue('/latch/x')});
my @q = split /\n/, $q;
ok(@q == 2
	  && $q[0] =~ /^1\|([^|]+)\|exclusive\|t\|a$/ && $1 =~ $latch_re
	  && $q[1] =~ /^2\|([^|]+)\|exclusive\|f\|curator-latch$/ && $1 =~ $latch_re,
	'zk_lock_queue: the SQL backend leads (1, granted), the Curator latch (data: its id) follows; both -latch- nodes')
  or diag($q);
is(client_ask($cu, 'leader'), 'leader false', 'Curator: hasLeadership() is false');
is(client_ask($cu, 'awaitleader 300'), 'timeout leader', 'and await(300 ms) times out');
$t0 = time();
is($l1->query_safe(q{SELECT zk_unlock('/latch/x')}), 't', 'the SQL leader releases');
is(client_ask($cu, 'awaitleader 10000'), 'leader true', 'Curator becomes the leader');
note('zk_unlock -> Curator LeaderLatch leads: ' . ms_since($t0) . ' ms');

# Curator first
is($l1->query_safe(q{SELECT zk_try_lock('/latch/x')}), 'f', 'Curator first: zk_try_lock is false');
is($l1->query_safe(q{SELECT zk_try_lock('/latch/x', 300)}), 'f', 'also after 300 ms');
queue_is($na, '/latch/x', '1:exclusive:t:curator-latch', 'the tries left nothing behind');
bg_begin($l1, q{SELECT zk_lock('/latch/x') > 0}, 'll');
ok(wait_queue_len($na, '/latch/x', 2, 10, 'zk_lock queued'), 'zk_lock waits behind the Curator leader');
usleep(200_000);
ok(!bg_done($l1, 'll'), 'still waiting');
is(client_ask($cu, 'leader'), 'leader true', 'Curator is still the leader');
$t0 = time();
is(client_ask($cu, 'latchclose'), 'latch closed', "Curator's latch closes");
($out) = bg_finish($l1, 'll');
is($out, 't', 'zk_lock gets it: the SQL backend leads');
note('Curator latch close -> zk_lock returned: ' . ms_since($t0) . ' ms');
queue_is($na, '/latch/x', '1:exclusive:t:a', 'the queue: the SQL leader alone');

# the SQL leader exits
is(client_ask($cu, 'latch curator-latch'), 'latch started', 'Curator joins again');
ok(wait_queue_len($na, '/latch/x', 2, 10, 'latch queued'), 'behind the SQL leader');
is(client_ask($cu, 'leader'), 'leader false', 'not the leader');
$t0 = time();
$l1->quit;
is(client_ask($cu, 'awaitleader 10000'), 'leader true', 'the SQL leader exits: Curator leads');
note('SQL leader exit -> Curator LeaderLatch leads: ' . ms_since($t0) . ' ms');
figure(leader_exit_curator_ms => ms_since($t0));
is(client_ask($cu, 'latchclose'), 'latch closed', 'Curator closes');
ok(wait_queue_len($na, '/latch/x', 0, 10, 'empty'), 'nothing left on /latch/x');

# no shared locks in latch style
$l1 = verbose_session($na);
$l1->query_safe(q{SET zklock.exclusive_node_style = 'latch'});
for my $call (q{zk_rlock('/latch/r')}, q{zk_try_rlock('/latch/r', 100)})
{
	($out, $err) = bg_query($l1, "SELECT $call");
	error_is($err, '22023',
		qr/shared ZooKeeper locks are not available with zklock.exclusive_node_style = 'latch'/,
		"$call in latch style: 22023");
}
is($l1->query_safe('SELECT count(*) FROM zk_locks'), '0', 'the backend holds nothing and is usable');
is(kids('/zklock/latch/r'), undef, 'no node was made');

# =====================================================================
# Double barrier
# =====================================================================
my $a1 = $s1;
my $a2 = $ww;
my $b1 = $wb;

# --- three SQL members on two servers and a Curator member (members = 4)
is(client_ask($cu, 'path /zklock/db/e'), 'path /zklock/db/e', 'Curator on /zklock/db/e');
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/e', 4)}, 'e_a1');
bg_begin($b1, q{SELECT zk_double_barrier_enter('/db/e', 4)}, 'e_b1');
client_send($cu, 'dbenter 4');
is(client_next($cu), 'acquiring dbenter', 'Curator enters');
ok(wait_for(sub { participants('/zklock/db/e') == 3 }, 10, 'three participants'),
	'three participant nodes (A, B, Curator)');
like(join(',', participants('/zklock/db/e')),
	qr/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(,[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}){2}$/,
	'named by canonical UUIDs');
usleep(300_000);
ok(!bg_done($a1, 'e_a1') && !bg_done($b1, 'e_b1'), 'the SQL members wait for the fourth');
is(client_poll($cu), undef, 'so does Curator');
is(kids('/zklock/db/e') =~ /\bready\b/ ? 'open' : 'closed', 'closed', 'no ready node yet');
$t0 = time();
is($a2->query_safe(q{SELECT zk_double_barrier_enter('/db/e', 4)}), 't',
	'the fourth member (A) enters: true at once');
($out) = bg_finish($a1, 'e_a1');
($out2) = bg_finish($b1, 'e_b1');
is("$out $out2", 't t', 'the waiting SQL members on A and B enter');
is(client_next($cu, 10), 'entered', 'and Curator enters');
note('last arrival -> all four entered: ' . ms_since($t0) . ' ms');
my @members = participants('/zklock/db/e');
is(scalar(@members), 4, 'four participant nodes');
like(kids('/zklock/db/e'), qr/\bready\b/, 'and ready');
is($a1->query_safe(q{SELECT format('%s|%s|%s|%s', path, mode, scope, hold_count) FROM zk_locks}),
	'/db/e|member|session|1', "zk_locks shows the membership in a member's session");
my $a2node = $a2->query_safe(q{SELECT znode FROM zk_locks WHERE mode = 'member'});
$a2node =~ s{.*/}{};
ok((grep { $_ eq $a2node } @members), "its znode is one of the participants");
is( $nb->safe_psql('postgres',
		q{SELECT format('%s|%s|%s|%s', count(*), string_agg(DISTINCT kind, ','),
		                string_agg(DISTINCT mode, ','),
		                string_agg(coalesce(cluster_name, '-'), ',' ORDER BY coalesce(cluster_name, '-')))
		  FROM zk_cluster_locks WHERE path = '/db/e'}),
	'4|double barrier|member|-,a,a,b',
	'zk_cluster_locks (from B): four participants, kind double barrier, mode member (Curator without a zklock owner)'
);
is($nb->safe_psql('postgres',
		q{SELECT string_agg(znode, ',' ORDER BY znode) FROM zk_cluster_locks WHERE path = '/db/e'}),
	join(',', sort @members), 'one row per participant node');

# leave together: every member but the last leaves
bg_begin($a1, q{SELECT zk_double_barrier_leave('/db/e')}, 'l_a1');
client_send($cu, 'dbleave');
is(client_next($cu), 'acquiring dbleave', 'Curator leaves');
bg_begin($b1, q{SELECT zk_double_barrier_leave('/db/e')}, 'l_b1');
# the lowest participant waits with its node, the others delete theirs
my $lowest = (sort @members)[0];
my $expect = join(',', sort { $a cmp $b } keys %{ { $lowest => 1, $a2node => 1 } });
ok(wait_for(sub { join(',', participants('/zklock/db/e')) eq $expect }, 10, 'leavers gone'),
	'the three leavers are out but the lowest (it waits for the last)');
usleep(300_000);
ok(!bg_done($a1, 'l_a1') && !bg_done($b1, 'l_b1'), 'the SQL leavers wait for the last member');
is(client_poll($cu), undef, 'so does Curator');
$t0 = time();
is($a2->query_safe(q{SELECT zk_double_barrier_leave('/db/e')}), 't', 'the last member leaves: true');
($out) = bg_finish($a1, 'l_a1');
($out2) = bg_finish($b1, 'l_b1');
is("$out $out2", 't t', 'the SQL leavers on A and B return true');
is(client_next($cu, 10), 'left', 'Curator has left');
note('last departure -> all four left: ' . ms_since($t0) . ' ms');
ok(wait_for(sub { (kids('/zklock/db/e') // '') eq '' }, 10, 'empty'),
	'no participant and no ready node is left');

# the same four again, Curator arriving last (its create of "ready" opens
# the barrier for zklock's members) and leaving last
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/e', 4)}, 'e2_a1');
bg_begin($a2, q{SELECT zk_double_barrier_enter('/db/e', 4)}, 'e2_a2');
bg_begin($b1, q{SELECT zk_double_barrier_enter('/db/e', 4)}, 'e2_b1');
ok(wait_for(sub { participants('/zklock/db/e') == 3 }, 10, 'three participants'),
	'round 2: three SQL members wait');
usleep(200_000);
ok(!bg_done($a1, 'e2_a1') && !bg_done($a2, 'e2_a2') && !bg_done($b1, 'e2_b1'),
	'none of them has entered');
$t0 = time();
is(client_ask($cu, 'dbenter 4 10000'), 'entered', 'Curator arrives last and enters');
($out) = bg_finish($a1, 'e2_a1');
($out2) = bg_finish($a2, 'e2_a2');
my ($out3) = bg_finish($b1, 'e2_b1');
is("$out $out2 $out3", 't t t', "Curator's ready node lets the SQL members in");
note("Curator's arrival (last) -> the SQL members entered: " . ms_since($t0) . ' ms');
bg_begin($a1, q{SELECT zk_double_barrier_leave('/db/e')}, 'l2_a1');
bg_begin($a2, q{SELECT zk_double_barrier_leave('/db/e')}, 'l2_a2');
bg_begin($b1, q{SELECT zk_double_barrier_leave('/db/e')}, 'l2_b1');
usleep(500_000);
ok(!bg_done($a1, 'l2_a1') && !bg_done($a2, 'l2_a2') && !bg_done($b1, 'l2_b1'),
	'the SQL members wait for Curator to leave');
is(client_ask($cu, 'dbleave 10000'), 'left', 'Curator leaves last');
($out) = bg_finish($a1, 'l2_a1');
($out2) = bg_finish($a2, 'l2_a2');
($out3) = bg_finish($b1, 'l2_b1');
is("$out $out2 $out3", 't t t', 'and the SQL members have left');
ok(wait_for(sub { (kids('/zklock/db/e') // '') eq '' }, 10, 'empty'),
	'nothing left on /db/e');
is($a1->query_safe(q{SELECT count(*) FROM zk_locks}) . $a2->query_safe(q{SELECT count(*) FROM zk_locks}),
	'00', 'the memberships are gone from zk_locks');

# --- a member whose wait runs out leaves no node and is not counted later
$t0 = time();
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/t', 3, 300)}), 'f',
	'enter(path, 3, 300) alone: false');
$ms = ms_since($t0);
cmp_ok($ms, '>=', 290, "after the 300 ms ($ms ms)");
is(scalar(participants('/zklock/db/t')), 0, 'it leaves no node');
is($a1->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'and is no member');
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/n', 2, 300)}), 'f',
	'members = 2: A alone times out');
is($b1->query_safe(q{SELECT zk_double_barrier_enter('/db/n', 2, 300)}), 'f',
	'B arriving alone afterwards is not let through (A was not counted)');
is(scalar(participants('/zklock/db/n')), 0, 'neither left a node');
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/n', 2, 10000)}, 'n_a');
ok(wait_for(sub { participants('/zklock/db/n') == 1 }, 10, 'A waits'), 'A waits again');
is($b1->query_safe(q{SELECT zk_double_barrier_enter('/db/n', 2, 10000)}), 't',
	'A and B together: B enters');
($out) = bg_finish($a1, 'n_a');
is($out, 't', 'and A enters');
# the round has begun: a third member is too late
($out, $err) = bg_query($a2, q{SELECT zk_double_barrier_enter('/db/n', 2, 1000)});
error_is($err, '55000', qr/ZooKeeper double barrier "\/db\/n" is open already/,
	'a member arriving once the round has begun: 55000');
is(scalar(participants('/zklock/db/n')), 2, 'it left no node (two participants)');
is($a2->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'and is no member');
# a leave whose wait runs out: false, and our node is gone
$t0 = time();
is($a1->query_safe(q{SELECT zk_double_barrier_leave('/db/n', 300)}), 'f',
	'A leaves with wait_ms 300 while B stays: false');
$ms = ms_since($t0);
cmp_ok($ms, '>=', 290, "after the 300 ms ($ms ms)");
is(scalar(participants('/zklock/db/n')), 1, "A's node is gone, B's remains");
is($a1->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'A is no member');
is($b1->query_safe(q{SELECT zk_double_barrier_leave('/db/n', 10000)}), 't', 'B leaves: true');
ok(wait_for(sub { (kids('/zklock/db/n') // '') eq '' }, 10, 'empty'), 'nothing left on /db/n');

# an exited member has left (its session is closed at exit: at once, not
# after the session timeout, 20 s for this member)
my $ex = verbose_session($na);
$ex->query_safe(q{SET zklock.session_timeout = '20s'});
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/x', 2)}, 'x_a');
ok(wait_for(sub { participants('/zklock/db/x') == 1 }, 10, 'A waits'), 'A waits to enter /db/x');
is($ex->query_safe(q{SELECT zk_double_barrier_enter('/db/x', 2)}), 't', 'a second member enters');
($out) = bg_finish($a1, 'x_a');
is($out, 't', 'A enters');
bg_begin($a1, q{SELECT zk_double_barrier_leave('/db/x')}, 'x_al');
usleep(300_000);
ok(!bg_done($a1, 'x_al'), "A's leave waits for the other member");
$t0 = time();
$ex->quit;
($out) = bg_finish($a1, 'x_al');
is($out, 't', 'the other member exits: A has left');
$ms = ms_since($t0);
note("member exit -> the other's leave returned: $ms ms");
figure(member_exit_leave_ms => $ms);
cmp_ok($ms, '<', 10000, 'well before its session could expire: the exit closed it');
ok(wait_for(sub { (kids('/zklock/db/x') // '') eq '' }, 10, 'empty'), 'nothing left on /db/x');

# --- cancel and lock_timeout during enter
my $pa1 = $a1->query_safe('SELECT pg_backend_pid()');
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/c', 3)}, 'c_a');
ok(wait_for(sub { participants('/zklock/db/c') == 1 }, 10, 'entering'), 'a member waits to enter');
$na->safe_psql('postgres', "SELECT pg_cancel_backend($pa1)");
($out, $err) = bg_finish($a1, 'c_a');
error_is($err, '57014', qr/canceling statement due to user request/, 'pg_cancel_backend ends the enter');
ok(wait_for(sub { participants('/zklock/db/c') == 0 }, 10, 'node gone'),
	'and its participant node goes');
is($a1->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'it is no member; the backend is usable');
$t0 = time();
($out, $err) = bg_query($a1, q{SET lock_timeout = '300ms'; SELECT zk_double_barrier_enter('/db/c', 3)});
$ms = ms_since($t0);
error_is($err, '55P03',
	qr/canceling statement due to lock timeout\nDETAIL:  Waiting to enter ZooKeeper double barrier "\/db\/c"\./,
	"lock_timeout ends the enter: 55P03 ($ms ms)");
is($a1->query_safe(q{RESET lock_timeout; SELECT count(*) FROM zk_locks}), '0', 'no member; usable');
ok(wait_for(sub { participants('/zklock/db/c') == 0 }, 10, 'node gone'), 'no node left');
is($b1->query_safe(q{SELECT zk_double_barrier_enter('/db/c', 2, 300)}), 'f',
	'a later arrival (members = 2) does not count the cancelled or timed-out ones');

# --- entering twice, leaving without entering, zk_unlock_all, DISCARD ALL
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/1', 1)}), 't',
	'members = 1: enter opens at once');
($out, $err) = bg_query($a1, q{SELECT zk_double_barrier_enter('/db/1', 1)});
error_is($err, '55000',
	qr/this backend is a member of ZooKeeper double barrier "\/db\/1" already/,
	'entering twice: 55000');
is(scalar(participants('/zklock/db/1')), 1, 'still one participant node');
is($a1->query_safe(q{SELECT zk_double_barrier_leave('/db/1')}), 't', 'leave: true');
ok(wait_for(sub { (kids('/zklock/db/1') // '') eq '' }, 10, 'empty'), 'nothing left on /db/1');
($out, $err) = bg_query($a1, q{SELECT zk_double_barrier_leave('/db/1')});
warning_is($err, '01000', qr/you are not a member of ZooKeeper double barrier "\/db\/1"/,
	'leaving without having entered: WARNING');
is($out, 'f', 'and false');
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/1', 1)}), 't', 'entered again');
$a1->query_safe(q{SELECT zk_unlock_all()});
is($a1->query_safe(q{SELECT mode FROM zk_locks}), 'member', 'zk_unlock_all keeps the membership');
is(scalar(participants('/zklock/db/1')), 1, 'and its node');
$a1->query_safe('DISCARD ALL');
is($a1->query_safe('SELECT count(*) FROM zk_locks'), '0', 'DISCARD ALL leaves the double barrier');
ok(wait_for(sub { participants('/zklock/db/1') == 0 }, 10, 'node gone'), 'its node goes');
# DISCARD ALL leaves as a leave would: the round's last member takes its
# "ready" with it
is(kids('/zklock/db/1') // '', '', 'DISCARD ALL of its only member takes the round\'s ready too');
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/1', 1)}), 't',
	'the next arrival enters');
is($a1->query_safe(q{SELECT zk_double_barrier_leave('/db/1')}), 't', 'and leaves');
ok(wait_for(sub { (kids('/zklock/db/1') // '') eq '' }, 10, 'empty'), 'nothing left on /db/1');

# --- a "ready" node left from an unfinished round
# with no participant at all: cleared by the next arrival, which then waits
# for its second member as usual
kazoo_run($zk, "c.create('/zklock/db/r/ready', makepath=True)");
($out, $err) = bg_query($a1, q{SELECT zk_double_barrier_enter('/db/r', 2, 1000)});
is($out, 'f', 'a ready node with no participant: cleared, and the lone member times out');
is($err, '', 'without an error');
is(kids('/zklock/db/r') // '', '', 'neither the stale ready nor a node of its own is left');
# with a participant of that round still there (older than ready): the round
# is under way, a member cannot join it: 55000, nothing of its own left
my $stale = '0f0f0f0f-1111-4222-8333-444455556666';
kazoo_run($zk, "c.create('/zklock/db/r/$stale', makepath=True)");
kazoo_run($zk, "c.create('/zklock/db/r/ready')");
($out, $err) = bg_query($a1, q{SELECT zk_double_barrier_enter('/db/r', 2, 1000)});
error_is($err, '55000',
	qr/ZooKeeper double barrier "\/db\/r" is open already\nDETAIL:  Its "ready" node exists, and members of that round are still inside/,
	'a ready node with a participant of its round there: enter is 55000');
is(kids('/zklock/db/r'), "$stale,ready", 'and leaves no node of its own');
($out, $err) = bg_query($b1, q{SELECT zk_double_barrier_enter('/db/r', 2)});
error_is($err, '55000', qr/ZooKeeper double barrier "\/db\/r" is open already/,
	'likewise without wait_ms (B)');
is(kids('/zklock/db/r'), "$stale,ready", 'no node of its own left');
is($a1->query_safe(q{SELECT count(*) FROM zk_locks}) . $b1->query_safe(q{SELECT count(*) FROM zk_locks}),
	'00', 'neither is a member');
is($na->safe_psql('postgres', q{SELECT count(*) FROM zk_cluster_locks WHERE path LIKE '/db/r%'}), '0',
	'zk_cluster_locks shows no participant there (the node is not ephemeral)');
kazoo_run($zk, "c.delete('/zklock/db/r/$stale')");
is($a1->query_safe(q{SELECT zk_double_barrier_enter('/db/r', 1)}), 't',
	'once its last participant is gone, the next arrival clears the ready and enters');
is($a1->query_safe(q{SELECT zk_double_barrier_leave('/db/r')}), 't', 'and leaves');

# --- many rounds on one path: two members on A, one on B
for my $node ($na, $nb)
{
	$node->safe_psql('postgres',
		q{CREATE TABLE rounds (member text, i int, enter_start bigint, entered bool,
		    enter_end bigint, leave_start bigint, left_ bool, leave_end bigint)});
}
my $rounds = 30;
my $loop = sub {
	my ($member) = @_;
	return qq{DO \$\$
DECLARE
  t0 bigint; t1 bigint; t2 bigint; t3 bigint; e bool; l bool;
BEGIN
  FOR i IN 1..$rounds LOOP
    t0 := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    e := zk_double_barrier_enter('/db/loop', 3, 20000);
    t1 := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    PERFORM pg_sleep(random() * 0.02);
    t2 := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    l := CASE WHEN e THEN zk_double_barrier_leave('/db/loop', 20000) ELSE false END;
    t3 := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    INSERT INTO rounds VALUES ('$member', i, t0, e, t1, t2, l, t3);
    EXIT WHEN NOT (e AND l);
    PERFORM pg_sleep(random() * 0.02);
  END LOOP;
END
\$\$};
};
$t0 = time();
bg_begin($a1, $loop->('a1'), 'loop_a1');
bg_begin($a2, $loop->('a2'), 'loop_a2');
bg_begin($b1, $loop->('b1'), 'loop_b1');
my @errs;
for ([ $a1, 'loop_a1' ], [ $a2, 'loop_a2' ], [ $b1, 'loop_b1' ])
{
	(undef, $err) = bg_finish(@$_);
	push @errs, $err if $err ne '';
}
my $loop_s = time() - $t0;
is(join('', @errs), '', 'the three loops ran without an error');
my %r;
for my $node ($na, $nb)
{
	for my $row (split /\n/,
		$node->safe_psql('postgres', q{SELECT member, i, enter_start, entered, enter_end,
		                   leave_start, left_, leave_end FROM rounds}))
	{
		my ($m, $i, @v) = split /\|/, $row;
		$r{$i}{$m} = \@v;
	}
}
my ($all_true, $complete, $bad_enter, $bad_leave) = (0, 0, 0, 0);
my ($first, $last);
my ($open_us, $close_us) = (0, 0);
for my $i (1 .. $rounds)
{
	my @m = grep { defined $r{$i}{$_} } qw(a1 a2 b1);
	next unless @m == 3;
	$complete++;
	my @v = map { $r{$i}{$_} } @m;
	$all_true++ if 3 == grep { $_->[1] eq 't' && $_->[4] eq 't' } @v;
	# nobody came out of enter before everybody had gone in, nor out of
	# leave before everybody had started leaving
	my $max_enter_start = max(map { $_->[0] } @v);
	my $min_enter_end = min(map { $_->[2] } @v);
	my $max_leave_start = max(map { $_->[3] } @v);
	my $min_leave_end = min(map { $_->[5] } @v);
	$bad_enter++ if $min_enter_end < $max_enter_start;
	$bad_leave++ if $min_leave_end < $max_leave_start;
	# from the last arrival (departure) until every member was released
	$open_us += max(map { $_->[2] } @v) - $max_enter_start;
	$close_us += max(map { $_->[5] } @v) - $max_leave_start;
	$first = min(grep { defined } $first, map { $_->[0] } @v);
	$last = max(grep { defined } $last, map { $_->[5] } @v);
}
is($complete, $rounds, "all three members ran $rounds rounds");
is($all_true, $rounds, 'every member got true from every enter and leave');
is($bad_enter, 0, 'in no round did a member come out of enter before all three had gone in');
is($bad_leave, 0, 'in no round did a member come out of leave before all three had started leaving');
note(sprintf('%d rounds of 3 members (2 on A, 1 on B, up to 20 ms sleep after enter and after leave): %.2f s, %.1f ms per round',
		$rounds, $loop_s, defined $first ? ($last - $first) / 1000 / $rounds : -1));
note(sprintf('mean per round: last enter call -> all three entered %.1f ms; last leave call -> all three left %.1f ms',
		$open_us / 1000 / ($complete || 1), $close_us / 1000 / ($complete || 1)));
figure(
	rounds => $rounds,
	ms_per_round => sprintf('%.1f', defined $first ? ($last - $first) / 1000 / $rounds : -1),
	last_enter_all_entered_ms => sprintf('%.1f', $open_us / 1000 / ($complete || 1)));
ok(wait_for(sub { (kids('/zklock/db/loop') // '') eq '' }, 10, 'empty'),
	'no participant and no ready node left on /db/loop');

# --- a member SIGKILLed while entered counts as left once its session expired
$b1->quit;
$wb = $b1 = undef;
my $k = verbose_session($nb);
my $pk = $k->query_safe('SELECT pg_backend_pid()');
bg_begin($a1, q{SELECT zk_double_barrier_enter('/db/k', 3)}, 'k_a1');
bg_begin($a2, q{SELECT zk_double_barrier_enter('/db/k', 3)}, 'k_a2');
ok(wait_for(sub { participants('/zklock/db/k') == 2 }, 10, 'two waiting'), 'two members on A wait');
is($k->query_safe(q{SELECT zk_double_barrier_enter('/db/k', 3)}), 't', 'the member on B enters, third');
is($k->query_safe(q{SELECT timeout_ms FROM zk_session()}), '3000', 'the member on B has a 3 s session');
($out) = bg_finish($a1, 'k_a1');
($out2) = bg_finish($a2, 'k_a2');
is("$out $out2", 't t', 'the members on A enter');
$t0 = time();
kill 'KILL', $pk;
bg_begin($a1, q{SELECT zk_double_barrier_leave('/db/k')}, 'kl_a1');
bg_begin($a2, q{SELECT zk_double_barrier_leave('/db/k')}, 'kl_a2');
usleep(1_000_000);
ok(!bg_done($a1, 'kl_a1') && !bg_done($a2, 'kl_a2'),
	"1 s after the SIGKILL the others' leave still waits for the killed member");
($out) = bg_finish($a1, 'kl_a1');
($out2) = bg_finish($a2, 'kl_a2');
my $kill_ms = ms_since($t0);
is("$out $out2", 't t', 'they leave once its session has expired');
note("SIGKILL of a member -> the others' leave returned: $kill_ms ms (session timeout 3 s)");
figure(sigkill_leave_ms => $kill_ms);
cmp_ok($kill_ms, '>', 1500, 'not before its session could expire');
cmp_ok($kill_ms, '<', 15000, 'but soon after');
ok(wait_for(sub { (kids('/zklock/db/k') // '') eq '' }, 10, 'empty'), 'nothing left on /db/k');

# B is back after the crash restart
ok(wait_for(sub { (eval { $nb->safe_psql('postgres', 'SELECT 1') } // '') eq '1' }, 60,
		'B accepting connections'),
	'B is back after the crash restart');
eval { $k->quit };
eval { $wb->quit } if $wb;

# --- nothing left anywhere
ok( wait_for(
		sub { $nb->safe_psql('postgres', 'SELECT count(*) FROM zk_cluster_locks') eq '0' },
		15, 'zk_cluster_locks empty'),
	'zk_cluster_locks is empty at the end');
for my $p ('/zklock/b/x', '/zklock/b/c', '/zklock/b/k', '/zklock/b/t', '/zklock/bn')
{
	is(kids($p), undef, "no node $p");
}

$a1->quit;
$a2->quit;
$wa->quit;
$l1->quit;
client_ask($cu, 'close');
client_ask($kb, 'close');
client_ask($kz, 'close');
$na->stop;
$nb->stop;
done_testing();
