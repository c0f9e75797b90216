# Lease-checked COMMIT: a transaction of a backend that holds a zklock
# lock commits only while its ZooKeeper session is known to be alive.
#
# A backend holding a lock is frozen (SIGSTOP) past its session timeout,
# another server takes the lock, the backend resumes and tries to COMMIT:
#   (a) a transaction lock in a read-only transaction (its effect here: a
#       NOTIFY, which a failed COMMIT never delivers);
#   (b) a session lock across a read-only transaction (NOTIFY too);
#   (c) a transaction lock in a transaction that writes.
# Each COMMIT fails with 08006 naming the lost lock, and nothing of the
# transaction is visible.  A control transaction shows that the listener
# does see a notification that was committed.
#
# Counting requests at the server (cons' lcxid, the last client xid, which
# pings do not change): a COMMIT soon after the session's last answer makes
# no ZooKeeper request at all; one after a third of the session timeout
# makes exactly one (a sync), after which the lease is fresh again.
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
my $na = pg_with_zklock('a', $zk, "zklock.session_timeout = '2s'\n");
my $nb = pg_with_zklock('b', $zk);
$na->safe_psql('postgres', 'CREATE TABLE work (who text)');

my $s = $na->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');
my $spid = $s->query_safe('SELECT pg_backend_pid()');
my $listener = $na->background_psql('postgres');
$listener->query_safe('LISTEN zk_lease');
my $bw = $nb->background_psql('postgres');

# the notifications the listener received since the last call
sub notifications
{
	my ($out) = $listener->query('SELECT 1');
	return join(',', $out =~ /Asynchronous notification "zk_lease" with payload "(\w+)"/g);
}

# --- control: a committed transaction's notification and write arrive
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/lease/ok')});
$s->query_safe(q{NOTIFY zk_lease, 'control'});
$s->query_safe(q{INSERT INTO work VALUES ('control')});
$s->query_safe('COMMIT');
is(notifications(), 'control', 'the listener sees a committed notification');
$na->safe_psql('postgres', 'TRUNCATE work');

# freeze the backend until server B has the lock, then let it go on
sub freeze_until_b_has
{
	my ($path) = @_;
	bg_begin($bw, "SELECT zk_lock('$path') > 0", "b_got");
	# B must wait behind the holder before it freezes: else B's grant
	# would not be a takeover
	wait_queue_len($nb, $path, 2, 10, 'B queued') or return 0;
	kill 'STOP', $spid;
	my ($out) = bg_finish($bw, 'b_got');
	kill 'CONT', $spid;
	return $out =~ /\bt\b/;
}

# --- (a) a transaction lock in a read-only transaction
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/lease/a')});
$s->query_safe(q{NOTIFY zk_lease, 'a'});
ok(freeze_until_b_has('/lease/a'), '(a) B takes the lock while the holder is frozen');
my ($res, $err) = bg_query($s, 'COMMIT');
error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
	'(a) the read-only transaction cannot COMMIT (08006)');
like($err, qr{DETAIL:  Lost: "/lease/a" \(exclusive, transaction\)\.}, '(a) naming the lost lock');
is(notifications(), '', '(a) its notification is never delivered');
$bw->query_safe(q{SELECT zk_unlock('/lease/a')});

# --- (b) a session lock across a read-only transaction
$s->query_safe(q{SELECT zk_lock('/lease/b')});
$s->query_safe('BEGIN');
$s->query_safe('SELECT count(*) FROM pg_class');
$s->query_safe(q{NOTIFY zk_lease, 'b'});
ok(freeze_until_b_has('/lease/b'), '(b) B takes the lock while the holder is frozen');
($res, $err) = bg_query($s, 'COMMIT');
error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
	'(b) the read-only transaction cannot COMMIT (08006)');
like($err, qr{DETAIL:  Lost: "/lease/b" \(exclusive, session\)\.}, '(b) naming the lost lock');
is(notifications(), '', '(b) its notification is never delivered');
is($s->query_safe('SELECT count(*) FROM zk_locks'), '0', '(b) the lost lock is forgotten');
$bw->query_safe(q{SELECT zk_unlock('/lease/b')});

# --- (c) a transaction lock in a writing transaction
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/lease/c')});
$s->query_safe(q{INSERT INTO work VALUES ('frozen writer')});
ok(freeze_until_b_has('/lease/c'), '(c) B takes the lock while the holder is frozen');
($res, $err) = bg_query($s, 'COMMIT');
error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost/,
	'(c) the writing transaction cannot COMMIT (08006)');
is($na->safe_psql('postgres', 'SELECT count(*) FROM work'), '0',
	'(c) nothing it wrote is visible');
$bw->query_safe(q{SELECT zk_unlock('/lease/c')});

# --- the next statement works on a fresh session
($res, $err) = bg_query($s, q{SELECT zk_try_lock('/lease/after')});
is($res, 't', 'after the failed COMMIT the backend locks again');
$s->query_safe(q{SELECT zk_unlock_all()});

# --- requests at COMMIT, counted at the server

# the last client xid of a session (hex id without leading zeros), from cons
sub lcxid_of
{
	my ($sid) = @_;
	for my $line (split /\n/, zk_4lw($port, 'cons'))
	{
		return hex($2)
		  if $line =~ /sid=0x0*([0-9a-f]+).*lcxid=(0x[0-9a-f]+)/ && $1 eq $sid;
	}
	return -1;
}

# a session's id as cons prints it: hex without leading zeros
sub session_hex
{
	my ($sess) = @_;
	my $id = $sess->query_safe('SELECT session_id FROM zk_session()');
	$id =~ s/^0x0*//;
	return $id;
}

# a fresh lease: no request
my $f = $na->background_psql('postgres');
$f->query_safe(q{SET zklock.session_timeout = '30s'});
$f->query_safe(q{SELECT zk_lock('/lease/fresh')});
my $fsid = session_hex($f);
$f->query_safe(q{SELECT zk_lock('/lease/fresh')});    # stacked: no request
# the loss watch's one request (a getData, 250 ms after the grant) is made
# before the count starts
ok(wait_watched($zk, held_node($f, '/lease/fresh')), 'the held node is watched');
my $before = lcxid_of($fsid);
$f->query_safe('BEGIN');
$f->query_safe('SELECT 1');
$f->query_safe('COMMIT');
$f->query_safe(q{SELECT zk_lock('/lease/fresh')});
my $after = lcxid_of($fsid);
cmp_ok($before, '>', 0, 'the session is found in cons');
is($after - $before, 0,
	'COMMITs within the lease of a backend holding a lock make no ZooKeeper request');

# a stale lease: exactly one request (a sync), then fresh again
my $g = $na->background_psql('postgres');
$g->query_safe(q{SET zklock.session_timeout = '3s'});
$g->query_safe(q{SELECT zk_lock('/lease/stale')});
my $gsid = session_hex($g);
my $timeout_ms = $g->query_safe('SELECT timeout_ms FROM zk_session()');
usleep(1000 * ($timeout_ms / 3 + 300));
$before = lcxid_of($gsid);
$g->query_safe('BEGIN');
$g->query_safe('SELECT 1');
$g->query_safe('COMMIT');
$after = lcxid_of($gsid);
is($after - $before, 1,
	'a COMMIT after a third of the session timeout without an answer makes exactly one request');
$g->query_safe('BEGIN');
$g->query_safe('SELECT 1');
$g->query_safe('COMMIT');
is(lcxid_of($gsid) - $after, 0, 'which renews the lease: the next COMMIT makes none');

# a backend that holds nothing is not checked at all
$g->query_safe(q{SELECT zk_unlock_all()});
usleep(1000 * ($timeout_ms / 3 + 300));
$before = lcxid_of($gsid);
$g->query_safe('BEGIN');
$g->query_safe('SELECT 1');
$g->query_safe('COMMIT');
is(lcxid_of($gsid) - $before, 0, 'a backend holding no lock commits without a request');

$f->query_safe(q{SELECT zk_unlock_all()});
$_->quit for ($s, $listener, $bw, $f, $g);
$na->stop;
$nb->stop;
done_testing();
