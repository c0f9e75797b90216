# Fencing at the resource: zk_fence() and the zk_fenced() trigger, on the
# database a holder writes to.
#
# Server A holds locks (it reaches ZooKeeper); server R is the resource: it
# has zklock installed but its zklock.hosts names a port where nothing
# listens, so any ZooKeeper request there would fail.  A job holding a lock
# on A writes through a connection to R:
#
# - zk_fence(path, token) on R returns the token and records it; an older
#   token is refused (55000, naming path, token and the accepted one); an
#   equal token is accepted; the record goes with a ROLLBACK; a second
#   transaction fencing the same path waits for the first and then sees its
#   token (in REPEATABLE READ: 40001, as for any row changed under it); R's
#   backend never opened a ZooKeeper session (zk_session()).
# - zk_fenced() as a BEFORE trigger, statement and row level: the write is
#   refused (55000) unless the transaction passed zk_fence for the path; a
#   fence undone by ROLLBACK TO SAVEPOINT, or a fence of another path, does
#   not count.
# - A plain role can fence (SECURITY DEFINER) but cannot insert, update or
#   delete zk_fence_tokens (42501); it can read it.  pg_dump keeps its rows.
# - Bad input: NULL gives NULL (STRICT); token <= 0 and an invalid path
#   give 22023; zk_fenced called directly, fired without its
#   argument, AFTER, or on TRUNCATE gives 39P01 (as PostgreSQL's
#   own trigger functions), with an invalid path 22023.
# - zk_fence(path) on A uses the token of the session's own exclusive hold
#   (as zk_locks shows it), 55000 without one or with a shared hold only.
# - zk_fence(path, token, true) on A: accepted while the token's node is the
#   granted exclusive head of the queue; 55000 for a waiting node's token
#   and once the holder has released; a lease's token passes while the
#   lease holds, not after its release, and zk_fence(path) does not take a
#   lease for a hold.
# - On a hot standby of R (pg_basebackup), zk_fence gives 25006 and the
#   records are readable.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk);

# the resource server: zklock installed, no ZooKeeper reachable
my $r = PostgreSQL::Test::Cluster->new('r');
$r->init(allows_streaming => 1);
$r->append_conf('postgresql.conf',
	"zklock.hosts = '127.0.0.1:9'\nzklock.connect_timeout = 1000\n");
$r->start;
$r->safe_psql('postgres', 'CREATE EXTENSION zklock');
$r->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	CREATE TABLE account (id int PRIMARY KEY, balance int NOT NULL);
	INSERT INTO account VALUES (1, 100);
	CREATE TABLE ledger (id serial PRIMARY KEY, note text);
	GRANT SELECT, INSERT, UPDATE, DELETE ON account, ledger TO app;
	GRANT USAGE ON SEQUENCE ledger_id_seq TO app;
	CREATE TRIGGER fenced BEFORE INSERT OR UPDATE OR DELETE ON account
		FOR EACH STATEMENT EXECUTE FUNCTION zk_fenced('/fenced/account');
	CREATE TRIGGER fenced BEFORE INSERT OR UPDATE OR DELETE ON ledger
		FOR EACH ROW EXECUTE FUNCTION zk_fenced('/fenced/account');
});

my $path = '/fenced/account';
my $job = verbose_session($a);
my $t1 = $job->query_safe(qq{SELECT zk_lock('$path')});
like($t1, qr/^[1-9][0-9]*$/, "the job on A holds $path with token $t1");

# --- the job on A writes to R, fenced
my $w = verbose_session($r);
my ($out, $err) = bg_query($w, qq{BEGIN;
	SELECT zk_fence('$path', $t1);
	UPDATE account SET balance = balance + 1 WHERE id = 1;
	INSERT INTO ledger (note) VALUES ('t1');
	COMMIT});
is($err, '', 'a fenced write on R succeeds');
like($out, qr/^$t1$/m, 'zk_fence returns the token');
is($r->safe_psql('postgres', qq{SELECT token FROM zk_fence_tokens WHERE path = '$path'}),
	$t1, 'and records it');
is($w->query_safe(q{SELECT state FROM zk_session()}), 'closed',
	'R fenced without opening a ZooKeeper session');

# the same token again: accepted
($out, $err) = bg_query($w, qq{BEGIN; SELECT zk_fence('$path', $t1);
	UPDATE account SET balance = balance + 1 WHERE id = 1; COMMIT});
is($err, '', 'the same token is accepted again');

# --- the job loses its lock; a successor fences with a newer token
$job->query_safe(qq{SELECT zk_unlock('$path')});
my $next = verbose_session($a);
my $t2 = $next->query_safe(qq{SELECT zk_lock('$path')});
cmp_ok($t2, '>', $t1, "the successor's token $t2 is larger");
($out, $err) = bg_query($w, qq{BEGIN; SELECT zk_fence('$path', $t2);
	UPDATE account SET balance = balance + 1 WHERE id = 1; COMMIT});
is($err, '', "the successor's write is accepted");

($out, $err) = bg_query($w, qq{BEGIN; SELECT zk_fence('$path', $t1)});
error_is($err, '55000',
	qr/fencing token $t1 for lock path "\/fenced\/account" is older than the accepted token $t2/,
	'the stale holder is refused: 55000 naming path, token and the accepted one');
($out, $err) = bg_query($w, q{UPDATE account SET balance = 0 WHERE id = 1});
like($err, qr/current transaction is aborted/, 'and its transaction is aborted');
$w->query_safe('ROLLBACK');
is($r->safe_psql('postgres', q{SELECT balance FROM account}), '103',
	'the stale holder wrote nothing');

# --- transactional: a ROLLBACK takes the record back
my $big = $t2 + 1000;
$w->query_safe(qq{BEGIN; SELECT zk_fence('$path', $big); ROLLBACK});
is($r->safe_psql('postgres', qq{SELECT token FROM zk_fence_tokens WHERE path = '$path'}),
	$t2, 'a rolled back fence leaves the record as it was');
($out, $err) = bg_query($w, qq{SELECT zk_fence('$path', $t2)});
is($err, '', 'and the token it would have superseded is still accepted');

# --- concurrent fences of one path serialise
my $other = verbose_session($r);
$w->query_safe(qq{BEGIN; SELECT zk_fence('$path', $big)});
my $other_pid = $other->query_safe('SELECT pg_backend_pid()');
bg_begin($other, qq{SELECT zk_fence('$path', $t2)}, 'fence_done');
ok(wait_for(sub {
	$r->safe_psql('postgres',
		"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $other_pid") eq 'Lock' },
	30, 'the second fence to wait'),
	'a second fence of the same path waits for the first transaction');
$w->query_safe('COMMIT');
($out, $err) = bg_finish($other, 'fence_done');
error_is($err, '55000', qr/fencing token $t2 for lock path "\/fenced\/account" is older than the accepted token $big/,
	'and then sees the token the first committed');

# in REPEATABLE READ, a fence committed after the snapshot: 40001
$w->query_safe(q{BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM account});
$other->query_safe(qq{SELECT zk_fence('$path', $big)});
($out, $err) = bg_query($w, qq{SELECT zk_fence('$path', $big)});
error_is($err, '40001', qr/could not serialize access due to concurrent update/,
	'in REPEATABLE READ, a fence of the path committed after the snapshot: 40001');
$w->query_safe('ROLLBACK');

# --- the trigger
($out, $err) = bg_query($w, q{UPDATE account SET balance = 0 WHERE id = 1});
error_is($err, '55000',
	qr/write to table "account" refused: this transaction has not fenced lock path "\/fenced\/account"/,
	'an unfenced write is refused (statement trigger): 55000');
($out, $err) = bg_query($w, q{INSERT INTO ledger (note) VALUES ('unfenced')});
error_is($err, '55000', qr/write to table "ledger" refused/,
	'an unfenced write is refused (row trigger): 55000');
($out, $err) = bg_query($w, qq{BEGIN; SAVEPOINT s; SELECT zk_fence('$path', $big);
	ROLLBACK TO SAVEPOINT s; UPDATE account SET balance = 0 WHERE id = 1});
error_is($err, '55000', qr/write to table "account" refused/,
	'a fence undone by ROLLBACK TO SAVEPOINT does not count');
$w->query_safe('ROLLBACK');
($out, $err) = bg_query($w, qq{BEGIN; SAVEPOINT s; SELECT zk_fence('$path', $big);
	RELEASE SAVEPOINT s; DELETE FROM ledger WHERE note = 't1'; COMMIT});
is($err, '', 'a fence in a released subtransaction counts');
($out, $err) = bg_query($w, q{BEGIN; SELECT zk_fence('/fenced/other', 7);
	UPDATE account SET balance = 0 WHERE id = 1});
error_is($err, '55000', qr/write to table "account" refused/,
	'a fence of another path does not count');
$w->query_safe('ROLLBACK');

# --- a plain role fences, but cannot write the table
my $app = verbose_session($r);
$app->query_safe('SET ROLE app');
($out, $err) = bg_query($app, qq{BEGIN; SELECT zk_fence('$path', $big);
	UPDATE account SET balance = balance + 1 WHERE id = 1; COMMIT});
is($err, '', 'a plain role can fence and write');
for my $sql (
	q{INSERT INTO zk_fence_tokens VALUES ('/fenced/forged', 1)},
	q{UPDATE zk_fence_tokens SET token = 1},
	q{DELETE FROM zk_fence_tokens},
	q{TRUNCATE zk_fence_tokens})
{
	($out, $err) = bg_query($app, $sql);
	error_is($err, '42501', qr/permission denied for table zk_fence_tokens/,
		"a plain role cannot: $sql");
}
is($app->query_safe(qq{SELECT token FROM zk_fence_tokens WHERE path = '$path'}),
	$big, 'but can read it');
is($r->safe_psql('postgres', q{SELECT p.prosecdef AND p.proconfig::text LIKE '%search_path=pg_catalog, pg_temp%'
	FROM pg_proc p WHERE p.proname = 'zk_fence' GROUP BY 1}),
	't', 'both zk_fence functions are SECURITY DEFINER with a fixed search_path');

# --- bad input
is($w->query_safe(q{SELECT zk_fence(NULL, 1) IS NULL AND zk_fence('/x', NULL) IS NULL
	AND zk_fence(NULL) IS NULL AND zk_fence('/x', 1, NULL) IS NULL}),
	't', 'NULL arguments give NULL');
for my $tok (0, -5)
{
	($out, $err) = bg_query($w, qq{SELECT zk_fence('/x', $tok)});
	error_is($err, '22023', qr/fencing token must be positive/, "token $tok: 22023");
}
($out, $err) = bg_query($w, q{SELECT zk_fence('no/slash', 1)});
error_is($err, '22023', qr/invalid ZooKeeper lock path "no\/slash"/, 'an invalid path: 22023');
($out, $err) = bg_query($w, q{SELECT zk_fence('/a/')});
error_is($err, '22023', qr/invalid ZooKeeper lock path "\/a\/"/, 'an invalid path (own-token form): 22023');
($out, $err) = bg_query($w, q{SELECT zk_fenced()});
error_is($err, '39P01', qr/zk_fenced: must be called as trigger/,
	'zk_fenced called directly: 39P01');
$r->safe_psql('postgres', q{CREATE TABLE misuse (x int); INSERT INTO misuse VALUES (0)});
for my $t (
	[ 'BEFORE UPDATE ON misuse FOR EACH ROW EXECUTE FUNCTION zk_fenced()',
		'UPDATE misuse SET x = 1', qr/zk_fenced: must be given one argument, the lock path/ ],
	[ q{BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION zk_fenced('/a', '/b')},
		'INSERT INTO misuse VALUES (1)', qr/zk_fenced: must be given one argument, the lock path/ ],
	[ q{AFTER INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION zk_fenced('/a')},
		'INSERT INTO misuse VALUES (1)', qr/zk_fenced: must be called before insert, update or delete/ ],
	[ q{BEFORE TRUNCATE ON misuse EXECUTE FUNCTION zk_fenced('/a')},
		'TRUNCATE misuse', qr/zk_fenced: must be called on insert, update or delete/ ])
{
	my ($def, $sql, $re) = @$t;
	$r->safe_psql('postgres', "CREATE TRIGGER m $def");
	($out, $err) = bg_query($w, $sql);
	error_is($err, '39P01', $re, "trigger $def: 39P01");
	$r->safe_psql('postgres', 'DROP TRIGGER m ON misuse');
}
$r->safe_psql('postgres',
	q{CREATE TRIGGER m BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION zk_fenced('bad//path')});
($out, $err) = bg_query($w, 'INSERT INTO misuse VALUES (1)');
error_is($err, '22023', qr/invalid ZooKeeper lock path "bad\/\/path"/, 'a trigger with an invalid path: 22023');
is($w->query_safe(q{SELECT state FROM zk_session()}), 'closed',
	'R still has no ZooKeeper session');

# --- pg_dump keeps the records
my ($dump, $dump_err) = ('', '');
IPC::Run::run([ 'pg_dump', '--data-only', '-d', $r->connstr('postgres') ],
	'>', \$dump, '2>', \$dump_err);
like($dump, qr/^COPY public\.zk_fence_tokens .*\n(?:.*\n)*?\Q$path\E\t$big$/m,
	'pg_dump keeps the records of zk_fence_tokens');

# --- the own-token form, on A
my $own = verbose_session($a);
($out, $err) = bg_query($own, q{SELECT zk_fence('/own/p')});
error_is($err, '55000', qr/this backend holds no exclusive lock on lock path "\/own\/p"/,
	'zk_fence(path) without a hold: 55000');
$own->query_safe(q{SELECT zk_rlock('/own/p')});
($out, $err) = bg_query($own, q{SELECT zk_fence('/own/p')});
error_is($err, '55000', qr/this backend holds no exclusive lock on lock path "\/own\/p"\nDETAIL:  It holds the lock shared/,
	'zk_fence(path) with a shared hold only: 55000');
$own->query_safe(q{SELECT zk_unlock('/own/p')});
my $own_token = $own->query_safe(q{SELECT zk_lock('/own/p')});
is($own->query_safe(q{SELECT zk_fence('/own/p')}), $own_token,
	"zk_fence(path) fences with the session's own token");
is($own->query_safe(q{SELECT f.token = l.fencing_token
	FROM zk_fence_tokens f JOIN zk_locks l USING (path) WHERE path = '/own/p'}),
	't', 'the one zk_locks shows');

# --- verify, on A
my $v = verbose_session($a);
my $vt = $own->query_safe(q{SELECT zk_lock('/own/v')});
is($v->query_safe(qq{SELECT zk_fence('/own/v', $vt, true)}), $vt,
	'verify accepts the token of the granted exclusive holder');
my $waiter = verbose_session($a);
bg_begin($waiter, q{SELECT zk_lock('/own/v')}, 'waiter_done');
ok(wait_queue_len($a, '/own/v', 2, 30, 'the waiter to queue'), 'a second backend waits');
my $wt = $a->safe_psql('postgres', q{SELECT fencing_token FROM zk_lock_queue('/own/v') WHERE position = 2});
($out, $err) = bg_query($v, qq{SELECT zk_fence('/own/v', $wt, true)});
error_is($err, '55000', qr/fencing token $wt no longer holds lock path "\/own\/v"\nDETAIL:  The head of the lock's queue in ZooKeeper is granted exclusive node "[^"]+" with token $vt/,
	"verify refuses a waiting node's token: 55000");
$own->query_safe(q{SELECT zk_unlock('/own/v')});
bg_finish($waiter, 'waiter_done');
($out, $err) = bg_query($v, qq{SELECT zk_fence('/own/v', $vt, true)});
error_is($err, '55000', qr/fencing token $vt no longer holds lock path "\/own\/v"/,
	'verify refuses the token of a holder that released, before its successor fenced: 55000');
$waiter->query_safe(q{SELECT zk_unlock('/own/v')});
($out, $err) = bg_query($v, qq{SELECT zk_fence('/own/gone', $vt, true)});
error_is($err, '55000', qr/fencing token $vt no longer holds lock path "\/own\/gone"\nDETAIL:  The lock's queue in ZooKeeper is empty/,
	'verify of a lock nobody holds: 55000');

# a lease holds the lock in the same queue: its token passes verify while
# the lease holds, and no longer once it is released
my $lt = $own->query_safe(q{SELECT zk_lease_lock('/own/lease', '1 min')});
is($v->query_safe(qq{SELECT zk_fence('/own/lease', $lt, true)}), $lt,
	'verify accepts the token of a lease that holds the lock');
($out, $err) = bg_query($own, q{SELECT zk_fence('/own/lease')});
error_is($err, '55000', qr/this backend holds no exclusive lock on lock path "\/own\/lease"/,
	'zk_fence(path) does not take a lease for a hold of the session');
$own->query_safe(qq{SELECT zk_lease_unlock('/own/lease', $lt)});
($out, $err) = bg_query($v, qq{SELECT zk_fence('/own/lease', $lt, true)});
error_is($err, '55000', qr/fencing token $lt no longer holds lock path "\/own\/lease"/,
	'and refuses it once the lease is released');

# --- a hot standby of R
$r->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($r, 'b', has_streaming => 1);
$standby->start;
$r->wait_for_catchup($standby);
my $sb = verbose_session($standby);
is($sb->query_safe(qq{SELECT token FROM zk_fence_tokens WHERE path = '$path'}),
	$big, 'the standby has the records');
($out, $err) = bg_query($sb, qq{SELECT zk_fence('$path', $big + 1)});
error_is($err, '25006', qr/cannot execute zk_fence\(\) in a read-only transaction/,
	'zk_fence on a hot standby: 25006');

$_->quit for ($job, $next, $w, $other, $app, $own, $v, $waiter, $sb);
done_testing();
