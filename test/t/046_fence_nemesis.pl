# zk_fence under a nemesis, in the Jepsen style: run twice, without the
# fence and with it.
#
# Four workers, two on each of two PostgreSQL servers (A reaches ZooKeeper
# directly, B through python/zkproxy.py, so that B can be cut off), take
# turns, one step at a time, driven by this script:
#
#   token := zk_lock('/fenced/account')                   (A or B)
#   read:  BEGIN; [SELECT zk_fence(path, token);]          (resource R)
#          SELECT balance FROM account; COMMIT
#   write: BEGIN; [SELECT zk_fence(path, token);]          (resource R)
#          UPDATE account SET balance = read + 1;
#          INSERT INTO history (token, old, new); COMMIT
#   zk_unlock('/fenced/account')
#
# The resource is a third server, R, with zklock installed and no
# ZooKeeper it could reach: zk_fence(path, token) there makes no ZooKeeper
# request (checked: its backends never open a session).  With the fence on,
# the read is fenced as well as the write: fencing the write alone lets a
# stale holder write between its successor's read and write, which makes
# the successor's write lose an increment.
#
# Between cycles the nemesis makes one holder stale, in turn:
# - paused: its zklock backend is stopped (SIGSTOP) right after its read,
#   another worker takes the lock once the paused session expired and
#   writes, then it is woken (SIGCONT) and writes what it read, blindly;
# - partitioned: a holder on B, right after its read, is cut off from
#   ZooKeeper (B's proxy drops every connection and accepts none) past the
#   session timeout; a worker on A takes the lock and writes; B is let
#   back and the holder writes what it read;
# and drops B's connections for less than the session timeout while a
# holder on B works (its session survives: its write is a good one).
#
# The checker (test/lib/ZkHistory.pm) reads the applied writes in order:
# a lost update is a write that does not continue the previous one, a
# fencing violation a write whose token is not larger than the previous
# one's; the grants' tokens must increase in grant order.
# - Fence off: lost updates and fencing violations are seen (> 0): the
#   nemesis does make stale holders write, and the checker can fail.
# - Fence on: 0 lost updates, 0 fencing violations, the final balance is
#   the number of applied writes, and every stale holder's write is refused
#   by zk_fence (55000), counted (> 0).
# The figures are printed with figure(); ZKLOCK_FENCE_NEMESIS_ROUNDS
# (default 2) is how many times each kind of fault is injected per run.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;
use ZkHistory;

my $rounds = $ENV{ZKLOCK_FENCE_NEMESIS_ROUNDS} // 2;
my $session_s = 4;
my $path = '/fenced/account';

# --- the servers
my $zk = zk_standalone();
my $proxy = zk_proxy($zk);
my $conf = "zklock.session_timeout = '${session_s}s'\nzklock.connect_timeout = '2s'\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', { hosts => "127.0.0.1:$proxy->{port}" }, $conf);
my $nr = pg_with_zklock('r', { hosts => '127.0.0.1:9' }, $conf);
$nr->safe_psql('postgres', q{
	CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL);
	CREATE TABLE history (id bigserial PRIMARY KEY, worker int NOT NULL,
		token bigint NOT NULL, old_value bigint NOT NULL,
		new_value bigint NOT NULL)});

my @workers = map {
	my $node = $_ < 2 ? $na : $nb;
	{ i => $_, node => $node, server => ($_ < 2 ? 'a' : 'b') }
} 0 .. 3;

sub code_of
{
	my ($err) = @_;
	return $err =~ /\bERROR:  ([0-9A-Z]{5}):/ ? $1 : 'none';
}

sub open_sessions
{
	my ($w) = @_;
	$w->{z} = verbose_session($w->{node});
	$w->{z}->query_safe(q{SET lock_timeout = '30s'});
	$w->{zpid} = $w->{z}->query_safe('SELECT pg_backend_pid()');
	$w->{r} = verbose_session($nr);
	return;
}

# one run: its counts, and the grants
my $run;

# lock(W): the worker takes the lock; its token, or undef (counted)
sub lock_step
{
	my ($w) = @_;
	my ($out, $err) = bg_query($w->{z}, qq{SELECT zk_lock('$path')});
	if ($err =~ /\bERROR:/)
	{
		$run->{errors}{ 'lock:' . code_of($err) }++;
		return undef;
	}
	push @{ $run->{grants} }, [ time(), $out ];
	return $out;
}

# read(W, TOKEN): the balance, or undef if the fence refused the read
sub read_step
{
	my ($w, $tok) = @_;
	my $fence = $run->{fenced} ? "SELECT zk_fence('$path', $tok) \\g /dev/null\n" : '';
	my ($out, $err) = bg_query($w->{r},
		"BEGIN;\n${fence}SELECT balance FROM account WHERE id = 1;\nCOMMIT");
	if ($err =~ /\bERROR:/)
	{
		# the script's COMMIT ended the failed transaction
		$run->{errors}{ 'read:' . code_of($err) }++;
		$run->{refused_reads}++ if code_of($err) eq '55000';
		return undef;
	}
	return $out;
}

# write(W, TOKEN, READ): write READ + 1 back; whether R applied it
sub write_step
{
	my ($w, $tok, $read, $stale) = @_;
	my $new = $read + 1;
	my $fence = $run->{fenced} ? "SELECT zk_fence('$path', $tok) \\g /dev/null\n" : '';
	my ($out, $err) = bg_query($w->{r}, "BEGIN;\n$fence"
		  . "UPDATE account SET balance = $new WHERE id = 1;\n"
		  . "INSERT INTO history (worker, token, old_value, new_value) VALUES ($w->{i}, $tok, $read, $new);\n"
		  . "COMMIT");
	if ($err =~ /\bERROR:/)
	{
		# the script's COMMIT ended the failed transaction
		my $code = code_of($err);
		$run->{errors}{"write:$code"}++;
		if ($code eq '55000')
		{
			$run->{refused_writes}++;
			$run->{refused_stale}++ if $stale;
		}
		return 0;
	}
	$run->{applied_writes}++;
	$run->{applied_stale}++ if $stale;
	$run->{last_token} = $tok;
	return 1;
}

sub unlock_step
{
	my ($w) = @_;
	my ($out, $err) = bg_query($w->{z}, qq{SELECT zk_unlock('$path')});
	if ($err =~ /\bERROR:/)
	{
		$run->{errors}{ 'unlock:' . code_of($err) }++;
		bg_query($w->{z}, 'SELECT zk_unlock_all()');
	}
	return;
}

# cycle(W): one whole cycle; whether its write was applied
sub cycle
{
	my ($w) = @_;
	$run->{cycles}++;
	my $tok = lock_step($w) // return 0;
	my $read = read_step($w, $tok);
	my $applied = defined $read ? write_step($w, $tok, $read, 0) : 0;
	unlock_step($w);
	return $applied;
}

# successor(W, STALE_TOKEN): W cycles until it has written with a token
# newer than STALE_TOKEN (at most 5 cycles); whether it did
sub successor
{
	my ($w, $stale_tok) = @_;
	for (1 .. 5)
	{
		return 1 if cycle($w) && $run->{last_token} > $stale_tok;
	}
	return 0;
}

# stale(KIND, W, OTHER): W takes the lock and reads; the fault makes it
# stale; OTHER writes after it with a newer token; W then writes what it read
sub stale
{
	my ($kind, $w, $other) = @_;
	my $tok = lock_step($w) // return;
	my $read = read_step($w, $tok);
	if (!defined $read)
	{
		unlock_step($w);
		return;
	}
	$run->{faults}{$kind}++;
	my $t0 = time();
	if ($kind eq 'paused')
	{
		kill 'STOP', $w->{zpid};
		$run->{successors}++ if successor($other, $tok);
		kill 'CONT', $w->{zpid};
	}
	else
	{
		zk_proxy_cmd($proxy, 'down');
		$run->{successors}++ if successor($other, $tok);
		# the session has expired by now: the successor's lock waited for it
		zk_proxy_cmd($proxy, 'up');
	}
	note(sprintf('%s: worker %d (token %s) %s for %.1f s', $run->{name}, $w->{i},
		$tok, $kind, time() - $t0));
	write_step($w, $tok, $read, 1);
	unlock_step($w);
	return;
}

# short_drop(W): a holder on B loses its connections for less than the
# session timeout while it works; its write is a good one
sub short_drop
{
	my ($w) = @_;
	my $tok = lock_step($w) // return;
	my $read = read_step($w, $tok);
	if (defined $read)
	{
		$run->{faults}{'dropped briefly'}++;
		zk_proxy_cmd($proxy, 'down');
		usleep(1_000_000);
		zk_proxy_cmd($proxy, 'up');
		# its zklock backend is still the holder: it confirms so
		my ($out, $err) = bg_query($w->{z}, qq{SELECT count(*) FROM zk_locks WHERE path = '$path'});
		$run->{errors}{ 'held:' . code_of($err) }++ if $err =~ /\bERROR:/;
		write_step($w, $tok, $read, 0);
	}
	unlock_step($w);
	return;
}

sub run_nemesis
{
	my ($name, $fenced) = @_;
	$run = { name => $name, fenced => $fenced, grants => [] };
	$nr->safe_psql('postgres', q{
		TRUNCATE history; DELETE FROM account; INSERT INTO account VALUES (1, 0);
		DELETE FROM zk_fence_tokens});
	open_sessions($_) for @workers;
	my ($a0, $a1, $b0, $b1) = @workers;
	for my $round (1 .. $rounds)
	{
		cycle($_) for @workers;
		stale('paused', $round % 2 ? $a0 : $b0, $round % 2 ? $b1 : $a1);
		cycle($_) for @workers;
		stale('partitioned', $round % 2 ? $b0 : $b1, $round % 2 ? $a1 : $a0);
		short_drop($round % 2 ? $b1 : $b0);
	}
	cycle($_) for @workers;

	# what R applied, in order
	my @writes = map { [ split /\|/ ] } split /\n/, $nr->safe_psql('postgres',
		q{SELECT row_number() OVER (ORDER BY id), token, old_value, new_value
		  FROM history ORDER BY id});
	$run->{check} = check_history(\@writes, $run->{grants});
	$run->{balance} = $nr->safe_psql('postgres', 'SELECT balance FROM account');
	$run->{history_rows} = scalar @writes;
	$run->{r_sessions} = join(',', map { $_->{r}->query_safe('SELECT state FROM zk_session()') } @workers);
	for my $w (@workers)
	{
		$w->{$_}->quit for qw(z r);
	}
	note("$name: errors " . join(', ', map { "$_=$run->{errors}{$_}" } sort keys %{ $run->{errors} }));
	return $run;
}

sub figures
{
	my ($prefix, $r) = @_;
	figure(
		"${prefix}_cycles" => $r->{cycles},
		"${prefix}_applied_writes" => $r->{applied_writes} // 0,
		"${prefix}_stale_writes_applied" => $r->{applied_stale} // 0,
		"${prefix}_stale_writes_refused" => $r->{refused_stale} // 0,
		"${prefix}_lost_updates" => $r->{check}{lost},
		"${prefix}_fencing_violations" => $r->{check}{fencing},
		"${prefix}_faults" => join(', ', map { "$_ $r->{faults}{$_}" } sort keys %{ $r->{faults} }));
	return;
}

# --- fence off: stale holders write, and the checker sees it
my $off = run_nemesis('fence off', 0);
figures('unfenced', $off);
cmp_ok($off->{faults}{paused} // 0, '==', $rounds, 'fence off: every pause was injected');
cmp_ok($off->{faults}{partitioned} // 0, '==', $rounds, 'fence off: every partition was injected');
cmp_ok($off->{successors} // 0, '==', 2 * $rounds,
	'fence off: a successor wrote after every stale holder');
cmp_ok($off->{applied_stale} // 0, '>', 0, 'fence off: stale writes are applied');
cmp_ok($off->{check}{lost}, '>', 0, 'fence off: the checker sees lost updates');
cmp_ok($off->{check}{fencing}, '>', 0, 'fence off: the checker sees fencing violations');
is($off->{check}{grant_order}, 0, 'fence off: the grants\' tokens increase');

# --- fence on: none of it reaches the resource
my $on = run_nemesis('fence on', 1);
figures('fenced', $on);
cmp_ok($on->{faults}{paused} // 0, '==', $rounds, 'fence on: every pause was injected');
cmp_ok($on->{faults}{partitioned} // 0, '==', $rounds, 'fence on: every partition was injected');
cmp_ok($on->{successors} // 0, '==', 2 * $rounds,
	'fence on: a successor wrote after every stale holder');
is($on->{applied_stale} // 0, 0, 'fence on: no stale write is applied');
is($on->{refused_stale} // 0, 2 * $rounds, 'fence on: every stale write is refused by zk_fence (55000)');
is($on->{check}{lost}, 0, 'fence on: 0 lost updates');
is($on->{check}{fencing}, 0, 'fence on: 0 fencing violations');
is($on->{check}{grant_order}, 0, 'fence on: the grants\' tokens increase');
is($on->{balance}, $on->{history_rows}, 'fence on: the balance is the number of applied writes');
cmp_ok($on->{applied_writes} // 0, '>', 4 * $rounds, 'fence on: the good writes go through');
my @unexplained = grep { !/^(?:write:55000|unlock:08006|lock:08006)$/ } keys %{ $on->{errors} };
is("@unexplained", '', 'fence on: every error is a refused stale write or a lost lock');
is($on->{r_sessions}, 'closed,closed,closed,closed',
	'the resource server fenced without a ZooKeeper session');

done_testing();
