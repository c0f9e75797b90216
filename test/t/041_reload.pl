# Changing the settings that choose the session (zklock.hosts, zklock.root,
# zklock.session_timeout, zklock.auth, zklock.auth_file) under held locks.
#
# - A reload that brings a new zklock.hosts while a backend holds a lock:
#   the backend keeps its session on the first server (its lock stays, a
#   backend there cannot take it, its next lock goes there too) and logs
#   that the change is deferred; after the release, its next call opens a
#   session on the second server and logs that.  A backend that held
#   nothing at the reload switches at its next call, logging nothing.
# - The same for zklock.root under a transaction lock (applied after
#   COMMIT), for zklock.root removed from the file (back to its default)
#   under a session lock released by DISCARD ALL, and for
#   zklock.session_timeout under a semaphore permit.
# - In a backend that holds locks, ALTER SYSTEM, ALTER DATABASE ... SET and
#   pg_file_settings (which run the settings' checks on values meant for
#   the file or for later sessions) change nothing and fail nothing.
# - SET of each of the five while locks are held is an ERROR at once
#   (55000, the setting named, never the value); while none are held it
#   succeeds.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk1 = zk_standalone();
my $zk2 = zk_standalone();
# (statements are not logged: some carry a zklock.auth value; the point is
# that zklock's own messages never do)
my $pg = pg_with_zklock('reload', $zk1,
	"zklock.root = '/r1'\nlog_statement = none\nlog_min_error_statement = panic\n");

# the log from OFFSET on has LOG line MESSAGE (a regex) of backend PID
sub logged
{
	my ($pid, $message, $offset) = @_;
	return $pg->log_contains(qr/\[$pid\] [^\n]*LOG:  (?:$message)/, $offset);
}

# reload, and wait until backend SESSION (process PID) has processed it: a
# backend reads the file before its next command, once the signal came
sub reload_seen_by
{
	my ($session, $pid, $message, $offset) = @_;
	$pg->reload;
	return wait_for(
		sub {
			$session->query_safe('SELECT 1');
			logged($pid, $message, $offset);
		},
		30, "backend $pid to log: $message");
}

# does the node exist on the server?
sub exists_on
{
	my ($zk, $znode) = @_;
	return kazoo_run($zk, "print(c.exists('$znode') is not None)");
}

sub port_of { return (split /:/, $_[0]{hosts})[1]; }

my $deferred = sub { qr/change of parameter "$_[0]" deferred while this backend holds ZooKeeper locks/ };
my $applied = sub { qr/deferred change of parameter "$_[0]" applied/ };

# --- zklock.hosts under a session lock
my $h = verbose_session($pg);
my $hpid = $h->query_safe('SELECT pg_backend_pid()');
$h->query_safe(q{SELECT zk_lock('/h/a')});
like($h->query_safe('SELECT server FROM zk_session()'), qr/:${\ port_of($zk1)}$/,
	'the holder is on the first server');

# a backend with a session and no lock at the reload
my $idle = verbose_session($pg);
my $ipid = $idle->query_safe('SELECT pg_backend_pid()');
$idle->query_safe(q{SELECT zk_try_lock('/h/i') AND zk_unlock('/h/i')});

my $off = -s $pg->logfile;
$pg->append_conf('postgresql.conf', "zklock.hosts = '$zk2->{hosts}'\n");
ok(reload_seen_by($h, $hpid, $deferred->('zklock.hosts'), $off),
	'a reload that changes zklock.hosts while the backend holds a lock logs that the change is deferred');
like(slurp_file($pg->logfile, $off),
	qr/\[$hpid\] [^\n]*LOG:  change of parameter "zklock.hosts" deferred[^\n]*\n[^\n]*DETAIL:  The backend keeps the current value and its ZooKeeper session until it holds no lock/,
	'saying that the switch waits until the backend holds no lock');
is($h->query_safe('SHOW zklock.hosts'), $zk1->{hosts}, 'the holder keeps the value in effect');
like($h->query_safe('SELECT server FROM zk_session()'), qr/:${\ port_of($zk1)}$/,
	'and its session on the first server');

my $o = verbose_session($pg);
$o->query_safe("SET zklock.hosts = '$zk1->{hosts}'");
is($o->query_safe(q{SELECT zk_try_lock('/h/a')}), 'f',
	'another backend on the first server cannot take the lock');

$h->query_safe(q{SELECT zk_lock('/h/b')});
my $znode = $h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/h/b'});
is(exists_on($zk1, $znode), 'True', 'a lock taken meanwhile goes to the first server');

# the backend that held nothing switches at its next call, as before
ok(wait_for(sub { $idle->query_safe('SHOW zklock.hosts') eq $zk2->{hosts} }, 30,
		'the reload in the idle backend'),
	'a backend holding no lock takes the new value at the reload');
$idle->query_safe(q{SELECT zk_lock('/h/i')});
like($idle->query_safe('SELECT server FROM zk_session()'), qr/:${\ port_of($zk2)}$/,
	'and its next call is on the second server');
$idle->query_safe(q{SELECT zk_unlock_all()});
ok(!logged($ipid, 'change of parameter|deferred change', $off),
	'without a deferred change');
$idle->quit;

# the release that empties the holder: the next call switches
$h->query_safe(q{SELECT zk_unlock('/h/a')});
ok(!logged($hpid, $applied->('zklock.hosts'), $off),
	'nothing is applied while the holder still holds a lock');
$h->query_safe(q{SELECT zk_unlock_all()});
is($o->query_safe(q{SELECT zk_try_lock('/h/a')}), 't',
	'the released lock is free on the first server');
$o->query_safe(q{SELECT zk_unlock_all()});
$o->query_safe(q{RESET zklock.hosts});

$h->query_safe(q{SELECT zk_lock('/h/c')});
$znode = $h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/h/c'});
is(exists_on($zk2, $znode), 'True', 'after the release, the next lock is on the second server');
is(exists_on($zk1, $znode), 'False', 'and not on the first');
like($h->query_safe('SELECT server FROM zk_session()'), qr/:${\ port_of($zk2)}$/,
	'zk_session() shows the second server');
is($h->query_safe('SHOW zklock.hosts'), $zk2->{hosts}, 'SHOW the new value');
ok(logged($hpid, $applied->('zklock.hosts'), $off), 'the switch is logged');
$h->query_safe(q{SELECT zk_unlock_all()});

# --- zklock.root under a transaction lock, applied after COMMIT
$h->query_safe('BEGIN');
$h->query_safe(q{SELECT zk_xact_lock('/t/a')});
$off = -s $pg->logfile;
$pg->append_conf('postgresql.conf', "zklock.root = '/r2'\n");
ok(reload_seen_by($h, $hpid, $deferred->('zklock.root'), $off),
	'a new zklock.root under a transaction lock is deferred');
is($h->query_safe('SHOW zklock.root'), '/r1', 'the holder keeps the old root');
$h->query_safe(q{SELECT zk_xact_lock('/t/b')});
like($h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/t/b'}), qr{^/r1/t/b/},
	'its locks meanwhile go under the old root');
$h->query_safe('COMMIT');
$h->query_safe(q{SELECT zk_lock('/t/c')});
like($h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/t/c'}), qr{^/r2/t/c/},
	'after COMMIT released them, the next lock goes under the new root');
ok(logged($hpid, $applied->('zklock.root'), $off), 'which is logged');

# --- zklock.root removed from the file (its default), DISCARD ALL
$off = -s $pg->logfile;
$pg->adjust_conf('postgresql.conf', 'zklock.root', undef);
ok(reload_seen_by($h, $hpid, $deferred->('zklock.root'), $off),
	'removing zklock.root from the file under a session lock is deferred');
is($h->query_safe('SHOW zklock.root'), '/r2', 'the holder keeps the root in effect');
$h->query_safe('DISCARD ALL');
$h->query_safe(q{SELECT zk_lock('/t/d')});
like($h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/t/d'}), qr{^/zklock/t/d/},
	'after DISCARD ALL released the locks, the next lock goes under the default root');
ok(logged($hpid, $applied->('zklock.root'), $off), 'which is logged');
$h->query_safe(q{SELECT zk_unlock_all()});

# --- zklock.session_timeout under a semaphore permit
$h->query_safe(q{SELECT zk_semaphore_acquire('/t/sem', 2)});
my $timeout = $h->query_safe('SELECT timeout_ms FROM zk_session()');
is($timeout, '10000', 'the session has the default timeout');
$off = -s $pg->logfile;
$pg->append_conf('postgresql.conf', "zklock.session_timeout = '7s'\n");
ok(reload_seen_by($h, $hpid, $deferred->('zklock.session_timeout'), $off),
	'a new zklock.session_timeout under a semaphore permit is deferred');
$h->query_safe(q{SELECT zk_try_lock('/t/e') AND zk_unlock('/t/e')});
is($h->query_safe('SELECT timeout_ms FROM zk_session()'), '10000',
	'the session is kept meanwhile');
$h->query_safe(q{SELECT zk_semaphore_release('/t/sem')});
$h->query_safe(q{SELECT zk_try_lock('/t/e') AND zk_unlock('/t/e')});
is($h->query_safe('SELECT timeout_ms FROM zk_session()'), '7000',
	'after the permit is released, the next call opens a session with the new timeout');
ok(logged($hpid, $applied->('zklock.session_timeout'), $off), 'which is logged');

# --- ALTER SYSTEM and pg_file_settings in a backend holding locks
$h->query_safe(q{SELECT zk_lock('/t/f')});
$off = -s $pg->logfile;
my ($out, $err) = bg_query($h, q{ALTER SYSTEM SET zklock.session_timeout = '8s'});
is($err, '', 'ALTER SYSTEM of a setting that chooses the session succeeds in a backend holding locks');
$h->query_safe(q{ALTER SYSTEM RESET zklock.session_timeout});
($out, $err) = bg_query($h, q{ALTER DATABASE postgres SET zklock.root = '/r5'});
is($err, '', 'so does ALTER DATABASE ... SET, which only validates the value for later sessions');
$h->query_safe(q{ALTER DATABASE postgres RESET zklock.root});
# a value in the file, not reloaded: read by pg_file_settings, applied nowhere
$pg->append_conf('postgresql.conf', "zklock.root = '/r9'\n");
is( $h->query_safe(
		q{SELECT count(*) FILTER (WHERE error IS NULL) || '/' || count(*) FROM pg_file_settings WHERE name = 'zklock.root'}),
	'1/1', 'pg_file_settings in a backend holding locks reads it without an error');
$h->query_safe(q{SELECT zk_unlock_all()});
$h->query_safe(q{SELECT zk_lock('/t/g')});
like($h->query_safe(q{SELECT znode FROM zk_locks WHERE path = '/t/g'}), qr{^/zklock/t/g/},
	'and the value it read is not applied after the release');
ok(!logged($hpid, 'change of parameter|deferred change', $off),
	'nor logged as deferred');
$h->query_safe(q{SELECT zk_unlock_all()});
$pg->adjust_conf('postgresql.conf', 'zklock.root', undef);

# --- SET while locks are held: 55000 at once
my $s = verbose_session($pg);
$s->query_safe(q{SELECT zk_lock('/s/a')});
my %new = (
	'zklock.hosts' => $zk1->{hosts},
	'zklock.root' => '/r3',
	'zklock.session_timeout' => '9s',
	'zklock.auth' => 'pgapp:Secr3t-set',
	'zklock.auth_file' => '/nonexistent/secret-file');
for my $name (sort keys %new)
{
	($out, $err) = bg_query($s, "SET $name = '$new{$name}'");
	error_is($err, '55000',
		qr/parameter "\Q$name\E" cannot be changed while this backend holds ZooKeeper locks\nDETAIL:  .*\nHINT:  Release the locks first \(zk_unlock_all\(\) releases session locks, COMMIT or ROLLBACK transaction locks/,
		"SET $name while holding a lock fails at once: 55000");
	unlike($err, qr/\Q$new{$name}\E/, 'without repeating the value');
}
($out, $err) = bg_query($s, q{SELECT set_config('zklock.auth', 'pgapp:Secr3t-fn', false)});
error_is($err, '55000', qr/parameter "zklock.auth" cannot be changed while this backend holds ZooKeeper locks/,
	'so does set_config()');
$s->query_safe(q{SELECT zk_unlock_all()});
$s->query_safe('BEGIN');
$s->query_safe(q{SELECT zk_xact_lock('/s/x')});
($out, $err) = bg_query($s, q{SET LOCAL zklock.auth = 'pgapp:Secr3t-local'});
error_is($err, '55000', qr/parameter "zklock.auth" cannot be changed while this backend holds ZooKeeper locks/,
	'and SET LOCAL under a transaction lock');
$s->query_safe('ROLLBACK');
is($s->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'no lock is held any more');
for my $name (sort keys %new)
{
	($out, $err) = bg_query($s, "SET $name = '$new{$name}'; RESET $name");
	is($err, '', "SET $name while holding no lock succeeds");
}
is($s->query_safe(q{SELECT zk_try_lock('/s/b')}), 't', 'and the backend goes on locking');

$_->quit for ($h, $o, $s);
$pg->stop;
unlike(slurp_file($pg->logfile), qr/Secr3t/, 'no value of zklock.auth reaches the log');
done_testing();
