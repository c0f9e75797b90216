# Authentication, ACLs and the secrecy of zklock.auth.
#
# - With zklock.auth, every node the backend creates carries creator-only
#   ACLs plus world read: other clients can read who holds a lock but can
#   neither delete its node nor queue under it; the same credentials on
#   another server can.  Missing or wrong credentials get 42501, at once.
# - A server that enforces digest authentication refuses an
#   unauthenticated backend with 28000.
# - The password never shows: not to a non-superuser (SHOW, pg_settings,
#   current_setting, a function's SET clause), and not in the server log.
use strict;
use warnings;

use lib 'lib';
use Digest::SHA qw(sha1_base64);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use ZkTest;

sub digest_id
{
	my ($user, $password) = @_;
	my $d = sha1_base64("$user:$password");
	$d .= '=' while length($d) % 4;
	return "$user:$d";
}

my $secret = 'Wh1sper-' . int(rand(1e9));
my $zk = zk_standalone(
	jvm => '-Dzookeeper.DigestAuthenticationProvider.superDigest='
	  . digest_id('super', 'superpw'));

# A authenticates (from postgresql.conf, with zklock preloaded so that the
# value is never an unprotected placeholder); B does not.  Statement
# logging is off: some statements of this test carry the password
# themselves, and the point is that zklock's own messages never do.
my $na = pg_with_zklock('a', $zk,
	"zklock.auth = 'pgapp:$secret'\nlog_statement = none\n"
	  . "shared_preload_libraries = 'zklock'\n");
my $nb = pg_with_zklock('b', $zk, "log_statement = none\n");

# (sessions whose errors are checked print them with their SQLSTATE)
sub verbose
{
	my ($session) = @_;
	$session->query_safe('\set VERBOSITY verbose');
	return $session;
}

# --- nodes of an authenticated backend are protected
my $s = verbose($na->background_psql('postgres'));
$s->query_safe(q{SELECT zk_lock('/sec/a')});
my $znode = $s->query_safe(q{SELECT znode FROM zk_locks});
my $id = digest_id('pgapp', $secret);
# (read as the super user: ZooKeeper masks digests to other clients)
is( kazoo_run(
		$zk,
		"acl, _ = c.get_acls('$znode')\n"
		  . "print(sorted('%s:%s:%d' % (a.id.scheme, a.id.id, a.perms) for a in acl))",
		'super:superpw'),
	"['digest:$id:31', 'world:anyone:1']",
	'the queue node: all rights for its creator, read for the world');
is( kazoo_run(
		$zk,
		"acl, _ = c.get_acls('/zklock/sec/a')\n"
		  . "print(sorted('%s:%s:%d' % (a.id.scheme, a.id.id, a.perms) for a in acl))",
		'super:superpw'),
	"['digest:$id:31', 'world:anyone:1']",
	'the lock node it created as well');
is( kazoo_run(
		$zk,
		"from kazoo.exceptions import NoAuthError\n"
		  . "try:\n    c.delete('$znode'); print('deleted')\n"
		  . "except NoAuthError:\n    print('refused')"),
	'refused',
	'another client cannot delete the queue node');
like(kazoo_run($zk, "print(c.get('$znode')[0].decode())"),
	qr/"cluster_name":"a"/, 'but can read who holds it');
is($nb->safe_psql('postgres', q{SELECT cluster_name FROM zk_lock_queue('/sec/a')}),
	'a', 'so zk_lock_queue works from an unauthenticated server');

# --- missing or wrong credentials: 42501, at once
my $b = verbose($nb->background_psql('postgres', on_error_stop => 0));
my $t0 = time();
my ($out, $err) = bg_query($b, q{SELECT zk_lock('/sec/a')});
error_is($err, '42501', qr/ZooKeeper refused access\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while acquiring lock "\/sec\/a"/,
	'an unauthenticated backend cannot queue under the protected lock node: 42501');
cmp_ok(1000 * (time() - $t0), '<', 3000, 'and is told at once, not left hanging');
$b->query_safe(q{SET zklock.auth = 'pgapp:wrong'});
($out, $err) = bg_query($b, q{SELECT zk_try_lock('/sec/a', 5000)});
error_is($err, '42501', qr/ZooKeeper refused access\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while acquiring lock "\/sec\/a"/,
	'nor can one with a wrong password: 42501');
is(queue_len($nb, '/sec/a'), '1', 'neither left anything in the queue');

# --- the same credentials on another server share the identity
$b->query_safe(qq{SET zklock.auth = 'pgapp:$secret'});
is($b->query_safe(q{SELECT zk_try_lock('/sec/a')}), 'f',
	'the right credentials on another server queue normally');
$s->query_safe(q{SELECT zk_unlock('/sec/a')});
is($b->query_safe(q{SELECT zk_try_lock('/sec/a', 5000)}), 't',
	'and get the lock after the release');
$b->query_safe(q{SELECT zk_unlock_all()});
$b->query_safe(q{RESET zklock.auth});

# --- an ACL set by an administrator is enforced
kazoo_run(
	$zk,
	"from kazoo.security import make_digest_acl\n"
	  . "c.create('/restricted', b'', acl=[make_digest_acl('pgapp', '$secret', all=True)])",
	'super:superpw');
$s->query_safe(q{SET zklock.root = '/restricted'});
is($s->query_safe(q{SELECT zk_lock('/job') > 0}), 't',
	'the permitted identity locks under a restricted root');
$b->query_safe(q{SET zklock.root = '/restricted'});
($out, $err) = bg_query($b, q{SELECT zk_lock('/job2')});
error_is($err, '42501', qr/ZooKeeper refused access\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while acquiring lock "\/job2"/,
	'another identity is refused (42501) under it');
$s->query_safe(q{SELECT zk_unlock_all()});

# --- a release ZooKeeper refuses is reported, not silently dropped
$s->query_safe(q{RESET zklock.root});
$s->query_safe(q{SELECT zk_lock('/sec/f')});
# the administrator takes DELETE away on the lock node (deleting a child
# needs it on the parent)
kazoo_run(
	$zk,
	"from kazoo.security import make_acl\n"
	  . "c.set_acls('/zklock/sec/f', [make_acl('world', 'anyone', read=True)])",
	'super:superpw');
is($s->query_safe(q{SELECT zk_unlock('/sec/f')}), 't',
	'zk_unlock returns (the delete goes in the background)');
ok( wait_for(
		sub { $s->query_safe('SELECT releases_failed FROM zk_session()') eq '1' },
		10, 'the refused delete'),
	'the refused delete is counted in zk_session().releases_failed');
($out, $err) = bg_query($s, q{SELECT zk_try_lock('/sec/g') AND zk_unlock('/sec/g')});
warning_is($err, '01000', qr/1 ZooKeeper release could not be completed/,
	'and reported by a WARNING (01000) at the next zklock call');
($out, $err) = bg_query($s, q{SELECT zk_try_lock('/sec/g') AND zk_unlock('/sec/g')});
is($err, '', 'once');
is(queue_len($nb, '/sec/f'), '1', 'the node stays meanwhile');
$s->quit;
ok(wait_queue_len($nb, '/sec/f', 0, 10, 'the session to end'),
	'and goes with the session');
$s = verbose($na->background_psql('postgres'));

# --- a server enforcing authentication refuses an unauthenticated backend
my $ezk = zk_standalone(cfg => "enforce.auth.enabled=true\nenforce.auth.schemes=digest");
$b->query_safe("SET zklock.hosts = '$ezk->{hosts}'");
$b->query_safe(q{RESET zklock.root});
($out, $err) = bg_query($b, q{SELECT zk_lock('/sec/e')});
error_is($err, '28000', qr/ZooKeeper requires authentication\n(?:(?:DETAIL|HINT):  .*\n)*CONTEXT:  while acquiring lock "\/sec\/e"/,
	'28000 when the server requires authentication');
$b->query_safe(qq{SET zklock.auth = 'pgapp:$secret'});
is($b->query_safe(q{SELECT zk_lock('/sec/e') > 0}), 't', 'and works with it');
$b->query_safe(q{SELECT zk_unlock_all()});
$b->query_safe(q{RESET zklock.auth});

# --- the password is not shown to a non-superuser
$na->safe_psql('postgres', q{CREATE ROLE plain LOGIN});
my $p = verbose($na->background_psql('postgres', on_error_stop => 0,
	extra_params => [ '-U', 'plain' ]));
($out, $err) = bg_query($p, q{SHOW zklock.auth});
error_is($err, '42501', qr/must be superuser or have privileges of pg_read_all_settings/,
	'SHOW zklock.auth is refused to a plain role: 42501');
($out, $err) = bg_query($p, q{SELECT current_setting('zklock.auth')});
error_is($err, '42501', qr/must be superuser/, 'so is current_setting(): 42501');
is($p->query_safe(q{SELECT count(*) FROM pg_settings WHERE name = 'zklock.auth'}),
	'0', 'and pg_settings does not list it');
($out, $err) = bg_query($p, q{SET zklock.auth = 'x:y'});
error_is($err, '42501', qr/permission denied to set parameter "zklock.auth"/,
	'nor may it be set: 42501');

# a superuser's SECURITY DEFINER function with SET zklock.auth, called by
# the plain role, never echoes the value, even a malformed one
$na->safe_psql(
	'postgres', qq{
	CREATE FUNCTION locked_job() RETURNS boolean
	LANGUAGE sql SECURITY DEFINER SET zklock.auth = 'pgapp-$secret'
	AS \$\$ SELECT zk_try_lock('/sec/job') \$\$;
	GRANT EXECUTE ON FUNCTION locked_job() TO plain});
($out, $err) = bg_query($p, q{SELECT locked_job()});
error_is($err, '22023', qr/zklock.auth must have the form user:password/,
	'a malformed value is reported without the value: 22023');
unlike($err, qr/\Q$secret\E/, 'the error does not contain the password');

my $log = slurp_file($na->logfile) . slurp_file($nb->logfile);
unlike($log, qr/\Q$secret\E/, 'the password appears in no server log');

# --- without preloading, the first use warns that the value is exposed
my $nc = pg_with_zklock('c', $zk, "zklock.auth = 'pgapp:$secret'\n");
my ($cout, $cerr) = ('', '');
$nc->psql('postgres', "\\set VERBOSITY verbose\nSELECT zk_try_lock('/sec/c')",
	stdout => \$cout, stderr => \$cerr);
warning_is($cerr, '01000', qr/zklock.auth is set, but zklock is not preloaded/,
	'a backend loading zklock late warns (01000) that zklock.auth was readable');
$nc->stop;

# --- a lock node that lets anyone queue but not write its data: the
#     one-write acquire (a multi with a setData of the lock node) is
#     refused, and zklock falls back to a plain create and a listing
kazoo_run(
	$zk,
	"from kazoo.security import make_acl\n"
	  . "c.ensure_path('/zklock/sec')\n"
	  . "c.create('/zklock/sec/nowrite', b'', acl=[make_acl('world', 'anyone', "
	  . "read=True, create=True, delete=True)])",
	'super:superpw');
is($nb->safe_psql('postgres',
		q{SELECT zk_try_lock('/sec/nowrite'), zk_unlock('/sec/nowrite')}),
	't|t', 'a lock node whose data cannot be set still takes and releases locks');
is(kazoo_run($zk, "print(len(c.get_children('/zklock/sec/nowrite')))", 'super:superpw'),
	'0', 'and leaves nothing behind');
kazoo_run($zk, "c.delete('/zklock/sec/nowrite')", 'super:superpw');

# --- published waits (deadlock detection) under a root both servers use:
#     B (no credentials) creates the root, so it is open; A's long wait
#     publishes first and creates the records' parent, which stays open to
#     every identity, so B's long wait publishes beside it
$nb->safe_psql('postgres',
	q{SET zklock.root = '/mixed'; SELECT zk_lock('/b'); SELECT zk_unlock('/b')});
for my $n ([ $na, '/a' ], [ $nb, '/b' ])
{
	my ($node, $path) = @$n;
	my $holder = $node->background_psql('postgres');
	my $waiter = $node->background_psql('postgres', on_error_stop => 0);
	$_->query_safe(q{SET zklock.root = '/mixed'}) for ($holder, $waiter);
	$holder->query_safe("SELECT zk_lock('$path')");
	$waiter->query_safe(q{SET deadlock_timeout = '100ms'});
	bg_begin($waiter, "SELECT zk_lock('$path') > 0 AS got", 'long_done');
	# past deadlock_timeout the wait is published: a record under the
	# records' parent
	ok( wait_for(
			sub {
				kazoo_run($zk,
					"print(len(c.get_children('/mixed.waits')) if c.exists('/mixed.waits') else 0)",
					'super:superpw') > 0;
			},
			10, 'the wait record'),
		($node == $na ? 'an authenticated' : 'an unauthenticated') . ' waiter publishes its wait');
	$holder->query_safe("SELECT zk_unlock('$path')");
	my ($out, $err) = bg_finish($waiter, 'long_done');
	like($out, qr/\bt\b/, ($node == $na ? 'an authenticated' : 'an unauthenticated')
		  . ' backend whose wait was published gets the lock');
	is($err, '', 'with no error');
	$waiter->query_safe(q{SELECT zk_unlock_all()});
	$_->quit for ($holder, $waiter);
}
is( kazoo_run(
		$zk,
		"acl, _ = c.get_acls('/mixed.waits')\n"
		  . "print(sorted('%s:%s:%d' % (a.id.scheme, a.id.id, a.perms) for a in acl))",
		'super:superpw'),
	"['world:anyone:31']",
	"the records' parent, created by the authenticated backend, is open to every identity");

$_->quit for ($s, $b, $p);
$na->stop;
$nb->stop;
done_testing();
