# A fenced resource under a nemesis.
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
#          WHERE id = 1 AND token = :token, with a history row saying
#          whether it was applied, in the same statement
#   zk_unlock('/nemesis/r')
#
# The resource lives on a third PostgreSQL server and is the fence: it
# remembers the newest token it has seen, from a read or a write, and
# refuses a read or a write that carries an older one.  (Fencing the write
# alone is not enough for a read-modify-write: a stale holder writing
# between its successor's read and write would make the successor's write
# lose its increment, however correct the lock.)  The workers write
# blindly: after their work, whether or not zklock said the lock was lost
# meanwhile, so that a stale holder's write reaches the fence.
#
# Meanwhile a nemesis injects, in turn, one fault at a time: the ZooKeeper
# leader killed (SIGKILL) and restarted; a holder's backend frozen
# (SIGSTOP, right after its read) past its session timeout, until another
# worker has written with a newer token, then woken (SIGCONT); every
# connection of server B dropped (zkproxy down) for less, and for more,
# than the session timeout; the leader, and a follower, cut off from the
# other two members (ZkFaults' partitionable ensemble) for a few seconds.
#
# The checker reads the history afterwards: the tokens of the applied
# writes strictly increase in the order they were applied (no fencing
# violation); each applied write's old value is the previous one's new
# value, and the final value is the number of applied writes (no lost
# update); the grants' tokens strictly increase in the order of their
# grant times; every frozen holder's write was refused by the fence, and
# every refusal was of a holder that zklock had told (08006) its lock was
# lost, so zklock never vouched for a token the fence had seen superseded.
# It is self-tested on histories broken on purpose.  Every wait is bounded:
# every worker's last operation ends (granted, failed with an SQLSTATE, or
# cancelled at the end), and once every backend is gone no queue node and
# no ephemeral node is left in ZooKeeper.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkFaults;

my $duration = $ENV{ZKLOCK_NEMESIS_SECONDS} // 75;
my $session_s = 4;
my $path = '/nemesis/r';
srand(37);

# --- the checker, and its self-test
#
# check_history(WRITES, GRANTS): WRITES are the applied writes as
# [write_seq, token, old_value, new_value], GRANTS the grants as
# [grant_time, token]; returns a hash of counts: fencing (an applied token
# not greater than the one applied before it), lost (an applied write whose
# old value is not the previous applied write's new value, or a gap in the
# sequence), grant_order (a grant whose token is not greater than the
# token of the grant before it in time).
sub check_history
{
	my ($writes, $grants) = @_;
	my %v = (fencing => 0, lost => 0, grant_order => 0);
	my ($prev_tok, $prev_new, $prev_seq) = (0, 0, 0);
	for my $w (sort { $a->[0] <=> $b->[0] } @$writes)
	{
		my ($seq, $tok, $old, $new) = @$w;
		$v{fencing}++ if $tok <= $prev_tok;
		$v{lost}++ if $old != $prev_new || $new != $old + 1 || $seq != $prev_seq + 1;
		($prev_tok, $prev_new, $prev_seq) = ($tok, $new, $seq);
	}
	my $prev = 0;
	for my $g (sort { $a->[0] <=> $b->[0] } @$grants)
	{
		$v{grant_order}++ if $g->[1] <= $prev;
		$prev = $g->[1];
	}
	return \%v;
}

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

# --- the servers
my $ens = zk_partitionable_ensemble(
	cfg => "syncLimit=5\n",
	jvm => '-Dzookeeper.fastleader.maxNotificationInterval=1000');
my @zkp = map { zk_proxy({ ports => [$_] }) } @{ $ens->{ports} };
my $conf = "zklock.session_timeout = '${session_s}s'\nzklock.connect_timeout = '2s'\n";
my $na = pg_with_zklock('a', $ens, $conf);
my $nb = pg_with_zklock('b',
	{ hosts => join(',', map { "127.0.0.1:$_->{port}" } @zkp) }, $conf);
my $nr = PostgreSQL::Test::Cluster->new('resource');
$nr->init;
$nr->start;
$nr->safe_psql(
	'postgres', q{
	CREATE TABLE resource (id int PRIMARY KEY, token bigint NOT NULL,
		value bigint NOT NULL, writes bigint NOT NULL);
	INSERT INTO resource VALUES (1, 0, 0, 0);
	CREATE TABLE history (id bigserial PRIMARY KEY,
		at timestamptz NOT NULL DEFAULT clock_timestamp(),
		worker int NOT NULL, kind text NOT NULL, token bigint NOT NULL,
		old_value bigint, new_value bigint, applied boolean NOT NULL,
		write_seq bigint, note text)});

# --- the workers
my (@grants, %stats, %errors, %messages, @frozen_writes);
my $seq = 0;
my @workers = map { { i => $_, node => $_ < 3 ? $na : $nb } } 0 .. 5;

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
	$errors{"$step:$code"}++;
	my ($msg) = $err =~ /\bERROR:  (?:[0-9A-Z]{5}: )?([^\n]*)/;
	($msg //= $err) =~ s/\d+/N/g;
	$messages{"$step:$code: $msg"}++;
	diag("$step: $err") if $step =~ /^resource/ || $code eq 'none';
	return $code;
}

my $nem;    # the nemesis' state (below)

sub start_cycle
{
	my ($w) = @_;
	$stats{cycles}++;
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
		$errors{'lock:no token'}++;
		diag("lock: no token in '$out', stderr: $err");
		$w->{state} = 'idle';
		return;
	}
	$stats{grants}++;
	push @grants, [ $t, $tok, $w->{i} ];
	send_sql($w, 'r',
		"UPDATE resource SET token = $tok WHERE id = 1 AND token <= $tok RETURNING value",
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
		$stats{read_refused}++;
		send_sql($w, 'r',
			"INSERT INTO history (worker, kind, token, applied) VALUES ($w->{i}, 'read', $tok, false)",
			sub { unlock($w) });
		return;
	}
	my $value = $out;
	if ($nem->{freeze_wanted})
	{
		# the nemesis freezes this holder between its read and its write
		kill 'STOP', $w->{zpid};
		$nem->{frozen} = { w => $w, token => $tok, at => time() };
		$nem->{freeze_wanted} = 0;
		$stats{faults}{'holder frozen'}++;
		note(sprintf('%.1f s: holder %d (token %s) frozen', time() - $nem->{t0}, $w->{i}, $tok));
	}
	send_sql($w, 'z', sprintf('SELECT pg_sleep(%.3f)', 0.002 + rand(0.02)),
		sub { after_work($w, $tok, $value, @_) });
	return;
}

sub after_work
{
	my ($w, $tok, $value, $out, $err) = @_;
	my $note = '';
	$note = count_error('work', $err) if defined code_of($err);
	# write blindly, whatever zklock said
	my $new = $value + 1;
	send_sql(
		$w, 'r', qq{WITH u AS (UPDATE resource SET value = $value + 1, writes = writes + 1
		              WHERE id = 1 AND token = $tok RETURNING writes)
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
		$stats{writes_applied}++;
	}
	else
	{
		$stats{write_refused}++;
	}
	if ($w->{frozen_token} && $w->{frozen_token} == $tok)
	{
		push @frozen_writes, [ $w->{i}, $tok, $out ];
		delete $w->{frozen_token};
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

open_sessions($_) for @workers;
my $rc = $nr->background_psql('postgres');
my %control = (a => $na->background_psql('postgres'), b => $nb->background_psql('postgres'));

# --- the nemesis: one fault at a time, each a small state machine driven
# from the main loop (never blocking it for long)
my @kinds = ('partition leader', 'holder frozen', 'leader killed', 'drop short',
	'partition follower', 'drop long', 'holder frozen', 'leader killed');
my @fault_kinds = ('leader killed', 'holder frozen', 'connections dropped (short)',
	'connections dropped (long)', 'partition leader', 'partition follower');
$nem = { phase => 'quiet', next_at => time() + 3, k => 0, t0 => time() };
my $last_health = 0;

sub fault_note
{
	my ($msg) = @_;
	note(sprintf('%.1f s: %s', time() - $nem->{t0}, $msg));
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
		return if $no_new || $now < $nem->{next_at} || $now - $last_health < 1;
		$last_health = $now;
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
			$stats{faults}{$kind}++;
			fault_note("leader $f->{member} killed");
		}
		elsif ($kind =~ /^drop (short|long)/)
		{
			zk_proxy_cmd($_, 'down') for @zkp;
			$f->{up_at} = time() + ($1 eq 'short' ? 1.5 : $session_s + 2);
			$stats{faults}{"connections dropped ($1)"}++;
			fault_note("server B's connections dropped ($1)");
		}
		elsif ($kind =~ /^partition (leader|follower)/)
		{
			$f->{member} = $1 eq 'leader' ? $leader
			  : (grep { $_ != $leader } 1 .. 3)[ int(rand(2)) ];
			zk_isolate($ens, $f->{member});
			$f->{heal_at} = time() + 3 + rand(2);
			$stats{faults}{$kind}++;
			fault_note("$1 $f->{member} cut off");
		}
		else
		{
			$nem->{freeze_wanted} = 1;
			$f->{give_up_at} = $now + 15;
			fault_note('freeze the next holder after its read');
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
	elsif ($f->{kind} =~ /^drop/)
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
				$stats{rejoin_failures}++;
				$done = 1;
			}
		}
	}
	else
	{
		my $fr = $nem->{frozen};
		if (!$fr)
		{
			if ($now >= $f->{give_up_at})
			{
				$nem->{freeze_wanted} = 0;
				fault_note('no holder to freeze');
				$done = 1;
			}
		}
		elsif ($now - $fr->{at} > $session_s + 1 && $now - ($f->{polled} // 0) > 0.3)
		{
			$f->{polled} = $now;
			my $newer = $rc->query_safe(
				"SELECT count(*) FROM history WHERE applied AND token > $fr->{token}");
			if ($newer > 0 || $now - $fr->{at} > 25)
			{
				$fr->{w}{frozen_token} = $fr->{token};
				kill 'CONT', $fr->{w}{zpid};
				fault_note(sprintf('holder %d woken after %.1f s (%d newer writes applied)',
						$fr->{w}{i}, $now - $fr->{at}, $newer));
				$nem->{frozen} = undef;
				$done = 1;
			}
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

# --- the run: for $duration seconds, and on until every kind of fault was
# injected once (at most twice as long); no new fault in the last seconds
# (unless a kind is still missing); then the workers go on until the fault
# under way has ended (healed, woken, restarted, up: at most 90 s)
my $t_start = time();
my $t_stop;
while (1)
{
	my $all_kinds = !grep { !$stats{faults}{$_} } @fault_kinds;
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
my $t_run = time() - $t_start;
is($nem->{phase}, 'quiet', 'the last fault ended (healed, woken, restarted)');
ok(wait_for(sub { zk_healthy($ens) }, 60, 'a whole ensemble'),
	'the ensemble is whole again: three members serving, one leader');

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
	$control{ $w->{i} < 3 ? 'a' : 'b' }->query_safe("SELECT pg_cancel_backend($w->{zpid})");
}
$deadline = time() + 15;
while ($busy->() && time() < $deadline)
{
	poll_worker($_) for @workers;
	usleep(2000);
}
is(scalar($busy->()), 0, 'every worker\'s last operation ended (none hung)');
note('cancelled at the end: ' . (@cancelled ? join(', ', @cancelled) : 'none'));

# --- the checks
my @writes = map { [ split /\|/ ] } split /\n/, $nr->safe_psql('postgres',
	q{SELECT write_seq, token, old_value, new_value FROM history
	  WHERE kind = 'write' AND applied ORDER BY write_seq});
my $v = check_history(\@writes, [ map { [ $_->[0], $_->[1] ] } @grants ]);
my ($value, $writes_n) = split /\|/,
  $nr->safe_psql('postgres', 'SELECT value, writes FROM resource WHERE id = 1');
my ($refused_reads, $refused_writes) = split /\|/, $nr->safe_psql('postgres',
	q{SELECT count(*) FILTER (WHERE kind = 'read'),
	         count(*) FILTER (WHERE kind = 'write' AND NOT applied) FROM history});
my $stale_refused = $nr->safe_psql('postgres',
	q{SELECT count(*) FROM history h WHERE kind = 'write' AND NOT applied
	  AND token < (SELECT max(token) FROM history n WHERE n.applied AND n.id < h.id)});
# a refusal of a holder that zklock had not told it lost its lock: a read
# refused (it comes right after the grant), or a write whose work (a
# statement whose COMMIT confirmed the session) succeeded: the fence saw a
# newer token while zklock still vouched for this one
my $unexplained = $nr->safe_psql('postgres',
	q{SELECT count(*) FROM history WHERE NOT applied
	  AND (kind = 'read' OR coalesce(note, '') NOT IN ('08006', '08001'))});

my %faults = %{ $stats{faults} // {} };
my $nfaults = 0;
$nfaults += $_ for values %faults;
note(sprintf('nemesis for %.0f s: %d grants, %d applied writes, final value %d; '
	  . 'fence refusals: %d reads, %d writes (%d of them older than an applied token, '
	  . '%d of a holder zklock had not told it lost the lock); '
	  . 'checker: %d fencing violations, %d lost updates, %d grants out of order; '
	  . '%d faults (%s); errors by step and SQLSTATE: %s',
		$t_run, $stats{grants} // 0, scalar(@writes), $value,
		$refused_reads, $refused_writes, $stale_refused, $unexplained,
		$v->{fencing}, $v->{lost}, $v->{grant_order}, $nfaults,
		join(', ', map { "$_: $faults{$_}" } sort keys %faults),
		join(', ', map { "$_: $errors{$_}" } sort keys %errors) || 'none'));
note("errors by message:\n" . join("\n", map { "  $messages{$_} x $_" } sort keys %messages));
note('frozen holders\' writes: '
	  . join(', ', map { "worker $_->[0] token $_->[1]: " . ($_->[2] eq 't' ? 'APPLIED' : 'refused') }
		  @frozen_writes));

cmp_ok($stats{grants} // 0, '>', 100, 'the workers got the lock many times');
cmp_ok(scalar(@writes), '>', 100, 'and applied many writes');
is($v->{fencing}, 0, 'fencing: the tokens of the applied writes strictly increase (0 violations)');
is($v->{lost}, 0, 'no lost update: each applied write continues the previous one (0 lost)');
is($value, scalar(@writes), 'the final value is the number of applied writes');
is($writes_n, scalar(@writes), 'and so is the resource\'s own count of writes');
is($v->{grant_order}, 0, 'the grants\' tokens strictly increase in grant order');
my %tok_seen;
is(scalar(grep { $tok_seen{ $_->[1] }++ } @grants), 0, 'no two grants share a token');
for my $kind (@fault_kinds)
{
	cmp_ok($faults{$kind} // 0, '>', 0, "the nemesis injected: $kind");
}
cmp_ok(scalar(@frozen_writes), '>', 0, 'frozen holders tried to write when woken');
is(scalar(grep { $_->[2] ne 'f' } @frozen_writes), 0,
	'the fence refused every write of a holder frozen past its session timeout');
cmp_ok($refused_writes + $refused_reads, '>=', scalar(@frozen_writes),
	'refusals were counted');
is($unexplained, 0,
	'every refusal was of a holder zklock had told its lock was lost (08006): '
	  . 'zklock never vouched for a stale token');
is($stats{rejoin_failures} // 0, 0, 'every cut-off member rejoined');
my @unexpected = grep { !/^(lock|work|unlock):(08001|08006|55P03|57014)$/ } keys %errors;
is(join(', ', sort @unexpected), '',
	'every error was one a fault explains (08001, 08006, 55P03, 57014), none on the resource');

# --- nothing left behind
for my $w (@workers)
{
	$w->{z}->quit;
	$w->{r}->quit;
}
$_->quit for ($rc, values %control);
ok(wait_queues_empty($na, [$path], 20, 'empty queue'), 'no queue node is left under /zklock/nemesis');
my $left;
ok(wait_for(sub { ($left = zk_ephemerals_under($ens, '/zklock')) eq '' }, 20,
		'no ephemeral node'),
	'no ephemeral node at all under /zklock once every backend is gone')
  or diag("left: $left");
note('orphans (ephemeral nodes left under /zklock): '
	  . scalar(grep { $_ ne '' } split /\n/, $left // ''));

zk_proxy_stop($_) for @zkp;
$na->stop;
$nb->stop;
$nr->stop;
done_testing();
