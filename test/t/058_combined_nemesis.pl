# Faults that overlap in time, in the Jepsen style, against a resource
# fenced by zk_fence: run twice, without the fence and with it.
#
# Four workers, two on each of two PostgreSQL servers (A reaches a
# partitionable 3-server ensemble directly and has a fake clock; B reaches
# it through one python/zkproxy.py per member, so that its connections can
# be dropped), loop concurrently:
#
#   token := zk_lock('/combined/account')                    (A or B)
#   read:  BEGIN; [SELECT zk_fence(path, token);]             (resource R)
#          INSERT INTO reads SELECT token, balance ...; COMMIT
#   work:  SELECT pg_sleep(a few ms)                          (A or B)
#   write: BEGIN; [SELECT zk_fence(path, token);]             (resource R)
#          UPDATE account SET balance = read + 1;
#          INSERT INTO history (token, old, new); COMMIT;
#          INSERT INTO attempts (token)
#   zk_unlock('/combined/account')
#
# writing blindly after the work step, whatever zklock said.  R is a third
# server with zklock installed and no ZooKeeper it could reach (zk_fence
# makes no ZooKeeper request).  The read is fenced too: fencing the write
# alone would let a stale holder write between its successor's read and
# write.
#
# The nemesis runs four lanes at once, so that faults overlap in time:
# - holders: a holder, during its work step, is paused (SIGSTOP of its
#   zklock backend) past its session timeout until a successor has
#   written, then woken (SIGCONT); or, on B, cut off from ZooKeeper (every
#   connection of B dropped and refused) until it is told of the loss and
#   ZooKeeper has expired its session, then let write once a successor has
#   written;
# - ZooKeeper: the leader killed (SIGKILL) and restarted, or the leader or
#   a follower cut off from the other two members (ZkFaults' zk_isolate)
#   and healed, one at a time, none starting while a holder fault waits
#   for a holder to stall, and only a follower while a holder is stalled
#   (a new leader gives every session a fresh timeout);
# - connections: every connection of B dropped for less than the session
#   timeout;
# - clock: A's wall clock jumps an hour forward, back, and to the real time
#   (ZkFaults' fake clock; its monotonic clock does not jump).
# The schedule (each lane's kinds, lengths and pauses) is drawn from a seed,
# printed at the start; ZKLOCK_NEMESIS_SEED=N replays it (the ZooKeeper
# lane always starts with a leader killed, then a member cut off).  Each
# run lasts 20 s (ZKLOCK_NEMESIS_SECONDS lengthens it, for
# test/reliability.sh or a bench; CI ignores it), and on, at most twice as
# long, until a holder was paused, a holder cut off, the leader killed and
# a member cut off; no new fault starts in the last 5 s, and the faults
# under way are ended before the history is read.
#
# The checker (ZkHistory's check_fenced_history) reads R's history: a
# fencing violation is an applied write whose token is not larger than the
# one applied before it, a lost update an applied write that does not
# continue the previous one, an overlap two holders whose spans at R
# (applied read to applied write) overlap; a refusal must be stale (a
# larger token was applied at R, read or write, before it).  Every stalled
# holder (paused or cut off) that zklock told of its loss (its work step
# ended with 08006) must have been stopped within the bound of
# doc/guarantees.md ("A lost lock stops its holder"): a cut-off holder
# within 5/3 of the session timeout + 1 s of the cut, a paused one "at
# once" when it runs again: as soon as its client library reaches a server
# and hears that the session expired (taken here as zklock.connect_timeout,
# 2 s).  The checker is self-tested first on histories broken on purpose.
# - Fence off: violations are found (> 0): the nemesis bites and the
#   checker sees it.
# - Fence on: 0 violations, 0 refusals that are not stale, the final
#   balance is the number of applied writes, and stale writes were refused.
# - Both: a holder was stalled, faults overlapped, the grants' tokens
#   increase, no stalled holder was stopped late, and once no
#   worker holds the lock its queue is empty (within the session timeout
#   + 6 s: a hold reported lost leaves no node behind).  Over the two
#   runs, every kind of fault was injected.
# Figures: fenced writes, refused writes, violations without and with the
# fence, faults injected by kind, the longest stop delay.
use strict;
use warnings;

use lib 'lib';
use List::Util qw(max min shuffle);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;
use ZkHistory;

my $seed = $ENV{ZKLOCK_NEMESIS_SEED} // int(rand(2**31));
my $duration = $ENV{ZKLOCK_NEMESIS_SECONDS} // 20;
my $session_s = 4;
my $path = '/combined/account';
# the documented bounds (doc/guarantees.md, "A lost lock stops its holder")
my $cut_bound = 5 / 3 * $session_s + 1;
my $pause_bound = 2;    # zklock.connect_timeout: the library reaches a server
note("nemesis seed $seed: ZKLOCK_NEMESIS_SEED=$seed replays this schedule");

# --- the checker (test/lib/ZkHistory.pm), on histories broken on purpose
# (times in seconds; a write is [token, old, new, at], a read [token, at])
my %clean = (
	reads => [ [ 10, 1.0 ], [ 12, 3.0 ], [ 15, 5.0 ] ],
	writes => [ [ 10, 0, 1, 2.0 ], [ 12, 1, 2, 4.0 ], [ 15, 2, 3, 6.0 ] ],
	refused => [ [ 11, 3.5 ] ],
	grants => [ [ 0.5, 10 ], [ 0.7, 11 ], [ 2.5, 12 ], [ 4.5, 15 ] ]);
is_deeply(check_fenced_history(%clean),
	{ fencing => 0, lost => 0, grant_order => 0, overlaps => 0, refused_not_stale => 0 },
	'checker self-test: a clean history, with one refusal of a stale token, passes');
is_deeply(
	check_fenced_history(%clean,
		reads => [ @{ $clean{reads} }, [ 11, 1.5 ] ],
		writes => [ [ 10, 0, 1, 2.0 ], [ 12, 1, 2, 4.0 ], [ 11, 0, 1, 4.5 ], [ 15, 1, 2, 6.0 ] ],
		refused => []),
	{ fencing => 1, lost => 1, grant_order => 0, overlaps => 2, refused_not_stale => 0 },
	'checker self-test: a stale holder\'s write applied is a fencing violation, a lost update and overlaps');
is(check_fenced_history(%clean, refused => [ [ 16, 7.0 ], [ 12, 2.5 ] ])->{refused_not_stale}, 2,
	'checker self-test: a refusal that no larger token applied before it explains is counted');
is(scalar(@{ (late_stops([ [ 'cut off', 1.0, 9.0, 7.67 ], [ 'paused', 1.0, 2.0, 2 ] ]))[0] }), 1,
	'checker self-test: a holder stopped later than its bound is counted');

# --- the servers
my ($ens, $proxies, $through_proxies) = zk_nemesis_ensemble();
my @zkp = @$proxies;
my $conf = "zklock.session_timeout = '${session_s}s'\nzklock.connect_timeout = '2s'\n";
my $na = pg_with_fake_clock('a', $ens, $conf);
my $nb = pg_with_zklock('b', $through_proxies, $conf);
my $nr = pg_with_zklock('r', { hosts => '127.0.0.1:9' }, $conf);
$nr->safe_psql('postgres', q{
	CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL);
	CREATE TABLE reads (id bigserial PRIMARY KEY, worker int NOT NULL,
		token bigint NOT NULL, value bigint NOT NULL,
		at timestamptz NOT NULL DEFAULT clock_timestamp());
	CREATE TABLE history (id bigserial PRIMARY KEY, worker int NOT NULL,
		token bigint NOT NULL, old_value bigint NOT NULL, new_value bigint NOT NULL,
		at timestamptz NOT NULL DEFAULT clock_timestamp());
	CREATE TABLE attempts (id bigserial PRIMARY KEY, worker int NOT NULL,
		token bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())});
my %control = map { $_->name => $_->background_psql('postgres') } ($na, $nb, $nr);

my ($run, @workers, $nem);

sub code_of
{
	my ($err) = @_;
	return undef unless defined $err && $err =~ /\bERROR:/;
	return $err =~ /\bERROR:  ([0-9A-Z]{5}):/ ? $1 : 'none';
}

sub count_error
{
	my ($step, $err) = @_;
	my $code = code_of($err);
	$run->{errors}{"$step:$code"}++;
	return $code;
}

# --- the workers: each a small state machine, driven from the main loop
sub fence_sql
{
	my ($tok) = @_;
	return $run->{fence} ? "SELECT zk_fence('$path', $tok) \\g /dev/null\n" : '';
}

sub start_cycle
{
	my ($w) = @_;
	$w->{busy} = 1;
	my $pre = $w->{dirty} ? 'SELECT zk_unlock_all() \\g /dev/null' . "\n" : '';
	bg_send($w->{z}, "${pre}SELECT zk_lock('$path')", sub {
		my ($out, $err) = @_;
		if (defined code_of($err) || $out !~ /^(\d+)$/)
		{
			count_error('lock', $err);
			$w->{dirty} = 1;
			$w->{not_before} = time() + 0.1;
			$w->{busy} = 0;
			return;
		}
		my $tok = $1;
		push @{ $run->{grants} }, [ time(), $tok ];
		bg_send($w->{r}, "BEGIN;\n" . fence_sql($tok)
			  . "INSERT INTO reads (worker, token, value) SELECT $w->{i}, $tok, balance FROM account WHERE id = 1 RETURNING value;\n"
			  . 'COMMIT', sub { after_read($w, $tok, @_) });
	});
	return;
}

sub after_read
{
	my ($w, $tok, $out, $err) = @_;
	if (defined code_of($err))
	{
		$run->{refused_reads}++ if count_error('read', $err) eq '55000';
		unlock($w);
		return;
	}
	my $value = $out;
	# a stall the nemesis asked for: this holder's work outlasts it
	my $stall = $nem->{want};
	$stall = undef if $stall && $stall eq 'cut' && $w->{node} != $nb;
	my $secs = $stall ? 60 : 0.002 + rand(0.01);
	my $work = { w => $w, token => $tok, start => time() };
	bg_send($w->{z}, sprintf('SELECT pg_sleep(%.3f)', $secs), sub {
		my ($o, $e) = @_;
		$work->{end} = time();
		my $code = code_of($e);
		count_error('work', $e) if defined $code;
		$work->{code} = $code // '';
		# a cut-off holder writes once a successor has (the nemesis says when)
		if ($work->{hold_write})
		{
			$work->{resume} = sub { after_work($w, $tok, $value, $work) };
			return;
		}
		after_work($w, $tok, $value, $work);
	});
	stall_begin($stall, $work) if $stall;
	return;
}

sub after_work
{
	my ($w, $tok, $value, $work) = @_;
	my $new = $value + 1;
	bg_send($w->{r}, "BEGIN;\n" . fence_sql($tok)
		  . "UPDATE account SET balance = $new WHERE id = 1;\n"
		  . "INSERT INTO history (worker, token, old_value, new_value) VALUES ($w->{i}, $tok, $value, $new);\n"
		  . "COMMIT;\n"
		  . "INSERT INTO attempts (worker, token) VALUES ($w->{i}, $tok)", sub {
		my ($out, $err) = @_;
		my $code = code_of($err);
		if (defined $code)
		{
			count_error('write', $err);
			$run->{refused_writes}++ if $code eq '55000';
		}
		unlock($w);
	});
	return;
}

sub unlock
{
	my ($w) = @_;
	bg_send($w->{z}, "SELECT zk_unlock('$path')", sub {
		my ($out, $err) = @_;
		if (defined code_of($err))
		{
			count_error('unlock', $err);
			$w->{dirty} = 1;
		}
		else
		{
			$w->{dirty} = 0;
		}
		$w->{busy} = 0;
	});
	return;
}

# --- the nemesis: four lanes, each a list of faults drawn from the seed,
# one after another within a lane, the lanes at once
sub draw_schedule
{
	my ($run_seed) = @_;
	srand($run_seed);
	my $u = sub { $_[0] + rand($_[1] - $_[0]) };
	my %lanes;
	# holders: a pause and a cut first, in either order, then either
	my @h = shuffle('pause', 'cut');
	# (each lane is drawn for the longest run, twice the duration)
	push @h, map { rand() < 0.5 ? 'pause' : 'cut' } 1 .. int(2 * $duration / 4);
	$lanes{holders} = [ map { { kind => $_, gap => $u->(1, 3) } } @h ];
	# ZooKeeper: a leader kill first, then a member cut off, then any (a
	# healed leader can take most of a run to be a follower again, and no
	# ZooKeeper fault starts meanwhile: a kill drawn after it could miss
	# the run)
	my @z = ('leader killed', rand() < 0.5 ? 'leader cut off' : 'follower cut off');
	push @z, map { ('leader killed', 'leader cut off', 'follower cut off')[ int(rand(3)) ] }
	  1 .. int(2 * $duration / 2.5);
	$lanes{zookeeper} = [ map { { kind => $_, gap => $u->(0.5, 2), secs => $u->(1.5, 3.5),
				pick => rand() } } @z ];
	$lanes{connections} = [ map { { kind => 'connections dropped', gap => $u->(1.5, 4),
				secs => $u->(0.5, 1.5) } } 1 .. int(2 * $duration / 2) ];
	$lanes{clock} = [ map { { kind => 'clock jump', gap => $u->(1, 3),
				offset => (3600, -3600, 0)[ $_ % 3 ] } } 0 .. 2 * $duration ];
	srand();    # the workers' own randomness is not the schedule's
	return \%lanes;
}

sub fault_note
{
	my ($msg) = @_;
	note(sprintf('%s, %.1f s: %s', $run->{name}, time() - $nem->{t0}, $msg));
	return;
}

# server B's connections: down while any fault wants them down
sub b_down
{
	zk_proxy_cmd($_, 'down') for $nem->{b_down}++ ? () : @zkp;
	return;
}

sub b_up
{
	zk_proxy_cmd($_, 'up') for --$nem->{b_down} ? () : @zkp;
	return;
}

sub fault_start
{
	my ($lane, $f) = @_;
	my $now = time();
	$f->{lane} = $lane;
	if ($lane eq 'holders')
	{
		# not during an election (see the ZooKeeper lane)
		my $z = $nem->{active}{zookeeper};
		return 0 if $z && $z->{kind} ne 'follower cut off';
		# the next holder to start its work (on B, for a cut) is the one
		$nem->{want} = $f->{kind};
		$nem->{stall} = $f;
		$f->{give_up_at} = $now + 8;
		return 1;
	}
	if ($lane eq 'zookeeper')
	{
		# not while a holder fault waits for its holder (it needs grants);
		# while one is under way, no new leader: an election gives every
		# session a fresh timeout, and the stalled holder's session would
		# outlive its stall
		return 0 if $nem->{want};
		return 0 if $nem->{stall} && !$nem->{stall}{done} && $f->{kind} ne 'follower cut off';
		return 0 unless zk_healthy($ens);
		my $leader = zk_leader_of($ens) // return 0;
		if ($f->{kind} eq 'leader killed')
		{
			$f->{member} = $leader;
			zkctl('kill', $ens->{dir}, $leader);
			$f->{restart_at} = $now + $f->{secs};
		}
		else
		{
			my @followers = grep { $_ != $leader } 1 .. 3;
			$f->{member} = $f->{kind} eq 'leader cut off' ? $leader
			  : $followers[ $f->{pick} < 0.5 ? 0 : 1 ];
			zk_isolate($ens, $f->{member});
			$f->{heal_at} = $now + $f->{secs};
		}
		fault_note("$f->{kind}: member $f->{member}");
	}
	elsif ($lane eq 'connections')
	{
		b_down();
		$f->{up_at} = $now + $f->{secs};
	}
	else
	{
		fake_clock_set($na, $f->{offset});
		$f->{done} = 1;
	}
	$f->{start} = $now;
	$run->{faults}{ $f->{kind} }++;
	return 1;
}

# stall_begin(KIND, WORK): the holder of WORK, whose work step was just
# sent, is paused, or cut off
sub stall_begin
{
	my ($kind, $work) = @_;
	my $f = $nem->{stall};
	$nem->{want} = undef;
	$f->{work} = $work;
	$f->{start} = time();
	$run->{faults}{ $kind eq 'pause' ? 'holder paused' : 'holder cut off' }++;
	if ($kind eq 'pause')
	{
		kill 'STOP', $work->{w}{zpid};
	}
	else
	{
		$work->{hold_write} = 1;
		b_down();
	}
	fault_note("holder $work->{w}{i} (token $work->{token}) "
		  . ($kind eq 'pause' ? 'paused' : 'cut off'));
	return;
}

# fault_tick(F, FORCE): move fault F on; FORCE ends it now; true once over
sub fault_tick
{
	my ($f, $force) = @_;
	my $now = time();
	return 1 if $f->{done};
	if ($f->{lane} eq 'holders')
	{
		my $work = $f->{work};
		if (!$work)
		{
			return 0 unless $force || $now >= $f->{give_up_at};
			$nem->{want} = undef;
			fault_note("$f->{kind}: no holder came, to be tried again");
			unshift @{ $nem->{lanes}{holders} }, { kind => $f->{kind}, gap => 0 } unless $force;
			return $f->{done} = 1;
		}
		if ($f->{kind} eq 'pause')
		{
			if (!$f->{cont})
			{
				my $due = $now - $f->{start} > $session_s + 0.5
				  && ($now - $f->{start} > 12 || successor_wrote($f, $work->{token}));
				return 0 unless $due || $force;
				kill 'CONT', $work->{w}{zpid};
				$f->{cont} = $now;
				fault_note(sprintf('holder %d woken after %.1f s', $work->{w}{i}, $now - $f->{start}));
			}
			# a holder whose session outlived the pause (it was not told)
			# ends its work now
			if (!defined $work->{end} && !$f->{cancelled} && $now - $f->{cont} > $pause_bound + 1)
			{
				$control{ $work->{w}{node}->name }->query_safe("SELECT pg_cancel_backend($work->{w}{zpid})");
				$f->{cancelled} = 1;
			}
			return 0 unless defined $work->{end} || $now - $f->{cont} > 15;
			push @{ $run->{stops} }, [ 'paused', $f->{cont}, $work->{end}, $pause_bound ]
			  if ($work->{code} // '') eq '08006';
			return $f->{done} = 1;
		}
		# cut off: until told and ZooKeeper has expired its session (its
		# node is gone), or 12 s; it writes once a successor has
		if (!$f->{up})
		{
			return 0 unless (defined $work->{end} && node_gone($f, $work->{w}))
			  || $force || $now - $f->{start} > 12;
			b_up();
			$f->{up} = $now;
			push @{ $run->{stops} }, [ 'cut off', $f->{start}, $work->{end}, $cut_bound ]
			  if defined $work->{end} && $work->{code} eq '08006';
			fault_note(sprintf('holder %d\'s server B connects again (%.1f s)', $work->{w}{i},
					$now - $f->{start}));
		}
		return 0 unless $work->{resume} || ($force && !defined $work->{end});
		return 0 unless $force || $now - $f->{up} > 12 || successor_wrote($f, $work->{token});
		$work->{hold_write} = 0;
		$work->{resume}->() if $work->{resume};
		return $f->{done} = 1;
	}
	if ($f->{lane} eq 'zookeeper')
	{
		if ($f->{kind} eq 'leader killed')
		{
			if (!$f->{restart})
			{
				return 0 unless $force || $now >= $f->{restart_at};
				$f->{restart} = zkctl_bg('restart', $ens->{dir}, $f->{member});
			}
			return 0 if eval { $f->{restart}->pump_nb; $f->{restart}->pumpable } && !$force;
			$f->{restart}->finish or fault_note("restart of member $f->{member} failed");
			return $f->{done} = 1;
		}
		if (!$f->{healed})
		{
			return 0 unless $force || $now >= $f->{heal_at};
			zk_heal($ens);
			$f->{healed} = $now;
		}
		return $f->{done} = 1 if $force;
		return 0 if $now - ($f->{polled} // 0) < 0.3;
		$f->{polled} = $now;
		return $f->{done} = 1
		  if zk_member_mode($ens, $f->{member}) =~ /^(leader|follower)$/ || $now - $f->{healed} > 30;
		return 0;
	}
	# connections dropped
	return 0 unless $force || $now >= $f->{up_at};
	b_up();
	return $f->{done} = 1;
}

# node_gone(F, W): W's node has left the lock's queue (polled, as A sees it)
sub node_gone
{
	my ($f, $w) = @_;
	my $now = time();
	return 0 if $now - ($f->{polled_node} // 0) < 0.3;
	$f->{polled_node} = $now;
	return $control{a}->query_safe(
		"SELECT count(*) FROM zk_lock_queue('$path') WHERE cluster_name = 'b' AND pid = $w->{zpid}") == 0;
}

sub successor_wrote
{
	my ($f, $tok) = @_;
	my $now = time();
	return 0 if $now - ($f->{polled} // 0) < 0.3;
	$f->{polled} = $now;
	return $control{r}->query_safe("SELECT count(*) FROM history WHERE token > $tok") > 0;
}

# nemesis_tick(NO_NEW): start each lane's next fault when due (unless
# NO_NEW), move the ones under way on; records every fault's span
sub nemesis_tick
{
	my ($no_new, $force) = @_;
	my $now = time();
	for my $lane (sort keys %{ $nem->{lanes} })
	{
		my $cur = $nem->{active}{$lane};
		if ($cur)
		{
			next unless fault_tick($cur, $force);
			push @{ $run->{spans} }, [ $cur->{kind}, $cur->{start}, time() ] if $cur->{start};
			$nem->{active}{$lane} = undef;
			# (not $lanes->[0]{gap} on an empty lane: Perl would make an
			# empty fault there, and start it)
			my $rest = $nem->{lanes}{$lane};
			$nem->{next_at}{$lane} = time() + (@$rest ? $rest->[0]{gap} : 0);
			next;
		}
		next if $no_new || !@{ $nem->{lanes}{$lane} } || $now < ($nem->{next_at}{$lane} // 0);
		my $f = $nem->{lanes}{$lane}[0];
		if (fault_start($lane, $f))
		{
			shift @{ $nem->{lanes}{$lane} };
			$nem->{active}{$lane} = $f;
		}
		else
		{
			$nem->{next_at}{$lane} = $now + 0.5;
		}
	}
	return;
}

# --- one run
sub run_nemesis
{
	my ($name, $fence, $run_seed) = @_;
	$run = { name => $name, fence => $fence, grants => [], errors => {}, faults => {},
		stops => [], spans => [] };
	$nr->safe_psql('postgres', q{
		TRUNCATE reads, history, attempts; DELETE FROM account;
		INSERT INTO account VALUES (1, 0); DELETE FROM zk_fence_tokens});
	@workers = map {
		my $node = $_ < 2 ? $na : $nb;
		my $w = { i => $_, node => $node, z => verbose_session($node), r => verbose_session($nr) };
		$w->{z}->query_safe(q{SET lock_timeout = '10s'});
		$w->{zpid} = $w->{z}->query_safe('SELECT pg_backend_pid()');
		$w;
	} 0 .. 3;
	$nem = { lanes => draw_schedule($run_seed), t0 => time(), b_down => 0, active => {} };
	$nem->{next_at}{$_} = time() + 1 for keys %{ $nem->{lanes} };

	my $t0 = time();
	# DURATION seconds, and on (at most twice as long) until each lane's
	# first two faults, every kind between them, were injected
	my $limit = $duration;
	my $injected = sub {
		my $f = $run->{faults};
		return ($f->{'holder paused'} && $f->{'holder cut off'} && $f->{'leader killed'}
			  && ($f->{'leader cut off'} || $f->{'follower cut off'}));
	};
	while (time() - $t0 < $limit)
	{
		for my $w (@workers)
		{
			bg_poll($w->{z}) || bg_poll($w->{r});
			start_cycle($w) if !$w->{busy} && time() >= ($w->{not_before} // 0);
		}
		$limit += 1
		  if time() - $t0 > $limit - 5 && $limit < 2 * $duration && !$injected->();
		nemesis_tick(time() - $t0 > $limit - 5);
		usleep(2000);
	}
	# end every fault under way (a paused holder is woken, B connects
	# again, a killed member restarts, a cut-off one is healed)
	# (the workers go on meanwhile: a stalled holder waits for a successor)
	my $end = time();
	while (grep { defined } values %{ $nem->{active} })
	{
		for my $w (@workers)
		{
			bg_poll($w->{z}) || bg_poll($w->{r});
			start_cycle($w) if !$w->{busy} && time() >= ($w->{not_before} // 0);
		}
		nemesis_tick(1, time() - $end > 20);
		usleep(2000);
	}
	fake_clock_set($na, 0);
	$run->{seconds} = time() - $t0;
	ok(wait_for(sub { zk_healthy($ens) }, 60, 'a whole ensemble'),
		"$name: the ensemble is whole again");

	# the workers end their cycles (at most 30 s; then cancelled)
	my $busy = sub { grep { $_->{busy} } @workers };
	my $deadline = time() + 30;
	while ($busy->() && time() < $deadline)
	{
		bg_poll($_->{z}) || bg_poll($_->{r}) for @workers;
		usleep(2000);
	}
	for my $w ($busy->())
	{
		$control{ $w->{node} == $na ? 'a' : 'b' }->query_safe("SELECT pg_cancel_backend($w->{zpid})");
	}
	$deadline = time() + 15;
	while ($busy->() && time() < $deadline)
	{
		bg_poll($_->{z}) || bg_poll($_->{r}) for @workers;
		usleep(2000);
	}
	is(scalar($busy->()), 0, "$name: every worker's last cycle ended");
	# no worker holds the lock now: the queue empties, at the latest when
	# the session of a holder that was given up expires on the server
	my $left;
	ok(wait_for(sub { ($left = queue_rows($na, $path, q{format('%s:%s:%s', cluster_name, pid, granted)})) eq '' },
			$session_s + 6, 'an empty queue'),
		"$name: once no worker holds the lock, no node is left in its queue (a hold zklock reported lost is gone from ZooKeeper)")
	  or diag("$name: left in the queue (server:pid:granted): $left; "
		  . 'the worker backends: ' . join(', ', map { "$_->{i}: $_->{zpid}" } @workers));
	for my $w (@workers)
	{
		$w->{$_}->quit for qw(z r);
	}

	# --- what R recorded, checked
	my $rows = sub { [ map { [ split /\|/ ] } split /\n/, $nr->safe_psql('postgres', $_[0]) ] };
	my $writes = $rows->(q{SELECT token, old_value, new_value, extract(epoch FROM at)
		FROM history ORDER BY id});
	my $reads = $rows->(q{SELECT token, extract(epoch FROM at) FROM reads});
	my $refused = $rows->(q{SELECT a.token, extract(epoch FROM a.at) FROM attempts a
		WHERE NOT EXISTS (SELECT FROM history h WHERE h.token = a.token)});
	my $v = check_fenced_history(writes => $writes, reads => $reads, refused => $refused,
		grants => $run->{grants});
	$v->{applied} = scalar(@$writes);
	$v->{refused} = scalar(@$refused);
	$v->{balance} = $nr->safe_psql('postgres', 'SELECT balance FROM account');
	$v->{violations} = $v->{fencing} + $v->{lost} + $v->{overlaps};
	($v->{late}, $v->{longest_stop}) = late_stops($run->{stops});
	$v->{stops} = scalar(@{ $run->{stops} });
	note("$name: stalled holders told of their loss: "
		  . join(', ', map { sprintf('%s %.2f s (bound %.2f s)', $_->[0], $_->[2] - $_->[1], $_->[3]) }
			  @{ $run->{stops} }));
	# the most faults under way at once
	my @ev = sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] }
	  map { ([ $_->[1], 1 ], [ $_->[2], -1 ]) } @{ $run->{spans} };
	my ($n, $most) = (0, 0);
	for (@ev) { $n += $_->[1]; $most = max($most, $n); }
	$v->{most_at_once} = $most;
	note(sprintf('%s: %.0f s, %d grants, %d applied writes, %d refused, balance %d; '
		  . 'fencing %d, lost %d, overlaps %d, refused not stale %d; stops %d (longest %.2f s); '
		  . 'faults: %s; most at once %d; errors: %s',
			$name, $run->{seconds}, scalar(@{ $run->{grants} }), $v->{applied}, $v->{refused},
			$v->{balance}, $v->{fencing}, $v->{lost}, $v->{overlaps}, $v->{refused_not_stale},
			$v->{stops}, $v->{longest_stop} // 0,
			join(', ', map { "$_ $run->{faults}{$_}" } sort keys %{ $run->{faults} }),
			$most, join(', ', map { "$_ $run->{errors}{$_}" } sort keys %{ $run->{errors} })));

	# --- what must hold in both runs
	cmp_ok(($run->{faults}{'holder paused'} // 0) + ($run->{faults}{'holder cut off'} // 0),
		'>', 0, "$name: the nemesis stalled a holder (paused or cut off)");
	cmp_ok($most, '>=', 2, "$name: faults overlapped in time (at most $most at once)");
	cmp_ok($v->{applied}, '>', 20, "$name: the workers applied many writes");
	is($v->{grant_order}, 0, "$name: the grants' tokens strictly increase in grant order");
	cmp_ok($v->{stops}, '>', 0, "$name: zklock told stalled holders of their loss");
	is(scalar(@{ $v->{late} }), 0,
		sprintf('%s: every stalled holder told of its loss was stopped within the bound (longest %.2f s)',
			$name, $v->{longest_stop} // 0))
	  or diag(join("\n", map { sprintf('%s: %.2f s (bound %.2f s)', $_->[0], $_->[2] - $_->[1], $_->[3]) }
			@{ $v->{late} }));
	$v->{faults} = $run->{faults};
	return $v;
}

my $off = run_nemesis('fence off', 0, $seed);
cmp_ok($off->{violations}, '>', 0,
	"fence off: the checker finds violations ($off->{fencing} fencing, $off->{lost} lost, $off->{overlaps} overlaps)");

my $on = run_nemesis('fence on', 1, $seed + 1);
is($on->{fencing}, 0, 'fence on: 0 fencing violations');
is($on->{lost}, 0, 'fence on: 0 lost updates');
is($on->{overlaps}, 0, 'fence on: 0 overlapping holders');
is($on->{refused_not_stale}, 0, 'fence on: every refused write was stale');
is($on->{balance}, $on->{applied}, 'fence on: the balance is the number of applied writes');
cmp_ok($on->{refused}, '>', 0, 'fence on: stale writes were refused');

my %faults;
$faults{$_} += $off->{faults}{$_} // 0 for keys %{ $off->{faults} };
$faults{$_} += $on->{faults}{$_} // 0 for keys %{ $on->{faults} };
# every kind of fault, over the two runs (each has its own schedule)
for my $kind ('holder paused', 'holder cut off', 'leader killed', 'connections dropped',
	'clock jump')
{
	cmp_ok($faults{$kind} // 0, '>', 0, "the nemesis injected: $kind");
}
cmp_ok(($faults{'leader cut off'} // 0) + ($faults{'follower cut off'} // 0),
	'>', 0, 'the nemesis injected: a member cut off');
figure(
	fenced_writes => $on->{applied},
	refused_writes => $on->{refused},
	violations_fence_off => $off->{violations},
	violations_fence_on => $on->{violations} + $on->{refused_not_stale},
	faults => join(', ', map { "$_ $faults{$_}" } sort keys %faults),
	most_faults_at_once => max($off->{most_at_once}, $on->{most_at_once}),
	longest_stop_delay_ms => int(1000 * max($off->{longest_stop} // 0, $on->{longest_stop} // 0)));
diag("nemesis seed $seed: ZKLOCK_NEMESIS_SEED=$seed replays this schedule")
  unless Test::More->builder->is_passing;

$_->quit for values %control;
zk_proxy_stop($_) for @zkp;
done_testing();
