# zklock.auth_file: digest credentials from a file, never from a setting.
#
# - With the file, locks carry the digest ACL (creator-only plus world
#   read), and a client without the credentials cannot delete them.
# - An unprivileged role sees the secret through no route: SHOW,
#   current_setting, pg_settings, error messages, node data, zk_session,
#   and the server log has it nowhere either.
# - A file readable by others, a missing file, a path through a file, a
#   directory and a malformed first line are refused with an ERROR that names the file and what is wrong, never
#   its content; the setting cannot change while locks are held.
use strict;
use warnings;

use lib 'lib';
use Digest::SHA qw(sha1_base64);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $secret = 'Fil3-' . int(rand(1e9));
my $zk = zk_standalone(
	jvm => '-Dzookeeper.DigestAuthenticationProvider.superDigest=super:'
	  . digest('super', 'superpw'));

sub digest
{
	my ($user, $password) = @_;
	my $d = sha1_base64("$user:$password");
	$d .= '=' while length($d) % 4;
	return $d;
}

my $dir = $PostgreSQL::Test::Utils::tmp_check;
my $file = "$dir/zklock.secret";
sub write_file
{
	my ($path, $content, $mode) = @_;
	open my $fh, '>', $path or die "$path: $!";
	print $fh $content;
	close $fh;
	chmod $mode, $path;
	return;
}
write_file($file, "pgfile:$secret\n", 0600);

my $pg = pg_with_zklock('a', $zk, "zklock.auth_file = '$file'\nlog_statement = all\n");
$pg->safe_psql('postgres', q{CREATE ROLE app LOGIN});

# --- the locks carry the digest ACL from the file
my $s = $pg->background_psql('postgres');
$s->query_safe(q{SELECT zk_lock('/af/a')});
my $znode = $s->query_safe(q{SELECT znode FROM zk_locks});
is( kazoo_run(
		$zk,
		"acl, _ = c.get_acls('$znode')\n"
		  . "print(sorted('%s:%s:%d' % (a.id.scheme, a.id.id, a.perms) for a in acl))",
		'super:superpw'),
	"['digest:pgfile:" . digest('pgfile', $secret) . ":31', 'world:anyone:1']",
	'the queue node belongs to the identity in the file');
is( kazoo_run(
		$zk,
		"from kazoo.exceptions import NoAuthError\n"
		  . "try:\n    c.delete('$znode')\n    print('deleted')\n"
		  . "except NoAuthError:\n    print('refused')"),
	'refused', 'a client without the credentials cannot delete it');

# --- an unprivileged role sees the secret through no route
my $app = $pg->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'app' ]);
$app->query_safe('\set VERBOSITY verbose');
my $seen = '';
for my $q (
	q{SHOW zklock.auth_file},
	q{SELECT current_setting('zklock.auth_file')},
	q{SELECT string_agg(name || '=' || coalesce(setting, ''), ',') FROM pg_settings WHERE name LIKE 'zklock.%'},
	q{SELECT zk_lock('/af/app')},
	q{SELECT data FROM zk_lock_queue('/af/app')},
	q{SELECT row(z.*)::text FROM zk_session() z},
	q{SET zklock.auth_file = '/tmp/x'},
	q{SELECT zk_unlock('/af/app')})
{
	my ($out, $err) = bg_query($app, $q);
	$seen .= "$out\n$err\n";
}
# (the file's path itself is no secret: in a backend that has not loaded
# zklock yet, a setting from postgresql.conf is a placeholder anyone may
# read, which is why the secret belongs in the file)
error_is($seen, '42501', qr/permission denied to set parameter "zklock.auth_file"/,
	'the role cannot set the file: 42501');
unlike($seen, qr/\Q$secret\E/, 'the role sees the secret nowhere');
$app->quit;

# --- what is refused, and how
sub try_in_new_backend
{
	my ($set) = @_;
	my ($out, $err) = ('', '');
	$pg->psql('postgres',
		"\\set VERBOSITY verbose\nSET client_min_messages = warning; $set SELECT zk_try_lock('/af/b')",
		stdout => \$out, stderr => \$err);
	return $err;
}

chmod 0644, $file;
my $err = try_in_new_backend('');
error_is($err, 'F0000', qr/zklock.auth_file "\Q$file\E" has group or world access/,
	'a file readable by others is refused (F0000), naming the file');
unlike($err, qr/\Q$secret\E/, 'and not showing its content');
chmod 0600, $file;

$err = try_in_new_backend(q{SET zklock.auth_file = '/nonexistent/zk.secret';});
error_is($err, '58P01', qr/could not access zklock.auth_file "\/nonexistent\/zk.secret": No such file or directory/,
	'a missing file is refused (58P01), naming it');

# another file-system error keeps PostgreSQL's code for it: a path through
# a regular file (ENOTDIR) is 42809
$err = try_in_new_backend(qq{SET zklock.auth_file = '$file/zk.secret';});
error_is($err, '42809', qr/could not access zklock.auth_file "\Q$file\E\/zk.secret": Not a directory/,
	'a path through a regular file is refused (42809), naming it');

mkdir "$dir/zklock.dir", 0700;
$err = try_in_new_backend(qq{SET zklock.auth_file = '$dir/zklock.dir';});
error_is($err, 'F0000', qr/zklock.auth_file "\Q$dir\E\/zklock.dir" is not a regular file/,
	'a directory is refused: F0000');

my $bad = "$dir/zklock.bad";
write_file($bad, "no-colon-$secret\n", 0600);
$err = try_in_new_backend(qq{SET zklock.auth_file = '$bad';});
error_is($err, 'F0000', qr/the first line of zklock.auth_file "\Q$bad\E" must have the form user:password/,
	'a malformed first line is refused: F0000');
unlike($err, qr/\Q$secret\E/, 'without showing it');

my ($o, $e) = ('', '');
$pg->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT zk_lock('/af/held'); SET zklock.auth_file = '$bad';",
	stdout => \$o, stderr => \$e);
error_is($e, '55000', qr/parameter "zklock.auth_file" cannot be changed while this backend holds ZooKeeper locks/,
	'the setting cannot change while the backend holds locks: 55000');

$s->query_safe(q{SELECT zk_unlock_all()});
$s->quit;
$pg->stop;
unlike(slurp_file($pg->logfile), qr/\Q$secret\E/, 'the server log never has the secret');
done_testing();
