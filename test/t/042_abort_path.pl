# The abort path cannot fail: interrupts that arrive while a transaction's
# abort waits for the release of its locks, with ZooKeeper frozen
# (SIGSTOP: the connection stays up, nothing answers) or with the
# connection dropped (a proxy closes it and refuses new ones).
#
# For each fault and each interrupt (query cancel, statement_timeout,
# backend termination) a backend holding a transaction lock runs ROLLBACK
# while the fault lasts; the interrupt comes while the abort waits (seen in
# pg_stat_activity as wait_event_type Extension).  PostgreSQL holds
# interrupts during the abort, so the wait runs to its bound and ROLLBACK
# returns with a WARNING that the release is not yet confirmed: with the
# connection dropped, zklock.connect_timeout after the drop; with ZooKeeper
# frozen, connect_timeout after the client library gives the silent
# connection up (two thirds of the session timeout), within the session
# timeout; the cancel or timeout then ends nothing
# else, the termination ends the backend.  Then, for every case:
# - no PANIC, no "ERRORDATA_STACK_SIZE exceeded", no backend lost to a
#   signal, in the server log;
# - once the fault is over the release completes in the background (or
#   with the terminated backend's session): no node is left;
# - a backend that survived still works, on the same ZooKeeper session.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkFaults;
use ZkTest;

my $zk = zk_standalone();
my $proxy = tcp_proxy_start(zk => $zk->{ports}[0]);
my $pg = pg_with_zklock('abort', $zk);
my $proxied = "127.0.0.1:$proxy->{port}{zk}";

my %fault = (
	freeze => {
		start => sub { zkctl('kill', $zk->{dir}, 1, 'STOP') },
		stop => sub { zkctl('kill', $zk->{dir}, 1, 'CONT') },
	},
	drop => {
		start => sub { tcp_proxy_cmd($proxy, 'reset zk') },
		stop => sub { tcp_proxy_cmd($proxy, 'heal zk') },
	});

# each interrupt: returns whether it was delivered (a signal sent; the
# timeout's 300 ms passed since ROLLBACK began at $_[1])
my %interrupt = (
	cancel => sub { $pg->safe_psql('postgres', "SELECT pg_cancel_backend($_[0])") eq 't' },
	statement_timeout => sub {
		# set before ROLLBACK: it fires by itself, 300 ms into it
		usleep(10_000) while time() - $_[1] < 0.5;
		return 1;
	},
	terminate => sub { $pg->safe_psql('postgres', "SELECT pg_terminate_backend($_[0])") eq 't' },
);

sub in_extension_wait
{
	my ($pid) = @_;
	return $pg->safe_psql('postgres',
		"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $pid") eq
	  'Extension';
}

for my $f (sort keys %fault)
{
	for my $i (sort keys %interrupt)
	{
		my $path = "/abort/$f/$i";
		my $case = "$f, $i";
		my $log_offset = -s $pg->logfile;
		my $v = $pg->background_psql('postgres', on_error_stop => 0);
		my $pid = $v->query_safe('SELECT pg_backend_pid()');
		$v->query_safe("SET zklock.hosts = '$proxied'");
		$v->query_safe(q{SET zklock.session_timeout = '8s'});
		$v->query_safe(q{SET zklock.connect_timeout = '2s'});
		$v->query_safe('BEGIN');
		$v->query_safe("SELECT zk_xact_lock('$path')");
		my $sid = $v->query_safe('SELECT session_id FROM zk_session()');
		$v->query_safe(q{SET LOCAL statement_timeout = '300ms'})
		  if $i eq 'statement_timeout';

		$fault{$f}{start}->();
		my $t_begin = time();
		bg_begin($v, 'ROLLBACK', 'rollback_done');
		ok(wait_for(sub { in_extension_wait($pid) }, 5,
				"$case: ROLLBACK waits for the release"),
			"$case: the abort waits for the release (wait_event_type Extension)");
		usleep(300_000) if $i ne 'statement_timeout';
		ok($interrupt{$i}->($pid, $t_begin), "$case: the interrupt is delivered");
		# the abort still waits once the interrupt came: it came during the
		# wait, and the wait went on
		ok(in_extension_wait($pid), "$case: the interrupt came while the abort waited");

		if ($i eq 'terminate')
		{
			ok( wait_for(
					sub {
						$pg->safe_psql('postgres',
							"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid")
						  eq '0';
					},
					10,
					"$case: the backend exits"),
				"$case: the terminated backend exits once its abort is over");
			$fault{$f}{stop}->();
		}
		else
		{
			my $t0 = time();
			my $done = wait_for(sub { bg_done($v, 'rollback_done') }, 15,
				"$case: ROLLBACK returns");
			my $secs = time() - $t0;
			$fault{$f}{stop}->();
			# the interrupt came 0.3 s into the wait, which ends
			# connect_timeout (2 s) after a drop, and within the session
			# timeout (8 s) of a freeze
			my $bound = $f eq 'drop' ? 2 + 1 : 8 + 1;
			ok($done && $secs < $bound,
				sprintf('%s: ROLLBACK returns within its bound, %d s (%.1f s after the interrupt)',
					$case, $bound, $secs));
			figure("${f}_${i}_ms" => sprintf('%.0f', 1000 * $secs)) if $done;
			my ($out, $err) = bg_finish($v, 'rollback_done');
			like($err, qr/WARNING:  release of 1 ZooKeeper lock is not yet confirmed/,
				"$case: the release is reported unconfirmed");
			unlike($err, qr/PANIC|FATAL/, "$case: no PANIC or FATAL for the session");
			# a cancel or timeout that came during the abort ends nothing more
			my ($rc, $o, $e) = (0, '', '');
			ok( wait_for(
					sub {
						$o = $v->query('SELECT 1');
						$o eq '1';
					},
					10,
					"$case: the backend answers"),
				"$case: the backend still works after its abort");
			ok( wait_for(
					sub {
						$v->query('SELECT state FROM zk_session()') eq 'connected';
					},
					10,
					"$case: reconnected"),
				"$case: its ZooKeeper session is connected again");
			is($v->query('SELECT session_id FROM zk_session()'), $sid,
				"$case: on the same ZooKeeper session");
			$v->quit;
		}
		ok(wait_queue_len($pg, $path, 0, 30, "$case: no node left"),
			"$case: the release completes once the fault is over: no node left");
		my $log = substr(slurp_file($pg->logfile), $log_offset);
		unlike($log, qr/PANIC|ERRORDATA_STACK_SIZE exceeded|terminated by signal/,
			"$case: no PANIC, no error-stack overflow, no crash in the server log");
	}
}

$pg->stop;
done_testing();
