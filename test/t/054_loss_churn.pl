# No false cancel under churn with faults (zklock.on_lock_loss = cancel).
#
# Two servers x three backends take and release locks for about 40 s,
# holding each for 0.3-0.6 s (long enough for the loss watch to watch the
# node), in session and transaction scope, on a 3-server ensemble that they
# reach through a proxy.  Meanwhile a nemesis kills the ensemble's leader
# (and restarts it), and drops every client connection to one server (the
# sessions move to another one).  The session timeout (20 s) outlasts each
# fault, so no session expires and no lock is lost: every statement a
# cancel would have stopped (57014 out of the procedure, which its
# exception block cannot catch) or a lost-lock ERROR (08006 "was lost",
# "session expired") counts as a false cancel, and there must be none.
#
# Every hold is recorded as a span (from after its grant to before its
# release, in the servers' shared clock): no two spans on one path overlap.
# The same spans taken as if on one path must overlap (six backends on four
# paths hold at once), so the checker can see an overlap in this history.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;
use ZkHistory;

my $secs = 40;
my $ens = zk_ensemble();
my $proxy = tcp_proxy_start(map { ("z$_" => $ens->{ports}[ $_ - 1 ]) } 1 .. 3);
my $hosts = join(',', map { "127.0.0.1:$proxy->{port}{\"z$_\"}" } 1 .. 3);
my $conf = "zklock.hosts = '$hosts'\nzklock.session_timeout = '20s'\n"
  . "zklock.connect_timeout = '15s'\n";
my $na = pg_with_zklock('a', $ens, $conf);
my $nb = pg_with_zklock('b', $ens, $conf);

for my $node ($na, $nb)
{
	$node->safe_psql('postgres', q{
CREATE TABLE outcome (pid int, what text);
CREATE TABLE span (path text, token bigint, t0 float8, t1 float8);
CREATE PROCEDURE churn(secs float8) LANGUAGE plpgsql AS $$
DECLARE
	t_end float8 := extract(epoch FROM clock_timestamp()) + secs;
	path text;
	xact boolean;
	token bigint;
	t0 float8;
BEGIN
	SET lock_timeout = '30s';
	WHILE extract(epoch FROM clock_timestamp()) < t_end LOOP
		path := '/churn/' || (1 + floor(random() * 4))::int;
		xact := random() < 0.5;
		BEGIN
			IF xact THEN
				token := zk_xact_lock(path);
			ELSE
				token := zk_lock(path);
			END IF;
			t0 := extract(epoch FROM clock_timestamp());
			PERFORM pg_sleep(0.3 + random() * 0.3);
			-- the span ends before the release (zk_unlock, or COMMIT)
			INSERT INTO span VALUES (path, token, t0, extract(epoch FROM clock_timestamp()));
			IF NOT xact THEN
				PERFORM zk_unlock(path);
			END IF;
			INSERT INTO outcome VALUES (pg_backend_pid(), 'held');
		EXCEPTION WHEN OTHERS THEN
			INSERT INTO outcome VALUES (pg_backend_pid(), SQLSTATE || ' ' || SQLERRM);
		END;
		COMMIT;
	END LOOP;
END
$$;
});
}

my @workers;
for my $node ($na, $na, $na, $nb, $nb, $nb)
{
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		timeout => $secs + 180);
	$s->query_safe('\set VERBOSITY verbose');
	bg_begin($s, "CALL churn($secs)", 'churn_done');
	push @workers, $s;
}

# the nemesis: alternately kill the leader (restarted 3 s later) and drop
# the clients' connections to one server, until the churn ends
my $t_end = time() + $secs - 5;
my ($kills, $drops) = (0, 0);
my $round = 0;
sleep(3);
while (time() < $t_end)
{
	if ($round++ % 2 == 0)
	{
		my $leader = zkctl('leader', $ens->{dir});
		chomp $leader;
		zkctl('kill', $ens->{dir}, $leader);
		sleep(3);
		zkctl('restart', $ens->{dir}, $leader);
		$kills++;
	}
	else
	{
		my $m = 1 + int(rand(3));
		tcp_proxy_cmd($proxy, "reset z$m");
		sleep(1);
		tcp_proxy_cmd($proxy, "heal z$m");
		$drops++;
	}
	sleep(3);
}

my $errors = '';
for my $s (@workers)
{
	my (undef, $err) = bg_finish($s, 'churn_done');
	$errors .= $err;
	$s->quit;
}
my (%outcomes, $held);
for my $node ($na, $nb)
{
	for my $row (split /\n/,
		$node->safe_psql('postgres', 'SELECT what, count(*) FROM outcome GROUP BY 1'))
	{
		my ($what, $n) = split /\|/, $row;
		$outcomes{$what} += $n;
	}
}
$held = $outcomes{held} // 0;
my $false_cancels = ($errors =~ /\b57014\b|was lost|session expired/) ? 1 : 0;
my $lost_errors = 0;
for my $what (keys %outcomes)
{
	$lost_errors += $outcomes{$what} if $what =~ /was lost|session expired|^57014/;
}
note("outcomes: " . join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes));
note("worker errors: $errors") if $errors ne '';

ok($kills >= 2 && $drops >= 2, "the nemesis killed the leader $kills times and dropped connections $drops times");
cmp_ok($held, '>=', 100, "the workers held locks $held times");
is($errors, '', 'every worker ran to the end: no statement was cancelled');
is($lost_errors, 0, 'no lock was reported lost');
# mutual exclusion, from the spans of both servers
my (%spans, @all);
for my $node ($na, $nb)
{
	for my $row (split /\n/, $node->safe_psql('postgres', 'SELECT path, token, t0, t1 FROM span'))
	{
		my ($path, $token, $t0, $t1) = split /\|/, $row;
		push @{ $spans{$path} }, [ $token, $t0, $t1 ];
		push @all, [ $token, $t0, $t1 ];
	}
}
my $overlaps = 0;
$overlaps += scalar(@{ overlapping_holders($spans{$_}) }) for keys %spans;
is(scalar(@all), $held, 'every hold has its span');
is($overlaps, 0, 'no two holds of one path overlap');
cmp_ok(scalar(@{ overlapping_holders(\@all) }), '>', 0,
	'the same spans as if on one path overlap: the checker sees overlaps in this history');
figure(churn_holds => $held, churn_overlaps => $overlaps, churn_leader_kills => $kills,
	churn_connection_drops => $drops,
	churn_false_cancels => $false_cancels + $lost_errors);

done_testing();
