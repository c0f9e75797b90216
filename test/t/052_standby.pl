# zklock on a hot standby: a primary, a standby made with pg_basebackup
# (streaming replication, hot_standby = on) and a third server, all on one
# ZooKeeper.  CREATE EXTENSION runs on the primary only and reaches the
# standby by replication.  On the standby: session and transaction locks,
# shared locks, lock sets, semaphores, leases, barriers, zk_advisory,
# inspection (zk_locks, zk_lock_queue, zk_cluster_locks, zk_session) and
# statistics, each contended with the primary and the third server.  Then
# the standby is promoted while one of its backends holds locks: the locks
# survive (same backend, same ZooKeeper session).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $conf = "zklock.hosts = '$zk->{hosts}'\n"
  . "shared_preload_libraries = 'zklock'\n"
  . "log_line_prefix = '%m [%p] %q%a '\n";

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf . "cluster_name = 'primary'\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION zklock');

# pg_basebackup of the primary, streaming from it
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby = on\ncluster_name = 'standby'\n");
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't',
	'the standby is in recovery');
is($standby->safe_psql('postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
	'1.5', 'the extension reached the standby by replication');

my $third = pg_with_zklock('third', $zk);

sub sb { return $standby->safe_psql('postgres', $_[0]); }
sub pr { return $primary->safe_psql('postgres', $_[0]); }
sub th { return $third->safe_psql('postgres', $_[0]); }

my $hs = $standby->background_psql('postgres', on_error_stop => 0);
$hs->query_safe('\set VERBOSITY verbose');

# --- session locks, exclusive and shared
$hs->query_safe(q{SELECT zk_lock('/sb/x')});
is(pr(q{SELECT zk_try_lock('/sb/x')}), 'f', 'a standby\'s session lock excludes the primary');
is(th(q{SELECT zk_try_rlock('/sb/x')}), 'f', 'and a third server\'s reader');
$hs->query_safe(q{SELECT zk_unlock('/sb/x')});
is(pr(q{SELECT zk_try_lock('/sb/x') AND zk_unlock('/sb/x')}), 't',
	'released by zk_unlock on the standby');

$hs->query_safe(q{SELECT zk_rlock('/sb/r')});
is(pr(q{SELECT zk_try_rlock('/sb/r') AND zk_unlock('/sb/r')}), 't',
	'a standby\'s shared lock admits the primary\'s reader');
is(th(q{SELECT zk_try_lock('/sb/r')}), 'f', 'but not a third server\'s writer');
$hs->query_safe(q{SELECT zk_unlock('/sb/r')});

# --- a lock held on the primary, waited for on the standby
my $hp = $primary->background_psql('postgres');
$hp->query_safe(q{SELECT zk_lock('/sb/w')});
is(sb(q{SELECT zk_try_lock('/sb/w', 100)}), 'f', 'the standby waits for the primary\'s lock');
bg_begin($hs, q{SELECT zk_lock('/sb/w') > 0 AS got}, 'sb_got');
ok(wait_queue_len($third, '/sb/w', 2, 10, 'standby queued'), 'the standby queues');
is(queue_rows($third, '/sb/w', q{cluster_name || ':' || granted}),
	'primary:true,standby:false', 'zk_lock_queue on the third server shows both');
$hp->query_safe(q{SELECT zk_unlock('/sb/w')});
my ($out) = bg_finish($hs, 'sb_got');
like($out, qr/\bt\b/, 'the standby gets the lock once the primary releases it');
$hs->query_safe(q{SELECT zk_unlock('/sb/w')});

# --- transaction locks in a read-only transaction
$hs->query_safe('BEGIN');
$hs->query_safe(q{SELECT zk_xact_lock('/sb/t')});
is(pr(q{SELECT zk_try_xact_lock('/sb/t')}), 'f', 'a standby\'s transaction lock holds');
$hs->query_safe('COMMIT');
is(pr(q{SELECT zk_try_xact_lock('/sb/t')}), 't', 'COMMIT on the standby releases it');
$hs->query_safe('BEGIN');
$hs->query_safe(q{SELECT zk_xact_rlock('/sb/t')});
$hs->query_safe('ROLLBACK');
is(th(q{SELECT zk_try_xact_lock('/sb/t')}), 't', 'and ROLLBACK');

# --- lock sets
$hs->query_safe(q{SELECT zk_lock(ARRAY['/sb/s1', '/sb/s2'])});
is(th(q{SELECT zk_try_lock(ARRAY['/sb/s2', '/sb/s3'])}), 'f', 'a standby\'s lock set holds');
is(th(q{SELECT count(*) FROM zk_lock_queue('/sb/s3')}), '0', 'and the refused set left nothing');
$hs->query_safe(q{SELECT zk_unlock(ARRAY['/sb/s1', '/sb/s2'])});

# --- semaphores
$hs->query_safe(q{SELECT zk_semaphore_acquire('/sb/sem', 2)});
$hp->query_safe(q{SELECT zk_semaphore_acquire('/sb/sem', 2)});
is(th(q{SELECT zk_try_semaphore_acquire('/sb/sem', 2)}), 'f',
	'a semaphore shared by the standby and the primary is full for the third');
$hs->query_safe(q{SELECT zk_semaphore_release('/sb/sem')});
is(th(q{SELECT zk_try_semaphore_acquire('/sb/sem', 2) AND zk_semaphore_release('/sb/sem')}),
	't', 'the standby\'s release frees a lease');
$hp->query_safe(q{SELECT zk_semaphore_release('/sb/sem')});

# --- leases, taken on the standby, renewed and released elsewhere
my $token = sb(q{SELECT zk_lease_lock('/sb/lease', '1 min')});
ok($token > 0, 'the standby takes a lease');
is(pr(q{SELECT zk_try_lock('/sb/lease')}), 'f', 'the lease excludes the primary');
ok(th(qq{SELECT zk_lease_renew('/sb/lease', $token) > now()}) eq 't',
	'the third server renews it');
is(sb(qq{SELECT zk_lease_unlock('/sb/lease', $token)}), 't', 'the standby releases it');

# --- barriers
is(sb(q{SELECT zk_barrier_set('/sb/barrier')}), 't', 'the standby raises a barrier');
is(pr(q{SELECT zk_barrier_wait('/sb/barrier', 100)}), 'f', 'the primary waits at it');
is(th(q{SELECT zk_barrier_remove('/sb/barrier')}), 't', 'the third removes it');
is(sb(q{SELECT zk_barrier_wait('/sb/barrier', 100)}), 't', 'the standby passes it');

# --- zk_advisory, schema-qualified
$hs->query_safe('SELECT zk_advisory.pg_advisory_lock(1)');
is(pr('SELECT zk_advisory.pg_try_advisory_lock(1)'), 'f',
	'a standby\'s zk_advisory lock excludes the primary (same database name)');
$hs->query_safe('SELECT zk_advisory.pg_advisory_unlock(1)');

# --- inspection and statistics
$hs->query_safe(q{SELECT zk_lock('/sb/held'), zk_rlock('/sb/held2')});
is($hs->query_safe(q{SELECT string_agg(path || ':' || mode, ',' ORDER BY path) FROM zk_locks}),
	'/sb/held:exclusive,/sb/held2:shared', 'zk_locks on the standby');
is(sb(q{SELECT string_agg(cluster_name || ':' || mode, ',') FROM zk_lock_queue('/sb/held')}),
	'standby:exclusive', 'zk_lock_queue on the standby');
is(sb(q{SELECT count(*) FROM zk_cluster_locks('/sb')}), '2', 'zk_cluster_locks on the standby');
is($hs->query_safe(q{SELECT state || ':' || locks_held FROM zk_session()}),
	'connected:2', 'zk_session on the standby');
cmp_ok(sb('SELECT acquired FROM zk_stat'), '>', 0,
	'zk_stat on the standby counts its acquisitions');
sb('SELECT zk_stat_reset()');
is(sb('SELECT acquired FROM zk_stat'), '0', 'zk_stat_reset on the standby zeroes them');

# --- promotion while the backend holds locks
$standby->promote;
is(sb('SELECT pg_is_in_recovery()'), 'f', 'the standby is promoted');
is($hs->query_safe(q{SELECT string_agg(path || ':' || mode, ',' ORDER BY path) FROM zk_locks}),
	'/sb/held:exclusive,/sb/held2:shared', 'the same backend still holds its locks');
is($hs->query_safe(q{SELECT state || ':' || locks_held FROM zk_session()}),
	'connected:2', 'in the same ZooKeeper session');
is(th(q{SELECT zk_try_rlock('/sb/held')}), 'f', 'the third server still cannot take them');
$hs->query_safe(q{SELECT zk_unlock_all()});
is(th(q{SELECT zk_try_lock('/sb/held') AND zk_unlock('/sb/held')}), 't',
	'released after promotion');

ok(wait_for(sub { th(q{SELECT count(*) FROM zk_cluster_locks('/sb')}) eq '0' }, 10, 'nothing left'),
	'nothing left behind');
$hs->quit;
$hp->quit;
done_testing();
