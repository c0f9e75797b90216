# Churn: two servers x four backends for about a minute, doing random
# lock / rlock / try / unlock, transaction locks with COMMIT and ROLLBACK,
# and leases (zk_lease_lock, released by token), while a controller cancels
# and terminates random backends.  A lease outlives a terminated backend:
# the controller releases it by its token, from another backend.  A checker
# outside the servers records, from every worker's point of view, when it
# believed it held what, and asserts mutual exclusion afterwards: never two
# writers, never a writer and a reader on one path at the same time.
#
# A belief starts at the server's clock_timestamp() taken after the grant
# and ends at the server's clock_timestamp() taken before the release (for
# COMMIT/ROLLBACK: before the statement ending the transaction; for a
# cancelled transaction or a terminated backend: when the cancel or
# terminate was sent).  Every end is no later than the real release, every
# start no earlier than the real grant, so an overlap is a real violation.
#
# Afterwards, once every backend is gone and the leases still held are
# released by their tokens, no node is left under the root: no waiting
# lease, however its wait ended, left its node behind.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $duration = $ENV{ZKLOCK_CHURN_SECONDS} // 35;
my @paths = ('/churn/p1', '/churn/p2');

my $zk = zk_standalone();
my $na = pg_with_zklock('a', $zk, "zklock.session_timeout = '5s'\n");
my $nb = pg_with_zklock('b', $zk, "zklock.session_timeout = '5s'\n");
my @nodes = ($na, $na, $na, $na, $nb, $nb, $nb, $nb);
srand(42);

my @intervals;    # [path, mode, start, end, worker]
my %stats = (acquired => 0, tries_failed => 0, cancels => 0,
	terminations => 0, errors => 0, commits => 0, rollbacks => 0,
	leases => 0, leases_orphaned => 0);
my @orphan_leases;    # holds of terminated workers: [path, token, start, worker]
my $seq = 0;

sub new_session
{
	my ($w) = @_;
	my $s = $nodes[ $w->{i} ]->background_psql('postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');    # a cancel is told by its 57014
	$w->{s} = $s;
	$w->{pid} = $s->query_safe('SELECT pg_backend_pid()');
	$w->{state} = 'idle';
	$w->{hold} = undef;
	return;
}

# send SQL; its output up to the marker is handed to $w->{on_done}
sub send_sql
{
	my ($w, $sql, $on_done) = @_;
	my $marker = "__zkt_done_" . ++$seq;
	$w->{marker} = $marker;
	$w->{on_done} = $on_done;
	$w->{s}{stdin} .= "$sql;\n\\echo $marker\n";
	$w->{s}{run}->pump_nb();
	$w->{state} = 'busy';
	return;
}

sub server_now_sql { q{extract(epoch FROM clock_timestamp())} }

sub end_hold
{
	my ($w, $end) = @_;
	return unless $w->{hold};
	push @intervals, [ @{ $w->{hold} }{qw(path mode start)}, $end, $w->{i} ];
	$w->{hold} = undef;
	return;
}

sub start_action
{
	my ($w) = @_;
	my $path = $paths[ int(rand(@paths)) ];
	my $mode = rand() < 0.6 ? 'exclusive' : 'shared';
	my $r = rand();
	my $fn;
	if ($r < 0.35)
	{
		$fn = $mode eq 'exclusive' ? 'zk_lock' : 'zk_rlock';
		send_sql($w, "SELECT zk_try_lock('/churn/noise', 0), $fn('$path') IS NOT NULL, " . server_now_sql(),
			sub { granted($w, $path, $mode, 'session', @_) });
		# the try on /churn/noise makes some calls stack, some not
	}
	elsif ($r < 0.6)
	{
		my $wait = (0, 20, 100)[ int(rand(3)) ];
		$fn = $mode eq 'exclusive' ? 'zk_try_lock' : 'zk_try_rlock';
		send_sql($w, "SELECT 1, $fn('$path', $wait), " . server_now_sql(),
			sub { granted($w, $path, $mode, 'session', @_) });
	}
	elsif ($r < 0.8)
	{
		$fn = $mode eq 'exclusive' ? 'zk_xact_lock' : 'zk_xact_rlock';
		send_sql($w, "BEGIN; SELECT 1, $fn('$path') IS NOT NULL, " . server_now_sql(),
			sub { granted($w, $path, $mode, 'transaction', @_) });
	}
	else
	{
		# a lease: exclusive, held by a TTL node, released by its token
		send_sql($w, "SELECT zk_lease_lock('$path', '30 s'), 't', " . server_now_sql(),
			sub { granted($w, $path, 'exclusive', 'lease', @_) });
	}
	return;
}

sub granted
{
	my ($w, $path, $mode, $scope, $out, $err) = @_;
	if ($err =~ /ERROR/)
	{
		my $cancelled = $err =~ /ERROR:  57014: canceling statement due to user request/;
		$stats{ $cancelled ? 'cancelled_waits' : 'errors' }++;
		diag("worker $w->{i}: $err") unless $cancelled;
		send_sql($w, $scope eq 'transaction' ? 'ROLLBACK' : 'SELECT 1', sub { $w->{state} = 'idle' });
		return;
	}
	my ($token, $got, $t) = split /\|/, (split /\n/, $out)[-1];
	if ($got ne 't')
	{
		$stats{tries_failed}++;
		$w->{state} = 'idle';
		return;
	}
	$stats{acquired}++;
	$stats{leases}++ if $scope eq 'lease';
	$w->{hold} = { path => $path, mode => $mode, start => $t, scope => $scope,
		token => $token };
	# hold it while doing some "work", then release
	my $work = sprintf('%.3f', rand(0.03));
	send_sql($w, "SELECT pg_sleep($work)", sub { release($w, @_) });
	return;
}

sub release
{
	my ($w, $out, $err) = @_;
	my $h = $w->{hold};
	# every release below starts with the server's time (release_began)
	$h->{releasing} = 1;
	if ($h->{scope} eq 'transaction')
	{
		if ($err =~ /ERROR/)
		{
			# cancelled while holding: the transaction is aborted, the lock
			# went with it; the belief ended when the cancel was sent
			end_hold($w, $w->{cancelled_at});
			send_sql($w, 'ROLLBACK', sub { release_error($w, $_[1]); $w->{state} = 'idle' });
			return;
		}
		my $end_cmd = rand() < 0.5 ? 'COMMIT' : 'ROLLBACK';
		$stats{ $end_cmd eq 'COMMIT' ? 'commits' : 'rollbacks' }++;
		send_sql($w, "SELECT " . server_now_sql() . "; $end_cmd", hold_ended($w));
		return;
	}
	if ($h->{scope} eq 'lease')
	{
		# cancelled in its work or not, the lease is held: release it, in
		# two steps, so that a release cut short by a termination has a
		# known end (the belief ends before the unlock is sent)
		send_sql(
			$w,
			"SELECT " . server_now_sql(),
			sub {
				my ($o) = @_;
				($h->{end_at}) = split /\n/, $o;
				send_sql($w, "SELECT zk_lease_unlock('$h->{path}', $h->{token})",
					sub { release_error($w, $_[1]); end_hold($w, $h->{end_at}); $w->{state} = 'idle'; });
			});
		return;
	}
	my $fn = 'zk_unlock';
	send_sql($w, "SELECT " . server_now_sql() . "; SELECT $fn('$h->{path}'); SELECT zk_unlock_all()",
		hold_ended($w));
	return;
}

# release_began(W): the server time at which the release W sent began, if
# it ran that far, else undef.  Read from W's output, which W's callback
# may not have seen yet when W's backend was terminated or the run ended:
# a release that ran before the termination ended the belief then.
sub release_began
{
	my ($w) = @_;
	my $h = $w->{hold};
	return undef unless $h && $h->{releasing};
	return $h->{end_at} if defined $h->{end_at};
	# psql may still be writing what the server sent before the
	# termination: read for up to 0.2 s
	for (1 .. 20)
	{
		eval { $w->{s}{run}->pump_nb() };
		return $1 if $w->{s}{stdout} =~ /^([\d.]+)$/m;
		usleep(10_000);
	}
	return undef;
}

# end_hold_terminated(W, T): end W's hold, its backend terminated at time T
# (or the release it had begun, if earlier)
sub end_hold_terminated
{
	my ($w, $t) = @_;
	my $began = release_began($w);
	end_hold($w, defined $began && $began < $t ? $began : $t);
}

# the on_done of a release that starts with server_now_sql(): the hold
# ended at that time, the worker is idle again
sub hold_ended
{
	my ($w) = @_;
	return sub {
		my ($o, $err) = @_;
		my ($t) = split /\n/, $o;
		release_error($w, $err);
		end_hold($w, $t);
		$w->{state} = 'idle';
	};
}

# an error from a release (unlock, COMMIT, ROLLBACK) counts like one from
# an acquisition: a cancel is expected, anything else is not
sub release_error
{
	my ($w, $err) = @_;
	return unless defined $err && $err =~ /ERROR/;
	my $cancelled = $err =~ /ERROR:  57014: canceling statement due to user request/;
	$stats{ $cancelled ? 'cancelled_releases' : 'errors' }++;
	diag("worker $w->{i}, releasing: $err") unless $cancelled;
}

my @workers = map { { i => $_ } } 0 .. $#nodes;
new_session($_) for @workers;
my $control_a = $na->background_psql('postgres');
my $control_b = $nb->background_psql('postgres');
# A worker's backend may be gone already (terminated a moment ago, its
# worker not connected again yet): pg_terminate_backend's WARNING that the
# pid is no backend is not a failure of the control session.
$_->query_safe('SET client_min_messages = error') for ($control_a, $control_b);

my $t_end = time() + $duration;
my $next_fault = time() + 0.5;
while (time() < $t_end)
{
	for my $w (@workers)
	{
		if ($w->{state} eq 'idle')
		{
			start_action($w);
			next;
		}
		my $alive = eval { $w->{s}{run}->pump_nb(); 1 };
		if (!$alive || !$w->{s}{run}->pumpable)
		{
			# the backend was terminated: start over with a new one; a
			# lease it held is held still, until the controller releases it
			if ($w->{hold} && $w->{hold}{scope} eq 'lease')
			{
				push @orphan_leases,
				  [ @{ $w->{hold} }{qw(path token start)}, release_began($w), $w->{i} ];
				$w->{hold} = undef;
			}
			end_hold_terminated($w, $w->{terminated_at});
			eval { $w->{s}{run}->kill_kill };
			new_session($w);
			next;
		}
		my $m = $w->{marker};
		if ($w->{s}{stdout} =~ /^(.*?)\n?$m\n/s)
		{
			my $out = $1;
			$w->{s}{stdout} = '';
			my $err = $w->{s}{stderr};
			$w->{s}{stderr} = '';
			$w->{on_done}->($out, $err);
		}
	}
	# the leases of terminated backends: released by token, from the
	# controller of the other server
	while (my $o = shift @orphan_leases)
	{
		my ($path, $token, $start, $end_at, $i) = @$o;
		my $control = $i < 4 ? $control_b : $control_a;
		my ($out, $err) = bg_query($control,
			'SELECT ' . server_now_sql() . "; SELECT zk_lease_unlock('$path', $token)");
		my ($now, $released) = split /\n/, $out;
		# a release the worker had begun ($end_at) may have been done
		# already: then zk_lease_unlock says so, with its WARNING, and
		# returns false
		push @intervals, [ $path, 'exclusive', $start, $end_at // $now, $i ];
		$stats{leases_orphaned}++;
		$stats{errors}++, diag("lease $token of worker $i on $path was not held: $err")
		  if $released ne 't' && !defined $end_at;
		$stats{errors}++, diag("releasing lease $token of worker $i on $path: $err")
		  if $err ne ''
		  && !(defined $end_at && $err =~ /^WARNING:  no ZooKeeper lease with token $token holds lock/);
	}
	if (time() >= $next_fault)
	{
		$next_fault = time() + 0.3 + rand(0.4);
		my $w = $workers[ int(rand(@workers)) ];
		my $control = $w->{i} < 4 ? $control_a : $control_b;
		my $now = $control->query_safe('SELECT ' . server_now_sql());
		if (rand() < 0.75)
		{
			$w->{cancelled_at} = $now;
			$control->query_safe("SELECT pg_cancel_backend($w->{pid})");
			$stats{cancels}++;
		}
		else
		{
			$w->{terminated_at} = $now;
			$control->query_safe("SELECT pg_terminate_backend($w->{pid})");
			$stats{terminations}++;
		}
	}
	usleep(1000);
	if ($ENV{ZKLOCK_CHURN_DEBUG} && time() - ($main::last_debug // 0) > 1)
	{
		$main::last_debug = time();
		diag(join(' ', map { "$_->{i}:$_->{state}" } @workers));
	}
}

# stop everything (terminate every worker's backend first: a worker
# waiting for a lock would otherwise never finish its statement), then
# check
for my $w (@workers)
{
	my $control = $w->{i} < 4 ? $control_a : $control_b;
	my $now = $control->query_safe('SELECT ' . server_now_sql());
	$control->query_safe("SELECT pg_terminate_backend($w->{pid})");
	end_hold_terminated($w, $now);
	eval { $w->{s}{run}->kill_kill(grace => 5) };
}
# leases still held (their backends were terminated just now, or a release
# was cancelled): released by token; what is left after that is an orphan
my $leases_left = $na->safe_psql('postgres',
	q{SELECT count(zk_lease_unlock(path, fencing_token)) FROM zk_cluster_locks('/churn')
	  WHERE lease_expires_at IS NOT NULL});
note("leases still held at the end, released by token: $leases_left");
$_->quit for ($control_a, $control_b);

# the checker: overlapping beliefs where one is exclusive
sub count_violations
{
	my ($intervals, $verbose) = @_;
	my $violations = 0;
	my %paths = map { $_->[0] => 1 } @$intervals;
	for my $p (sort keys %paths)
	{
		my @iv = sort { $a->[2] <=> $b->[2] } grep { $_->[0] eq $p } @$intervals;
		for my $i (0 .. $#iv)
		{
			for my $j ($i + 1 .. $#iv)
			{
				last if $iv[$j][2] >= $iv[$i][3];    # starts after i ended
				next if $iv[$i][1] eq 'shared' && $iv[$j][1] eq 'shared';
				$violations++;
				diag(sprintf('violation on %s: worker %d %s [%.6f, %.6f] and worker %d %s [%.6f, %.6f]',
						$p, $iv[$i][4], $iv[$i][1], $iv[$i][2], $iv[$i][3],
						$iv[$j][4], $iv[$j][1], $iv[$j][2], $iv[$j][3]))
				  if $verbose;
			}
		}
	}
	return $violations;
}

# the checker can fail: two writers, a writer inside a reader, two readers
is( count_violations(
		[
			[ '/x', 'exclusive', 1.0, 2.0, 0 ], [ '/x', 'exclusive', 1.5, 2.5, 1 ],
			[ '/y', 'shared', 1.0, 3.0, 0 ], [ '/y', 'exclusive', 2.0, 2.1, 1 ],
			[ '/z', 'shared', 1.0, 3.0, 0 ], [ '/z', 'shared', 2.0, 4.0, 1 ],
			[ '/w', 'exclusive', 1.0, 2.0, 0 ], [ '/w', 'exclusive', 2.0, 3.0, 1 ],
		],
		0),
	2,
	'checker self-test: it flags overlapping writers and writer+reader only');

my $violations = count_violations(\@intervals, 1);
note(sprintf('churn for %ds: %d acquisitions (%d intervals checked), %d failed tries, '
	  . '%d cancels sent, %d terminations, %d commits, %d rollbacks, %d leases '
	  . '(%d released by the controller after their backend was terminated), '
	  . '%d unexpected errors',
		$duration, $stats{acquired}, scalar(@intervals), $stats{tries_failed},
		$stats{cancels}, $stats{terminations}, $stats{commits}, $stats{rollbacks},
		$stats{leases}, $stats{leases_orphaned}, $stats{errors}));
figure(
	seconds => $duration,
	acquired => $stats{acquired},
	leases => $stats{leases},
	violations => $violations,
	tries_failed => $stats{tries_failed},
	cancels => $stats{cancels},
	terminations => $stats{terminations},
	leases_orphaned => $stats{leases_orphaned},
	commits => $stats{commits},
	rollbacks => $stats{rollbacks},
	errors => $stats{errors});
cmp_ok($stats{acquired}, '>', 100, 'the churn made many acquisitions');
cmp_ok($stats{leases}, '>', 10, 'leases among them');
cmp_ok($stats{terminations}, '>', 0, 'and terminated backends');
is($violations, 0, 'no two writers, no writer and reader at once (0 violations)');
is($stats{errors}, 0, 'no error other than the cancels');

# every backend is gone: nothing may be left under the root
sub children_left
{
	return kazoo_run($zk,
		    "n = 0\n"
		  . "for p in ['/zklock/churn/p1', '/zklock/churn/p2', '/zklock/churn/noise']:\n"
		  . "    if c.exists(p): n += len(c.get_children(p))\n"
		  . "print(n)");
}
ok(wait_for(sub { children_left() eq '0' }, 20, 'empty queues'),
	'no queue node is left once every backend is gone');
figure(nodes_left => children_left());

$na->stop;
$nb->stop;
done_testing();
