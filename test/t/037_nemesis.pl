# A fenced resource under a nemesis, run twice: without the fence, to show
# that the faults make stale holders write and that the checker sees it,
# then with the fence, which must refuse every one of those writes.
#
# Six workers, three on each of two PostgreSQL servers (A reaches the
# 3-server ensemble directly, B through one python/zkproxy.py per member,
# so that its connections can be dropped), loop for a bounded time:
#
#   token := zk_lock('/nemesis/r')                           (zklock server)
#   read:  UPDATE resource SET token = :token                 (resource server)
#          WHERE id = 1 AND token <= :token RETURNING value
#   work:  pg_sleep(a few ms) on the zklock backend
#   write: UPDATE resource SET value = :value + 1, writes = writes + 1
#          WHERE id = 1 AND token = :token
#   zk_unlock('/nemesis/r')
#
# with a history row for every read and every write (token, values,
# whether the resource applied it, the SQLSTATE zklock gave the work step),
# made in the same statement.  The resource lives on a third PostgreSQL
# server.  With the fence on, it is the fence: it remembers the newest token
# it has seen, from a read or a write, and refuses a read or a write that
# carries an older one.  (Fencing the write alone is not enough for a
# read-modify-write: a stale holder writing between its successor's read and
# write would make the successor's write lose its increment, however correct
# the lock.)  With the fence off, the resource applies every read and write
# (it still records the newest token, for the history).  The workers write
# blindly: after their work, whether or not zklock said the lock was lost
# meanwhile, so that a stale holder's write reaches the resource.
#
# Meanwhile a nemesis injects, in turn, one fault at a time: the ZooKeeper
# leader killed (SIGKILL) and restarted; a holder's backend frozen (SIGSTOP,
# right after its read) past its session timeout, until another worker has
# written with a newer token, then woken (SIGCONT); a holder on server B cut
# off (every connection of B dropped, zkproxy down) right after its read,
# for longer than the session timeout, its work outlasting the session
# until another worker has written with a newer token; every connection of
# B dropped for less than the session timeout; the leader, and a follower,
# cut off from the other two members (ZkFaults' partitionable ensemble) for
# a few seconds.
#
# The checker reads the history afterwards.  A stale write is a write made
# after a holder with a newer token had read or written; overlapping
# holders are two tokens whose spans at the resource (from the applied read
# to the applied write) overlap; a lost update is an applied write that
# does not continue the previous one (and the final value falls short of
# the number of applied writes); a fencing violation is an applied write
# whose token is not greater than the one applied before it.
#
# - Fence off: the frozen holders and the cut-off holders write stale, and
#   the checker must see it: stale writes applied, overlapping holders,
#   lost updates and fencing violations, each more than 0, the frozen and
#   the cut-off holders among the stale writers.  What zklock answers for
#   is that every stale writer was a holder zklock had told (08006, 08001)
#   that its lock was lost: zklock never vouched for a stale token.
# - Fence on: 0 stale writes applied, 0 overlapping holders, 0 lost updates,
#   0 fencing violations, the final value is the number of applied writes;
#   every frozen or cut-off holder's write is refused, and every refusal is
#   of a holder zklock had told its lock was lost.
# - Both: the grants' tokens strictly increase in the order of their grant
#   times, no two grants share one; every kind of fault was injected; every
#   worker's last operation ends (granted, failed with an SQLSTATE, or
#   cancelled at the end); every error is one a fault explains; once every
#   backend is gone no queue node and no ephemeral node is left.
#
# The checker is self-tested on histories broken on purpose.  The run with
# the fence off lasts ZKLOCK_NEMESIS_UNFENCED_SECONDS (default 30), the one
# with the fence on ZKLOCK_NEMESIS_SECONDS (default 40), each longer if a
# kind of fault has not been injected yet.  The figures of both runs are
# printed as "# figure:" lines (unfenced_*, fenced_*).
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

my $fenced_duration = $ENV{ZKLOCK_NEMESIS_SECONDS} // 30;
my $unfenced_duration = $ENV{ZKLOCK_NEMESIS_UNFENCED_SECONDS} // 30;
my $session_s = 4;
my $path = '/nemesis/r';
srand(37);

# --- the checker (test/lib/ZkHistory.pm), and its self-test
is_deeply(
	check_history(
		[ [ 1, 10, 0, 1 ], [ 2, 12, 1, 2 ], [ 3, 15, 2, 3 ] ],
		[ [ 1.0, 10 ], [ 2.0, 12 ], [ 3.0, 15 ] ]),
	{ fencing => 0, lost => 0, grant_order => 0 },
	'checker self-test: a clean history passes');
is_deeply(
	check_history(
		[ [ 1, 10, 0, 1 ], [ 2, 12, 1, 2 ], [ 3, 12, 2, 3 ], [ 4, 11, 3, 4 ] ],
		[ [ 1.0, 10 ], [ 2.0, 12 ], [ 3.0, 12 ], [ 4.0, 11 ] ]),
	{ fencing => 2, lost => 0, grant_order => 2 },
	'checker self-test: a duplicate token and a stale (older) token applied are fencing violations');
is_deeply(
	check_history([ [ 1, 10, 0, 1 ], [ 2, 12, 0, 1 ], [ 3, 13, 1, 2 ], [ 5, 14, 2, 3 ] ], []),
	{ fencing => 0, lost => 2, grant_order => 0 },
	'checker self-test: two writes from one read, and a gap, are lost updates');
is_deeply(overlapping_holders([ [ 10, 1.0, 2.0 ], [ 12, 2.5, 3.0 ], [ 13, 3.5, 4.0 ] ]),
	[], 'checker self-test: spans one after the other do not overlap');
is_deeply(
	overlapping_holders(
		[ [ 10, 1.0, 9.0 ], [ 12, 2.0, 3.0 ], [ 13, 4.0, 5.0 ], [ 11, 8.5, 9.5 ] ]),
	[ [ 10, 12 ], [ 10, 13 ], [ 10, 11 ] ],
	'checker self-test: a long span (a stale holder) overlaps every span within it, and one that starts before it ends');

# --- the servers
my ($ens, $proxies, $through_proxies) = zk_nemesis_ensemble();
my @zkp = @$proxies;
my $conf = "zklock.session_timeout = '${session_s}s'\nzklock.connect_timeout = '2s'\n";
my $na = pg_with_zklock('a', $ens, $conf);
my $nb = pg_with_zklock('b', $through_proxies, $conf);
my $nr = PostgreSQL::Test::Cluster->new('resource');
$nr->init;
$nr->start;
$nr->safe_psql(
	'postgres', q{
	CREATE TABLE resource (id int PRIMARY KEY, token bigint NOT NULL,
		value bigint NOT NULL, writes bigint NOT NULL);
	CREATE TABLE history (id bigserial PRIMARY KEY,
		at timestamptz NOT NULL DEFAULT clock_timestamp(),
		worker int NOT NULL, kind text NOT NULL, token bigint NOT NULL,
		old_value bigint, new_value bigint, applied boolean NOT NULL,
		write_seq bigint, note text)});
my $rc = $nr->background_psql('postgres');
my %control = (a => $na->background_psql('postgres'), b => $nb->background_psql('postgres'));

# --- one run's state: the fence, the workers, what they saw, the nemesis
my ($run, @workers, $nem);
my $seq = 0;

sub code_of
{
	my ($err) = @_;
	return undef unless defined $err && $err =~ /\bERROR:/;
	return $err =~ /\bERROR:  ([0-9A-Z]{5}):/ ? $1 : 'none';
}

sub open_sessions
{
	my ($w) = @_;
	$w->{z} = verbose_session($w->{node});
	$w->{z}->query_safe(q{SET lock_timeout = '10s'});
	$w->{zpid} = $w->{z}->query_safe('SELECT pg_backend_pid()');
	$w->{r} = verbose_session($nr);
	$w->{state} = 'idle';
	return;
}

# send SQL on the worker's session WHICH ('z': zklock, 'r': resource);
# CB gets (stdout, stderr) once it has completed
sub send_sql
{
	my ($w, $which, $sql, $cb) = @_;
	my $s = $w->{$which};
	my $marker = '__nemesis_' . ++$seq;
	$w->{pending} = { s => $s, marker => $marker, cb => $cb };
	$s->{stdin} .= "$sql;\n\\echo $marker\n";
	$s->{run}->pump_nb();
	$w->{state} = 'busy';
	return;
}

sub poll_worker
{
	my ($w) = @_;
	my $p = $w->{pending} or return;
	my $s = $p->{s};
	$s->{run}->pump_nb();
	return unless $s->{stdout} =~ /^(.*?)\n?$p->{marker}\n/s;
	my $out = $1;
	$s->{stdout} = '';
	my $err = $s->{stderr};
	$s->{stderr} = '';
	$w->{pending} = undef;
	$p->{cb}->($out, $err);
	return;
}

# an error of a step: counted by SQLSTATE (under "step:code")
sub count_error
{
	my ($step, $err) = @_;
	my $code = code_of($err);
	$run->{errors}{"$step:$code"}++;
	my ($msg) = $err =~ /\bERROR:  (?:[0-9A-Z]{5}: )?([^\n]*)/;
	($msg //= $err) =~ s/\d+/N/g;
	$run->{messages}{"$step:$code: $msg"}++;
	diag("$step: $err") if $step =~ /^resource/ || $code eq 'none';
	return $code;
}

sub start_cycle
{
	my ($w) = @_;
	$run->{stats}{cycles}++;
	my $pre = $w->{dirty} ? 'SELECT zk_unlock_all(); ' : '';
	send_sql($w, 'z',
		"${pre}SELECT zk_lock('$path') || '|' || extract(epoch FROM clock_timestamp())",
		sub { after_lock($w, @_) });
	return;
}

sub after_lock
{
	my ($w, $out, $err) = @_;
	if (defined code_of($err))
	{
		count_error('lock', $err);
		# as a client would, wait a little before trying again (a call
		# made while the connection has been gone for the session timeout
		# fails at once)
		$w->{not_before} = time() + 0.1;
		$w->{state} = 'idle';
		return;
	}
	my ($tok, $t) = split /\|/, (split /\n/, $out)[-1] // '';
	if (!defined $t || $tok !~ /^\d+$/)
	{
		$run->{errors}{'lock:no token'}++;
		diag("lock: no token in '$out', stderr: $err");
		$w->{state} = 'idle';
		return;
	}
	$run->{stats}{grants}++;
	push @{ $run->{grants} }, [ $t, $tok, $w->{i} ];
	# the read and its history row in one statement: the value read, or
	# nothing when the fence refused the read
	my $guard = $run->{fence} ? "AND token <= $tok" : '';
	send_sql($w, 'r', qq{WITH u AS (UPDATE resource SET token = greatest(token, $tok)
		              WHERE id = 1 $guard RETURNING value)
		INSERT INTO history (worker, kind, token, old_value, applied)
		SELECT $w->{i}, 'read', $tok, (SELECT value FROM u), EXISTS (SELECT FROM u)
		RETURNING coalesce(old_value::text, '')},
		sub { after_read($w, $tok, @_) });
	return;
}

sub after_read
{
	my ($w, $tok, $out, $err) = @_;
	if (defined code_of($err))
	{
		count_error('resource read', $err);
		unlock($w);
		return;
	}
	if ($out eq '')
	{
		# the fence has seen a newer token: this holder is stale
		$run->{stats}{read_refused}++;
		unlock($w);
		return;
	}
	my $value = $out;
	my $work = sub {
		send_sql($w, 'z', sprintf('SELECT pg_sleep(%.3f)', 0.002 + rand(0.02)),
			sub { after_work($w, $tok, $value, @_) });
	};
	my $want = $nem->{stall_wanted};
	if ($want && ($want eq 'holder frozen' || $w->{node} == $nb))
	{
		stall_holder($w, $tok, $want, $work);
		return unless $want eq 'holder frozen';
	}
	$work->();
	return;
}

sub after_work
{
	my ($w, $tok, $value, $out, $err) = @_;
	my $note = '';
	$note = count_error('work', $err) if defined code_of($err);
	# write blindly, whatever zklock said
	my $new = $value + 1;
	my $guard = $run->{fence} ? "AND token = $tok" : '';
	send_sql(
		$w, 'r', qq{WITH u AS (UPDATE resource SET value = $value + 1, writes = writes + 1,
		                     token = greatest(token, $tok)
		              WHERE id = 1 $guard RETURNING writes)
		INSERT INTO history (worker, kind, token, old_value, new_value, applied, write_seq, note)
		SELECT $w->{i}, 'write', $tok, $value, $new, count(*) > 0, max(writes), '$note' FROM u
		RETURNING applied},
		sub { after_write($w, $tok, @_) });
	return;
}

sub after_write
{
	my ($w, $tok, $out, $err) = @_;
	if (defined code_of($err))
	{
		count_error('resource write', $err);
	}
	elsif ($out eq 't')
	{
		$run->{stats}{writes_applied}++;
	}
	else
	{
		$run->{stats}{write_refused}++;
	}
	if ($w->{stalled} && $w->{stalled}{token} == $tok)
	{
		push @{ $run->{stalled_writes} }, { %{ $w->{stalled} }, applied => $out };
		delete $w->{stalled};
	}
	unlock($w);
	return;
}

sub unlock
{
	my ($w) = @_;
	send_sql(
		$w, 'z',
		"SELECT zk_unlock('$path')::text || '|' || (SELECT count(*) FROM zk_locks)",
		sub {
			my ($out, $err) = @_;
			count_error('unlock', $err) if defined code_of($err);
			my ($released, $held) = split /\|/, (split /\n/, $out)[-1] // '';
			$w->{dirty} = !defined $held || $held ne '0';
			$w->{state} = 'idle';
		});
	return;
}

# --- the nemesis: one fault at a time, each a small state machine driven
# from the main loop (never blocking it for long)
my @kinds = ('holder frozen', 'holder cut off', 'partition leader', 'leader killed',
	'drop short', 'partition follower', 'holder frozen', 'holder cut off', 'leader killed');
my @fault_kinds = ('leader killed', 'holder frozen', 'holder cut off',
	'connections dropped (short)', 'partition leader', 'partition follower');
my @stall_kinds = ('holder frozen', 'holder cut off');

sub fault_note
{
	my ($msg) = @_;
	note(sprintf('%s, %.1f s: %s', $run->{name}, time() - $nem->{t0}, $msg));
	return;
}

# stall_holder(W, TOKEN, KIND, WORK): the holder W, right after its read
# with TOKEN, is made stale: frozen (SIGSTOP of its zklock backend; WORK is
# sent, and waits), or cut off (every connection of server B dropped; WORK
# is held back), until another worker has written with a newer token
sub stall_holder
{
	my ($w, $tok, $kind, $work) = @_;
	my $f = $nem->{fault};
	$nem->{stall_wanted} = undef;
	$f->{stalled} = { w => $w, token => $tok, at => time(), kind => $kind };
	$w->{stalled} = { worker => $w->{i}, token => $tok, kind => $kind };
	$run->{stats}{faults}{$kind}++;
	if ($kind eq 'holder frozen')
	{
		kill 'STOP', $w->{zpid};
		fault_note("holder $w->{i} (token $tok) frozen");
	}
	else
	{
		zk_proxy_cmd($_, 'down') for @zkp;
		$f->{up_at} = time() + $session_s + 2;
		$f->{resume} = $work;
		fault_note("holder $w->{i} (token $tok) cut off: server B's connections dropped");
	}
	return;
}

# nemesis_tick(NO_NEW): start a fault when it is time (unless NO_NEW), and
# move the one under way on
sub nemesis_tick
{
	my ($no_new) = @_;
	my $now = time();
	my $f = $nem->{fault};
	if ($nem->{phase} eq 'quiet')
	{
		return if $no_new || $now < $nem->{next_at} || $now - $nem->{last_health} < 1;
		$nem->{last_health} = $now;
		return unless zk_healthy($ens);
		my $kind = $kinds[ $nem->{k}++ % @kinds ];
		$f = $nem->{fault} = { kind => $kind, started => $now };
		$nem->{phase} = 'active';
		my $leader = zk_leader_of($ens);
		if (!defined $leader)
		{
			# the leader changed between the two looks: try again
			$nem->{k}--;
			$nem->{phase} = 'quiet';
			$nem->{fault} = undef;
			return;
		}
		if ($kind eq 'leader killed')
		{
			$f->{member} = $leader;
			zkctl('kill', $ens->{dir}, $f->{member});
			$f->{restart_at} = time() + 2 + rand(1);
			$run->{stats}{faults}{$kind}++;
			fault_note("leader $f->{member} killed");
		}
		elsif ($kind eq 'drop short')
		{
			zk_proxy_cmd($_, 'down') for @zkp;
			$f->{up_at} = time() + 1.5;
			$run->{stats}{faults}{'connections dropped (short)'}++;
			fault_note("server B's connections dropped (short)");
		}
		elsif ($kind =~ /^partition (leader|follower)/)
		{
			$f->{member} = $1 eq 'leader' ? $leader
			  : (grep { $_ != $leader } 1 .. 3)[ int(rand(2)) ];
			zk_isolate($ens, $f->{member});
			$f->{heal_at} = time() + 3 + rand(2);
			$run->{stats}{faults}{$kind}++;
			fault_note("$1 $f->{member} cut off");
		}
		else
		{
			# a stall: the next holder (on B, to be cut off) after its read
			$nem->{stall_wanted} = $kind;
			$f->{give_up_at} = $now + 15;
			fault_note("$kind: the next holder" . ($kind eq 'holder cut off' ? ' on B' : '')
				  . ' after its read');
		}
		return;
	}

	# active
	my $done = 0;
	if ($f->{kind} eq 'leader killed')
	{
		if (!$f->{restart} && $now >= $f->{restart_at})
		{
			$f->{restart} = zkctl_bg('restart', $ens->{dir}, $f->{member});
		}
		elsif ($f->{restart} && !eval { $f->{restart}->pump_nb; $f->{restart}->pumpable })
		{
			$f->{restart}->finish
			  or fault_note("restart of member $f->{member} failed");
			fault_note("member $f->{member} restarted");
			$done = 1;
		}
	}
	elsif ($f->{kind} eq 'drop short')
	{
		if ($now >= $f->{up_at})
		{
			zk_proxy_cmd($_, 'up') for @zkp;
			fault_note("server B's connections allowed again");
			$done = 1;
		}
	}
	elsif ($f->{kind} =~ /^partition/)
	{
		if (!$f->{healed} && $now >= $f->{heal_at})
		{
			zk_heal($ens);
			$f->{healed} = $now;
			fault_note("healed");
		}
		elsif ($f->{healed} && $now - ($f->{polled} // 0) > 0.5)
		{
			$f->{polled} = $now;
			if (zk_member_mode($ens, $f->{member}) =~ /^(leader|follower)$/)
			{
				fault_note("member $f->{member} serves again");
				$done = 1;
			}
			elsif ($now - $f->{healed} > 60)
			{
				fault_note("member $f->{member} did not rejoin within 60 s");
				$run->{stats}{rejoin_failures}++;
				$done = 1;
			}
		}
	}
	else
	{
		# a stall: wait for a holder, then for a newer write, then end it
		# (and B's connections come back at their time, whatever the stall)
		my $st = $f->{stalled};
		if (!$st)
		{
			if ($now >= $f->{give_up_at})
			{
				$nem->{stall_wanted} = undef;
				fault_note("$f->{kind}: no holder to stall");
				$done = 1;
			}
		}
		else
		{
			if ($f->{up_at} && $now >= $f->{up_at})
			{
				zk_proxy_cmd($_, 'up') for @zkp;
				fault_note("server B's connections allowed again");
				delete $f->{up_at};
			}
			if (!$f->{released}
				&& $now - $st->{at} > $session_s + 0.5
				&& $now - ($f->{polled} // 0) > 0.3)
			{
				$f->{polled} = $now;
				my $newer = $rc->query_safe(
					"SELECT count(*) FROM history WHERE kind = 'write' AND applied AND token > $st->{token}");
				if ($newer > 0 || $now - $st->{at} > 25)
				{
					$f->{released} = $now;
					if ($f->{kind} eq 'holder frozen')
					{
						kill 'CONT', $st->{w}{zpid};
					}
					else
					{
						$f->{resume}->();
					}
					fault_note(sprintf('holder %d %s after %.1f s (%d newer writes applied)',
							$st->{w}{i}, $f->{kind} eq 'holder frozen' ? 'woken' : 'resumes its work',
							$now - $st->{at}, $newer));
				}
			}
			$done = 1 if $f->{released} && !$f->{up_at};
		}
	}
	if ($done)
	{
		$nem->{phase} = 'quiet';
		$nem->{fault} = undef;
		$nem->{next_at} = $now + 1 + rand(1);
	}
	return;
}

# run_nemesis(NAME, FENCE, DURATION): one run, on a fresh resource and
# fresh sessions; returns what the checker found (and checks, under NAME,
# what must hold in both runs)
sub run_nemesis
{
	my ($name, $fence, $duration) = @_;
	$run = { name => $name, fence => $fence, grants => [], stalled_writes => [],
		stats => {}, errors => {}, messages => {} };
	$nr->safe_psql('postgres',
		'TRUNCATE history; DELETE FROM resource; INSERT INTO resource VALUES (1, 0, 0, 0)');
	@workers = map { { i => $_, node => $_ < 3 ? $na : $nb } } 0 .. 5;
	open_sessions($_) for @workers;
	$nem = { phase => 'quiet', next_at => time() + 3, k => 0, t0 => time(), last_health => 0 };

	# for DURATION seconds, and on until every kind of fault was injected
	# once (at most twice as long); no new fault in the last seconds
	# (unless a kind is still missing); then the workers go on until the
	# fault under way has ended (healed, woken, restarted, up: at most 90 s)
	my $t_start = time();
	my $t_stop;
	while (1)
	{
		my $all_kinds = !grep { !$run->{stats}{faults}{$_} } @fault_kinds;
		my $elapsed = time() - $t_start;
		$t_stop //= time()
		  if ($elapsed >= $duration && $all_kinds) || $elapsed >= 2 * $duration;
		last if $t_stop && ($nem->{phase} eq 'quiet' || time() - $t_stop > 90);
		for my $w (@workers)
		{
			poll_worker($w);
			start_cycle($w)
			  if $w->{state} eq 'idle' && time() >= ($w->{not_before} // 0);
		}
		nemesis_tick($t_stop || ($elapsed > $duration - 8 && $all_kinds));
		usleep(2000);
	}
	$run->{seconds} = time() - $t_start;
	is($nem->{phase}, 'quiet', "$name: the last fault ended (healed, woken, resumed, restarted)");
	ok(wait_for(sub { zk_healthy($ens) }, 60, 'a whole ensemble'),
		"$name: the ensemble is whole again: three members serving, one leader");

	# every worker's last operation ends within 30 s; those still waiting
	# then are cancelled, and must end within 15 s more
	my $busy = sub { grep { $_->{state} ne 'idle' } @workers };
	my $deadline = time() + 30;
	while ($busy->() && time() < $deadline)
	{
		poll_worker($_) for @workers;
		usleep(2000);
	}
	my @cancelled;
	for my $w ($busy->())
	{
		push @cancelled, $w->{i};
		$control{ $w->{node} == $na ? 'a' : 'b' }
		  ->query_safe("SELECT pg_cancel_backend($w->{zpid})");
	}
	$deadline = time() + 15;
	while ($busy->() && time() < $deadline)
	{
		poll_worker($_) for @workers;
		usleep(2000);
	}
	is(scalar($busy->()), 0, "$name: every worker's last operation ended (none hung)");
	note("$name: cancelled at the end: " . (@cancelled ? join(', ', @cancelled) : 'none'));

	# --- what the history shows
	my %r = (name => $name, seconds => $run->{seconds});
	my @writes = map { [ split /\|/ ] } split /\n/, $nr->safe_psql('postgres',
		q{SELECT write_seq, token, old_value, new_value FROM history
		  WHERE kind = 'write' AND applied ORDER BY write_seq});
	$r{applied} = scalar(@writes);
	my $v = check_history(\@writes, [ map { [ $_->[0], $_->[1] ] } @{ $run->{grants} } ]);
	$r{$_} = $v->{$_} for keys %$v;
	($r{value}, $r{writes}) = split /\|/,
	  $nr->safe_psql('postgres', 'SELECT value, writes FROM resource WHERE id = 1');
	# a stale write: made after a newer token had been read or written
	my $stale = q{FROM history w WHERE w.kind = 'write' AND EXISTS
		(SELECT FROM history n WHERE n.applied AND n.token > w.token AND n.id < w.id)};
	$r{stale_tried} = $nr->safe_psql('postgres', "SELECT count(*) $stale");
	$r{stale_applied} = $nr->safe_psql('postgres', "SELECT count(*) $stale AND w.applied");
	# ... by a holder zklock had not told that its lock was lost (its work
	# step, whose COMMIT confirmed the session, succeeded)
	$r{stale_vouched} = $nr->safe_psql('postgres',
		"SELECT count(*) $stale AND coalesce(w.note, '') NOT IN ('08006', '08001')");
	# a refusal of a holder zklock had not told it lost its lock: a read
	# refused (it comes right after the grant), or a write whose work
	# succeeded: the fence saw a newer token while zklock still vouched
	($r{refused_reads}, $r{refused_writes}, $r{refused_vouched}) = split /\|/,
	  $nr->safe_psql('postgres',
		q{SELECT count(*) FILTER (WHERE kind = 'read'),
		         count(*) FILTER (WHERE kind = 'write'),
		         count(*) FILTER (WHERE kind = 'read'
		                          OR coalesce(note, '') NOT IN ('08006', '08001'))
		  FROM history WHERE NOT applied});
	# overlapping holders: spans from the applied read to the applied write;
	# the older holder of a pair is the stale one, and zklock must have told
	# it (the note of its write)
	my (@spans, %note_of);
	for (split /\n/, $nr->safe_psql('postgres',
		q{SELECT r.token, extract(epoch FROM r.at), extract(epoch FROM w.at), coalesce(w.note, '')
		  FROM history r JOIN history w ON w.token = r.token AND w.kind = 'write' AND w.applied
		  WHERE r.kind = 'read' AND r.applied}))
	{
		my ($tok, $s, $e, $note) = split /\|/;
		push @spans, [ $tok, $s, $e ];
		$note_of{$tok} = $note;
	}
	my $pairs = overlapping_holders(\@spans);
	$r{overlaps} = scalar(@$pairs);
	$r{overlaps_vouched} = scalar(grep { $note_of{ $_->[0] } !~ /^080(06|01)$/ } @$pairs);
	$r{stalled} = $run->{stalled_writes};
	$r{grants} = $run->{stats}{grants} // 0;
	# how long the lock stayed stuck: the longest time between two grants
	# (a waiter's lock_timeout, 55P03, tells only that one waiter waited)
	my @at = sort { $a <=> $b } map { $_->[0] } @{ $run->{grants} };
	$r{longest_gap} = 0;
	for my $k (1 .. $#at)
	{
		$r{longest_gap} = $at[$k] - $at[ $k - 1 ] if $at[$k] - $at[ $k - 1 ] > $r{longest_gap};
	}
	my %faults = %{ $run->{stats}{faults} // {} };
	$r{faults} = \%faults;
	my $nfaults = 0;
	$nfaults += $_ for values %faults;
	my %errors = %{ $run->{errors} };
	note(sprintf('%s: nemesis for %.0f s: %d grants, %d applied writes, final value %d; '
		  . 'stale writes: %d tried, %d applied, %d of a holder zklock had not told it lost the lock; '
		  . 'overlapping holders: %d pairs (%d with an older holder not told); '
		  . 'refusals: %d reads, %d writes (%d of a holder not told); '
		  . 'checker: %d fencing violations, %d lost updates, %d grants out of order; '
		  . '%d faults (%s); errors by step and SQLSTATE: %s',
			$name, $run->{seconds}, $r{grants}, $r{applied}, $r{value},
			$r{stale_tried}, $r{stale_applied}, $r{stale_vouched},
			$r{overlaps}, $r{overlaps_vouched},
			$r{refused_reads}, $r{refused_writes}, $r{refused_vouched},
			$r{fencing}, $r{lost}, $r{grant_order}, $nfaults,
			join(', ', map { "$_: $faults{$_}" } sort keys %faults),
			join(', ', map { "$_: $errors{$_}" } sort keys %errors) || 'none'));
	note("$name: errors by message:\n"
		  . join("\n", map { "  $run->{messages}{$_} x $_" } sort keys %{ $run->{messages} }));
	note("$name: stalled holders' writes: "
		  . join(', ', map { "$_->{kind}: worker $_->{worker} token $_->{token}: "
				  . ($_->{applied} eq 't' ? 'applied' : 'refused') } @{ $r{stalled} }));

	# --- what must hold in both runs
	cmp_ok($r{grants}, '>', 50, "$name: the workers got the lock many times");
	cmp_ok($r{applied}, '>', 50, "$name: and applied many writes");
	is($r{grant_order}, 0, "$name: the grants' tokens strictly increase in grant order");
	my %tok_seen;
	is(scalar(grep { $tok_seen{ $_->[1] }++ } @{ $run->{grants} }), 0,
		"$name: no two grants share a token");
	cmp_ok($faults{$_} // 0, '>', 0, "$name: the nemesis injected: $_") for @fault_kinds;
	is($run->{stats}{rejoin_failures} // 0, 0, "$name: every cut-off member rejoined");
	# the lock is stuck no longer than a stale holder's session can last:
	# its session timeout, once the holder is cut off or frozen, and as
	# long again for the server to expire it and for the waiter to hear of
	# it over a connection the fault may have dropped (connect_timeout 2 s)
	my $stuck_bound = 2 * $session_s + 2;
	cmp_ok($r{longest_gap}, '<', $stuck_bound,
		sprintf('%s: the lock was never stuck %d s or more (longest time between two grants: %.1f s)',
			$name, $stuck_bound, $r{longest_gap}));
	my @unexpected = grep { !/^(lock|work|unlock):(08001|08006|55P03|57014)$/ } keys %errors;
	is(join(', ', sort @unexpected), '',
		"$name: every error was one a fault explains (08001, 08006, 55P03, 57014), none on the resource");
	is($r{stale_vouched}, 0,
		"$name: every stale write was of a holder zklock had told its lock was lost (08006, 08001)");
	is($r{refused_vouched}, 0,
		"$name: every refusal was of a holder zklock had told its lock was lost: "
		  . 'zklock never vouched for a token the resource had seen superseded');
	for my $kind (@stall_kinds)
	{
		my @mine = grep { $_->{kind} eq $kind } @{ $r{stalled} };
		cmp_ok(scalar(@mine), '>', 0, "$name: a $kind past its session timeout tried to write");
	}

	# --- nothing left behind
	for my $w (@workers)
	{
		$w->{z}->quit;
		$w->{r}->quit;
	}
	ok(wait_queues_empty($na, [$path], 20, 'empty queue'),
		"$name: no queue node is left under /zklock/nemesis");
	my $left;
	ok(wait_for(sub { ($left = zk_ephemerals_under($ens, '/zklock')) eq '' }, 20,
			'no ephemeral node'),
		"$name: no ephemeral node at all under /zklock once every backend is gone")
	  or diag("left: $left");
	$r{orphans} = scalar(grep { $_ ne '' } split /\n/, $left // '');
	return \%r;
}

# figures(PREFIX, RESULT): a run's figures, as "# figure:" lines
sub figures
{
	my ($prefix, $r) = @_;
	my %k;
	$k{ $_->{kind} }{ $_->{applied} eq 't' ? 'applied' : 'refused' }++ for @{ $r->{stalled} };
	figure(
		"${prefix}_seconds" => sprintf('%.0f', $r->{seconds}),
		"${prefix}_grants" => $r->{grants},
		"${prefix}_longest_gap_s" => sprintf('%.1f', $r->{longest_gap}),
		"${prefix}_applied" => $r->{applied},
		"${prefix}_final_value" => $r->{value},
		"${prefix}_stale_tried" => $r->{stale_tried},
		"${prefix}_stale_applied" => $r->{stale_applied},
		"${prefix}_stale_vouched" => $r->{stale_vouched},
		"${prefix}_overlaps" => $r->{overlaps},
		"${prefix}_fencing" => $r->{fencing},
		"${prefix}_lost" => $r->{lost},
		"${prefix}_updates_lost" => $r->{applied} - $r->{value},
		"${prefix}_refused_reads" => $r->{refused_reads},
		"${prefix}_refused_writes" => $r->{refused_writes},
		"${prefix}_refused_vouched" => $r->{refused_vouched},
		"${prefix}_orphans" => $r->{orphans},
		"${prefix}_faults" => join(', ',
			map { "$_ $r->{faults}{$_}" } sort keys %{ $r->{faults} }),
		map {
			my $kind = $_;
			(my $n = $kind) =~ s/\W+/_/g;
			("${prefix}_${n}_applied" => $k{$kind}{applied} // 0,
			 "${prefix}_${n}_refused" => $k{$kind}{refused} // 0)
		} @stall_kinds);
	return;
}

# --- fence off: the faults make stale holders write, and the checker sees it
my $off = run_nemesis('fence off', 0, $unfenced_duration);
figures('unfenced', $off);
cmp_ok($off->{stale_applied}, '>', 0,
	'fence off: stale writes were applied (the checker sees them)');
cmp_ok($off->{overlaps}, '>', 0, 'fence off: holders overlapped at the resource');
is($off->{overlaps_vouched}, 0,
	'fence off: in every overlap, the older holder was one zklock had told its lock was lost');
cmp_ok($off->{lost}, '>', 0, 'fence off: updates were lost');
cmp_ok($off->{value}, '<', $off->{applied},
	'fence off: the final value falls short of the number of applied writes');
cmp_ok($off->{fencing}, '>', 0, 'fence off: an older token was applied after a newer one');
for my $kind (@stall_kinds)
{
	cmp_ok(scalar(grep { $_->{kind} eq $kind && $_->{applied} eq 't' } @{ $off->{stalled} }),
		'>', 0, "fence off: the write of a $kind past its session timeout was applied");
}

# --- fence on: none of it reaches the resource
my $on = run_nemesis('fence on', 1, $fenced_duration);
figures('fenced', $on);
is($on->{stale_applied}, 0, 'fence on: no stale write was applied');
is($on->{overlaps}, 0, 'fence on: no two holders overlapped at the resource');
is($on->{fencing}, 0, 'fence on: the tokens of the applied writes strictly increase (0 violations)');
is($on->{lost}, 0, 'fence on: no lost update: each applied write continues the previous one');
is($on->{value}, $on->{applied}, 'fence on: the final value is the number of applied writes');
is($on->{writes}, $on->{applied}, "fence on: and so is the resource's own count of writes");
cmp_ok($on->{stale_tried}, '>', 0, 'fence on: stale holders did try to write');
# a stalled holder's write is stale only once a newer holder wrote before
# it; one that no newer holder preceded (they all timed out waiting, say)
# holds the largest token and passes: stale writes applied are counted
# above (0), so here the fence is only required to have refused some
cmp_ok(scalar(grep { $_->{applied} eq 'f' } @{ $on->{stalled} }), '>', 0,
	'fence on: the fence refused the write of a holder frozen or cut off past its session timeout');

$_->quit for ($rc, values %control);
zk_proxy_stop($_) for @zkp;
$na->stop;
$nb->stop;
$nr->stop;
done_testing();
