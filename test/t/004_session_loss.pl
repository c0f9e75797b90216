# Loading starts nothing; losing the session is reported, never ignored.
#
# - shared_preload_libraries: no thread in the postmaster, none in a
#   backend before its first zklock call, no ZooKeeper connection either;
#   the client library logs nothing below error level.
# - A holder frozen with SIGSTOP past its session timeout: another server
#   gets the lock; when the holder wakes, its next statement (even one that
#   does not call zklock: its COMMIT finds the session expired) names the
#   lost locks (08006), and the call after that works on a fresh session.
# - The same with a transaction lock and a write: COMMIT fails and nothing
#   the transaction wrote becomes visible.
# - zklock.verify_on_commit: COMMIT fails when the node was deleted behind
#   the session's back (and without it, once the loss watch has seen the
#   deletion), its CONTEXT line naming the lock ("while verifying lock");
#   taking a lock known to be lost again names the acquisition.
# - ZooKeeper stopped while a backend waits: 08006 once the connection has
#   been gone for the session timeout.  A release sent while ZooKeeper is
#   down waits for it up to zklock.connect_timeout, warns, and is
#   delivered when it is back.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
my $a = pg_with_zklock('a', $zk,
	"shared_preload_libraries = 'zklock'\nzklock.session_timeout = '2s'\n");
my $b = pg_with_zklock('b', $zk);

sub threads_of
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/status" or return -1;
	while (<$fh>) { return $1 if /^Threads:\s+(\d+)/; }
	return -1;
}

# --- loading starts nothing
is(threads_of($a->{_pid}), 1, 'the postmaster (library preloaded) runs one thread');
my $conns_before = zk_mntr($port)->{zk_num_alive_connections};
# (sessions whose errors are checked print them with their SQLSTATE)
sub verbose
{
	my ($session) = @_;
	$session->query_safe('\set VERBOSITY verbose');
	return $session;
}

my $s = verbose($a->background_psql('postgres', on_error_stop => 0));
my $spid = $s->query_safe('SELECT pg_backend_pid()');
is($s->query_safe('SELECT state FROM zk_session()'), 'closed',
	'a backend that has not locked anything has no session');
is(threads_of($spid), 1, 'and no extra thread');
is(zk_mntr($port)->{zk_num_alive_connections}, $conns_before,
	'and no ZooKeeper connection');
$s->query_safe(q{SELECT zk_lock('/loss/s')});
cmp_ok(threads_of($spid), '>', 1, 'the first lock starts the client library threads');
is(zk_mntr($port)->{zk_num_alive_connections}, $conns_before + 1,
	'and opens one connection');

# --- a frozen session holder loses its locks, and is told so
$s->query_safe(q{SELECT zk_rlock('/loss/s2')});
my $old_sid = $s->query_safe('SELECT session_id FROM zk_session()');
my $bw = $b->background_psql('postgres');
bg_begin($bw, q{SELECT zk_lock('/loss/s') > 0}, 'b_got_s');
ok(wait_queue_len($b, '/loss/s', 2, 10, 'B queued'), 'B waits for the lock A holds');

kill 'STOP', $spid;
my ($out) = bg_finish($bw, 'b_got_s');
like($out, qr/\bt\b/, "B gets the lock once the frozen holder's session expired");
kill 'CONT', $spid;

# The server deletes the expired session's nodes, and notifies the watches
# on them, before it drops the connection: the holder, woken, may hear of
# its watched nodes' deletion before it hears "expired".  Then its next
# statement names a node heard deleted, counting the others heard so; if
# it heard one only, the statement after names the rest; either way each
# lost lock is reported once, and the statements after run.
my ($res, $err) = bg_query($s, q{SELECT 1});
error_is($err, '08006',
	qr/(ZooKeeper session expired: 2 locks were lost|ZooKeeper lock "\/loss\/s2?" was lost)/,
	'its next statement, even one that does not call zklock, fails (08006), naming the lost locks');
my $reports = $err;
if ($err =~ /ZooKeeper lock "\/loss\/s2?" was lost/
	&& $err !~ /2 locks of this backend were lost that way/)
{
	($res, $err) = bg_query($s, q{SELECT 1});
	error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
		'one node heard deleted first: the next statement names the rest');
	$reports .= $err;
}
else
{
	pass('the expiry, or both deletions, heard first: one ERROR reports both');
}
like($reports, qr{(DETAIL:  Lost: "/loss/s" \(exclusive, session\), "/loss/s2" \(shared, session\)\.|/loss/s2?" was lost.*Lost: "/loss/s2?" \((exclusive|shared), session\)\.|/loss/s2?" was lost\n.*2 locks of this backend were lost that way)}s,
	'reporting each lost lock once');
($res, $err) = bg_query($s, q{SELECT zk_try_lock('/loss/unrelated')});
is($res, 't', 'the call after that works');
isnt($s->query_safe('SELECT session_id FROM zk_session()'), $old_sid,
	'on a new session');
is($s->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}),
	'/loss/unrelated', 'holding only what it took since');
$s->query_safe('SELECT zk_unlock_all()');
$bw->query_safe(q{SELECT zk_unlock('/loss/s')});

# --- a frozen transaction holder cannot commit
$a->safe_psql('postgres', 'CREATE TABLE work (who text)');
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/loss/x')});
$s->query_safe(q{INSERT INTO work VALUES ('frozen holder')});
bg_begin($bw, q{SELECT zk_lock('/loss/x') > 0}, 'b_got_x');
ok(wait_queue_len($b, '/loss/x', 2, 10, 'B queued'), 'B waits for the transaction lock');
kill 'STOP', $spid;
($out) = bg_finish($bw, 'b_got_x');
like($out, qr/\bt\b/, 'B gets the lock while the holder is frozen');
kill 'CONT', $spid;
($res, $err) = bg_query($s, 'COMMIT');
error_is($err, '08006', qr/(ZooKeeper session expired: 1 lock was lost|lost connection to ZooKeeper)/,
	'the woken holder cannot COMMIT: 08006');
is($a->safe_psql('postgres', 'SELECT count(*) FROM work'), '0',
	'nothing it wrote is visible');
$bw->query_safe(q{SELECT zk_unlock('/loss/x')});

# --- verify_on_commit: a node deleted behind our back fails the COMMIT
sub delete_node_externally
{
	my ($znode) = @_;
	kazoo_run($zk, "c.delete('$znode')");
}

# (with zklock.on_lock_loss = error, so that the deletion is met at COMMIT,
# not by the next statement; t/053 tests the cancel)
$s->query_safe('SET zklock.on_lock_loss = error');
for my $verify ('on', 'off')
{
	$a->safe_psql('postgres', 'TRUNCATE work');
	$s->query_safe("SET zklock.verify_on_commit = $verify");
	$s->query_safe('BEGIN');
	$s->query_safe(q{SELECT zk_xact_lock('/loss/v')});
	my $znode = $s->query_safe(q{SELECT znode FROM zk_locks});
	# without verify_on_commit, what COMMIT knows is what the loss watch
	# saw: the holder watches a node it has held for 250 ms, so the
	# deletion's notice comes ahead of any later answer
	ok(wait_for(sub { (zk_watches($zk)->{$znode} // 0) >= 1 }, 10,
			'the holder to watch its node'),
		"verify_on_commit = $verify: the holder watches its node")
	  if $verify eq 'off';
	delete_node_externally($znode);
	$s->query_safe(q{INSERT INTO work VALUES ('writer')});
	($res, $err) = bg_query($s, 'COMMIT');
	if ($verify eq 'on')
	{
		error_is($err, '08006', qr/ZooKeeper lock "\/loss\/v" was lost\nDETAIL:  [^\n]*\nCONTEXT:  while verifying lock "\/loss\/v"/,
			'verify_on_commit = on: COMMIT fails when the node is gone: 08006, CONTEXT naming the lock');
		is($a->safe_psql('postgres', 'SELECT count(*) FROM work'), '0',
			'and the write is not visible');
	}
	else
	{
		# a node held for 250 ms is watched (the loss watch): its deletion
		# is known before COMMIT without asking ZooKeeper there
		error_is($err, '08006', qr/ZooKeeper lock "\/loss\/v" was lost\nDETAIL:  [^\n]*\nCONTEXT:  while verifying lock "\/loss\/v"/,
			'verify_on_commit = off: COMMIT fails all the same, the deletion seen by the watch: 08006, CONTEXT naming the lock');
		is($a->safe_psql('postgres', 'SELECT count(*) FROM work'), '0',
			'and the write is not visible');
	}
	is($s->query_safe('SELECT count(*) FROM zk_locks'), '0', 'no lock is left held');
}
# the checks below are verify_on_commit's (the default is off)
$s->query_safe('SET zklock.verify_on_commit = on');

# a held node the first verification started watching, deleted later:
# the next writing COMMIT fails, after a mere sync
$a->safe_psql('postgres', 'TRUNCATE work');
$s->query_safe(q{SELECT zk_lock('/loss/watched')});
$s->query_safe(q{INSERT INTO work VALUES ('first')});
delete_node_externally($s->query_safe(q{SELECT znode FROM zk_locks}));
($res, $err) = bg_query($s, q{INSERT INTO work VALUES ('second')});
error_is($err, '08006', qr/ZooKeeper lock "\/loss\/watched" was lost/,
	'a watched held node deleted later fails the next writing COMMIT: 08006');
is($a->safe_psql('postgres', q{SELECT string_agg(who, ',') FROM work}),
	'first', 'only the write made while the lock existed is visible');
is($s->query_safe('SELECT count(*) FROM zk_locks'), '0', 'the lost lock is forgotten');

# a lock known to be lost: a stacking call on it fails, and a transaction
# that caught that error still cannot commit
$a->safe_psql('postgres', 'TRUNCATE work');
$s->query_safe(q{SELECT zk_lock('/loss/watched2')});
$s->query_safe(q{INSERT INTO work VALUES ('w2 first')});    # now watched
delete_node_externally($s->query_safe(q{SELECT znode FROM zk_locks}));
usleep(500_000);    # the deletion notice reaches the watch (no SQL shows it)
($res, $err) = bg_query(
	$s, q{BEGIN;
	INSERT INTO work VALUES ('w2 second');
	DO $$ DECLARE c text;
	      BEGIN PERFORM zk_lock('/loss/watched2');
	      EXCEPTION WHEN OTHERS THEN
	        GET STACKED DIAGNOSTICS c = PG_EXCEPTION_CONTEXT;
	        RAISE NOTICE 'caught: %: % [%]', SQLSTATE, SQLERRM, split_part(c, chr(10), 1); END $$;
	COMMIT});
like($err, qr/NOTICE:  00000: caught: 08006: ZooKeeper lock "\/loss\/watched2" was lost \[while acquiring lock "\/loss\/watched2"\]/,
	'taking a lock again that is known to be lost fails: 08006, CONTEXT naming the acquisition');
error_is($err, '08006', qr/cannot commit a transaction whose ZooKeeper locks were lost/,
	'and the transaction that caught the error cannot commit: 08006');
is($a->safe_psql('postgres', q{SELECT string_agg(who, ',') FROM work}),
	'w2 first', 'nothing it wrote is visible');

# a waiter whose own node another client deletes finds out at the handoff
# (it reads the queue again) instead of believing it holds the lock
my $g = verbose($a->background_psql('postgres', on_error_stop => 0));
my $gpid = $g->query_safe('SELECT pg_backend_pid()');
$bw->query_safe(q{SELECT zk_lock('/loss/gone')});
bg_begin($g, q{SELECT zk_lock('/loss/gone')}, 'gone_done');
ok(wait_queue_len($b, '/loss/gone', 2, 10, 'the waiter queued'), 'a waiter queues');
delete_node_externally('/zklock/loss/gone/'
	  . $b->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('/loss/gone') WHERE pid = $gpid"));
$bw->query_safe(q{SELECT zk_unlock('/loss/gone')});
($res, $err) = bg_finish($g, 'gone_done');
error_is($err, '55000',
	qr/ZooKeeper queue node "[^"]+" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for lock "\/loss\/gone"/,
	'the waiter whose node was deleted fails instead of taking the lock: 55000');
is($g->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and holds nothing');
ok(wait_queue_len($b, '/loss/gone', 0, 10, 'empty queue'), 'nothing is left in the queue');
$g->quit;

# many held locks: the first writing COMMIT asks about every node, in one
# pipelined round trip that may take longer than zklock.connect_timeout as
# long as ZooKeeper keeps answering; once the loss watch watches the nodes
# (it sets a node's watch 250 ms after it was taken), a COMMIT only syncs
# (taken without verification, so that the first verified COMMIT is the
# INSERT's)
$s->query_safe(q{SET zklock.verify_on_commit = off});
$s->query_safe(q{SET zklock.max_locks_per_backend = 3000});
$s->query_safe(q{SELECT count(zk_lock('/loss/many/' || i)) FROM generate_series(1, 3000) i});
$s->query_safe(q{SET zklock.connect_timeout = '100ms'});
my $tc = time();
($res, $err) = bg_query($s,
	q{BEGIN; SET LOCAL zklock.verify_on_commit = on; INSERT INTO work VALUES ('many'); COMMIT});
my $first_ms = 1000 * (time() - $tc);
is($err, '', 'with 3000 locks held, a writing COMMIT is confirmed despite a 100 ms connect_timeout');
ok(wait_for(sub { scalar(grep { m{^/zklock/loss/many/} } keys %{ zk_watches($zk) }) >= 3000 },
		30, 'the loss watch to watch the 3000 nodes'),
	'the loss watch watches every held node');
$tc = time();
($res, $err) = bg_query($s,
	q{BEGIN; SET LOCAL zklock.verify_on_commit = on; INSERT INTO work VALUES ('many again'); COMMIT});
my $next_ms = 1000 * (time() - $tc);
is($err, '', 'and so is the next one');
note(sprintf('writing COMMIT with 3000 locks held: first %.1f ms, next %.1f ms', $first_ms, $next_ms));
figure(verified_commit_first_ms => sprintf('%.0f', $first_ms),
	verified_commit_next_ms => sprintf('%.1f', $next_ms));
cmp_ok($next_ms, '<', $first_ms, 'which no longer asks about every node');
$s->query_safe(q{SELECT zk_unlock_all()});
$s->query_safe(q{RESET zklock.connect_timeout});
$s->query_safe(q{RESET zklock.max_locks_per_backend});
$s->query_safe(q{SET zklock.verify_on_commit = on});

# --- ZooKeeper stops while a backend waits
# (the holder's outage below must stay shorter than its session timeout, the
# stop included: out of touch for longer, a zklock call counts the session
# expired, as t/048 shows; 4 s is the test server's longest)
$s->query_safe(q{SET zklock.session_timeout = '4s'});
$s->query_safe(q{SELECT zk_lock('/loss/w')});
my $wb = verbose($b->background_psql('postgres', on_error_stop => 0));
$wb->query_safe(q{SET zklock.session_timeout = '2s'});
bg_begin($wb, q{SELECT zk_lock('/loss/w')}, 'w_done');
ok(wait_queue_len($b, '/loss/w', 2, 10, 'B queued'), 'B waits');

# a release while ZooKeeper is down waits for it up to connect_timeout,
# warns, and is delivered later; as the backend still holds a lock, the
# statement's COMMIT cannot confirm the session and fails
$s->query_safe(q{SELECT zk_lock('/loss/u')});
$s->query_safe(q{SET zklock.connect_timeout = '300ms'});
$s->query_safe(q{SET zklock.verify_on_commit = off});
my $t_stop = time();
zkctl('stop', $zk->{dir});
my $t0 = time();
($res, $err) = bg_query($s, q{SELECT zk_unlock('/loss/u')});
warning_is($err, '08006', qr/release of 1 ZooKeeper lock is not yet confirmed/,
	'zk_unlock while ZooKeeper is down warns (08006) that the release is not yet confirmed');
error_is($err, '08006', qr/could not confirm the ZooKeeper session before commit/,
	'and the statement cannot COMMIT while the backend holds another lock: 08006');
like($err, qr{DETAIL:  .*these locks may be lost: "/loss/w" \(exclusive, session\)},
	'naming the lock still held');
cmp_ok(1000 * (time() - $t_stop), '<', 6000,
	'within about the session timeout of the outage');

# a writing COMMIT that ZooKeeper cannot confirm fails too
$a->safe_psql('postgres', 'TRUNCATE work');
($res, $err) = bg_query($s, q{INSERT INTO work VALUES ('unconfirmed')});
error_is($err, '08006', qr/could not confirm the ZooKeeper session before commit/,
	'a writing COMMIT fails while ZooKeeper cannot confirm the session: 08006');
is($a->safe_psql('postgres', 'SELECT count(*) FROM work'), '0',
	'and its write is not visible');

($out, $err) = bg_finish($wb, 'w_done');
my $wait_ms = 1000 * (time() - $t_stop);
error_is($err, '08006', qr/lost connection to ZooKeeper\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while waiting for lock "\/loss\/w"/,
	'the waiter fails with a lost connection (08006), naming the operation and path');
note(sprintf('the waiter gave up %.0f ms after ZooKeeper stopped (session timeout 2 s)',
		$wait_ms));
figure(waiter_gave_up_ms => sprintf('%.0f', $wait_ms));
cmp_ok($wait_ms, '>', 1500, 'not before the session timeout');

zkctl('restart', $zk->{dir}, 1);
# (until the connection is back, a statement of the holder cannot commit)
ok( wait_for(sub { (bg_query($s, 'SELECT releases_pending FROM zk_session()'))[0] eq '0' },
		20, 'the pending release'),
	'the pending release is delivered once ZooKeeper is back');
is($s->query_safe('SELECT state FROM zk_session()'), 'connected',
	'the session survived the short outage');
is(queue_len($b, '/loss/u'), '0', 'and the released node is gone');
is($s->query_safe(q{SELECT string_agg(path, ',') FROM zk_locks}), '/loss/w',
	'the holder still holds its other lock');
$s->query_safe(q{SELECT zk_unlock('/loss/w')});
$s->query_safe(q{RESET zklock.connect_timeout});
ok(wait_queue_len($b, '/loss/w', 0, 20, 'empty queue'),
	"the failed waiter's node is gone too");

# --- the client library stayed quiet
my $log = slurp_file($a->logfile);
my @noise = grep { /ZOO_(INFO|DEBUG|WARN)/ } split /\n/, $log;
is(scalar(@noise), 0, 'the client library logged nothing below error level');

$s->quit;
$bw->quit;
$wb->quit;
$a->stop;
$b->stop;
done_testing();
