# The dangerous partition: a follower cut off from the leader and the
# other follower, but not from its clients, with a syncLimit x tickTime
# longer than the session timeout of a backend that can reach only that
# follower.
#
# "Default" here is ZooKeeper's shipped zoo_sample.cfg: tickTime=2000 and
# syncLimit=5, that is 10 s before a follower that hears nothing from its
# leader gives up.  The tests run with tickTime=200 (test/zkctl), so
# syncLimit=50 gives the same 10 s.  The backend X's session timeout is
# 3 s: syncLimit x tickTime is longer than the session timeout, as it is
# with the sample's 10 s and any zklock.session_timeout under 10 s.
# (t/036 and t/037 set syncLimit low so that this cannot happen there.)
#
# What happens, and what is measured:
#
# 1. X (server A, zklock.hosts naming follower F alone) holds /dp/r and
#    writes, fenced with its token, to a resource database (server R);
#    Y (server B, zklock.hosts naming the other two members) waits for the
#    lock.
# 2. F is cut off from the other two members (ZkFaults' partitionable
#    ensemble; X's connection to F is left alone).  F goes on answering
#    X's pings and reads, the leader hears nothing more of X and expires
#    its session after the session timeout: Y is granted the lock while X
#    is still connected to F, sees its lock in zk_locks, its own node at
#    the head of the queue (read through F), and no error.  That is the
#    window in which both believe they hold the lock; it lasts until F
#    gives up its leader (syncLimit x tickTime after the cut) and drops X,
#    and X has been disconnected for its session timeout: then X is told
#    (08006, session expired).  The window, from Y's grant to X's 08006, is
#    printed as a figure and must stay within the bound doc/guarantees.md
#    states (syncLimit x tickTime + a third of the session timeout + a tick
#    + 1 s).
# 3. In that window, at the resource: zk_fence(path, X's token) without
#    verify is accepted until Y has fenced (documented); with verify on a
#    backend of R connected to the majority it is refused (55000, the head
#    is Y's node); with verify on a backend of R connected to F, the
#    verify's read waits behind a sync, which F cannot serve without its
#    leader, and ends in an ERROR once F drops its clients: X's token is
#    never accepted there, where F's stale plain reads still show X's node
#    at the head.  Once Y has
#    fenced its own write, every write X makes (fenced with its token) is
#    refused with 55000, until X learns of its loss; the resource ends with
#    Y's write on top of X's earlier ones.
# 4. Healed: F rejoins; X's next call works on a new session; nothing is
#    left behind.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

my $tick_ms = 200;           # test/zkctl's tickTime
my $sync_limit = 50;         # x 200 ms = the sample's 5 x 2000 ms
my $sync_ms = $tick_ms * $sync_limit;
my $session_ms = 3000;       # X's session timeout, shorter than $sync_ms
my $path = '/dp/r';

my $ens = zk_partitionable_ensemble(
	cfg => "syncLimit=$sync_limit\n",
	jvm => '-Dzookeeper.fastleader.maxNotificationInterval=1000');
ok(wait_for(sub { zk_healthy($ens) }, 30, 'a healthy ensemble'),
	'the ensemble serves, with one leader');
my $leader = zk_leader_of($ens);
my $f = (grep { $_ != $leader } 1 .. 3)[0];
my @majority = grep { $_ != $f } 1 .. 3;
note("leader $leader, follower F = $f");

my $na = pg_with_zklock('x', { hosts => zk_member_hosts($ens, $f) },
	"zklock.session_timeout = '${session_ms}ms'\n");
my $nb = pg_with_zklock('y', { hosts => zk_member_hosts($ens, @majority) });
my $nr = pg_with_zklock('resource', $ens);
$nr->safe_psql('postgres', q{
	CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL,
		last_writer text NOT NULL);
	INSERT INTO account VALUES (1, 0, 'nobody')});

# X's write to the resource: fenced with X's token, one transaction;
# returns ('ok', commit time) or (SQLSTATE, stderr)
my $xw = verbose_session($nr);
my $tok_x;
sub x_write
{
	my ($out, $err) = bg_query($xw,
		"BEGIN; SELECT zk_fence('$path', $tok_x);
		 UPDATE account SET balance = balance + 1, last_writer = 'X' WHERE id = 1;
		 COMMIT; SELECT extract(epoch FROM clock_timestamp())");
	return ('ok', (split /\n/, $out)[-1]) if $err eq '';
	bg_query($xw, 'ROLLBACK');
	return (error_code($err), $err);
}

# a fence of TOKEN with verify on SESSION, rolled back: the token
# ('accepted'), or the SQLSTATE and message of the refusal
sub verify_probe
{
	my ($s, $token) = @_;
	my ($out, $err) = bg_query($s,
		"BEGIN; SELECT zk_fence('$path', $token, verify => true)");
	bg_query($s, 'ROLLBACK');
	return $out eq $token ? 'accepted' : $err;
}

# R's backends that verify: one connected to the majority, one to F (its
# session opened before the cut: F cannot open one afterwards)
my $rv_maj = verbose_session($nr);
$rv_maj->query_safe("SET zklock.hosts = '" . zk_member_hosts($ens, @majority) . "'");
# (the one connected to F fences in a database of its own: its verify
# waits, holding the path's row of that database's zk_fence_tokens, and
# would hold up X's and Y's fences meanwhile)
$nr->safe_psql('postgres', 'CREATE DATABASE verify_f');
$nr->safe_psql('verify_f', 'CREATE EXTENSION zklock');
my $rv_f = verbose_session($nr, 'verify_f');
$rv_f->query_safe("SET zklock.hosts = '" . zk_member_hosts($ens, $f) . "'");

# --- 1. X holds the lock through F and writes; Y waits
my $x = verbose_session($na);
$tok_x = $x->query_safe(qq{SELECT zk_lock('$path')});
is(zk_member_of_server($ens, $x->query_safe('SELECT server FROM zk_session()')),
	$f, 'X is connected to follower F');
my ($st) = x_write();
is($st, 'ok', 'X writes to the resource, fenced with its token');
is(verify_probe($rv_maj, $tok_x), 'accepted', 'verify through the majority accepts the holder X');
is(verify_probe($rv_f, $tok_x), 'accepted', 'verify through F accepts the holder X');

my $y = verbose_session($nb);
my $yw = verbose_session($nr);    # Y's writes to the resource
bg_begin($y, qq{SELECT zk_lock('$path') || '|' || extract(epoch FROM clock_timestamp())},
	'y_got');
ok(wait_queue_len($nb, $path, 2, 10, 'Y queued'), 'Y waits for the lock');
# X's view is polled inside a transaction, so that no COMMIT check (which
# would need a sync that F cannot answer) runs between the polls
$x->query_safe('BEGIN');

# --- 2. F cut off from the other two
my $t_cut = time();
zk_isolate($ens, $f);
note('F cut off');

my ($t_y, $tok_y);
my ($t_last_connected, $t_first_unconnected, $t_learn, $learn_err);
my (@x_writes, %probe, $t_y_fenced);
my $polls = 0;
while (time() - $t_cut < 40)
{
	# X's view: its session's state and its hold
	my ($out, $err) = bg_query($x,
		qq{SELECT state || '|' || (SELECT count(*) FROM zk_locks WHERE path = '$path')
		   FROM zk_session()});
	my $now = time();
	$polls++;
	if ($err ne '')
	{
		($t_learn, $learn_err) = ($now, $err);
		last;
	}
	my ($state, $held) = split /\|/, $out;
	if ($state eq 'connected' && $held == 1)
	{
		$t_last_connected = $now;
	}
	else
	{
		$t_first_unconnected //= $now;
	}

	if (!defined $t_y && bg_done($y, 'y_got'))
	{
		my ($yout) = bg_finish($y, 'y_got');
		($tok_y, $t_y) = split /\|/, $yout;
		# at once, while F still serves: what X reads through F, what the
		# resource's fences say of X's token, then Y's own fenced write
		$probe{x_state} = $state;
		# (in a savepoint: should the read fail, X's transaction goes on)
		($probe{x_head}) = bg_query($x,
			qq{SAVEPOINT probe;
			   SELECT fencing_token || ' ' || granted FROM zk_lock_queue('$path', 1)});
		bg_query($x, 'ROLLBACK TO probe');
		($probe{y_head}) = bg_query($y,
			qq{SELECT fencing_token || ' ' || granted FROM zk_lock_queue('$path', 1)});
		($probe{plain}) = bg_query($xw,
			"BEGIN; SELECT zk_fence('$path', $tok_x)");
		bg_query($xw, 'ROLLBACK');
		$probe{verify_majority} = verify_probe($rv_maj, $tok_x);
		# (in the background: its synced read waits until F drops it)
		bg_begin($rv_f, "BEGIN; SELECT zk_fence('$path', $tok_x, verify => true)", 'verify_f');
		$probe{f_mode} = zk_member_mode($ens, $f);
		($probe{y_write}) = bg_query($yw,
			"BEGIN; SELECT zk_fence('$path', $tok_y);
			 UPDATE account SET balance = balance + 100, last_writer = 'Y' WHERE id = 1;
			 COMMIT; SELECT 'done'");
		$t_y_fenced = time();
		next;
	}
	# X goes on writing, as a holder that believes it holds the lock does
	my @w = x_write();
	push @x_writes, [ time(), @w ];
	usleep(50_000);
}
{
	my ($out, $err) = bg_finish($rv_f, 'verify_f');
	bg_query($rv_f, 'ROLLBACK');
	$probe{verify_f} = $out eq $tok_x ? 'accepted' : $err;
}
ok(defined $t_y, 'Y is granted the lock');
ok(defined $t_learn, 'X is told that its lock was lost');
my $ms = sub { defined $_[0] ? sprintf('%.0f', 1000 * ($_[0] - $t_cut)) : -1 };
note(sprintf('after the cut: Y granted at %s ms, X last saw itself connected and holding at '
	  . '%s ms, X first not connected at %s ms, X told at %s ms; %d polls',
		$ms->($t_y), $ms->($t_last_connected), $ms->($t_first_unconnected),
		$ms->($t_learn), $polls));

# --- the window
is($probe{x_state}, 'connected', 'when Y was granted, X was still connected (to F)');
is($probe{x_head}, "$tok_x true",
	"X's read of the queue through F still shows its own node at the head, granted");
is($probe{y_head}, "$tok_y true", "Y's read through the majority shows Y's node there");
cmp_ok($tok_y, '>', $tok_x, "Y's token is greater than X's");
my $connected_after_ms = 1000 * (($t_last_connected // 0) - ($t_y // 1e9));
cmp_ok($connected_after_ms, '>', 0,
	'X saw itself connected and holding after Y was granted (the dangerous partition)');
error_is($learn_err, '08006', qr/ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "\/dp\/r"/,
	'X is told with 08006: session expired, naming the lock');
my $window_ms = 1000 * (($t_learn // 1e9) - ($t_y // 0));
# the bound of doc/guarantees.md ("The dangerous partition")
my $bound_ms = $sync_ms + $session_ms / 3 + $tick_ms + 1000;
cmp_ok($window_ms, '<=', $bound_ms,
	"the window (Y granted .. X told) is within syncLimit x tickTime + session timeout / 3 + a tick + 1 s ($bound_ms ms)");
figure(
	dangerous_window_ms => sprintf('%.0f', $window_ms),
	dangerous_window_bound_ms => sprintf('%.0f', $bound_ms),
	dangerous_connected_after_grant_ms => sprintf('%.0f', $connected_after_ms),
	dangerous_y_granted_ms => $ms->($t_y),
	dangerous_x_dropped_ms => $ms->($t_first_unconnected),
	dangerous_x_told_ms => $ms->($t_learn));

# --- the fence in the window
is($probe{plain}, $tok_x,
	"before Y's first fence, X's token is accepted without verify (nothing newer seen yet)");
error_is($probe{verify_majority}, '55000',
	qr/fencing token $tok_x no longer holds lock path "\/dp\/r"\nDETAIL:  The head of the lock's queue in ZooKeeper is granted exclusive node "[^"]+" with token $tok_y\./,
	'verify through the majority refuses X\'s token: the head is Y\'s node');
like(error_code($probe{verify_f}), qr/^(08001|08006|55000)$/,
	"verify through F does not accept X's token: its synced read cannot be served by F")
  or diag($probe{verify_f});
is((split /\n/, $probe{y_write} // '')[-1], 'done', 'Y fences and writes');
my @stale = grep { $_->[0] > ($t_y_fenced // 1e12) } @x_writes;
my @refused = grep { $_->[1] eq '55000' } @stale;
cmp_ok(scalar @stale, '>', 0, 'X went on writing after Y fenced');
is(scalar @refused, scalar @stale, 'every one of those stale writes of X was refused (55000)')
  or diag(join("\n", map { "$_->[1] $_->[2]" } grep { $_->[1] ne '55000' } @stale));
like($refused[0][2] // '', qr/ERROR:  55000: fencing token $tok_x for lock path "\/dp\/r" is older than the accepted token $tok_y/,
	'naming both tokens') if @refused;
my @landed = grep { $_->[1] eq 'ok' } @x_writes;
my @landed_after_grant = grep { $_->[2] > ($t_y // 1e12) } @landed;
figure(
	dangerous_stale_writes => scalar @stale,
	dangerous_stale_writes_refused => scalar @refused,
	dangerous_x_writes_landed_after_grant => scalar @landed_after_grant,
	dangerous_verify_through_follower => $probe{verify_f} eq 'accepted' ? 'accepted'
	: 'refused (' . (error_code($probe{verify_f}) // 'no code') . ')');
is($nr->safe_psql('postgres', 'SELECT balance || \' \' || last_writer FROM account'),
	(1 + @landed + 100) . ' Y',
	"the resource holds X's writes from before Y's fence and Y's on top, none of X's after it");

# --- 4. healed
$x->query_safe('ROLLBACK');
zk_heal($ens);
is(zk_wait_mode($ens, $f, qr/^follower$/, 60), 'follower', 'healed, F rejoins as a follower');
my ($out, $err) = bg_query($x, q{SELECT zk_try_lock('/dp/after')});
is($out, 't', "X's next call works");
$x->query_safe(q{SELECT zk_unlock_all()});
$y->query_safe(qq{SELECT zk_unlock('$path')});
$_->quit for ($x, $y, $xw, $yw, $rv_maj, $rv_f);
my $left;
ok(wait_for(sub { ($left = zk_ephemerals_under($ens, '/zklock')) eq '' }, 20,
		'no ephemeral node'),
	'no ephemeral node is left under /zklock once every backend is gone')
  or diag("left: $left");

$na->stop;
$nb->stop;
$nr->stop;
done_testing();
