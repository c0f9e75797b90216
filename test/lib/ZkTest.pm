# ZkTest.pm: helpers for zklock's TAP tests.
#
# Starts ZooKeeper servers (through test/zkctl, so that there is one
# implementation of "start a server" for every suite) and PostgreSQL
# clusters (PostgreSQL::Test::Cluster) configured to use them.  Every
# ZooKeeper server started here is stopped, by pid, when the test ends.
package ZkTest;

use strict;
use warnings;

use Cwd qw(abs_path);
use Exporter 'import';
use File::Basename qw(dirname);
use File::Path ();
use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(zk_standalone zk_ensemble zkctl zk_4lw zk_watches zk_mntr
  pg_with_zklock wait_for elapsed_since bg_begin bg_done bg_finish
  bg_query kazoo_python kazoo_run zk_proxy zk_proxy_cmd zk_proxy_stop);

my $zkctl = abs_path(dirname(__FILE__) . '/../zkctl');
my @started;

# The servers started here write their transaction logs without fsync
# (test/zkctl's ZKCTL_FORCE_SYNC): a test kills processes, never the
# machine, so nothing written is lost, and a lock cycle takes a third of
# the time.  A test can set ZKCTL_FORCE_SYNC=yes before starting a server.
$ENV{ZKCTL_FORCE_SYNC} //= 'no';

# initdb once per run of the suite.  PostgreSQL 15's Cluster->init runs
# initdb for every node (about 3 s each, some 100 nodes in a suite run);
# a node initialised without extra initdb options gets a copy of a
# template made by the first such initdb in tmp_check (shared by every test
# of the run), as PostgreSQL 17's test framework does (its
# INITDB_TEMPLATE).  The copies share a system identifier, which nothing
# here compares.  Cluster->init calls initdb through
# PostgreSQL::Test::Utils::system_or_bail, fully qualified; any other
# command goes through unchanged.
{
	no warnings 'redefine';
	my $system_or_bail = \&PostgreSQL::Test::Utils::system_or_bail;
	*PostgreSQL::Test::Utils::system_or_bail = sub {
		my @cmd = @_;
		return $system_or_bail->(@cmd)
		  unless @cmd == 6
		  && $cmd[0] eq 'initdb'
		  && $cmd[1] eq '-D'
		  && "@cmd[3 .. 5]" eq '-A trust -N'
		  && !-e $cmd[2];
		my $template = "$PostgreSQL::Test::Utils::tmp_check/initdb_template";
		if (!-f "$template/PG_VERSION")
		{
			my $tmp = "$template.$$";
			$system_or_bail->('initdb', '-D', $tmp, '-A', 'trust', '-N');
			# a test running beside this one may have made it meanwhile
			if (!rename($tmp, $template))
			{
				die "rename $tmp: $!" unless -f "$template/PG_VERSION";
				File::Path::rmtree($tmp);
			}
		}
		return $system_or_bail->('cp', '-a', $template, $cmd[2]);
	};
}

# A background psql session's timer (PostgreSQL::Test::Utils'
# timeout_default) bounds each query, not the session's whole life: a
# session opened at a test's start and used at its end would otherwise die
# once the test runs longer than the timer, as a loaded machine makes it.
{
	no warnings 'redefine';
	my $background_psql = \&PostgreSQL::Test::Cluster::background_psql;
	*PostgreSQL::Test::Cluster::background_psql = sub {
		my $s = $background_psql->(@_);
		$s->set_query_timer_restart();
		return $s;
	};
}

# zkctl(ARGS...): run test/zkctl, die on failure, return its output.
sub zkctl
{
	my @args = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $zkctl, @args ], '>', \$out, '2>', \$err)
	  or die "zkctl @args failed: $err";
	return $out;
}

# repo_root(): the repository under test, for tests that read its files:
# ZKLOCK_SRCDIR (test/run-tests.sh sets it), else the parent of test/.
# Bails out if neither holds zklock.control.
sub repo_root
{
	my $root = $ENV{ZKLOCK_SRCDIR};
	$root = abs_path(dirname(__FILE__) . '/../..')
	  unless defined $root && -f "$root/zklock.control";
	BAIL_OUT('repository not found (set ZKLOCK_SRCDIR)')
	  unless defined $root && -f "$root/zklock.control";
	return $root;
}
push @EXPORT, qw(repo_root);

# A free port p such that p+100 and p+200 (quorum and election ports of
# an ensemble member) are free too.
sub _free_port_triple
{
	for (1 .. 50)
	{
		my $p = PostgreSQL::Test::Cluster::get_free_port();
		next if $p > 65000;
		next
		  unless PostgreSQL::Test::Cluster::can_bind('127.0.0.1', $p + 100)
		  && PostgreSQL::Test::Cluster::can_bind('127.0.0.1', $p + 200);
		return $p;
	}
	die "no free port triple";
}

# zk_standalone(%opts): start a standalone server; returns a hash with
# dir, ports (one) and hosts (the zklock.hosts string).  Options: cfg
# (extra zoo.cfg lines), jvm (extra JVM options), no_ttl (without
# ZooKeeper's extended types, so without TTL nodes).
sub zk_standalone
{
	my (%opts) = @_;
	my ($dir, $port) = _zk_start('start', 'zk', %opts);
	return { dir => $dir, ports => [$port], hosts => "127.0.0.1:$port" };
}

# _zk_start(CMD, NAME, %opts): test/zkctl CMD (start, or secure) of one
# server in tmp_check/NAME_PORT, PORT free (with PORT+100 and PORT+200),
# with the options of zk_standalone; the server is stopped when the test
# ends.  Returns (dir, port).
sub _zk_start
{
	my ($cmd, $name, %opts) = @_;
	my $port = _free_port_triple();
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/${name}_$port";
	local $ENV{ZKCTL_EXTRA_CFG} = $opts{cfg} // '';
	local $ENV{ZKCTL_JVM_OPTS} = $opts{jvm} // '';
	local $ENV{ZKCTL_NO_TTL} = $opts{no_ttl} ? 1 : '';
	zkctl($cmd, $dir, $port);
	push @started, $dir;
	return ($dir, $port);
}

# zk_secure(%opts): start a standalone server whose only client port is a
# TLS one (test/zkctl secure: no plaintext port at all); returns a hash
# with dir, ports (the secure port) and tls (the directory of the test CA
# ca.pem, the server's certificate, and client.pem/client.key signed by
# the CA); no hosts: a plaintext client must go through a TLS tunnel.
# Options as for zk_standalone (cfg lines override the TLS settings, e.g.
# ssl.clientAuth=need).
push @EXPORT, qw(zk_secure);
sub zk_secure
{
	my (%opts) = @_;
	my ($dir, $port) = _zk_start('secure', 'zk_tls', %opts);
	return { dir => $dir, ports => [$port], tls => "$dir/tls" };
}

# zk_ensemble(): start a three-server ensemble.
sub zk_ensemble
{
	my @ports = map { _free_port_triple() } 1 .. 3;
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/zk_ens_$ports[0]";
	zkctl('ensemble', $dir, join(',', @ports));
	push @started, $dir;
	return {
		dir => $dir,
		ports => \@ports,
		hosts => join(',', map { "127.0.0.1:$_" } @ports)
	};
}

# zk_secure_ensemble(): start a three-server ensemble whose members' only
# client ports are TLS ones (test/zkctl ensemble-secure); returns a hash
# with dir, ports (the secure ports) and tls (the test CA and client
# certificate, as zk_secure's); no hosts: clients go through TLS tunnels.
push @EXPORT, qw(zk_secure_ensemble);
sub zk_secure_ensemble
{
	my @ports = map { _free_port_triple() } 1 .. 3;
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/zk_tls_ens_$ports[0]";
	zkctl('ensemble-secure', $dir, join(',', @ports));
	push @started, $dir;
	return { dir => $dir, ports => \@ports, tls => "$dir/tls" };
}

# zk_proxy(ZK): start the fault-injecting proxy (python/zkproxy.py) in
# front of the first server of ZK; returns a hash whose "port" the clients
# connect to.  Its commands (see zkproxy.py) go through zk_proxy_cmd; what
# it reports (fired rules) accumulates in ->{out}.
sub zk_proxy
{
	my ($zk) = @_;
	my $p = { in => '', out => '', err => '' };
	$p->{h} = IPC::Run::start([ 'python3', 'python/zkproxy.py', $zk->{ports}[0] ],
		'<', \$p->{in}, '>', \$p->{out}, '2>', \$p->{err});
	$p->{timer} = IPC::Run::timer(30);
	pump_until($p->{h}, $p->{timer}, \$p->{out}, qr/listening \d+\n/);
	($p->{port}) = $p->{out} =~ /listening (\d+)/;
	$p->{out} = '';
	return $p;
}

# zk_proxy_cmd(PROXY, CMD): send one command and wait for its "ok".
sub zk_proxy_cmd
{
	my ($p, $cmd) = @_;
	$p->{in} .= "$cmd\n";
	$p->{timer}->start(30);
	pump_until($p->{h}, $p->{timer}, \$p->{out}, qr/^ok$/m);
	$p->{out} =~ s/^ok\n//m;
	return;
}

# zk_proxy_stop(PROXY)
sub zk_proxy_stop
{
	my ($p) = @_;
	$p->{in} .= "quit\n";
	$p->{h}->finish;
	return;
}

# zk_4lw(PORT, CMD): a four-letter word's answer.
sub zk_4lw
{
	my ($port, $cmd) = @_;
	return zkctl('4lw', $port, $cmd);
}

# zk_watches(ZK): the data and exists watches on ZK's first server, as a
# hash reference: znode path -> number of sessions that watch it (wchp;
# ZooKeeper 3.8 lists no child watches there).
sub zk_watches
{
	my ($zk) = @_;
	my (%n, $cur);
	for my $line (split /\n/, zk_4lw($zk->{ports}[0], 'wchp'))
	{
		if ($line =~ m{^(/\S*)}) { $cur = $1; }
		elsif ($line =~ /^\s+0x/ && defined $cur) { $n{$cur}++; }
	}
	return \%n;
}

# zk_watches_by_others(ZK): as zk_watches, but without the watch of the
# session that owns an ephemeral node (owners from dump): a backend watches
# the nodes it holds for their loss (client/loss_watch.c), and a test of
# who waits for whom counts the other sessions only.  Standalone servers
# (dump lists the owners on the leader only).
push @EXPORT, qw(zk_watches_by_others);
sub zk_watches_by_others
{
	my ($zk) = @_;
	my (%owner, %n, $cur, $session, $in_ephemerals);
	for my $line (split /\n/, zk_4lw($zk->{ports}[0], 'dump'))
	{
		if ($line =~ /^Sessions with Ephemerals/) { $in_ephemerals = 1; next; }
		if ($line =~ /^Connections dump/) { $in_ephemerals = 0; next; }
		next unless $in_ephemerals;
		if ($line =~ /^(0x[0-9a-f]+):/) { $session = $1; }
		elsif ($line =~ m{^\s+(/\S*)} && defined $session) { $owner{$1} = $session; }
	}
	for my $line (split /\n/, zk_4lw($zk->{ports}[0], 'wchp'))
	{
		if ($line =~ m{^(/\S*)}) { $cur = $1; }
		elsif ($line =~ /^\s+(0x[0-9a-f]+)/ && defined $cur)
		{
			$n{$cur}++ unless defined $owner{$cur} && $owner{$cur} eq $1;
		}
	}
	return \%n;
}

# zk_mntr(PORT): mntr as a hash.
sub zk_mntr
{
	my ($port) = @_;
	my %m;
	for my $line (split /\n/, zk_4lw($port, 'mntr'))
	{
		my ($k, $v) = split /\t/, $line, 2;
		$m{$k} = $v if defined $v;
	}
	return \%m;
}

# pg_with_zklock(NAME, ZK, EXTRA_CONF): a started cluster using ZK, with
# the extension created in database postgres.
sub pg_with_zklock
{
	my ($name, $zk, $extra) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		"zklock.hosts = '$zk->{hosts}'\n"
		  . "cluster_name = '$name'\n"
		  . "log_line_prefix = '%m [%p] %q%a '\n"
		  . ($extra // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION zklock');
	return $node;
}

# wait_for(CODE, SECONDS, WHAT): poll CODE every 20 ms until it returns
# true; fail the test (and return false) after SECONDS.
sub wait_for
{
	my ($code, $secs, $what) = @_;
	my $deadline = time() + $secs;
	while (time() < $deadline)
	{
		return 1 if $code->();
		usleep(20_000);
	}
	diag("timed out after ${secs}s waiting for $what");
	return 0;
}

# bg_begin(SESSION, SQL, MARKER): start SQL in a background psql session
# without waiting for it; MARKER is printed when it has completed.  (What
# psql printed after "zkt_started" in the same read, up to MARKER itself
# for SQL that ended at once, stays in the session's stdout:
# query_until would discard it, and bg_done and bg_finish would then wait
# for a MARKER that came and went.)
sub bg_begin
{
	my ($s, $sql, $marker) = @_;
	my $got = $s->query_until(qr/zkt_started\n/,
		"\\echo zkt_started\n$sql;\n\\echo $marker\n");
	$got =~ s/\A.*?zkt_started\n//s;
	$s->{stdout} = $got . $s->{stdout};
	return;
}

# bg_done(SESSION, MARKER): has the SQL started by bg_begin completed?
sub bg_done
{
	my ($s, $marker) = @_;
	$s->{run}->pump_nb();
	return $s->{stdout} =~ /$marker/;
}

# bg_finish(SESSION, MARKER): wait for it; returns (stdout, stderr) and
# clears both.
sub bg_finish
{
	my ($s, $marker) = @_;
	pump_until($s->{run}, $s->{timeout}, \$s->{stdout}, qr/$marker/);
	my ($out, $err) = ($s->{stdout}, $s->{stderr});
	$out =~ s/\n?$marker\n//;
	$s->{stdout} = '';
	$s->{stderr} = '';
	return ($out, $err);
}

# bg_query(SESSION, SQL): run SQL in a background session (started with
# on_error_stop => 0) that may fail; returns (stdout, stderr) and clears
# stderr, which BackgroundPsql would otherwise keep and query_safe refuse.
sub bg_query
{
	my ($s, $sql) = @_;
	my ($out) = $s->query($sql);
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return ($out, $err);
}

# bg_send(SESSION, SQL, CB): send SQL (one or more statements) to a
# background psql session started with on_error_stop => 0, without
# waiting; bg_poll(SESSION) later calls CB with (stdout, stderr) once all
# of it has completed.  One SQL at a time per session.
my $bg_seq = 0;
push @EXPORT, qw(bg_send bg_poll);
sub bg_send
{
	my ($s, $sql, $cb) = @_;
	die 'bg_send: the session is busy' if $s->{zkt_pending};
	my $marker = '__zkt_sent_' . ++$bg_seq;
	$s->{zkt_pending} = { marker => $marker, cb => $cb };
	$s->{stdin} .= "$sql;\n\\echo $marker\n";
	$s->{run}->pump_nb();
	return;
}

# bg_poll(SESSION): has the SQL of bg_send completed?  If so, clears
# stdout and stderr, calls its CB and returns true.
sub bg_poll
{
	my ($s) = @_;
	my $p = $s->{zkt_pending} or return 0;
	$s->{run}->pump_nb();
	return 0 unless $s->{stdout} =~ /^(.*?)\n?$p->{marker}\n/s;
	my $out = $1;
	my $err = $s->{stderr};
	$s->{stdout} = '';
	$s->{stderr} = '';
	$s->{zkt_pending} = undef;
	$p->{cb}->($out, $err);
	return 1;
}

# kazoo_python(): a python3 that can import kazoo (Debian's python3-kazoo
# is installed for /usr/bin/python3, which may not be first in PATH)
sub kazoo_python
{
	return _kazoo_python() // 'python3';
}

# kazoo_run(ZK, CODE, AUTH): run the Python statements CODE with "c", a
# KazooClient connected to ZK (the hash zk_standalone returns), and with
# digest credentials AUTH ("user:password") if given; returns what CODE
# printed, without the final newline; dies if the script fails.
sub kazoo_run
{
	my ($zk, $code, $auth) = @_;
	(my $body = $code) =~ s/^/    /mg;
	my $py =
	    "from kazoo.client import KazooClient\n"
	  . "c = KazooClient(hosts='$zk->{hosts}'"
	  . ($auth ? ", auth_data=[('digest', '$auth')]" : '')
	  . "); c.start(timeout=10)\n"
	  . "try:\n$body\nfinally:\n    c.stop()\n";
	my ($out, $err) = ('', '');
	IPC::Run::run([ kazoo_python(), '-c', $py ], '>', \$out, '2>', \$err)
	  or die "kazoo script failed: $err";
	chomp $out;
	return $out;
}

# --- errors by SQLSTATE ------------------------------------------------------
#
# psql prints an error's SQLSTATE only with VERBOSITY verbose: the line is
# then "ERROR:  40P01: deadlock detected", its DETAIL and HINT lines follow
# unchanged, and a "LOCATION:" line ends the report.  A session whose errors
# are checked by code is made verbose with \set VERBOSITY verbose (a
# background_psql session: query_safe('\set VERBOSITY verbose'); a psql or
# safe_psql call: the same line in front of its SQL).

# --- a holder and its loss -------------------------------------------------

push @EXPORT, qw(held_node wait_watched wait_active kazoo_delete);

# held_node(SESSION, PATH): the node of SESSION's hold on PATH (zk_locks)
sub held_node
{
	my ($s, $path) = @_;
	return $s->query_safe(
		"SELECT znode FROM zk_locks WHERE path = '$path' LIMIT 1");
}

# wait_watched(ZK, NODE): wait until NODE is watched (its holder watches a
# node once it has held it 250 ms: then its deletion is notified at once,
# and a release of it is one the holder could mistake for a loss)
sub wait_watched
{
	my ($zk, $node) = @_;
	return wait_for(sub { (zk_watches($zk)->{$node} // 0) >= 1 }, 10,
		"$node to be watched");
}

# wait_active(NODE, PID): wait until backend PID of server NODE runs a
# statement (pg_stat_activity)
sub wait_active
{
	my ($node, $pid) = @_;
	return wait_for(
		sub {
			$node->safe_psql('postgres',
				"SELECT state FROM pg_stat_activity WHERE pid = $pid") eq 'active';
		},
		10, "backend $pid to run its statement");
}

# kazoo_delete(ZK, NODE): delete NODE with kazoo; returns the time the
# deletion was confirmed (its holder cannot have learnt of it before)
sub kazoo_delete
{
	my ($zk, $node) = @_;
	return kazoo_run($zk,
		"import time\nc.delete('$node')\nprint(repr(time.time()))") + 0;
}

push @EXPORT, qw(error_is warning_is verbose_session);

# verbose_session(NODE, DB): a background_psql session on database DB
# (default postgres) of NODE that goes on after an error (on_error_stop
# => 0), with VERBOSITY verbose, so that its errors are checked by code.
sub verbose_session
{
	my ($node, $db) = @_;
	my $s = $node->background_psql($db // 'postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');
	return $s;
}

# error_is(STDERR, SQLSTATE, MESSAGE, NAME): test that STDERR holds
# "ERROR:  SQLSTATE: " followed by what the regex MESSAGE matches (which may
# go on into the DETAIL and HINT lines after it); on failure, diag()s
# STDERR.
sub error_is
{
	my ($stderr, $code, $message, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return _report_is('ERROR', $stderr, $code, $message, $name);
}

# warning_is(STDERR, SQLSTATE, MESSAGE, NAME): the same for a WARNING.
sub warning_is
{
	my ($stderr, $code, $message, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return _report_is('WARNING', $stderr, $code, $message, $name);
}

sub _report_is
{
	my ($level, $stderr, $code, $message, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	die "\"$code\" is not a SQLSTATE" unless $code =~ /^[0-9A-Z]{5}$/;
	$stderr //= '';
	my $ok = ok($stderr =~ /\b$level:  $code: $message/, $name);
	diag("expected $level $code matching $message in psql's stderr:\n"
		  . ($stderr eq '' ? '(empty)' : $stderr)
		  . ($stderr =~ /\b$level:  (?![0-9A-Z]{5}: )/
			? "\n(no SQLSTATE there: is the session's VERBOSITY verbose?)"
			: ''))
	  unless $ok;
	return $ok;
}

# error_code(STDERR): the SQLSTATE of the first ERROR in psql's (verbose)
# STDERR; '' if there is no ERROR, 'none' if it shows no SQLSTATE
push @EXPORT, qw(error_code);
sub error_code
{
	my ($stderr) = @_;
	return '' unless defined $stderr && $stderr =~ /\bERROR:/;
	return $stderr =~ /\bERROR:  ([0-9A-Z]{5}): / ? $1 : 'none';
}

sub elapsed_since
{
	my ($t0) = @_;
	return time() - $t0;
}

# figure(NAME => VALUE, ...): report a figure of the run, one line
# "# figure: NAME=VALUE" each, the form test/reliability.sh collects into
# RELIABILITY.md's tables.  NAME is lower case letters, digits and
# underscores, unique within the test file; VALUE is one line (a number, or
# a few words).  A figure is a measurement, not a check: what must hold is
# asserted beside it.
push @EXPORT, qw(figure);
sub figure
{
	my (@pairs) = @_;
	die "figure: NAME => VALUE pairs expected" if @pairs % 2;
	while (my ($name, $value) = splice(@pairs, 0, 2))
	{
		die "figure: bad name \"$name\"" unless $name =~ /^[a-z][a-z0-9_]*$/;
		$value //= '(none)';
		die "figure $name: the value has a line break" if $value =~ /\n/;
		note("figure: $name=$value");
	}
	return;
}

END
{
	# stop every ZooKeeper server this test started, whatever happened
	my $rc = $?;
	system($zkctl, 'stop', $_) for @started;
	$? = $rc;
}

# --- zk_lock_queue(PATH) as seen from a server ------------------------------
#
# NODE is the PostgreSQL::Test::Cluster that asks, in database postgres.

push @EXPORT, qw(queue_len wait_queue_len wait_queues_empty queue_rows
  queue_is foreign_holder_is);

# queue_len(NODE, PATH): how many nodes the queue of PATH holds.
sub queue_len
{
	my ($node, $path) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM zk_lock_queue('$path')");
}

# wait_queue_len(NODE, PATH, N, SECS, WHAT): wait_for (at most SECS) the
# queue of PATH to hold N nodes.
sub wait_queue_len
{
	my ($node, $path, $n, $secs, $what) = @_;
	return wait_for(sub { queue_len($node, $path) eq $n }, $secs, $what);
}

# published_waits(ZK): how many deadlock detection records (published
# waits) are under the records' parent /zklock.waits; none once every wait
# past deadlock_timeout has ended
push @EXPORT, qw(published_waits);
sub published_waits
{
	my ($zk) = @_;
	return kazoo_run($zk,
		"print(len(c.get_children('/zklock.waits')) if c.exists('/zklock.waits') else 0)");
}

# deadlock_checked(NODE, PID, OFFSET): wait (at most 10 s) for NODE's log,
# after byte OFFSET, to say that backend PID still waits for a ZooKeeper
# lock: log_lock_waits' message (log_lock_waits = on), logged once its
# deadlock check has run and found no deadlock
push @EXPORT, qw(deadlock_checked);
sub deadlock_checked
{
	my ($node, $pid, $offset) = @_;
	return wait_for(
		sub {
			substr(PostgreSQL::Test::Utils::slurp_file($node->logfile), $offset)
			  =~ /process $pid still waiting for ZooKeeper/;
		},
		10, "backend $pid's deadlock check");
}

# wait_queues_empty(NODE, PATHS, SECS, WHAT): wait_for (at most SECS) the
# queues of every path in the array PATHS to be empty.
sub wait_queues_empty
{
	my ($node, $paths, $secs, $what) = @_;
	my $list = join(', ', map { "'$_'" } @$paths);
	return wait_for(
		sub {
			$node->safe_psql('postgres',
				"SELECT count(*) FROM unnest(ARRAY[$list]) AS p, LATERAL zk_lock_queue(p)"
			) eq '0';
		},
		$secs, $what);
}

# queue_rows(NODE, PATH, ROW): the queue of PATH as one string: the SQL
# expression ROW (over zk_lock_queue's columns) for each node, in queue
# order, joined by commas; '' for an empty queue.  (A boolean reads
# "true" in ROW built with ||, "t" in one built with format().)
sub queue_rows
{
	my ($node, $path, $row) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(string_agg($row, ',' ORDER BY position), '')
		 FROM zk_lock_queue('$path')");
}

# queue_is(NODE, PATH, EXPECTED, NAME): test that the queue of PATH, as
# "position:mode:granted:owner,..." (granted t or f, owner the cluster_name
# for zklock's nodes and the raw data for anybody else's), becomes EXPECTED
# within 10 s (a release by another session, or a backend's exit, reaches
# the server a moment after the SQL that caused it has returned).
sub queue_is
{
	my ($node, $path, $expected, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $row = q{format('%s:%s:%s:%s', position, mode, granted,
	                   coalesce(cluster_name, data))};
	my $got;
	wait_for(sub { ($got = queue_rows($node, $path, $row)) eq $expected },
		10, "queue $expected");
	return is($got, $expected, $name);
}

# foreign_holder_is(NODE, PATH, NODE_RE, DATA, LEFT, SHOWS): the queue of
# PATH is one granted exclusive node of another client program, whose data
# is DATA (test LEFT: what zklock tried meanwhile left nothing behind), and
# zk_lock_queue shows that node, whose name matches the regex NODE_RE, as
# an exclusive holder (test SHOWS).
sub foreign_holder_is
{
	my ($node, $path, $node_re, $data, $left, $shows) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	queue_is($node, $path, "1:exclusive:t:$data", $left);
	return is(
		$node->safe_psql('postgres',
			"SELECT znode ~ '$node_re', mode, granted, data
			 FROM zk_lock_queue('$path')"),
		"t|exclusive|t|$data", $shows);
}

# --- churn: several workers at once, their outcomes counted -----------------
#
# A churn test creates, in database postgres of every server it uses, a
# procedure churn(secs float8) that takes and releases for SECS seconds, and
# a table outcome whose column "what" records how each attempt ended:
# 'granted', 'try failed', or an error's SQLSTATE and message.

push @EXPORT, qw(churn_run);

# churn_run(NODES, SECS): run CALL churn(SECS) in one background session per
# entry of the array NODES (a node listed three times gets three workers),
# all at once; wait for every worker and test that none printed an error
# ("churn: every worker ran to the end").  Returns the outcomes summed over
# the servers in NODES, as a hash of "what" to its count.
sub churn_run
{
	my ($nodes, $secs) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my @workers;
	for my $node (@$nodes)
	{
		my $s = $node->background_psql('postgres',
			on_error_stop => 0,
			timeout => $secs + 120);
		bg_begin($s, "CALL churn($secs)", 'churn_done');
		push @workers, $s;
	}
	my $errors = '';
	for my $s (@workers)
	{
		my (undef, $err) = bg_finish($s, 'churn_done');
		$errors .= $err;
		$s->quit;
	}
	is($errors, '', 'churn: every worker ran to the end');
	my (%outcomes, %seen);
	for my $node (grep { !$seen{ $_->name }++ } @$nodes)
	{
		for my $row (split /\n/,
			$node->safe_psql('postgres',
				'SELECT what, count(*) FROM outcome GROUP BY 1'))
		{
			my ($what, $n) = split /\|/, $row;
			$outcomes{$what} += $n;
		}
	}
	return %outcomes;
}

# --- command-driven client programs (test/java, test/python) ---------------
#
# A client program reads commands on stdin, one per line, and answers each
# with one line on stdout (see test/java/CuratorClient.java and
# test/python/kazoo_client.py).  These helpers drive one with IPC::Run,
# every wait bounded; every client still running when the test ends is
# killed, by its own harness.

push @EXPORT, qw(client_start client_send client_next client_poll client_ask
  client_queues
  client_alive client_stop curator_missing curator_client kazoo_missing
  kazoo_client);

my @clients;

# client_start(NAME, CMD_ARRAYREF, SECS): start a client and wait (at most
# SECS, default 60) for its first line, which it prints once connected;
# that line is in $client->{ready} (undef if none came).
sub client_start
{
	my ($name, $cmd, $secs) = @_;
	my $c = { name => $name, in => '', out => '', err => '' };
	$c->{h} = IPC::Run::start($cmd, '<', \$c->{in}, '>', \$c->{out},
		'2>', \$c->{err});
	push @clients, $c;
	$c->{ready} = client_next($c, $secs // 60);
	note("$name: " . ($c->{ready} // '(no ready line)'));
	return $c;
}

# client_send(C, LINE): send one command without waiting for an answer.
sub client_send
{
	my ($c, $line) = @_;
	$c->{in} .= "$line\n";
	eval { $c->{h}->pump_nb; 1 };
	return;
}

# client_next(C, SECS): the next line the client prints, waiting at most
# SECS (default 30) for it; undef on timeout or if the client has exited.
# After a timeout the conversation is out of step (a late answer would be
# taken for the next command's), so every later call returns undef at once.
sub client_next
{
	my ($c, $secs) = @_;
	$secs //= 30;
	my $deadline = time() + $secs;
	for (;;)
	{
		if ($c->{out} =~ s/\A([^\n]*)\n//)
		{
			return $1;
		}
		if ($c->{stuck})
		{
			diag("$c->{name}: gave up on it after an earlier timeout");
			return undef;
		}
		my $alive = eval { $c->{h}->pumpable && $c->{h}->pump_nb; 1 }
		  && $c->{h}->pumpable;
		next if $c->{out} =~ /\n/;
		if (!$alive || time() >= $deadline)
		{
			diag("$c->{name}: "
				  . ($alive ? "no answer within ${secs}s" : 'exited')
				  . "; stderr: $c->{err}");
			$c->{stuck} = 1;
			return undef;
		}
		usleep(5_000);
	}
}

# client_poll(C): the next line if the client has printed one, else undef;
# does not wait.
sub client_poll
{
	my ($c) = @_;
	eval { $c->{h}->pump_nb if $c->{h}->pumpable; 1 };
	return $c->{out} =~ s/\A([^\n]*)\n// ? $1 : undef;
}

# client_ask(C, LINE, SECS): send LINE and return its answer, skipping the
# "acquiring ..." line an acquire prints before it waits.
sub client_ask
{
	my ($c, $line, $secs) = @_;
	client_send($c, $line);
	for (;;)
	{
		my $reply = client_next($c, $secs);
		return $reply unless defined $reply && $reply =~ /^acquiring /;
	}
}

# client_queues(C, CMD, NODE, PATH, N, ASKS, QUEUED): send the acquire
# CMD and leave it waiting; test ASKS: the client answers "acquiring CMD";
# test QUEUED: the queue of PATH, seen from NODE, then holds N nodes (within
# 15 s), so its node is in the queue, not merely on its way.
sub client_queues
{
	my ($c, $cmd, $node, $path, $n, $asks, $queued) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	client_send($c, $cmd);
	is(client_next($c), "acquiring $cmd", $asks);
	return ok(wait_queue_len($node, $path, $n, 15, "$c->{name}: $cmd queued"),
		$queued);
}

# client_alive(C): is the client process still running?
sub client_alive
{
	my ($c) = @_;
	eval { $c->{h}->pump_nb if $c->{h}->pumpable; 1 };
	return $c->{h}->pumpable ? 1 : 0;
}

# client_stop(C, SIGNAL): send SIGNAL (default KILL) and reap the client.
sub client_stop
{
	my ($c, $sig) = @_;
	$sig //= 'KILL';
	eval { $c->{h}->signal($sig) if $c->{h}->pumpable; 1 };
	eval { $c->{h}->kill_kill(grace => 5); 1 };
	return;
}

# The Curator client (test/java/CuratorClient.java), compiled once per test
# into tmp_check with Debian's jars.
my @curator_jars = map { "/usr/share/java/$_.jar" }
  qw(curator-recipes curator-framework curator-client zookeeper
  zookeeper-jute guava slf4j-api);
my $curator_cp;

# curator_missing(): why the Curator client cannot run here, or undef.
sub curator_missing
{
	for my $jar (@curator_jars)
	{
		return "$jar is missing (libcurator-recipes-java)" unless -f $jar;
	}
	return 'javac is missing (default-jdk-headless)'
	  unless grep { -x "$_/javac" } split /:/, $ENV{PATH};
	return;
}

# curator_client(NAME, ZK, LOCK_NODE, SESSION_MS): start a CuratorClient on
# LOCK_NODE (the znode, e.g. /zklock/a/b).
sub curator_client
{
	my ($name, $zk, $node, $session_ms) = @_;
	if (!defined $curator_cp)
	{
		my $classes = "$PostgreSQL::Test::Utils::tmp_check/curator_classes";
		my $class = "$classes/CuratorClient.class";
		# slf4j-nop silences Curator's and ZooKeeper's logging
		my @jars = (@curator_jars,
			grep { -f } '/usr/share/java/slf4j-nop.jar');
		my ($out, $err) = ('', '');
		# compiled once per run of the suite (tmp_check is shared by its
		# tests), again whenever the source is newer
		IPC::Run::run(
			[
				'javac', '-d', $classes, '-cp', join(':', @jars),
				'java/CuratorClient.java'
			],
			'>', \$out, '2>', \$err,
			IPC::Run::timeout(120))
		  or die "javac failed: $out$err"
		  unless -f $class && -M $class < -M 'java/CuratorClient.java';
		$curator_cp = join(':', @jars, $classes);
	}
	return client_start(
		$name,
		[
			'java', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC',
			'-Xmx128m', '-cp', $curator_cp, 'CuratorClient',
			$zk->{hosts}, $node, $session_ms // 10000
		]);
}

# A python3 that has kazoo: Debian's, whatever else PATH offers first.
sub _kazoo_python
{
	for my $py ('/usr/bin/python3', 'python3')
	{
		my ($out, $err) = ('', '');
		return $py
		  if eval {
			IPC::Run::run([ $py, '-c', 'import kazoo.recipe.lock' ],
				'>', \$out, '2>', \$err, IPC::Run::timeout(60));
		  };
	}
	return;
}
my $kazoo_python;

# kazoo_missing(): why the kazoo client cannot run here, or undef.
sub kazoo_missing
{
	$kazoo_python //= _kazoo_python();
	return $kazoo_python ? undef : 'no python3 with kazoo (python3-kazoo)';
}

# kazoo_client(NAME, ZK, LOCK_NODE, SESSION_SECONDS, IDENTIFIER): start a
# kazoo_client.py on LOCK_NODE; IDENTIFIER is the data of its nodes.
sub kazoo_client
{
	my ($name, $zk, $node, $session_s, $ident) = @_;
	$kazoo_python //= _kazoo_python() // 'python3';
	return client_start(
		$name,
		[
			$kazoo_python, 'python/kazoo_client.py', $zk->{hosts}, $node,
			$session_s // 10, $ident // $name
		]);
}

END
{
	# kill every client still running (runs before the END above, which
	# stops the ZooKeeper servers)
	my $rc = $?;
	for my $c (@clients)
	{
		eval { $c->{h}->kill_kill(grace => 1); 1 };
	}
	$? = $rc;
}


# --- PgBouncer in front of a cluster ----------------------------------------
#
# pgbouncer_start(NAME, NODE, %opts): start a PgBouncer (Debian's
# /usr/sbin/pgbouncer, in the foreground under IPC::Run) on 127.0.0.1 and a
# free port, in front of database postgres of NODE (reached through its
# Unix socket), and wait until it accepts connections.  Options:
#   pool_mode			session (default) or transaction
#   default_pool_size	1 by default: every client gets the same server
#   max_client_conn		100 by default
#   server_reset_query	'DISCARD ALL' by default ('' for none)
#   server_reset_query_always	0 by default (PgBouncer runs the reset query
#						in session mode only, unless this is 1)
#   extra				more lines for the [pgbouncer] section
# Its ini file, auth file, log and pid file are in tmp_check/pgbouncer_NAME.
#
# The object returned is a PostgreSQL::Test::Cluster as far as psql is
# concerned (host 127.0.0.1, the bouncer's port), so that its psql,
# safe_psql and background_psql methods connect through the bouncer; it
# has nothing else of a cluster.  Its own methods: stop, ini, log_contents
# (the log file's contents), admin(SQL) (a command on PgBouncer's admin console, e.g.
# SHOW POOLS, its rows as arrays of hashes keyed by column name).  Every
# bouncer still running when the test ends is stopped.
push @EXPORT, qw(pgbouncer_start);

my @bouncers;

sub pgbouncer_start
{
	my ($name, $node, %opts) = @_;
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/pgbouncer_$name";
	mkdir $dir or die "mkdir $dir: $!" unless -d $dir;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $user = getpwuid($<);
	my $reset = $opts{server_reset_query} // 'DISCARD ALL';
	my %cfg = (
		listen_addr => '127.0.0.1',
		listen_port => $port,
		unix_socket_dir => '',
		auth_type => 'trust',
		auth_file => "$dir/userlist.txt",
		admin_users => $user,
		pool_mode => $opts{pool_mode} // 'session',
		default_pool_size => $opts{default_pool_size} // 1,
		max_client_conn => $opts{max_client_conn} // 100,
		server_reset_query => $reset,
		server_reset_query_always => $opts{server_reset_query_always} // 0,
		ignore_startup_parameters => 'extra_float_digits',
		logfile => "$dir/pgbouncer.log",
		pidfile => "$dir/pgbouncer.pid",
	);
	PostgreSQL::Test::Utils::append_to_file("$dir/userlist.txt",
		qq{"$user" ""\n}) unless -f "$dir/userlist.txt";
	my $ini = "[databases]\n"
	  . 'postgres = host=' . $node->host . ' port=' . $node->port
	  . " dbname=postgres\n\n[pgbouncer]\n"
	  . join('', map { "$_ = $cfg{$_}\n" } sort keys %cfg)
	  . ($opts{extra} // '');
	open my $fh, '>', "$dir/pgbouncer.ini" or die "$dir/pgbouncer.ini: $!";
	print $fh $ini;
	close $fh;

	my $b = bless {
		_name => "pgbouncer_$name",
		_host => '127.0.0.1',
		_port => $port,
		dir => $dir,
		out => '',
		err => '',
	}, 'ZkTest::PgBouncer';
	$b->{h} = IPC::Run::start([ 'pgbouncer', "$dir/pgbouncer.ini" ],
		'<', \undef, '>', \$b->{out}, '2>', \$b->{err});
	push @bouncers, $b;

	# accepting connections: a TCP connect succeeds
	my $deadline = time() + 30;
	for (;;)
	{
		my $sock = IO::Socket::INET->new(
			PeerAddr => '127.0.0.1',
			PeerPort => $port,
			Proto => 'tcp',
			Timeout => 1);
		if ($sock)
		{
			close $sock;
			last;
		}
		$b->{h}->pump_nb if $b->{h}->pumpable;
		die "pgbouncer $name exited: $b->{out}$b->{err}" . $b->log_contents
		  unless $b->{h}->pumpable;
		die "pgbouncer $name is not listening after 30 s: " . $b->log_contents
		  if time() > $deadline;
		usleep(20_000);
	}
	note("pgbouncer $name on 127.0.0.1:$port, pool_mode $cfg{pool_mode}, "
		  . "default_pool_size $cfg{default_pool_size}, "
		  . "server_reset_query '$reset', server_reset_query_always "
		  . "$cfg{server_reset_query_always}");
	return $b;
}

END
{
	my $rc = $?;
	$_->stop for @bouncers;
	$? = $rc;
}

package ZkTest::PgBouncer;

use strict;
use warnings;

# psql, safe_psql and background_psql of PostgreSQL::Test::Cluster use only
# host, port, connstr, _get_env and installed_command, which work for this
# object; nothing else of a cluster does.
our @ISA = ('PostgreSQL::Test::Cluster');

sub ini { return "$_[0]{dir}/pgbouncer.ini"; }

sub log_contents
{
	my ($self) = @_;
	return PostgreSQL::Test::Utils::slurp_file("$self->{dir}/pgbouncer.log")
	  if -f "$self->{dir}/pgbouncer.log";
	return '';
}

# admin(SQL): run a command on the admin console; its rows, as hashes.
sub admin
{
	my ($self, $sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-X', '-A', '-F', "\t", '-P', 'footer=off',
			'-h', '127.0.0.1', '-p', $self->{_port}, '-d', 'pgbouncer',
			'-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout(30))
	  or die "pgbouncer admin '$sql' failed: $err";
	my ($head, @lines) = split /\n/, $out;
	my @cols = split /\t/, $head // '';
	my @rows;
	for my $line (@lines)
	{
		my @v = split /\t/, $line, -1;
		push @rows, { map { $cols[$_] => $v[$_] } 0 .. $#cols };
	}
	return \@rows;
}

# stop(): SIGTERM (PgBouncer's immediate shutdown), then SIGKILL if it
# lingers.
sub stop
{
	my ($self) = @_;
	return unless $self->{h};
	eval { $self->{h}->signal('TERM') if $self->{h}->pumpable; 1 };
	eval { $self->{h}->kill_kill(grace => 5); 1 };
	delete $self->{h};
	return;
}

# the object is never a real cluster: make the cluster methods that would
# act on a data directory fail loudly
for my $m (qw(start restart reload init teardown_node clean_node))
{
	no strict 'refs';
	*{$m} = sub { die "ZkTest::PgBouncer has no method $m" };
}

package ZkTest;

1;
