# Node data that zklock did not write: another ZooKeeper client (kazoo,
# here) writes garbage, huge values, truncated JSON, deep nesting and
# about 1 MB of data into live nodes of every kind while the recipes and
# the inspection functions run.
#
# - Lock queue nodes: zk_lock_queue, zk_cluster_locks and zk_blocking_pids
#   keep the node as a queue member with empty owner columns; data that
#   claims to be zklock's (a JSON object) and fails a check is a WARNING
#   01000 naming the node, with the reason; data that is not a JSON object
#   (what Curator and kazoo store) is no WARNING.  At most one WARNING per
#   node per statement, and at most 100 nodes named in one statement.
#   Another backend's try-lock still fails while the holder holds, and its
#   waiter still gets the lock once it is released.
# - Leases: a lease's node whose data is not a lease's is a WARNING in the
#   views; the backend that took the lease renews it with its own ttl and
#   writes its own data back; another backend reads the ttl from the data,
#   bounded by ZooKeeper's largest, never longer than the shortest it saw;
#   data without a ttl is XX001 for it, and nothing is written.
# - A semaphore node's recorded limit replaced by garbage, or by 1 MB: a
#   WARNING naming the node, the acquire goes on; a lease node of the
#   semaphore with garbage: a WARNING in zk_cluster_locks.
# - A double barrier's "ready" node rewritten: its list of the round is
#   not trusted (a WARNING), leaving waits for the round's members as
#   before; a "ready" in the form older versions wrote is still read.
# - A deadlock detection record replaced by data nested 100 000 deep: the
#   search of another waiter names it in one WARNING and goes on.
# - \u escapes of non-ASCII characters in a LATIN1 database are read as
#   the characters they stand for, never an error.
# - The server log shows no backend terminated by a signal, and no "stack
#   depth limit exceeded".
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

if (my $why = kazoo_missing())
{
	plan skip_all => $why;
}

my $zk = zk_standalone();
my $pg = pg_with_zklock('a', $zk, "deadlock_timeout = '200ms'\n");

my $h = verbose_session($pg);    # holds
my $o = verbose_session($pg);    # observes
my $w = verbose_session($pg);    # waits
my $x = verbose_session($pg);    # tries
my $wpid = $w->query_safe('SELECT pg_backend_pid()');

# zk_set(ZNODE, PY): kazoo sets the data of ZNODE to the Python bytes PY
sub zk_set
{
	my ($znode, $py) = @_;
	kazoo_run($zk, "c.set('$znode', $py)");
	return;
}

# zk_data(ZNODE): "version|the first 400 bytes of the data" as kazoo sees it
sub zk_data
{
	my ($znode) = @_;
	return kazoo_run($zk,
		"d, st = c.get('$znode')\n"
		  . "print('%d|%s' % (st.version, d[:400].decode('utf-8', 'replace')))");
}

# the WARNING about the data of ZNODE, with its reason, as a regex
sub data_warning
{
	my ($znode, $reason) = @_;
	return qr/ZooKeeper node "\Q$znode\E" holds data that zklock cannot read\nDETAIL:  The node's data $reason/;
}

# how many WARNINGs about the data of ZNODE a stderr holds
sub nwarnings
{
	my ($err, $znode) = @_;
	my @m = $err =~ /WARNING:  01000: ZooKeeper node "\Q$znode\E" holds data/g;
	return scalar @m;
}

# ---------------------------------------------------------------- lock nodes
$h->query_safe(q{SELECT zk_lock('/f/lock')});
my $lock_node = '/zklock/f/lock/'
  . $o->query_safe(q{SELECT znode FROM zk_lock_queue('/f/lock')});
bg_begin($w, q{SELECT zk_lock('/f/lock') > 0 AS got}, 'w_lock');
ok(wait_queue_len($pg, '/f/lock', 2, 15, 'the waiter queued'),
	'a second backend waits behind the holder');

my @cases = (
	[ 'truncated JSON', q~b'{"host":"db1","pid":47'~, qr/is not valid JSON\./ ],
	[
		'a pid past int32', q~b'{"host":"db1","pid":99999999999999999999}'~,
		qr/has a field "pid" that is not an integer from 1 to 2147483647\./
	],
	[
		'a port of 0', q~b'{"host":"db1","port":0,"pid":5}'~,
		qr/has a field "port" that is not an integer from 1 to 65535\./
	],
	[
		'a host of 2000 bytes', q~b'{"host":"' + b'h' * 2000 + b'"}'~,
		qr/has a field "host" that is not a string of at most 1024 bytes\./
	],
	[
		'nesting 30 000 deep (60 kB)',
		q~b'{"host":' + b'[' * 30000 + b'1' + b']' * 30000 + b'}'~,
		qr/nests more than 16 levels deep\./
	],
	[
		'1 MB of JSON', q~b'{"host":"' + b'x' * 1000000 + b'"}'~,
		qr/is 1000011 bytes long, more than the 65536 bytes zklock reads of such a node\./
	],
	[ 'invalid UTF-8', q~b'{"host":"\xff\xfe"}'~, qr/is not valid UTF-8 text\./ ],
	[
		'a lone surrogate escaped', q~rb'{"host":"\ud800x"}'~,
		qr/has a \\u escape of a lone surrogate\./
	],
	[ 'garbage that is not JSON', q~b'garbage \x00\xff'~, undef ],
	[ '1 MB that is not JSON',    q~b'x' * 1000000~,       undef ],);

for my $c (@cases)
{
	my ($what, $py, $reason) = @$c;
	zk_set($lock_node, $py);
	my ($out, $err) = bg_query($o,
		q{SELECT position, granted, host IS NULL AND pid IS NULL AND port IS NULL
		         AND user_name IS NULL AND cluster_name IS NULL
		  FROM zk_lock_queue('/f/lock') ORDER BY position});
	is($out, "1|t|t\n2|f|f", "$what: zk_lock_queue shows the holder's node, granted, with empty owner columns");
	if (defined $reason)
	{
		warning_is($err, '01000',
			data_warning($lock_node,
				"$reason The node still counts as a queue member; its owner is not shown\\.\nHINT:  Another ZooKeeper client may have written to the node"),
			"$what: a WARNING names the node and says why");
		is(nwarnings($err, $lock_node), 1, "$what: once");
	}
	else
	{
		is($err, '', "$what: no WARNING (another client's data)");
	}
	($out, $err) = bg_query($o,
		q{SELECT holders, waiters, pid IS NULL FROM zk_cluster_locks('/f/lock')});
	is($out, '1|1|t', "$what: zk_cluster_locks shows it, no owner");
	is(nwarnings($err, $lock_node), defined $reason ? 1 : 0,
		"$what: zk_cluster_locks warns as zk_lock_queue does");
	($out, $err) = bg_query($o,
		qq{SELECT path, blocker_pid IS NULL FROM zk_blocking_pids($wpid)});
	is($out, '/f/lock|t', "$what: zk_blocking_pids names the blocker, no pid");
	is($x->query_safe(q{SELECT zk_try_lock('/f/lock')}),
		'f', "$what: another backend's try-lock still fails");
	ok(!bg_done($w, 'w_lock'), "$what: the waiter still waits");
}

# two reads of the node in one statement: one WARNING
zk_set($lock_node, q~b'{"pid":0}'~);
my ($out, $err) = bg_query($o,
	q{SELECT (SELECT count(*) FROM zk_lock_queue('/f/lock'))
	       + (SELECT count(*) FROM zk_cluster_locks('/f/lock'))});
is($out, '3', 'one statement reading the node twice');
is(nwarnings($err, $lock_node), 1, 'warns about it once');
is($o->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'zk_locks runs');
is($h->query_safe(q{SELECT state || ' ' || locks_held FROM zk_session()}),
	'connected 1', 'zk_session runs');

$h->query_safe(q{SELECT zk_unlock('/f/lock')});
($out) = bg_finish($w, 'w_lock');
is($out, 't', 'the waiter gets the lock once the holder released it');
$w->query_safe(q{SELECT zk_unlock_all()});

# at most 100 nodes named in one statement: 102 persistent nodes, named like
# zklock's writers (so taken for leases), with garbage
kazoo_run($zk,
	    "for i in range(102):\n"
	  . "    c.create('/zklock/f/many/_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-__WRIT__',"
	  . " b'garbage', sequence=True, makepath=True)");
($out, $err) =
  bg_query($o, q{SELECT count(*) FROM zk_lock_queue('/f/many')});
is($out, '102', 'a queue of 102 nodes with garbage: all listed');
my @named = $err =~ /WARNING:  01000: ZooKeeper node "[^"]*" holds data/g;
is(scalar @named, 100, 'the first 100 are named');
warning_is($err, '01000',
	qr/more ZooKeeper nodes hold data that zklock cannot read\nDETAIL:  One statement names at most 100 such nodes\./,
	'then one WARNING says there are more');
like($err, qr/DETAIL:  The node's data is not a JSON object\. The lease's node still counts as a queue member/,
	"a persistent queue node is a lease's: data that is not a lease's is named");
is($x->query_safe(q{SELECT zk_try_lock('/f/many')}), 'f', 'and they still hold the lock');
kazoo_run($zk, "c.delete('/zklock/f/many', recursive=True)");

# ---------------------------------------------------------------- leases
my $lt = $h->query_safe(q{SELECT zk_lease_lock('/f/lease', '60 s')});
my $lease_node = '/zklock/f/lease/'
  . $o->query_safe(q{SELECT znode FROM zk_lock_queue('/f/lease')});

zk_set($lease_node, q~b'{"scope":"lease","ttl_ms":99999999999999999999}'~);
($out, $err) = bg_query($o,
	q{SELECT granted, lease_expires_at IS NULL, pid IS NULL FROM zk_lock_queue('/f/lease')});
is($out, 't|t|t', 'a lease whose ttl is out of range: granted, no expiry, no owner');
warning_is($err, '01000',
	data_warning($lease_node,
		qr/has a field "ttl_ms" that is not an integer from 1 to 1099511627775 \(ZooKeeper's largest TTL\)\. The lease's node still counts as a queue member; its owner and expiry are not shown\./
	),
	'a WARNING names the lease node');
is($x->query_safe(q{SELECT zk_try_lock('/f/lease')}), 'f', 'the lease still excludes');

# the backend that took it: its own ttl, its own data written back
is( $h->query_safe(
		qq{SELECT zk_lease_renew('/f/lease', $lt) BETWEEN now() + '50 s' AND now() + '70 s'}),
	't',
	'the backend that took the lease renews it with its own ttl (60 s)');
like(zk_data($lease_node), qr/"scope":"lease","ttl_ms":60000}$/,
	'and writes its own data back');

# another backend: the ttl of the data, bounded, never longer than seen
zk_set($lease_node, q~b'{"scope":"lease","ttl_ms":1099511627775}'~);
is( $o->query_safe(
		qq{SELECT zk_lease_renew('/f/lease', $lt) > now() + '34 years'}),
	't',
	'another backend renews with the ttl of the data, up to ZooKeeper\'s largest, without overflow');
zk_set($lease_node, q~b'{"scope":"lease","ttl_ms":30000}'~);
is( $o->query_safe(
		qq{SELECT zk_lease_renew('/f/lease', $lt) BETWEEN now() + '25 s' AND now() + '35 s'}),
	't',
	'it reads the data again at every renewal (30 s now)');
zk_set($lease_node, q~b'{"scope":"lease","ttl_ms":1099511627775}'~);
is( $o->query_safe(
		qq{SELECT zk_lease_renew('/f/lease', $lt) BETWEEN now() + '25 s' AND now() + '35 s'}),
	't',
	'and never counts with a longer ttl than the shortest it saw');
zk_set($lease_node, q~b'garbage'~);
($out, $err) = bg_query($o,
	qq{SELECT zk_lease_renew('/f/lease', $lt) BETWEEN now() + '25 s' AND now() + '35 s'});
is($out, 't', 'garbage in the data: it renews with the ttl it knows');
warning_is($err, '01000',
	data_warning($lease_node,
		qr/is not a JSON object\. The renewal has written back the data it read before, and counts with the ttl recorded there\./
	),
	'naming the node in a WARNING');

# a backend that does not know the lease, and data without a ttl: XX001,
# and the renewal writes nothing
for my $c (
	[ 'no ttl_ms', q~b'{"scope":"lease","pid":7}'~, qr/does not record the lease's ttl_ms\./ ],
	[ 'a ttl_ms of 0', q~b'{"scope":"lease","ttl_ms":0}'~, qr/has a field "ttl_ms" that is not an integer from 1 to 1099511627775/ ],
	[ 'no JSON', q~b'not json'~, qr/is not a JSON object\./ ])
{
	my ($what, $py, $detail) = @$c;
	zk_set($lease_node, $py);
	my $before = zk_data($lease_node);
	($out, $err) = bg_query($x, qq{SELECT zk_lease_renew('/f/lease', $lt)});
	error_is($err, 'XX001',
		qr/ZooKeeper lease node "\Q$lease_node\E" does not record its ttl\nDETAIL:  The node's data $detail/,
		"lease data with $what: a backend that does not know the lease cannot renew it (XX001)");
	is(zk_data($lease_node), $before, "lease data with $what: the failed renewal wrote nothing");
}
($out, $err) = bg_query($o,
	q{SELECT holders, pid IS NULL, lease_expires_at IS NULL FROM zk_cluster_locks('/f/lease')});
is($out, '1|t|t', 'zk_cluster_locks shows the lease without owner or expiry');
like($err, data_warning($lease_node, qr/is not a JSON object\./),
	'with the WARNING');
($out, $err) = bg_query($h,
	qq{BEGIN; SELECT zk_lease_renew('/f/lease', $lt) IS NOT NULL; COMMIT; SELECT 'committed'});
like($out, qr/^t\ncommitted$/m,
	'the lease-checked COMMIT of the backend that took it counts with its own ttl');
unlike($err, qr/ERROR/, 'without an error');
is($h->query_safe(qq{SELECT zk_lease_unlock('/f/lease', $lt)}), 't', 'the lease is released');

# ---------------------------------------------------------------- semaphores
$h->query_safe(q{SELECT zk_semaphore_acquire('/f/sem', 2)});
like(zk_data('/zklock/f/sem'), qr/^\d+\|\{"max_leases":2\}$/, 'the semaphore records its limit');
for my $c (
	[ 'a limit that is a string', q~b'{"max_leases":"two"}'~, qr/has a field "max_leases" that is not an integer from 1 to 2147483647\./ ],
	[ '1 MB', q~b'{"max_leases":2,"pad":"' + b'p' * 1000000 + b'"}'~, qr/is 1000025 bytes long, more than the 65536 bytes zklock reads of such a node\./ ],
	[ 'garbage', q~b'garbage'~, qr/is not a JSON object\./ ])
{
	my ($what, $py, $reason) = @$c;
	zk_set('/zklock/f/sem', $py);
	($out, $err) = bg_query($w, q{SELECT zk_try_semaphore_acquire('/f/sem', 3)});
	is($out, 't', "semaphore node data, $what: the acquire goes on");
	warning_is($err, '01000',
		data_warning('/zklock/f/sem', qr/$reason The limit of the semaphore is not checked against it\./),
		"semaphore node data, $what: a WARNING names the semaphore node");
	$w->query_safe(q{SELECT zk_semaphore_release('/f/sem')});
}
my $sem_lease = kazoo_run($zk, "print(c.get_children('/zklock/f/sem/leases')[0])");
zk_set("/zklock/f/sem/leases/$sem_lease", q~b'{"pid":-5}'~);
($out, $err) = bg_query($o,
	q{SELECT kind, holders, pid IS NULL FROM zk_cluster_locks('/f/sem')});
is($out, 'semaphore|1|t', 'a semaphore lease with garbage is still a holder');
warning_is($err, '01000',
	data_warning("/zklock/f/sem/leases/$sem_lease",
		qr/has a field "pid" that is not an integer from 1 to 2147483647\. The node still counts as a queue member/),
	'and named in a WARNING');
($out) = bg_query($x, q{SELECT zk_try_semaphore_acquire('/f/sem', 1)});
is($out, 'f', 'a one-lease acquirer is still refused while it is held');
$h->query_safe(q{SELECT zk_semaphore_release('/f/sem')});

# ---------------------------------------------------------------- double barriers
# a round whose "ready" is rewritten: listed as JSON, then not trusted
sub enter_two
{
	my ($path) = @_;
	bg_begin($w, qq{SELECT zk_double_barrier_enter('$path', 2, 10000)}, 'w_enter');
	ok(wait_for(sub { kazoo_run($zk, "print(len(c.get_children('/zklock$path')))") eq '1' },
		15, 'the first member'), "$path: the first member is in");
	is($h->query_safe(qq{SELECT zk_double_barrier_enter('$path', 2, 10000)}), 't',
		"$path: the second member opens the barrier");
	my ($e) = bg_finish($w, 'w_enter');
	is($e, 't', "$path: the first member has entered");
	return;
}

enter_two('/f/db');
like(zk_data('/zklock/f/db/ready'), qr/^0\|\{"round":\["[0-9a-f-]{36}","[0-9a-f-]{36}"\]\}$/,
	'"ready" lists the round as JSON');
my $member = kazoo_run($zk,
	"print([n for n in c.get_children('/zklock/f/db') if n != 'ready'][0])");
zk_set("/zklock/f/db/$member", q~b'{"port":0}'~);
($out, $err) = bg_query($o,
	q{SELECT kind, holders FROM zk_cluster_locks('/f/db') LIMIT 1});
is($out, 'double barrier|2', 'zk_cluster_locks shows both members');
like($err, data_warning("/zklock/f/db/$member", qr/has a field "port"/),
	'a member with garbage is named in a WARNING');

zk_set('/zklock/f/db/ready', q~b'{"round":[]}'~);
bg_begin($w, q{SELECT zk_double_barrier_leave('/f/db', 10000)}, 'w_leave');
# a leaver that waits for another member watches that member's node
ok( wait_for(
		sub { grep { m{^/zklock/f/db/[0-9a-f-]{36}$} } keys %{ zk_watches_by_others($zk) } },
		15,
		'the first leaver watching a member'),
	'a "ready" rewritten to list nobody: the first leaver waits for the other member'
);
ok(!bg_done($w, 'w_leave'), 'it has not left alone');
like(zk_data('/zklock/f/db/ready'), qr/^1\|/, 'and "ready" is still there');
($out, $err) = bg_query($h, q{SELECT zk_double_barrier_leave('/f/db', 10000)});
is($out, 't', 'the second member leaves');
warning_is($err, '01000',
	data_warning('/zklock/f/db/ready',
		qr/was written again after the barrier opened\. The members leaving count the participants older than the node instead\./
	),
	'naming "ready" in a WARNING');
($out, $err) = bg_finish($w, 'w_leave');
is($out, 't', 'and then the first');

enter_two('/f/db3');
zk_set('/zklock/f/db3/ready', q~b'{"round":[1,2]}'~);
bg_begin($w, q{SELECT zk_double_barrier_leave('/f/db3', 10000)}, 'w_leave3');
($out, $err) = bg_query($h, q{SELECT zk_double_barrier_leave('/f/db3', 10000)});
is($out, 't', 'a "ready" with an invalid list: the members leave');
warning_is($err, '01000',
	data_warning('/zklock/f/db3/ready',
		qr/has an element of "round" that is not a node name of 1 to 1024 bytes\./),
	'naming it in a WARNING');
($out) = bg_finish($w, 'w_leave3');
is($out, 't', 'both');

# a "ready" in the form older versions wrote, listing the two zklock
# members only: a participant older than "ready" that it does not list
# (kazoo's, persistent) does not hold up their leaving
bg_begin($w, q{SELECT zk_double_barrier_enter('/f/db2', 3, 20000)}, 'w_enter2');
bg_begin($h, q{SELECT zk_double_barrier_enter('/f/db2', 3, 20000)}, 'h_enter2');
ok(wait_for(sub { kazoo_run($zk, "print(len(c.get_children('/zklock/f/db2')))") eq '2' },
	15, 'two members'), 'two zklock members wait to enter, of three');
kazoo_run($zk,
	    "m = sorted(c.get_children('/zklock/f/db2'))\n"
	  . "c.create('/zklock/f/db2/ffffffff-0000-4000-8000-000000000000', b'')\n"
	  . "c.create('/zklock/f/db2/ready', ('zklock-round:' + ','.join(m)).encode())");
($out) = bg_finish($w, 'w_enter2');
is($out, 't', 'an old-style opening lets the first in');
($out) = bg_finish($h, 'h_enter2');
is($out, 't', 'and the second');
bg_begin($w, q{SELECT zk_double_barrier_leave('/f/db2', 10000)}, 'w_leave2');
($out, $err) = bg_query($h, q{SELECT zk_double_barrier_leave('/f/db2', 10000)});
is($out, 't', 'they leave by the old-style list, without waiting for the unlisted participant');
is($err, '', 'no WARNING: the old form is zklock\'s');
($out) = bg_finish($w, 'w_leave2');
is($out, 't', 'both of them');
kazoo_run($zk, "c.delete('/zklock/f/db2', recursive=True)");

# ---------------------------------------------------------------- wait records
$h->query_safe(q{SELECT zk_lock('/f/w')});
$w->query_safe(q{SELECT zk_lock('/f/w2')});
my $sid = $w->query_safe(q{SELECT session_id FROM zk_session()});
$sid =~ s/^0x//;
my $record = '/zklock.waits/' . substr(('0' x 16) . lc($sid), -16);
bg_begin($w, q{SELECT zk_lock('/f/w') > 0}, 'w_wait');
ok(wait_for(sub { kazoo_run($zk, "print(c.exists('$record') is not None)") eq 'True' },
	15, 'the record'), 'the waiter published its wait record after deadlock_timeout');
zk_set($record, q~b'{"locks":' + b'[' * 100000 + b']' * 100000 + b'}'~);
bg_begin($x, q{SELECT zk_lock('/f/w2') > 0}, 'x_wait');
ok( wait_for(
		sub { $x->{run}->pump_nb(); $x->{stderr} =~ /holds data that zklock cannot read/ },
		15,
		'the WARNING'),
	'a waiter behind it checks for deadlocks and reads the record');
$h->query_safe(q{SELECT zk_unlock('/f/w')});
($out) = bg_finish($w, 'w_wait');
is($out, 't', 'the first waiter gets its lock');
$w->query_safe(q{SELECT zk_unlock_all()});
($out, $err) = bg_finish($x, 'x_wait');
is($out, 't', 'the second waiter gets its lock: the search went on');
warning_is($err, '01000',
	data_warning($record,
		qr/nests more than 16 levels deep\. Deadlock detection does not follow the wait it would record\./),
	'the record is named in a WARNING');
is(nwarnings($err, $record), 1, 'once');
$x->query_safe(q{SELECT zk_unlock_all()});

# ---------------------------------------------------------------- LATIN1
$pg->safe_psql('postgres',
	q{CREATE DATABASE lat ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0});
$pg->safe_psql('lat', 'CREATE EXTENSION zklock');
my $lat = verbose_session($pg, 'lat');
$h->query_safe(q{SELECT zk_lock('/f/enc')});
my $enc_node = '/zklock/f/enc/'
  . $o->query_safe(q{SELECT znode FROM zk_lock_queue('/f/enc')});
zk_set($enc_node, q~rb'{"host":"caf\u00e9","user":"\u00e9t\u00E9","pid":12}'~);
($out, $err) = bg_query($lat,
	q{SELECT host = 'caf' || chr(233), user_name = chr(233) || 't' || chr(233), pid
	  FROM zk_lock_queue('/f/enc')});
is($out, 't|t|12', 'LATIN1: \u escapes of é are read as é');
is($err, '', 'LATIN1: without an error or a WARNING');
$h->query_safe(q{SELECT zk_unlock_all()});

# ---------------------------------------------------------------- the server
$_->quit for ($h, $o, $w, $x, $lat);
my $log = slurp_file($pg->logfile);
unlike($log, qr/terminated by signal/, 'no backend was terminated by a signal');
unlike($log, qr/stack depth limit exceeded/, 'no "stack depth limit exceeded"');
is($pg->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

done_testing();
