# Leases: exclusive locks held by a ZooKeeper TTL node instead of a
# backend's session, on two PostgreSQL servers, with Curator and kazoo
# writers in the same queue.
#
# - A lease outlives the backend that took it (exit, terminate) and is
#   renewed and released from another backend and another server; a lease
#   and a session lock exclude each other both ways, first come, first
#   served; tokens increase from grant to grant; zk_lock_queue and
#   zk_cluster_locks show the lease's holder, token and expiry from any
#   server.
# - Expiry: a lease nobody renews is freed ttl after its grant (plus up to
#   ZooKeeper's check interval, 1 s here) and a waiter on the other server
#   gets the lock; renewing keeps it; a renewal after expiry is an ERROR;
#   a transaction that took a lease cannot COMMIT after its ttl.
# - The waiting phase belongs to the backend: a waiting lease that is
#   cancelled, times out or whose backend is terminated leaves nothing; a
#   SIGKILLed waiter leaves its node until its session expires, after which
#   the next zklock acquirer removes it (measured); a waiting lease is a
#   waiter like any other for deadlock detection, and a cycle whose edge
#   into its taker goes through the lease's node is detected.
# - Curator's InterProcessReadWriteLock and kazoo's Lock writers wait
#   behind a lease, and a lease waits behind them.
# - A ZooKeeper server without extended types: 0A000, nothing left.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $conf = "deadlock_timeout = '300ms'\nzklock.session_timeout = '3s'\n";
my $na = pg_with_zklock('a', $zk, $conf);
# B recovers from the SIGKILL below by a crash restart
my $nb = pg_with_zklock('b', $zk, $conf . "restart_after_crash = on\n");

# the children of a lock node, with what each one's Stat says: sequence
# number, ephemeral or not, data version, child count
sub znodes
{
	my ($path) = @_;
	return kazoo_run($zk, qq{
base = '/zklock$path'
out = []
for ch in (sorted(c.get_children(base), key=lambda n: n[-10:]) if c.exists(base) else []):
    try:
        d, st = c.get(base + '/' + ch)
    except Exception:
        continue
    out.append('%s:%s:v%d:c%d' % (ch[-10:], 'eph' if st.ephemeralOwner else 'persistent', st.version, st.numChildren))
print(','.join(out))});
}

# --- a lease outlives the backend that took it
my $sa = verbose_session($na);
my $pid = $sa->query_safe('SELECT pg_backend_pid()');
$sa->query_safe(q{SET application_name = 'job_taker'});
my $t1 = $sa->query_safe(q{SELECT zk_lease_lock('/job/nightly', '1 min')});
like($t1, qr/^\d+$/, 'a lease is granted and returns its token');
is($sa->query_safe(q{SELECT count(*) FROM zk_locks}), '0',
	'the lease is not a lock of the backend that took it');

# visible from the other server, with its taker and its expiry
is( $nb->safe_psql(
		'postgres', qq{
		SELECT format('%s|%s|%s|%s|%s|%s', position, mode, granted,
			fencing_token = $t1, cluster_name || ':' || pid || ':' || application_name,
			lease_expires_at BETWEEN now() + '50 s' AND now() + '70 s')
		FROM zk_lock_queue('/job/nightly')}),
	"1|exclusive|t|t|a:$pid:job_taker|t",
	'zk_lock_queue on b shows the lease holder, its token, taker and expiry');
is( $nb->safe_psql(
		'postgres', qq{
		SELECT format('%s|%s|%s|%s|%s', kind, mode, holders, fencing_token = $t1,
			lease_expires_at > now())
		FROM zk_cluster_locks WHERE path = '/job/nightly'}),
	'lock|exclusive|1|t|t',
	'zk_cluster_locks on b shows it too, with its expiry');

$sa->quit;
ok( wait_for(
		sub {
			$na->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid") eq '0';
		},
		10,
		'taker gone'),
	'the backend that took the lease has exited');
is($nb->safe_psql('postgres', q{SELECT zk_try_lock('/job/nightly', 200)}),
	'f', 'the lease still holds the lock after its taker exited');

# renewed from server b, then released from server b
my $exp = $nb->safe_psql('postgres',
	qq{SELECT zk_lease_renew('/job/nightly', $t1) BETWEEN now() + '50 s' AND now() + '70 s'});
is($exp, 't', 'server b renews the lease and gets its new expiry');
is($nb->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/nightly', $t1)}),
	't', 'server b releases it');
is($na->safe_psql('postgres', q{SELECT zk_try_lock('/job/nightly')}),
	't', 'and server a finds the lock free at once');
is(znodes('/job/nightly'), '', 'no node left');

# --- terminated taker: the lease stays as well
{
	my $s = verbose_session($na);
	my $p = $s->query_safe('SELECT pg_backend_pid()');
	my $t = $s->query_safe(q{SELECT zk_lease_lock('/job/term', '1 min')});
	$na->safe_psql('postgres', "SELECT pg_terminate_backend($p)");
	ok( wait_for(
			sub {
				$na->safe_psql('postgres',
					"SELECT count(*) FROM pg_stat_activity WHERE pid = $p") eq '0';
			},
			10,
			'terminated'),
		'the taker is terminated');
	is($nb->safe_psql('postgres', q{SELECT zk_try_lock('/job/term')}),
		'f', 'the lease of a terminated backend still holds the lock');
	is($nb->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/term', $t)}),
		't', 'and is released by token from the other server');
}

# --- tokens increase from grant to grant, across servers
{
	my @tokens;
	for my $i (1 .. 6)
	{
		my $node = $i % 2 ? $na : $nb;
		my $t = $node->safe_psql('postgres',
			q{SELECT zk_lease_lock('/job/tokens', '1 min')});
		push @tokens, $t;
		$node->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/tokens', $t)});
	}
	my @sorted = sort { $a <=> $b } @tokens;
	is_deeply(\@tokens, \@sorted, 'tokens strictly increase across grants on both servers')
	  && ok($tokens[-1] > $tokens[0], 'and differ');
}

# --- a lease and a session lock exclude each other, first come, first served
{
	my $h = verbose_session($na);    # session lock holder on a
	my $l = verbose_session($nb);    # lease taker on b
	my $w = verbose_session($na);    # session lock waiter on a
	$h->query_safe(q{SELECT zk_lock('/job/fifo')});
	bg_begin($l, q{SELECT zk_lease_lock('/job/fifo', '1 min') AS lt}, 'lease_done');
	ok(wait_queue_len($na, '/job/fifo', 2, 10, 'lease queued'), 'the lease waits behind a session lock');
	is(znodes('/job/fifo') =~ s/^[^,]*,//r, '0000000001:persistent:v0:c1',
		'a waiting lease node is persistent and has its waiter child');
	bg_begin($w, q{SELECT zk_lock('/job/fifo') > 0 AS got}, 'lock_done');
	ok(wait_queue_len($na, '/job/fifo', 3, 10, 'lock queued'), 'a session lock queues behind the lease');
	$h->query_safe(q{SELECT zk_unlock('/job/fifo')});
	my ($out) = bg_finish($l, 'lease_done');
	my ($lt) = $out =~ /(\d+)/;
	ok($lt, 'the lease is granted when the session lock goes');
	like(znodes('/job/fifo'), qr/^0000000001:persistent:v1:c0,/,
		'the grant wrote the lease node and removed its waiter child');
	usleep(300_000);
	ok(!bg_done($w, 'lock_done'), 'the session lock waits for the lease');
	$l->quit;    # the lease outlives its taker's backend
	usleep(300_000);
	ok(!bg_done($w, 'lock_done'), 'even once the lease\'s taker has exited');
	is($nb->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/fifo', $lt)}),
		't', 'the lease is released from a new backend');
	($out) = bg_finish($w, 'lock_done');
	like($out, qr/\bt\b/, 'the session lock is granted once the lease goes');
	$w->query_safe(q{SELECT zk_unlock('/job/fifo')});
	$h->quit;
	$w->quit;
	ok(wait_queues_empty($na, ['/job/fifo'], 10, 'fifo empty'), 'nothing left');
}

# --- expiry: nobody renews; a waiter on the other server gets the lock
{
	my $t = $na->safe_psql('postgres', q{SELECT zk_lease_lock('/job/expire', '2 s')});
	my $t0 = time();
	my $w = verbose_session($nb);
	bg_begin($w, q{SELECT zk_lock('/job/expire') > 0 AS got}, 'exp_done');
	my ($out) = bg_finish($w, 'exp_done');
	my $s = time() - $t0;
	like($out, qr/\bt\b/, 'a waiter on b gets the lock once the lease expires');
	note(sprintf('lease with ttl 2 s, not renewed: freed after %.2f s (check interval 1 s)', $s));
	figure(not_renewed_freed_s => sprintf('%.2f', $s));
	cmp_ok($s, '>=', 1.9, 'not before its ttl');
	cmp_ok($s, '<', 2 + 1 + 2, 'within ttl + check interval (+ slack)');
	$w->query_safe(q{SELECT zk_unlock('/job/expire')});
	$w->quit;
	my ($stdout, $stderr) = ('', '');
	$na->psql('postgres', qq{\\set VERBOSITY verbose\nSELECT zk_lease_renew('/job/expire', $t)},
		stdout => \$stdout, stderr => \$stderr);
	error_is($stderr, '55000', qr/no ZooKeeper lease with token $t holds lock "\/job\/expire"/,
		'renewing an expired lease is an ERROR (55000) naming path and token');
	is($na->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/job/expire')}),
		'0', 'and takes nothing again');
}

# --- renewing keeps it: renewed every 600 ms for 5 s with ttl 2 s
{
	# one open session per server renews, so that a renewal's time is the
	# renewal's own, not a new psql's start; they are open before the lease
	# is taken (on a loaded machine opening them can outlast the 2 s ttl)
	my @renewer = map { $_->background_psql('postgres') } $nb, $na;
	my $prober = $nb->background_psql('postgres');
	my $t = $renewer[1]->query_safe(q{SELECT zk_lease_lock('/job/renew', '2 s')});
	my $held = 1;
	my $t0 = time();
	my ($i, $last, $longest_gap) = (0, $t0, 0);
	while (time() - $t0 < 5)
	{
		# alternate servers: the renewal is anyone's
		$renewer[ $i++ % 2 ]->query_safe(qq{SELECT zk_lease_renew('/job/renew', $t)});
		my $now = time();
		$longest_gap = $now - $last if $now - $last > $longest_gap;
		$last = $now;
		$held &&= $prober->query_safe(q{SELECT zk_try_lock('/job/renew')}) eq 'f';
		usleep(600_000);
	}
	ok($held, 'a lease renewed within its ttl stays held for 2.5 ttls, from both servers');
	cmp_ok($longest_gap, '<', 2,
		sprintf('every renewal came within the ttl of the one before (longest gap %.2f s)', $longest_gap));
	$_->quit for (@renewer, $prober);
	my $t1 = time();
	ok( wait_for(
			sub { $nb->safe_psql('postgres', q{SELECT zk_try_xact_lock('/job/renew')}) eq 't' },
			10, 'expired'),
		'once renewals stop, it expires');
	note(sprintf('renewals stopped; lock free after %.2f s', time() - $t1));
}

# --- renewed past its ttl (before the server reaped it): ERROR, released
{
	my $t = $na->safe_psql('postgres', q{SELECT zk_lease_lock('/job/late', '700 ms')});
	# keep the server from reaping it: a child the lease node cannot lose
	# is not possible from SQL, so race the check interval instead: renew
	# at ttl + 100 ms, which the reaper (every 1 s) may or may not have
	# reached; either answer is the documented one
	usleep(800_000);
	my ($stdout, $stderr) = ('', '');
	$na->psql('postgres', qq{\\set VERBOSITY verbose\nSELECT zk_lease_renew('/job/late', $t)},
		stdout => \$stdout, stderr => \$stderr);
	error_is($stderr, '55000', qr/(ZooKeeper lease $t on lock "\/job\/late" has run out|no ZooKeeper lease with token $t holds lock "\/job\/late")/,
		'a renewal after the ttl ran out is an ERROR (55000), whether or not the server reaped the lease yet');
	note("late renewal said: " . ($stderr =~ /ERROR:  (.*)/)[0]);
	is($na->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/job/late')}),
		'0', 'and the lease is gone either way');
}

# --- COMMIT of a transaction that took a lease, after its ttl: refused
{
	my ($stdout, $stderr) = ('', '');
	$na->psql(
		'postgres', q{\set VERBOSITY verbose
		BEGIN;
		SELECT zk_lease_lock('/job/commit', '500 ms');
		SET LOCAL zklock.on_lock_loss = error;
		SELECT pg_sleep(0.7);
		COMMIT;},
		stdout => \$stdout,
		stderr => \$stderr);
	error_is($stderr, '55000', qr/cannot commit: the ZooKeeper lease on lock "\/job\/commit" may have run out/,
		'COMMIT after the ttl of a lease the transaction took fails: 55000');
}

# --- a waiting lease that is cancelled, times out or terminated leaves nothing
{
	my $h = verbose_session($na);
	$h->query_safe(q{SELECT zk_lock('/job/wait')});

	my ($stdout, $stderr) = ('', '');
	$nb->psql('postgres',
		qq{\\set VERBOSITY verbose\nSET lock_timeout = '500ms'; SELECT zk_lease_lock('/job/wait', '1 min')},
		stdout => \$stdout, stderr => \$stderr);
	error_is($stderr, '55P03', qr/canceling statement due to lock timeout/, 'lock_timeout ends a waiting lease (55P03)');
	is(znodes('/job/wait') =~ tr/,//, 0, 'and leaves no lease node');

	is($nb->safe_psql('postgres', q{SELECT zk_try_lease_lock('/job/wait', '1 min', 300) IS NULL}),
		't', 'a try that times out returns NULL');
	is(znodes('/job/wait') =~ tr/,//, 0, 'and leaves no lease node');

	my $w = verbose_session($nb);
	my $wpid = $w->query_safe('SELECT pg_backend_pid()');
	bg_begin($w, q{SELECT zk_lease_lock('/job/wait', '1 min')}, 'c_done');
	ok(wait_queue_len($na, '/job/wait', 2, 10, 'waiting'), 'a lease waits');
	$nb->safe_psql('postgres', "SELECT pg_cancel_backend($wpid)");
	my ($o, $e) = bg_finish($w, 'c_done');
	error_is($e, '57014', qr/canceling statement due to user request/, 'query cancel ends the wait: 57014');
	is(znodes('/job/wait') =~ tr/,//, 0, 'and leaves no lease node');

	bg_begin($w, q{SELECT zk_lease_lock('/job/wait', '1 min')}, 't_done');
	ok(wait_queue_len($na, '/job/wait', 2, 10, 'waiting'), 'a lease waits again');
	$nb->safe_psql('postgres', "SELECT pg_terminate_backend($wpid)");
	ok(wait_for(sub { znodes('/job/wait') !~ /,/ }, 10, 'terminated waiter node gone'),
		'terminating the waiting backend leaves no lease node');
	eval { $w->quit };

	# SIGKILL: no exit code runs; the node stays until the session expires,
	# then the next zklock acquirer removes it
	my $k = verbose_session($nb);
	my $kpid = $k->query_safe('SELECT pg_backend_pid()');
	bg_begin($k, q{SELECT zk_lease_lock('/job/wait', '5 min')}, 'k_done');
	ok(wait_queue_len($na, '/job/wait', 2, 10, 'waiting'), 'a lease waits a third time');
	my $t0 = time();
	kill 'KILL', $kpid;
	eval { $k->quit };
	ok( wait_for(sub { znodes('/job/wait') =~ /persistent:v0:c0/ }, 20, 'waiter child gone'),
		'after a SIGKILL the node loses its waiter child once the session expires');
	note(sprintf('SIGKILLed waiter: its waiter child gone after %.2f s (session timeout 3 s)', time() - $t0));
	$h->query_safe(q{SELECT zk_unlock('/job/wait')});
	# the abandoned node is now first in the queue; a new acquirer removes it
	my $t2 = time();
	is($na->safe_psql('postgres', q{SELECT zk_try_lock('/job/wait', 2000)}),
		't', 'the next acquirer removes the abandoned lease node and gets the lock');
	note(sprintf('SIGKILLed waiter: its node blocked the queue for %.2f s after the kill (ttl 5 min)', time() - $t0));
	figure(sigkilled_waiter_node_s => sprintf('%.2f', time() - $t0));
	cmp_ok(time() - $t2, '<', 1, 'without waiting for the ttl');
	$h->quit;
	$nb->poll_query_until('postgres', 'SELECT true');
}

# --- deadlock detection sees a waiting lease like any waiter
{
	my $sa2 = verbose_session($na);
	my $sb2 = verbose_session($nb);
	$sa2->query_safe(q{SELECT zk_lock('/dl/x')});
	$sb2->query_safe(q{SELECT zk_lock('/dl/y')});
	bg_begin($sa2, q{SELECT zk_lease_lock('/dl/y', '1 min') > 0 AS got}, 'la_done');
	ok(wait_queue_len($na, '/dl/y', 2, 10, 'lease waits'), 'a lease on a waits for b');
	bg_begin($sb2, q{SELECT zk_lock('/dl/x') > 0 AS got}, 'lb_done');
	my ($o, $e) = bg_finish($sb2, 'lb_done');
	error_is($e, '40P01', qr/deadlock detected\n/, 'the cycle through a waiting lease is detected (40P01)');
	$sb2->query_safe(q{SELECT zk_unlock_all()});
	($o) = bg_finish($sa2, 'la_done');
	like($o, qr/\bt\b/, 'and the lease is granted once the victim lets go');
	my $tok = $na->safe_psql('postgres',
		q{SELECT fencing_token FROM zk_lock_queue('/dl/y')});
	$na->safe_psql('postgres', qq{SELECT zk_lease_unlock('/dl/y', $tok)});
	$sa2->query_safe(q{SELECT zk_unlock_all()});
	$sa2->quit;
	$sb2->quit;
	ok(wait_queues_empty($na, [ '/dl/x', '/dl/y' ], 10, 'dl empty'), 'nothing left');
}

# --- a cycle whose only edge into a member goes through a waiting lease:
#     /dl/q: A's reader (granted), B's lease (waits for A), C's reader
#     (waits for the lease, the nearest writer ahead); C holds /dl/r, which
#     A asks for.  C's wait leads to B only through the lease's waiter child.
{
	my $a = verbose_session($na);
	my $b = verbose_session($nb);
	my $c = verbose_session($na);
	my $pid_a = $a->query_safe('SELECT pg_backend_pid()');
	$a->query_safe(q{SELECT zk_rlock('/dl/q')});
	$c->query_safe(q{SELECT zk_lock('/dl/r')});
	bg_begin($b, q{SELECT zk_lease_lock('/dl/q', '1 min') AS lt}, 'qb_done');
	ok(wait_queue_len($na, '/dl/q', 2, 10, 'lease waits'), 'B\'s lease waits behind A\'s reader');
	bg_begin($c, q{SELECT zk_rlock('/dl/q') > 0 AS got}, 'qc_done');
	ok(wait_queue_len($na, '/dl/q', 3, 10, 'reader waits'), 'C\'s reader waits behind the lease');
	# B and C pass deadlock_timeout and publish what they wait for, which
	# A's check reads
	ok(wait_for(sub { published_waits($zk) >= 2 }, 10, 'B and C published'),
		'B and C published their waits');
	bg_begin($a, q{SELECT zk_lock('/dl/r') > 0 AS got}, 'qa_done');
	my ($o, $e) = bg_finish($a, 'qa_done');
	error_is($e, '40P01', qr/deadlock detected\n/,
		'a cycle through a waiting lease\'s taker is detected (40P01)');
	like($e, qr/Process $pid_a on server "a" waits for exclusive ZooKeeper lock "\/dl\/r"/,
		'the DETAIL names the member that waits for the reader');
	$a->query_safe(q{SELECT zk_unlock_all()});
	($o) = bg_finish($b, 'qb_done');
	my ($lt) = $o =~ /(\d+)/;
	ok($lt, 'the lease is granted once A lets go');
	$na->safe_psql('postgres', qq{SELECT zk_lease_unlock('/dl/q', $lt)});
	($o) = bg_finish($c, 'qc_done');
	like($o, qr/\bt\b/, 'and C reads once the lease is released');
	$c->query_safe(q{SELECT zk_unlock_all()});
	$_->quit for ($a, $b, $c);
	ok(wait_queues_empty($na, [ '/dl/q', '/dl/r' ], 10, 'q empty'), 'nothing left');
}

# --- Curator and kazoo writers wait behind a lease, and a lease behind them
SKIP:
{
	my $why = curator_missing() // kazoo_missing();
	skip "no Curator or kazoo client: $why", 8 if $why;

	my $cur = curator_client('curator', $zk, '/zklock/job/interop', 10000);
	my $kaz = kazoo_client('kazoo', $zk, '/zklock/job/interop', 10);
	my $t = $na->safe_psql('postgres', q{SELECT zk_lease_lock('/job/interop', '1 min')});
	is(client_ask($cur, 'write 500'), 'timeout write', 'a Curator writer cannot take a lock a lease holds');
	is(client_ask($kaz, 'lock 500'), 'timeout lock', 'nor a kazoo Lock');
	client_queues($cur, 'write', $na, '/job/interop', 2,
		'Curator queues behind the lease', 'its node is in the queue');
	$nb->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/interop', $t)});
	is(client_next($cur, 10), 'acquired write', 'Curator gets it when the lease is released');

	# a lease waits behind Curator, and a kazoo writer behind the lease
	my $l = verbose_session($nb);
	bg_begin($l, q{SELECT zk_lease_lock('/job/interop', '1 min') AS lt}, 'il_done');
	ok(wait_queue_len($na, '/job/interop', 2, 10, 'lease queued'), 'a lease waits behind Curator');
	client_send($kaz, 'lock');
	is(client_next($kaz), 'acquiring lock', 'kazoo queues behind the lease');
	is(client_ask($cur, 'release write'), 'released write', 'Curator releases');
	my ($out) = bg_finish($l, 'il_done');
	my ($lt) = $out =~ /(\d+)/;
	ok($lt, 'the lease is granted');
	usleep(300_000);
	is(client_poll($kaz), undef, 'kazoo still waits, behind the lease');
	$na->safe_psql('postgres', qq{SELECT zk_lease_unlock('/job/interop', $lt)});
	is(client_next($kaz, 10), 'acquired lock', 'kazoo gets it when the lease is released');
	is(client_ask($kaz, 'release lock'), 'released lock', 'kazoo releases');
	$l->quit;
	client_ask($cur, 'close');
	client_ask($kaz, 'close');
	ok(wait_queues_empty($na, ['/job/interop'], 10, 'interop empty'), 'nothing left');
}

# --- a ZooKeeper server without extended types
{
	my $plain = zk_standalone(no_ttl => 1);
	my ($stdout, $stderr) = ('', '');
	$na->psql(
		'postgres', qq{\\set VERBOSITY verbose
		SET zklock.hosts = '$plain->{hosts}';
		SELECT zk_lease_lock('/job/plain', '1 min');},
		stdout => \$stdout,
		stderr => \$stderr);
	error_is($stderr, '0A000', qr/ZooKeeper at "[^"]+" does not support leases\n.*\nHINT:  Start every ZooKeeper server with -Dzookeeper.extendedTypesEnabled=true\./,
		'without extended types: a clear ERROR (0A000) with a HINT naming the setting');
	my $left = kazoo_run({ hosts => $plain->{hosts} },
		q{print(len(c.get_children('/zklock/job/plain')) if c.exists('/zklock/job/plain') else 0)});
	is($left, '0', 'and no node is left behind');
	($stdout, $stderr) = ('', '');
	$na->psql(
		'postgres', qq{\\set VERBOSITY verbose
		SET zklock.hosts = '$plain->{hosts}';
		SET statement_timeout = '3s';
		SELECT zk_try_lease_lock('/job/plain', '1 min', 1000);},
		stdout => \$stdout,
		stderr => \$stderr);
	error_is($stderr, '0A000', qr/ZooKeeper at "[^"]+" does not support leases/,
		'the try form says the same (0A000), never hangs');
}

done_testing();
