# The schema zk_advisory: PostgreSQL's advisory-lock functions, cluster-wide,
# through two PostgreSQL servers on one ZooKeeper, turned on by search_path.
#
# - The catalog: every advisory-lock function of pg_catalog has its namesake
#   in zk_advisory with the same argument types, result type, strictness and
#   volatility, and zk_advisory has nothing else.
# - Key space: the same key in same-named databases on two servers is one
#   lock; another database name is another lock; (bigint) and (int, int)
#   keys never collide; a database name with "/", spaces, non-ASCII and "__"
#   maps to the documented node name, shown in zk_locks and zk_lock_queue;
#   negative and 0 keys; NULL gives NULL; a kazoo WriteLock on the documented
#   node takes the same lock.
# - CREATE EXTENSION in a new database by a role whose search_path names
#   zk_advisory first (the database has no zk_advisory yet): it succeeds,
#   without naming a schema, and the extension is in public.
# - Semantics: shared and exclusive, stacking, session and transaction
#   scope, PostgreSQL's WARNING (01000) and false for an unlock of a key not
#   held in that mode, pg_advisory_unlock_all releasing advisory locks only,
#   DISCARD ALL, a deadlock across servers (40P01), and pg_catalog.-qualified
#   calls keeping PostgreSQL's local locks.
# - Upgrade, as in PostgreSQL: a session holding a key shared takes it
#   exclusive, waiting only for other sessions' holds (a try fails while one
#   shares it), ahead of writers that wait for the session itself; two
#   sessions upgrading one key deadlock (40P01); downgrade and upgrade again;
#   an upgrade in transaction scope.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

my $zk = zk_standalone();
my $conf = "deadlock_timeout = '200ms'\n";
my $na = pg_with_zklock('a', $zk, $conf);
my $nb = pg_with_zklock('b', $zk, $conf);

# --- the catalog: zk_advisory mirrors pg_catalog's advisory-lock functions
sub signatures
{
	my ($schema, $filter) = @_;
	return $na->safe_psql('postgres', qq{
	SELECT string_agg(format('%s(%s) -> %s strict=%s volatile=%s',
	                         p.proname, pg_get_function_identity_arguments(p.oid),
	                         p.prorettype::regtype, p.proisstrict, p.provolatile),
	                  E'\\n' ORDER BY p.proname COLLATE "C",
	                  pg_get_function_identity_arguments(p.oid) COLLATE "C")
	FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	WHERE n.nspname = '$schema' AND $filter});
}
my $pg = signatures('pg_catalog', q{p.proname LIKE 'pg%advisory%'});
my $zkadv = signatures('zk_advisory', 'true');
my $count = () = $pg =~ /\n/g;
cmp_ok($count + 1, '==', 21, 'pg_catalog has 21 advisory-lock functions');
is($zkadv, $pg,
	'zk_advisory has each of them with the same arguments, result, strictness and volatility, and nothing else'
);

# --- turned on by search_path: per role on A, per database on B
my $user = $na->safe_psql('postgres', 'SELECT current_user');
$na->safe_psql('postgres',
	qq{ALTER ROLE "$user" SET search_path = zk_advisory, pg_catalog, "\$user", public});
$nb->safe_psql('postgres',
	q{ALTER DATABASE postgres SET search_path = zk_advisory, pg_catalog, "$user", public});
is( $na->safe_psql('postgres',
		q{SELECT pronamespace::regnamespace FROM pg_proc WHERE oid = 'pg_advisory_lock(bigint)'::regprocedure}),
	'zk_advisory',
	'with the search_path, an unqualified pg_advisory_lock is zk_advisory\'s');

my $sa = verbose_session($na);
my $sb = verbose_session($nb);

# lock path of a key in database postgres
sub path_of { return "/pg_advisory/postgres/$_[0]"; }

# one query on B, in a new session
sub b { return $nb->safe_psql('postgres', $_[0]); }

$sa->query_safe('SELECT pg_advisory_lock(42)');
is(b('SELECT pg_try_advisory_lock(42)'), 'f',
	'the same key in the same-named database on another server is one lock');
is(b('SELECT pg_catalog.pg_try_advisory_lock(42)'), 't',
	'pg_catalog.pg_try_advisory_lock keeps PostgreSQL\'s local lock');
is(b('SELECT pg_try_advisory_lock(0, 42)'), 't',
	'(int, int) keys never collide with (bigint) keys');
is( $sa->query_safe(q{SELECT path || ' ' || mode || ' ' || scope FROM zk_locks}),
	path_of(42) . ' exclusive session',
	'zk_locks shows the key\'s lock path');
is(queue_rows($nb, path_of(42), q{cluster_name || ':' || mode}),
	'a:exclusive', 'zk_lock_queue on B shows A\'s holder');

$nb->safe_psql('postgres', 'CREATE DATABASE other');
$nb->safe_psql('other', 'CREATE EXTENSION zklock');
is($nb->safe_psql('other', 'SELECT zk_advisory.pg_try_advisory_lock(42)'),
	't', 'another database name is another key space');

# stacking
$sa->query_safe('SELECT pg_advisory_lock(42)');
$sa->query_safe('SELECT pg_advisory_unlock(42)');
is(b('SELECT pg_try_advisory_lock(42)'), 'f',
	'taken twice and released once, the lock is still held');
is($sa->query_safe('SELECT pg_advisory_unlock(42)'), 't',
	'the second release returns true');
is(b('SELECT pg_try_advisory_lock(42)'), 't',
	'released as often as taken, the lock is free at once (synchronous release)');
my ($out, $err) = bg_query($sa, 'SELECT pg_advisory_unlock(42)');
is($out, 'f', 'an unlock of a key not held returns false');
warning_is($err, '01000', qr/you don't own a lock of type ExclusiveLock\n/,
	'with PostgreSQL\'s WARNING for ExclusiveLock');
($out, $err) = bg_query($sa, 'SELECT pg_advisory_unlock_shared(1, 2)');
is($out, 'f', 'an unlock_shared of a key not held returns false');
warning_is($err, '01000', qr/you don't own a lock of type ShareLock\n/,
	'with PostgreSQL\'s WARNING for ShareLock');

# shared and exclusive
$sa->query_safe('SELECT pg_advisory_lock_shared(-1, -2)');
is(b('SELECT pg_try_advisory_lock_shared(-1, -2) AND pg_advisory_unlock_shared(-1, -2)'),
	't', 'a shared lock admits another server\'s shared lock');
is(b('SELECT pg_try_advisory_lock(-1, -2)'), 'f',
	'but not its exclusive lock');
($out, $err) = bg_query($sa, 'SELECT pg_advisory_unlock(-1, -2)');
is($out, 'f', 'pg_advisory_unlock does not release a shared hold');
is($sa->query_safe('SELECT pg_advisory_unlock_shared(-1, -2)'),
	't', 'pg_advisory_unlock_shared does');

# extreme keys and NULL
$sa->query_safe(
	'SELECT pg_advisory_lock(-9223372036854775808), pg_advisory_lock(0), pg_advisory_lock(-2147483648, 2147483647)'
);
is( $sa->query_safe(q{SELECT string_agg(path, ' ' ORDER BY path COLLATE "C") FROM zk_locks}),
	join(' ',
		sort(path_of('-2147483648,2147483647'),
			path_of('-9223372036854775808'), path_of('0'))),
	'negative and 0 keys are keys like the others');
is(b('SELECT pg_try_advisory_lock(-9223372036854775808)'),
	'f', 'the smallest bigint key is held across servers');
is(b(q{SELECT coalesce(pg_advisory_lock(NULL)::text, 'null') || ' ' || coalesce(pg_try_advisory_lock(1, NULL)::text, 'null')}),
	'null null', 'STRICT: a NULL key gives NULL');

# pg_advisory_unlock_all releases advisory locks only
$sa->query_safe(q{SELECT zk_lock('/not/advisory')});
$sa->query_safe('SELECT pg_advisory_unlock_all()');
is($sa->query_safe(q{SELECT string_agg(path, ' ') FROM zk_locks}),
	'/not/advisory', 'pg_advisory_unlock_all releases every advisory lock and nothing else');
is(b('SELECT pg_try_advisory_lock(0)'), 't', 'the keys are free on B at once');
$sa->query_safe(q{SELECT zk_unlock('/not/advisory')});

# transaction scope
$sa->query_safe('BEGIN');
$sa->query_safe('SELECT pg_advisory_xact_lock(7)');
is(b('SELECT pg_try_advisory_xact_lock(7)'), 'f',
	'a transaction lock excludes the other server');
($out, $err) = bg_query($sa, 'SELECT pg_advisory_unlock(7)');
warning_is($err, '01000', qr/you don't own a lock of type ExclusiveLock\n/,
	'pg_advisory_unlock does not release a transaction lock');
$sa->query_safe('COMMIT');
is(b('SELECT pg_try_advisory_xact_lock(7)'), 't',
	'COMMIT releases it, synchronously');
$sa->query_safe('BEGIN');
is($sa->query_safe('SELECT pg_try_advisory_xact_lock_shared(7)'), 't',
	'pg_try_advisory_xact_lock_shared');
$sa->query_safe('ROLLBACK');
is($sa->query_safe('SELECT count(*) FROM zk_locks'), '0',
	'ROLLBACK releases it');

# DISCARD ALL
$sa->query_safe('SELECT pg_advisory_lock(8), pg_advisory_lock_shared(8, 8)');
$sa->query_safe('DISCARD ALL');
is($sa->query_safe('SELECT count(*) FROM zk_locks'), '0',
	'DISCARD ALL releases the session\'s advisory locks');
is(b('SELECT pg_try_advisory_lock(8)'), 't', 'at once on B');

# a database name with "/", a space, non-ASCII and "__"
my $odd = "my db/\xc3\xbc__x";    # UTF-8 bytes
my $encoded = 'my%20db%2F%C3%BC_%5Fx';
for my $n ($na, $nb)
{
	$n->safe_psql('postgres', qq{CREATE DATABASE "$odd" ENCODING 'UTF8' TEMPLATE template0});
}
# A's role names zk_advisory first, which this database lacks until then
# (so the first schema of its search_path that exists is pg_catalog): the
# extension goes to public all the same
is($na->safe_psql($odd, 'SHOW search_path'), 'zk_advisory, pg_catalog, "$user", public',
	'the new database is entered with zk_advisory first in search_path');
{
	my ($rc, $out, $err) = $na->psql($odd, 'CREATE EXTENSION zklock',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	is($rc . $err, '0', 'CREATE EXTENSION zklock with that search_path, without naming a schema, succeeds');
}
is($na->safe_psql($odd, q{SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'zklock'}),
	'public', 'and puts the extension in public');
$nb->safe_psql($odd, 'CREATE EXTENSION zklock');
my $so = $na->background_psql($odd);
$so->query_safe('SELECT zk_advisory.pg_advisory_lock(5)');
is($so->query_safe('SELECT path FROM zk_locks'),
	"/pg_advisory/$encoded/5",
	'a database name outside the lock-path rules is percent-encoded in the path');
is($nb->safe_psql($odd, 'SELECT zk_advisory.pg_try_advisory_lock(5)'),
	'f', 'and is one lock across servers');
is($nb->safe_psql('postgres', 'SELECT pg_try_advisory_lock(5)'),
	't', 'distinct from another database\'s key');
$so->quit;

# kazoo on the documented node takes the same lock (doc/interop.md's patterns)
$sa->query_safe('SELECT pg_advisory_lock(900)');
my $kazoo_try = q{
w = c.WriteLock('/zklock/pg_advisory/postgres/900', 't', extra_lock_patterns=['__WRIT__', '__READ__'])
got = w.acquire(blocking=False)
print(got)
if got:
    w.release()};
is(kazoo_run($zk, $kazoo_try), 'False',
	'a kazoo WriteLock on /zklock/pg_advisory/postgres/900 sees the key held');
$sa->query_safe('SELECT pg_advisory_unlock(900)');
is(kazoo_run($zk, $kazoo_try), 'True', 'and takes it once released');

# a deadlock across servers: exactly one 40P01
$sa->query_safe('SELECT pg_advisory_lock(100)');
$sb->query_safe('SELECT pg_advisory_lock(200)');
bg_begin($sa, 'SELECT pg_advisory_lock(200)', 'a_done');
ok(wait_queue_len($na, path_of(200), 2, 10, 'A queued'), 'A waits for B');
bg_begin($sb, 'SELECT pg_advisory_lock(100)', 'b_done');
my ($out_b, $err_b) = bg_finish($sb, 'b_done');
error_is($err_b, '40P01', qr/deadlock detected\n/,
	'two servers waiting for each other\'s advisory lock: 40P01');
$sb->query_safe('SELECT pg_advisory_unlock_all()');
my ($out_a, $err_a) = bg_finish($sa, 'a_done');
unlike($err_a, qr/ERROR/, 'the other one gets its lock');
$sa->query_safe('SELECT pg_advisory_unlock_all()');

# upgrade: a session holding a key shared may take it exclusive, as in
# PostgreSQL; it waits only for the other sessions' holds
$sa->query_safe('SELECT pg_advisory_lock_shared(300)');
$sb->query_safe('SELECT pg_advisory_lock_shared(300)');
is($sa->query_safe('SELECT pg_try_advisory_lock(300)'), 'f',
	'upgrade: a try returns false while another session shares the key');
is(queue_len($na, path_of(300)), '2', 'and leaves nothing behind');
$sb->query_safe('SELECT pg_advisory_unlock_shared(300)');
is($sa->query_safe('SELECT pg_try_advisory_lock(300)'), 't',
	'upgrade: granted once the other session let go of its share');
is(b('SELECT pg_try_advisory_lock_shared(300)'), 'f',
	'the upgraded key excludes another server\'s readers');
$sa->query_safe('SELECT pg_advisory_unlock(300)');
is(b('SELECT pg_try_advisory_lock_shared(300) AND pg_advisory_unlock_shared(300)'), 't',
	'after the exclusive unlock, the session\'s share admits readers again');
is(b('SELECT pg_try_advisory_lock(300)'), 'f', 'but no writer');
$sa->query_safe('SELECT pg_advisory_unlock_shared(300)');

# the upgrade does not wait for a writer that waits for the session itself
$sa->query_safe('SELECT pg_advisory_lock_shared(301)');
bg_begin($sb, 'SELECT pg_advisory_lock(301)', 'b_301');
ok(wait_queue_len($na, path_of(301), 2, 10, 'B queued'), 'B waits for A\'s share');
{
	# a lock_timeout far above "at once": a wait behind the writer ends in
	# 55P03 instead of the grant
	my $t0 = time();
	my ($got, $err) = bg_query($sa,
		q{SET lock_timeout = '5s'; SELECT 'granted' FROM (SELECT pg_advisory_lock(301)) g; RESET lock_timeout});
	my $secs = time() - $t0;
	is("$got|$err", 'granted|', 'upgrade: granted, ahead of the writer that waits for the share');
	cmp_ok($secs, '<', 2.5, 'upgrade: at once (not after the lock_timeout of 5 s)');
}
$sa->query_safe('SELECT pg_advisory_unlock_shared(301)');
is(queue_rows($nb, path_of(301), q{cluster_name || ':' || mode || ':' || granted}),
	'a:shared:true,b:exclusive:false,a:exclusive:true',
	'the shared node stays while the exclusive one lasts: B queued between them; zk_lock_queue shows the upgrade granted');
ok(!bg_done($sb, 'b_301'), 'B still waits while A holds the key exclusive');
$sa->query_safe('SELECT pg_advisory_unlock(301)');
($out, $err) = bg_finish($sb, 'b_301');
unlike($err, qr/ERROR/, 'B gets the key once A released it');
$sb->query_safe('SELECT pg_advisory_unlock(301)');

# two sessions upgrading the same key deadlock (40P01), as in PostgreSQL
$sa->query_safe('SELECT pg_advisory_lock_shared(302)');
$sb->query_safe('SELECT pg_advisory_lock_shared(302)');
bg_begin($sa, 'SELECT pg_advisory_lock(302)', 'a_302');
ok(wait_queue_len($na, path_of(302), 3, 10, 'A queued'), 'A\'s upgrade waits for B\'s share');
is(queue_rows($nb, path_of(302), q{cluster_name || ':' || mode || ':' || granted}),
	'a:shared:true,b:shared:true,a:exclusive:false',
	'zk_lock_queue shows the upgrade waiting while another session shares the key');
bg_begin($sb, 'SELECT pg_advisory_lock(302)', 'b_302');
($out_b, $err_b) = bg_finish($sb, 'b_302');
error_is($err_b, '40P01', qr/deadlock detected\n/,
	'two sessions upgrading the same key: 40P01');
ok(!bg_done($sa, 'a_302'), 'A still waits: B keeps its session share');
$sb->query_safe('SELECT pg_advisory_unlock_shared(302)');
($out_a, $err_a) = bg_finish($sa, 'a_302');
unlike($err_a, qr/ERROR/, 'A\'s upgrade is granted once B let go');
$sa->query_safe('SELECT pg_advisory_unlock_all()');

# downgrade and upgrade again with a writer queued between: the nodes of
# the key stay at two, and the writer waits until every hold is gone
$sa->query_safe('SELECT pg_advisory_lock(303)');
bg_begin($sb, 'SELECT pg_advisory_lock(303)', 'b_303');
ok(wait_queue_len($na, path_of(303), 2, 10, 'B queued'), 'B waits for A');
$sa->query_safe('SELECT pg_advisory_lock_shared(303)');
$sa->query_safe('SELECT pg_advisory_unlock(303)');
$sa->query_safe('SELECT pg_advisory_lock(303)');
is(queue_rows($na, path_of(303), q{cluster_name || ':' || mode}),
	'a:exclusive,b:exclusive,a:shared',
	'exclusive, shared, exclusive again: the first exclusive node is taken again');
$sa->query_safe('SELECT pg_advisory_unlock(303)');
ok(!bg_done($sb, 'b_303'), 'B waits while A shares the key');
$sa->query_safe('SELECT pg_advisory_unlock_shared(303)');
($out, $err) = bg_finish($sb, 'b_303');
unlike($err, qr/ERROR/, 'B gets the key once A let go of every hold');
$sb->query_safe('SELECT pg_advisory_unlock_all()');

# an upgrade in transaction scope, with a writer queued between: COMMIT
# releases both nodes, whichever goes first
$sa->query_safe('BEGIN');
$sa->query_safe('SELECT pg_advisory_xact_lock_shared(304)');
bg_begin($sb, 'SELECT pg_advisory_lock(304)', 'b_304');
ok(wait_queue_len($na, path_of(304), 2, 10, 'B queued'), 'B waits for A\'s transaction share');
$sa->query_safe('SELECT pg_advisory_xact_lock(304)');
is($sa->query_safe(q{SELECT string_agg(mode || ':' || scope, ',' ORDER BY mode) FROM zk_locks}),
	'exclusive:transaction,shared:transaction', 'a transaction upgrade is granted at once');
ok(!bg_done($sb, 'b_304'), 'B still waits');
$sa->query_safe('COMMIT');
($out, $err) = bg_finish($sb, 'b_304');
unlike($err, qr/ERROR/, 'COMMIT releases both holds, and B gets the key');
$sb->query_safe('SELECT pg_advisory_unlock(304)');

ok(wait_queues_empty($na, [ map { path_of($_) } 42, 7, 8, 100, 200, 0, 300, 301, 302, 303, 304 ], 10,
		'queues empty'),
	'nothing left behind');

$sa->quit;
$sb->quit;
done_testing();
