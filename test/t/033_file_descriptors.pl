# The client library's descriptors (its connection to ZooKeeper and the
# pipe that wakes its I/O thread) are reserved with AcquireExternalFD, as
# libpq connections made from a backend (dblink, postgres_fdw) are: they
# count against max_files_per_process with those connections, and a
# backend that has used up its share gets a clear 08001 instead of running
# out of descriptors later.
#
# With max_files_per_process = 64 a backend may hold about 18 external
# descriptors (a third of what it may open, less PostgreSQL's reserve).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $node = pg_with_zklock('fd', $zk, "max_files_per_process = 64\n");
$node->safe_psql('postgres', 'CREATE EXTENSION dblink');

my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

# take external descriptors with dblink connections until one is refused
my $n = 0;
my $refusal = '';
for my $i (1 .. 40)
{
	my (undef, $err) = bg_query($s, "SELECT dblink_connect('c$i', '$connstr')");
	if ($err =~ /ERROR/)
	{
		$refusal = $err;
		last;
	}
	$n++;
}
cmp_ok($n, '>', 3, "dblink took $n connections before PostgreSQL refused one");
like($refusal, qr/There are too many open files on the local server/,
	'refused for want of descriptors');

# give back two: fewer than the three the ZooKeeper client needs
$s->query_safe("SELECT dblink_disconnect('c$n')");
$s->query_safe("SELECT dblink_disconnect('c" . ($n - 1) . "')");
my (undef, $err) = bg_query($s, q{SELECT zk_lock('/fd/a')});
like($err,
	qr/ERROR:  08001: could not connect to ZooKeeper at "[^"]+"\nDETAIL:  There are too many open files on the local server\.\nHINT:  Raise the server's max_files_per_process and\/or "ulimit -n" limits\./,
	'zk_lock with two external descriptors left: 08001, too many open files');
is($s->query_safe('SELECT state FROM zk_session()'), 'closed', 'and no session was opened');

# one more back: now the three fit
$s->query_safe("SELECT dblink_disconnect('c" . ($n - 2) . "')");
like($s->query_safe(q{SELECT zk_lock('/fd/a')}), qr/^\d+$/, 'with three left, zk_lock works');
is($s->query_safe('SELECT state FROM zk_session()'), 'connected', 'on a session');
my $fds = () = glob("/proc/$pid/fd/*");
note("the backend has $fds descriptors open");

# and they are reserved: a new dblink connection is refused while the
# session is open, and accepted once it closed
(undef, $err) = bg_query($s, "SELECT dblink_connect('extra', '$connstr')");
like($err, qr/ERROR/, 'while the session is open, its descriptors count: no room for another dblink connection');
$s->query_safe(q{SELECT zk_unlock('/fd/a')});
$s->quit;
done_testing();
