# TLS to ZooKeeper through a local stunnel tunnel (see doc/tls.md).
#
# The client library zklock links (Debian's libzookeeper_mt) has no TLS, so
# the route tested here is: a ZooKeeper whose only client port is its
# secureClientPort, and on the database host a stunnel client tunnel that
# accepts plaintext on loopback, verifies the server's certificate against
# the test CA and carries the session over TLS; zklock.hosts names the
# tunnel.
#
# - Two PostgreSQL servers, each through its own tunnel, lock, exclude
#   each other, unlock, get increasing fencing tokens; zk_session() shows
#   the session connected to the tunnel.
# - On the wire between tunnel and ZooKeeper there is a TLS handshake and
#   not one byte of the lock paths, while a capture on the plaintext side
#   of the same tunnel does show the path (so the capture can see it).
# - zklock.hosts naming the secure port directly (plaintext) gets 08001
#   within zklock.connect_timeout, and so does a tunnel that trusts another
#   CA or expects another host name: the verification is real.  None of
#   the refused attempts leaves a node.
# - With ssl.clientAuth=need (mutual TLS), a tunnel presenting a client
#   certificate signed by the server's CA works; one without a certificate,
#   or with a certificate of another CA, gets 08001.
# - The tunnel stopped under held locks and started again within the
#   session timeout: the backend reconnects through it to the same session,
#   keeps its locks (another server cannot take them meanwhile) and
#   commits; stopped for longer, the session expires, the lock goes to
#   another server, and once the tunnel is back the backend's next call
#   fails with 08006 naming the lost lock, the one after works.
# - A three-server ensemble whose members have only TLS client ports, one
#   tunnel per member, zklock.hosts naming the three tunnels: when the
#   member the holder's session is on is killed, the session moves to
#   another member through its tunnel, same session, same lock and token;
#   another server cannot take the lock meanwhile, and takes it once it is
#   released, with a greater token.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

my ($stunnel) = grep { -x } map { ("$_/stunnel4", "$_/stunnel") }
  split(/:/, $ENV{PATH}), '/usr/bin';
die "stunnel is not installed (Debian package stunnel4)" unless $stunnel;

my $tmp = $PostgreSQL::Test::Utils::tmp_check;
my @helpers;    # stunnel and capture proxy processes, killed at the end

# stunnel_client(NAME, PORT, %opts): a stunnel client tunnel accepting
# plaintext on a free loopback port and connecting with TLS to PORT.
# Options: ca (CAfile; the tunnel verifies the chain, verifyChain = yes),
# host (checkHost, default localhost), cert and key (a client certificate),
# accept (the port to accept on: a tunnel started again in place of one).
# Returns a hash with port, hosts (for zklock.hosts) and log (what stunnel
# printed so far; see tunnel_log).
sub stunnel_client
{
	my ($name, $port, %o) = @_;
	my $accept = $o{accept} // PostgreSQL::Test::Cluster::get_free_port();
	my $conf = "$tmp/stunnel_$name.conf";
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh "foreground = yes\npid =\ndebug = notice\n\n[zk]\nclient = yes\n"
	  . "accept = 127.0.0.1:$accept\nconnect = 127.0.0.1:$port\n"
	  . "CAfile = $o{ca}\nverifyChain = yes\n"
	  . 'checkHost = ' . ($o{host} // 'localhost') . "\n"
	  . ($o{cert} ? "cert = $o{cert}\nkey = $o{key}\n" : '');
	close $fh;
	my $t = { name => $name, port => $accept, hosts => "127.0.0.1:$accept",
		log => '' };
	$t->{h} = IPC::Run::start([ $stunnel, $conf ], '<', '/dev/null', '>&', \$t->{log});
	push @helpers, $t->{h};
	pump_until($t->{h}, IPC::Run::timer(30), \$t->{log}, qr/Configuration successful/)
	  or die "stunnel $name did not start: $t->{log}";
	return $t;
}

# tunnel_log(TUNNEL): what its stunnel has logged up to now.
sub tunnel_log
{
	my ($t) = @_;
	eval { $t->{h}->pump_nb; 1 };
	return $t->{log};
}

# capture_proxy(NAME, PORT): a proxy (python/capture_proxy.py) in front of
# PORT recording every byte it forwards; returns a hash with port, hosts
# and file (the recording).
sub capture_proxy
{
	my ($name, $port) = @_;
	my $c = { file => "$tmp/wire_$name.bin", out => '' };
	$c->{h} = IPC::Run::start([ 'python3', 'python/capture_proxy.py', $port, $c->{file} ],
		'<', '/dev/null', '>', \$c->{out});
	push @helpers, $c->{h};
	pump_until($c->{h}, IPC::Run::timer(30), \$c->{out}, qr/listening \d+\n/)
	  or die "capture proxy $name did not start";
	($c->{port}) = $c->{out} =~ /listening (\d+)/;
	$c->{hosts} = "127.0.0.1:$c->{port}";
	return $c;
}

sub slurp_bytes
{
	my ($file) = @_;
	open my $fh, '<:raw', $file or return '';
	local $/;
	my $bytes = <$fh>;
	return $bytes // '';
}

# --- ZooKeeper with only a TLS client port; two tunnels, two servers
my $zk = zk_secure();
my $secure = $zk->{ports}[0];
like(zkctl('4lw-tls', $secure, 'conf'), qr/^clientPort=-1\nsecureClientPort=$secure$/m,
	'ZooKeeper has a secure client port and no plaintext one');
is(zkctl('4lw', $secure, 'srvr'), '',
	'the secure port does not answer a plaintext four-letter word');

# tunnel A reaches ZooKeeper through a capture of the encrypted hop
my $wire_tls = capture_proxy('tls', $secure);
my $ta = stunnel_client('a', $wire_tls->{port}, ca => "$zk->{tls}/ca.pem");
my $tb = stunnel_client('b', $secure, ca => "$zk->{tls}/ca.pem");

my $pa = pg_with_zklock('a', { hosts => $ta->{hosts} });
my $pb = pg_with_zklock('b', { hosts => $tb->{hosts} });

my $s1 = $pa->background_psql('postgres');
my $token1 = $s1->query_safe(q{SELECT zk_lock('/tls/job')});
like($token1, qr/^[1-9][0-9]*$/, 'a locks through its tunnel and gets a fencing token');
is( $s1->query_safe(q{SELECT state || ' ' || server FROM zk_session()}),
	"connected $ta->{hosts}",
	'zk_session() shows the session connected, to the tunnel');
is($s1->query_safe(q{SELECT fencing_token FROM zk_locks WHERE path = '/tls/job'}),
	$token1, 'zk_locks shows the same fencing token');
is($pa->safe_psql('postgres', q{SELECT zk_try_lock('/tls/job')}),
	'f', 'a second session of a cannot take it');
is($pb->safe_psql('postgres', q{SELECT zk_try_lock('/tls/job', 200)}),
	'f', 'b, through the other tunnel, cannot take it either');
queue_is($pb, '/tls/job', '1:exclusive:t:a', 'b sees a holding it');
is($s1->query_safe(q{SELECT zk_unlock('/tls/job')}), 't', 'a unlocks');
my $token2 = $pb->safe_psql('postgres',
	q{SELECT zk_lock('/tls/job') || ' ' || zk_unlock('/tls/job')});
like($token2, qr/^\d+ true$/, 'now b takes and releases it');
($token2) = $token2 =~ /^(\d+)/;
cmp_ok($token2, '>', $token1, "b's fencing token is larger than a's");

# --- what crosses the wire: a capture on the plaintext side of tunnel A
# (between PostgreSQL and stunnel) and one on the encrypted side
my $wire_plain = capture_proxy('plain', $ta->{port});
my $secret_path = '/tls/wire-' . int(rand(1e9));
$s1->query_safe("SET zklock.hosts = '$wire_plain->{hosts}'");
is( $s1->query_safe("SELECT zk_lock('$secret_path') > 0, zk_unlock('$secret_path')"),
	't|t', 'a session routed through both captures locks and unlocks');
my $plain = slurp_bytes($wire_plain->{file});
my $tls = slurp_bytes($wire_tls->{file});
ok(index($plain, $secret_path) >= 0,
	'the plaintext side of the tunnel carries the lock path in clear');
cmp_ok(length($tls), '>', 2000, 'the encrypted side carried the traffic');
like($tls, qr/\A\x16\x03[\x01-\x04]/, 'and it starts with a TLS handshake record');
ok(index($tls, $secret_path) < 0 && index($tls, '/zklock') < 0,
	'and shows neither that lock path nor zklock.root');
$s1->quit;

# --- what is refused: 08001 within zklock.connect_timeout, nothing left
my $connect_timeout = 1.5;
sub refused
{
	my ($hosts, $what) = @_;
	my ($out, $err) = ('', '');
	my $t0 = time();
	$pa->psql(
		'postgres',
		"\\set VERBOSITY verbose\n"
		  . "SET zklock.connect_timeout = '${connect_timeout}s';\n"
		  . "SET zklock.hosts = '$hosts';\n"
		  . "SELECT zk_try_lock('/tls/refused')",
		stdout => \$out,
		stderr => \$err);
	my $secs = time() - $t0;
	error_is($err, '08001', qr/could not connect to ZooKeeper at "\Q$hosts\E"/,
		"$what: 08001");
	ok($secs < $connect_timeout + 2,
		sprintf('%s: within zklock.connect_timeout (%.1f s)', $what, $secs));
	return;
}

refused("127.0.0.1:$secure", 'plaintext straight to the secure port');

my $other_ca = "$tmp/other_ca";
mkdir $other_ca;
my $openssl_out = '';
IPC::Run::run(
	[
		'openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
		'-days', '2', '-subj', '/CN=another CA',
		'-keyout', "$other_ca/ca.key", '-out', "$other_ca/ca.pem"
	],
	'<', '/dev/null', '>&', \$openssl_out)
  or die "openssl failed: $openssl_out";
my $tw = stunnel_client('wrong_ca', $secure, ca => "$other_ca/ca.pem");
refused($tw->{hosts}, 'a tunnel trusting another CA');
like(tunnel_log($tw), qr/certificate verify failed/,
	'its stunnel refused the server certificate');

my $th = stunnel_client('wrong_host', $secure, ca => "$zk->{tls}/ca.pem",
	host => 'zookeeper.invalid');
refused($th->{hosts}, 'a tunnel expecting another host name');
like(tunnel_log($th), qr/CERT: Subject checks failed/,
	'its stunnel refused the server certificate for its name');

is( kazoo_run($tb, q{print(c.exists('/zklock/tls/refused'))}),
	'None', 'no refused attempt created a node');

# --- mutual TLS: ZooKeeper requires a client certificate from its CA
my $zkm = zk_secure(cfg => 'ssl.clientAuth=need');
my $mport = $zkm->{ports}[0];
my $tm = stunnel_client('mtls', $mport, ca => "$zkm->{tls}/ca.pem",
	cert => "$zkm->{tls}/client.pem", key => "$zkm->{tls}/client.key");
my $sm = $pa->background_psql('postgres');
$sm->query_safe("SET zklock.hosts = '$tm->{hosts}'");
like($sm->query_safe(q{SELECT zk_lock('/tls/mtls') || ' ' || zk_unlock('/tls/mtls')}),
	qr/^\d+ true$/, 'with a client certificate of its CA, mutual TLS works');
$sm->quit;

my $tn = stunnel_client('mtls_nocert', $mport, ca => "$zkm->{tls}/ca.pem");
refused($tn->{hosts}, 'mutual TLS, a tunnel without a client certificate');
like(tunnel_log($tn), qr/alert (bad certificate|certificate required)/,
	'ZooKeeper refused the handshake');
my $tf = stunnel_client('mtls_foreign', $mport, ca => "$zkm->{tls}/ca.pem",
	cert => "$zk->{tls}/client.pem", key => "$zk->{tls}/client.key");
refused($tf->{hosts}, 'mutual TLS, a client certificate of another CA');
like(tunnel_log($tf), qr/alert (bad certificate|certificate unknown|unknown ca)/,
	'ZooKeeper refused the handshake');

# --- the tunnel restarts under held locks: within the session timeout the
#     session comes back through the new tunnel with its locks; past it,
#     the locks are lost and the next statement says so (08006)
{
	my $tr = stunnel_client('restart', $secure, ca => "$zk->{tls}/ca.pem");
	my $s = $pa->background_psql('postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');
	$s->query_safe("SET zklock.hosts = '$tr->{hosts}'");
	$s->query_safe(q{SET zklock.session_timeout = '6s'});
	$s->query_safe(q{SELECT zk_lock('/tls/restart')});
	my $sid = $s->query_safe('SELECT session_id FROM zk_session()');
	$s->query_safe('BEGIN');
	$s->query_safe(q{SELECT zk_xact_lock('/tls/restart_x')});
	my $state = sub { $s->query_safe('SELECT state FROM zk_session()') };

	$tr->{h}->kill_kill(grace => 1);
	ok(wait_for(sub { $state->() eq 'connecting' }, 10, 'the session notices'),
		'the tunnel is stopped: the backend loses its connection');
	is($pb->safe_psql('postgres', q{SELECT zk_try_lock('/tls/restart')}), 'f',
		'while it is down, the lock stays held: the session lives on in ZooKeeper');
	$tr = stunnel_client('restart', $secure, ca => "$zk->{tls}/ca.pem",
		accept => $tr->{port});
	ok(wait_for(sub { $state->() eq 'connected' }, 10, 'reconnected'),
		'a new tunnel on the same port: the backend reconnects through it');
	is($s->query_safe('SELECT session_id FROM zk_session()'), $sid,
		'to the same session');
	is($s->query_safe(q{SELECT string_agg(path, ',' ORDER BY path) FROM zk_locks}),
		'/tls/restart,/tls/restart_x', 'holding both of its locks');
	my ($out, $err) = bg_query($s, 'COMMIT');
	is($err, '', 'its transaction commits');
	queue_is($pb, '/tls/restart_x', '', 'releasing the transaction lock');
	queue_is($pb, '/tls/restart', '1:exclusive:t:a', 'the session lock stays held');

	# down for longer than the session timeout: the server expires the
	# session, and its node goes
	$tr->{h}->kill_kill(grace => 1);
	ok(wait_for(sub { queue_len($pb, '/tls/restart') eq '0' }, 30, 'expiry'),
		'a tunnel down past the session timeout: the session expires, its node goes');
	is($pb->safe_psql('postgres', q{SELECT zk_try_lock('/tls/restart') AND zk_unlock('/tls/restart')}),
		't', 'and another server can take the lock');
	$tr = stunnel_client('restart', $secure, ca => "$zk->{tls}/ca.pem",
		accept => $tr->{port});
	($out, $err) = bg_query($s, q{SELECT zk_try_lock('/tls/after')});
	error_is($err, '08006', qr/ZooKeeper session expired: 1 lock was lost\nDETAIL:  Lost: "\/tls\/restart" \(exclusive, session\)\./,
		'with the tunnel back, the next call fails with 08006 naming the lost lock');
	is($s->query_safe(q{SELECT zk_try_lock('/tls/after') AND zk_unlock('/tls/after')}), 't',
		'and the call after that works, on a new session through the tunnel');
	isnt($s->query_safe('SELECT session_id FROM zk_session()'), $sid, 'a new session');
	$s->quit;
}

# --- an ensemble behind tunnels: one tunnel per member, zklock.hosts
#     naming the three tunnels; the member the holder's session is on is
#     killed: the session moves to another member through its tunnel
{
	my $ens = zk_secure_ensemble();
	my @t = map {
		stunnel_client("ens$_", $ens->{ports}[ $_ - 1 ], ca => "$ens->{tls}/ca.pem")
	} 1 .. 3;
	my $hosts = join(',', map { $_->{hosts} } @t);
	my $s = $pa->background_psql('postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');
	$s->query_safe("SET zklock.hosts = '$hosts'");
	$s->query_safe(q{SET zklock.session_timeout = '6s'});
	my $tok = $s->query_safe(q{SELECT zk_lock('/tls/ens')});
	my $sid = $s->query_safe('SELECT session_id FROM zk_session()');
	my $server = $s->query_safe('SELECT server FROM zk_session()');
	my ($m) = grep { $t[ $_ - 1 ]{hosts} eq $server } 1 .. 3;
	ok(defined $m, 'a backend locks through one of three tunnels, one per member');
	my $o = $pb->background_psql('postgres', on_error_stop => 0);
	$o->query_safe("SET zklock.hosts = '$hosts'");
	is($o->query_safe(q{SELECT zk_try_lock('/tls/ens')}), 'f',
		'another server, through the same tunnels, cannot take the lock');

	zkctl('kill', $ens->{dir}, $m // 1);
	my $where = sub { $s->query_safe(q{SELECT state || ' ' || server FROM zk_session()}) };
	ok(wait_for(sub { my $v = $where->(); $v =~ /^connected / && $v ne "connected $server" },
			20, 'the session on another member'),
		'the member it was on is killed: the session moves to another member through its tunnel');
	is($s->query_safe(q{SELECT (SELECT session_id FROM zk_session()) || ' ' || fencing_token
		FROM zk_locks WHERE path = '/tls/ens'}), "$sid $tok",
		'the same session, holding the lock with the same token');
	ok(wait_for(sub { my ($r) = bg_query($o, q{SELECT zk_try_lock('/tls/ens', 200)}); $r eq 'f' },
			20, 'the other server answered'),
		'the other server still cannot take it');
	$s->query_safe(q{SELECT zk_unlock('/tls/ens')});
	my $tok2 = $o->query_safe(q{SELECT zk_lock('/tls/ens')});
	cmp_ok($tok2, '>', $tok, 'once released, the other server takes it, with a greater token');
	$o->query_safe(q{SELECT zk_unlock_all()});
	$s->quit;
	$o->quit;
}

$pa->stop;
$pb->stop;
for my $h (@helpers)
{
	eval { $h->kill_kill(grace => 1); 1 };
}
done_testing();

END
{
	my $rc = $?;
	for my $h (@helpers)
	{
		eval { $h->kill_kill(grace => 1); 1 };
	}
	$? = $rc;
}
