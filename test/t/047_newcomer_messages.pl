# What a newcomer is told: the messages and documented behaviours a first
# user meets, checked by SQLSTATE against real servers.
#
# - Two zklock backends on one path, one with exclusive_node_style 'mutex',
#   one with 'rwlock': the WARNING (01000) names both styles, says that
#   another zklock backend or client uses the other style, and names the
#   mutex-style node; from either side.
# - More locks than zklock.max_locks_per_backend (53400): a role that is not
#   superuser is told to ask a superuser to raise it (it cannot itself); a
#   superuser is told to raise it.
# - A session setting changed back by the end of a SET LOCAL while locks are
#   held: the next zklock call is 55000 with a HINT on setting it back, or on
#   releasing session and transaction locks; zk_unlock_all() then works, and
#   the call after it opens a session with the new settings.
# - SET LOCAL zklock.synchronous_release outside a transaction block: a
#   WARNING 25P01 and no effect; inside one, it holds for the transaction.
# - A lease taken in an INSERT whose transaction rolls back stays held; its
#   token is found again in zk_lock_queue and releases it.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $a = pg_with_zklock('a', $zk);

# --- two zklock backends, two node styles, one path
{
	my $m = verbose_session($a);
	my $r = verbose_session($a);
	$m->query_safe(q{SET zklock.exclusive_node_style = 'mutex'});
	$m->query_safe(q{SELECT zk_lock('/style/p')});
	my $mnode = $a->safe_psql('postgres',
		q{SELECT substring(znode from '[^/]*$') FROM zk_lock_queue('/style/p')});
	like($mnode, qr/-lock-[0-9]{10}$/, 'the mutex-style backend holds a "-lock-" node');

	my ($out, $err) = bg_query($r, q{SELECT zk_try_lock('/style/p', 100)});
	is($out, 'f', 'an rwlock-style backend waits for it, and gives up');
	warning_is($err, '01000',
		qr/ZooKeeper lock "\/style\/p" is used with two node styles, "mutex" and "rwlock"\nDETAIL:  Node "\Q$mnode\E" has the mutex style and other nodes of the queue the rwlock style: another zklock backend \(zklock.exclusive_node_style\) or another client uses the other style on this path\./,
		'the rwlock-style backend is warned (01000) of the two styles, naming both and the mutex-style node');
	like($err, qr/HINT:  Use one node style per path: zklock.exclusive_node_style = 'mutex' where/,
		'with a HINT naming the setting');
	unlike($err, qr/does not see zklock's queue nodes/,
		'no word of a client blind to zklock: it is another zklock backend');
	$m->query_safe(q{SELECT zk_unlock_all()});

	# the other way round: the rwlock-style backend holds, the mutex-style one waits
	$r->query_safe(q{SELECT zk_lock('/style/q')});
	($out, $err) = bg_query($m, q{SELECT zk_try_lock('/style/q', 100)});
	is($out, 'f', 'a mutex-style backend waits for an rwlock-style holder, and gives up');
	warning_is($err, '01000',
		qr/ZooKeeper lock "\/style\/q" is used with two node styles, "mutex" and "rwlock"\nDETAIL:  Node "[^"]*-lock-[0-9]{10}" has the mutex style/,
		'it is warned (01000) too, naming its own mutex-style node');
	$r->query_safe(q{SELECT zk_unlock_all()});
	$_->quit for ($m, $r);
}

# --- zklock.max_locks_per_backend: whom to ask
$a->safe_psql('postgres', q{
CREATE ROLE plain LOGIN;
ALTER ROLE plain SET zklock.max_locks_per_backend = 1;
});
{
	my ($rc, $out, $err) = $a->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT zk_lock('/cap/a');\nSELECT zk_lock('/cap/b');",
		extra_params => [ '-U', 'plain' ]);
	error_is($err, '53400',
		qr/too many ZooKeeper locks held by this backend\nDETAIL:  This backend holds 1 lock; zklock.max_locks_per_backend is 1\.\nHINT:  Release some locks, or ask a superuser to raise zklock.max_locks_per_backend\./,
		'a role that is not superuser is told to ask a superuser to raise the limit (53400)');
	($rc, $out, $err) = $a->psql('postgres',
		"\\set VERBOSITY verbose\nSET zklock.max_locks_per_backend = 1;\n"
		  . "SELECT zk_lock('/cap/a');\nSELECT zk_lock('/cap/b');");
	error_is($err, '53400',
		qr/too many ZooKeeper locks held by this backend\n(?:.*\n)?HINT:  Release some locks, or raise zklock.max_locks_per_backend\./,
		'a superuser is told to raise it (53400)');
}

# --- a session setting changed back while locks are held
{
	my $s = verbose_session($a);
	$s->query_safe('BEGIN');
	$s->query_safe(q{SET LOCAL zklock.session_timeout = '3s'});
	$s->query_safe(q{SELECT zk_lock('/switch/a')});
	$s->query_safe(q{SELECT zk_xact_lock('/switch/x')});
	is($s->query_safe('SELECT timeout_ms FROM zk_session()'), '3000',
		'the session was opened with the SET LOCAL value');
	$s->query_safe('COMMIT');
	my ($out, $err) = bg_query($s, q{SELECT zk_lock('/switch/b')});
	error_is($err, '55000',
		qr/cannot switch to a new ZooKeeper session while this backend holds ZooKeeper locks\nDETAIL:  .*\nHINT:  Set the changed setting back to the value this session was opened with \(SET is allowed for that while locks are held\), or release the locks first: zk_unlock_all\(\) releases session locks, and transaction locks go when their transaction ends \(COMMIT or ROLLBACK\); the next zklock call then opens a session with the new settings\./,
		'the next zklock call, the SET LOCAL over, is 55000 with a HINT on setting it back or releasing both kinds of lock');
	# what works on the session the locks were taken on is not refused
	($out, $err) = bg_query($s, q{SELECT path FROM zk_locks});
	is("$out|$err", '/switch/a|', 'zk_locks works in that state');
	($out, $err) = bg_query($s, q{SELECT zk_unlock('/switch/a')});
	is("$out|$err", 't|', 'so does zk_unlock');
	($out, $err) = bg_query($s, q{SELECT zk_unlock_all()});
	is($err, '', 'and zk_unlock_all()');
	($out, $err) = bg_query($s, q{SELECT zk_lock('/switch/b') > 0});
	is($out, 't', 'and the next call takes its lock');
	isnt($s->query_safe('SELECT timeout_ms FROM zk_session()'), '3000',
		'on a session opened with the setting as it is now');
	$s->query_safe(q{SELECT zk_unlock_all()});
	$s->quit;
}

# --- SET LOCAL zklock.synchronous_release
{
	my $s = verbose_session($a);
	# (zklock's settings exist once the library is loaded)
	$s->query_safe(q{SELECT count(*) FROM zk_locks});
	my ($out, $err) = bg_query($s, q{SET LOCAL zklock.synchronous_release = off});
	warning_is($err, '25P01', qr/SET LOCAL can only be used in transaction blocks/,
		'SET LOCAL outside a transaction block is a WARNING (25P01)');
	is($s->query_safe('SHOW zklock.synchronous_release'), 'on', 'and has no effect');
	$s->query_safe('BEGIN');
	$s->query_safe(q{SET LOCAL zklock.synchronous_release = off});
	is($s->query_safe('SHOW zklock.synchronous_release'), 'off',
		'inside one, it holds for the transaction');
	$s->query_safe('COMMIT');
	is($s->query_safe('SHOW zklock.synchronous_release'), 'on', 'and ends with it');
	$s->quit;
}

# --- a lease taken in a transaction that rolls back
{
	$a->safe_psql('postgres',
		'CREATE TABLE job_runs (job text PRIMARY KEY, lease bigint)');
	my $s = verbose_session($a);
	$s->query_safe('BEGIN');
	my $token = $s->query_safe(q{INSERT INTO job_runs (job, lease)
		VALUES ('nightly', zk_lease_lock('/lease/rb', '5 min')) RETURNING lease});
	$s->query_safe('ROLLBACK');
	is($a->safe_psql('postgres', 'SELECT count(*) FROM job_runs'), '0',
		'the row that kept the token was rolled back');
	is($a->safe_psql('postgres',
			q{SELECT fencing_token FROM zk_lock_queue('/lease/rb') WHERE granted}),
		$token, 'the lease is still held, and zk_lock_queue shows its token');
	is($a->safe_psql('postgres',
			q{SELECT zk_try_lock('/lease/rb')}), 'f', 'nobody else can take the lock');
	is($a->safe_psql('postgres',
			q{SELECT zk_lease_unlock('/lease/rb', fencing_token) FROM zk_lock_queue('/lease/rb') WHERE granted}),
		't', 'the token found there releases it');
	is($a->safe_psql('postgres', q{SELECT count(*) FROM zk_lock_queue('/lease/rb')}),
		'0', 'and the lock is free');
	$s->quit;
}

done_testing();
