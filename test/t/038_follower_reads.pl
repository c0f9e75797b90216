# A holder connected to a follower that is cut off from the quorum, with a
# session timeout shorter than the time the follower takes to notice
# (syncLimit ticks): meanwhile the follower still answers reads.
#
# An answer to a read is therefore no proof that the session is alive: the
# leader may have expired it already and granted the lock to another
# server.  zklock's COMMIT check counts only answers to writes and syncs,
# which the leader orders; here the holder's transactions call only a read
# (zk_lock_queue) besides writing a table, so each COMMIT more than a third
# of the session timeout after the last such answer must confirm the
# session with a sync, which the cut-off follower cannot answer.
#
# Whatever happens then (the client library moves the session to the
# majority in time, or the session expires and another server's waiter is
# granted the lock), no COMMIT of the old holder may succeed after the
# other server was granted the lock: counted at the end from the times
# both recorded.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

# a follower notices that it is cut off only after syncLimit ticks (5 s),
# longer than the holder's session timeout (2 s)
my $ens = zk_partitionable_ensemble(cfg => "syncLimit=25\n",
	jvm => '-Dzookeeper.fastleader.maxNotificationInterval=1000');
my $na = pg_with_zklock('a', $ens, "zklock.session_timeout = '2s'\n");
my $nb = pg_with_zklock('b', $ens);
$na->safe_psql('postgres', 'CREATE TABLE work (at timestamptz)');

# the holder: a backend of server A connected to a follower
my $leader = zk_leader_of($ens);
my ($h, $m);
for (1 .. 30)
{
	$h = verbose_session($na);
	$h->query_safe(q{SELECT zk_lock('/fr/x')});
	$m = zk_member_of_server($ens,
		$h->query_safe('SELECT server FROM zk_session()'));
	last if defined $m && $m != $leader;
	$h->quit;
	undef $m;
}
ok(defined $m, 'a holder connected to a follower');
note("holder on member $m, leader $leader");

# the waiter: server B, connected to the other two members
my $w = verbose_session($nb);
$w->query_safe("SET zklock.hosts = '"
	  . zk_member_hosts($ens, grep { $_ != $m } 1 .. 3) . "'");
bg_begin($w, q{SELECT extract(epoch FROM clock_timestamp()) FROM (SELECT zk_lock('/fr/x')) AS l},
	'w_got');
ok(wait_queue_len($nb, '/fr/x', 2, 10, 'queued'), "another server's backend waits");

zk_isolate($ens, $m);
my $t0 = time();
my ($commits, $failed, $granted) = (0, 0, undef);
my @ok_at;    # when each successful COMMIT of the holder returned (epoch)
while (time() - $t0 < 12)
{
	my ($out, $err) = bg_query($h,
		q{BEGIN; SELECT count(*) FROM zk_lock_queue('/fr/x');
		  INSERT INTO work VALUES (clock_timestamp()); COMMIT;
		  SELECT extract(epoch FROM clock_timestamp())});
	if ($err eq '')
	{
		$commits++;
		push @ok_at, (split /\n/, $out)[-1];
	}
	else
	{
		$failed++;
		like($err, qr/ERROR:  08006: /, 'a holder COMMIT that fails fails with 08006');
		last;
	}
	if (!defined $granted && bg_done($w, 'w_got'))
	{
		my ($o) = bg_finish($w, 'w_got');
		($granted) = $o =~ /^([\d.]+)$/m;
	}
	usleep(100_000);
}
note("holder: $commits COMMITs succeeded, $failed failed, in "
	  . sprintf('%.1f s', time() - $t0));
zk_heal($ens);
# not granted while cut off: the holder kept its session, and releases
my $released = !defined $granted;
if (!defined $granted)
{
	# the holder kept its session (it moved to the majority): release
	$h->query_safe(q{SELECT zk_unlock_all()}) unless $failed;
	ok(wait_for(sub { bg_done($w, 'w_got') }, 30, 'the waiter'),
		'the waiter is granted the lock in the end');
	my ($o) = bg_finish($w, 'w_got');
	($granted) = $o =~ /^([\d.]+)$/m;
}
ok(defined $granted, 'the other server was granted the lock');
my $after = $na->safe_psql('postgres',
	"SELECT count(*) FROM work WHERE at >= to_timestamp($granted)");
is($after, '0', 'no COMMIT of the old holder after the other server was granted the lock');
note('holder COMMITs returned after the grant: '
	  . scalar(grep { $_ >= $granted } @ok_at));
figure(
	commits_after_grant => scalar(grep { $_ >= $granted } @ok_at),
	commits => $commits,
	commits_failed => $failed,
	handed_over => $released ? 'at its release (the session kept on the majority)'
	: 'once its session expired');

$h->quit;
$w->quit;
done_testing();
