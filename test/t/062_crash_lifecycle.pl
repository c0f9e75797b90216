# The life cycle around the locks: a server that crashes or stops at once,
# the extension dropped or updated under its holders, and two servers at
# different extension versions sharing one queue.
#
# - Server a (zklock.session_timeout 4 s) holds a session lock, a
#   transaction lock (idle in transaction), a shared lock and a lease
#   (ttl 8 s) in four backends; server b queues one waiter behind each.
#   Then a's postmaster is killed with SIGKILL.  Its backends notice the
#   postmaster's death the next time they wait (an idle backend at once)
#   and exit through proc_exit, which closes their ZooKeeper sessions:
#   b's waiters on the three ephemeral holds are granted within half the
#   session timeout (sooner than any expiry could free them).  A backend
#   that was running a statement that does not wait (a busy loop) lives on
#   as an orphan until the statement ends, keeping its ZooKeeper session
#   alive and its lock held past the session timeout: its waiter is
#   granted only once the statement has ended.  The lease is untouched by
#   its backend's exit: its node stays until its ttl, then goes (within
#   the reaper's interval + 3 s), and only then is its waiter granted.
# - The same holds and waiters, and `pg_ctl stop -m immediate`: the
#   backends exit at SIGQUIT without closing their sessions, so every
#   ephemeral hold is freed by ZooKeeper's session expiry: within the
#   session timeout + 3 s, and not before half of it.  The lease again
#   stays for its ttl.
# - After each: the restarted server a takes each lock (and a lease)
#   normally, and once everything is released no node is left under the
#   root (containers reaped, no ephemeral, no TTL node).
# - DROP EXTENSION zklock while other backends (and the dropping one)
#   hold locks succeeds, and the locks stay held: the holders can no
#   longer call zk_unlock, but their transaction locks still go at COMMIT,
#   DISCARD ALL releases their session locks, exit releases everything,
#   and after CREATE EXTENSION zk_unlock works again on the holds taken
#   before the DROP.
# - ALTER EXTENSION zklock UPDATE (from 1.0) in another session while a
#   backend holds session, transaction and shared locks: they stay held,
#   the holder releases them with the updated functions.
# - A rolling upgrade: server a's database at extension version 1.0,
#   server b's at the newest, one queue on one path: FIFO grants across
#   both, one holder at a time, zk_lock_queue on each shows the same
#   queue with its owners, zk_cluster_locks (newest) counts it, and each
#   holder's zk_locks and zk_session() show its hold.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

my $t_start = time();
my $session_s = 4;
my $ttl_s = 8;
my $zk = zk_standalone();
my $na = pg_with_zklock('a', $zk, "zklock.session_timeout = '${session_s}s'\n");
my $nb = pg_with_zklock('b', $zk);

# alive(PID): the process exists and is no zombie
sub alive
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $stat = <$fh>;
	close $fh;
	return $stat !~ /^\d+ \(.*\) Z /;
}

# holders(HOW, KEYS): on server a, one backend per key of KEYS holding
# the lock of that key on /crash/HOW/KEY: s a session lock, x a transaction
# lock (idle in transaction), r a shared lock, busy a session lock; returns
# the sessions and their pids, by key
sub holders
{
	my ($how, @keys) = @_;
	my %sql = (
		s => "SELECT zk_lock('/crash/$how/s')",
		x => "BEGIN; SELECT zk_xact_lock('/crash/$how/x')",
		r => "SELECT zk_rlock('/crash/$how/r')",
		busy => "SELECT zk_lock('/crash/$how/busy')");
	my (%s, %pid);
	for my $k (@keys)
	{
		$s{$k} = $na->background_psql('postgres', on_error_stop => 0);
		$pid{$k} = $s{$k}->query_safe('SELECT pg_backend_pid()');
		$s{$k}->query_safe($sql{$k});
	}
	return (\%s, \%pid);
}

# waiter(W, HOW, KEY): on server b, an exclusive waiter on /crash/HOW/KEY,
# queued behind a's hold, as $W->{KEY}
sub waiter
{
	my ($w, $how, $k) = @_;
	$w->{$k} = $nb->background_psql('postgres', on_error_stop => 0);
	bg_begin($w->{$k}, "SELECT zk_lock('/crash/$how/$k')", "granted_$k");
	wait_queue_len($nb, "/crash/$how/$k", 2, 10, "b's waiter on $k queued");
	return;
}

# grant_times(WAITERS, T0, SECS, KEYS): poll the waiters of KEYS together
# until each is granted (at most SECS); returns key -> seconds after T0 at
# which each was first seen granted (undef if not)
sub grant_times
{
	my ($w, $t0, $secs, @keys) = @_;
	my %at;
	wait_for(
		sub {
			for my $k (grep { !defined $at{$_} } @keys)
			{
				$at{$k} = time() - $t0 if bg_done($w->{$k}, "granted_$k");
			}
			return !grep { !defined $at{$_} } @keys;
		},
		$secs, "the waiters on @keys granted");
	return %at;
}

# lease_node_held(HOW): the lease's node is in the queue of its path, as a
# granted lease (seen from b)
sub lease_node_held
{
	my ($how) = @_;
	return $nb->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE granted AND lease_expires_at IS NOT NULL)
		 FROM zk_lock_queue('/crash/$how/l')") eq '1';
}

# crash_round(HOW): holds on a, waiters on b, then a's postmaster killed
# (HOW kill9) or stopped with -m immediate (HOW immediate); then a is
# restarted and takes every lock
sub crash_round
{
	my ($how) = @_;
	my @keys = ('s', 'x', 'r', ($how eq 'kill9' ? 'busy' : ()));
	my ($s, $pid) = holders($how, @keys);
	my %w;
	waiter(\%w, $how, $_) for @keys;
	# the lease last, so that its ttl outlasts the session timeout
	$s->{l} = $na->background_psql('postgres', on_error_stop => 0);
	$pid->{l} = $s->{l}->query_safe('SELECT pg_backend_pid()');
	my $t_lease = time();
	$s->{l}->query_safe("SELECT zk_lease_lock('/crash/$how/l', '${ttl_s}s')");
	waiter(\%w, $how, 'l');
	my ($busy_s, $t_busy) = ($session_s + 6);
	if ($how eq 'kill9')
	{
		# a statement that never waits on a latch, so never sees the
		# postmaster's death
		$t_busy = time();    # before the statement starts: ends no sooner than busy_s after this
		bg_begin($s->{busy},
			"DO \$\$BEGIN WHILE clock_timestamp() < now() + interval '$busy_s s' LOOP END LOOP; END\$\$",
			'busy_done');
		wait_active($na, $pid->{busy});
	}

	my $t0 = time();
	if ($how eq 'kill9') { $na->kill9; }
	else { $na->stop('immediate'); }
	my %at = grant_times(\%w, $t0, $session_s + 3, qw(s x r));
	my $freed = (sort { $b <=> $a } map { $at{$_} // 999 } qw(s x r))[0];
	figure("${how}_free_s" => sprintf('%.2f', $freed));
	note(sprintf("after $how: b granted the session lock %.2f s, the transaction lock %.2f s, the shared lock %.2f s later",
			map { $at{$_} // -1 } qw(s x r)));
	if ($how eq 'kill9')
	{
		cmp_ok($freed, '<', $session_s / 2,
			'SIGKILL of the postmaster: the idle holders exit and close their sessions: '
			  . 'b is granted the session, transaction and shared locks within half the session timeout (no expiry can be that early)');
		ok(wait_for(sub { !grep { alive($pid->{$_}) } qw(s x r l) }, 5,
				'the idle backends exit'),
			'the idle backends have exited');
	}
	# once the ephemeral holds are free and their backends gone (the
	# lease's among them), the lease's node is still there
	ok(!bg_done($w{l}, 'granted_l') && lease_node_held($how),
		sprintf("$how: the lease's node stays (%.1f s after the lease, ttl %d s)",
			time() - $t_lease, $ttl_s));
	if ($how eq 'kill9')
	{
		# the busy orphan, past the session timeout: alive, lock held
		wait_for(sub { time() - $t0 > $session_s + 1 }, $session_s + 2,
			'the session timeout');
		ok(alive($pid->{busy}) && time() - $t_busy < $busy_s,
			'the busy backend lives on as an orphan past the session timeout');
		ok(!bg_done($w{busy}, 'granted_busy'),
			'and keeps its lock: its ZooKeeper session is alive');
	}
	else
	{
		cmp_ok($freed, '<', $session_s + 3,
			'pg_ctl stop -m immediate: b is granted the session, transaction and shared locks within the session timeout + 3 s');
		cmp_ok($freed, '>', $session_s / 2,
			'by the expiry of the sessions (not before half the session timeout: the backends did not close them)');
	}

	%at = (%at, grant_times(\%w, $t0, $ttl_s + 10, grep { !defined $at{$_} } @keys, 'l'));
	my $lease_s = ($at{l} // 999) + $t0 - $t_lease;
	figure("${how}_lease_free_s" => sprintf('%.2f', $lease_s));
	cmp_ok($lease_s, '>=', $ttl_s, "$how: the lease went no sooner than its ttl");
	cmp_ok($lease_s, '<', $ttl_s + 1 + 3,
		"$how: and within its ttl + the reaper's interval (1 s) + 3 s");
	if ($how eq 'kill9')
	{
		my $ended = $busy_s - ($t0 - $t_busy);
		figure(kill9_orphan_free_s => sprintf('%.2f', $at{busy} // -1));
		cmp_ok($at{busy} // 999, '>=', $ended,
			"the orphan's lock is granted to b only once its statement ended ("
			  . sprintf('%.1f s after the kill)', $ended));
		cmp_ok($at{busy} // 999, '<', $ended + 3, 'and within 3 s of that');
		ok(wait_for(sub { !alive($pid->{busy}) }, 5, 'the orphan exits'),
			'the orphan exited');
	}
	# their psql may have exited already (a write to it fails then)
	eval { $_->quit; 1 } for values %$s;

	# the restarted server
	ok(wait_for(sub { !grep { alive($_) } values %$pid }, 30,
			"a's old backends gone"),
		"$how: every backend of the old server a has exited");
	$na->start;
	for my $k (sort keys %w)
	{
		bg_finish($w{$k}, "granted_$k");
		$w{$k}->quit;
	}
	my $paths = join(',', map { "'/crash/$how/$_'" } sort keys %w);
	is($na->safe_psql('postgres',
			"SELECT bool_and(zk_try_lock(p, 5000)) FROM unnest(ARRAY[$paths]) p"),
		't', "$how: the restarted server a takes every lock once b's backends released them");
	my $tok = $na->safe_psql('postgres',
		"SELECT zk_lease_lock('/crash/$how/l', '1 min')");
	is($na->safe_psql('postgres', "SELECT zk_lease_unlock('/crash/$how/l', $tok)"),
		't', "$how: and takes and releases a lease");
	my $left;
	ok(wait_for(sub { ($left = zk_nodes_under($zk, '/zklock')) eq '' }, 20,
			'every node under the root gone'),
		"$how: once everything is released, no node is left under the root");
	diag("left:\n$left") if $left ne '';
	figure("${how}_nodes_left" => scalar(grep { $_ ne '' } split /\n/, $left));
	return;
}

crash_round('kill9');
crash_round('immediate');
note(sprintf('crash rounds: %.1f s', time() - $t_start));

# held_from(NODE, DB, PATHS): each of PATHS, as "path:t" if another
# backend of NODE (database DB) can take it now, "path:f" if not
sub held_from
{
	my ($node, $db, @paths) = @_;
	return join(',',
		map { "$_:" . $node->safe_psql($db, "SELECT zk_try_lock('$_')") }
		  @paths);
}

# --- DROP EXTENSION while backends hold locks: it succeeds, the locks stay
{
	$nb->safe_psql('postgres', 'CREATE DATABASE dropdb');
	$nb->safe_psql('dropdb', 'CREATE EXTENSION zklock');
	my $h = verbose_session($nb, 'dropdb');
	$h->query_safe(q{SELECT zk_lock('/drop/s'), zk_rlock('/drop/r')});
	my $x = verbose_session($nb, 'dropdb');
	$x->query_safe(q{BEGIN; SELECT zk_xact_lock('/drop/x')});
	my $e = verbose_session($nb, 'dropdb');
	my $epid = $e->query_safe('SELECT pg_backend_pid()');
	$e->query_safe(q{SELECT zk_lock('/drop/e')});
	my $d = verbose_session($nb, 'dropdb');
	$d->query_safe(q{SELECT zk_lock('/drop/d')});
	my ($out, $err) = bg_query($d, 'DROP EXTENSION zklock');
	is($err, '', 'DROP EXTENSION zklock succeeds while this and other backends hold locks');
	my @all = map { "/drop/$_" } qw(s r x e d);
	is(held_from($na, 'postgres', @all), join(',', map { "$_:f" } @all),
		'every lock stays held (another server cannot take them)');
	($out, $err) = bg_query($h, q{SELECT zk_unlock('/drop/s')});
	error_is($err, '42883', qr/function zk_unlock\(unknown\) does not exist/,
		'a holder can no longer call zk_unlock (42883)');
	is($x->query_safe('COMMIT'), '', 'a holder of a transaction lock commits');
	is(held_from($na, 'postgres', '/drop/x'), '/drop/x:t',
		'its transaction lock went at COMMIT');
	$na->safe_psql('postgres', q{SELECT zk_unlock('/drop/x')});
	$h->query_safe('DISCARD ALL');
	is(held_from($na, 'postgres', '/drop/s', '/drop/r'), '/drop/s:t,/drop/r:t',
		'DISCARD ALL releases the session locks of a holder');
	$na->safe_psql('postgres', q{SELECT zk_unlock_all()});
	is($nb->safe_psql('postgres', "SELECT pg_terminate_backend($epid)"), 't',
		'pg_terminate_backend of a holder');
	ok(wait_queue_len($na, '/drop/e', 0, 10, 'the terminated holder released'),
		'frees its lock (its exit closes its ZooKeeper session)');
	$d->query_safe('CREATE EXTENSION zklock');
	is($d->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}), '/drop/d',
		'after CREATE EXTENSION again, zk_locks shows the hold taken before the DROP');
	is($d->query_safe(q{SELECT zk_unlock('/drop/d')}), 't', 'and zk_unlock releases it');
	ok(wait_queues_empty($na, \@all, 10, 'the drop queues empty'), 'nothing is left');
	$_->quit for ($h, $x, $d);
	$e->{run}->kill_kill;
}

# --- ALTER EXTENSION UPDATE from another session while a backend holds locks
{
	$na->safe_psql('postgres', 'CREATE DATABASE upd');
	$na->safe_psql('upd', q{CREATE EXTENSION zklock VERSION '1.0'});
	my $h = verbose_session($na, 'upd');
	$h->query_safe(q{SELECT zk_lock('/upd/s'), zk_rlock('/upd/r')});
	$h->query_safe(q{BEGIN; SELECT zk_xact_lock('/upd/x')});
	my ($out, $err) = ('', '');
	$na->psql('upd', 'ALTER EXTENSION zklock UPDATE', stdout => \$out,
		stderr => \$err, timeout => 30);
	is($err, '', 'ALTER EXTENSION zklock UPDATE from 1.0, from another session, while a backend holds locks');
	is($na->safe_psql('upd', q{SELECT extversion <> '1.0' FROM pg_extension WHERE extname = 'zklock'}),
		't', 'the extension is updated');
	my @all = map { "/upd/$_" } qw(s r x);
	is(held_from($nb, 'postgres', @all), join(',', map { "$_:f" } @all),
		'the locks stay held');
	is($h->query_safe(q{SELECT string_agg(path || ':' || mode || ':' || scope, ',' ORDER BY path) FROM zk_locks}),
		'/upd/r:shared:session,/upd/s:exclusive:session,/upd/x:exclusive:transaction',
		"the holder's zk_locks lists them");
	$h->query_safe('COMMIT');
	is($h->query_safe(q{SELECT zk_unlock('/upd/s'), zk_unlock('/upd/r')}), 't|t',
		'the holder releases them with the updated functions');
	ok(wait_queues_empty($nb, \@all, 10, 'the update queues empty'), 'nothing is left');
	$h->quit;
}

# --- a rolling upgrade: servers at versions 1.0 and the newest share a queue
{
	$na->safe_psql('postgres', 'CREATE DATABASE roll');
	$na->safe_psql('roll', q{CREATE EXTENSION zklock VERSION '1.0'});
	my $va = $na->safe_psql('roll', q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'});
	my $vb = $nb->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'});
	isnt($va, $vb, "server a's database at $va, server b's at $vb");
	my %c = (
		a1 => [ $na, 'roll' ], b1 => [ $nb, 'postgres' ],
		a2 => [ $na, 'roll' ], b2 => [ $nb, 'postgres' ]);
	my (%s, %pid);
	for my $k (qw(a1 b1 a2 b2))
	{
		$s{$k} = $c{$k}[0]->background_psql($c{$k}[1], on_error_stop => 0);
		$pid{$k} = $s{$k}->query_safe('SELECT pg_backend_pid()');
	}
	$s{a1}->query_safe(q{SELECT zk_lock('/roll/q')});
	my $n = 1;
	for my $k (qw(b1 a2 b2))
	{
		bg_begin($s{$k}, q{SELECT zk_lock('/roll/q')}, "got_$k");
		wait_queue_len($nb, '/roll/q', ++$n, 10, "$k queued");
	}
	my $row = q{string_agg(cluster_name || ':' || pid || ':' || granted, ',' ORDER BY position)};
	my $expect = join(',', "a:$pid{a1}:true", "b:$pid{b1}:false", "a:$pid{a2}:false", "b:$pid{b2}:false");
	is($na->safe_psql('roll', "SELECT $row FROM zk_lock_queue('/roll/q')"), $expect,
		"zk_lock_queue on a ($va) shows the queue of both servers, in order");
	is($nb->safe_psql('postgres', "SELECT $row FROM zk_lock_queue('/roll/q')"), $expect,
		"zk_lock_queue on b ($vb) shows the same");
	is($nb->safe_psql('postgres', q{SELECT holders || ':' || waiters FROM zk_cluster_locks WHERE path = '/roll/q'}),
		'1:3', "zk_cluster_locks on b ($vb): one holder, three waiters");
	my @order;
	my @waiting = qw(b1 a2 b2);
	my $holder = 'a1';
	my $exclusive = 1;
	my $listed = 1;
	while (@waiting)
	{
		$s{$holder}->query_safe(q{SELECT zk_unlock('/roll/q')});
		my $next;
		wait_for(sub { ($next) = grep { bg_done($s{$_}, "got_$_") } @waiting }, 10,
			'the next waiter granted');
		last unless defined $next;
		push @order, $next;
		@waiting = grep { $_ ne $next } @waiting;
		bg_finish($s{$next}, "got_$next");
		# one holder at a time: the others still wait, and no other backend
		# of either server can take the lock
		$exclusive &&= !grep { bg_done($s{$_}, "got_$_") } @waiting;
		$exclusive &&= $na->safe_psql('roll', q{SELECT zk_try_lock('/roll/q')}) eq 'f';
		$exclusive &&= $nb->safe_psql('postgres', q{SELECT zk_try_lock('/roll/q')}) eq 'f';
		# the holder's own view, on either version
		$listed &&= $s{$next}->query_safe(
			q{SELECT count(*) FROM zk_locks WHERE path = '/roll/q' AND mode = 'exclusive'})
		  eq '1';
		$listed &&= $s{$next}->query_safe(q{SELECT locks_held FROM zk_session()}) eq '1';
		$holder = $next;
	}
	ok($exclusive, 'each grant leaves the others waiting, and neither server can take the lock meanwhile');
	ok($listed, "each holder's zk_locks and zk_session() show its hold, on both versions");
	is(join(' ', @order), 'b1 a2 b2', 'granted in queue order across the two versions');
	$s{b2}->query_safe(q{SELECT zk_unlock('/roll/q')});
	ok(wait_queues_empty($nb, ['/roll/q'], 10, 'the rolling queue empty'), 'nothing is left');
	$_->quit for values %s;
}

note(sprintf('runtime: %.1f s', time() - $t_start));
done_testing();
