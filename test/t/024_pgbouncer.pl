# DISCARD ALL releases a backend's session holds, and what that means
# behind PgBouncer.
#
# Two PostgreSQL servers, a and b, on one standalone ZooKeeper; every
# check of "is the lock free" is made from b with a try that does not wait
# (wait_ms 0), so a release still on its way would make it fail.
#
# 1. DISCARD ALL, directly on a: it releases every session hold (stacked
#    exclusive locks, a shared lock, a lock set, a semaphore lease) before
#    it returns, and leaves a lease (zk_lease_lock) alone; a DISCARD ALL
#    that fails (in a transaction block, or from a function: 25001) and
#    DISCARD PLANS/TEMP/SEQUENCES release nothing; DISCARD ALL also resets
#    zklock's settings (RESET ALL): the locks taken under the old
#    session_timeout or root are still released, and the next lock opens a
#    session with the settings in force again.
#
# 2. PgBouncer, session pooling, one server connection: a client that
#    disconnects without unlocking hands every lock over within a second,
#    because PgBouncer runs its server_reset_query (DISCARD ALL) on the
#    server connection; the next client gets the same backend and holds
#    nothing.  The control, server_reset_query = '': the lock stays held
#    and the next client of that backend inherits it.
#
# 3. PgBouncer, transaction pooling:
#    - 12 clients, 3 server connections, 20 transactions each, every one a
#      read-modify-write of a counter under zk_xact_lock: no lost update,
#      the fencing tokens increase in the counter's order, nothing left in
#      the queue; the same without the lock loses updates (asserted, so
#      that the locked run is shown to be one where updates could be lost);
#    - a session-level lock taken through transaction pooling belongs to
#      the server backend that ran the statement, not to the client: with
#      PgBouncer's defaults (no reset query in transaction mode) the next
#      client of that server connection inherits it, and can even release
#      it; with server_reset_query_always = 1 PgBouncer runs DISCARD ALL
#      after every transaction, so the session lock goes when the
#      transaction that took it ends (it is, in effect, a transaction
#      lock).  Both shown with one server connection, so that "the next
#      client" is deterministic.  Use zk_xact_lock, or a lease, there;
#    - a lease, which belongs to no backend: taken by one client, renewed
#      by another (on another server backend), seen and renewed by server
#      b, released by a third client.
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
my $na = pg_with_zklock('a', $zk);
my $nb = pg_with_zklock('b', $zk);

# server b's two sessions: $bs checks, $bs2 holds a semaphore lease
my $bs = $nb->background_psql('postgres');
my $bs2 = $nb->background_psql('postgres');

# free(PATH...): from b, for each path, whether an exclusive lock on it is
# free right now: one try each that does not wait, released by the
# statement's own COMMIT; "t,f,..." in the order given.
sub free
{
	my @paths = @_;
	my $list = join(', ', map { "'$_'" } @paths);
	return $bs->query_safe(
		"SELECT string_agg(CASE WHEN zk_try_xact_lock(p) THEN 't' ELSE 'f' END, ',' ORDER BY i)
		   FROM unnest(ARRAY[$list]::text[]) WITH ORDINALITY AS u(p, i)");
}

# this session's locks, as "path:mode:scope:hold_count,..."
sub held
{
	my ($s) = @_;
	return $s->query_safe(
		q{SELECT coalesce(string_agg(path || ':' || mode || ':' || scope || ':' || hold_count, ','
		                             ORDER BY path, mode), '')
		    FROM zk_locks});
}

# ---------------------------------------------------------------------------
# 1. DISCARD ALL directly on server a
# ---------------------------------------------------------------------------
my $s = $na->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');

my @d = ('/d/x', '/d/r', '/d/s1', '/d/s2');
$s->query_safe(q{SELECT zk_lock('/d/x')});
$s->query_safe(q{SELECT zk_lock('/d/x')});
$s->query_safe(q{SELECT zk_rlock('/d/r')});
$s->query_safe(q{SELECT zk_lock(ARRAY['/d/s1', '/d/s2'])});
$s->query_safe(q{SELECT zk_semaphore_acquire('/d/sem', 2)});
my $lease = $s->query_safe(q{SELECT zk_lease_lock('/d/lease', '1 min')});
like($lease, qr/^\d+$/, 'a lease is granted, with a token');
is( held($s),
	'/d/r:shared:session:1,/d/s1:exclusive:session:1,/d/s2:exclusive:session:1,'
	  . '/d/sem:lease:session:1,/d/x:exclusive:session:2',
	'the session holds the stacked lock, the shared lock, the set and the semaphore lease');

# the semaphore admits 2: b takes the second lease (kept by $bs2), so a
# third is refused as long as a's lease is there
is($bs2->query_safe(q{SELECT zk_try_semaphore_acquire('/d/sem', 2)}),
	't', 'b takes the semaphore\'s second lease');
is(free(@d, '/d/lease'), 'f,f,f,f,f', 'b: every lock, and the lease, is held');
is($bs->query_safe(q{SELECT zk_try_xact_semaphore_acquire('/d/sem', 2)}),
	'f', 'b: the semaphore is full');

my $t0 = time();
$s->query_safe('DISCARD ALL');
my $discard_ms = 1000 * (time() - $t0);
# right after DISCARD ALL returned, one try each, no retry
is(free(@d), 't,t,t,t',
	'right after DISCARD ALL returned, b takes each lock at the first try (the stacked one, the shared one, the set)'
);
is($bs->query_safe(q{SELECT zk_try_xact_semaphore_acquire('/d/sem', 2)}),
	't', 'and a semaphore lease: a\'s lease is gone');
note(sprintf('DISCARD ALL releasing 5 nodes: %.1f ms', $discard_ms));
figure(discard_all_ms => sprintf('%.1f', $discard_ms));
is(held($s), '', 'zk_locks is empty in the session that ran DISCARD ALL');
is($s->query_safe('SELECT locks_held FROM zk_session()'),
	'0', 'zk_session() counts no lock');
is(free('/d/lease'), 'f', 'the lease belongs to no backend: DISCARD ALL left it held');
is($bs->query_safe("SELECT zk_lease_unlock('/d/lease', $lease)"),
	't', 'b releases the lease with its token');
is(free('/d/lease'), 't', 'and the lease\'s path is free at once');
$bs2->query_safe(q{SELECT zk_semaphore_release('/d/sem')});

# --- what does not release
$s->query_safe(q{SELECT zk_lock('/d/y')});
$s->query_safe('BEGIN');
my (undef, $err) = bg_query($s, 'DISCARD ALL');
error_is($err, '25001', qr/DISCARD ALL cannot run inside a transaction block/,
	'DISCARD ALL in a transaction block fails with 25001');
$s->query_safe('ROLLBACK');
is(free('/d/y'), 'f', 'the failed DISCARD ALL released nothing');
is(held($s), '/d/y:exclusive:session:1', 'and the session still holds the lock');

(undef, $err) = bg_query($s, q{DO $$BEGIN EXECUTE 'DISCARD ALL'; END$$});
error_is($err, '25001', qr/DISCARD ALL cannot be executed from a function/,
	'DISCARD ALL from a function fails with 25001');
is(free('/d/y'), 'f', 'and releases nothing');

for my $what ('PLANS', 'TEMP', 'SEQUENCES')
{
	$s->query_safe("DISCARD $what");
	is(free('/d/y'), 'f', "DISCARD $what releases nothing");
}
is(held($s), '/d/y:exclusive:session:1', 'the session still holds its lock');
$s->query_safe('DISCARD ALL');
is(free('/d/y'), 't', 'the next DISCARD ALL releases it');

# --- DISCARD ALL resets zklock's settings under a live session
$s->query_safe(q{SET zklock.session_timeout = '4s'});
$s->query_safe(q{SELECT zk_lock('/d/t')});
my ($tmo, $sid) = split /\|/,
  $s->query_safe('SELECT timeout_ms, session_id FROM zk_session()');
is($tmo, '4000', 'a lock taken under session_timeout 4s: a 4 s session');
is(free('/d/t'), 'f', 'b: held');
(undef, $err) = bg_query($s, 'DISCARD ALL');
is($err, '', 'DISCARD ALL, which resets session_timeout, raises no error or warning');
is(free('/d/t'), 't', 'and released the lock taken under the old setting');
is($s->query_safe('SHOW zklock.session_timeout'), '10s', 'session_timeout is back to its default');
is($s->query_safe(q{SELECT zk_lock('/d/t2') > 0}), 't', 'a new lock in that session works');
my ($tmo2, $sid2) = split /\|/,
  $s->query_safe('SELECT timeout_ms, session_id FROM zk_session()');
isnt($sid2, $sid, 'in a new ZooKeeper session');
is($tmo2, '10000', 'whose timeout is the default again');
note("session before DISCARD ALL: $sid, ${tmo} ms; after: $sid2, ${tmo2} ms");
is(free('/d/t2'), 'f', 'b: the new lock is held');
$s->query_safe('DISCARD ALL');
is(free('/d/t2'), 't', 'and DISCARD ALL releases it too');

$s->query_safe(q{SET zklock.root = '/other_root'});
$s->query_safe(q{SELECT zk_lock('/d/root')});
like($s->query_safe(q{SELECT znode FROM zk_locks}),
	qr{^/other_root/d/root/}, 'a lock under zklock.root /other_root');
$bs->query_safe(q{SET zklock.root = '/other_root'});
is(free('/d/root'), 'f', 'b, under the same root: held');
(undef, $err) = bg_query($s, 'DISCARD ALL');
is($err, '', 'DISCARD ALL, which resets zklock.root, raises no error or warning');
is(free('/d/root'), 't', 'and released the lock under the old root');
$bs->query_safe(q{RESET zklock.root});
$s->query_safe(q{SELECT zk_lock('/d/root')});
like($s->query_safe(q{SELECT znode FROM zk_locks}),
	qr{^/zklock/d/root/}, 'the next lock is under the default root again');
$s->query_safe('DISCARD ALL');
is(free('/d/root'), 't', 'and is released by DISCARD ALL');
$s->quit;

# ---------------------------------------------------------------------------
# 2. PgBouncer, session pooling, one server connection
# ---------------------------------------------------------------------------
my $pb = pgbouncer_start('session', $na, pool_mode => 'session',
	default_pool_size => 1);

my @pb = ('/pb/x', '/pb/r', '/pb/s1', '/pb/s2');
my $c1 = $pb->background_psql('postgres');
my $pid1 = $c1->query_safe('SELECT pg_backend_pid()');
$c1->query_safe(q{SELECT zk_lock('/pb/x')});
$c1->query_safe(q{SELECT zk_rlock('/pb/r')});
$c1->query_safe(q{SELECT zk_lock(ARRAY['/pb/s1', '/pb/s2'])});
$c1->query_safe(q{SELECT zk_semaphore_acquire('/pb/sem', 1)});
is($c1->query_safe('SELECT count(*) FROM zk_locks'), '5',
	'client 1, through PgBouncer, holds 5 locks');
is(free(@pb), 'f,f,f,f', 'b: each lock is held');
is($bs->query_safe(q{SELECT zk_try_xact_semaphore_acquire('/pb/sem', 1)}),
	'f', 'b: the semaphore is held');

# client 1 disconnects without unlocking
$c1->quit;
$t0 = time();
my $all_free = sub {
	free(@pb) eq 't,t,t,t'
	  && $bs->query_safe(q{SELECT zk_try_xact_semaphore_acquire('/pb/sem', 1)}) eq 't';
};
ok(wait_for($all_free, 10, 'b to get every lock of the disconnected client'),
	'b gets every lock once client 1 disconnected');
my $handoff_ms = 1000 * (time() - $t0);
note(sprintf('disconnect through PgBouncer to every lock free on b: %.1f ms', $handoff_ms));
figure(disconnect_free_ms => sprintf('%.1f', $handoff_ms));
cmp_ok($handoff_ms, '<', 1000, 'within a second of the disconnect');
# the backend may still be finishing the DISCARD ALL whose hook released
# the locks: wait for it to be idle
my $activity = sub {
	$na->safe_psql('postgres',
		"SELECT state || ':' || query FROM pg_stat_activity WHERE pid = $pid1");
};
wait_for(sub { $activity->() =~ /^idle:/ }, 10, "backend $pid1 idle");
is($activity->(), 'idle:DISCARD ALL',
	'the server backend is still there, and the last thing it ran is PgBouncer\'s DISCARD ALL');

my $c2 = $pb->background_psql('postgres');
is($c2->query_safe('SELECT pg_backend_pid()'), $pid1,
	'client 2 gets the same server backend (a reset, not a new backend)');
is($c2->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and it holds no lock');
$c2->quit;

# the control: without a reset query, the lock stays with the backend
my $pn = pgbouncer_start('noreset', $na, pool_mode => 'session',
	default_pool_size => 1, server_reset_query => '');
$c1 = $pn->background_psql('postgres');
my $pidn = $c1->query_safe('SELECT pg_backend_pid()');
$c1->query_safe(q{SELECT zk_lock('/pb/ctl')});
$c1->quit;
$t0 = time();
# PgBouncer has put the server connection back in the pool
ok( wait_for(
		sub {
			my ($p) = grep { $_->{database} eq 'postgres' } @{ $pn->admin('SHOW POOLS') };
			$p && $p->{cl_active} == 0 && $p->{sv_active} == 0
			  && $p->{sv_tested} == 0 && $p->{sv_idle} + $p->{sv_used} == 1;
		},
		10,
		'the server connection back in the pool'),
	'control: the server connection is back in the pool');
usleep(1_000_000 * (1.0 - (time() - $t0))) if time() - $t0 < 1.0;
is(free('/pb/ctl'), 'f',
	'control, server_reset_query empty: a second after the disconnect the lock is still held');
$c2 = $pn->background_psql('postgres');
is($c2->query_safe('SELECT pg_backend_pid()'), $pidn, 'client 2 gets the same backend');
is(held($c2), '/pb/ctl:exclusive:session:1', 'and inherits client 1\'s lock');
$c2->query_safe(q{SELECT zk_unlock('/pb/ctl')});
is(free('/pb/ctl'), 't', 'which it can release');
$c2->quit;
$pn->stop;

# ---------------------------------------------------------------------------
# 3. PgBouncer, transaction pooling
# ---------------------------------------------------------------------------
my $pt = pgbouncer_start('txn', $na, pool_mode => 'transaction',
	default_pool_size => 3);
$na->safe_psql('postgres',
	'CREATE TABLE counter (n int); INSERT INTO counter VALUES (0);
	 CREATE TABLE txlog (n int, tok bigint, pid int)');

my ($clients, $per_client) = (12, 20);

# run CLIENTS psql processes at once through the bouncer, each running
# per_client transactions of BODY; returns the number of clients that failed
sub run_clients
{
	my ($name, $body) = @_;
	my $file = "$PostgreSQL::Test::Utils::tmp_check/$name.sql";
	open my $fh, '>', $file or die "$file: $!";
	print $fh "BEGIN;\n$body\nCOMMIT;\n" for 1 .. $per_client;
	close $fh;
	my @h;
	for my $i (1 .. $clients)
	{
		my %c = (out => '', err => '');
		$c{h} = IPC::Run::start(
			[
				'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
				'-h', '127.0.0.1', '-p', $pt->port, '-d', 'postgres',
				'-f', $file
			],
			'<', \undef, '>', \$c{out}, '2>', \$c{err},
			IPC::Run::timeout(60));
		push @h, \%c;
	}
	my $failed = 0;
	for my $c (@h)
	{
		my $ok = eval { $c->{h}->finish };
		if (!$ok)
		{
			$failed++;
			diag("$name client failed: $c->{err}" . ($@ // ''));
			eval { $c->{h}->kill_kill; 1 };
		}
	}
	return $failed;
}

# the read and the write are separate statements, with a pause between
# them: without the lock, two transactions that read the same n lose one
# of their updates
$t0 = time();
is( run_clients(
		'locked', q{SELECT zk_xact_lock('/counter') AS tok \gset
SELECT n FROM counter \gset
SELECT pg_sleep(0.001);
UPDATE counter SET n = :n + 1;
INSERT INTO txlog VALUES (:n + 1, :tok, pg_backend_pid());}),
	0,
	"$clients clients through transaction pooling ran $per_client transactions each");
my $locked_s = time() - $t0;
my $total = $clients * $per_client;
is($na->safe_psql('postgres', 'SELECT n FROM counter'), $total,
	"the counter is $total: no lost update under zk_xact_lock");
is( $na->safe_psql('postgres',
		'SELECT count(*) = count(DISTINCT n) AND min(n) = 1 AND max(n) = count(*) FROM txlog'),
	't', 'each transaction read the value the previous one wrote');
is( $na->safe_psql('postgres',
		'SELECT count(*) FROM (SELECT tok, lag(tok) OVER (ORDER BY n) AS prev FROM txlog) t
		  WHERE tok <= prev'),
	'0', 'the fencing tokens increase in the order of the updates');
my $backends = $na->safe_psql('postgres', 'SELECT count(DISTINCT pid) FROM txlog');
cmp_ok($backends, '<=', 3, 'over at most 3 server connections');
is(queue_len($nb, '/counter'), '0', 'no node is left in the queue of /counter');
note(sprintf('locked: %d transactions in %.1f s over %d server backends',
		$total, $locked_s, $backends));
figure(locked_kept => $na->safe_psql('postgres', 'SELECT n FROM counter'),
	locked_total => $total, locked_s => sprintf('%.1f', $locked_s));

# the control: the same clients without the lock lose updates (two
# transactions on different server connections read the same n), so the
# run above is one where the lock had something to prevent
$na->safe_psql('postgres', 'UPDATE counter SET n = 0');
$t0 = time();
is( run_clients(
		'unlocked', q{SELECT n FROM counter \gset
SELECT pg_sleep(0.001);
UPDATE counter SET n = :n + 1;}),
	0,
	'the same clients without the lock ran too');
my $unlocked_n = $na->safe_psql('postgres', 'SELECT n FROM counter');
note(sprintf('unlocked: counter %d of %d: %d updates lost, in %.1f s',
		$unlocked_n, $total, $total - $unlocked_n, time() - $t0));
cmp_ok($total - $unlocked_n, '>', 0,
	'control: without the lock, updates are lost (the counter ends below the number of transactions)');
figure(unlocked_lost => $total - $unlocked_n);

# --- a lease through transaction pooling: it belongs to no backend
$c1 = $pt->background_psql('postgres');
my ($tok, $pid_lease) = split /\|/,
  $c1->query_safe(q{SELECT zk_lease_lock('/job', '1 min'), pg_backend_pid()});
like($tok, qr/^\d+$/, 'client 1 takes a lease through transaction pooling');
# client 1 keeps a server connection busy, so that client 2 gets another
$c1->query_safe('BEGIN');
my $pid_busy = $c1->query_safe('SELECT pg_backend_pid()');
$c2 = $pt->background_psql('postgres');
my ($renewed, $pid_renew) = split /\|/,
  $c2->query_safe("SELECT zk_lease_renew('/job', $tok) > clock_timestamp() + interval '50 s', pg_backend_pid()");
is($renewed, 't', 'client 2 renews it: a new expiry about a minute ahead');
isnt($pid_renew, $pid_busy, 'client 2 ran on another server backend than client 1');
note("lease taken by backend $pid_lease, renewed by backend $pid_renew "
	  . "(client 1's transaction meanwhile on $pid_busy)");
$c1->query_safe('COMMIT');
is(free('/job'), 'f', 'b: the lease holds the lock');
is($bs->query_safe("SELECT zk_lease_renew('/job', $tok) > clock_timestamp() + interval '50 s'"),
	't', 'b renews it too');
my $c3 = $pt->background_psql('postgres');
is($c3->query_safe("SELECT zk_lease_unlock('/job', $tok)"), 't',
	'client 3 releases it');
is(free('/job'), 't', 'b gets the lock at once');
$_->quit for ($c1, $c2, $c3);
$pt->stop;

# --- a session lock through transaction pooling, one server connection.
# Without server_reset_query_always (PgBouncer's default) nothing resets the
# server connection between clients: the lock belongs to the server
# backend, and the next client of that connection inherits it.
my $p1 = pgbouncer_start('txn1', $na, pool_mode => 'transaction',
	default_pool_size => 1);
$c1 = $p1->background_psql('postgres');
my ($ltok, $lpid) = split /\|/,
  $c1->query_safe(q{SELECT zk_lock('/tp/inherit'), pg_backend_pid()});
$c2 = $p1->background_psql('postgres');
is($c2->query_safe('SELECT pg_backend_pid()'), $lpid,
	'transaction pooling: client 2 runs on the backend that took client 1\'s session lock');
is(held($c2), '/tp/inherit:exclusive:session:1', 'and holds that lock');
is(free('/tp/inherit'), 'f', 'b: the lock is held after client 1\'s transaction ended');
is($c2->query_safe(q{SELECT zk_unlock('/tp/inherit')}), 't',
	'client 2 can even release it');
is(free('/tp/inherit'), 't', 'b: free');
$_->quit for ($c1, $c2);
$p1->stop;

# With server_reset_query_always = 1 PgBouncer runs DISCARD ALL after each
# transaction: a session lock goes when the transaction that took it ends.
my $p2 = pgbouncer_start('txn1_reset', $na, pool_mode => 'transaction',
	default_pool_size => 1, server_reset_query_always => 1);
$c1 = $p2->background_psql('postgres');
$c1->query_safe(q{SELECT zk_lock('/tp/reset')});
# the next statement runs on the same (only) server connection, so after
# PgBouncer's DISCARD ALL on it
is($c1->query_safe('SELECT count(*) FROM zk_locks'), '0',
	'server_reset_query_always: the session lock is gone in the client\'s next transaction');
is(free('/tp/reset'), 't', 'b: free');
$c1->query_safe('BEGIN');
$c1->query_safe(q{SELECT zk_lock('/tp/reset')});
is(held($c1), '/tp/reset:exclusive:session:1', 'inside one transaction the session lock is held');
is(free('/tp/reset'), 'f', 'b: held');
$c1->query_safe('COMMIT');
is($c1->query_safe('SELECT count(*) FROM zk_locks'), '0', 'the COMMIT and the reset after it release it');
is(free('/tp/reset'), 't', 'b: free');
$c1->quit;
$p2->stop;

# nothing of all this is left in ZooKeeper (the session locks and leases
# under /other_root were checked above)
is( $bs->query_safe(
		q{SELECT coalesce(string_agg(path || ' ' || kind, ', '), '') FROM zk_cluster_locks()}),
	'', 'no lock, semaphore or lease is left in ZooKeeper');

$bs->quit;
$bs2->quit;
$pb->stop;
$na->stop;
$nb->stop;
done_testing();
