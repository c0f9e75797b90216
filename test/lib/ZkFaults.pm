# ZkFaults.pm: network faults between ZooKeeper servers, for zklock's TAP
# tests.
#
# A partitionable ensemble is a 3-server ensemble (test/zkctl
# ensemble-peers) whose members reach each other only through
# test/python/tcpproxy.py: member I names member J by the port of a
# forwarder "qI>J" (quorum) and "eI>J" (election), while every member binds
# its own real ports and clients reach them directly.  (An election
# connection announces its initiator's election address, and the server
# it reaches may call back there: the proxy rewrites that address to its
# own forwarder, so that no election connection goes around it.)  Cutting every
# forwarder to and from member M isolates M from the other two (the
# minority side) and leaves its client connections alone.  Everything
# started here (proxies, servers) is stopped when the test ends.
#
# A fake clock is a PostgreSQL server whose postmaster runs with Debian's
# libfaketime preloaded (so every backend has it too), reading the offset
# of its wall clock from a file at every clock call
# (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1): fake_clock_set rewrites
# the file, and the server's wall clock (gettimeofday, time,
# clock_gettime(CLOCK_REALTIME)) jumps at once.  Its monotonic clocks are
# left alone (FAKETIME_DONT_FAKE_MONOTONIC=1), as when an operator or NTP
# steps the clock of a real machine.  (libfaketime 0.9.10 has one side
# effect there: a pthread_cond_timedwait on a condition variable of the
# monotonic clock returns at once, so a thread that sleeps on one, such as
# zklock's loss watchdog, polls instead of sleeping; it still reads the
# real monotonic clock.)
package ZkFaults;

use strict;
use warnings;

use Cwd ();
use Exporter 'import';
use File::Basename ();
use File::Temp ();
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

our @EXPORT = qw(tcp_proxy_start tcp_proxy_cmd zk_partitionable_ensemble
  zk_isolate zk_heal zk_member_mode zk_wait_mode zk_leader_of
  zk_member_of_server zk_member_hosts zk_ephemerals_under zkctl_bg
  zk_healthy pg_with_fake_clock fake_clock_set);

my @ensembles;    # dirs to stop at the end
my @proxies;

# tcp_proxy_start(NAME => UPSTREAM_PORT, ...): start python/tcpproxy.py
# with these forwarders; returns a hash whose ->{port}{NAME} is the port
# each listens on.
sub tcp_proxy_start
{
	my (%map) = @_;
	my $p = { in => '', out => '', err => '' };
	$p->{h} = IPC::Run::start(
		[ 'python3', 'python/tcpproxy.py', map { "$_=$map{$_}" } sort keys %map ],
		'<', \$p->{in}, '>', \$p->{out}, '2>', \$p->{err});
	push @proxies, $p;
	$p->{timer} = IPC::Run::timer(30);
	pump_until($p->{h}, $p->{timer}, \$p->{out}, qr/^ready\n/m)
	  or die "tcpproxy did not start: $p->{err}";
	$p->{port}{$1} = $2 while $p->{out} =~ /^listening (\S+) (\d+)$/mg;
	$p->{out} = '';
	return $p;
}

# tcp_proxy_cmd(PROXY, CMD): send one command, wait (at most 30 s) for its
# "ok"; returns what it printed before the "ok".
sub tcp_proxy_cmd
{
	my ($p, $cmd) = @_;
	$p->{in} .= "$cmd\n";
	$p->{timer}->start(30);
	pump_until($p->{h}, $p->{timer}, \$p->{out}, qr/^(ok|error.*)$/m)
	  or die "tcpproxy: no answer to '$cmd': $p->{err}";
	die "tcpproxy: $1 (to '$cmd')" if $p->{out} =~ /^(error.*)$/m;
	$p->{out} =~ s/\A(.*?)^ok\n//ms;
	return $1;
}

# zk_partitionable_ensemble(%opts): start a 3-server ensemble whose members
# talk to each other through one tcpproxy.py (forwarders qI>J and eI>J);
# returns a hash like ZkTest's zk_ensemble (dir, ports, hosts) plus proxy.
# Options: cfg (extra zoo.cfg lines), jvm (extra JVM options).
sub zk_partitionable_ensemble
{
	my (%opts) = @_;
	# client ports chosen as ZkTest chooses them for its ensembles (with
	# P+100 and P+200 free for the quorum and election ports)
	my @ports = map { ZkTest::_free_port_triple() } 1 .. 3;
	my %map;
	for my $i (1 .. 3)
	{
		for my $j (grep { $_ != $i } 1 .. 3)
		{
			$map{"q$i>$j"} = $ports[ $j - 1 ] + 100;
			# the election forwarder rewrites the address a connection
			# announces, so that the server called back calls back through
			# the proxy (see tcpproxy.py)
			$map{"e$i>$j"} = ($ports[ $j - 1 ] + 200) . "\@e$j>$i";
		}
	}
	my $proxy = tcp_proxy_start(%map);
	my @peers;
	for my $i (1 .. 3)
	{
		for my $j (grep { $_ != $i } 1 .. 3)
		{
			push @peers, "$i>$j=" . $proxy->{port}{"q$i>$j"} . ':'
			  . $proxy->{port}{"e$i>$j"};
		}
	}
	my $peers = join(',', @peers);
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/zk_part_$ports[0]";
	local $ENV{ZKCTL_EXTRA_CFG} = $opts{cfg} // '';
	local $ENV{ZKCTL_JVM_OPTS} = $opts{jvm} // '';
	push @ensembles, $dir;
	zkctl('ensemble-peers', $dir, join(',', @ports), $peers);
	return {
		dir => $dir,
		ports => \@ports,
		hosts => join(',', map { "127.0.0.1:$_" } @ports),
		proxy => $proxy,
	};
}

# the forwarders that carry member M's traffic, both ways
sub _links_of
{
	my ($m) = @_;
	return map { ("q$m>$_", "e$m>$_", "q$_>$m", "e$_>$m") }
	  grep { $_ != $m } 1 .. 3;
}

# zk_nemesis_ensemble(): the ZooKeeper side of the nemesis tests: a
# partitionable ensemble (syncLimit 5 ticks, 1 s; elections whose
# notifications come at least every second) and one python/zkproxy.py in
# front of each member.  Returns (ensemble, the proxies (an array ref), and
# a hash whose hosts reach the members only through the proxies, for
# pg_with_zklock: a server whose connections the proxies can drop).
push @EXPORT, qw(zk_nemesis_ensemble);
sub zk_nemesis_ensemble
{
	my $ens = zk_partitionable_ensemble(
		cfg => "syncLimit=5\n",
		jvm => '-Dzookeeper.fastleader.maxNotificationInterval=1000');
	my @zkp = map { zk_proxy({ ports => [$_] }) } @{ $ens->{ports} };
	return ($ens, \@zkp, { hosts => join(',', map { "127.0.0.1:$_->{port}" } @zkp) });
}

# zk_isolate(ENS, M): cut member M off from the other two (every byte
# between them is dropped; connections stay open).
sub zk_isolate
{
	my ($ens, $m) = @_;
	tcp_proxy_cmd($ens->{proxy}, 'cut ' . join(' ', _links_of($m)));
	return;
}

# zk_heal(ENS): every forwarder forwards again (the connections that were
# cut are closed, so the members open new ones).
sub zk_heal
{
	my ($ens) = @_;
	tcp_proxy_cmd($ens->{proxy}, 'heal *');
	return;
}

# zk_member_mode(ENS, I): "leader", "follower", "not serving" (the server
# answers but serves no requests: no quorum), or "down" (no answer).
sub zk_member_mode
{
	my ($ens, $i) = @_;
	my $srvr = zk_4lw($ens->{ports}[ $i - 1 ], 'srvr');
	return $1 if $srvr =~ /^Mode: (\w+)/m;
	return 'not serving' if $srvr =~ /not currently serving requests/;
	return 'down';
}

# zk_wait_mode(ENS, I, REGEX, SECS): wait (at most SECS) for member I's
# mode to match REGEX; returns the last mode seen if it does, else undef.
sub zk_wait_mode
{
	my ($ens, $i, $re, $secs) = @_;
	my $mode;
	wait_for(sub { ($mode = zk_member_mode($ens, $i)) =~ $re },
		$secs, "member $i in mode $re")
	  or return undef;
	return $mode;
}

# zk_leader_of(ENS, MEMBERS): the member among MEMBERS (default all) whose
# srvr says leader, or undef.
sub zk_leader_of
{
	my ($ens, @members) = @_;
	@members = (1 .. 3) unless @members;
	for my $i (@members)
	{
		return $i if zk_member_mode($ens, $i) eq 'leader';
	}
	return undef;
}

# zk_member_of_server(ENS, SERVER): the member whose client port SERVER
# ("host:port", as zk_session() shows it) names, or undef.
sub zk_member_of_server
{
	my ($ens, $server) = @_;
	my ($port) = ($server // '') =~ /:(\d+)$/ or return undef;
	for my $i (1 .. 3)
	{
		return $i if $ens->{ports}[ $i - 1 ] == $port;
	}
	return undef;
}

# zkctl_bg(ARGS...): run test/zkctl in the background (a restart waits for
# the member to serve); returns the IPC::Run harness, whose ->pumpable is
# false once it has ended, and whose result ->finish gives.
my $zkctl_path = Cwd::abs_path(File::Basename::dirname(__FILE__) . '/../zkctl');
sub zkctl_bg
{
	my (@args) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start([ $zkctl_path, @args ], '<', \undef, '>', \$out,
		'2>', \$err);
}

# zk_healthy(ENS): every member serves, one of them as the leader
sub zk_healthy
{
	my ($ens) = @_;
	my @modes = map { zk_member_mode($ens, $_) } 1 .. 3;
	return (grep { $_ eq 'leader' } @modes) == 1
	  && (grep { $_ eq 'follower' } @modes) == 2;
}

# zk_member_hosts(ENS, MEMBERS...): a zklock.hosts string naming only
# those members
sub zk_member_hosts
{
	my ($ens, @members) = @_;
	return join(',', map { "127.0.0.1:$ens->{ports}[$_ - 1]" } @members);
}

# zk_ephemerals_under(ZK, PATH): every ephemeral node under PATH (read
# with kazoo), one "path owner-session" per line, '' if none; dies if
# kazoo cannot run.  (Every node whose stat names an owner, see
# zk_nodes_under.)
sub zk_ephemerals_under
{
	my ($zk, $path) = @_;
	return join("\n",
		map { "$_->[0] $_->[1]" } grep { $_->[1] ne '0' } _zk_walk($zk, $path));
}

# zk_nodes_under(ZK, PATH): every node under PATH (not PATH itself), one
# "path kind" per line, depth first, '' if none; kind is persistent,
# container, ttl or ephemeral, by the ephemeralOwner of its stat
# (ZooKeeper marks a container with 0x8000000000000000 and a TTL node with
# 0xff in the top byte on the server; an ephemeral node's is its session).
# ZooKeeper 3.8.0 shows clients ephemeralOwner 0 for a container, as for a
# persistent node (seen with kazoo and the C client on a container that the
# reaper then deleted), so a container is listed as persistent.
push @EXPORT, qw(zk_nodes_under);
sub zk_nodes_under
{
	my ($zk, $path) = @_;
	my @lines;
	for my $n (_zk_walk($zk, $path))
	{
		my $o = $n->[1];
		my $kind =
		    $o eq '0' ? 'persistent'
		  : $o eq '8000000000000000' ? 'container'
		  : $o =~ /^ff[0-9a-f]{14}$/ ? 'ttl'
		  : 'ephemeral';
		push @lines, "$n->[0] $kind";
	}
	return join("\n", @lines);
}

# _zk_walk(ZK, PATH): every node under PATH, as [path, its ephemeralOwner
# in hex], read with kazoo
sub _zk_walk
{
	my ($zk, $path) = @_;
	my $out = kazoo_run($zk, <<"EOF");
out = []
def walk(p):
    try:
        kids = c.get_children(p)
    except Exception:
        return
    for k in sorted(kids):
        q = p.rstrip('/') + '/' + k
        try:
            data, st = c.get(q)
        except Exception:
            continue
        out.append('%s %x' % (q, st.ephemeralOwner & 0xffffffffffffffff))
        walk(q)
walk('$path')
print('\\n'.join(out))
EOF
	return map { [ split / / ] } grep { $_ ne '' } split /\n/, $out;
}

# --- allocation and entropy failures (lib/fault_preload.c) -----------------
#
# pg_with_faults(NAME, ZK, EXTRA_CONF): as ZkTest's pg_with_zklock, but the
# server runs with lib/fault_preload.c as LD_PRELOAD (compiled once per
# test into tmp_check); returns (node, fault directory).  fault_set(DIR,
# WHAT, LINE) makes the calls WHAT names fail from then on ("strdup": a
# strdup made by zklock of a string containing LINE; "rand": OpenSSL's
# RAND_bytes of 16 bytes), fault_clear(DIR, WHAT) ends that.
push @EXPORT, qw(pg_with_faults fault_set fault_clear);
my $fault_so;
sub pg_with_faults
{
	my ($name, $zk, $extra) = @_;
	my $tmp = $PostgreSQL::Test::Utils::tmp_check;
	if (!defined $fault_so)
	{
		my $src = File::Basename::dirname(__FILE__) . '/fault_preload.c';
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'cc', '-shared', '-fPIC', '-O2', '-o',
				"$tmp/fault_preload.so", $src, '-ldl' ],
			'>', \$out, '2>', \$err)
		  or die "could not compile $src: $out$err";
		$fault_so = "$tmp/fault_preload.so";
	}
	my $dir = "$tmp/faults_$name";
	mkdir $dir or die "mkdir $dir: $!";
	local $ENV{LD_PRELOAD} = $fault_so;
	local $ENV{ZKFAULT_DIR} = $dir;
	return (pg_with_zklock($name, $zk, $extra), $dir);
}

sub fault_set
{
	my ($dir, $what, $line) = @_;
	open my $fh, '>', "$dir/$what.new" or die "$dir/$what.new: $!";
	print $fh ($line // 1), "\n";
	close $fh;
	rename "$dir/$what.new", "$dir/$what" or die "rename to $dir/$what: $!";
	return;
}

sub fault_clear
{
	my ($dir, $what) = @_;
	unlink "$dir/$what";
	return;
}

# pg_with_fake_clock(NAME, ZK, EXTRA_CONF, %opts): pg_with_zklock's
# cluster, its postmaster started with a fake clock (see the top of this
# file), at the real time to begin with.  Option monotonic => 1 fakes the
# monotonic clocks too (to show what a test sees when code reads a clock
# that jumps).  Bails out if libfaketime is not installed.
my %fake_clock_dir;
sub pg_with_fake_clock
{
	my ($name, $zk, $extra, %opts) = @_;
	my ($lib) = glob('/usr/lib/*/faketime/libfaketime.so.1');
	BAIL_OUT('libfaketime is not installed (test/install-deps.sh)')
	  unless defined $lib && -f $lib;
	# (tmp_check is shared by the test files of one run)
	my $dir = File::Temp::tempdir("fake_clock_${name}_XXXX",
		DIR => $PostgreSQL::Test::Utils::tmp_check);
	fault_set($dir, 'offset', '+0');
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = "$dir/offset";
	local $ENV{FAKETIME_NO_CACHE} = 1;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = $opts{monotonic} ? 0 : 1;
	my $node = pg_with_zklock($name, $zk, $extra);
	$fake_clock_dir{ $node->name } = $dir;
	return $node;
}

# fake_clock_set(NODE, SECONDS): NODE's wall clock reads the real time plus
# SECONDS (negative: behind), from now on, in every process of the server
# (the offset file is replaced whole, as fault_set does: a process never
# reads half of it).
sub fake_clock_set
{
	my ($node, $secs) = @_;
	my $dir = $fake_clock_dir{ $node->name }
	  // die 'fake_clock_set: ' . $node->name . ' has no fake clock';
	fault_set($dir, 'offset', sprintf('%s%d', $secs < 0 ? '-' : '+', abs($secs)));
	return;
}

END
{
	my $rc = $?;
	for my $p (@proxies)
	{
		eval { $p->{h}->kill_kill(grace => 1); 1 };
	}
	for my $dir (@ensembles)
	{
		eval { zkctl('stop', $dir); 1 };
	}
	$? = $rc;
}

1;
