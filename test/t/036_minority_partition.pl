# A minority partition: the ZooKeeper server a backend is connected to is
# cut off from the other two members of a 3-server ensemble, while the
# backend's own connection to it is left alone.
#
# The members reach each other only through test/python/tcpproxy.py (the
# "partitionable" ensemble of ZkFaults.pm); cutting every forwarder to and
# from one member drops every byte between it and the others, both ways,
# with the connections left open, as a network that silently loses packets
# would.  Clients talk to the servers directly.
#
# 1. A follower is cut off while a backend connected to it holds a lock
#    (its zklock.hosts names the whole ensemble): the follower stops
#    serving, the majority keeps its leader; the backend moves to the
#    majority within its session timeout, on the same session, and keeps
#    its lock (zk_locks, COMMIT of a transaction, a write); a backend of
#    another PostgreSQL server, connected to the majority, cannot take the
#    lock meanwhile (every try false), and takes it once it is released.
# 2. The leader is cut off, past the session timeout of a backend that can
#    reach only it (zklock.hosts names it alone) and holds a session lock
#    and, in an open transaction that wrote, a transaction lock: the
#    majority elects a new leader; the other server's waiter is granted the
#    lock only once that session expired, never before (tries false until
#    then); after the partition heals, the backend's COMMIT fails with
#    08006 naming both lost locks and nothing it wrote is visible; its next
#    call works on a new session.  A backend on the same (old leader)
#    server whose zklock.hosts names the whole ensemble moves to the
#    majority and keeps its lock, as in 1.
# 3. Healed: the cut-off member rejoins as a follower; once every backend
#    is gone no queue node and no ephemeral node is left in ZooKeeper.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

# syncLimit 5 ticks (1 s): a follower that hears nothing from the leader
# for a second stops serving, and a leader that hears from no quorum for a
# second steps down.  Every session here is at least three times that
# long, so a member stops serving (and drops its clients) well before a
# session it was serving can have expired at the majority.  (With a
# session shorter than syncLimit x tickTime, the cut-off member goes on
# answering a backend whose session the majority has already expired and
# whose lock another server holds; zklock takes those answers as proof
# that the session lives, and the backend's COMMITs succeed meanwhile.)
# A member that lost the election searches again at most every second.
my $ens = zk_partitionable_ensemble(
	cfg => "syncLimit=5\n",
	jvm => '-Dzookeeper.fastleader.maxNotificationInterval=1000');
my $na = pg_with_zklock('a', $ens, "zklock.session_timeout = '6s'\n");
my $nb = pg_with_zklock('b', $ens);
$na->safe_psql('postgres', 'CREATE TABLE work (who text)');

my @members = (1 .. 3);
sub modes { join(' ', map { "$_:" . zk_member_mode($ens, $_) } @members) }

# a backend of NODE whose session is on a member for which WANT returns
# true (the client library picks a server of zklock.hosts at random: try
# new backends until one lands there); SETUP statements run first
sub backend_on
{
	my ($node, $want, @setup) = @_;
	for (1 .. 60)
	{
		my $s = verbose_session($node);
		$s->query_safe($_) for @setup;
		$s->query_safe(q{SELECT zk_try_lock('/part/open') AND zk_unlock('/part/open')});
		my $m = zk_member_of_server($ens,
			$s->query_safe('SELECT server FROM zk_session()'));
		return ($s, $m) if defined $m && $want->($m);
		$s->quit;
	}
	die 'no backend landed where wanted in 60 tries';
}

# the member a session is connected to now, or undef (not connected, or
# the statement failed: a holder that cannot confirm its session cannot
# COMMIT even this)
sub member_of
{
	my ($s) = @_;
	my ($out, $err) =
	  bg_query($s, q{SELECT state || '|' || coalesce(server, '') FROM zk_session()});
	return undef if $err ne '';
	my ($state, $server) = split /\|/, $out;
	return $state eq 'connected' ? zk_member_of_server($ens, $server) : undef;
}

# a try from another server: 't', 'f', or the SQLSTATE of its error
sub try_from
{
	my ($s, $path) = @_;
	my ($out, $err) = bg_query($s, "SELECT zk_try_lock('$path', 100)");
	return $out if $err eq '';
	return ($err =~ /ERROR:  ([0-9A-Z]{5}):/)[0] // $err;
}

my $leader = zk_leader_of($ens);
ok(defined $leader, "the ensemble has a leader (member $leader)") or BAIL_OUT(modes());

# --- 1. a follower cut off, for less than the session timeout
my ($h1, $m1) = backend_on($na, sub { $_[0] != $leader });
my $sid1 = $h1->query_safe('SELECT session_id FROM zk_session()');
my $tok1 = $h1->query_safe(q{SELECT zk_lock('/part/kept')});
note("holder on follower $m1, session $sid1, token $tok1; leader $leader");
my @majority = grep { $_ != $m1 } @members;
my $c = verbose_session($nb);
$c->query_safe("SET zklock.hosts = '" . zk_member_hosts($ens, @majority) . "'");
is(try_from($c, '/part/kept'), 'f', 'before the partition, another server cannot take the lock');

my $t_cut = time();
zk_isolate($ens, $m1);
my $mode = zk_wait_mode($ens, $m1, qr/^not serving$/, 20);
is($mode, 'not serving', "the cut-off follower stops serving requests");
note(sprintf('follower %d not serving %.1f s after the cut', $m1, time() - $t_cut));
figure(follower_not_serving_s => sprintf('%.1f', time() - $t_cut));
like(zk_4lw($ens->{ports}[ $m1 - 1 ], 'srvr'),
	qr/This ZooKeeper instance is not currently serving requests/,
	"srvr on the cut-off member: not currently serving requests");
like(zk_4lw($ens->{ports}[ $m1 - 1 ], 'mntr'),
	qr/not currently serving requests/, 'and mntr says the same');

# the holder moves to the majority; the other server keeps trying, until
# it has moved and for 3 s at least
my (%tries, $moved_ms);
while (time() - $t_cut < 15)
{
	$tries{ try_from($c, '/part/kept') }++;
	if (!defined $moved_ms)
	{
		my $now_on = member_of($h1);
		$moved_ms = 1000 * (time() - $t_cut) if defined $now_on && $now_on != $m1;
	}
	last if defined $moved_ms && time() - $t_cut >= 3;
}
ok(defined $moved_ms, 'the holder reconnects to a member of the majority');
note(sprintf('holder connected to member %s %.0f ms after the cut (session timeout 6 s); '
	  . 'tries from the other server meanwhile: %s',
		member_of($h1) // 'none', $moved_ms // -1,
		join(', ', map { "$_: $tries{$_}" } sort keys %tries)));
{
	my $n = 0;
	$n += $_ for values %tries;
	figure(follower_holder_moved_ms => sprintf('%.0f', $moved_ms // -1),
		follower_tries => $n, follower_tries_granted => $tries{t} // 0);
}
cmp_ok($moved_ms // 1e9, '<', 6000, 'within the session timeout');
my $ntries = 0;
$ntries += $_ for values %tries;
cmp_ok($ntries, '>', 0, 'the other server tried meanwhile');
is(join(',', grep { $_ ne 'f' } keys %tries), '',
	'no try from the other server got the lock while the holder moved (all false)');
is($h1->query_safe('SELECT session_id FROM zk_session()'), $sid1, 'on the same session');
is($h1->query_safe(q{SELECT path || ' ' || fencing_token FROM zk_locks}),
	"/part/kept $tok1", 'holding its lock still (zk_locks), same token');
my ($out, $err) = bg_query($h1, q{BEGIN; INSERT INTO work VALUES ('h1'); COMMIT});
is($err, '', 'a transaction of the holder COMMITs');
is($na->safe_psql('postgres', q{SELECT count(*) FROM work WHERE who = 'h1'}), '1',
	'and its write is visible');
($out, $err) = bg_query($h1, q{SELECT zk_try_lock('/part/write') AND zk_unlock('/part/write')});
is($out, 't', 'and the holder can write to ZooKeeper again');
is(try_from($c, '/part/kept'), 'f', 'the other server still cannot take the lock');
is(zk_leader_of($ens, @majority), $leader, 'the majority kept its leader');

zk_heal($ens);
$mode = zk_wait_mode($ens, $m1, qr/^follower$/, 60);
is($mode, 'follower', 'healed, the cut-off member rejoins as a follower');
is(try_from($c, '/part/kept'), 'f', 'after the heal the lock is still held');
$h1->query_safe(q{SELECT zk_unlock('/part/kept')});
($out) = bg_query($c, q{SELECT zk_lock('/part/kept')});
cmp_ok($out, '>', $tok1, 'released, the other server takes it, with a greater token');
$c->query_safe(q{SELECT zk_unlock('/part/kept')});

# --- 2. the leader cut off, past the session timeout of a backend that
# can reach only it
$leader = zk_leader_of($ens);
ok(defined $leader, "a leader before the second partition (member $leader)");
my @rest = grep { $_ != $leader } @members;
my $pin = zk_member_hosts($ens, $leader);
my ($h2) = backend_on($na, sub { 1 }, "SET zklock.hosts = '$pin'",
	q{SET zklock.session_timeout = '3s'});
my $sid2 = $h2->query_safe('SELECT session_id FROM zk_session()');
is($h2->query_safe('SELECT timeout_ms FROM zk_session()'), '3000',
	'the pinned backend has a 3 s session');
my $tok2 = $h2->query_safe(q{SELECT zk_lock('/part/lost')});
$h2->query_safe('BEGIN');
$h2->query_safe(q{SELECT zk_xact_lock('/part/xlost')});
$h2->query_safe(q{INSERT INTO work VALUES ('h2')});
my ($h3, $m3) = backend_on($na, sub { $_[0] == $leader });
my $sid3 = $h3->query_safe('SELECT session_id FROM zk_session()');
my $tok3 = $h3->query_safe(q{SELECT zk_lock('/part/kept2')});
note("pinned backend on leader $leader (session $sid2), another on it with every host "
	  . "(session $sid3)");

$c->query_safe("SET zklock.hosts = '" . zk_member_hosts($ens, @rest) . "'");
my $w = verbose_session($nb);
$w->query_safe("SET zklock.hosts = '" . zk_member_hosts($ens, @rest) . "'");
bg_begin($w, q{SELECT zk_lock('/part/lost') AS token, clock_timestamp()}, 'w_got');
ok(wait_queue_len($nb, '/part/lost', 2, 10, 'the waiter queued'),
	'a backend of the other server waits for the pinned backend\'s lock');

$t_cut = time();
zk_isolate($ens, $leader);
$mode = zk_wait_mode($ens, $leader, qr/^not serving$/, 20);
is($mode, 'not serving', 'the cut-off leader stops serving requests');
ok(wait_for(sub { defined zk_leader_of($ens, @rest) }, 30, 'a new leader'),
	'the majority elects a new leader');
my $new_leader = zk_leader_of($ens, @rest);
note(sprintf('new leader %s %.1f s after the cut', $new_leader // 'none', time() - $t_cut));
figure(new_leader_s => sprintf('%.1f', time() - $t_cut));

# until the pinned session expires, the lock stays held
my ($granted_ms, %tries2);
while (time() - $t_cut < 30)
{
	if (bg_done($w, 'w_got'))
	{
		$granted_ms = 1000 * (time() - $t_cut);
		last;
	}
	$tries2{ try_from($c, '/part/lost') }++;
}
ok(defined $granted_ms, 'the waiter on the other server gets the lock');
($out, $err) = bg_finish($w, 'w_got');
my ($wtok) = $out =~ /^(\d+)\|/m;
note(sprintf('waiter granted %.0f ms after the cut (pinned session timeout 3 s); '
	  . 'tries meanwhile: %s', $granted_ms // -1,
		join(', ', map { "$_: $tries2{$_}" } sort keys %tries2)));
{
	my $n = 0;
	$n += $_ for values %tries2;
	figure(leader_waiter_granted_ms => sprintf('%.0f', $granted_ms // -1),
		leader_tries => $n, leader_tries_granted => $tries2{t} // 0);
}
cmp_ok($granted_ms // 0, '>=', 3000 - 200,
	'not before the pinned session could have expired (3 s, less a tick)');
is(join(',', grep { $_ ne 'f' && $_ ne '08006' } keys %tries2), '',
	'every try meanwhile was false (or 08006 during the election), none granted');
cmp_ok($wtok // 0, '>', $tok2, 'the waiter\'s token is greater than the lost holder\'s');

my $moved3 = wait_for(sub { my $o = member_of($h3); defined $o && $o != $leader }, 10,
	'the backend with every host to move');
ok($moved3, 'the backend on the old leader with every host moved to the majority');
is($h3->query_safe(q{SELECT (SELECT session_id FROM zk_session()) || ' '
	|| (SELECT path || ' ' || fencing_token FROM zk_locks)}),
	"$sid3 /part/kept2 $tok3", 'same session, lock kept');
is(try_from($c, '/part/kept2'), 'f', 'and the other server cannot take that one');

zk_heal($ens);
$mode = zk_wait_mode($ens, $leader, qr/^follower$/, 60);
is($mode, 'follower', 'healed, the old leader rejoins as a follower');
# Its COMMIT fails either way; what it can say depends on whether its
# client library has reconnected (to the healed member) since the heal and
# heard that the session expired, or not yet, when all the backend knows is
# that it has been out of touch for longer than the session timeout.
($out, $err) = bg_query($h2, 'COMMIT');
error_is($err, '08006',
	qr/(ZooKeeper session expired: 2 locks were lost|could not confirm the ZooKeeper session before commit)/,
	'the pinned backend\'s COMMIT fails: 08006, session expired (or not confirmed)');
like($err, qr{"/part/lost" \(exclusive, session\), "/part/xlost" \(exclusive, transaction\)\.},
	'naming both lost locks');
is($na->safe_psql('postgres', q{SELECT count(*) FROM work WHERE who = 'h2'}), '0',
	'nothing it wrote is visible');
my $said_expired = $err =~ /session expired: 2 locks were lost/;
($out, $err) = bg_query($h2, q{SELECT zk_try_lock('/part/after')});
if (!$said_expired)
{
	# the COMMIT said "may be lost": the next call says the session expired
	error_is($err, '08006',
		qr/ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "\/part\/lost" \(exclusive, session\)\./,
		'its next call reports the expired session and its session lock');
	($out, $err) = bg_query($h2, q{SELECT zk_try_lock('/part/after')});
}
is($out, 't', 'its next call works');
isnt($h2->query_safe('SELECT session_id FROM zk_session()'), $sid2, 'on a new session');
is(try_from($c, '/part/lost'), 'f', 'the lock stays with the waiter that got it');

# --- 3. nothing left behind
$w->query_safe(q{SELECT zk_unlock_all()});
$h2->query_safe(q{SELECT zk_unlock_all()});
$h3->query_safe(q{SELECT zk_unlock_all()});
is(zk_member_mode($ens, $new_leader), 'leader', 'one leader after all this');
$_->quit for ($h1, $h2, $h3, $c, $w);
ok( wait_queues_empty(
		$nb, [ '/part/kept', '/part/kept2', '/part/lost', '/part/xlost', '/part/open',
			'/part/write', '/part/after' ],
		20, 'empty queues'),
	'no queue node is left');
my $left;
ok(wait_for(sub { ($left = zk_ephemerals_under($ens, '/zklock')) eq '' }, 20,
		'no ephemeral node'),
	'no ephemeral node at all under /zklock once every backend is gone')
  or diag("left: $left");

$na->stop;
$nb->stop;
done_testing();
