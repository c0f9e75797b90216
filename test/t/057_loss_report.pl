# The lost-lock ERROR reaches the client whatever the settings, a user's
# own cancel keeps its error, and a loss at any moment of a stream of
# statements is reported exactly once (zklock.on_lock_loss = cancel).
#
# 1. Under log_min_messages = warning, fatal and panic (with
#    client_min_messages and log_error_verbosity varied too): a deleted
#    node, an expired session and a lease past its ttl each end the running
#    statement with 08006 naming the lock.  (The report must not depend on
#    what goes to the server log.)
# 2. A PL/pgSQL loop catching OTHERS around pg_sleep(0.1) ends with 08006 at
#    the top level; a block that catches query_canceled and returns still
#    ends its statement with 08006, also when a zklock call of the statement
#    named the loss meanwhile and a handler caught that.
# 3. A plain pg_cancel_backend() of a holder is PostgreSQL's 57014 "user
#    request", and so is a statement_timeout: the locks are kept.
# 4. statement_timeout firing within a few ms of a loss: the statement ends
#    (never a swallowed cancel) with one of the two errors, never "user
#    request"; if the timeout won, the next statement names the loss.
# 5. A stress run at the idle/active boundary: a backend runs short
#    statements one after another, with idle gaps between them, while
#    another client deletes its held nodes at random moments.  Every loss
#    is reported exactly once, by a statement that started no later than a
#    moment after the deletion (so no statement that ran once the loss was
#    known completed without the ERROR), and nothing else fails (no false
#    cancel, no 57014).
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk, "zklock.session_timeout = '2s'\n");
my $b = pg_with_zklock('b', $zk);

# a session of server a with the given settings, holding an exclusive lock
# on path, whose node is watched; returns (session, pid, node)
sub holder
{
	my ($path, @settings) = @_;
	my $s = verbose_session($a);
	$s->query_safe("SET $_") for @settings;
	$s->query_safe("SELECT zk_lock('$path')");
	my $node = held_node($s, $path);
	wait_watched($zk, $node);
	my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
	return ($s, $pid, $node);
}

# --- 1. the report under every logging setting
my @settings = (
	[ 'log_min_messages = warning', 'client_min_messages = notice', 'log_error_verbosity = default' ],
	[ 'log_min_messages = fatal', 'client_min_messages = error', 'log_error_verbosity = terse' ],
	[ 'log_min_messages = panic', 'client_min_messages = warning', 'log_error_verbosity = verbose' ],
);
for my $set (@settings)
{
	my $label = $set->[0];

	# a deleted node
	{
		my ($s, $pid, $node) = holder('/report/del', @$set);
		bg_begin($s, q{SELECT pg_sleep(60)}, 'del_done');
		ok(wait_active($a, $pid), "$label, deleted node: the statement runs");
		my $t0 = kazoo_delete($zk, $node);
		my (undef, $err) = bg_finish($s, 'del_done');
		error_is($err, '08006',
			qr{ZooKeeper lock "/report/del" was lost\nDETAIL:  Its node "/zklock/report/del/[^"]+" no longer exists\. The statement was stopped because zklock\.on_lock_loss is "cancel"\.},
			"$label, deleted node: 08006 naming the lock");
		ok(time() - $t0 < 2, "$label, deleted node: the statement ended soon after the deletion");
		unlike($err, qr/57014|user request/, "$label, deleted node: no cancel error reaches the client");
		my ($out, $err2) = bg_query($s, q{SELECT 1});
		is($err2, '', "$label, deleted node: the next statement runs, the loss reported once");
		$s->quit;
	}

	# an expired session (the backend frozen past the session timeout)
	{
		my ($s, $pid) = holder('/report/exp', @$set);
		bg_begin($s, q{SELECT pg_sleep(60)}, 'exp_done');
		ok(wait_active($a, $pid), "$label, expiry: the statement runs");
		kill 'STOP', $pid;
		ok(wait_for(sub { queue_len($b, '/report/exp') eq '0' }, 30,
				'the frozen backend\'s node to go'),
			"$label, expiry: ZooKeeper expired the frozen backend's session");
		kill 'CONT', $pid;
		my (undef, $err) = bg_finish($s, 'exp_done');
		error_is($err, '08006',
			qr{(ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "/report/exp"|ZooKeeper lock "/report/exp" was lost\nDETAIL:  Its node "/zklock/report/exp/)},
			"$label, expiry: 08006 naming the lock");
		unlike($err, qr/57014|user request/, "$label, expiry: no cancel error reaches the client");
		$s->quit;
	}

	# a lease past its ttl
	{
		my $s = verbose_session($a);
		$s->query_safe("SET $_") for @$set;
		$s->query_safe(q{BEGIN});
		$s->query_safe(q{SELECT zk_lease_lock('/report/lease', '1 s')});
		my (undef, $err) = bg_query($s, q{SELECT pg_sleep(60)});
		error_is($err, '08006',
			qr{ZooKeeper lease on lock "/report/lease" ran out\nDETAIL:  Its ttl passed since this transaction took or renewed it\. The statement was stopped},
			"$label, lease ttl: 08006 naming the lease");
		unlike($err, qr/57014|user request/, "$label, lease ttl: no cancel error reaches the client");
		$s->query_safe(q{ROLLBACK});
		$s->quit;
	}
}

# --- 2. handlers inside the statement cannot keep a lost holder running
{
	my ($s, $pid, $node) = holder('/report/others');
	bg_begin($s,
		q{DO $$ BEGIN LOOP BEGIN PERFORM pg_sleep(0.1); EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$},
		'others_done');
	ok(wait_active($a, $pid), 'OTHERS: the loop runs');
	kazoo_delete($zk, $node);
	my (undef, $err) = bg_finish($s, 'others_done');
	error_is($err, '08006', qr{ZooKeeper lock "/report/others" was lost},
		'a loop catching OTHERS around pg_sleep(0.1) ends with 08006 at the top level');
	$s->quit;

	($s, $pid, $node) = holder('/report/caught');
	my $t0 = time();
	bg_begin($s,
		q{DO $$ BEGIN BEGIN PERFORM pg_sleep(60); EXCEPTION WHEN query_canceled THEN RAISE NOTICE 'caught'; END; PERFORM pg_sleep(0.2); END $$},
		'caught_done');
	ok(wait_active($a, $pid), 'query_canceled caught: the block runs');
	kazoo_delete($zk, $node);
	(undef, $err) = bg_finish($s, 'caught_done');
	like($err, qr/NOTICE:  00000: caught/, 'query_canceled caught: the handler saw the cancel');
	error_is($err, '08006', qr{ZooKeeper lock "/report/caught" was lost},
		'query_canceled caught: the statement still ends with 08006');
	ok(time() - $t0 < 30, 'query_canceled caught: well before its pg_sleep(60) would end');
	$s->quit;

	# the cancel caught, then a zklock call names the loss and a handler
	# catches that too: the statement still ends, naming the lock the
	# cancel was sent for
	($s, $pid, $node) = holder('/report/named');
	bg_begin($s,
		q{DO $$ BEGIN BEGIN PERFORM pg_sleep(60); EXCEPTION WHEN query_canceled THEN NULL; END; BEGIN PERFORM zk_lock('/report/named'); EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'named: %', SQLERRM; END; END $$},
		'named_done');
	ok(wait_active($a, $pid), 'loss named inside: the block runs');
	kazoo_delete($zk, $node);
	(undef, $err) = bg_finish($s, 'named_done');
	like($err, qr/NOTICE:  00000: named: ZooKeeper lock "\/report\/named" was lost/,
		'loss named inside: a zklock call of the statement named the loss, and a handler caught it');
	error_is($err, '08006', qr{ZooKeeper lock "/report/named" was lost\nDETAIL:  Its node "/zklock/report/named/[^"]+" no longer exists\. The statement was stopped},
		'loss named inside: the statement still ends with 08006 naming the lock');
	my (undef, $err2) = bg_query($s, q{SELECT 1});
	is($err2, '', 'loss named inside: the next statement runs');
	$s->quit;
}

# --- 3. a user's own cancel is PostgreSQL's, and keeps the locks
{
	my ($s, $pid, $node) = holder('/report/user');
	bg_begin($s, q{SELECT pg_sleep(60)}, 'user_done');
	ok(wait_active($a, $pid), 'user cancel: the statement runs');
	$a->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my (undef, $err) = bg_finish($s, 'user_done');
	error_is($err, '57014', qr{canceling statement due to user request},
		'pg_cancel_backend() of a holder: 57014 "user request"');
	is($s->query_safe(q{SELECT count(*) FROM zk_locks WHERE path = '/report/user'}), '1',
		'pg_cancel_backend(): the lock is still held');
	is(queue_len($b, '/report/user'), '1', 'pg_cancel_backend(): its node is still there');

	$s->query_safe(q{SET statement_timeout = '300ms'});
	my (undef, $err2) = bg_query($s, q{SELECT pg_sleep(60)});
	error_is($err2, '57014', qr{canceling statement due to statement timeout},
		'statement_timeout of a holder: 57014 "statement timeout"');
	$s->query_safe(q{RESET statement_timeout});
	my ($out, $err3) = bg_query($s, q{SELECT zk_unlock('/report/user')});
	is($out, 't', 'statement_timeout: the lock was still held, and is released');
	is($err3, '', 'and nothing was reported lost');
	$s->quit;
}

# --- 4. statement_timeout within a few ms of a loss
{
	my ($timeouts, $losses) = (0, 0);
	for my $offset_ms (-20, -5, 0, 5, 20)
	{
		my ($s, $pid, $node) = holder("/report/race$offset_ms");
		# the deleting client, connected before the statement starts
		my $py = "from kazoo.client import KazooClient\nimport sys, time\n"
		  . "c = KazooClient(hosts='$zk->{hosts}'); c.start(timeout=10)\n"
		  . "print('ready', flush=True)\n"
		  . "t = float(sys.stdin.readline())\n"
		  . "time.sleep(max(0, t - time.time()))\n"
		  . "c.delete('$node')\nprint(repr(time.time()), flush=True)\nc.stop()\n";
		my ($in, $out, $perr) = ('', '', '');
		my $h = IPC::Run::start([ kazoo_python(), '-c', $py ], \$in, \$out, \$perr);
		IPC::Run::pump($h) until $out =~ /ready/;
		$s->query_safe(q{SET statement_timeout = '1s'});
		my $t0 = time();
		bg_begin($s, q{SELECT pg_sleep(60)}, 'race_done');
		$in .= sprintf("%.6f\n", $t0 + 1.0 + $offset_ms / 1000);
		IPC::Run::finish($h);
		my (undef, $err) = bg_finish($s, 'race_done');
		ok(time() - $t0 < 10, "loss at timeout$offset_ms ms: the statement ended");
		unlike($err, qr/user request/, "loss at timeout$offset_ms ms: never \"user request\"");
		if ($err =~ /ERROR:  57014: canceling statement due to statement timeout/)
		{
			$timeouts++;
			# the loss is the next statement's to report, whatever it is
			ok(wait_for(sub { queue_len($b, "/report/race$offset_ms") eq '0' }, 10, 'the node to go'),
				"loss at timeout$offset_ms ms: the node is gone");
			usleep(300_000);
			my (undef, $err2) = bg_query($s, q{RESET statement_timeout});
			error_is($err2, '08006', qr{ZooKeeper lock "/report/race$offset_ms" was lost},
				"loss at timeout$offset_ms ms: the timeout won; the next statement names the loss");
		}
		else
		{
			$losses++;
			error_is($err, '08006', qr{ZooKeeper lock "/report/race$offset_ms" was lost},
				"loss at timeout$offset_ms ms: the loss won: 08006");
			$s->query_safe(q{RESET statement_timeout});
		}
		my (undef, $err3) = bg_query($s, q{SELECT 1});
		is($err3, '', "loss at timeout$offset_ms ms: reported once, the statement after runs");
		$s->quit;
	}
	note("statement_timeout against a loss: the timeout won $timeouts, the loss $losses times");
	figure(timeout_race_timeout_won => $timeouts, timeout_race_loss_won => $losses);
}

# --- 5. stress: losses at random moments of a stream of short statements
{
	my $rounds = $ENV{ZKLOCK_LOSS_STRESS_ROUNDS} // 8;
	my ($statements, $lost, $reported, $late, $others) = (0, 0, 0, 0, 0);
	my $s = verbose_session($a);
	$s->query_safe(q{SET log_min_messages = panic});
	for my $round (1 .. $rounds)
	{
		my @paths = map { "/stress/r$round-$_" } 1 .. 2;
		$s->query_safe("SELECT zk_lock('$_')") for @paths;
		my @nodes = map { held_node($s, $_) } @paths;
		# delete each node at a random moment of the next 0.3 to 1.8 s
		my $py = "from kazoo.client import KazooClient\nimport random, time\n"
		  . "c = KazooClient(hosts='$zk->{hosts}'); c.start(timeout=10)\n"
		  . "t0 = time.time()\nprint('ready', flush=True)\n"
		  . "at = sorted((t0 + 0.3 + random.random() * 1.5, n) for n in "
		  . "[" . join(', ', map { "'$_'" } @nodes) . "])\n"
		  . "for t, n in at:\n"
		  . "    time.sleep(max(0, t - time.time()))\n"
		  . "    c.delete(n)\n"
		  . "    print(repr(time.time()), flush=True)\n"
		  . "c.stop()\n";
		my ($in, $out, $perr) = ('', '', '');
		my $h = IPC::Run::start([ kazoo_python(), '-c', $py ], \$in, \$out, \$perr);
		IPC::Run::pump($h) until $out =~ /ready/;
		my $t_end = time() + 2.5;
		my @runs;				# [start, end, stderr]
		while (time() < $t_end)
		{
			my $sql = rand() < 0.5
			  ? 'SELECT 1'
			  : sprintf('SELECT pg_sleep(%.3f)', 0.001 + rand(0.03));
			my $t0 = time();
			my (undef, $err) = bg_query($s, $sql);
			push @runs, [ $t0, time(), $err ];
			$statements++;
			usleep(int(rand(20_000)));	# an idle gap
		}
		IPC::Run::finish($h);
		my @deleted = grep { /^\d/ } split /\n/, $out;
		$lost += @deleted;
		# the 08006 reports, and how many locks each named
		my $named = 0;
		for my $r (@runs)
		{
			next if $r->[2] eq '';
			if ($r->[2] =~ /ERROR:  08006: ZooKeeper lock "\/stress\/r$round-\d" was lost/)
			{
				$named += $r->[2] =~ /(\d+) locks of this backend were lost/ ? $1 : 1;
			}
			else
			{
				$others++;
				diag("round $round: unexpected error: $r->[2]");
			}
		}
		$reported += $named;
		# each deletion: no statement that started more than a moment after
		# it ran to its end while that loss was still unreported
		for my $i (0 .. $#deleted)
		{
			my $reports_so_far = 0;
			for my $r (@runs)
			{
				if ($r->[2] =~ /08006/)
				{
					$reports_so_far += $r->[2] =~ /(\d+) locks of this backend/ ? $1 : 1;
					last if $reports_so_far > $i;
					next;
				}
				if ($r->[0] > $deleted[$i] + 1.0)
				{
					$late++;
					diag(sprintf("round %d: a statement started %.3f s after deletion %d ended without its ERROR",
						$round, $r->[0] - $deleted[$i], $i + 1));
					last;
				}
			}
		}
		is($s->query_safe(q{SELECT count(*) FROM zk_locks}), '0',
			"stress round $round: no lost lock is still listed");
	}
	note("stress: $statements statements, $lost losses, $reported reported");
	cmp_ok($statements, '>=', 200, "stress: $statements statements ran");
	is($lost, 2 * $rounds, "stress: $lost held nodes were deleted");
	is($reported, $lost, 'stress: every loss was reported exactly once');
	is($late, 0, 'stress: no statement that ran once a loss was known completed without its ERROR');
	is($others, 0, 'stress: no other error (no false cancel, no 57014)');
	figure(stress_statements => $statements, stress_losses => $lost,
		stress_reported => $reported, stress_false_cancels => $others);
	$s->quit;
}

done_testing();
