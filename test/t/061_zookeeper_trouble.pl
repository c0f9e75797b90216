# ZooKeeper in trouble: what zklock's backends get from a member in
# read-only mode, and from a server whose transaction log cannot be
# written.
#
# a) Read-only mode.  Every member of a 3-server ensemble runs with
#    -Dreadonlymode.enabled=true; one follower M is cut off from the other
#    two (ZkFaults' partitionable ensemble; its clients still reach it) and
#    turns read-only: srvr says "Mode: read-only".  zklock opens its sessions
#    without the C client's ZOO_READONLY flag, so M refuses them.  A
#    backend whose zklock.hosts names M alone is never granted a lock
#    there: a new backend gets 08001 "could not connect" after
#    zklock.connect_timeout, well within its lock_timeout; a backend whose
#    session was open before the cut cannot reconnect and gets an 08006 or
#    08001 error the same way; zk_session() says it is not connected.
#    Meanwhile the majority grants the lock to another server.  Healed, M
#    rejoins as a follower and both backends are granted the lock
#    normally.
# b) The transaction log cannot be written (disk full).  A standalone
#    server gets a file-size limit of 1 byte (RLIMIT_FSIZE, set with
#    prlimit on the running JVM, as the tests run without root and cannot
#    mount a small filesystem): the JVM ignores SIGXFSZ, so the next write
#    to its transaction log fails with EFBIG, as it would with ENOSPC on a
#    full disk.  ZooKeeper 3.8 treats a
#    failed log write as unrecoverable: the standalone server exits.  The
#    backend whose create hit it gets an 08006 error (not a grant, not a
#    hang past lock_timeout); a holder connected to that server is told
#    (08006) once it has been out of touch for its session timeout; no try
#    is granted while the server is down.  Restarted with room for its log
#    (no limit), it serves: the failed create left no node, the lock is
#    granted again, and the lost holder's lock is granted to a waiter once
#    the server has expired that session.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

# run SQL on SESSION; returns (stdout, stderr, seconds it took)
sub timed
{
	my ($s, $sql) = @_;
	my $t0 = time();
	my ($out, $err) = bg_query($s, $sql);
	return ($out, $err, time() - $t0);
}

# ==== a) a member in read-only mode
my $ens = zk_partitionable_ensemble(
	cfg => "syncLimit=5\n",
	jvm => '-Dreadonlymode.enabled=true -Dzookeeper.fastleader.maxNotificationInterval=1000');
ok(wait_for(sub { zk_healthy($ens) }, 30, 'a healthy ensemble'),
	'the ensemble serves, with one leader');
my $leader = zk_leader_of($ens);
my $m = (grep { $_ != $leader } 1 .. 3)[0];
my @majority = grep { $_ != $m } 1 .. 3;
note("leader $leader, member M = $m");

my $na = pg_with_zklock('a', { hosts => zk_member_hosts($ens, $m) },
	"zklock.connect_timeout = '2s'\nzklock.session_timeout = '3s'\n");
my $nb = pg_with_zklock('b', { hosts => zk_member_hosts($ens, @majority) });

# a backend of A whose session is open (on M) before the cut
my $old = verbose_session($na);
is($old->query_safe(q{SELECT zk_try_lock('/ro/x') AND zk_unlock('/ro/x')}), 't',
	'a backend connected to M takes and releases a lock before the cut');

zk_isolate($ens, $m);
my $srvr = '';
ok(wait_for(sub { ($srvr = zk_4lw($ens->{ports}[ $m - 1 ], 'srvr')) =~ /^Mode: read-only$/m },
		30, 'M read-only'),
	'cut off, M turns read-only (srvr: "Mode: read-only")') or diag($srvr);
# the majority grants the lock to another server meanwhile
my $b = verbose_session($nb);
is($b->query_safe(q{SELECT zk_try_lock('/ro/a')}), 't', 'server B (the majority) takes the lock');

# a new backend of A: its first call opens a session, on M alone
my $new = verbose_session($na);
$new->query_safe(q{SET lock_timeout = '20s'});
my ($out, $err, $secs) = timed($new, q{SELECT zk_lock('/ro/b')});
error_is($err, '08001', qr/could not connect to ZooKeeper at "127\.0\.0\.1:\d+"/,
	'a new backend on the read-only member: 08001, could not connect');
note(sprintf('new backend refused after %.1f s: %s', $secs, $err));
cmp_ok($secs, '<', 10, 'after zklock.connect_timeout (2 s), well within lock_timeout (20 s)');
figure(readonly_new_backend_error_s => sprintf('%.1f', $secs));
($out) = bg_query($new, q{SELECT state FROM zk_session()});
isnt($out, 'connected', "zk_session() of the new backend: not connected ($out)");
($out, $err) = bg_query($new, q{SELECT zk_try_lock('/ro/b', 500)});
is(error_code($err), '08001', 'a try of the new backend is an error too (08001), not a grant');

# the backend whose session was open before the cut
($out) = bg_query($old, q{SELECT state FROM zk_session()});
isnt($out, 'connected', "zk_session() of the backend connected before the cut: not connected ($out)");
$old->query_safe(q{SET lock_timeout = '20s'});
($out, $err, $secs) = timed($old, q{SELECT zk_lock('/ro/b')});
like(error_code($err), qr/^0800[16]$/,
	'the backend connected before the cut: a connection error (08001 or 08006), no grant');
note(sprintf('old backend: %.1f s: %s', $secs, $err));
cmp_ok($secs, '<', 10, 'within lock_timeout');
is($b->query_safe(q{SELECT count(*) FROM zk_lock_queue('/ro/b')}), '0',
	'nothing of theirs in the queue');

zk_heal($ens);
is(zk_wait_mode($ens, $m, qr/^follower$/, 60), 'follower', 'healed, M rejoins as a follower');
$b->query_safe(q{SELECT zk_unlock('/ro/a')});
for my $s ($new, $old)
{
	# the old backend's session expired meanwhile: its next call may
	# first say so
	($out, $err) = bg_query($s, q{SELECT zk_lock('/ro/a') > 0});
	($out, $err) = bg_query($s, q{SELECT zk_lock('/ro/a') > 0})
	  if $err =~ /session expired/;
	is($out, 't', 'healed, the backend on M is granted the lock') or diag($err);
	is(zk_member_of_server($ens, $s->query_safe('SELECT server FROM zk_session()')),
		$m, 'through M');
	$s->query_safe(q{SELECT zk_unlock('/ro/a')});
}
$_->quit for ($old, $new, $b);

# ==== b) a transaction log that cannot be written
my $zk = zk_standalone();
my $nc = pg_with_zklock('c', $zk,
	"zklock.connect_timeout = '2s'\nzklock.session_timeout = '3s'\n");
my $pidfile = "$zk->{dir}/s1/pid";
my $zk_pid = slurp_file($pidfile) + 0;
my $h = verbose_session($nc);
my $w = verbose_session($nc);
my $w2 = verbose_session($nc);
my $tok_h = $h->query_safe(q{SELECT zk_lock('/df/held')});
$w->query_safe(q{SELECT zk_try_lock('/df/open') AND zk_unlock('/df/open')});
$w2->query_safe(q{SELECT zk_try_lock('/df/open') AND zk_unlock('/df/open')});
$h->query_safe('BEGIN');    # H polls its view without COMMIT checks

# the log is full: no byte more may be written to it (the limit applies to
# the offset written at, whatever the file's size, so preallocated space is
# no way around it)
my ($log) = glob("$zk->{dir}/s1/data/version-2/log.*");
ok(defined $log, 'the server has a transaction log');
system('prlimit', '--pid', $zk_pid, '--fsize=1:') == 0
  or die "prlimit failed";
note("RLIMIT_FSIZE of ZooKeeper (pid $zk_pid) set to 1 byte");

$w->query_safe(q{SET lock_timeout = '20s'});
($out, $err, $secs) = timed($w, q{SELECT zk_lock('/df/new')});
error_is($err, '08006',
	qr/lost connection to ZooKeeper\nDETAIL:  The connection to "127\.0\.0\.1:\d+" was not regained within the session timeout of 3000 ms\.\nCONTEXT:  while acquiring lock "\/df\/new"/,
	'a lock whose create cannot be logged: 08006, lost connection, naming the lock; no grant');
note(sprintf('after %.1f s: %s', $secs, $err));
cmp_ok($secs, '<', 10, 'within lock_timeout');
figure(log_full_error_s => sprintf('%.1f', $secs));
ok(wait_for(sub { !kill(0, $zk_pid) }, 20, 'the server to exit'),
	'ZooKeeper exits on the failed log write');
is(zk_4lw($zk->{ports}[0], 'srvr'), '', 'nothing answers on its port');
($out, $err) = bg_query($w2, q{SELECT zk_try_lock('/df/other', 500)});
like(error_code($err), qr/^0800[16]$/, 'a try while it is down: a connection error, no grant')
  or diag("out $out err $err");

# the holder is told once out of touch for its session timeout
my ($h_err, $t0) = ('', time());
while (time() - $t0 < 15)
{
	($out, $h_err) = bg_query($h, q{SELECT count(*) FROM zk_locks});
	last if $h_err ne '';
	usleep(100_000);
}
error_is($h_err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
	'the holder is told its lock was lost (08006)');
$h->query_safe('ROLLBACK');

# space is back: restarted without the limit
zkctl('restart', $zk->{dir}, 1);
ok(wait_for(sub { zk_4lw($zk->{ports}[0], 'srvr') =~ /^Mode: standalone/m }, 30,
		'the server to serve'),
	'restarted with room for its log, ZooKeeper serves');
($out, $err) = bg_query($w, q{SELECT count(*) FROM zk_lock_queue('/df/new')});
($out, $err) = bg_query($w, q{SELECT count(*) FROM zk_lock_queue('/df/new')})
  if $err =~ /session expired|connect/;
is($out, '0', 'the create that could not be logged left no node');
($out, $err) = bg_query($w, q{SELECT zk_lock('/df/new') > 0});
is($out, 't', 'the lock is granted again') or diag($err);
($out, $err) = bg_query($w2, q{SELECT zk_lock('/df/held')});
($out, $err) = bg_query($w2, q{SELECT zk_lock('/df/held')})
  if $err =~ /session expired|connect/;
cmp_ok($out || 0, '>', $tok_h,
	"the lost holder's lock is granted to a waiter, with a greater token")
  or diag($err);
($out, $err) = bg_query($h, q{SELECT zk_try_lock('/df/h2') AND zk_unlock('/df/h2')});
is($out, 't', "the old holder's next call works, on a new session") or diag($err);
$_->quit for ($h, $w, $w2);

$na->stop;
$nb->stop;
$nc->stop;
done_testing();
