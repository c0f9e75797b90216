# Error paths of doc/reference.md's "Errors" table, triggered against real
# servers and checked by SQLSTATE and message.
#
# - A backend that holds no lock, frozen (SIGSTOP) while it waits past its
#   session timeout: when it wakes, its wait fails with 08006 "ZooKeeper
#   session expired", CONTEXT while waiting for lock (with a lock held, the error
#   would name the lost locks instead).
# - zklock.verify_on_commit: a COMMIT while ZooKeeper is frozen (SIGSTOP,
#   the connection stays up, the session does not expire) fails after
#   zklock.connect_timeout with 08006 "could not confirm ZooKeeper locks
#   before commit", naming the lock, and returns within 1 s of that while
#   ZooKeeper is still frozen: the abort's release does not wait out the
#   silence again (WARNING 08006 "not yet confirmed", the delete goes on
#   in the background and lands once ZooKeeper answers).
# - A ZooKeeper result code zklock has no case for (a lock node that is
#   another client's ephemeral node: ZNOCHILDRENFOREPHEMERALS): 58000
#   "ZooKeeper error", CONTEXT while acquiring lock, ZooKeeper's name for
#   the error, its code and the client library's text as DETAIL.
# - A multi-lock whose nodes another client deletes: while the set waits,
#   the node it waits with: 55000 naming that queue node; after a set's
#   create whose answer was lost (the proxy cuts the connection after
#   forwarding it), part of the set: 55000 "queue nodes of a multi-lock
#   disappeared".
# - A semaphore acquirer waiting for the lease count (it holds the mutex)
#   whose mutex node another client deletes: 55000 naming that node once
#   the holder releases, instead of the lease; and at once when the next
#   acquirer takes the free mutex and counts beside it (each would count
#   the other's lease, and neither get one).  Another backend then gets
#   the one lease, and nothing is left behind.
# - A waiting lease whose waiter child, or whose node, another client
#   deletes: 55000 naming its node once the holder releases; another
#   backend then takes the lock alone.
# - A double barrier member whose node another client deletes while it
#   waits to enter: 55000 once the others open the barrier without it;
#   deleted after its look at the barrier, when its arrival completes the
#   count (the proxy holds its requests), so that its opening fails: 55000
#   instead of waiting; while it waits to leave (the lowest member, waiting
#   for the other): 55000 once the other has left, instead of true.
# - A transaction that took a lease, with zklock.verify_on_commit, whose
#   COMMIT finds ZooKeeper frozen (SIGSTOP): 08006 "could not confirm
#   ZooKeeper leases before commit" after zklock.connect_timeout; the
#   lease itself stays and is released by its token.
# - A barrier whose node has a lock path below it (a lock held there):
#   its removal is 55000 naming the barrier and its node; the barrier stays
#   up and the lock held; once the lock's node is reaped, it is removed.
# - A server run with lib/fault_preload.c as LD_PRELOAD, whose strdup and
#   OpenSSL RAND_bytes fail on demand as they do out of memory or entropy:
#   a waiter whose copy of the node it is about to watch cannot be made
#   fails with 53200 "out of memory" (zklock's report, CONTEXT while
#   waiting), its queue node deleted, and its next call works; a backend
#   whose first node name finds pg_strong_random failing gets XX000
#   "could not generate random values", having created nothing, and takes
#   the lock once random values are available again.
# - A server with digest authentication disabled refuses zklock.auth:
#   28000 "ZooKeeper authentication failed".
# - zklock.auth_file owned by another user (a symbolic link to a file of
#   root's: the test runs as the server's user and cannot chown): F0000;
#   a file of that user with mode 0000: 42501 "could not open".
# - A root whose deadlock records' parent (<root>.waits) admits reading
#   only: a wait that lasts deadlock_timeout fails with 42501, its queue
#   node goes, the holder and the session are unharmed.
# - A 2-cycle whose deadlock checks fall due while ZooKeeper is
#   unreachable (the proxy refuses connections): nothing is reported
#   during the outage, and exactly one member gets 40P01 once it is over.
# - A 2-cycle whose check loses its connection between publishing its
#   wait and reading the other member's (the proxy holds the read, then
#   cuts the connection): the check is made again, and 40P01 reported,
#   once the connection is back.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

my $zk = zk_standalone();
my $proxy = zk_proxy($zk);
my $pport = $proxy->{port};
my $pg = pg_with_zklock('a', $zk);

# (sessions whose errors are checked print them with their SQLSTATE)
sub verbose
{
	my ($session) = @_;
	$session->query_safe('\set VERBOSITY verbose');
	return $session;
}

sub session
{
	my $s = verbose($pg->background_psql('postgres', on_error_stop => 0));
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# finish_within(SESSION, MARKER, SECS, PID, WHAT): wait at most SECS for
# the statement started by bg_begin to end (cancelling it after that, so
# that a statement that never ends fails the test instead of hanging);
# returns (stdout, stderr).
sub finish_within
{
	my ($s, $marker, $secs, $pid, $what) = @_;
	my $done = wait_for(sub { bg_done($s, $marker) }, $secs, $what);
	$pg->safe_psql('postgres', "SELECT pg_cancel_backend($pid)") unless $done;
	my ($out, $err) = bg_finish($s, $marker);
	ok($done, "$what, within ${secs}s");
	return ($out, $err);
}

# a psql call in a new backend, verbose; returns its stderr
sub psql_err
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	$pg->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err);
	return $err;
}

# set_incomplete_is(SESSION, STDERR, PATH1, PATH2, NAME): the set on PATH1
# and PATH2 of SESSION failed with 55000 because one of its two nodes was
# deleted by another client, holds nothing, and left no node behind
sub set_incomplete_is
{
	my ($s, $err, $p1, $p2, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	error_is($err, '55000',
		qr/queue nodes of a multi-lock disappeared\nDETAIL:  Only 1 of the 2 nodes created together still exist; another client deleted the others\.\nCONTEXT:  while acquiring lock "\Q$p1\E"/,
		$name);
	is($s->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and holds nothing');
	ok(wait_queues_empty($pg, [ $p1, $p2 ], 10, 'empty queues'),
		'none of its nodes is left');
	return;
}

my ($h, $hpid) = session();    # holds the locks others wait for

# --- 08006: the session of a waiter that holds no lock expires
{
	my ($w, $wpid) = session();
	$w->query_safe(q{SET zklock.session_timeout = '2s'});
	$w->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_lock('/err/exp')});
	bg_begin($w, q{SELECT zk_lock('/err/exp')}, 'exp_done');
	ok(wait_queue_len($pg, '/err/exp', 2, 10, 'the waiter queued'),
		'a backend holding no lock waits for a lock');
	kill 'STOP', $wpid;
	# the server expires the frozen session: its queue node goes
	my $gone = wait_queue_len($pg, '/err/exp', 1, 20, 'the frozen session expired');
	kill 'CONT', $wpid;
	ok($gone, "the frozen waiter's session expired (its queue node is gone)");
	my ($out, $err) = finish_within($w, 'exp_done', 20, $wpid,
		'the woken waiter ends its wait');
	error_is($err, '08006',
		qr/ZooKeeper session expired\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while waiting for lock "\/err\/exp"/,
		'its wait fails: 08006 "ZooKeeper session expired", CONTEXT while waiting for lock');
	unlike($err, qr/locks? (was|were) lost/, 'naming no lost lock (it held none)');
	is($w->query_safe(q{SELECT zk_try_lock('/err/exp2')}), 't',
		'its next call works, on a new session');
	$w->quit;
	$h->query_safe(q{SELECT zk_unlock('/err/exp')});
}

# --- 08006: verify_on_commit while ZooKeeper does not answer
{
	my ($v, $vpid) = session();
	$v->query_safe(q{SET zklock.session_timeout = '20s'});
	$v->query_safe(q{SET zklock.verify_on_commit = on});
	$v->query_safe(q{SET zklock.connect_timeout = '300ms'});
	$v->query_safe('BEGIN');
	$v->query_safe(q{SELECT zk_xact_lock('/err/verify')});
	my $sid = $v->query_safe('SELECT session_id FROM zk_session()');
	zkctl('kill', $zk->{dir}, 1, 'STOP');
	my $t0 = time();
	bg_begin($v, 'COMMIT', 'commit_done');
	# the COMMIT fails after connect_timeout and returns at once: the
	# abort's release does not wait out a silence already waited out
	# (it goes on in the background), so psql has the ERROR while
	# ZooKeeper is still frozen, within connect_timeout + 1 s
	my $returned = wait_for(sub { bg_done($v, 'commit_done') }, 5,
		'the COMMIT returns');
	my $secs = time() - $t0;
	zkctl('kill', $zk->{dir}, 1, 'CONT');
	ok($returned && $secs < 0.3 + 1,
		sprintf('the failed COMMIT returns within connect_timeout + 1 s, while ZooKeeper is still frozen (%.0f ms)',
			1000 * $secs));
	figure(frozen_commit_return_ms => sprintf('%.0f', 1000 * $secs)) if $returned;
	my ($out, $err) = finish_within($v, 'commit_done', 20, $vpid,
		'the COMMIT has returned');
	error_is($err, '08006',
		qr/could not confirm ZooKeeper locks before commit\nDETAIL:  ZooKeeper did not answer for zklock.connect_timeout \(300 ms\); these locks may be lost: "\/err\/verify" \(exclusive, transaction\)\./,
		'verify_on_commit: COMMIT fails with 08006 "could not confirm ZooKeeper locks before commit", naming the lock');
	warning_is($err, '08006', qr/release of 1 ZooKeeper lock is not yet confirmed/,
		'the release at the abort is reported unconfirmed (WARNING 08006), not waited for');
	ok(wait_queue_len($pg, '/err/verify', 0, 20, 'the lock released'),
		'once ZooKeeper answers again, the lock is released');
	is($v->query_safe('SELECT state = \'connected\' AND session_id = ' . "'$sid' FROM zk_session()"),
		't', 'on the same session, which did not expire');
	$v->quit;
}

# --- 08006: a COMMIT that must confirm a lease while ZooKeeper does not answer
{
	my ($v, $vpid) = session();
	$v->query_safe(q{SET zklock.session_timeout = '20s'});
	$v->query_safe(q{SET zklock.verify_on_commit = on});
	$v->query_safe(q{SET zklock.connect_timeout = '300ms'});
	$v->query_safe('BEGIN');
	my $tok = $v->query_safe(q{SELECT zk_lease_lock('/err/lease_confirm', '1 min')});
	zkctl('kill', $zk->{dir}, 1, 'STOP');
	bg_begin($v, 'COMMIT', 'lcommit_done');
	my $returned = wait_for(sub { bg_done($v, 'lcommit_done') }, 5,
		'the COMMIT returns');
	zkctl('kill', $zk->{dir}, 1, 'CONT');
	ok($returned, 'a COMMIT that must confirm its lease returns while ZooKeeper is frozen');
	my ($out, $err) = finish_within($v, 'lcommit_done', 20, $vpid,
		'the COMMIT has returned');
	error_is($err, '08006',
		qr/could not confirm ZooKeeper leases before commit\nDETAIL:  ZooKeeper did not answer for zklock\.connect_timeout \(300 ms\)\./,
		'COMMIT of a transaction that took a lease (verify_on_commit) fails with 08006 "could not confirm ZooKeeper leases before commit"');
	is($v->query_safe('SELECT 1'), '1', 'the transaction was rolled back');
	is($v->query_safe(qq{SELECT zk_lease_unlock('/err/lease_confirm', $tok)}), 't',
		'the lease itself (not transactional) is then released by its token');
	ok(wait_queue_len($pg, '/err/lease_confirm', 0, 10, 'the lease released'),
		'nothing is left');
	$v->quit;
}

# --- 55000: a barrier whose node has a lock path below it
{
	my ($b, $bpid) = session();
	is($b->query_safe(q{SELECT zk_barrier_set('/err/bar')}), 't', 'a barrier is raised');
	$h->query_safe(q{SELECT zk_lock('/err/bar/sub')});
	my ($out, $err) = bg_query($b, q{SELECT zk_barrier_remove('/err/bar')});
	error_is($err, '55000',
		qr/ZooKeeper barrier "\/err\/bar" cannot be removed while paths below it are in use\nDETAIL:  The barrier's node "\/zklock\/err\/bar" has children: the nodes of paths below "\/err\/bar"\.\n(?:.*\n)*CONTEXT:  while removing barrier "\/err\/bar"/,
		'removing a barrier with a lock path below it: 55000 naming the barrier and its node');
	is($b->query_safe(q{SELECT zk_barrier_wait('/err/bar', 0)}), 'f', 'the barrier is still up');
	is($pg->safe_psql('postgres', q{SELECT zk_try_lock('/err/bar/sub')}), 'f',
		'and the lock below it still held');
	$h->query_safe(q{SELECT zk_unlock('/err/bar/sub')});
	# the lock node is a container: once ZooKeeper reaped it, the removal works
	ok(wait_for(sub { (bg_query($b, q{SELECT zk_barrier_remove('/err/bar')}))[0] eq 't' },
			15, 'the barrier removed'),
		'once the lock path below it is gone, the barrier is removed');
	$b->quit;
}

# --- 58000: a result code zklock has no case for
{
	my $kpy = kazoo_python();
	my $py = "import sys\n"
	  . "from kazoo.client import KazooClient\n"
	  . "c = KazooClient(hosts='$zk->{hosts}'); c.start(timeout=10)\n"
	  . "c.create('/zklock/eph38', b'', ephemeral=True, makepath=True)\n"
	  . "print('ready', flush=True)\n"
	  . "sys.stdin.readline()\n"
	  . "c.stop()\n";
	my ($kin, $kout, $kerr) = ('', '', '');
	my $timer = IPC::Run::timer(60);
	my $kh = IPC::Run::start([ $kpy, '-c', $py ],
		'<', \$kin, '>', \$kout, '2>', \$kerr, $timer);
	pump_until($kh, $timer, \$kout, qr/ready\n/);
	like($kout, qr/ready/, 'another client holds the ephemeral node /zklock/eph38')
	  or diag($kerr);
	my $err = psql_err(q{SELECT zk_lock('/eph38')});
	error_is($err, '58000',
		qr/ZooKeeper error\nDETAIL:  ZooKeeper answered ZNOCHILDRENFOREPHEMERALS \(-108\): no children for ephemerals\.\nCONTEXT:  while acquiring lock "\/eph38"/,
		'a lock node that is an ephemeral node: 58000 "ZooKeeper error", CONTEXT while acquiring lock, ZooKeeper\'s name for the error in the DETAIL');
	$kin .= "\n";
	$kh->finish;
}

# --- 55000: a waiting set loses the node it waits with
{
	my ($m, $mpid) = session();
	$m->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_lock('/err/m1')});
	bg_begin($m, q{SELECT zk_lock(ARRAY['/err/m1', '/err/m2'])}, 'm_done');
	ok(wait_queue_len($pg, '/err/m1', 2, 10, 'the set queued'), 'a set waits');
	is(queue_len($pg, '/err/m2'), '1', 'its node on the other path is queued too');
	my $name = $pg->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('/err/m1') WHERE pid = $mpid");
	kazoo_run($zk, "c.delete('/zklock/err/m1/$name')");
	$h->query_safe(q{SELECT zk_unlock('/err/m1')});
	my ($out, $err) = finish_within($m, 'm_done', 15, $mpid, 'the set ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper queue node "\/zklock\/err\/m1\/\Q$name\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for lock "\/err\/m1"/,
		'a set whose node was deleted while it waited with it fails: 55000, naming the node');
	is($m->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and holds nothing');
	ok(wait_queues_empty($pg, [ '/err/m1', '/err/m2' ], 10, 'empty queues'),
		'none of its nodes is left');
	$m->quit;
}

# --- 55000: a waiting set loses the node of a lock it was granted at
# once: the set must not be granted without it (another backend could take
# that lock meanwhile)
{
	my ($m, $mpid) = session();
	$m->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_lock('/err/n1')});
	bg_begin($m, q{SELECT zk_lock(ARRAY['/err/n1', '/err/n2'])}, 'n_done');
	ok(wait_queue_len($pg, '/err/n1', 2, 10, 'the set queued'), 'a set waits for one of its locks');
	my $name = $pg->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('/err/n2') WHERE pid = $mpid");
	like($name, qr/^_c_/, 'its node on the other path is first in that queue');
	kazoo_run($zk, "c.delete('/zklock/err/n2/$name')");
	$h->query_safe(q{SELECT zk_unlock('/err/n1')});
	my ($out, $err) = finish_within($m, 'n_done', 15, $mpid, 'the set ends its wait');
	set_incomplete_is($m, $err, '/err/n1', '/err/n2',
		'a set whose granted node was deleted while it waited for another is not granted: 55000');
	$m->quit;
}

# children(ZNODE): the children of ZNODE as kazoo sees them, sorted and
# comma-separated ('' when it has none or is gone)
sub children
{
	my ($znode) = @_;
	return kazoo_run($zk,
		"from kazoo.exceptions import NoNodeError\n"
		  . "try:\n    print(','.join(sorted(c.get_children('$znode'))))\n"
		  . "except NoNodeError:\n    print('')");
}

# wait_children(ZNODE, N, SECS, WHAT): wait_for (at most SECS) ZNODE to have
# N children
sub wait_children
{
	my ($znode, $n, $secs, $what) = @_;
	return wait_for(
		sub {
			my $c = children($znode);
			($c eq '' ? 0 : scalar(split /,/, $c)) == $n;
		},
		$secs, $what);
}

# --- 55000: a semaphore acquirer waiting for the lease count loses its
# mutex node: it must not be granted (another acquirer may count at the
# same time), and the semaphore still admits one holder
{
	my ($w, $wpid) = session();
	my ($o, $opid) = session();
	$w->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_semaphore_acquire('/err/sem', 1)});
	bg_begin($w, q{SELECT zk_semaphore_acquire('/err/sem', 1) > 0}, 'sem_done');
	ok(wait_children('/zklock/err/sem/leases', 2, 10, 'its lease made'),
		'an acquirer waits for the lease count, its lease node made');
	my $mutex = children('/zklock/err/sem/locks');
	like($mutex, qr/^_c_[0-9a-f-]{36}-lock-\d{10}$/, 'holding the mutex node');
	kazoo_run($zk, "c.delete('/zklock/err/sem/locks/$mutex')");
	$h->query_safe(q{SELECT zk_semaphore_release('/err/sem')});
	my ($out, $err) = finish_within($w, 'sem_done', 15, $wpid, 'the acquirer ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper queue node "\/zklock\/err\/sem\/locks\/\Q$mutex\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for semaphore "\/err\/sem"/,
		'an acquirer whose mutex node was deleted while it waited for the count fails: 55000, naming the node');
	is($w->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and holds nothing');
	ok(wait_children('/zklock/err/sem/leases', 0, 10, 'its lease gone'),
		'its lease node is gone');
	is($o->query_safe(q{SELECT zk_try_semaphore_acquire('/err/sem', 1)}), 't',
		'another backend takes the semaphore');
	is($h->query_safe(q{SELECT zk_try_semaphore_acquire('/err/sem', 1)}), 'f',
		'and no second one beyond the limit');
	($out, $err) = bg_query($o, q{SELECT zk_semaphore_release('/err/sem')});
	is($out, 't', 'it releases its lease');
	$w->quit;
	$o->quit;
	ok(wait_for(sub { children('/zklock/err/sem/leases') . children('/zklock/err/sem/locks') eq '' },
			10, 'semaphore empty'),
		'no node of the semaphore is left');
}

# --- 55000: the same, and the next acquirer takes the free mutex and
# counts beside it: it fails at once, and does not keep the other from the
# lease once the holder releases (each would count the other's lease)
{
	my ($w, $wpid) = session();
	my ($o, $opid) = session();
	$_->query_safe(q{SET deadlock_timeout = '60s'}) for ($w, $o);
	$h->query_safe(q{SELECT zk_semaphore_acquire('/err/sem2', 1)});
	bg_begin($w, q{SELECT zk_semaphore_acquire('/err/sem2', 1) > 0}, 'sem2_w');
	ok(wait_children('/zklock/err/sem2/leases', 2, 10, 'its lease made'),
		'an acquirer waits for the lease count');
	my $mutex = children('/zklock/err/sem2/locks');
	like($mutex, qr/^_c_[0-9a-f-]{36}-lock-\d{10}$/, 'holding the mutex node');
	kazoo_run($zk, "c.delete('/zklock/err/sem2/locks/$mutex')");
	bg_begin($o, q{SELECT zk_semaphore_acquire('/err/sem2', 1) > 0}, 'sem2_o');
	my ($out, $err) = finish_within($w, 'sem2_w', 15, $wpid,
		'the first acquirer ends its wait while the holder still holds');
	error_is($err, '55000',
		qr/ZooKeeper queue node "\/zklock\/err\/sem2\/locks\/\Q$mutex\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while waiting for semaphore "\/err\/sem2"/,
		'when the next acquirer counts beside it, the one without its mutex node fails: 55000');
	ok(!bg_done($o, 'sem2_o'), 'the next acquirer waits for the holder');
	$h->query_safe(q{SELECT zk_semaphore_release('/err/sem2')});
	($out, $err) = finish_within($o, 'sem2_o', 15, $opid,
		'the next acquirer ends its wait once the holder released');
	is($out, 't', 'with the lease');
	is($h->query_safe(q{SELECT zk_try_semaphore_acquire('/err/sem2', 1)}), 'f',
		'and nobody else gets one');
	$w->quit;
	$o->quit;
	ok(wait_for(sub { children('/zklock/err/sem2/leases') . children('/zklock/err/sem2/locks') eq '' },
			10, 'semaphore empty'),
		'no node of the semaphore is left');
}

# --- 55000: a waiting lease loses its waiter child: it is not granted,
# and the lock still admits one holder
{
	my ($l, $lpid) = session();
	my ($o, $opid) = session();
	$l->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_lock('/err/lease')});
	bg_begin($l, q{SELECT zk_lease_lock('/err/lease', '1 min') > 0}, 'lease_done');
	ok(wait_queue_len($pg, '/err/lease', 2, 10, 'the lease queued'), 'a lease waits');
	my $name = $pg->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('/err/lease') WHERE pid = $lpid");
	ok(wait_children("/zklock/err/lease/$name", 1, 10, 'its waiter child'),
		'its node has its waiter child');
	kazoo_run($zk, "c.delete('/zklock/err/lease/$name/waiter')");
	$h->query_safe(q{SELECT zk_unlock('/err/lease')});
	my ($out, $err) = finish_within($l, 'lease_done', 15, $lpid, 'the lease ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper queue node "\/zklock\/err\/lease\/\Q$name\E" disappeared\nDETAIL:  Another client deleted the node or its waiter child\.\nCONTEXT:  while acquiring a lease on lock "\/err\/lease"/,
		'a lease whose waiter child was deleted while it waited fails: 55000, naming its node');
	ok(wait_queue_len($pg, '/err/lease', 0, 10, 'its node gone'), 'its node is gone');
	my $t = $o->query_safe(q{SELECT zk_try_lease_lock('/err/lease', '1 min')});
	like($t, qr/^\d+$/, 'another backend takes a lease on the lock');
	is($h->query_safe(q{SELECT zk_try_lock('/err/lease')}), 'f',
		'and nobody else gets the lock');
	($out, $err) = bg_query($o,
		'SELECT zk_lease_unlock(\'/err/lease\', ' . ($t =~ /^\d+$/ ? $t : 'NULL') . ')');
	is($out, 't', 'the lease is released');
	$l->quit;
	$o->quit;
	ok(wait_queue_len($pg, '/err/lease', 0, 10, 'empty queue'), 'nothing is left in the queue');
}

# --- 55000: a waiting lease loses its node (another client deleted the
# waiter child and the node)
{
	my ($l, $lpid) = session();
	$l->query_safe(q{SET deadlock_timeout = '60s'});
	$h->query_safe(q{SELECT zk_lock('/err/lease2')});
	bg_begin($l, q{SELECT zk_lease_lock('/err/lease2', '1 min') > 0}, 'lease2_done');
	ok(wait_queue_len($pg, '/err/lease2', 2, 10, 'the lease queued'), 'a lease waits');
	my $name = $pg->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('/err/lease2') WHERE pid = $lpid");
	ok(wait_children("/zklock/err/lease2/$name", 1, 10, 'its waiter child'),
		'its node has its waiter child');
	kazoo_run($zk, "c.delete('/zklock/err/lease2/$name', recursive=True)");
	$h->query_safe(q{SELECT zk_unlock('/err/lease2')});
	my ($out, $err) = finish_within($l, 'lease2_done', 15, $lpid, 'the lease ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper queue node "\/zklock\/err\/lease2\/\Q$name\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while acquiring a lease on lock "\/err\/lease2"/,
		'a lease whose node was deleted while it waited fails: 55000, naming its node');
	is($h->query_safe(q{SELECT zk_try_lock('/err/lease2') AND zk_unlock('/err/lease2')}), 't',
		'another backend takes the lock');
	ok(wait_queue_len($pg, '/err/lease2', 0, 10, 'empty queue'), 'nothing is left in the queue');
	$l->quit;
}

# --- 55000: a member waiting to enter a double barrier loses its node:
# the barrier opens for the others without it, and it does not enter
{
	my ($d, $dpid) = session();
	my ($e, $epid) = session();
	bg_begin($d, q{SELECT zk_double_barrier_enter('/err/db', 2)}, 'db_done');
	ok(wait_children('/zklock/err/db', 1, 10, 'a member waits'), 'a member waits to enter');
	my $name = children('/zklock/err/db');
	kazoo_run($zk, "c.delete('/zklock/err/db/$name')");
	bg_begin($e, q{SELECT zk_double_barrier_enter('/err/db', 2)}, 'db_e_done');
	ok(wait_children('/zklock/err/db', 1, 10, 'the second member waits'),
		'a second member waits: it counts one participant');
	is($h->query_safe(q{SELECT zk_double_barrier_enter('/err/db', 2)}), 't',
		'a third member enters, opening the barrier');
	my ($out, $err) = finish_within($e, 'db_e_done', 15, $epid, 'the second member enters');
	is($out, 't', 'with it');
	($out, $err) = finish_within($d, 'db_done', 15, $dpid, 'the first member ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper double barrier participant "\/zklock\/err\/db\/\Q$name\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while entering double barrier "\/err\/db"/,
		'a member whose node was deleted while it waited to enter does not enter: 55000, naming the node');
	is($d->query_safe('SELECT count(*) FROM zk_locks'), '0', 'and is no member');
	bg_begin($e, q{SELECT zk_double_barrier_leave('/err/db')}, 'db_el_done');
	is($h->query_safe(q{SELECT zk_double_barrier_leave('/err/db')}), 't',
		'the two members leave');
	($out, $err) = finish_within($e, 'db_el_done', 15, $epid, 'the other leaves too');
	is($out, 't', 'together');
	ok(wait_children('/zklock/err/db', 0, 10, 'empty barrier'), 'no node of the barrier is left');
	$d->quit;
	$e->quit;
}

# --- 55000: the member whose arrival completes the count loses its node
# after its look at the barrier, before its opening reaches ZooKeeper: the
# opening fails, and the member must neither wait nor open the barrier
# later without its node
{
	my ($e, $epid) = session();
	my ($d, $dpid) = session();
	$d->query_safe("SET zklock.hosts = '127.0.0.1:$pport'");
	$d->query_safe(q{SET zklock.session_timeout = '20s'});
	is($d->query_safe(q{SELECT zk_try_lock('/err/warm2') AND zk_unlock('/err/warm2')}),
		't', 'a backend works through the proxy');
	bg_begin($e, q{SELECT zk_double_barrier_enter('/err/dp', 2)}, 'dp_e');
	ok(wait_children('/zklock/err/dp', 1, 10, 'a member waits'), 'a member waits to enter');
	my $first = children('/zklock/err/dp');
	# each request of the second member reaches ZooKeeper 1 s after the one
	# before: its create, its look at the participants a second later, its
	# opening two seconds after that; its node goes in between
	zk_proxy_cmd($proxy, 'delay 1000');
	bg_begin($d, q{SELECT zk_double_barrier_enter('/err/dp', 2)}, 'dp_d');
	my $deleted = kazoo_run(
		$zk, qq{import time
for _ in range(500):
    kids = [k for k in c.get_children('/zklock/err/dp') if k not in ('$first', 'ready')]
    if kids:
        time.sleep(1.5)
        c.delete('/zklock/err/dp/' + kids[0])
        print(kids[0])
        break
    time.sleep(0.02)});
	like($deleted, qr/^[0-9a-f-]{36}$/, "another client deletes the second member's node");
	my ($out, $err) = finish_within($d, 'dp_d', 30, $dpid, 'the second member ends its attempt');
	zk_proxy_cmd($proxy, 'delay 0');
	error_is($err, '55000',
		qr/ZooKeeper double barrier participant "\/zklock\/err\/dp\/\Q$deleted\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while entering double barrier "\/err\/dp"/,
		'a member whose opening failed because its node was deleted does not wait: 55000, naming the node');
	ok(!bg_done($e, 'dp_e'), 'the first member still waits: the barrier is not open');
	is($h->query_safe(q{SELECT zk_double_barrier_enter('/err/dp', 2)}), 't',
		'a third member enters, opening the barrier');
	($out, $err) = finish_within($e, 'dp_e', 15, $epid, 'the first member enters');
	is($out, 't', 'with it');
	bg_begin($e, q{SELECT zk_double_barrier_leave('/err/dp')}, 'dp_el');
	is($h->query_safe(q{SELECT zk_double_barrier_leave('/err/dp')}), 't',
		'the two members leave');
	($out, $err) = finish_within($e, 'dp_el', 15, $epid, 'the other leaves too');
	is($out, 't', 'together');
	ok(wait_children('/zklock/err/dp', 0, 10, 'empty barrier'), 'no node of the barrier is left');
	$d->quit;
	$e->quit;
}

# --- 55000: the member that leaves first and waits for the others (the
# lowest, as the recipe sorts them) loses its node: its leave fails
{
	my ($p, $ppid) = session();
	my ($q, $qpid) = session();
	bg_begin($p, q{SELECT zk_double_barrier_enter('/err/dl', 2)}, 'dl_p');
	ok(wait_children('/zklock/err/dl', 1, 10, 'a member waits'), 'a member waits to enter');
	is($q->query_safe(q{SELECT zk_double_barrier_enter('/err/dl', 2)}), 't', 'a second one enters');
	my ($out, $err) = finish_within($p, 'dl_p', 15, $ppid, 'the first enters');
	is($out, 't', 'with it');
	my $pn = $p->query_safe(q{SELECT znode FROM zk_locks});
	my $qn = $q->query_safe(q{SELECT znode FROM zk_locks});
	my ($low, $lowpid, $high) = ($pn lt $qn) ? ($p, $ppid, $q) : ($q, $qpid, $p);
	my ($lown, $highn) = ($pn lt $qn) ? ($pn, $qn) : ($qn, $pn);
	bg_begin($low, q{SELECT zk_double_barrier_leave('/err/dl')}, 'dl_low');
	ok(wait_for(sub { (zk_watches_by_others($zk)->{$highn} // 0) > 0 }, 10, 'the lowest watches'),
		'the lowest member leaves first, waiting for the other');
	kazoo_run($zk, "c.delete('$lown')");
	is($high->query_safe(q{SELECT zk_double_barrier_leave('/err/dl')}), 't',
		'the other member leaves');
	($out, $err) = finish_within($low, 'dl_low', 15, $lowpid, 'the lowest ends its wait');
	error_is($err, '55000',
		qr/ZooKeeper double barrier participant "\Q$lown\E" disappeared\nDETAIL:  Another client deleted the node\.\nCONTEXT:  while leaving double barrier "\/err\/dl"/,
		'a member whose node was deleted while it waited to leave fails: 55000, naming the node');
	ok(wait_children('/zklock/err/dl', 0, 10, 'empty barrier'), 'no node of the barrier is left');
	is($low->query_safe(q{SELECT zk_double_barrier_enter('/err/dl', 1) AND zk_double_barrier_leave('/err/dl')}),
		't', 'the barrier can be entered and left again');
	$p->quit;
	$q->quit;
}

# --- 55000: part of a set gone after its create's answer was lost
{
	my ($r, $rpid) = session();
	$r->query_safe("SET zklock.hosts = '127.0.0.1:$pport'");
	$r->query_safe(q{SET zklock.session_timeout = '20s'});
	$r->query_safe(q{SET deadlock_timeout = '60s'});
	is($r->query_safe(q{SELECT zk_try_lock('/err/warm') AND zk_unlock('/err/warm')}),
		't', 'a backend works through the proxy');
	# every request of the new connection is held a while, so that the
	# recovery reads the queues after the other client's delete
	zk_proxy_cmd($proxy, 'delay 1000');
	zk_proxy_cmd($proxy, 'drop-after-create -__WRIT__');
	bg_begin($r, q{SELECT zk_lock(ARRAY['/err/r1', '/err/r2'])}, 'r_done');
	$proxy->{timer}->start(30);
	pump_until($proxy->{h}, $proxy->{timer}, \$proxy->{out},
		qr/dropped-after-create/);
	like($proxy->{out}, qr/dropped-after-create \/zklock\/err\/r1\//,
		"the connection is cut after the set's create was forwarded");
	my $deleted = kazoo_run(
		$zk, q{import time
for _ in range(250):
    kids = [k for k in (c.get_children('/zklock/err/r2') if c.exists('/zklock/err/r2') else []) if '-__WRIT__' in k]
    if kids:
        c.delete('/zklock/err/r2/' + kids[0])
        print(kids[0])
        break
    time.sleep(0.02)});
	like($deleted, qr/__WRIT__/, "another client deletes the set's node on /err/r2");
	my ($out, $err) = finish_within($r, 'r_done', 30, $rpid, 'the set ends');
	zk_proxy_cmd($proxy, 'delay 0');
	set_incomplete_is($r, $err, '/err/r1', '/err/r2',
		'the set finds part of its nodes: 55000 "queue nodes of a multi-lock disappeared"');
	$r->quit;
}

# --- 28000: the server refuses the credentials
{
	my $zka = zk_standalone(jvm => '-Dzookeeper.DigestAuthenticationProvider.enabled=false');
	my $set = "SET zklock.hosts = '$zka->{hosts}';";
	my $err = psql_err("$set SELECT zk_try_lock('/err/noauth')");
	is($err, '', 'without zklock.auth, that server serves zklock');
	$err = psql_err("$set SET zklock.auth = 'pgapp:secret'; SELECT zk_try_lock('/err/auth')");
	error_is($err, '28000',
		qr/ZooKeeper authentication failed(?: at "\Q$zka->{hosts}\E"|\nCONTEXT:  while authenticating to "\Q$zka->{hosts}\E")/,
		'with credentials the server rejects: 28000 "ZooKeeper authentication failed"');
	unlike($err, qr/secret/, 'not showing the password');
}

# --- zklock.auth_file: another owner, unreadable
SKIP:
{
	skip 'running as root: ownership and modes do not refuse anything', 4
	  if $> == 0;
	my $dir = $PostgreSQL::Test::Utils::tmp_check;
	my $rootfile = '/etc/passwd';
	my @st = stat($rootfile);
	ok(@st && $st[4] == 0 && -f _, "$rootfile is a regular file of root's");
	my $link = "$dir/zklock.root_owned";
	symlink($rootfile, $link) or die "symlink $link: $!";
	my $err = psql_err("SET zklock.auth_file = '$link'; SELECT zk_try_lock('/err/af')");
	error_is($err, 'F0000',
		qr/zklock.auth_file "\Q$link\E" must be owned by the database server's operating system user/,
		'an auth file owned by another user: F0000');

	my $file = "$dir/zklock.unreadable";
	open my $fh, '>', $file or die "$file: $!";
	print $fh "pgapp:secret\n";
	close $fh;
	chmod 0000, $file;
	$err = psql_err("SET zklock.auth_file = '$file'; SELECT zk_try_lock('/err/af')");
	error_is($err, '42501',
		qr/could not open zklock.auth_file "\Q$file\E": Permission denied/,
		'an auth file its owner cannot read (mode 0000): 42501 "could not open"');
	unlike($err, qr/secret/, 'not showing its content');
}

# --- 42501: the deadlock detector's records refused by their parent's ACL
{
	# a root whose records' parent (<root>.waits) admits reading only
	kazoo_run($zk, q{from kazoo.security import make_acl
c.create('/denied.waits', b'', acl=[make_acl('world', 'anyone', read=True)])});
	my ($r, $rpid) = session();
	$r->query_safe(q{SET zklock.root = '/denied'});
	$r->query_safe(q{SET deadlock_timeout = '200ms'});
	$h->query_safe(q{SET zklock.root = '/denied'});
	$h->query_safe(q{SELECT zk_lock('/err/rec')});
	my $t0 = time();
	bg_begin($r, q{SELECT zk_lock('/err/rec')}, 'rec_done');
	my ($out, $err) = finish_within($r, 'rec_done', 15, $rpid,
		'a wait that cannot publish its record ends');
	my $secs = time() - $t0;
	error_is($err, '42501',
		qr/ZooKeeper refused access\nDETAIL:  The node's ACL does not allow this session's identity\.\nHINT:  Check zklock\.auth and the ACLs under zklock\.root\.\nCONTEXT:  while waiting for lock "\/err\/rec"/,
		'once deadlock_timeout passed, the record is refused: 42501');
	cmp_ok($secs, '>=', 0.2, 'not before deadlock_timeout');
	is(kazoo_run($zk, q{print(len(c.get_children('/denied/err/rec')))}), '1',
		"the waiter's queue node is gone; the holder's stays");
	is($h->query_safe(q{SELECT count(*) FROM zk_locks WHERE path = '/err/rec'}), '1',
		'the holder keeps its lock');
	is($r->query_safe(q{SELECT zk_try_lock('/err/rec2') AND zk_unlock('/err/rec2')}), 't',
		"the refused backend's session goes on");
	$h->query_safe(q{SELECT zk_unlock_all()});
	$h->query_safe(q{RESET zklock.root});
	$r->quit;
}

# --- 40P01: deadlock checks that fall due during an outage
{
	my ($da, $dapid) = session();
	my ($db, $dbpid) = session();
	my $dt = 2;    # deadlock_timeout, seconds
	for my $s ($da, $db)
	{
		$s->query_safe("SET zklock.hosts = '127.0.0.1:$pport'");
		$s->query_safe(q{SET zklock.session_timeout = '15s'});
		$s->query_safe("SET deadlock_timeout = '${dt}s'");
	}
	$da->query_safe(q{SELECT zk_lock('/err/d1')});
	$db->query_safe(q{SELECT zk_lock('/err/d2')});
	my $ta = time();
	bg_begin($da, q{SELECT zk_lock('/err/d2')}, 'da_done');
	ok(wait_queue_len($pg, '/err/d2', 2, 10, 'A queued'), 'A waits for B');
	bg_begin($db, q{SELECT zk_lock('/err/d1')}, 'db_done');
	ok(wait_queue_len($pg, '/err/d1', 2, 10, 'B queued'), 'B waits for A');
	zk_proxy_cmd($proxy, 'down');
	my $t_down = time();
	cmp_ok($t_down - $ta, '<', $dt,
		'ZooKeeper became unreachable before the first deadlock check was due');
	# the outage lasts past both checks' due time
	my $tb_due = $t_down + $dt + 1;
	usleep(1_000_000 * ($tb_due - time())) if time() < $tb_due;
	my $early = bg_done($da, 'da_done') || bg_done($db, 'db_done');
	zk_proxy_cmd($proxy, 'up');
	ok(!$early, 'no member ended its wait during the outage');
	ok(wait_for(sub { bg_done($da, 'da_done') || bg_done($db, 'db_done') }, 20,
			'a deadlock report'),
		'once ZooKeeper is reachable again, a member ends its wait');
	my ($victim, $vpid, $vmark, $other, $opid, $omark) =
	  bg_done($da, 'da_done')
	  ? ($da, $dapid, 'da_done', $db, $dbpid, 'db_done')
	  : ($db, $dbpid, 'db_done', $da, $dapid, 'da_done');
	my ($out, $err) = bg_finish($victim, $vmark);
	error_is($err, '40P01', qr/deadlock detected\nDETAIL:  Process \d+ on server "a" waits for exclusive ZooKeeper lock "\/err\/d[12]"; blocked by process \d+ on server "a"\./,
		'it is the victim of the cycle: 40P01');
	ok(!bg_done($other, $omark), 'the other member still waits');
	$victim->query_safe(q{SELECT zk_unlock_all()});
	($out, $err) = finish_within($other, $omark, 15, $opid,
		'the other member gets its lock once the victim released');
	is($err, '', 'without an error');
	$other->query_safe(q{SELECT zk_unlock_all()});
	ok(wait_queues_empty($pg, [ '/err/d1', '/err/d2' ], 10, 'empty queues'),
		'nothing is left in the queues');
	$da->quit;
	$db->quit;
}

# --- 40P01: a deadlock check cut short by a lost connection is made again
{
	my ($da, $dapid) = session();    # straight to ZooKeeper
	my ($db, $dbpid) = session();    # through the proxy
	$da->query_safe(q{SET deadlock_timeout = '1s'});
	$db->query_safe("SET zklock.hosts = '127.0.0.1:$pport'");
	$db->query_safe(q{SET zklock.session_timeout = '15s'});
	$db->query_safe(q{SET deadlock_timeout = '2s'});
	$da->query_safe(q{SELECT zk_lock('/err/c1')});
	$db->query_safe(q{SELECT zk_lock('/err/c2')});
	(my $bsid = $db->query_safe('SELECT session_id FROM zk_session()')) =~ s/^0x//;
	bg_begin($da, q{SELECT zk_lock('/err/c2')}, 'ca_done');
	ok(wait_queue_len($pg, '/err/c2', 2, 10, 'A queued'), 'A waits for B');
	bg_begin($db, q{SELECT zk_lock('/err/c1')}, 'cb_done');
	ok(wait_queue_len($pg, '/err/c1', 2, 10, 'B queued'), 'B waits for A');
	# from now on B's requests reach ZooKeeper 2 s late: once B's check has
	# published its wait (A's was published before), the first read of its
	# search is held in the proxy, and B's connection is cut before it
	# arrives
	zk_proxy_cmd($proxy, 'delay 2000');
	my $published = kazoo_run(
		$zk, qq{import time
for _ in range(2000):
    if c.exists('/zklock.waits/$bsid'):
        print('published')
        break
    time.sleep(0.01)});
	zk_proxy_cmd($proxy, 'down');
	my $t_cut = time();
	is($published, 'published', "B's deadlock check published its wait");
	ok(!bg_done($db, 'cb_done') && !bg_done($da, 'ca_done'),
		'no deadlock was reported before B lost its connection');
	usleep(1_000_000);
	ok(!bg_done($db, 'cb_done'), 'nor while B is cut off');
	zk_proxy_cmd($proxy, 'delay 0');
	zk_proxy_cmd($proxy, 'up');
	my ($out, $err) = finish_within($db, 'cb_done', 20, $dbpid,
		'B ends its wait once it reaches ZooKeeper again');
	my $after_cut = time() - $t_cut;
	note(sprintf('40P01 %.0f ms after the cut (connection back after about 1000 ms, deadlock_timeout 2 s)',
			1000 * $after_cut));
	figure(cut_check_40p01_s => sprintf('%.1f', $after_cut));
	# reported a deadlock_timeout after the cut check, not as soon as the
	# connection was back: the check was made again, not resumed
	cmp_ok($after_cut, '>', 1.5, 'the check was made again a deadlock_timeout later');
	error_is($err, '40P01',
		qr/deadlock detected\nDETAIL:  Process $dbpid on server "a" waits for exclusive ZooKeeper lock "\/err\/c1"; blocked by process $dapid on server "a"\.\nProcess $dapid on server "a" waits for exclusive ZooKeeper lock "\/err\/c2"; blocked by process $dbpid on server "a"\./,
		'its check, cut short by the lost connection, is made again: 40P01 naming both members');
	ok(!bg_done($da, 'ca_done'), 'A still waits');
	$db->query_safe(q{SELECT zk_unlock_all()});
	($out, $err) = finish_within($da, 'ca_done', 15, $dapid,
		'A gets its lock once B released');
	is($err, '', 'without an error');
	$da->query_safe(q{SELECT zk_unlock_all()});
	ok(wait_queues_empty($pg, [ '/err/c1', '/err/c2' ], 10, 'empty queues'),
		'nothing is left in the queues');
	$da->quit;
	$db->quit;
}

# --- 53200 and XX000: allocation and entropy failures (fault_preload.c)
{
	my ($f, $dir) = pg_with_faults('f', $zk);
	my $w = verbose($f->background_psql('postgres', on_error_stop => 0));
	$h->query_safe(q{SELECT zk_lock('/err/oom')});
	my $held = held_node($h, '/err/oom');
	# the waiter's strdup of the node it is about to watch fails
	fault_set($dir, 'strdup', $held);
	my ($out, $err) = bg_query($w, q{SELECT zk_lock('/err/oom')});
	fault_clear($dir, 'strdup');
	error_is($err, '53200', qr/out of memory\nCONTEXT:  while waiting for lock "\/err\/oom"/,
		'an allocation that fails while a waiter arms its watch: 53200 "out of memory"');
	unlike($err, qr/Failed on request of size/,
		"zklock's own report, not a PostgreSQL memory context's");
	ok(wait_queue_len($pg, '/err/oom', 1, 10, 'the waiter gone from the queue'),
		"the waiter's queue node is deleted");
	is($w->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'and it holds nothing');
	$h->query_safe(q{SELECT zk_unlock('/err/oom')});
	is($w->query_safe(q{SELECT zk_try_lock('/err/oom', 5000)}), 't',
		'its next call takes the lock');
	$w->query_safe(q{SELECT zk_unlock('/err/oom')});
	$w->quit;

	# a backend's first node name draws its random seed
	my $r = verbose($f->background_psql('postgres', on_error_stop => 0));
	fault_set($dir, 'rand');
	($out, $err) = bg_query($r, q{SELECT zk_lock('/err/rand')});
	fault_clear($dir, 'rand');
	error_is($err, 'XX000', qr/could not generate random values/,
		'pg_strong_random failing: XX000 "could not generate random values"');
	is($pg->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/err/rand')}), '0',
		'no node was created');
	is($r->query_safe(q{SELECT zk_try_lock('/err/rand')}), 't',
		'once random values are available again, the backend takes the lock');
	$r->quit;
	$f->stop;
}

$h->quit;
zk_proxy_stop($proxy);
$pg->stop;
done_testing();
