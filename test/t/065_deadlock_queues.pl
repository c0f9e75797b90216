# Deadlock detection reads each queue once and leaves out the nodes that
# cannot lead anywhere new: a zklock node whose name says its owner waits
# with it, in that queue alone, while a writer behind it waits.  These
# cycles pass through queues where such leaving out would be wrong if it
# went one step further, and each must still be found, with the shortest
# cycle named and one victim:
# - a writer behind two waiters of its queue, whose holder waits for the
#   writer: the holder's node leads on (a holder is never left out), the
#   waiters between do not appear in the cycle;
# - a reader behind a writer that has not published its wait (its
#   deadlock_timeout is a minute): that writer cannot stand for the nodes
#   ahead of it, so the reader's check goes on past it to the holder;
# - a writer behind a set of two locks that waits in another queue for
#   the writer: a set's node leads on through the set's other queue (its
#   name says two queues), and is not left out.
# In each case the members other than the victim are still waiting and
# saw no 40P01, and nothing is left once every session has let go.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $conf = "deadlock_timeout = '200ms'\nmax_connections = 30\n"
  . "log_error_verbosity = verbose\nlog_lock_waits = on\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

# session(NODE, DEADLOCK_TIMEOUT): a session and its backend's pid
sub session
{
	my ($node, $timeout) = @_;
	my $s = verbose_session($node);
	$s->query_safe("SET deadlock_timeout = '$timeout'");
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# detail_members(ERR): how many members a 40P01's DETAIL names
sub detail_members
{
	my ($err) = @_;
	my @m = $err =~ /^\s*(?:DETAIL:  )?Process \d+ on server "\w+" waits for /mg;
	return scalar @m;
}

# let_go(SESSIONS...): each session releases all it holds, in order, and
# quits
sub let_go
{
	my @sessions = @_;
	for my $s (@sessions)
	{
		$s->query_safe('SELECT zk_unlock_all()');
		$s->quit;
	}
}

# --- a writer behind two waiters; the holder waits for the writer
{
	my ($h, $hpid) = session($na, '2s');
	my ($w1) = session($na, '200ms');
	my ($w2) = session($nb, '200ms');
	my ($v, $vpid) = session($nb, '200ms');
	$h->query_safe(q{SELECT zk_lock('/dq/x')});
	$v->query_safe(q{SELECT zk_lock('/dq/y')});
	bg_begin($w1, q{SELECT zk_lock('/dq/x') > 0 AS got}, 'w1_done');
	ok(wait_queue_len($na, '/dq/x', 2, 10, 'w1 queued'), 'writer: first waiter queued');
	bg_begin($w2, q{SELECT zk_lock('/dq/x') > 0 AS got}, 'w2_done');
	ok(wait_queue_len($na, '/dq/x', 3, 10, 'w2 queued'), 'writer: second waiter queued');
	my $off = -s $nb->logfile;
	bg_begin($v, q{SELECT zk_lock('/dq/x') > 0 AS got}, 'v_done');
	ok(deadlock_checked($nb, $vpid, $off), 'writer: the writer checked and found no cycle yet');
	bg_begin($h, q{SELECT zk_lock('/dq/y') > 0 AS got}, 'h_done');
	my ($out, $err) = bg_finish($h, 'h_done');
	error_is($err, '40P01', qr/deadlock detected\n/,
		'writer: the holder, which published last, gets 40P01');
	is(detail_members($err), 2,
		'writer: the cycle named is the holder and the writer, not the waiters between');
	like($err, qr/Process $hpid on server "a" waits for exclusive ZooKeeper lock "\/dq\/y"; blocked by process $vpid on server "b"/,
		'writer: the holder waits for the writer');
	ok(!bg_done($v, 'v_done') && !bg_done($w1, 'w1_done') && !bg_done($w2, 'w2_done'),
		'writer: the others still wait, no 40P01');
	let_go($h);
	for ([ $w1, 'w1_done' ], [ $w2, 'w2_done' ], [ $v, 'v_done' ])
	{
		my ($s, $m) = @$_;
		my ($o, $e) = bg_finish($s, $m);
		like($o, qr/\bt\b/, "writer: $m: granted in turn");
		unlike($e, qr/deadlock/, "writer: $m: no 40P01");
		let_go($s);
	}
	ok(wait_queues_empty($na, [ '/dq/x', '/dq/y' ], 10, 'queues'), 'writer: no queue node is left');
}

# --- a reader behind a writer that has not published its wait
{
	my ($h, $hpid) = session($na, '200ms');
	my ($p) = session($nb, '60s');
	my ($r, $rpid) = session($nb, '1500ms');
	$h->query_safe(q{SELECT zk_lock('/dr/x')});
	$r->query_safe(q{SELECT zk_lock('/dr/y')});
	bg_begin($p, q{SELECT zk_lock('/dr/x') > 0 AS got}, 'p_done');
	ok(wait_queue_len($na, '/dr/x', 2, 10, 'p queued'), 'reader: the writer queued');
	bg_begin($r, q{SELECT zk_rlock('/dr/x') > 0 AS got}, 'r_done');
	ok(wait_queue_len($na, '/dr/x', 3, 10, 'r queued'), 'reader: the reader queued behind it');
	my $off = -s $na->logfile;
	bg_begin($h, q{SELECT zk_lock('/dr/y') > 0 AS got}, 'h_done');
	ok(deadlock_checked($na, $hpid, $off),
		'reader: the holder checked first and found no cycle (the reader had not published)');
	my ($out, $err) = bg_finish($r, 'r_done');
	error_is($err, '40P01', qr/deadlock detected\n/,
		'reader: the reader, which published last, finds the cycle past the unpublished writer');
	is(detail_members($err), 2, 'reader: the cycle named is the reader and the holder');
	like($err, qr/Process $rpid on server "b" waits for shared ZooKeeper lock "\/dr\/x"; blocked by process $hpid on server "a"/,
		'reader: the reader waits for the holder');
	ok(!bg_done($p, 'p_done'), 'reader: the writer that never published still waits');
	ok(!bg_done($h, 'h_done'), 'reader: the holder still waits: the victim keeps its session locks');
	let_go($r);
	my ($ho, $he) = bg_finish($h, 'h_done');
	like($ho, qr/\bt\b/, 'reader: the holder gets the lock the victim let go');
	unlike($he, qr/deadlock/, 'reader: and saw no 40P01');
	let_go($h);
	my ($po, $pe) = bg_finish($p, 'p_done');
	like($po, qr/\bt\b/, 'reader: the writer is granted in turn');
	let_go($p);
	ok(wait_queues_empty($na, [ '/dr/x', '/dr/y' ], 10, 'queues'), 'reader: no queue node is left');
}

# --- a writer behind a set of two locks, which waits for the writer
{
	my ($h) = session($na, '200ms');
	my ($s, $spid) = session($na, '200ms');
	my ($w, $wpid) = session($nb, '200ms');
	$h->query_safe(q{SELECT zk_lock('/ds/x')});
	$w->query_safe(q{SELECT zk_lock('/ds/z')});
	my $off = -s $na->logfile;
	bg_begin($s, q{SELECT zk_lock(ARRAY['/ds/x', '/ds/z']) > 0 AS got}, 's_done');
	ok(deadlock_checked($na, $spid, $off), 'set: the set checked and found no cycle yet');
	bg_begin($w, q{SELECT zk_lock('/ds/x') > 0 AS got}, 'w_done');
	my ($out, $err) = bg_finish($w, 'w_done');
	error_is($err, '40P01', qr/deadlock detected\n/,
		'set: the writer behind the set gets 40P01');
	is(detail_members($err), 2, 'set: the cycle named is the writer and the set');
	like($err, qr/Process $wpid on server "b" waits for exclusive ZooKeeper lock "\/ds\/x"; blocked by process $spid on server "a"/,
		"set: the writer waits for the set's node");
	like($err, qr/Process $spid on server "a" waits for exclusive ZooKeeper lock "\/ds\/z"; blocked by process $wpid on server "b"/,
		"set: the set waits in its other queue for the writer");
	ok(!bg_done($s, 's_done'), 'set: the set still waits');
	let_go($w, $h);
	my ($so, $se) = bg_finish($s, 's_done');
	like($so, qr/\bt\b/, 'set: the set gets both locks');
	unlike($se, qr/deadlock/, 'set: and saw no 40P01');
	let_go($s);
	ok(wait_queues_empty($na, [ '/ds/x', '/ds/z' ], 10, 'queues'), 'set: no queue node is left');
}

ok(wait_for(sub { published_waits($zk) eq '0' }, 10, 'records'), 'no published wait is left');

done_testing();
