# What an operator sees: zk_lock_queue across servers (with the owner of
# every node, also nodes written by kazoo, and nodes with corrupt data),
# zk_session, zk_locks, wait events, and log_lock_waits lines for
# ZooKeeper waits.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
my $na = pg_with_zklock('a', $zk);
my $nb = pg_with_zklock('b', $zk,
	"log_lock_waits = on\ndeadlock_timeout = '300ms'\n");

# --- zk_session before and after the first call
my $s = $na->background_psql('postgres');
is( $s->query_safe(
		q{SELECT state || '|' || coalesce(session_id, 'null') || '|' || coalesce(server, 'null')
		  || '|' || locks_held FROM zk_session()}),
	'closed|null|null|0',
	'zk_session: no session before the first call');
$s->query_safe(q{SET application_name = 'holder'});
my $holder_token = $s->query_safe(q{SELECT zk_lock('/inspect/q')});
my $holder_pid = $s->query_safe('SELECT pg_backend_pid()');
like( $s->query_safe(
		q{SELECT state || '|' || session_id || '|' || server || '|' || timeout_ms
		  || '|' || locks_held || '|' || (connected_for > '0') FROM zk_session()}),
	qr/^connected\|0x[0-9a-f]{16}\|127\.0\.0\.1:$port\|10000\|1\|true$/,
	'zk_session: connected, hex id, server, negotiated timeout, locks held');

# --- a holder and two waiters of both modes, on two servers
my $r = $nb->background_psql('postgres');
$r->query_safe(q{SET application_name = 'reader'});
my $reader_pid = $r->query_safe('SELECT pg_backend_pid()');
bg_begin($r, q{SELECT zk_rlock('/inspect/q') > 0}, 'r_got');
ok(wait_queue_len($na, '/inspect/q', 2, 10, 'reader queued'), 'the reader waits');
my $w = $na->background_psql('postgres');
$w->query_safe(q{SET application_name = 'writer'});
my $writer_pid = $w->query_safe('SELECT pg_backend_pid()');
bg_begin($w, q{SELECT zk_lock('/inspect/q') > 0}, 'w_got');
ok(wait_queue_len($na, '/inspect/q', 3, 10, 'writer queued'), 'the writer waits');

my $rows = $nb->safe_psql(
	'postgres', q{
	SELECT position, mode, granted, cluster_name, pid, database, user_name,
	       application_name, port IS NOT NULL, host IS NOT NULL,
	       znode ~ '^_c_[0-9a-f-]{36}-__(WRIT|READ)__[0-9]{10}$',
	       data::json->>'scope'
	FROM zk_lock_queue('/inspect/q') ORDER BY position});
my $user = $na->safe_psql('postgres', 'SELECT current_user');
is( $rows,
	join("\n",
		"1|exclusive|t|a|$holder_pid|postgres|$user|holder|t|t|t|session",
		"2|shared|f|b|$reader_pid|postgres|$user|reader|t|t|t|session",
		"3|exclusive|f|a|$writer_pid|postgres|$user|writer|t|t|t|session"),
	'zk_lock_queue on B lists both servers\' nodes in order, with their owners');
is( $nb->safe_psql(
		'postgres', q{
		SELECT bool_and(fencing_token > 0) AND
		       (array_agg(fencing_token ORDER BY position)) =
		       (array_agg(fencing_token ORDER BY fencing_token)) AND
		       (array_agg(created_at ORDER BY position)) =
		       (array_agg(created_at ORDER BY created_at))
		FROM zk_lock_queue('/inspect/q')}),
	't',
	'tokens and creation times grow with the position');
is( $nb->safe_psql(
		'postgres',
		"SELECT fencing_token FROM zk_lock_queue('/inspect/q') WHERE position = 1"),
	$holder_token,
	"the holder's token is the one zk_lock returned");
is( $na->safe_psql(
		'postgres',
		"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $writer_pid"),
	'Extension',
	'a waiter shows wait_event_type Extension');

# --- log_lock_waits on B: a line after deadlock_timeout, and one at grant
ok( wait_for(
		sub { slurp_file($nb->logfile) =~ /still waiting for ZooKeeper shared lock/ },
		10,
		'the still-waiting line'),
	'log_lock_waits: B logs that its reader is still waiting');
my $log = slurp_file($nb->logfile);
like( $log,
	qr/LOG:  process $reader_pid still waiting for ZooKeeper shared lock "\/inspect\/q" after (\d+) ms/,
	'with the pid, mode, path and wait time');
like( $log,
	qr/DETAIL:  Queue position 2 of 2\. First in the queue: node "_c_[^"]+__WRIT__\d+", held by PostgreSQL backend $holder_pid on \S+:\d+ \(cluster "a", database "postgres", application "holder"\)\./,
	'and its queue position and who holds the lock');
my ($ms) = $log =~ /still waiting for ZooKeeper shared lock "\/inspect\/q" after (\d+) ms/;
cmp_ok($ms, '>=', 300, 'not before deadlock_timeout');
is(scalar(() = $log =~ /still waiting for ZooKeeper/g), 1, 'logged once');

$s->query_safe(q{SELECT zk_unlock('/inspect/q')});
bg_finish($r, 'r_got');
ok( wait_for(
		sub { slurp_file($nb->logfile) =~ /acquired ZooKeeper shared lock "\/inspect\/q" after \d+ ms/ },
		10,
		'the acquired line'),
	'log_lock_waits: B logs when the reader finally gets the lock');
like( $r->query_safe(
		q{SELECT path || '|' || mode || '|' || scope || '|' || hold_count || '|' ||
		         (waited > '300 ms') || '|' || (acquired_at <= now()) FROM zk_locks}),
	qr/^\/inspect\/q\|shared\|session\|1\|true\|true$/,
	'zk_locks: the reader\'s hold, with how long it waited');
is( queue_rows($na, '/inspect/q', q{mode || ':' || granted}),
	'shared:true,exclusive:false',
	'the writer now waits for the reader');
$r->query_safe(q{SELECT zk_unlock('/inspect/q')});
bg_finish($w, 'w_got');
$w->query_safe(q{SELECT zk_unlock('/inspect/q')});

# --- nodes written by kazoo, corrupt data, and children that are no lock
my ($in, $out, $err) = ('', '', '');
my $py = IPC::Run::start(
	[
		kazoo_python(), '-c', <<"PY"
import sys
from kazoo.client import KazooClient
c = KazooClient(hosts='127.0.0.1:$port'); c.start(timeout=10)
lock = c.Lock('/zklock/inspect/k', identifier='kazoo-worker-7',
              extra_lock_patterns=['__WRIT__', '__READ__'])
lock.acquire(timeout=10)
c.create('/zklock/inspect/k/cafebabe__rlock__', b'\\xff\\xfe{"host": "x"',
         ephemeral=True, sequence=True)
c.create('/zklock/inspect/k/_c_00000000-0000-4000-8000-000000000000-__READ__',
         b'{"host": 1, "pid": "x", "port": -5, "nested": {"a": [1]}, "user": "\\\\u0000"}',
         ephemeral=True, sequence=True)
c.create('/zklock/inspect/k/not-a-lock', b'hello')
print('ready', flush=True)
sys.stdin.read()
c.delete('/zklock/inspect/k/not-a-lock')
lock.release(); c.stop()
PY
	],
	'<', \$in, '>', \$out, '2>', \$err);
pump_until($py, IPC::Run::timer(30), \$out, qr/ready/);
is( $na->safe_psql(
		'postgres', q{
		SELECT string_agg(concat_ws('|', position, mode, granted, coalesce(data, 'null'),
		                            coalesce(host, 'null'), coalesce(pid::text, 'null'),
		                            coalesce(port::text, 'null')), E'\n' ORDER BY position)
		FROM zk_lock_queue('/inspect/k')}),
	join("\n",
		'1|exclusive|t|kazoo-worker-7|null|null|null',
		'2|shared|f|null|null|null|null',
		'3|shared|f|{"host": 1, "pid": "x", "port": -5, "nested": {"a": [1]}, "user": "\u0000"}|null|null|null'),
	'kazoo\'s node is listed with its identifier; corrupt or odd data gives NULL owner fields; other children are ignored');
$in = "done\n";
$py->finish;

$_->quit for ($s, $r, $w);
$na->stop;
$nb->stop;
done_testing();
