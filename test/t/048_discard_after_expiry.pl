# DISCARD ALL after the session expired warns, whether or not the backend
# has noticed the expiry yet.
#
# - A holder frozen with SIGSTOP past its session timeout (2 s): once
#   ZooKeeper has dropped its nodes (another backend sees the queue empty),
#   DISCARD ALL is sent to it and it is woken, so that it runs DISCARD ALL
#   at once, before its client library has reconnected and heard
#   "expired": a WARNING 08006 names the lost locks,
#   DISCARD ALL succeeds, and the next zklock call works on a new session.
# - The same after a pause, when the expiry has had time to be noticed: the
#   same WARNING.
# - ZooKeeper stopped while a backend holds a lock: once the backend has
#   been out of touch for longer than its session timeout, DISCARD ALL
#   counts the session expired (as every other zklock call does) and warns
#   with 08006, although the client library cannot have heard "expired"
#   from a server that is down.
# - zk_locks in the same state reports the lost lock (08006) instead of
#   listing it, and then lists nothing without opening a session, while
#   ZooKeeper is still down.
# - zk_unlock sent to a frozen holder in the same way (before its library
#   has heard "expired") does not report the lock released: its delete
#   finds the session expired, and it fails with 08006 naming the lost
#   locks; the next zklock call works on a new session.  A release of
#   several paths names the locks whose last hold it dropped and those
#   still held, never a path it did not hold.  The same for
#   pg_advisory_unlock of the zk_advisory schema.
# - A live session: DISCARD ALL releases without a WARNING (the control).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk, "zklock.session_timeout = '2s'\n");

# the rows of path's queue, seen by a fresh backend
sub queue_rows_of
{
	my ($path) = @_;
	return $a->safe_psql('postgres',
		"SELECT count(*) FROM zk_lock_queue('$path')");
}

# Freeze the backend of session s (which holds path) until ZooKeeper has
# expired its session and deleted its nodes.  'at once': DISCARD ALL is sent
# while the backend is still frozen, so that it is waiting in the socket
# when the backend wakes, before the client library has reconnected and
# heard "expired"; 'after a pause': the backend is woken, and DISCARD ALL
# sent 2 s later, when the library has long heard it.  Returns DISCARD
# ALL's (stdout, stderr).
sub discard_after_freeze
{
	my ($s, $path, $case, $sql) = @_;
	$sql //= 'DISCARD ALL';
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	kill 'STOP', $pid;
	ok(wait_for(sub { queue_rows_of($path) eq '0' }, 30,
			"the frozen backend's nodes on $path to go"),
		"$case: ZooKeeper expired the frozen backend's session");
	if ($case eq 'at once')
	{
		bg_begin($s, $sql, 'discard_done');
		# (psql sends the statement right after its \echo: give it that
		# moment, so that the statement is there when the backend wakes)
		usleep(300_000);
		kill 'CONT', $pid;
		return bg_finish($s, 'discard_done');
	}
	kill 'CONT', $pid;
	sleep(2);
	return bg_query($s, $sql);
}

# zk_unlock of a frozen holder, woken with the call waiting for it: holding
# that lock alone, and with another
for my $held ([ '/discard/u' ], [ '/discard/u', '/discard/v' ])
{
	my $case = 'unlock after the expiry, holding ' . scalar(@$held);
	my $s = verbose_session($a);
	$s->query_safe("SELECT zk_lock('$_')") for @$held;
	my ($out, $err) = discard_after_freeze($s, '/discard/u', 'at once',
		q{SELECT zk_unlock('/discard/u')});
	isnt($out, 't', "$case: not reported released");
	my $n = scalar(@$held);
	my $lost = join(', ', '"/discard/u"',
		map { "\"$_\" (exclusive, session)" } @$held[ 1 .. $#$held ]);
	my $all = join(', ', map { "\"$_\" (exclusive, session)" } @$held);
	# (the deletions' notices, read when the library wakes, may come first;
	# or the loss watch may stop the statement for the expiry, naming every
	# lock if it heard of it before the statement began, or the lock still
	# held if while the release waits: each is as true)
	error_is($err, '08006',
		qr{(?:ZooKeeper session expired: $n locks? (?:was|were) lost\nDETAIL:  Lost: \Q$lost\E\. The session expired before ZooKeeper applied their release\.|ZooKeeper lock "/discard/[uv]" was lost|ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "/discard/v" \(exclusive, session\)\. The statement was stopped|ZooKeeper session expired: $n locks? (?:was|were) lost\nDETAIL:  Lost: \Q$all\E\. The statement was stopped)},
		"$case: 08006 naming the lost locks");
	note("$case: $err");
	($out, $err) = bg_query($s, q{SELECT zk_try_lock('/discard/u')});
	is($out, 't', "$case: the next zklock call works");
	is($s->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}),
		'/discard/u', "$case: holding only what it took since");
	$s->query_safe('SELECT zk_unlock_all()');
	$s->quit;
}

# pg_advisory_unlock (the zk_advisory schema's) in the same way: the
# advisory release of a lock lost before ZooKeeper applied it is not
# reported released either
{
	my $case = 'pg_advisory_unlock after the expiry';
	my $s = verbose_session($a);
	# (the loss watch does not stop the statement: the release finds the
	# expiry)
	$s->query_safe(q{SET zklock.on_lock_loss = error});
	$s->query_safe(q{SELECT zk_advisory.pg_advisory_lock(7)});
	my ($out, $err) = discard_after_freeze($s, '/pg_advisory/postgres/7',
		'at once', q{SELECT zk_advisory.pg_advisory_unlock(7)});
	isnt($out, 't', "$case: not reported released");
	note("$case: $err");
	error_is($err, '08006',
		qr{ZooKeeper (?:session expired: 1 lock was lost|lock "/pg_advisory/postgres/7" was lost)},
		"$case: 08006 naming the lost lock");
	$s->query_safe('SELECT zk_unlock_all()');
	$s->quit;
}

# The same with a release of several paths: one whose last hold it drops,
# one held twice (one hold is left), one not held.  The locks lost before
# their release are the first (named alone) and the second (still held,
# named with its mode); the third was not held and is not named.
{
	my $case = 'unlock of three paths after the expiry';
	my $s = verbose_session($a);
	# (the loss watch does not stop the statement: the release finds the
	# expiry)
	$s->query_safe(q{SET zklock.on_lock_loss = error});
	$s->query_safe("SELECT zk_lock('$_')")
	  for ('/discard/u', '/discard/v', '/discard/v');
	my ($out, $err) = discard_after_freeze($s, '/discard/u', 'at once',
		q{SELECT zk_unlock(ARRAY['/discard/u', '/discard/v', '/discard/w'])});
	isnt($out, 't', "$case: not reported released");
	note("$case: $err");
	if ($err =~ /The session expired before ZooKeeper applied their release/)
	{
		like($err,
			qr{ZooKeeper session expired: 2 locks were lost\nDETAIL:  Lost: "/discard/u", "/discard/v" \(exclusive, session\)\. The session expired},
			"$case: names the released lock and the one still held, once each"
		);
	}
	else
	{
		# the loss watch stopped the statement first (see above)
		error_is($err, '08006', qr{ZooKeeper (?:lock "/discard/[uv]" was lost|session expired)},
			"$case: 08006 naming a lost lock");
	}
	$s->query_safe('SELECT zk_unlock_all()');
	$s->quit;
}

for my $case ('at once', 'after a pause')
{
	my $s = verbose_session($a);
	my $old_sid;
	$s->query_safe(q{SELECT zk_lock('/discard/x')});
	$s->query_safe(q{SELECT zk_rlock('/discard/y')});
	$old_sid = $s->query_safe('SELECT session_id FROM zk_session()');
	is(queue_rows_of('/discard/x'), '1', "$case: the backend holds /discard/x");

	my ($out, $err) = discard_after_freeze($s, '/discard/x', $case);
	warning_is($err, '08006', qr/ZooKeeper session expired: 2 locks were lost/,
		"$case: DISCARD ALL after the expiry warns (08006), counting the lost locks");
	like($err, qr{DETAIL:  Lost: "/discard/x" \(exclusive, session\), "/discard/y" \(shared, session\)\.},
		"$case: and names them");
	unlike($err, qr/\bERROR:/, "$case: DISCARD ALL itself succeeds");

	($out, $err) = bg_query($s, q{SELECT zk_try_lock('/discard/z')});
	is($out, 't', "$case: the next zklock call works");
	is($err, '', "$case: without an ERROR");
	isnt($s->query_safe('SELECT session_id FROM zk_session()'), $old_sid,
		"$case: on a new session");
	is($s->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}),
		'/discard/z', "$case: holding only what it took since");
	$s->query_safe('SELECT zk_unlock_all()');
	$s->quit;
}

# --- out of touch past the session timeout, ZooKeeper down
{
	my $s = verbose_session($a);
	# (the statement below is not to be cancelled by the out-of-touch rule
	# first: t/053 tests that; here its COMMIT's own wait is tested)
	$s->query_safe(q{SET zklock.on_lock_loss = error});
	$s->query_safe(q{SELECT zk_lock('/discard/down')});
	zkctl('stop', $zk->{dir});
	# any statement's COMMIT must confirm the session first; with ZooKeeper
	# down it waits until the session could have expired, and gives up:
	# from then on the session has been out of touch for longer than its
	# timeout
	my ($out, $err) = bg_query($s, 'SELECT 1');
	error_is($err, '08006', qr/could not confirm the ZooKeeper session before commit/,
		'ZooKeeper stopped: a statement waits for the session as long as it could live, and fails (08006)');
	($out, $err) = bg_query($s, 'DISCARD ALL');
	warning_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
		'DISCARD ALL out of touch past the session timeout warns (08006)');
	like($err, qr{DETAIL:  Lost: "/discard/down" \(exclusive, session\)\.},
		'naming the lock');
	unlike($err, qr/\bERROR:/, 'DISCARD ALL itself succeeds');
	zkctl('restart', $zk->{dir}, 1);
	# a restarted server restores the old session and expires it a session
	# timeout later, its node with it: the lock is free then
	($out, $err) = bg_query($s, q{SELECT zk_try_lock('/discard/down', 20000)});
	is($out, 't', 'once ZooKeeper is back, the next call takes the lock on a new session');
	is($err, '', 'without an ERROR or a WARNING');
	is($s->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}),
		'/discard/down', 'holding only what it took since');
	$s->query_safe('SELECT zk_unlock_all()');
	$s->quit;
}

# --- zk_locks out of touch past the session timeout, ZooKeeper down: it
#     reports the lost lock as every zklock call does, and then lists what
#     the backend holds without a server
{
	my $s = verbose_session($a);
	$s->query_safe(q{SET zklock.on_lock_loss = error});
	$s->query_safe(q{SELECT zk_lock('/discard/listed')});
	zkctl('stop', $zk->{dir});
	my ($out, $err) = bg_query($s, 'SELECT 1');
	error_is($err, '08006', qr/could not confirm the ZooKeeper session before commit/,
		'zk_locks: the session is out of touch past its timeout');
	($out, $err) = bg_query($s, 'SELECT count(*) FROM zk_locks');
	error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
		'zk_locks then reports the lost lock (08006), not a held one');
	like($err, qr{DETAIL:  Lost: "/discard/listed" \(exclusive, session\)\.},
		'naming it');
	($out, $err) = bg_query($s, 'SELECT count(*) FROM zk_locks');
	is($out, '0', 'and lists nothing afterwards, with ZooKeeper still down');
	is($err, '', 'without trying to open a session (no 08001)');
	zkctl('restart', $zk->{dir}, 1);
	$s->quit;
}

# --- the control: a live session's DISCARD ALL releases without a WARNING
{
	my $s = verbose_session($a);
	$s->query_safe(q{SELECT zk_lock('/discard/live')});
	my ($out, $err) = bg_query($s, 'DISCARD ALL');
	is($err, '', 'DISCARD ALL on a live session says nothing');
	is(queue_rows_of('/discard/live'), '0', 'and released the lock');
	$s->quit;
}

done_testing();
