# Cluster-wide inspection across two servers: zk_cluster_locks (holders and
# waiters of both servers with their owners, prefix filtering, downgrades,
# a kazoo lock and a Curator-style semaphore with NULL owners),
# zk_blocking_pids (a reader blocked by a writer, a writer blocked by
# several readers, a reader blocked by a waiting writer, a kazoo holder,
# pids that wait for nothing, an upgrading writer), zk_lock_queue with max_rows, the error
# paths, and the upgrade from 1.0.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

if (my $why = kazoo_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $port = $zk->{ports}[0];
my $na = pg_with_zklock('a', $zk);
my $nb = pg_with_zklock('b', $zk);
my $user = $na->safe_psql('postgres', 'SELECT current_user');

# a background session with an application_name; returns (session, pid)
sub session
{
	my ($node, $app) = @_;
	my $s = $node->background_psql('postgres');
	$s->query_safe("SET application_name = '$app'");
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# waiters of PATH as zk_cluster_locks on A counts them
sub waiters
{
	my ($path) = @_;
	return $na->safe_psql('postgres',
		"SELECT coalesce(max(waiters), 0) FROM zk_cluster_locks('$path')");
}

# blockers_of(NODE, SQL, WANT): SQL's result on NODE once it is WANT (at most
# 10 s): zk_blocking_pids answers only while the waiter sleeps in its wait
# event, and a waiter wakes now and then (its deadlock check, a ping's
# latch), so the first answer may be empty
sub blockers_of
{
	my ($node, $sql, $want) = @_;
	my $got;
	wait_for(sub { ($got = $node->safe_psql('postgres', $sql)) eq $want },
		10, 'zk_blocking_pids to answer');
	return $got;
}

# --- /cv/w: a writer on B holds, a reader on A waits
my ($bw, $bw_pid) = session($nb, 'b_writer');
my $bw_token = $bw->query_safe(q{SELECT zk_lock('/cv/w')});
my ($ar, $ar_pid) = session($na, 'a_reader');
bg_begin($ar, q{SELECT zk_rlock('/cv/w') > 0}, 'ar_got');
ok(wait_for(sub { waiters('/cv/w') eq '1' }, 10, 'reader queued'),
	'the reader on A waits behind the writer on B');

# --- /cv/r: two readers on B and one on A hold, a writer on A waits, and a
# reader on B waits behind that writer
my ($br1, $br1_pid) = session($nb, 'b_reader1');
my ($br2, $br2_pid) = session($nb, 'b_reader2');
my ($ar3, $ar3_pid) = session($na, 'a_reader3');
$_->query_safe(q{SELECT zk_rlock('/cv/r')}) for ($br1, $br2, $ar3);
my ($aw, $aw_pid) = session($na, 'a_writer');
bg_begin($aw, q{SELECT zk_lock('/cv/r') > 0}, 'aw_got');
ok(wait_for(sub { waiters('/cv/r') eq '1' }, 10, 'writer queued'),
	'the writer on A waits behind three readers');
my ($br4, $br4_pid) = session($nb, 'b_reader4');
bg_begin($br4, q{SELECT zk_rlock('/cv/r') > 0}, 'br4_got');
ok(wait_for(sub { waiters('/cv/r') eq '2' }, 10, 'late reader queued'),
	'a reader on B waits behind the waiting writer');

# --- /other/x: somebody else's lock, for prefix filtering
my ($bo, $bo_pid) = session($nb, 'b_other');
$bo->query_safe(q{SELECT zk_lock('/other/x')});

my $rows = $na->safe_psql(
	'postgres', q{
	SELECT path, kind, mode, holders, waiters, oldest_wait_start IS NOT NULL,
	       cluster_name, pid, database, user_name, application_name,
	       port IS NOT NULL AND host IS NOT NULL,
	       znode ~ '^_c_[0-9a-f-]{36}-__(WRIT|READ)__[0-9]{10}$'
	FROM zk_cluster_locks WHERE path LIKE '/cv/%'
	ORDER BY path, cluster_name, pid});
my @r_holders = sort { $a->[0] cmp $b->[0] || $a->[1] <=> $b->[1] } (
	[ 'a', $ar3_pid, 'a_reader3' ],
	[ 'b', $br1_pid, 'b_reader1' ],
	[ 'b', $br2_pid, 'b_reader2' ]);
is( $rows,
	join("\n",
		(map { "/cv/r|lock|shared|3|2|t|$_->[0]|$_->[1]|postgres|$user|$_->[2]|t|t" }
		  @r_holders),
		"/cv/w|lock|exclusive|1|1|t|b|$bw_pid|postgres|$user|b_writer|t|t"),
	'zk_cluster_locks on A: one row per holder, holders of both servers with their owners, waiters counted'
);
is( $nb->safe_psql(
		'postgres', q{SELECT fencing_token FROM zk_cluster_locks('/cv/w')}),
	$bw_token,
	"the holder's fencing token is the one zk_lock returned");
is( $nb->safe_psql(
		'postgres', q{
		SELECT oldest_wait_start = (SELECT created_at FROM zk_lock_queue('/cv/r')
		                            WHERE NOT granted ORDER BY position LIMIT 1)
		FROM zk_cluster_locks('/cv/r') LIMIT 1}),
	't',
	'oldest_wait_start is the creation time of the first waiting node');
is( $nb->safe_psql(
		'postgres', q{
		SELECT (SELECT count(*) FROM zk_cluster_locks) =
		       (SELECT count(*) FROM zk_cluster_locks('/'))}),
	't',
	'the view is zk_cluster_locks(\'/\')');

# --- prefix filtering
is( $na->safe_psql(
		'postgres',
		q{SELECT string_agg(DISTINCT path, ',' ORDER BY path) FROM zk_cluster_locks}),
	'/cv/r,/cv/w,/other/x',
	'"/" lists every lock path');
is( $na->safe_psql(
		'postgres',
		q{SELECT string_agg(DISTINCT path, ',' ORDER BY path) FROM zk_cluster_locks('/cv')}),
	'/cv/r,/cv/w',
	'a prefix lists the lock paths below it');
is( $na->safe_psql(
		'postgres',
		q{SELECT string_agg(DISTINCT path, ',' ORDER BY path) || '|' || count(*)
		  FROM zk_cluster_locks('/cv/r')}),
	'/cv/r|3',
	'a prefix that is a lock path lists that lock');
is( $na->safe_psql(
		'postgres',
		q{SELECT string_agg(DISTINCT path, ',') FROM zk_cluster_locks('/other')}),
	'/other/x',
	'another prefix, another server\'s lock');
is( $na->safe_psql(
		'postgres', q{SELECT count(*) FROM zk_cluster_locks('/no/such/prefix')}),
	'0',
	'a prefix with nothing below it lists nothing');
is( $na->safe_psql(
		'postgres', q{SELECT count(*) FROM zk_cluster_locks('/cv/w/deeper')}),
	'0',
	'nor does a prefix below a lock');

# --- zk_blocking_pids, asked on A about A's waiters, naming B's holders
{
	my $want = "/cv/w|exclusive|t|b|$bw_pid|postgres|$user|b_writer|t|t|t";
	is(blockers_of($na, qq{
		SELECT path, blocker_mode, blocker_granted, cluster_name, blocker_pid,
		       database, user_name, application_name, port IS NOT NULL,
		       blocker_znode = (SELECT znode FROM zk_lock_queue('/cv/w') WHERE position = 1),
		       waiter_znode = (SELECT znode FROM zk_lock_queue('/cv/w') WHERE position = 2)
		FROM zk_blocking_pids($ar_pid)}, $want), $want,
		'zk_blocking_pids: a reader on A blocked by the writer on B');
}
{
	my $want = join(',',
		map { "/cv/r:shared:t:$_->[0]:$_->[1]" }
		  sort { $a->[2] cmp $b->[2] } (
			[ 'b', $br1_pid, znode_of($na, '/cv/r', 'b_reader1') ],
			[ 'b', $br2_pid, znode_of($na, '/cv/r', 'b_reader2') ],
			[ 'a', $ar3_pid, znode_of($na, '/cv/r', 'a_reader3') ]));
	is(blockers_of($na, qq{
		SELECT string_agg(concat_ws(':', path, blocker_mode, blocker_granted,
		                            cluster_name, blocker_pid), ',' ORDER BY blocker_znode COLLATE "C")
		FROM zk_blocking_pids($aw_pid)}, $want), $want,
		'a writer on A blocked by three readers, on both servers');
}
{
	my $want = "/cv/r:exclusive:f:a:$aw_pid:a_writer";
	is(blockers_of($nb, qq{
		SELECT concat_ws(':', path, blocker_mode, blocker_granted, cluster_name,
		                 blocker_pid, application_name)
		FROM zk_blocking_pids($br4_pid)}, $want), $want,
		'a reader on B blocked by the waiting writer on A, not by the readers');
}
is( $na->safe_psql('postgres',
		"SELECT count(*) FROM zk_blocking_pids($ar3_pid)"),
	'0', 'a holder that waits for nothing has no blockers');
is( $na->safe_psql('postgres',
		'SELECT count(*) FROM zk_blocking_pids(pg_backend_pid())'),
	'0', 'nor has the asking backend');
is( $na->safe_psql('postgres', "SELECT count(*) FROM zk_blocking_pids($br4_pid)"),
	'0', 'a pid of the other server is not a backend of this one: no rows');
is( $na->safe_psql('postgres', 'SELECT count(*) FROM zk_blocking_pids(0)'),
	'0', 'nor is pid 0');

# the znode of the node of application APP in PATH's queue
sub znode_of
{
	my ($node, $path, $app) = @_;
	return $node->safe_psql('postgres',
		"SELECT znode FROM zk_lock_queue('$path') WHERE application_name = '$app'");
}

# --- zk_lock_queue with max_rows: exactly the first N rows, in order
my $full = $na->safe_psql('postgres',
	q{SELECT string_agg(format('%s:%s:%s:%s:%s', position, znode, mode, granted, pid),
	                    ',' ORDER BY position) FROM zk_lock_queue('/cv/r')});
my @full = split /,/, $full;
is(scalar(@full), 5, 'the queue of /cv/r has five nodes');
for my $n (0, 1, 2, 4, 5, 100)
{
	my $got = $na->safe_psql(
		'postgres',
		qq{SELECT coalesce(string_agg(format('%s:%s:%s:%s:%s', position, znode, mode,
		                                     granted, pid), ',' ORDER BY position), '')
		   FROM zk_lock_queue('/cv/r', $n)});
	my $last = ($n > 5 ? 5 : $n) - 1;
	is($got, join(',', @full[ 0 .. $last ]),
		"zk_lock_queue(path, $n) returns the first rows of the queue, in order");
}
is( $na->safe_psql(
		'postgres', q{SELECT count(*) FROM zk_lock_queue('/no/such/lock', 3)}),
	'0', 'max_rows on a path without a queue: no rows');

# --- a downgrade: A holds the write lock, B's reader waits, A reads too
my ($ad, $ad_pid) = session($na, 'a_downgrader');
$ad->query_safe(q{SELECT zk_lock('/cv/d')});
my ($bd, $bd_pid) = session($nb, 'b_dreader');
bg_begin($bd, q{SELECT zk_rlock('/cv/d') > 0}, 'bd_got');
ok(wait_for(sub { waiters('/cv/d') eq '1' }, 10, 'reader queued behind the downgrader'),
	'a reader on B waits behind the writer on A');
$ad->query_safe(q{SELECT zk_rlock('/cv/d')});
is( $nb->safe_psql(
		'postgres', q{
		SELECT string_agg(concat_ws(':', mode, holders, waiters, cluster_name, pid),
		                  ',' ORDER BY fencing_token)
		FROM zk_cluster_locks('/cv/d')}),
	"exclusive:2:1:a:$ad_pid,shared:2:1:a:$ad_pid",
	'a downgraded read lock counts as held, behind a waiter of another session');
{
	my $want = "exclusive:t:$ad_pid";
	is(blockers_of($nb, qq{
		SELECT string_agg(concat_ws(':', blocker_mode, blocker_granted, blocker_pid), ',')
		FROM zk_blocking_pids($bd_pid)}, $want), $want,
		'the waiting reader is blocked by the write lock only');
}
is( $nb->safe_psql(
		'postgres', q{
		SELECT string_agg(position || ':' || mode || ':' || granted, ',' ORDER BY position)
		FROM zk_lock_queue('/cv/d', 3)}),
	'1:exclusive:true,2:shared:false,3:shared:true',
	'zk_lock_queue with max_rows shows the downgraded read node as granted');

# --- kazoo: a foreign holder shows with NULL owner fields
my $k = kazoo_client('kazoo1', $zk, '/zklock/cv/k', 10, 'kazoo-one');
is(client_ask($k, 'lock 5000'), 'acquired lock', 'kazoo takes its Lock');
is( $na->safe_psql(
		'postgres', q{
		SELECT concat_ws('|', kind, mode, holders, waiters,
		                 znode ~ '^[0-9a-f]{32}__lock__[0-9]{10}$',
		                 fencing_token > 0,
		                 num_nulls(cluster_name, host, port, pid, database,
		                           user_name, application_name))
		FROM zk_cluster_locks('/cv/k')}),
	'lock|exclusive|1|0|t|t|7',
	'a kazoo holder: its mode and token, NULL owner fields');
my ($ak, $ak_pid) = session($na, 'a_kwaiter');
bg_begin($ak, q{SELECT zk_lock('/cv/k') > 0}, 'ak_got');
ok(wait_for(sub { waiters('/cv/k') eq '1' }, 10, 'waiter behind kazoo'),
	'a writer on A waits behind kazoo');
{
	my $want = '/cv/k|exclusive|t|7';
	is(blockers_of($na, qq{
		SELECT concat_ws('|', path, blocker_mode, blocker_granted,
		                 num_nulls(cluster_name, host, port, blocker_pid, database,
		                           user_name, application_name))
		FROM zk_blocking_pids($ak_pid)}, $want), $want,
		'zk_blocking_pids names a kazoo blocker with NULL owner fields');
}

# --- a semaphore laid out like Curator's InterProcessSemaphoreV2: two
# leases (one with zklock-style data, one foreign) and a waiting acquirer
my ($in, $out, $err) = ('', '', '');
my $py = IPC::Run::start(
	[
		kazoo_python(), '-c', <<"PY"
import sys
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
c = KazooClient(hosts='127.0.0.1:$port'); c.start(timeout=10)
c.create('/zklock/cv/acl', b'', acl=[make_digest_acl('u', 'p', all=True)])
u = '_c_00000000-0000-4000-8000-00000000000%d-'
c.ensure_path('/zklock/cv/sem/leases')
c.ensure_path('/zklock/cv/sem/locks')
c.create('/zklock/cv/sem/leases/' + (u % 1) + 'lease-',
         b'{"cluster_name":"javaapp","host":"h","port":1,"pid":4242}',
         ephemeral=True, sequence=True)
c.create('/zklock/cv/sem/leases/' + (u % 2) + 'lease-', b'10.0.0.7',
         ephemeral=True, sequence=True)
c.create('/zklock/cv/sem/locks/' + (u % 3) + 'lock-', b'10.0.0.8',
         ephemeral=True, sequence=True)
print('ready', flush=True)
sys.stdin.read()
c.stop()
c.start(timeout=10)
c.delete('/zklock/cv/sem', recursive=True)
c.delete('/zklock/cv/acl')
c.stop()
PY
	],
	'<', \$in, '>', \$out, '2>', \$err);
pump_until($py, IPC::Run::timer(30), \$out, qr/ready/);
is( $na->safe_psql(
		'postgres', q{
		SELECT string_agg(concat_ws('|', path, kind, mode, holders, waiters,
		                            oldest_wait_start IS NOT NULL,
		                            znode ~ '^leases/_c_[0-9a-f-]{36}-lease-[0-9]{10}$',
		                            coalesce(cluster_name, 'null'),
		                            coalesce(pid::text, 'null')),
		                  ',' ORDER BY fencing_token)
		FROM zk_cluster_locks('/cv/sem')}),
	'/cv/sem|semaphore|lease|2|1|t|t|javaapp|4242,/cv/sem|semaphore|lease|2|1|t|t|null|null',
	'a semaphore: its leases are the holders, its acquirers the waiters');
is( $na->safe_psql(
		'postgres',
		q{SELECT count(*) FROM zk_cluster_locks('/cv/sem') WHERE path <> '/cv/sem'}),
	'0', 'its "leases" and "locks" are not lock paths of their own');

# a lock path named like a semaphore's child is still a lock path
my ($as, $as_pid) = session($na, 'a_leases');
$as->query_safe(q{SELECT zk_lock('/cv/s2/leases')});
is( $nb->safe_psql(
		'postgres', q{
		SELECT string_agg(concat_ws('|', path, kind, mode, holders, pid), ',')
		FROM zk_cluster_locks('/cv/s2')}),
	"/cv/s2/leases|lock|exclusive|1|$as_pid",
	'a lock path ending in "leases" is listed as a lock, not taken for a semaphore');
$as->query_safe(q{SELECT zk_unlock_all()});

# a node whose ACL refuses reading is left out, with a WARNING
{
	my ($ret, $stdout, $stderr) = $na->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT count(DISTINCT path) FROM zk_cluster_locks('/cv')");
	is($stdout, '5', 'a node that cannot be read does not hide the others');
	warning_is( $stderr, '42501',
		qr/1 ZooKeeper node under "\/cv" could not be read/,
		'the node that cannot be read is reported in a WARNING (42501)');
}
$in = "done\n";
$py->finish;

# --- error paths
for my $bad ('cv', '/cv/', '/cv//r', '/cv/../x', '')
{
	my ($ret, $stdout, $stderr) = $na->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM zk_cluster_locks('$bad')");
	error_is($stderr, '22023', qr/invalid ZooKeeper lock path/,
		"zk_cluster_locks('$bad'): 22023");
}
{
	my ($ret, $stdout, $stderr) = $na->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM zk_lock_queue('/cv/r', -1)");
	error_is($stderr, '22023', qr/max_rows must not be negative/,
		'zk_lock_queue with a negative max_rows: 22023');
}
is( $na->safe_psql(
		'postgres',
		q{SELECT count(*) FROM zk_cluster_locks(NULL) UNION ALL
		  SELECT count(*) FROM zk_blocking_pids(NULL) UNION ALL
		  SELECT count(*) FROM zk_lock_queue('/cv/r', NULL)}),
	"0\n0\n0", 'NULL arguments: no rows (STRICT)');

# --- everything released: nothing left to list
$bw->query_safe(q{SELECT zk_unlock('/cv/w')});
bg_finish($ar, 'ar_got');
$_->query_safe(q{SELECT zk_unlock('/cv/r')}) for ($br1, $br2, $ar3);
bg_finish($aw, 'aw_got');
$aw->query_safe(q{SELECT zk_unlock('/cv/r')});
bg_finish($br4, 'br4_got');
$_->query_safe(q{SELECT zk_unlock_all()}) for ($ar, $br4, $ad, $bo);
bg_finish($bd, 'bd_got');
$bd->query_safe(q{SELECT zk_unlock_all()});
is(client_ask($k, 'release lock'), 'released lock', 'kazoo releases');
bg_finish($ak, 'ak_got');
$ak->query_safe(q{SELECT zk_unlock_all()});
# --- an upgrade (zk_advisory): A's two sessions share key 7, one of them
# asks for it exclusive and waits for the other; zk_blocking_pids judges by
# the queue rule and names both shared nodes ahead, its own among them
my ($au, $au_pid) = session($na, 'a_upgrader');
my ($ao, $ao_pid) = session($na, 'a_other_reader');
$_->query_safe(q{SELECT zk_advisory.pg_advisory_lock_shared(7)}) for ($au, $ao);
bg_begin($au, q{SELECT zk_advisory.pg_advisory_lock(7) IS NOT NULL}, 'au_got');
ok(wait_for(sub { waiters('/pg_advisory/postgres/7') eq '1' }, 10, 'upgrader queued'),
	'the upgrader waits for the other reader');
{
	my $want = join(',', map { "shared:t:$_" } sort { $a <=> $b } ($au_pid, $ao_pid));
	is(blockers_of($na, qq{
		SELECT string_agg(concat_ws(':', blocker_mode, blocker_granted, blocker_pid),
		                  ',' ORDER BY blocker_pid)
		FROM zk_blocking_pids($au_pid)}, $want), $want,
		'an upgrading writer is blocked by the shared nodes ahead, its own among them');
}
$ao->query_safe(q{SELECT zk_advisory.pg_advisory_unlock_all()});
bg_finish($au, 'au_got');
$au->query_safe(q{SELECT zk_advisory.pg_advisory_unlock_all()});

ok( wait_for(
		sub {
			$nb->safe_psql('postgres', q{SELECT count(*) FROM zk_cluster_locks})
			  eq '0';
		},
		10,
		'every queue empty'),
	'once everything is released, zk_cluster_locks is empty');

# --- the upgrade from 1.0 brings the new functions
$na->safe_psql('postgres', 'CREATE DATABASE upg');
is( $na->safe_psql(
		'upg', q{
		CREATE EXTENSION zklock VERSION '1.0';
		ALTER EXTENSION zklock UPDATE;
		SELECT count(*) FROM zk_cluster_locks;
		SELECT count(*) FROM zk_lock_queue('/cv/r', 1);
		SELECT count(*) FROM zk_blocking_pids(pg_backend_pid());
		SELECT count(*) FROM pg_proc p JOIN pg_description d ON d.objoid = p.oid
		WHERE proname IN ('zk_cluster_locks', 'zk_blocking_pids', 'zk_lock_queue')}),
	"0\n0\n0\n4",
	'ALTER EXTENSION UPDATE from 1.0 adds them, each with a comment');

$_->quit for ($bw, $ar, $br1, $br2, $ar3, $aw, $br4, $bo, $ad, $bd, $ak, $as, $au, $ao);
client_stop($k);
$na->stop;
$nb->stop;
done_testing();
